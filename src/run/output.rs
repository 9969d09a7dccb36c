//! Writing a run's results: `report.json`, `timings.json`, `arrivals.png`, `peak_density.png`,
//! `trajectories.csv`, `trajectories.sqlite` and `frames/frame_NNNNN.png`, the planner's maps
//! and the report page. [`RunWriter`] writes them all for `simulate` and `batch` as a
//! [`crate::run::driver::RunDriver`] steps the run. Every file goes through [`crate::io`]
//! (temporary file, then rename), so an interrupted run never leaves a half-written file.

use super::draw::{self, FrameField};
use super::driver::{RunDriver, RunObserver};
use crate::error::{Error, Result};
#[cfg(feature = "sqlite")]
use crate::export::jupedsim::SqliteTrajectories;
use crate::export::save_png;
use crate::grid::Grid;
use crate::io::{AtomicFile, write_bytes_atomic};
use crate::names::Named;
use crate::ownership::{OwnedDir, StagedDir};
use crate::sim::{GpuReadBacks, Report, Simulation, StageTimes};
use serde::Serialize;
use std::io::Write as _;
use std::path::Path;

/// Wall-clock figures of a run (kept out of `report.json`, which must be reproducible).
#[derive(Clone, Debug, Serialize)]
pub struct Timings {
    /// Steps run.
    pub steps: usize,
    /// Agents at the start.
    pub agents: usize,
    /// The grid, as in `solve`'s `summary.json` and a batch's `solve.json`:
    /// `{"cols": .., "rows": .., "cell_size": ..}` (cell size in metres).
    pub grid: Grid,
    /// Seconds spent in the steps (sum of the stages).
    pub step_seconds: f64,
    /// Steps per second of wall time.
    pub steps_per_second: f64,
    /// Seconds per stage, summed over the steps.
    pub stages: StageTimes,
    /// Milliseconds per step, per stage.
    pub stages_ms_per_step: StageTimes,
    /// Rayon threads available.
    pub threads: usize,
    /// What the host read back of the continuum step on the GPU (`null` on the CPU).
    pub gpu_read_backs: Option<GpuReadBacks>,
    /// Bytes read back from the GPU per step, the steps' own and those asked for together
    /// (`null` on the CPU).
    pub gpu_read_back_bytes_per_step: Option<f64>,
}

impl Timings {
    /// The timings of `sim` so far.
    pub fn of(sim: &Simulation) -> Self {
        let t = sim.times;
        let per = |v: f64| {
            if sim.steps > 0 {
                1000.0 * v / sim.steps as f64
            } else {
                0.0
            }
        };
        Timings {
            steps: sim.steps,
            agents: sim.spawned.iter().sum(),
            grid: sim.scene.grid,
            step_seconds: t.total(),
            steps_per_second: if t.total() > 0.0 {
                sim.steps as f64 / t.total()
            } else {
                0.0
            },
            stages: t,
            stages_ms_per_step: StageTimes {
                splat: per(t.splat),
                fields: per(t.fields),
                potentials: per(t.potentials),
                advection: per(t.advection),
                separation: per(t.separation),
            },
            threads: rayon::current_num_threads(),
            gpu_read_backs: sim.gpu_read_backs(),
            gpu_read_back_bytes_per_step: sim.gpu_read_backs().map(|r| r.bytes_per_step()),
        }
    }
}

/// Serialises `value` as pretty JSON with a final newline and writes it atomically.
pub fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<()> {
    let mut text = serde_json::to_string_pretty(value)
        .map_err(|e| Error::invalid(path.display().to_string(), "json", e.to_string()))?;
    text.push('\n');
    write_bytes_atomic(path, text.as_bytes())
}

/// The files [`write_run`] writes (a batch records them in its manifest before they exist).
pub const RUN_FILES: [&str; 4] = ["report.json", "timings.json", "arrivals.png", "peak_density.png"];

