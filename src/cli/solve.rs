//! `crowdfield solve` (being written).

use std::process::ExitCode;

/// Arguments of `crowdfield solve`.
#[derive(clap::Args)]
pub struct Args {}

/// Runs `crowdfield solve`.
pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`crowdfield solve` is not available yet")
}
