//! `crowdfield simulate`: run a crowd on a map and write the report, plots, and optionally
//! trajectories and frames.

use anyhow::Context;
use crowdfield::export::jupedsim::SqliteTrajectories;
use crowdfield::gpu::Backend;
use crowdfield::local::{LocalBackend, LocalMode};
use crowdfield::ownership::OwnedDir;
use crowdfield::params::{Model, SpeedLaw};
use crowdfield::run::draw::FrameField;
use crowdfield::run::output::{self, TrajectoryRecorder};
use crowdfield::scene::Scene;
use crowdfield::sim::{DEFAULT_MAX_TIME, SimConfig, Simulation};
use indicatif::{ProgressBar, ProgressStyle};
use std::path::{Path, PathBuf};
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
    #[arg(long, value_enum, num_args = 0..=1, require_equals = true, default_missing_value = "both",
          value_name = "FORMAT")]
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
    #[arg(long, value_enum, default_value_t = FrameFieldArg::Density)]
    pub frame_field: FrameFieldArg,
    /// Recompute the potentials every K steps (1 = every step, the reference).
    #[arg(long, value_name = "K", default_value_t = 1, allow_negative_numbers = true)]
    pub replan_every: usize,
    /// The model that moves the walkers: pedestrian (for evacuation figures) or
    /// continuum_crowds (the published model, for games and film). [default: the map's
    /// `model`; pedestrian for a map without `params`, continuum_crowds for one with them]
    #[arg(long, value_enum)]
    pub model: Option<ModelArg>,
    /// Speed–density law: the continuum-crowds linear blend or Weidmann's fundamental diagram.
    /// [default: the map's `params.speed_law`, linear when the map does not set it]
    #[arg(long, value_enum)]
    pub speed_law: Option<SpeedLawArg>,
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
    #[arg(long, value_enum, default_value_t = super::BackendArg::Cpu)]
    pub backend: super::BackendArg,
    /// Local layer between the field velocity and the walk. Boids act only on groups with a
    /// `boids` block in the map (the groups are named on stderr, with a warning when there are
    /// none).
    #[arg(long, value_enum, default_value_t = LocalArg::None)]
    pub local: LocalArg,
    /// Where the local layer runs: cpu-multi (rayon) or cpu-single (identical results), or gpu
    /// (the same passes as compute shaders, equal to f32 rounding). The one used is printed.
    #[arg(long, value_enum, default_value_t = LocalBackendArg::CpuMulti)]
    pub local_backend: LocalBackendArg,
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

/// `--trajectories` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum TrajectoryFormat {
    /// trajectories.sqlite (JuPedSim's SQLite layout, read by PedPy).
    Sqlite,
    /// trajectories.csv.
    Csv,
    /// Both files.
    Both,
    /// No trajectories.
    None,
}

impl TrajectoryFormat {
    /// Whether this writes trajectories.sqlite.
    fn sqlite(self) -> bool {
        matches!(self, Self::Sqlite | Self::Both)
    }

    /// Whether this writes trajectories.csv.
    fn csv(self) -> bool {
        matches!(self, Self::Csv | Self::Both)
    }
}

/// `--model` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ModelArg {
    /// The pedestrian model: the field's direction, a speed from the walkers around.
    Pedestrian,
    /// Continuum Crowds as published: the speed field's speed.
    #[value(name = "continuum_crowds")]
    ContinuumCrowds,
}

impl From<ModelArg> for Model {
    fn from(m: ModelArg) -> Model {
        match m {
            ModelArg::Pedestrian => Model::Pedestrian,
            ModelArg::ContinuumCrowds => Model::ContinuumCrowds,
        }
    }
}

/// `--local` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum LocalArg {
    /// No local layer: the walkers follow the field.
    None,
    /// Boids steering (separation, alignment, cohesion) added to the field's velocity, for the
    /// groups with a `boids` block; goal-less groups flock.
    Boids,
    /// ORCA collision avoidance (velocity obstacles) for every group.
    Orca,
    /// Boids steering, then ORCA.
    #[value(name = "boids+orca")]
    BoidsOrca,
}

impl LocalArg {
    /// The local layer this value selects.
    pub(crate) fn mode(self) -> LocalMode {
        match self {
            LocalArg::None => LocalMode::None,
            LocalArg::Boids => LocalMode::Boids,
            LocalArg::Orca => LocalMode::Orca,
            LocalArg::BoidsOrca => LocalMode::BoidsOrca,
        }
    }
}

