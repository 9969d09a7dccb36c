//! Argument parsing and dispatch. Each subcommand parses its own arguments (`Args`) and runs
//! (`run`), returning `anyhow::Result`; this file prints the error chain and picks the exit code.

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::{Parser, Subcommand};
use crowdfield::gpu::Backend;
use crowdfield::local::{LocalBackend, LocalMode};
use crowdfield::names::Named;
use crowdfield::params::{Model, SpeedLaw};
use std::path::PathBuf;
use std::process::ExitCode;

mod batch;
mod bench;
mod eikonal;
mod image;
mod import;
mod simulate;
mod solve;
mod study;
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
    /// Run many seeds of a map, with each exit blocked in turn and with scenario files, and
    /// state the spread of the evacuation times.
    Study(study::Args),
    /// Measure the solvers and the simulation step.
    Bench(bench::Args),
    /// Run the verification suite (RiMEA tests, bottleneck experiments) and report each test.
    Verify(verify::Args),
    /// Turn floor plans (DXF, WKT, GeoJSON, PNG/JPEG) into a map with the vectors kept.
    Import(import::Args),
}

/// The `value_parser` of a flag whose values are a library choice: the [`Named::name`]s of
/// `N::ALL`, each with its one-line `help` (shown by `--help`), read back with [`Named::parse`].
fn choice<N: Named + Send + Sync>(help: fn(N) -> &'static str) -> impl TypedValueParser<Value = N> {
    PossibleValuesParser::new(N::ALL.iter().map(|&v| PossibleValue::new(v.name()).help(help(v))))
        .map(|name| N::parse(&name).expect("clap passes only the names it lists"))
}

/// `--backend`'s help on each [`Backend`].
fn backend_help(backend: Backend) -> &'static str {
    match backend {
        Backend::Cpu => "CPU fast marching (the groups solved in parallel)",
        Backend::Gpu => "GPU block fast iterative method; an error when no GPU adapter can be opened",
        Backend::Auto => {
            "A hardware GPU when one can be opened and the grid has at least 512 x 512 cells, else \
             the CPU (with a note saying why). Below that size the CPU was faster even against an \
             NVIDIA H200. Software adapters (llvmpipe/lavapipe, far slower than the CPU solvers) are \
             passed over unless WGPU_ADAPTER_NAME names one"
        }
    }
}

/// `--local`'s help on each [`LocalMode`].
fn local_help(mode: LocalMode) -> &'static str {
    match mode {
        LocalMode::None => "No local layer: the walkers follow the field",
        LocalMode::Boids => {
            "Boids steering (separation, alignment, cohesion) added to the field's velocity, for \
             the groups with a `boids` block; goal-less groups flock"
        }
        LocalMode::Orca => "ORCA collision avoidance (velocity obstacles) for every group",
        LocalMode::BoidsOrca => "Boids steering, then ORCA",
    }
}

/// `--local-backend`'s help on each [`LocalBackend`].
fn local_backend_help(backend: LocalBackend) -> &'static str {
    match backend {
        LocalBackend::CpuSingle => "One thread",
        LocalBackend::CpuMulti => "All cores (rayon)",
        LocalBackend::Gpu => "wgpu compute passes (an error when no GPU adapter opens)",
    }
}

/// `--model`'s help on each [`Model`].
fn model_help(model: Model) -> &'static str {
    match model {
        Model::Pedestrian => "The pedestrian model: the field's direction, a speed from the walkers around",
        Model::ContinuumCrowds => "Continuum Crowds as published: the speed field's speed",
    }
}

