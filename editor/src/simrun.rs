//! The simulation of the Run panel, stepped on its own thread so that a step's potential solves
//! never hold up the interface.
//!
//! The app sends [`SimControl`] messages; the thread owns the run (the library's
//! [`RunDriver`], as every front end's), steps it while playing (paced so simulated time runs
//! `speed` times as fast as wall time, or as fast as it can when steps take longer) and sends a
//! [`SimFrame`] after every step: the agents to draw, the time, the walkers evacuated per exit,
//! the collision and jam figures and the run's warnings (a boids layer with nobody to steer,
//! agents still inside at the time limit). The local layer chosen in the Run panel (boids, ORCA)
//! is installed when a run starts.

use crate::panels::run::RunInfo;
use crowdfield::agents::Agents;
use crowdfield::local::{LocalBackend, LocalMode};
use crowdfield::run::driver::{RunDriver, local_layer_for};
use crowdfield::scene::Scene;
use crowdfield::sim::Simulation;
use ndarray::Array2;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::time::{Duration, Instant};

/// While paused, the thread checks for messages this often.
const IDLE_POLL: Duration = Duration::from_millis(50);
/// Frames are sent at most this often while playing (about 60 per second): more would only
/// queue up behind the interface.
const FRAME_INTERVAL: Duration = Duration::from_millis(16);

/// What the app asks the simulation thread.
pub enum SimControl {
    /// Start a new run of this scene (paused) with this local layer.
    Start(Box<Scene>, LocalMode),
    /// Play or pause.
    Play(bool),
    /// One step (pauses).
    Step,
    /// Simulated seconds per wall second.
    Speed(f32),
    /// Drop the run.
    Reset,
    /// Open or close every exit of this name in the run ([`Simulation::set_exit_open`]).
    SetExit(String, bool),
    /// Put a moving obstacle somewhere, standing still ([`Simulation::move_obstacle`]).
    MoveObstacle(u32, [f64; 2]),
}

/// What a run has recorded place by place so far: the planner's level-of-service and
/// clear-time (RSET) maps, shown as the map's colouring after (or during) a run.
#[derive(Clone, Debug, PartialEq)]
pub struct PlaceMaps {
    /// Distinct for every frame's maps: the layer image is recomposed when it changes.
    pub stamp: u64,
    /// Worst Fruin level of service reached in each cell (index into
    /// [`crowdfield::sim::levels::LEVELS`]; 0, level A, where nobody stood).
    pub worst_level: Array2<u8>,
    /// Time each cell is clear, seconds: NaN where nobody stood, `+inf` where someone still
    /// stands ([`crowdfield::sim::levels::PlaceLog::clear_time`]).
    pub clear_time: Array2<f64>,
}

/// Source of [`PlaceMaps::stamp`].
static NEXT_PLACE_STAMP: AtomicU64 = AtomicU64::new(1);

impl PlaceMaps {
    /// The maps of `sim` so far.
    pub fn of(sim: &Simulation) -> Self {
        let places = sim.places();
        Self {
            stamp: NEXT_PLACE_STAMP.fetch_add(1, Ordering::Relaxed),
            worst_level: places.worst_level.clone(),
            clear_time: places.clear_time(),
        }
    }
}

/// The state of the run after a step.
#[derive(Clone, Debug, Default)]
pub struct SimFrame {
    /// The walking agents.
    pub agents: Agents,
    /// Density of the last step, persons/m² (for the density layer).
    pub density: Option<Array2<f32>>,
    /// Level of service and clear times so far (for the run layers).
    pub places: Option<Arc<PlaceMaps>>,
    /// The moving obstacles: each one's handle and outline (world metres, a closed polygon).
    pub obstacles: Vec<(u32, Vec<[f64; 2]>)>,
    /// What the Run panel shows.
    pub info: RunInfo,
    /// True when everyone arrived or the time limit passed.
    pub finished: bool,
}

/// The app's handle on the simulation thread.
///
/// Every run has a number, counted up at each Start and Reset; the thread tags its frames with
/// the number of the run they come from, and frames of an earlier run are dropped on arrival
/// (after a Reset, frames already on their way would otherwise bring the old run back on screen).
pub struct SimRunner {
    control: Sender<(SimControl, u64)>,
    frames: Receiver<(u64, SimFrame)>,
    /// The current run's number.
    run: u64,
    /// The newest frame received (`None`: no run).
    pub latest: Option<SimFrame>,
}

