//! The moving obstacles of a run as Python drives them (`crowdfield.Simulation.add_obstacle`
//! and the rest): shapes in the map's words, read by the library's `map::obstacle_shape`.

use crate::names::to_py;
use crowdfield::mover::{Motion, Mover};
use crowdfield::sim::Simulation;
use pyo3::prelude::*;

/// An obstacle as Python reads it: `(handle, name, x, y, vx, vy)`.
pub(crate) type PyObstacle = (u32, String, f64, f64, f64, f64);

/// The error for a handle that is not an obstacle on the map.
fn no_obstacle(handle: u32) -> PyErr {
    pyo3::exceptions::PyKeyError::new_err(format!(
        "handle {handle}: not an obstacle on the map (removed, or never given)"
    ))
}

/// Adds an obstacle of the shape `shape_json` at `position` moving at `velocity`.
pub(crate) fn add(
    sim: &mut Simulation,
    shape_json: &str,
    position: [f64; 2],
    velocity: [f64; 2],
) -> PyResult<u32> {
    let shape = crowdfield::map::obstacle_shape(shape_json).map_err(to_py)?;
    sim.add_obstacle(shape, position, velocity).map_err(to_py)
}

/// Adds an obstacle of the shape `shape_json` travelling `points` at `speed` from now on.
pub(crate) fn add_on_path(
    sim: &mut Simulation,
    shape_json: &str,
    points: Vec<[f64; 2]>,
    speed: f64,
    looped: bool,
) -> PyResult<u32> {
    let shape = crowdfield::map::obstacle_shape(shape_json).map_err(to_py)?;
    let position = points.first().copied().unwrap_or([f64::NAN, f64::NAN]);
    sim.add_mover(Mover {
        name: String::new(),
        shape,
        position,
        motion: Motion::Path {
            points,
            speed,
            from: sim.time(),
            looped,
        },
    })
    .map_err(to_py)
}

/// Moves the obstacle `handle` (a `KeyError` when it is not on the map).
pub(crate) fn move_to(
    sim: &mut Simulation,
    handle: u32,
    position: [f64; 2],
    velocity: Option<[f64; 2]>,
) -> PyResult<()> {
    if sim.obstacle(handle).is_none() {
        return Err(no_obstacle(handle));
    }
    sim.move_obstacle(handle, position, velocity).map_err(to_py)
}

/// Takes the obstacle `handle` off the map (a `KeyError` when it is not on the map).
pub(crate) fn remove(sim: &mut Simulation, handle: u32) -> PyResult<()> {
    if sim.obstacle(handle).is_none() {
        return Err(no_obstacle(handle));
    }
    sim.remove_obstacle(handle).map_err(to_py)
}

/// Every obstacle on the map, handles ascending.
pub(crate) fn list(sim: &Simulation) -> Vec<PyObstacle> {
    sim.obstacles()
        .map(|(h, o)| {
            let ([x, y], [vx, vy]) = (o.position(), o.velocity());
            (h, o.name().to_string(), x, y, vx, vy)
        })
        .collect()
}

/// The signed distance from `(x, y)` to the outline of obstacle `handle`, metres.
pub(crate) fn distance(sim: &Simulation, handle: u32, x: f64, y: f64) -> PyResult<f64> {
    sim.obstacle(handle)
        .map(|o| o.distance(x, y))
        .ok_or_else(|| no_obstacle(handle))
}
