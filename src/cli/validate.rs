//! `crowdfield validate MAP...`: checks maps and reports every problem in each.
//!
//! Prints `MAP: ok` for a good map and one line per problem (`MAP: JSON.PATH: message`) for a bad
//! one, goes on through all the maps, and exits with status 1 when any map is bad.

use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `crowdfield validate`.
#[derive(clap::Args)]
pub struct Args {
    /// Map files (JSON) to check.
    #[arg(required = true, value_name = "MAP")]
    maps: Vec<PathBuf>,
}

/// Runs `crowdfield validate`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let mut bad = 0;
    for path in &args.maps {
        let problems = crowdfield::map::validate(path);
        if problems.is_empty() {
            println!("{}: ok", path.display());
        } else {
            bad += 1;
            for p in &problems {
                println!("{p}");
            }
        }
    }
    if bad > 0 {
        eprintln!("{bad} of {} map(s) have problems", args.maps.len());
        Ok(ExitCode::FAILURE)
    } else {
        Ok(ExitCode::SUCCESS)
    }
}
