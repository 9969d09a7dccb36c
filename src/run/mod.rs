//! What surrounds a simulation, above the I/O-free core in [`crate::sim`]: batch runs over many
//! maps with shards and completion markers ([`batch`]), the output folder of a run (report,
//! plots, frames, trajectories: [`output`]) and the drawing of its plots and frames
//! ([`draw`], built on [`crate::export`]'s layout, colour maps and colour bars), and studies:
//! many seeds of a map and its variants summed up as distributions ([`study`]).

pub mod batch;
pub mod draw;
pub mod driver;
pub mod output;
pub mod planner;
pub mod study;
