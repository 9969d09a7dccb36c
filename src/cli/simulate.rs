//! `crowdfield simulate`: run a crowd on a map and write the report, plots, and optionally
//! trajectories and frames.

use anyhow::Context;
use crowdfield::gpu::Backend;
use crowdfield::local::{LocalBackend, LocalMode};
use crowdfield::names::Named;
use crowdfield::params::{Model, SpeedLaw};
use crowdfield::run::draw::FrameField;
use crowdfield::run::driver::{OnStep, RunDriver, local_layer_for};
use crowdfield::run::output::{self, FrameOptions, RunFiles, RunWriter, TrajectoryFormat};
use crowdfield::scene::Scene;
use crowdfield::sim::{DEFAULT_MAX_TIME, SimConfig, Simulation};
use indicatif::{ProgressBar, ProgressStyle};
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `crowdfield simulate`.
#[derive(clap::Args)]
pub struct Args {
    /// The map (JSON).
    pub map: PathBuf,
    /// Output folder (created if missing).
    #[arg(long)]
    pub out: PathBuf,
    /// Stop at this simulated time, seconds.
    ///
    /// The run takes whole steps of --dt and stops after the last one that does not pass this
    /// time, so the report's end_time is never later than --max-time (it equals it when
    /// --max-time is a multiple of the step). A --max-time shorter than one step is refused.
    #[arg(long, default_value_t = DEFAULT_MAX_TIME, allow_negative_numbers = true)]
    pub max_time: f64,
    /// Time step, seconds. Default: 0.1 s, lowered so the fastest walker crosses at most 0.9 of
    /// a cell per step. A given step that lets a walker cross more than one cell is refused.
    #[arg(long, allow_negative_numbers = true)]
    pub dt: Option<f64>,
    /// Seed of the spawn positions and speeds.
    #[arg(long, default_value_t = 0, allow_negative_numbers = true)]
    pub seed: u64,
    /// Trajectories to write: sqlite (trajectories.sqlite, JuPedSim's layout, read by PedPy),
    /// csv (trajectories.csv: t, id, group, x, y, vx, vy), both, or none.
    ///
    /// Without the flag a run writes trajectories.sqlite (what PedPy and JuPedSim's tools
    /// read, a fraction of the CSV's size); `--trajectories` alone writes both, so scripts
    /// reading trajectories.csv keep working. A value needs `=` (`--trajectories=csv`). An
    /// earlier run's trajectory file of a format not written is removed.
    #[arg(long, value_parser = super::choice(trajectories_help), num_args = 0..=1, require_equals = true,
          default_missing_value = TrajectoryFormat::Both.name(), value_name = "FORMAT")]
    pub trajectories: Option<TrajectoryFormat>,
    /// Trajectory sampling: every N steps (`5`) or every so many seconds of simulated time
    /// (`0.5s`, rounded to a whole number of steps, at least one), so the files have a stable
    /// frame rate (stored as `fps` in the SQLite file). At most the whole run (--max-time).
    #[arg(long, value_name = "STEPS|SECONDSs", default_value = "1")]
    pub trajectory_every: String,
    /// Write frames/frame_NNNNN.png every this many steps. They are written beside `frames`
    /// and replace an earlier run's frames only when the run succeeds (a run without --frames
    /// removes them then too); a `frames` that is a symbolic link is never written or deleted
    /// through.
    #[arg(long, value_name = "EVERY", allow_negative_numbers = true)]
    pub frames: Option<usize>,
    /// What frames show under the agents.
    #[arg(long, value_parser = super::choice(frame_field_help),
          default_value = FrameField::Density.name())]
    pub frame_field: FrameField,
    /// Recompute the potentials every K steps (1 = every step, the reference).
    #[arg(long, value_name = "K", default_value_t = 1, allow_negative_numbers = true)]
    pub replan_every: usize,
    /// The model that moves the walkers: pedestrian (for evacuation figures) or
    /// continuum_crowds (the published model, for games and film). [default: the map's
    /// `model`; pedestrian for a map without `params`, continuum_crowds for one with them]
    #[arg(long, value_parser = super::choice(super::model_help))]
    pub model: Option<Model>,
    /// Speed–density law: the continuum-crowds linear blend or Weidmann's fundamental diagram.
    /// [default: the map's `params.speed_law`, linear when the map does not set it]
    #[arg(long, value_parser = super::choice(super::speed_law_help))]
    pub speed_law: Option<SpeedLaw>,
    /// Order of the fast-marching update (1 or 2).
    #[arg(
        long,
        default_value_t = 1,
        value_parser = clap::value_parser!(u8).range(1..=2),
        allow_negative_numbers = true
    )]
    pub order: u8,
    /// Where the potentials are solved: cpu (fast marching), gpu (block fast iterative method),
    /// auto (the GPU when one opens and the grid has 512² cells or more, else the CPU). The one
    /// used is printed.
    #[arg(long, value_parser = super::choice(super::backend_help), default_value = Backend::Cpu.name())]
    pub backend: Backend,
    /// Local layer between the field velocity and the walk. Boids act only on groups with a
    /// `boids` block in the map (the groups are named on stderr, with a warning when there are
    /// none).
    #[arg(long, value_parser = super::choice(super::local_help), default_value = LocalMode::None.name())]
    pub local: LocalMode,
    /// Where the local layer runs: cpu-multi (rayon) or cpu-single (identical results), or gpu
    /// (the same passes as compute shaders, equal to f32 rounding). The one used is printed.
    #[arg(long, value_parser = super::choice(super::local_backend_help),
          default_value = LocalBackend::CpuMulti.name())]
    pub local_backend: LocalBackend,
    /// No progress bar and no summary on stderr.
    #[arg(long)]
    pub quiet: bool,
    /// Write into an --out folder that holds files `simulate` did not write (they are kept
    /// unless a file of the run has the same name).
    #[arg(long)]
    pub force: bool,
    #[command(flatten)]
    pub read: super::MapReadArgs,
}