/// Writes the end-of-run outputs into `dir`: `report.json`, `timings.json`, `arrivals.png`,
/// `peak_density.png`, and the planner's maps and plots
/// ([`crate::run::planner::write_planner_outputs`]).
pub fn write_run(dir: &Path, sim: &Simulation) -> Result<crate::sim::Report> {
    let report = sim.report();
    write_json(&dir.join("report.json"), &report)?;
    write_json(&dir.join("timings.json"), &Timings::of(sim))?;
    let colors: Vec<[u8; 3]> = sim.scene.groups.iter().map(|g| g.color).collect();
    save_png(&dir.join("arrivals.png"), &draw::arrivals_plot(&report, &colors))?;
    let peak = (report.total.peak_density.x, report.total.peak_density.y);
    save_png(
        &dir.join("peak_density.png"),
        &draw::peak_density_map(&sim.scene, &sim.logs.density.peak_map, peak),
    )?;
    crate::run::planner::write_planner_outputs(dir, sim)?;
    Ok(report)
}

/// The steps between two trajectory samples of a run of time step `dt` seconds and time limit
/// `max_time` seconds, from `every`: a whole number of steps (`"5"`) or of seconds of simulated
/// time (`"0.5s"`, rounded to a whole number of steps, at least one). The one rule of
/// `simulate --trajectory-every` and Python's `trajectory_every`.
///
/// # Errors
/// [`Error::Invalid`] on [`crate::error::OPTIONS`] at `trajectory_every`, naming the value,
/// for text that is neither; 0 steps; seconds that are not a positive finite number; and an
/// interval longer than the whole run (more steps than `max_time` holds, `SimConfig.max_time`
/// named), which would record the start alone.
pub fn trajectory_every_steps(every: &str, dt: f64, max_time: f64) -> Result<usize> {
    let bad = |why: String| {
        Error::invalid(
            crate::error::OPTIONS,
            "trajectory_every",
            format!("{}: {why}", crate::text::quoted(every)),
        )
    };
    let form = "expected a whole number of steps (`5`) or of seconds (`0.5s`)";
    let text = every.trim();
    let steps = match text.strip_suffix('s') {
        Some(seconds) => {
            let v: f64 = seconds.trim().parse().map_err(|_| bad(form.to_string()))?;
            if !(v.is_finite() && v > 0.0) {
                return Err(bad("expected a positive number of seconds".to_string()));
            }
            (v / dt).round().max(1.0)
        }
        None => {
            let n: u64 = text.parse().map_err(|_| bad(form.to_string()))?;
            if n == 0 {
                return Err(bad("expected at least 1 step".to_string()));
            }
            n as f64
        }
    };
    // As many steps as the run may take (see `SimConfig.max_time`): a longer interval samples
    // only the start.
    let run_steps = (max_time / dt).ceil().max(1.0);
    if steps > run_steps {
        let count = |n: f64| {
            if n < 1e15 {
                format!("{}", n as u64)
            } else {
                crate::error::num(n)
            }
        };
        return Err(bad(format!(
            "{} steps of {} s: expected at most {} steps, the whole run (SimConfig.max_time {} s)",
            count(steps),
            crate::error::num(dt),
            count(run_steps),
            crate::error::num(max_time)
        )));
    }
    Ok(steps as usize)
}

/// Trajectories as CSV (`t,id,group,x,y,vx,vy`), streamed to a temporary file step by step and
/// put in place at the end.
#[derive(Debug)]
pub struct TrajectoryRecorder {
    file: AtomicFile,
}

impl TrajectoryRecorder {
    /// Starts `path` (written beside it as a temporary file, renamed into place by
    /// [`TrajectoryRecorder::finish`]) with the header row.
    pub fn create(path: &Path) -> Result<Self> {
        let mut file = AtomicFile::create(path)?;
        writeln!(file.writer(), "t,id,group,x,y,vx,vy").map_err(|e| file.error(e))?;
        Ok(Self { file })
    }

    /// Appends one row per agent still walking (streamed to the file, not kept in memory: a
    /// long run of a large crowd writes gigabytes).
    pub fn record(&mut self, sim: &Simulation) -> Result<()> {
        let a = &sim.agents;
        let w = self.file.writer();
        let result = (0..a.len()).try_for_each(|i| {
            writeln!(
                w,
                "{:.3},{},{},{:.4},{:.4},{:.4},{:.4}",
                sim.time, a.id[i], a.group[i], a.x[i], a.y[i], a.vx[i], a.vy[i]
            )
        });
        result.map_err(|e| self.file.error(e))
    }

