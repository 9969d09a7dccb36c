//! Argument parsing and dispatch. Each subcommand parses its own arguments (`Args`) and runs
//! (`run`), returning `anyhow::Result`; this file prints the error chain and picks the exit code.

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

mod batch;
mod bench;
mod eikonal;
mod image;
mod import;
mod simulate;
mod solve;
mod validate;
mod verify;

/// Continuum-crowds planning: potential fields, crowd simulation, evacuation batches.
#[derive(Parser)]
#[command(name = "crowdfield", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Solve every group's potential on a map and write arrays and images.
    Solve(solve::Args),
    /// Raw Eikonal solve |grad phi| = 1/speed from .npy arrays.
    Eikonal(eikonal::Args),
    /// Draw a 2-D .npy array as a PNG: colour bar, isolines, scale bar.
    Image(image::Args),
    /// Check maps and report every problem found.
    Validate(validate::Args),
    /// Simulate a crowd on a map and write a report.
    Simulate(simulate::Args),
    /// Solve (and simulate) many maps in parallel.
    Batch(batch::Args),
    /// Measure the solvers and the simulation step.
    Bench(bench::Args),
    /// Run the verification suite (RiMEA tests, bottleneck experiments) and report each test.
    Verify(verify::Args),
    /// Turn floor plans (DXF, WKT, GeoJSON, PNG/JPEG) into a map with the vectors kept.
    Import(import::Args),
}

/// `--backend` values: the command's spelling of [`crowdfield::gpu::Backend`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum BackendArg {
    /// CPU fast marching (the groups solved in parallel).
    Cpu,
    /// GPU block fast iterative method; an error when no GPU adapter can be opened.
    Gpu,
    /// A hardware GPU when one can be opened and the grid has at least 512 x 512 cells, else
    /// the CPU (with a note saying why). Below that size the CPU was faster even against an
    /// NVIDIA H200. Software adapters (llvmpipe/lavapipe, far slower than the CPU solvers) are
    /// passed over unless WGPU_ADAPTER_NAME names one.
    Auto,
}

impl From<BackendArg> for crowdfield::gpu::Backend {
    fn from(arg: BackendArg) -> Self {
        match arg {
            BackendArg::Cpu => Self::Cpu,
            BackendArg::Gpu => Self::Gpu,
            BackendArg::Auto => Self::Auto,
        }
    }
}

/// Parses the command line, runs the subcommand, prints any error and returns the exit code.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Solve(a) => solve::run(a),
        Command::Eikonal(a) => eikonal::run(a),
        Command::Image(a) => image::run(a),
        Command::Validate(a) => validate::run(a),
        Command::Simulate(a) => simulate::run(a),
        Command::Batch(a) => batch::run(a),
        Command::Bench(a) => bench::run(a),
        Command::Verify(a) => verify::run(a),
        Command::Import(a) => import::run(a),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {}", flag_text(&error_chain(&e)));
            ExitCode::FAILURE
        }
    }
}

/// What the maps a command loads may read (flattened into every command that loads maps).
#[derive(clap::Args, Clone, Copy, Debug, Default)]
pub struct MapReadArgs {
    /// Let maps read raster files outside their own folder (an absolute path, a path climbing
    /// out with `..`, a symbolic link leading out). Off by default: a map reads rasters only
    /// from its own folder and below.
    #[arg(long)]
    pub allow_outside_rasters: bool,
}

impl MapReadArgs {
    /// The library's options for loading maps.
    pub fn options(self) -> crowdfield::map::LoadOptions {
        crowdfield::map::LoadOptions {
            allow_outside_rasters: self.allow_outside_rasters,
        }
    }
}

/// `count` followed by `singular` or, for any count but 1, `plural`: "1 agent", "3 agents".
fn count_of(count: usize, singular: &str, plural: &str) -> String {
    format!("{count} {}", if count == 1 { singular } else { plural })
}

/// The inputs of `validate` and `batch` less the JSON Schemas among them
/// ([`crowdfield::map::is_schema_file`]; `maps/*.json` names `maps/map.schema.json` too), each
/// one skipped named on stderr. An error when nothing is left.
fn without_schemas(inputs: &[PathBuf]) -> anyhow::Result<Vec<PathBuf>> {
    let (schemas, maps): (Vec<&PathBuf>, Vec<&PathBuf>) =
        inputs.iter().partition(|p| crowdfield::map::is_schema_file(p));
    for schema in &schemas {
        eprintln!(
            "skipped {}: a JSON Schema (*.schema.json), not a map",
            schema.display()
        );
    }
    if maps.is_empty() {
        anyhow::bail!("no map given: every input is a JSON Schema (*.schema.json)");
    }
    Ok(maps.into_iter().cloned().collect())
}