/// The `--local` spelling of a local layer, for messages.
pub(crate) fn local_name(mode: LocalMode) -> &'static str {
    mode.name()
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
/// when no group has boids (then [`no_boids_warning`] says so).
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

/// The warning for a boids mode of `--local` that [`LocalMode::effective_for`] runs as another mode.
fn no_boids_warning(scene: &Scene, map: &Path, asked: LocalMode) -> Option<String> {
    let runs = asked.effective_for(scene);
    (runs != asked).then(|| {
        format!(
            "local layer: {}, but no group of {} has a `boids` block: boids would steer no one, \
             so the run uses --local {} (add a `boids` block to a group, see --local in the \
             README)",
            local_name(asked),
            map.display(),
            local_name(runs)
        )
    })
}

/// `--frame-field` values: the command's spelling of [`FrameField`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum FrameFieldArg {
    /// Density, persons/m² (colour bar from 0 to the model's maximum density).
    Density,
    /// The first group's potential, seconds.
    Potential,
}

impl From<FrameFieldArg> for FrameField {
    fn from(arg: FrameFieldArg) -> Self {
        match arg {
            FrameFieldArg::Density => FrameField::Density,
            FrameFieldArg::Potential => FrameField::Potential,
        }
    }
}

/// `--local-backend` values: the CLI's spelling of [`LocalBackend`].
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum LocalBackendArg {
    /// One thread.
    CpuSingle,
    /// All cores (rayon).
    CpuMulti,
    /// wgpu compute passes (an error when no GPU adapter opens).
    Gpu,
}

impl From<LocalBackendArg> for LocalBackend {
    fn from(arg: LocalBackendArg) -> Self {
        match arg {
            LocalBackendArg::CpuSingle => LocalBackend::CpuSingle,
            LocalBackendArg::CpuMulti => LocalBackend::CpuMulti,
            LocalBackendArg::Gpu => LocalBackend::Gpu,
        }
    }
}

/// `--speed-law` values.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum SpeedLawArg {
    /// Linear blend of terrain and flow speed between rho_min and rho_max (docs/SPEC.md §3).
    Linear,
    /// Weidmann: free speed 1.34 m/s, jam density 5.4 /m², gamma 1.913.
    Weidmann,
}

