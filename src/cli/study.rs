//! `crowdfield study`: many seeds of a map as drawn, with each exit blocked in turn and with the
//! planner's own scenarios, summed up in `study.json` and `study.html`. See
//! [`crowdfield::run::study`].

use crowdfield::run::batch::Shard;
use crowdfield::run::study::{self, StudyOptions};
use crowdfield::sim::DEFAULT_MAX_TIME;
use indicatif::{ProgressBar, ProgressStyle};
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `crowdfield study`.
#[derive(clap::Args)]
pub struct Args {
    /// The map to study.
    pub map: PathBuf,
    /// Seeds per scenario (seeds 1..=N, or from --first-seed).
    #[arg(long, default_value_t = 10)]
    pub seeds: usize,
    /// The first seed.
    #[arg(long, default_value_t = 1)]
    pub first_seed: u64,
    /// Also run each exit blocked in turn (goals of one name are one exit): the "discounted
    /// exit" scenarios building codes ask for.
    #[arg(long)]
    pub discount_exits: bool,
    /// A scenario file (JSON: name, closed_exits, population, premovement, spawns, params,
    /// aset; see docs/study.md). Repeat for several.
    #[arg(long = "scenario", value_name = "FILE")]
    pub scenarios: Vec<PathBuf>,
    /// Available safe egress time, seconds, for every scenario whose file gives none: the
    /// study states the margin ASET - p95 of the evacuation time.
    #[arg(long, allow_negative_numbers = true)]
    pub aset: Option<f64>,
    /// Add seeds (doubling) until the mean and 95th percentile of every scenario's evacuation
    /// time stop moving, up to --max-seeds.
    #[arg(long)]
    pub until_converged: bool,
    /// The most seeds --until-converged runs per scenario.
    #[arg(long, default_value_t = 100)]
    pub max_seeds: usize,
    /// Time limit of each run, seconds.
    #[arg(long, default_value_t = DEFAULT_MAX_TIME, allow_negative_numbers = true)]
    pub max_time: f64,
    /// Run only slice I of N of the (scenario, seed) runs (I is 0-based: 0/4 .. 3/4), into
    /// the same --out; `--merge` then writes the study.
    #[arg(long, value_name = "I/N", conflicts_with = "merge")]
    pub shard: Option<String>,
    /// Write study.json and study.html from the runs the shards left in --out (the same
    /// scenario options as the shards).
    #[arg(long)]
    pub merge: bool,
    /// Output folder: runs/<scenario>/seed-<k>/ per run, study.json, study.html.
    #[arg(long)]
    pub out: PathBuf,
    /// No progress bar.
    #[arg(long)]
    pub quiet: bool,
    #[command(flatten)]
    pub read: super::MapReadArgs,
}

/// Runs `crowdfield study`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let shard = args.shard.as_deref().map(Shard::parse).transpose()?;
    let options = StudyOptions {
        seeds: args.seeds,
        first_seed: args.first_seed,
        max_time: args.max_time,
        until_converged: args.until_converged,
        max_seeds: args.max_seeds,
        shard,
    };
    options.check()?;
    let scenarios = study::load_scenarios(
        &args.map,
        &args.read.options(),
        args.discount_exits,
        &args.scenarios,
        args.aset,
    )?;
    for s in &scenarios {
        if let Some(why) = &s.cannot_run {
            eprintln!("warning: scenario \"{}\" is not run: {why}", s.name);
        }
    }
    let study_file = args.out.join(study::STUDY_FILE);
    let page = args.out.join(study::STUDY_PAGE);
    if args.merge {
        let study = study::merge(&args.out, &args.map, &scenarios, &options)?;
        print_table(&study);
        eprintln!("study: {}\npage: {}", study_file.display(), page.display());
        return Ok(ExitCode::SUCCESS);
    }
    let bar = if args.quiet {
        ProgressBar::hidden()
    } else {
        ProgressBar::new(0)
    };
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} runs  [{elapsed_precise}]")
            .expect("static progress template"),
    );
    let progress = |done: usize, total: usize| {
        bar.set_length(total as u64);
        bar.set_position(done as u64);
    };
    let study = study::run_study(&args.map, &scenarios, &options, &args.out, &progress)?;
    bar.finish_and_clear();
    match study {
        Some(study) => {
            print_table(&study);
            eprintln!("study: {}\npage: {}", study_file.display(), page.display());
        }
        None => eprintln!(
            "shard done: runs in {}; merge with `crowdfield study {} --merge --out {}` once every shard is done",
            args.out.join("runs").display(),
            args.map.display(),
            args.out.display()
        ),
    }
    Ok(ExitCode::SUCCESS)
}

/// Prints each scenario's evacuation time on stderr.
fn print_table(study: &study::Study) {
    for s in &study.scenarios {
        match (&s.cannot_run, &s.evacuation_time) {
            (Some(why), _) => eprintln!("{}: not run ({why})", s.name),
            (None, Some(t)) => eprintln!(
                "{}: evacuation time mean {:.1} s, sd {:.1} s, p95 {:.1} s, max {:.1} s over {} of {} runs{}",
                s.name,
                t.mean,
                t.sd,
                t.p95,
                t.max,
                s.complete_runs,
                s.runs,
                s.converged_after.map_or_else(
                    || "; not converged".to_string(),
                    |k| format!("; converged after {k} seeds")
                )
            ),
            (None, None) => eprintln!(
                "{}: no run completed within the time limit of {} s",
                s.name, study.max_time
            ),
        }
    }
}
