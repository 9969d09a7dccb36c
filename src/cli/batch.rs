//! `crowdfield batch`: solve (and optionally simulate) many maps in parallel, resumably, with a
//! summary of every map's outcome. See [`crowdfield::run::batch`] for the layout of the outputs.

use crowdfield::ownership::OwnedDir;
use crowdfield::run::batch::{self, BatchOptions, MapOutcome, Shard};
use crowdfield::sim::{DEFAULT_MAX_TIME, SimConfig};
use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;
use std::path::PathBuf;
use std::process::ExitCode;

/// Most maps run at once: far more than the cores of any machine a batch runs on; a larger
/// `--jobs` is a typo that would start that many threads.
const MAX_JOBS: usize = 1024;

/// Arguments of `crowdfield batch`.
#[derive(clap::Args)]
pub struct Args {
    /// Map files, folders (every *.json inside) or manifests (.txt, one path per line, relative
    /// to the manifest). JSON Schemas (*.schema.json) are skipped.
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,
    /// Output folder: one sub-folder per map (named after the map's file stem) and the summary.
    #[arg(long)]
    pub out: PathBuf,
    /// Maps run at once (default: every core).
    #[arg(long, allow_negative_numbers = true)]
    pub jobs: Option<usize>,
    /// Run only slice I of N of the sorted map list (I is 0-based: 0/4 .. 3/4).
    #[arg(long, value_name = "I/N")]
    pub shard: Option<String>,
    /// Also simulate each map (report.json, plots) after solving it.
    #[arg(long)]
    pub simulate: bool,
    /// Redo maps that are already complete, and write into map folders holding files the batch
    /// did not write, and over a summary or index page in --out the batch did not write (files
    /// of the batch's own names are replaced; others are kept).
    #[arg(long)]
    pub force: bool,
    /// Simulation time limit, seconds (with --simulate): each run stops after its last whole
    /// time step not past it; a limit shorter than one step is refused.
    #[arg(long, default_value_t = DEFAULT_MAX_TIME, allow_negative_numbers = true)]
    pub max_time: f64,
    /// Simulation seed (with --simulate).
    #[arg(long, default_value_t = 0, allow_negative_numbers = true)]
    pub seed: u64,
    /// The model of every map, as on `simulate` (default: each map's own `model`; pedestrian
    /// for a map without `params`). It changes the solve too: each model plans with its own
    /// speed law.
    #[arg(long, value_parser = super::choice(super::model_help))]
    pub model: Option<crowdfield::params::Model>,
    /// No progress bar and no closing count when every map succeeds; failures and warnings
    /// are still printed.
    #[arg(long)]
    pub quiet: bool,
    #[command(flatten)]
    pub read: super::MapReadArgs,
}

/// Prints `line` on stderr above the progress bar.
fn print_line(bar: &ProgressBar, line: String) {
    // A bar not drawn (stderr is a log file, not a terminal) drops its println.
    if bar.is_hidden() {
        eprintln!("{line}");
    } else {
        bar.println(line);
    }
}

