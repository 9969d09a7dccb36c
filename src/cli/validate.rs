//! `crowdfield validate MAP...`: checks maps and reports every problem in each.
//!
//! Beyond the map's own checks it places every group's agents as `simulate` does (seed 0), so a
//! spawn area too small for its count at the group's body radius is reported too.
//!
//! Prints `MAP: ok` and the memory a run of it needs (`MAP: memory: ...`, and a warning where
//! this machine has less to give) for a good map, and one line per problem
//! (`MAP: JSON.PATH: message`) for a bad one, goes on through all the maps, and exits with
//! status 1 when any map is bad. JSON Schemas (`*.schema.json`, as `batch` skips them) are
//! skipped with a note on stderr.

use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `crowdfield validate`.
#[derive(clap::Args)]
pub struct Args {
    /// Map files (JSON) to check. JSON Schemas (*.schema.json) are skipped, with a note.
    #[arg(required = true, value_name = "MAP")]
    maps: Vec<PathBuf>,
    #[command(flatten)]
    read: super::MapReadArgs,
}

/// Runs `crowdfield validate`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let maps = super::without_schemas(&args.maps)?;
    let mut bad = 0;
    for path in &maps {
        // Read and compiled once (a large map's rasterisation is most of the time).
        // The check every command runs (one verdict for validate, solve, simulate and batch).
        let (scene, problems) = crowdfield::sim::check_map(path, &args.read.options());
        if let (Some(scene), true) = (&scene, problems.is_empty()) {
            let shown = crowdfield::text::show_path(path);
            println!("{shown}: ok");
            let size = crowdfield::memory::RunSize::of(scene);
            let what = format!("a run of {}", size.describe());
            let need = size.simulation_bytes();
            println!(
                "{shown}: memory: {what} needs about {}",
                crowdfield::memory::show_bytes(need)
            );
            if let Some(short) = crowdfield::memory::shortfall(need, &what) {
                println!("{shown}: warning: {short}: simulate and batch refuse it here");
            }
            for w in crowdfield::map::warnings(scene) {
                println!("{shown}: warning: {w}");
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
