//! `crowdfield batch` (being written).

use std::process::ExitCode;

/// Arguments of `crowdfield batch`.
#[derive(clap::Args)]
pub struct Args {}

/// Runs `crowdfield batch`.
pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`crowdfield batch` is not available yet")
}
