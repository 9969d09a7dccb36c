//! # crowdfield
//!
//! Plans the motion of large crowds with the continuum-crowds model: a density-dependent speed
//! field, an anisotropic unit cost, and one Eikonal potential per group whose gradient steers
//! the walkers, plus a local layer (boids, ORCA) over a bin-sorted neighbour grid. Every stage
//! runs on the CPU; the Eikonal solve, splat, fields and neighbour grid also run on a GPU (wgpu).
//!
//! The pipeline, one module per stage (see `ARCHITECTURE.md`):
//! [`map`] (JSON) → [`scene::Scene`] → [`fields`] (density, speed, cost) → [`eikonal`]
//! (potential) → [`gradient`] (walking direction) → [`local`] (avoidance) → [`sim`] (step,
//! report) → [`export`] (`.npy`, PNG).
//!
//! Two calls cover most uses: [`plan()`] turns a scene into every group's potential and
//! gradient, and [`Simulation::builder`](sim::Simulation::builder) sets up a crowd run on it.
//! [`prelude`] brings in the types both need:
//!
//! ```
//! use crowdfield::prelude::*;
//!
//! let map = concat!(env!("CARGO_MANIFEST_DIR"), "/maps/bottleneck.json");
//! let scene = crowdfield::map::load(std::path::Path::new(map))?;
//! let plan = plan(&scene, &PlanOptions::default())?;
//! println!("{} groups planned on {}", plan.groups.len(), plan.solver);
//! let mut sim = Simulation::builder(scene).seed(7).local(LocalMode::Orca).build()?;
//! sim.run(|_| Ok(()))?;
//! println!("{} of {} out by {:.1} s", sim.arrivals().len(), sim.spawned().iter().sum::<usize>(), sim.time());
//! # assert!(sim.finished());
//! # Ok::<(), crowdfield::Error>(())
//! ```
//!
//! More in `examples/`: `embed/embed_loop.rs` steps a simulation in a loop and reads the positions
//! each step; `potential_png.rs` solves a potential from an `ndarray` and draws it as a PNG.

pub mod agents;
pub mod collision;
pub mod eikonal;
pub mod error;
pub mod export;
pub mod fields;
pub mod gpu;
pub mod gradient;
pub mod grid;
pub mod import;
pub mod io;
pub mod lattice;
pub mod local;
pub mod map;
pub mod memory;
pub mod mover;
pub mod names;
pub mod neighbors;
pub mod ownership;
pub mod params;
pub mod plan;
pub mod routes;
pub mod run;
pub mod scene;
pub mod schedule;
pub mod sim;
pub mod speeds;
pub mod stages;
#[cfg(test)]
mod test_rng;
pub mod text;
pub mod vec2;
pub mod verify;

pub use error::{Error, Result};
pub use grid::{Dir, Grid};
pub use plan::{Plan, PlanOptions, plan, plan_with_crowd};
pub use scene::Scene;

/// The types a program that plans and simulates needs, in one `use crowdfield::prelude::*;`
/// (see the [crate example](crate)).
pub mod prelude {
    pub use crate::eikonal::Order;
    pub use crate::error::{Error, Result};
    pub use crate::gpu::Backend;
    pub use crate::grid::Grid;
    pub use crate::local::{LocalBackend, LocalMode};
    pub use crate::names::Named;
    pub use crate::plan::{GroupPlan, Plan, PlanOptions, plan, plan_with_crowd};
    pub use crate::scene::Scene;
    pub use crate::sim::{Arrival, SimConfig, Simulation, SimulationBuilder};
}