    /// Puts the file in place.
    pub fn finish(self) -> Result<()> {
        self.file.commit()
    }
}

/// Which trajectory files a run writes (`simulate --trajectories`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TrajectoryFormat {
    /// `trajectories.sqlite` (JuPedSim's SQLite layout, read by PedPy).
    #[default]
    Sqlite,
    /// `trajectories.csv`.
    Csv,
    /// Both files.
    Both,
    /// No trajectories.
    None,
}

impl Named for TrajectoryFormat {
    const WHAT: &'static str = "TrajectoryFormat";
    const ALL: &'static [Self] = &[Self::Sqlite, Self::Csv, Self::Both, Self::None];

    /// `sqlite`, `csv`, `both` or `none`: the command's `--trajectories`.
    fn name(self) -> &'static str {
        match self {
            Self::Sqlite => "sqlite",
            Self::Csv => "csv",
            Self::Both => "both",
            Self::None => "none",
        }
    }
}

impl TrajectoryFormat {
    /// Whether this writes `trajectories.sqlite`.
    pub fn sqlite(self) -> bool {
        matches!(self, Self::Sqlite | Self::Both)
    }

    /// Whether this writes `trajectories.csv`.
    pub fn csv(self) -> bool {
        matches!(self, Self::Csv | Self::Both)
    }
}

/// Frames of a run: `frames/frame_NNNNN.png` after step 1 and then every `every` steps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameOptions {
    /// Steps between two frames (at least 1).
    pub every: usize,
    /// What the frames show under the agents.
    pub field: FrameField,
}

/// What a run writes besides its report and plots.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RunFiles {
    /// The trajectory files, sampled as the [`RunDriver`] samples.
    pub trajectories: TrajectoryFormat,
    /// The frames, when asked for.
    pub frames: Option<FrameOptions>,
}

impl RunFiles {
    /// The files `simulate` writes with only a report: no trajectories, no frames (`batch`).
    pub const REPORT_ONLY: RunFiles = RunFiles {
        trajectories: TrajectoryFormat::None,
        frames: None,
    };
}

/// Writes a run's folder (an [`OwnedDir`]) as a [`RunDriver`] steps the run: the trajectory
/// files at each sample and the frames (it is the driver's [`RunObserver`]), then at the end
/// ([`RunWriter::finish`]) [`write_run`]'s files, the report page, and the frames in place of
/// an earlier run's. Every file is claimed in the folder's manifest before it is written.
pub struct RunWriter<'o> {
    owned: &'o mut OwnedDir,
    format: TrajectoryFormat,
    sample_every: usize,
    csv: Option<TrajectoryRecorder>,
    #[cfg(feature = "sqlite")]
    sqlite: Option<SqliteTrajectories>,
    /// The frames, written into a folder beside `frames` that replaces it at the end.
    frames: Option<(FrameOptions, StagedDir)>,
    /// Frames written so far.
    frame_count: usize,
}

/// What [`RunWriter::finish`] leaves to the front end.
#[derive(Debug)]
pub struct WrittenRun {
    /// The run's report, as written to `report.json`.
    pub report: Report,
    /// Warnings about the folder: a `frames` that is a symbolic link, left as it is.
    pub warnings: Vec<String>,
}

/// Opens `out` as a run's folder for `writer` ([`OwnedDir::open_replacing`]), after removing a
/// killed run's staged frames beside `out/frames` (not files of the folder's manifest).
///
/// # Errors
/// As [`OwnedDir::open_replacing`]: a folder that cannot be made or holds files `writer` did not
/// write (unless `force`).
pub fn open_run_folder(out: &Path, writer: &str, force: bool) -> Result<OwnedDir> {
    crate::ownership::remove_stale_staging(&out.join("frames"))?;
    OwnedDir::open_replacing(out, writer, force)
}

