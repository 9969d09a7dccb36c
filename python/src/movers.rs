//! The moving obstacles of a run as Python drives them (`crowdfield.Simulation.add_obstacle`
//! and the rest, in `crowdfield/_movers.py`): functions of the module that take the native
//! simulation, shapes in the map's words read by the library's `map::obstacle_shape`.

use crate::SimulationHandle;
use crate::names::to_py;
use crowdfield::mover::{Motion, Mover};
use pyo3::prelude::*;

/// An obstacle as Python reads it: `(handle, name, x, y, vx, vy)`.
type PyObstacle = (u32, String, f64, f64, f64, f64);

/// Adds the obstacle functions to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(add_obstacle, m)?)?;
    m.add_function(wrap_pyfunction!(move_obstacle, m)?)?;
    m.add_function(wrap_pyfunction!(remove_obstacle, m)?)?;
    m.add_function(wrap_pyfunction!(obstacles, m)?)?;
    m.add_function(wrap_pyfunction!(obstacle_distance, m)?)?;
    Ok(())
}

/// The error for a handle that is not an obstacle on the map.
fn no_obstacle(handle: u32) -> PyErr {
    pyo3::exceptions::PyKeyError::new_err(format!(
        "handle {handle}: not an obstacle on the map (removed, or never given)"
    ))
}

/// Adds an obstacle of the shape `shape` (JSON) at `position` moving at `velocity`, or
/// travelling the points of `path` at `speed` m/s from now on (round again when `looped`);
/// returns its handle.
#[pyfunction]
#[pyo3(signature = (sim, shape, position, velocity, path=None, speed=0.0, looped=false))]
fn add_obstacle(
    sim: PyRef<'_, SimulationHandle>,
    shape: &str,
    position: [f64; 2],
    velocity: [f64; 2],
    path: Option<Vec<[f64; 2]>>,
    speed: f64,
    looped: bool,
) -> PyResult<u32> {
    let shape = crowdfield::map::obstacle_shape(shape).map_err(to_py)?;
    let mut rec = sim.lock();
    let sim = rec.driver.simulation_mut();
    let Some(points) = path else {
        return sim.add_obstacle(shape, position, velocity).map_err(to_py);
    };
    let position = points.first().copied().unwrap_or([f64::NAN, f64::NAN]);
    let from = sim.time();
    sim.add_mover(Mover {
        name: String::new(),
        shape,
        position,
        motion: Motion::Path {
            points,
            speed,
            from,
            looped,
        },
    })
    .map_err(to_py)
}

/// Puts the obstacle `handle` at `position`, moving on at `velocity` when given (a `KeyError`
/// when it is not on the map).
#[pyfunction]
#[pyo3(signature = (sim, handle, position, velocity=None))]
fn move_obstacle(
    sim: PyRef<'_, SimulationHandle>,
    handle: u32,
    position: [f64; 2],
    velocity: Option<[f64; 2]>,
) -> PyResult<()> {
    let mut rec = sim.lock();
    let sim = rec.driver.simulation_mut();
    if sim.obstacle(handle).is_none() {
        return Err(no_obstacle(handle));
    }
    sim.move_obstacle(handle, position, velocity).map_err(to_py)
}

/// Takes the obstacle `handle` off the map (a `KeyError` when it is not on the map).
#[pyfunction]
fn remove_obstacle(sim: PyRef<'_, SimulationHandle>, handle: u32) -> PyResult<()> {
    let mut rec = sim.lock();
    let sim = rec.driver.simulation_mut();
    if sim.obstacle(handle).is_none() {
        return Err(no_obstacle(handle));
    }
    sim.remove_obstacle(handle).map_err(to_py)
}

/// Every obstacle on the map, handles ascending.
#[pyfunction]
fn obstacles(sim: PyRef<'_, SimulationHandle>) -> Vec<PyObstacle> {
    sim.lock()
        .sim()
        .obstacles()
        .map(|(h, o)| {
            let ([x, y], [vx, vy]) = (o.position(), o.velocity());
            (h, o.name().to_string(), x, y, vx, vy)
        })
        .collect()
}

/// The signed distance from `(x, y)` to the outline of obstacle `handle`, metres.
#[pyfunction]
fn obstacle_distance(sim: PyRef<'_, SimulationHandle>, handle: u32, x: f64, y: f64) -> PyResult<f64> {
    sim.lock()
        .sim()
        .obstacle(handle)
        .map(|o| o.distance(x, y))
        .ok_or_else(|| no_obstacle(handle))
}
