//! `crowdfield bench` (being written).

use std::process::ExitCode;

/// Arguments of `crowdfield bench`.
#[derive(clap::Args)]
pub struct Args {}

/// Runs `crowdfield bench`.
pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`crowdfield bench` is not available yet")
}