impl<'o> RunWriter<'o> {
    /// Starts the files of `files` in `owned` for the run of `driver` (the trajectory files,
    /// at the driver's sampling interval, and the frames folder beside `frames`); call
    /// [`RunDriver::start`] with it next, for the start's sample.
    ///
    /// # Errors
    /// [`Error::Io`] when a file cannot be created; the manifest's errors when a name cannot be
    /// claimed.
    pub fn open(owned: &'o mut OwnedDir, driver: &RunDriver, files: &RunFiles) -> Result<Self> {
        let every = driver.sample_every().max(1);
        let csv = match files.trajectories.csv() {
            true => Some(TrajectoryRecorder::create(&owned.claim("trajectories.csv")?)?),
            false => None,
        };
        #[cfg(feature = "sqlite")]
        let sqlite = match files.trajectories.sqlite() {
            true => Some(SqliteTrajectories::create(
                &owned.claim("trajectories.sqlite")?,
                1.0 / (every as f64 * driver.simulation().dt()),
                &crate::export::jupedsim::scene_walkable_wkt(driver.simulation().scene()),
            )?),
            false => None,
        };
        #[cfg(not(feature = "sqlite"))]
        if files.trajectories.sqlite() {
            return Err(Error::invalid(
                crate::error::OPTIONS,
                TrajectoryFormat::WHAT,
                format!(
                    "{:?}: this build writes no trajectories.sqlite (the `sqlite` feature is off)",
                    files.trajectories.name()
                ),
            ));
        }
        // Frames go into a folder beside `frames` and replace it only once the run has
        // succeeded: a killed run or a full disk leaves the earlier run's frames whole.
        let frames = match files.frames {
            Some(options) => Some((options, StagedDir::create(&owned.path().join("frames"))?)),
            None => None,
        };
        Ok(Self {
            owned,
            format: files.trajectories,
            sample_every: every,
            csv,
            #[cfg(feature = "sqlite")]
            sqlite,
            frames,
            frame_count: 0,
        })
    }

    /// Writes the end of the run of `sim` (finished): [`RUN_FILES`], the planner's files and
    /// the report page (naming `map`, with its SHA-256, and `parameters` then the trajectory
    /// files among the run's settings), puts the trajectory files and the frames in place.
    /// The caller finishes the folder ([`OwnedDir::finish`]).
    ///
    /// # Errors
    /// [`Error::Io`] when a file cannot be written or `map` read.
    pub fn finish(
        self,
        sim: &Simulation,
        map: &Path,
        mut parameters: Vec<(String, String)>,
    ) -> Result<WrittenRun> {
        let Self {
            owned,
            format,
            sample_every,
            csv,
            #[cfg(feature = "sqlite")]
            sqlite,
            frames,
            frame_count,
        } = self;
        owned.claim_all(
            RUN_FILES
                .iter()
                .chain(super::planner::PLANNER_FILES.iter())
                .chain(std::iter::once(&super::planner::REPORT_PAGE))
                .copied(),
        )?;
        let report = write_run(owned.path(), sim)?;
        if let Some(csv) = csv {
            csv.finish()?;
        }
        let mut warnings = Vec::new();
        let frames_path = owned.path().join("frames");
        match frames {
            Some((_, staged)) => {
                let names: Vec<String> = (0..frame_count).map(frame_file).collect();
                owned.claim_all(names.iter().map(String::as_str))?;
                staged.commit(|name| owned.lists(&format!("frames/{name}")))?;
            }
            None if crate::ownership::is_symlink(&frames_path) => warnings.push(format!(
                "{} is a symbolic link: its frames (of another run) are left as they are",
                frames_path.display()
            )),
            None => {}
        }
        #[cfg(feature = "sqlite")]
        if let Some(sqlite) = sqlite {
            sqlite.finish()?;
        }
        if format != TrajectoryFormat::None {
            parameters.push((
                "trajectories".to_string(),
                format!("{}, every {sample_every} step(s)", format.name()),
            ));
        }
        super::planner::write_report_page(
            owned.path(),
            &report,
            &sim.scene().grid,
            &map.display().to_string(),
            &crate::export::html::sha256_hex(&crate::io::read_input_file(map)?),
            parameters,
        )?;
        Ok(WrittenRun { report, warnings })
    }
}

