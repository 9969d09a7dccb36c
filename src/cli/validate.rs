//! `crowdfield validate MAP...`: checks maps and reports every problem in each.
//!
//! Beyond the map's own checks it places every group's agents as `simulate` does (seed 0), so a
//! spawn area too small for its count at the group's body radius is reported too.
//!
//! Prints `MAP: ok` for a good map and one line per problem (`MAP: JSON.PATH: message`) for a bad
//! one, goes on through all the maps, and exits with status 1 when any map is bad. JSON Schemas
//! (`*.schema.json`, as `batch` skips them) are skipped with a note on stderr.

use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `crowdfield validate`.
#[derive(clap::Args)]
pub struct Args {
    /// Map files (JSON) to check. JSON Schemas (*.schema.json) are skipped, with a note.
    #[arg(required = true, value_name = "MAP")]
    maps: Vec<PathBuf>,
}

/// Whether the map has a group at all (the loader accepts `"groups": []`, a map being drawn in
/// the editor, but `solve` and `simulate` refuse it) and whether its spawn areas hold their
/// agents without overlap (a body radius larger than a cell, or spawn areas sharing cells, can
/// fit fewer agents than free cells). Placed as `simulate` does with seed 0; empty when they fit.
fn spawn_problems(path: &std::path::Path, scene: &crowdfield::Scene) -> Vec<crowdfield::error::Error> {
    let file = path.display().to_string();
    let result = if scene.groups.is_empty() {
        Err(crowdfield::map::no_groups_error(path))
    } else {
        crowdfield::sim::spawn::spawn_agents(scene, 0).map_err(|e| e.relabel(&scene.name, &file))
    };
    match result {
        Ok(_) => Vec::new(),
        Err(crowdfield::error::Error::Many(errors)) => errors,
        Err(e) => vec![e],
    }
}

/// Runs `crowdfield validate`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let maps = super::without_schemas(&args.maps)?;
    let mut bad = 0;
    for path in &maps {
        // Read and compiled once (a large map's rasterisation is most of the time).
        let (scene, mut problems) = crowdfield::map::check_file(path);
        if let Some(scene) = &scene {
            problems.extend(spawn_problems(path, scene));
        }
        if let (Some(scene), true) = (&scene, problems.is_empty()) {
            println!("{}: ok", path.display());
            for w in crowdfield::map::warnings(scene) {
                println!("{}: warning: {w}", path.display());
            }
        } else {
            bad += 1;
            for p in &problems {
                println!("{p}");
            }
        }
    }
    if bad > 0 {
        let verb = if bad == 1 { "has" } else { "have" };
        eprintln!(
            "{bad} of {} {verb} problems",
            super::count_of(maps.len(), "map", "maps")
        );
        Ok(ExitCode::FAILURE)
    } else {
        Ok(ExitCode::SUCCESS)
    }
}