impl SimRunner {
    /// Starts the thread; `repaint` is woken on every frame.
    pub fn start(repaint: Option<egui::Context>) -> Self {
        let (ctl_tx, ctl_rx) = channel();
        let (frame_tx, frame_rx) = channel();
        std::thread::Builder::new()
            .name("crowdfield-sim".into())
            .spawn(move || worker(ctl_rx, frame_tx, repaint))
            .expect("spawning the simulation thread");
        Self {
            control: ctl_tx,
            frames: frame_rx,
            run: 0,
            latest: None,
        }
    }

    /// Sends a control message (ignored if the thread has stopped). Start and Reset begin a
    /// new run number.
    pub fn send(&mut self, c: SimControl) {
        match c {
            SimControl::Start(..) => self.run += 1,
            SimControl::Reset => {
                self.run += 1;
                self.latest = None;
            }
            _ => {}
        }
        let _ = self.control.send((c, self.run));
    }

    /// Keeps `frame` when it comes from the current run; true when kept.
    fn take(&mut self, (run, frame): (u64, SimFrame)) -> bool {
        let current = run == self.run;
        if current {
            self.latest = Some(frame);
        }
        current
    }

    /// Takes the frames of the current run that arrived; true when there was one.
    pub fn poll(&mut self) -> bool {
        let mut got = false;
        while let Ok(f) = self.frames.try_recv() {
            got |= self.take(f);
        }
        got
    }

    /// Waits up to `timeout` for the next frame of the current run (tests only).
    pub fn wait_frame(&mut self, timeout: Duration) -> bool {
        let end = Instant::now() + timeout;
        loop {
            let left = end.saturating_duration_since(Instant::now());
            match self.frames.recv_timeout(left) {
                Ok(f) => {
                    if self.take(f) {
                        self.poll();
                        return true;
                    }
                }
                Err(_) => return false,
            }
        }
    }
}

/// The frame of `sim` run with the local layer `local`, showing `warnings` (the run's so far).
fn frame(sim: &Simulation, local: LocalMode, warnings: &[String]) -> SimFrame {
    let exits = sim
        .scene()
        .groups
        .iter()
        .enumerate()
        .map(|(gi, g)| {
            let counts = g
                .goals
                .iter()
                .enumerate()
                .map(|(ei, goal)| {
                    let n = sim
                        .arrivals()
                        .iter()
                        .filter(|a| a.group as usize == gi && a.exit == ei)
                        .count();
                    (goal.name.clone(), n)
                })
                .collect();
            (g.name.clone(), counts)
        })
        .collect();
    let exit_open = exit_states(sim);
    SimFrame {
        agents: sim.agents().clone(),
        density: sim.fields().map(|f| f.density.rho.clone()),
        places: Some(Arc::new(PlaceMaps::of(sim))),
        obstacles: sim
            .obstacles()
            .map(|(h, o)| (h, o.shape().outline(o.position())))
            .collect(),
        info: RunInfo {
            exists: true,
            time: sim.time(),
            steps: sim.steps(),
            walking: sim.agents().len(),
            exits,
            exit_open,
            local,
            quality: Some(sim.quality()),
            error: None,
            model: sim.scene().params.model,
            warnings: warnings.to_vec(),
        },
        finished: sim.finished(),
    }
}

/// Each exit name of the run's scene, in the order the groups and their goals first name it,
/// and whether it is open (a name is open while any goal bearing it is).
pub fn exit_states(sim: &Simulation) -> Vec<(String, bool)> {
    let mut out: Vec<(String, bool)> = Vec::new();
    for (gi, g) in sim.scene().groups.iter().enumerate() {
        for (ei, goal) in g.goals.iter().enumerate() {
            let open = sim.exit_open(gi, ei);
            match out.iter_mut().find(|(n, _)| *n == goal.name) {
                Some((_, o)) => *o |= open,
                None => out.push((goal.name.clone(), open)),
            }
        }
    }
    out
}

/// A new run of `scene` with the local layer `asked` installed (none for [`LocalMode::None`];
/// what is left of a boids mode when boids would steer no one, with a warning:
/// [`local_layer_for`]), and the local layer it runs.
fn start_run(scene: Scene, asked: LocalMode) -> crowdfield::Result<(RunDriver, LocalMode)> {
    let (local, warning) = local_layer_for(&scene, asked, &scene.name);
    // The multi-threaded CPU backend runs on the background pool the step runs in.
    let sim = Simulation::builder(scene)
        .local(local)
        .local_backend(LocalBackend::CpuMulti)
        .build()?;
    let mut driver = RunDriver::new(sim, None);
    if let Some(w) = warning {
        driver.warn(w);
    }
    Ok((driver, local))
}

fn error_frame(message: String) -> SimFrame {
    SimFrame {
        info: RunInfo {
            error: Some(message),
            ..Default::default()
        },
        ..Default::default()
    }
}

/// A panic's message, for the error frame.
fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "no message".into())
}