impl RunObserver for RunWriter<'_> {
    /// Appends the sample to the trajectory files.
    fn sample(&mut self, sim: &Simulation, _index: u64) -> Result<()> {
        if let Some(csv) = self.csv.as_mut() {
            csv.record(sim)?;
        }
        #[cfg(feature = "sqlite")]
        if let Some(sqlite) = self.sqlite.as_mut() {
            sqlite.record(sim)?;
        }
        Ok(())
    }

    /// Writes a frame after step 1 and then every [`FrameOptions::every`] steps.
    fn stepped(&mut self, sim: &Simulation) -> Result<()> {
        if let Some((options, staged)) = &self.frames
            && (sim.steps() - 1).is_multiple_of(options.every)
        {
            write_frame_to(staged.path(), self.frame_count, sim, options.field)?;
            self.frame_count += 1;
        }
        Ok(())
    }
}

/// The warning for a run that stopped with people inside (other than groups without goals),
/// as `simulate` prints it and a batch keeps it in its summary; `None` when everyone with a
/// goal got out.
pub fn incomplete_warning(report: &crate::sim::Report) -> Option<String> {
    let inside = report.total.remaining.total - report.total.remaining.no_goal;
    (inside > 0).then(|| {
        format!(
            "{inside} agent(s) still inside when the run stopped at {:.1} s: the evacuation did not \
             complete (see `remaining` in report.json; raise --max-time if they were still walking)",
            report.end_time
        )
    })
}

/// The name of frame number `index` in a run's folder: `frames/frame_NNNNN.png`.
pub fn frame_file(index: usize) -> String {
    format!("frames/frame_{index:05}.png")
}

/// Writes frame number `index` of `sim` as `dir/frames/frame_NNNNN.png`.
pub fn write_frame(dir: &Path, index: usize, sim: &Simulation, field: FrameField) -> Result<()> {
    write_frame_to(&dir.join("frames"), index, sim, field)
}

/// Writes frame number `index` of `sim` as `frames/frame_NNNNN.png` (`frames` being the
/// folder itself: `simulate` writes into a [`crate::ownership::StagedDir`]).
pub fn write_frame_to(frames: &Path, index: usize, sim: &Simulation, field: FrameField) -> Result<()> {
    let file = frame_file(index);
    let name = file
        .strip_prefix("frames/")
        .expect("frame_file names a file in frames/");
    save_png(&frames.join(name), &draw::frame(sim, field))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sampling_interval_is_whole_steps_within_the_run() {
        assert_eq!(trajectory_every_steps("5", 0.1, 60.0).unwrap(), 5);
        assert_eq!(trajectory_every_steps(" 0.5s ", 0.1, 60.0).unwrap(), 5);
        assert_eq!(
            trajectory_every_steps("0.01s", 0.1, 60.0).unwrap(),
            1,
            "at least one step"
        );
        assert_eq!(
            trajectory_every_steps("600", 0.1, 60.0).unwrap(),
            600,
            "the whole run"
        );
        let e = |every: &str| trajectory_every_steps(every, 0.1, 60.0).unwrap_err().to_string();
        assert!(
            e("0").starts_with(r#"trajectory_every: "0": expected at least 1 step"#),
            "{}",
            e("0")
        );
        for bad in ["0s", "-1s", "NaNs", "infs", "-infs"] {
            assert!(
                e(bad).contains("expected a positive number of seconds"),
                "{}",
                e(bad)
            );
        }
        for bad in ["-1", "half", "1.5", "", "99999999999999999999999"] {
            assert!(e(bad).contains("expected a whole number of steps"), "{}", e(bad));
        }
        let huge = e("1e300s");
        assert!(
            huge.starts_with(
                r#"trajectory_every: "1e300s": 1e301 steps of 0.1 s: expected at most 600 steps"#
            ) && huge.contains("SimConfig.max_time 60.0 s"),
            "{huge}"
        );
        assert!(e("601").contains("expected at most 600 steps"), "{}", e("601"));
    }
}
