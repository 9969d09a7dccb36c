//! Writing a run's results: `report.json`, `timings.json`, `arrivals.png`, `peak_density.png`,
//! `trajectories.csv` and `frames/frame_NNNNN.png`. Every file goes through [`crate::io`]
//! (temporary file, then rename), so an interrupted run never leaves a half-written file.

use super::draw::{self, FrameField};
use super::{Simulation, StageTimes};
use crate::error::{Error, Result};
use crate::export::save_png;
use crate::io::{write_atomic, write_bytes_atomic};
use serde::Serialize;
use std::fmt::Write as _;
use std::path::Path;

/// Wall-clock figures of a run (kept out of `report.json`, which must be reproducible).
#[derive(Clone, Debug, Serialize)]
pub struct Timings {
    /// Steps run.
    pub steps: usize,
    /// Agents at the start.
    pub agents: usize,
    /// Grid `[cols, rows]`.
    pub grid: [usize; 2],
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
            grid: [sim.scene.grid.cols, sim.scene.grid.rows],
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

/// Writes the end-of-run outputs into `dir`: `report.json`, `timings.json`, `arrivals.png`,
/// `peak_density.png`.
pub fn write_run(dir: &Path, sim: &Simulation) -> Result<super::Report> {
    let report = sim.report();
    write_json(&dir.join("report.json"), &report)?;
    write_json(&dir.join("timings.json"), &Timings::of(sim))?;
    let colors: Vec<[u8; 3]> = sim.scene.groups.iter().map(|g| g.color).collect();
    save_png(&dir.join("arrivals.png"), &draw::arrivals_plot(&report, &colors))?;
    let peak = (report.total.peak_density.x, report.total.peak_density.y);
    save_png(
        &dir.join("peak_density.png"),
        &draw::peak_density_map(&sim.scene, &sim.density_log.peak_map, peak),
    )?;
    Ok(report)
}

/// Trajectories gathered in memory as CSV (`t,id,group,x,y,vx,vy`), written once at the end.
#[derive(Clone, Debug)]
pub struct TrajectoryRecorder {
    csv: String,
}

impl Default for TrajectoryRecorder {
    fn default() -> Self {
        Self {
            csv: "t,id,group,x,y,vx,vy\n".to_string(),
        }
    }
}

impl TrajectoryRecorder {
    /// Appends one row per agent still walking.
    pub fn record(&mut self, sim: &Simulation) {
        let a = &sim.agents;
        for i in 0..a.len() {
            let _ = writeln!(
                self.csv,
                "{:.3},{},{},{:.4},{:.4},{:.4},{:.4}",
                sim.time, a.id[i], a.group[i], a.x[i], a.y[i], a.vx[i], a.vy[i]
            );
        }
    }

    /// Writes the CSV atomically.
    pub fn write(&self, path: &Path) -> Result<()> {
        write_atomic(path, |w| w.write_all(self.csv.as_bytes()))
    }
}

/// Writes frame number `index` of `sim` as `dir/frames/frame_NNNNN.png`.
pub fn write_frame(dir: &Path, index: usize, sim: &Simulation, field: FrameField) -> Result<()> {
    save_png(
        &dir.join("frames").join(format!("frame_{index:05}.png")),
        &draw::frame(sim, field),
    )
}