fn worker(
    control: Receiver<(SimControl, u64)>,
    frames: Sender<(u64, SimFrame)>,
    repaint: Option<egui::Context>,
) {
    let mut sim: Option<RunDriver> = None;
    // The number of the run the frames belong to.
    let mut run = 0u64;
    // The local layer of the current run.
    let mut local = LocalMode::None;
    // The current run's warnings so far.
    let mut warnings: Vec<String> = Vec::new();
    let mut playing = false;
    let mut speed = 1.0f32;
    // Wall time and simulated time when play was last pressed (pacing).
    let mut anchor = (Instant::now(), 0.0f64);
    let mut last_sent = Instant::now();
    let send = |run: u64, f: SimFrame| {
        let ok = frames.send((run, f)).is_ok();
        if let Some(ctx) = &repaint {
            ctx.request_repaint();
        }
        ok
    };
    loop {
        let wait = if playing && sim.is_some() {
            Duration::ZERO
        } else {
            IDLE_POLL
        };
        let msg = match control.recv_timeout(wait) {
            Ok((m, id)) => {
                run = id;
                Some(m)
            }
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => return,
        };
        let mut step_once = false;
        match msg {
            Some(SimControl::Start(scene, mode)) => {
                playing = false;
                local = mode;
                warnings.clear();
                let start = || crate::recompute::background_pool().install(|| start_run(*scene, mode));
                sim = match std::panic::catch_unwind(start) {
                    Ok(Ok((mut s, runs))) => {
                        local = runs;
                        warnings.extend(s.take_warnings());
                        if !send(run, frame(s.simulation(), local, &warnings)) {
                            return;
                        }
                        Some(s)
                    }
                    Ok(Err(e)) => {
                        send(run, error_frame(e.to_string()));
                        None
                    }
                    Err(payload) => {
                        send(
                            run,
                            error_frame(format!(
                                "the simulation could not start (internal error: {})",
                                panic_text(payload.as_ref())
                            )),
                        );
                        None
                    }
                };
            }
            Some(SimControl::Play(p)) => {
                playing = p;
                anchor = (
                    Instant::now(),
                    sim.as_ref().map_or(0.0, |s| s.simulation().time()),
                );
            }
            Some(SimControl::Step) => {
                playing = false;
                step_once = true;
            }
            Some(SimControl::Speed(s)) => {
                speed = s;
                anchor = (
                    Instant::now(),
                    sim.as_ref().map_or(0.0, |s| s.simulation().time()),
                );
            }
            Some(SimControl::Reset) => {
                sim = None;
                playing = false;
            }
            Some(SimControl::MoveObstacle(handle, to)) => {
                if let Some(s) = sim.as_mut() {
                    if let Err(e) = s.simulation_mut().move_obstacle(handle, to, Some([0.0, 0.0])) {
                        warnings.push(e.to_string());
                    }
                    if !send(run, frame(s.simulation(), local, &warnings)) {
                        return;
                    }
                }
            }
            Some(SimControl::SetExit(name, open)) => {
                if let Some(s) = sim.as_mut() {
                    if let Err(e) = s.simulation_mut().set_exit_open(&name, open) {
                        warnings.push(e.to_string());
                    }
                    if !send(run, frame(s.simulation(), local, &warnings)) {
                        return;
                    }
                }
            }
            None => {}
        }
        let Some(s) = sim.as_mut() else { continue };
        let due = anchor.1 + anchor.0.elapsed().as_secs_f64() * speed as f64;
        let (finished, time) = (s.simulation().finished(), s.simulation().time());
        if step_once || (playing && !finished && time < due) {
            let stepped = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                crate::recompute::background_pool().install(|| s.step(&mut ()))
            }));
            let failed = match stepped {
                Ok(Ok(_)) => None,
                Ok(Err(e)) => Some(format!("the simulation step failed: {e}")),
                Err(payload) => Some(format!(
                    "the simulation step failed (internal error: {})",
                    panic_text(payload.as_ref())
                )),
            };
            if let Some(message) = failed {
                send(run, error_frame(message));
                sim = None;
                playing = false;
                continue;
            }
            warnings.extend(s.take_warnings());
            if step_once || last_sent.elapsed() >= FRAME_INTERVAL || s.simulation().finished() {
                last_sent = Instant::now();
                if !send(run, frame(s.simulation(), local, &warnings)) {
                    return;
                }
            }
        } else if playing {
            // Ahead of wall time: sleep until the next step is due (bounded by the poll).
            let ahead = ((time - due) / speed.max(1e-3) as f64).clamp(0.0, IDLE_POLL.as_secs_f64());
            std::thread::sleep(Duration::from_secs_f64(ahead.max(0.001)));
        }
    }
}
