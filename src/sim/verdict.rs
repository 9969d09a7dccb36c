//! The one check every command runs on a map before using it, so that `validate`, `solve`,
//! `simulate` and `batch` give the same map the same verdict with the same message: the map's
//! own checks ([`crate::map::check_file_with`]), at least one group, and room for every group's
//! agents in their spawn areas, placed as `simulate` places them (seed 0).

use crate::error::{Error, Result};
use crate::map::LoadOptions;
use crate::scene::Scene;
use std::path::Path;

/// Every problem of the map at `path` that would stop a command using it, and its scene when
/// there is none.
pub fn check_map(path: &Path, options: &LoadOptions) -> (Option<Scene>, Vec<Error>) {
    let (scene, mut problems) = crate::map::check_file_with(path, options);
    let Some(scene) = scene else {
        return (None, problems);
    };
    if scene.groups.is_empty() {
        problems.push(crate::map::no_groups_error(path));
    } else {
        let file = crate::text::show_path(path);
        match super::spawn::spawn_agents(&scene, 0) {
            Ok(_) => {}
            Err(Error::Many(errors)) => {
                problems.extend(errors.into_iter().map(|e| e.relabel(&scene.name, &file)))
            }
            Err(e) => problems.push(e.relabel(&scene.name, &file)),
        }
    }
    if problems.is_empty() {
        (Some(scene), problems)
    } else {
        (None, problems)
    }
}

/// The scene of the map at `path` when [`check_map`] finds no problem; the problems (one
/// error, or [`Error::Many`]) otherwise.
pub fn load_map(path: &Path, options: &LoadOptions) -> Result<Scene> {
    let (scene, mut problems) = check_map(path, options);
    match scene {
        Some(scene) => Ok(scene),
        None if problems.len() == 1 => Err(problems.remove(0)),
        None if problems.is_empty() => Err(Error::invalid(
            crate::text::show_path(path),
            "(root)",
            "the map is not valid",
        )),
        None => Err(Error::Many(problems)),
    }
}
