//! The routes' part of the binding: a running simulation's walker and group goals, waiting
//! areas released, speed regions changed, and the stages passed (`crowdfield.Simulation`'s
//! `set_walker_goal`, `set_group_goal`, `release`, `set_region`, `region`, `stages_passed`).

use super::{SimulationHandle, no_walker, to_py};
use pyo3::prelude::*;

/// A stage passed as Python takes it: `(handle, group, stage, time, waited)`.
pub(crate) type PyStagePassed = (u32, u32, String, f64, bool);

/// A stage passed in the tuple Python takes.
pub(crate) fn stage_passed(p: &crowdfield::sim::StagePassed) -> PyStagePassed {
    (p.handle, p.group, p.stage.clone(), p.time, p.waited)
}

/// Sends the walker `handle` to `goal` (an exit of its group or a stage; `None`: the quickest).
#[pyfunction]
fn sim_set_walker_goal(sim: PyRef<'_, SimulationHandle>, handle: u32, goal: Option<&str>) -> PyResult<()> {
    let mut rec = sim.lock();
    let sim = rec.driver.simulation_mut();
    if sim.index_of(handle).is_none() {
        return Err(no_walker(handle));
    }
    sim.set_walker_goal(handle, goal).map_err(to_py)
}

/// Sends every walker of `group`, on the map and to come, to `goal`; returns how many on the map.
#[pyfunction]
fn sim_set_group_goal(sim: PyRef<'_, SimulationHandle>, group: usize, goal: Option<&str>) -> PyResult<usize> {
    let mut rec = sim.lock();
    rec.driver
        .simulation_mut()
        .set_group_goal(group, goal)
        .map_err(to_py)
}

/// Releases the waiting areas named `name`; returns how many bear the name.
#[pyfunction]
fn sim_release(sim: PyRef<'_, SimulationHandle>, name: &str) -> PyResult<usize> {
    let mut rec = sim.lock();
    rec.driver.simulation_mut().release(name).map_err(to_py)
}

/// Sets the speed factor and/or discomfort of the region named `name`.
#[pyfunction]
#[pyo3(signature = (sim, name, speed_factor=None, discomfort=None))]
fn sim_set_region(
    sim: PyRef<'_, SimulationHandle>,
    name: &str,
    speed_factor: Option<f64>,
    discomfort: Option<f64>,
) -> PyResult<()> {
    let mut rec = sim.lock();
    rec.driver
        .simulation_mut()
        .set_region(name, speed_factor, discomfort)
        .map_err(to_py)
}

/// The speed factor and discomfort of the region named `name` (`None`: no such region).
#[pyfunction]
fn sim_region(sim: PyRef<'_, SimulationHandle>, name: &str) -> Option<(f64, f64)> {
    sim.lock().sim().region(name)
}

/// Every stage passed so far.
#[pyfunction]
fn sim_stages_passed(sim: PyRef<'_, SimulationHandle>) -> Vec<PyStagePassed> {
    sim.lock()
        .sim()
        .stages_passed()
        .iter()
        .map(stage_passed)
        .collect()
}

/// Adds the functions above to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(sim_set_walker_goal, m)?)?;
    m.add_function(wrap_pyfunction!(sim_set_group_goal, m)?)?;
    m.add_function(wrap_pyfunction!(sim_release, m)?)?;
    m.add_function(wrap_pyfunction!(sim_set_region, m)?)?;
    m.add_function(wrap_pyfunction!(sim_region, m)?)?;
    m.add_function(wrap_pyfunction!(sim_stages_passed, m)?)?;
    Ok(())
}