/// The writer named in a `simulate` folder's manifest (and in the messages about it).
pub const SIMULATE_WRITER: &str = "crowdfield simulate";

/// `--trajectories`' help on each [`TrajectoryFormat`].
fn trajectories_help(format: TrajectoryFormat) -> &'static str {
    match format {
        TrajectoryFormat::Sqlite => "trajectories.sqlite (JuPedSim's SQLite layout, read by PedPy)",
        TrajectoryFormat::Csv => "trajectories.csv",
        TrajectoryFormat::Both => "Both files",
        TrajectoryFormat::None => "No trajectories",
    }
}

/// `--frame-field`'s help on each [`FrameField`].
fn frame_field_help(field: FrameField) -> &'static str {
    match field {
        FrameField::Density => "Density, persons/m² (colour bar from 0 to the model's maximum density)",
        FrameField::Potential => "The first group's potential, seconds",
    }
}

/// The names of the groups of `scene` with a `boids` block, quoted: the only groups the boids
/// of `--local boids` and `boids+orca` act on.
fn groups_with_boids(scene: &Scene) -> Vec<String> {
    scene
        .groups
        .iter()
        .filter(|g| g.boids.is_some())
        .map(|g| format!("{:?}", g.name))
        .collect()
}

/// For a boids mode of `--local`, which groups the boids act on, as the end of the
/// "local layer" line (`"; boids parameters: group \"fish\""`); empty for the other modes and
/// when no group has boids (then [`local_layer_for`]'s warning says so).
fn boids_groups_note(scene: &Scene, mode: LocalMode) -> String {
    let with = groups_with_boids(scene);
    if !matches!(mode, LocalMode::Boids | LocalMode::BoidsOrca) || with.is_empty() {
        return String::new();
    }
    let without: Vec<String> = scene
        .groups
        .iter()
        .filter(|g| g.boids.is_none())
        .map(|g| format!("{:?}", g.name))
        .collect();
    let mut note = format!(
        "; boids parameters: {} {}",
        if with.len() == 1 { "group" } else { "groups" },
        with.join(", ")
    );
    if !without.is_empty() {
        note.push_str(&format!(" (none for {}: no boids there)", without.join(", ")));
    }
    note
}

