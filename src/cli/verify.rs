//! `crowdfield verify`: the built-in verification suite (RiMEA tests, bottleneck experiments).
//! Runs [`crowdfield::verify::run_suite`], writes its folder and prints the table; exits with
//! status 1 when any test fails.

use crowdfield::local::LocalMode;
use crowdfield::names::Named;
use crowdfield::params::Model;
use crowdfield::params::Params;
use crowdfield::verify::{self, DEFAULT_SEEDS, QUICK_SEEDS, VerifyOptions};
use indicatif::{ProgressBar, ProgressStyle};
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `crowdfield verify`.
#[derive(clap::Args)]
pub struct Args {
    /// Smaller scenes, fewer densities and door widths and one seed: the same tests, in a
    /// fraction of the time (for CI).
    #[arg(long)]
    pub quick: bool,
    /// Seeds per test (0..N). Default: 3, or 1 with --quick.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=100))]
    pub seeds: Option<u64>,
    /// Output folder: verify.json, verify.md, the plots and every map the suite ran (created
    /// if missing). Only files an earlier `verify` wrote are replaced, and only once the new
    /// run is complete: a run refused, failed or killed leaves them as they were.
    #[arg(long, default_value = "verify")]
    pub out: PathBuf,
    /// A `params` block for every generated map, as a JSON file (a regular file of at most
    /// 1 MiB) or as JSON text (`--params '{"speed_law": "weidmann"}'`), to verify another
    /// parameter set; checked on every map before the suite runs. Default: no block, the
    /// model's defaults.
    #[arg(long, value_name = "FILE|JSON")]
    pub params: Option<String>,
    /// The model of every run, as on `simulate` (default: the model of a map without one:
    /// `pedestrian`, or `continuum_crowds` with --params).
    #[arg(long, value_parser = super::choice(super::model_help))]
    pub model: Option<Model>,
    /// Local layer of every run, as on `simulate`.
    #[arg(long, value_parser = super::choice(super::local_help), default_value = LocalMode::None.name())]
    pub local: LocalMode,
    /// Write into an --out folder that holds files `verify` did not write (they are kept
    /// unless a file of the suite has the same name).
    #[arg(long)]
    pub force: bool,
    /// No progress bar.
    #[arg(long)]
    pub quiet: bool,
}

/// Runs `crowdfield verify`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let options = VerifyOptions {
        quick: args.quick,
        seeds: args
            .seeds
            .unwrap_or(if args.quick { QUICK_SEEDS } else { DEFAULT_SEEDS }),
        params: args
            .params
            .as_deref()
            .map(|p| Params::from_option("--params", p))
            .transpose()?,
        model: args.model,
        local: args.local,
    };
    // Every map the suite runs is built and checked, then the folder opened, before the first
    // run: a refused option or folder leaves the folder as it was.
    verify::check(&options).map_err(|e| match &args.params {
        Some(p) => anyhow::anyhow!(
            "--params {}: refused by the suite's maps, which all carry this `params` block: {e}",
            crowdfield::text::truncate_for_message(p)
        ),
        None => e.into(),
    })?;
    let mut out = verify::output::open(&args.out, args.force)?;
    let bar = if args.quiet {
        ProgressBar::hidden()
    } else {
        ProgressBar::new(0)
    };
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} runs  [{elapsed_precise}]")
            .expect("static progress template"),
    );
    let (report, maps) = verify::run_suite(&options, &|done, total| {
        bar.set_length(total as u64);
        bar.set_position(done as u64);
    })?;
    bar.finish_and_clear();
    verify::output::write(&mut out, &report, &maps)?;
    print!("{}", verify::output::table(&report));
    let failed = report
        .tests
        .iter()
        .filter(|t| t.status == verify::Status::Fail)
        .count();
    println!(
        "{}: {} of {} tests failed; report in {}",
        if report.passed { "passed" } else { "FAILED" },
        failed,
        report.tests.len(),
        crowdfield::text::show_path(&args.out.join(verify::output::MARKDOWN_FILE))
    );
    Ok(if report.passed {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