/// The error and its causes joined by ": ", leaving out a cause whose text the message already
/// ends with (the library's I/O errors print their cause themselves: "PATH: Not a directory").
fn error_chain(e: &anyhow::Error) -> String {
    let mut text = e.to_string();
    for cause in e.chain().skip(1) {
        let cause = cause.to_string();
        if !text.ends_with(&cause) {
            text.push_str(": ");
            text.push_str(&cause);
        }
    }
    text
}

/// The library's names for what the command line sets, and the flags that set them, in the
/// order [`flag_text`] replaces them (longer phrases first). The library names its own fields
/// (`SimConfig.dt`, `Order::Second`, `Backend::Gpu`); the command speaks of its flags.
const FLAG_NAMES: &[(&str, &str)] = &[
    ("order: Order::Second:", "--order: 2:"),
    ("backend: Backend::Gpu:", "--backend: gpu:"),
    ("leave SimConfig.dt unset", "leave --dt out"),
    ("SimConfig.dt", "--dt"),
    ("SimConfig.max_time", "--max-time"),
    ("SimConfig.replan_every", "--replan-every"),
    ("trajectory_every: ", "--trajectory-every "),
    ("Order::First", "--order 1"),
    ("Backend::Gpu", "--backend gpu"),
    ("Backend::Cpu", "--backend cpu"),
    ("Backend::Auto", "auto"),
    ("Shard:", "--shard:"),
    (": output folder: ", ": --out: "),
    ("choose another output folder", "choose another --out"),
    ("open it with `force`", "pass --force"),
    ("ImportOptions.density", "--density"),
    ("ImportOptions.cell_size", "--cell-size"),
    ("LayerNames", "--layer"),
    ("pixel_size", "--pixel-size"),
];

/// `text` (an error, a note from the library) with the library's names of settings replaced
/// by the flags that set them ([`FLAG_NAMES`]): "SimConfig.dt: 0: expected a positive time
/// step" reads "--dt: 0: expected a positive time step".
fn flag_text(text: &str) -> String {
    FLAG_NAMES
        .iter()
        .fold(text.to_string(), |t, (library, flag)| t.replace(library, flag))
}

/// The fast-marching order of an `--order` value (1 or 2: clap checks the range).
fn order(n: u8) -> crowdfield::eikonal::Order {
    if n == 2 {
        crowdfield::eikonal::Order::Second
    } else {
        crowdfield::eikonal::Order::First
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cause_already_in_the_message_is_not_repeated() {
        let io = crowdfield::error::Error::Io {
            path: "out/x.json".into(),
            source: std::io::Error::other("disk full"),
        };
        let e = anyhow::Error::new(io).context("writing out");
        assert_eq!(error_chain(&e), "writing out: out/x.json: disk full");
        let e = anyhow::anyhow!("plain");
        assert_eq!(error_chain(&e), "plain");
    }

    #[test]
    fn library_names_read_as_flags() {
        assert_eq!(
            flag_text("SimConfig.dt: 2 s is too long: use SimConfig.dt <= 0.5 (or leave SimConfig.dt unset)"),
            "--dt: 2 s is too long: use --dt <= 0.5 (or leave --dt out)"
        );
        assert_eq!(
            flag_text(
                "order: Order::Second: use Order::First with Backend::Gpu, or Backend::Cpu or Backend::Auto"
            ),
            "--order: 2: use --order 1 with --backend gpu, or --backend cpu or auto"
        );
        assert_eq!(flag_text("backend: Backend::Gpu: no"), "--backend: gpu: no");
        assert_eq!(
            flag_text("SimConfig.max_time: x; SimConfig.replan_every"),
            "--max-time: x; --replan-every"
        );
        assert_eq!(
            flag_text("trajectory_every: \"0\": expected at least 1 step"),
            "--trajectory-every \"0\": expected at least 1 step"
        );
        assert_eq!(
            flag_text("Shard: \"3/2\": I must be in 0..2"),
            "--shard: \"3/2\": I must be in 0..2"
        );
        assert_eq!(
            flag_text(
                "out/m: output folder: holds \"a\"; choose another output folder, or open it with `force` to \
                 write over them"
            ),
            "out/m: --out: holds \"a\"; choose another --out, or pass --force to write over them"
        );
    }

    #[test]
    fn backend_values_mirror_the_library() {
        use crowdfield::gpu::Backend;
        assert_eq!(Backend::from(BackendArg::Cpu), Backend::Cpu);
        assert_eq!(Backend::from(BackendArg::Gpu), Backend::Gpu);
        assert_eq!(Backend::from(BackendArg::Auto), Backend::Auto);
    }

    #[test]
    fn counts_of_one_are_singular() {
        assert_eq!(count_of(1, "agent", "agents"), "1 agent");
        assert_eq!(count_of(0, "agent", "agents"), "0 agents");
        assert_eq!(count_of(2, "map", "maps"), "2 maps");
    }
}
