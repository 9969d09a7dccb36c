//! `crowdfield validate` (being written).

use std::process::ExitCode;

/// Arguments of `crowdfield validate`.
#[derive(clap::Args)]
pub struct Args {}

/// Runs `crowdfield validate`.
pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`crowdfield validate` is not available yet")
}
