//! `crowdfield simulate` (being written).

use std::process::ExitCode;

/// Arguments of `crowdfield simulate`.
#[derive(clap::Args)]
pub struct Args {}

/// Runs `crowdfield simulate`.
pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`crowdfield simulate` is not available yet")
}
