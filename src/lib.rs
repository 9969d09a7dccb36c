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

pub mod agents;
pub mod eikonal;
pub mod error;
pub mod export;
pub mod fields;
pub mod gpu;
pub mod gradient;
pub mod grid;
pub mod io;
pub mod local;
pub mod map;
pub mod neighbors;
pub mod ownership;
pub mod params;
pub mod scene;
pub mod sim;
#[cfg(test)]
mod test_rng;
pub mod text;

pub use error::{Error, Result};
pub use grid::{Dir, Grid};
pub use scene::Scene;
