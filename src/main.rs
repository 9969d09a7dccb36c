//! The `crowdfield` command: solve fields, simulate, batch runs, raw Eikonal solves, validation,
//! benchmarks. Each subcommand lives in its own file under `src/cli/`.

mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}