/// Runs `crowdfield batch`. Exits non-zero when any map failed.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let shard = args.shard.as_deref().map(Shard::parse).transpose()?;
    match args.jobs {
        Some(0) => anyhow::bail!("--jobs 0: expected at least 1"),
        Some(j) if j > MAX_JOBS => anyhow::bail!("--jobs {j}: expected at most {MAX_JOBS}"),
        _ => {}
    }
    if args.simulate && !(args.max_time.is_finite() && args.max_time > 0.0) {
        // Checked before any map is solved, not once per map after its solve.
        anyhow::bail!(
            "--max-time {}: expected a positive number of seconds",
            args.max_time
        );
    }
    let fewest_steps = args.max_time / crowdfield::sim::DEFAULT_DT;
    if args.simulate && fewest_steps > crowdfield::sim::MAX_STEPS {
        // Batch runs take each map's automatic time step, never longer than DEFAULT_DT: every
        // map would be solved and then refused.
        anyhow::bail!(
            "--max-time {}: expected at most {} s (batch simulations take each map's automatic time \
             step, at most {} s, and at most {:e} steps)",
            crowdfield::error::num(args.max_time),
            crowdfield::error::num(crowdfield::sim::MAX_STEPS * crowdfield::sim::DEFAULT_DT),
            crowdfield::sim::DEFAULT_DT,
            crowdfield::sim::MAX_STEPS
        );
    }
    // The batch's own files in OUT/ (summaries, index page) must be absent or its own: a
    // user's summary.csv is refused now, before any map runs, unless --force.
    let suffix = shard.map_or_else(String::new, |s| format!("-shard-{}-of-{}", s.index, s.count));
    let mut top = OwnedDir::open_shared(&args.out, batch::BATCH_WRITER, args.force)?;
    let mut top_files = vec![format!("summary{suffix}.json"), format!("summary{suffix}.csv")];
    if args.simulate {
        top_files.push(format!("index{suffix}.html"));
    }
    top.claim_all(top_files.iter().map(String::as_str))?;
    if !args.simulate {
        // An earlier --simulate run's page would pass for this run's; a user's is kept.
        top.remove(&format!("index{suffix}.html"))?;
    }
    let mut all = batch::expand_inputs(&super::without_schemas(&args.inputs)?)?;
    // With --out inside an input folder, an earlier run's summary would pass for a map.
    all.retain(|m| !batch::is_summary_of(m, &args.out));
    let maps = match shard {
        Some(s) => s.slice(&all).to_vec(),
        None => all,
    };
    let options = BatchOptions {
        simulate: args.simulate,
        sim: SimConfig {
            max_time: args.max_time,
            seed: args.seed,
            ..SimConfig::default()
        },
        load: args.read.options(),
        model: args.model,
    };
    let bar = if args.quiet {
        ProgressBar::hidden()
    } else {
        ProgressBar::new(maps.len() as u64)
    };
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} maps  {msg}  [{elapsed_precise}]")
            .expect("static progress template"),
    );
    let mut pool = rayon::ThreadPoolBuilder::new();
    if let Some(j) = args.jobs {
        // More threads than maps would only sit idle.
        pool = pool.num_threads(j.min(maps.len()).max(1));
    }
    let pool = pool.build()?;
    let outcomes: Vec<MapOutcome> = pool.install(|| {
        maps.par_iter()
            .map(|m| {
                let o = batch::run_map(m, &args.out, &options, args.force);
                bar.set_message(batch::stem(m));
                bar.inc(1);
                // Printed even with --quiet: an error is never only in the summary file.
                if o.status == "failed" {
                    let error = super::flag_text(o.error.as_deref().unwrap_or("unknown error"));
                    let error = error.as_str();
                    // Most errors already start with the map's path.
                    let line = if error.starts_with(&o.map) {
                        format!("failed: {error}")
                    } else {
                        format!("failed: {}: {error}", o.map)
                    };
                    print_line(&bar, line);
                }
                // Printed even with --quiet, as `simulate` prints them.
                for w in &o.warnings {
                    print_line(&bar, format!("warning: {}: {w}", o.map));
                }
                o
            })
            .collect()
    });
    bar.finish_and_clear();
    batch::write_summary(&args.out, &suffix, &outcomes)?;
    if args.simulate {
        crowdfield::run::planner::write_index(&args.out, &suffix, &outcomes)?;
    }
    top.finish()?;
    let failed = outcomes.iter().filter(|o| o.status == "failed").count();
    let skipped = outcomes.iter().filter(|o| o.status == "skipped").count();
    if !args.quiet || failed > 0 {
        eprintln!(
            "{}: {} done, {} already complete, {} failed; summary in {}",
            super::count_of(outcomes.len(), "map", "maps"),
            outcomes.len() - failed - skipped,
            skipped,
            failed,
            args.out.join(format!("summary{suffix}.json")).display()
        );
    }
    Ok(if failed > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}