/// Runs `crowdfield simulate`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if args.frames == Some(0) {
        anyhow::bail!("--frames 0: expected a number of steps of at least 1");
    }
    crowdfield::plan::check_order(args.backend, super::order(args.order))?;
    let mut scene = crowdfield::sim::load_map(&args.map, &args.read.options())?;
    let model_source =
        crowdfield::sim::report::model_source(&crowdfield::map::MapFile::from_path(&args.map)?, args.model);
    if let Some(model) = args.model {
        scene.params = scene.params.clone().with_model(model);
    }
    if let Some(law) = args.speed_law {
        scene.params.speed_law = law;
    }
    // The map's warnings for the model that runs, before the run; the report repeats them.
    let map_warnings = crowdfield::map::warnings(&scene);
    for w in &map_warnings {
        eprintln!("warning: {}: {w}", args.map.display());
    }
    let config = SimConfig {
        dt: args.dt,
        max_time: args.max_time,
        seed: args.seed,
        replan_every: args.replan_every,
        order: super::order(args.order),
        // Potential frames show the whole field; otherwise a march stops past the walkers.
        full_potentials: args.frames.is_some() && args.frame_field == FrameField::Potential,
    };
    let scene_name = scene.name.clone();
    let (local, local_warning) = local_layer_for(&scene, args.local, &args.map.display().to_string());
    let sim = Simulation::builder(scene)
        .config(config)
        .backend(args.backend)
        .local(local)
        .local_backend(args.local_backend)
        .model_source(model_source)
        .build()
        .map_err(|e| e.relabel(&scene_name, &args.map.display().to_string()))?;
    let every = output::trajectory_every_steps(&args.trajectory_every, sim.dt(), args.max_time)?;
    let mut driver = RunDriver::new(sim, Some(every));
    if let Some(w) = local_warning {
        driver.warn(w);
    }
    // A mistyped or read-only --out, or one holding files `simulate` did not write, fails
    // now, not after the run.
    let mut owned = output::open_run_folder(&args.out, SIMULATE_WRITER, args.force)?;
    let sim = driver.simulation();
    let solver_note = super::flag_text(sim.solver_description());
    let local_note = sim
        .local_description()
        .map_or_else(String::new, |d| format!(" on {d}"));
    // Said even with --quiet, as the other warnings.
    for w in driver.take_warnings() {
        eprintln!("warning: {w}");
    }
    let sim = driver.simulation();
    if !args.quiet {
        let size = sim.memory_size();
        eprintln!(
            "memory: about {} for a run of {}",
            crowdfield::memory::show_bytes(size.simulation_bytes()),
            size.describe()
        );
        eprintln!(
            "model: {}; walls: {}; potentials: {solver_note}; local layer: {}{local_note}{}",
            sim.scene().params.model.name(),
            sim.walls().describe(),
            local.name(),
            boids_groups_note(sim.scene(), local)
        );
        if !matches!(local, LocalMode::Boids | LocalMode::BoidsOrca) {
            for g in sim.scene().groups.iter().filter(|g| g.goals.is_empty()) {
                eprintln!(
                    "note: group {:?} has no goals: it moves only under a boids layer (--local boids)",
                    g.name
                );
            }
        }
    }
    let total: usize = sim.spawned().iter().sum::<usize>() + sim.walkers_to_come();
    let bar = if args.quiet {
        ProgressBar::hidden()
    } else {
        ProgressBar::new(total as u64)
    };
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} agents out  {msg}  [{elapsed_precise}]")
            .expect("static progress template"),
    );
    let files = RunFiles {
        trajectories: args.trajectories.unwrap_or_default(),
        frames: args.frames.map(|every| FrameOptions {
            every,
            field: args.frame_field,
        }),
    };
    let mut writer = RunWriter::open(&mut owned, &driver, &files)?;
    let progress = OnStep(|s: &Simulation| {
        bar.set_position(s.arrivals().len() as u64);
        bar.set_message(format!("t = {:.1} s", s.time()));
    });
    let mut observer = (progress, &mut writer);
    driver.start(&mut observer)?;
    driver.run(&mut observer)?;
    bar.finish_and_clear();
    let parameters = vec![
        ("potentials".to_string(), solver_note.clone()),
        ("local layer".to_string(), local.name().to_string()),
    ];
    let written = writer
        .finish(driver.simulation(), &args.map, parameters)
        .with_context(|| format!("writing {}", args.out.display()))?;
    // An earlier run's files this run did not write (trajectories of another format, frames)
    // would pass for this run's: they go now that the run has succeeded.
    owned.finish()?;
    let report = written.report;
    // Said even with --quiet: a run cut short is not an evacuation time. The map's own
    // warnings, which the report repeats, were said before the run.
    for w in written.warnings.iter().chain(
        driver
            .take_warnings()
            .iter()
            .filter(|w| !map_warnings.contains(w)),
    ) {
        eprintln!("warning: {w}");
    }
    let sim = driver.simulation();
    if !args.quiet {
        let t = &report.total;
        match t.evacuation_time {
            Some(e) => eprintln!(
                "{}: {} out in {e:.1} s ({})",
                report.map,
                match t.agents {
                    1 => "1 agent".to_string(),
                    n => format!("all {n} agents"),
                },
                super::count_of(report.steps, "step", "steps")
            ),
            None => {
                let r = &t.remaining;
                let no_goal = if r.no_goal > 0 {
                    format!("{} in groups without a goal, ", r.no_goal)
                } else {
                    String::new()
                };
                let waiting = if r.waiting > 0 {
                    format!(", {} not started (pre-movement)", r.waiting)
                } else {
                    String::new()
                };
                eprintln!(
                    "{}: {} of {} out by {:.1} s; {} ({no_goal}{} unreachable, {} stuck, {} walking{waiting})",
                    report.map,
                    t.arrived,
                    super::count_of(t.agents, "agent", "agents"),
                    report.end_time,
                    if r.total == 1 {
                        "1 remains".to_string()
                    } else {
                        format!("{} remain", r.total)
                    },
                    r.unreachable,
                    r.stuck,
                    r.walking
                )
            }
        }
        let tm = output::Timings::of(sim);
        eprintln!(
            "{:.1} steps/s; ms per step: splat {:.2}, fields {:.2}, potentials {:.2}, advection {:.2}, separation {:.2}",
            tm.steps_per_second,
            tm.stages_ms_per_step.splat,
            tm.stages_ms_per_step.fields,
            tm.stages_ms_per_step.potentials,
            tm.stages_ms_per_step.advection,
            tm.stages_ms_per_step.separation
        );
        if let Some(r) = sim.gpu_read_backs() {
            eprintln!(
                "GPU read-backs: {:.0} bytes per step over {} steps ({} bytes of velocities and solver \
                 state, {} bytes of fields and potentials asked for)",
                r.bytes_per_step(),
                r.steps,
                r.step_bytes,
                r.on_demand_bytes
            );
        }
        let q = &report.quality;
        eprintln!(
            "collisions: {:.2} pairs/step (max {}, mean depth {:.1} mm); in contact (within {:.0} % of \
             their distance): {:.2} pairs/step; longest jam {:.1} s",
            q.collisions_per_step,
            q.max_collisions,
            q.mean_collision_depth * 1000.0,
            q.contact_slack * 100.0,
            q.contacts_per_step,
            q.longest_jam
        );
    }
    // The deliverable, even with --quiet: the report page, then the folder of every file.
    println!(
        "report: {}",
        crowdfield::text::show_path(&args.out.join(crowdfield::run::planner::REPORT_PAGE))
    );
    println!("all files: {}", crowdfield::text::show_path(&args.out));
    Ok(ExitCode::SUCCESS)
}
