//! `crowdfield eikonal` (being written).

use std::process::ExitCode;

/// Arguments of `crowdfield eikonal`.
#[derive(clap::Args)]
pub struct Args {}

/// Runs `crowdfield eikonal`.
pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`crowdfield eikonal` is not available yet")
}
