//! The JSON map format: loading, validation, compilation to a [`Scene`], saving.
//!
//! (API fixed for the other modules; bodies being written.)

use crate::error::{Error, Result};
use crate::scene::Scene;
use std::path::Path;

/// Loads, validates and compiles the map at `path` (rasters resolved relative to it).
pub fn load(path: &Path) -> Result<Scene> {
    let _ = path;
    todo!("map loading")
}

/// Every problem found in the map at `path` (empty when it is valid).
pub fn validate(path: &Path) -> Vec<Error> {
    let _ = path;
    todo!("map validation")
}