/// Runs `crowdfield simulate`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if args.frames == Some(0) {
        anyhow::bail!("--frames 0: expected a number of steps of at least 1");
    }
    crowdfield::plan::check_order(Backend::from(args.backend), super::order(args.order))?;
    let mut scene = crowdfield::sim::load_map(&args.map, &args.read.options())?;
    let model_source = crowdfield::sim::report::model_source(
        &crowdfield::map::MapFile::from_path(&args.map)?,
        args.model.map(Model::from),
    );
    if let Some(model) = args.model {
        scene.params = scene.params.clone().with_model(model.into());
    }
    if let Some(law) = args.speed_law {
        scene.params.speed_law = match law {
            SpeedLawArg::Linear => SpeedLaw::Linear,
            SpeedLawArg::Weidmann => SpeedLaw::Weidmann,
        };
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
        full_potentials: args.frames.is_some() && args.frame_field == FrameFieldArg::Potential,
    };
    let scene_name = scene.name.clone();
    let asked = args.local.mode();
    let local = asked.effective_for(&scene);
    let mut sim = Simulation::builder(scene)
        .config(config)
        .backend(Backend::from(args.backend))
        .local(local)
        .local_backend(args.local_backend.into())
        .model_source(model_source)
        .build()
        .map_err(|e| e.relabel(&scene_name, &args.map.display().to_string()))?;
    let every = output::trajectory_every_steps(&args.trajectory_every, sim.dt(), args.max_time)?;
    // A mistyped or read-only --out, or one holding files `simulate` did not write, fails
    // now, not after the run. A killed run's frames folder goes first (it is not a file
    // of the folder's manifest).
    let frames_path = args.out.join("frames");
    crowdfield::ownership::remove_stale_staging(&frames_path)?;
    let mut owned = OwnedDir::open_replacing(&args.out, SIMULATE_WRITER, args.force)?;
    let solver_note = super::flag_text(sim.solver_description());
    let local_note = sim
        .local_description()
        .map_or_else(String::new, |d| format!(" on {d}"));
    if let Some(w) = no_boids_warning(sim.scene(), &args.map, asked) {
        // Said even with --quiet, as the other warnings.
        eprintln!("warning: {w}");
    }
    if !args.quiet {
        let size = sim.memory_size();
        eprintln!(
            "memory: about {} for a run of {}",
            crowdfield::memory::show_bytes(size.simulation_bytes()),
            size.describe()
        );
        eprintln!(
            "model: {}; potentials: {solver_note}; local layer: {}{local_note}{}",
            sim.scene().params.model.name(),
            local_name(local),
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
    let total: usize = sim.spawned().iter().sum();
    let bar = if args.quiet {
        ProgressBar::hidden()
    } else {
        ProgressBar::new(total as u64)
    };
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} agents out  {msg}  [{elapsed_precise}]")
            .expect("static progress template"),
    );
    let format = args.trajectories.unwrap_or(TrajectoryFormat::Sqlite);
    let mut traj = match format.csv() {
        true => Some(TrajectoryRecorder::create(&owned.claim("trajectories.csv")?)?),
        false => None,
    };
    if let Some(t) = traj.as_mut() {
        t.record(&sim)?;
    }
    let mut db = match format.sqlite() {
        true => Some(SqliteTrajectories::create(
            &owned.claim("trajectories.sqlite")?,
            1.0 / (every as f64 * sim.dt()),
            &sim.scene().grid,
            sim.scene().obstacle.view(),
        )?),
        false => None,
    };
    if let Some(d) = db.as_mut() {
        d.record(&sim)?;
    }
    // Frames go into a folder beside `frames` and replace it only once the run has
    // succeeded: a killed run or a full disk leaves the earlier run's frames whole.
    let staged = args
        .frames
        .map(|_| crowdfield::ownership::StagedDir::create(&frames_path))
        .transpose()?;
    let mut frame_index = 0usize;
    sim.run(|s| {
        bar.set_position(s.arrivals().len() as u64);
        bar.set_message(format!("t = {:.1} s", s.time()));
        if s.steps().is_multiple_of(every) {
            if let Some(t) = traj.as_mut() {
                t.record(s)?;
            }
            if let Some(d) = db.as_mut() {
                d.record(s)?;
            }
        }
        if let Some(every) = args.frames
            && (s.steps() - 1).is_multiple_of(every)
        {
            let frames = staged.as_ref().expect("staged when --frames is given");
            output::write_frame_to(frames.path(), frame_index, s, args.frame_field.into())?;
            frame_index += 1;
        }
        Ok(())
    })?;
    bar.finish_and_clear();
    owned.claim_all(
        output::RUN_FILES
            .iter()
            .chain(crowdfield::run::planner::PLANNER_FILES.iter())
            .chain(std::iter::once(&crowdfield::run::planner::REPORT_PAGE))
            .copied(),
    )?;
    let report =
        output::write_run(&args.out, &sim).with_context(|| format!("writing {}", args.out.display()))?;
    if let Some(t) = traj {
        t.finish()?;
    }
    match staged {
        Some(frames) => {
            let names: Vec<String> = (0..frame_index).map(output::frame_file).collect();
            owned.claim_all(names.iter().map(String::as_str))?;
            frames.commit(|name| owned.lists(&format!("frames/{name}")))?;
        }
        None if crowdfield::ownership::is_symlink(&frames_path) => eprintln!(
            "warning: {} is a symbolic link: its frames (of another run) are left as they are",
            frames_path.display()
        ),
        None => {}
    }
    if let Some(d) = db {
        d.finish()?;
    }
    let map_bytes = std::fs::read(&args.map).with_context(|| format!("reading {}", args.map.display()))?;
    let mut parameters = vec![
        ("potentials".to_string(), solver_note.clone()),
        ("local layer".to_string(), local_name(local).to_string()),
    ];
    if format != TrajectoryFormat::None {
        parameters.push((
            "trajectories".to_string(),
            format!("{format:?}, every {every} step(s)").to_lowercase(),
        ));
    }
    crowdfield::run::planner::write_report_page(
        &args.out,
        &report,
        &sim.scene().grid,
        &args.map.display().to_string(),
        &crowdfield::export::html::sha256_hex(&map_bytes),
        parameters,
    )?;
    // An earlier run's files this run did not write (trajectories of another format, frames)
    // would pass for this run's: they go now that the run has succeeded.
    owned.finish()?;
    if let Some(w) = output::incomplete_warning(&report) {
        // Said even with --quiet: a run cut short is not an evacuation time.
        eprintln!("warning: {w}");
    }
    for w in report.warnings.iter().filter(|w| !map_warnings.contains(w)) {
        eprintln!("warning: {w}");
    }
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
        let tm = output::Timings::of(&sim);
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
        if let Some(why) = sim.gpu_fallback() {
            eprintln!("note: the GPU solver failed mid-run ({why}); the run finished on the CPU");
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