/// `--speed-law`'s help on each [`SpeedLaw`].
fn speed_law_help(law: SpeedLaw) -> &'static str {
    match law {
        SpeedLaw::Linear => {
            "Linear blend of terrain and flow speed between rho_min and rho_max (docs/SPEC.md §3)"
        }
        SpeedLaw::Weidmann => "Weidmann: free speed 1.34 m/s, jam density 5.4 /m², gamma 1.913",
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
        Command::Study(a) => study::run(a),
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
    ("StudyOptions.seeds", "--seeds"),
    ("StudyOptions.max_seeds", "--max-seeds"),
    ("StudyOptions.max_time", "--max-time"),
    ("StudyOptions.aset", "--aset"),
    ("trajectory_every: ", "--trajectory-every "),
    ("Shard:", "--shard:"),
    (": output folder: ", ": --out: "),
    ("choose another output folder", "choose another --out"),
    ("open it with `force`", "pass --force"),
    ("ImportOptions.density", "--density"),
    ("ImportOptions.cell_size", "--cell-size"),
    ("LayerNames", "--layer"),
    ("pixel_size", "--pixel-size"),
];

/// The library's names of the values of `--backend` and `--order` (`Backend::Gpu`,
/// `Order::First`) and the flags that give them (`--backend gpu`, `--order 1`).
fn choice_flags() -> Vec<(String, String)> {
    let backends = Backend::ALL
        .iter()
        .map(|b| (format!("Backend::{b:?}"), format!("--backend {}", b.name())));
    let orders = crowdfield::eikonal::Order::ALL
        .iter()
        .map(|o| (format!("Order::{o:?}"), format!("--order {}", o.name())));
    backends.chain(orders).collect()
}

/// `text` (an error, a note from the library) with the library's names of settings replaced
/// by the flags that set them ([`FLAG_NAMES`], then [`choice_flags`]): "SimConfig.dt: 0:
/// expected a positive time step" reads "--dt: 0: expected a positive time step".
fn flag_text(text: &str) -> String {
    let text = FLAG_NAMES
        .iter()
        .fold(text.to_string(), |t, (library, flag)| t.replace(library, flag));
    choice_flags()
        .iter()
        .fold(text, |t, (library, flag)| t.replace(library, flag))
}

/// The fast-marching order of an `--order` value (1 or 2: clap checks the range).
fn order(n: u8) -> crowdfield::eikonal::Order {
    crowdfield::eikonal::Order::parse(&n.to_string()).expect("clap checks the range 1..=2")
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
            "--order: 2: use --order 1 with --backend gpu, or --backend cpu or --backend auto"
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

    /// Parses `args` with one option whose values are the choice `N`.
    fn parse_choice<N: Named + Send + Sync>(
        help: fn(N) -> &'static str,
        args: &[&str],
    ) -> Result<N, clap::Error> {
        let cmd = clap::Command::new("t").arg(clap::Arg::new("v").long("v").value_parser(choice(help)));
        let matches = cmd.try_get_matches_from(std::iter::once("t").chain(args.iter().copied()))?;
        Ok(*matches.get_one::<N>("v").expect("given"))
    }

    /// Every value of `N` is offered by its library name and parsed back to itself; another
    /// name is refused with the list.
    fn choices_are_the_library_names<N: Named + Send + Sync + std::fmt::Debug>(help: fn(N) -> &'static str) {
        for &v in N::ALL {
            assert_eq!(parse_choice(help, &["--v", v.name()]).unwrap(), v);
            assert!(!help(v).is_empty());
        }
        let e = parse_choice(help, &["--v", "bogus"]).unwrap_err().to_string();
        let names: Vec<&str> = N::ALL.iter().map(|v| v.name()).collect();
        assert!(
            e.contains(&format!("[possible values: {}]", names.join(", "))),
            "{e}"
        );
    }

    #[test]
    fn flag_values_are_the_library_names() {
        choices_are_the_library_names(backend_help);
        choices_are_the_library_names(local_help);
        choices_are_the_library_names(local_backend_help);
        choices_are_the_library_names(model_help);
        choices_are_the_library_names(speed_law_help);
        assert_eq!(order(2), crowdfield::eikonal::Order::Second);
    }

    #[test]
    fn counts_of_one_are_singular() {
        assert_eq!(count_of(1, "agent", "agents"), "1 agent");
        assert_eq!(count_of(0, "agent", "agents"), "0 agents");
        assert_eq!(count_of(2, "map", "maps"), "2 maps");
    }
}
