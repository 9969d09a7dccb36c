//! The background recompute: fields, potentials and gradients of the edited map, solved on a
//! worker thread so that the interface never waits for a solve.
//!
//! The app sends a [`Job`] (a compiled scene and agents) after each edit; every job gets a
//! new id. The worker skips to the newest job waiting in its queue, solves it and sends back a
//! [`JobResult`] with the job's id; the app keeps a result when it is newer than the fields it
//! shows (a job outdated by later edits still updates the view while the newest one runs) and
//! counts as running until the newest job's result is in. Jobs from the editor also compose
//! the layer image with their fields ([`crate::layers::Precomposed`]). A solver that panics (a
//! bug, or a stage not yet implemented) becomes an error message in the status bar instead of
//! taking the editor down.

use crate::doc::Document;
use crate::layers::{LayerVisibility, Precomposed};
use crowdfield::agents::Agents;
use crowdfield::fields::Fields;
use crowdfield::gradient::Gradient;
use crowdfield::plan::{PlanOptions, plan_with_crowd};
use crowdfield::scene::Scene;
use ndarray::{Array2, Axis};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// The map of a job: compiled, or a copy of the document that the worker compiles (so the
/// interface thread only copies the rasters).
pub enum JobMap {
    /// A compiled map.
    Scene(Box<Scene>),
    /// The edited map, compiled on the worker thread.
    Document(Box<Document>),
}

/// Work for the worker thread.
pub struct Job {
    /// Increasing id; results of older jobs are dropped.
    pub id: u64,
    /// The map.
    pub map: JobMap,
    /// Agents whose density shapes the fields (none while editing).
    pub agents: Agents,
    /// Layer switches and group to compose the layer image for, with the fields.
    pub compose: Option<(LayerVisibility, usize)>,
}

/// The thread pool of the background work (recompute and simulation): every core but one, so
/// that the interface thread keeps a core to itself while fields recompute (one thread on a
/// single-core machine).
pub fn background_pool() -> &'static rayon::ThreadPool {
    static POOL: OnceLock<rayon::ThreadPool> = OnceLock::new();
    POOL.get_or_init(|| {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        rayon::ThreadPoolBuilder::new()
            .num_threads(cores.saturating_sub(1).max(1))
            .thread_name(|i| format!("crowdfield-background-{i}"))
            .build()
            .expect("building the background thread pool")
    })
}

/// Potential and gradient of one group.
#[derive(Clone, Debug)]
pub struct GroupField {
    /// Potential, seconds; `+inf` where no goal is reachable.
    pub phi: Array2<f64>,
    /// Upwind gradient of `phi`.
    pub grad: Gradient,
    /// Number of unreachable cells.
    pub unreachable: usize,
    /// Isoline bands of `phi` at the layer image's resolution (`None` when nothing is
    /// reachable), computed here so the interface does not.
    pub isolines: Option<crate::layers::IsolineBands>,
}

/// Every field the layers show.
#[derive(Clone, Debug)]
pub struct FieldSet {
    /// Density, persons/m².
    pub density: Array2<f32>,
    /// Walking speed averaged over the four directions, m/s (0 in obstacles).
    pub speed: Array2<f32>,
    /// The full fields (anisotropic speed and cost), for export.
    pub fields: Fields,
    /// One entry per group, in group order.
    pub groups: Vec<GroupField>,
    /// The layer image composed with these fields, when the job asked for one.
    pub precomposed: Option<crate::layers::Precomposed>,
}

/// What comes back from the worker.
pub struct JobResult {
    /// The job's id.
    pub id: u64,
    /// The fields, or the error message.
    pub outcome: Result<FieldSet, String>,
    /// Wall time of the whole recompute, seconds.
    pub seconds: f64,
}

/// Solves one job (on the worker thread; also callable directly): the plan of `scene` with
/// the density of `agents` ([`crowdfield::plan::plan_with_crowd`], first order, CPU), plus what
/// the layers draw from it.
///
/// # Errors
/// As [`crowdfield::plan::plan_with_crowd`] (the CPU plan the editor runs does not fail).
pub fn solve(scene: &Scene, agents: &Agents) -> crowdfield::Result<FieldSet> {
    let plan = plan_with_crowd(scene, agents, &PlanOptions::default())?;
    let fields = plan.fields;
    let groups = plan
        .groups
        .into_iter()
        .map(|g| GroupField {
            grad: g.gradient,
            isolines: crate::layers::isoline_bands(g.solution.phi.view()),
            unreachable: g.solution.unreachable,
            phi: g.solution.phi,
        })
        .collect();
    let speed = fields.speed.map_axis(Axis(2), |faces| {
        let finite: Vec<f32> = faces.iter().copied().filter(|v| v.is_finite()).collect();
        if finite.is_empty() {
            0.0
        } else {
            finite.iter().sum::<f32>() / finite.len() as f32
        }
    });
    Ok(FieldSet {
        density: fields.density.rho.clone(),
        speed,
        fields,
        groups,
        precomposed: None,
    })
}

/// The app's handle on the worker thread.
pub struct Recompute {
    jobs: Sender<Job>,
    results: Receiver<JobResult>,
    next_id: u64,
    /// Id of the newest job sent, when its result has not arrived yet.
    pending: Option<u64>,
    /// When the pending job was sent.
    pending_since: Option<Instant>,
    /// Duration of the last finished recompute, seconds.
    pub last_seconds: Option<f64>,
    /// The newest fields received.
    pub latest: Option<Arc<FieldSet>>,
    /// The id of the job `latest` came from.
    pub latest_id: Option<u64>,
    /// The error of the newest job, if it failed.
    pub error: Option<String>,
}

impl Recompute {
    /// Starts the worker thread. `repaint` (the egui context) is woken when a result is ready.
    pub fn start(repaint: Option<egui::Context>) -> Self {
        let (job_tx, job_rx) = channel::<Job>();
        let (res_tx, res_rx) = channel::<JobResult>();
        std::thread::Builder::new()
            .name("crowdfield-recompute".into())
            .spawn(move || worker(job_rx, res_tx, repaint))
            .expect("spawning the recompute thread");
        Self {
            jobs: job_tx,
            results: res_rx,
            next_id: 0,
            pending: None,
            pending_since: None,
            last_seconds: None,
            latest: None,
            latest_id: None,
            error: None,
        }
    }

    /// Queues a recompute of `scene`; returns its id.
    pub fn request(&mut self, scene: Scene, agents: Agents) -> u64 {
        self.send(Job {
            id: 0,
            map: JobMap::Scene(Box::new(scene)),
            agents,
            compose: None,
        })
    }

    /// Queues a recompute of the edited map `doc` (compiled on the worker), with its layer
    /// image composed for `vis` and `group`; returns its id.
    pub fn request_document(&mut self, doc: Document, vis: LayerVisibility, group: usize) -> u64 {
        self.send(Job {
            id: 0,
            map: JobMap::Document(Box::new(doc)),
            agents: Agents::default(),
            compose: Some((vis, group)),
        })
    }

    fn send(&mut self, mut job: Job) -> u64 {
        self.next_id += 1;
        let id = self.next_id;
        job.id = id;
        // A send fails only when the worker has died; the error shows in the status bar.
        if self.jobs.send(job).is_err() {
            self.error = Some("the recompute thread has stopped".into());
            return id;
        }
        self.pending = Some(id);
        self.pending_since = Some(Instant::now());
        id
    }

    /// Takes the results that arrived; returns true when the newest job's result came in.
    pub fn poll(&mut self) -> bool {
        let mut updated = false;
        while let Ok(r) = self.results.try_recv() {
            updated |= self.accept(r);
        }
        updated
    }

    /// Keeps `r` when it is newer than the fields shown (so that during a long series of
    /// edits, each outdating the job in flight, the fields still follow); drops older results.
    /// Returns true when `r` answers the newest job sent.
    fn accept(&mut self, r: JobResult) -> bool {
        if self.latest_id.is_some_and(|shown| r.id <= shown) {
            return false;
        }
        let newest = Some(r.id) == self.pending;
        if newest {
            self.pending = None;
            self.pending_since = None;
        }
        self.last_seconds = Some(r.seconds);
        match r.outcome {
            Ok(f) => {
                self.latest = Some(Arc::new(f));
                self.latest_id = Some(r.id);
                self.error = None;
            }
            Err(e) => self.error = Some(e),
        }
        newest
    }

    /// The id of the newest job sent (`None` before the first): tells whether something was
    /// sent whatever the worker has done since (on a fast machine a small map's result can
    /// arrive, and be taken, within the frame that sent it).
    pub fn newest_sent(&self) -> Option<u64> {
        (self.next_id > 0).then_some(self.next_id)
    }

    /// True while a job is queued or running.
    pub fn is_running(&self) -> bool {
        self.pending.is_some()
    }

    /// How long the running job has been running.
    pub fn running_for(&self) -> Option<Duration> {
        self.pending_since.map(|t| t.elapsed())
    }

    /// Blocks until the newest job's result arrives or `timeout` passes (tests and exports
    /// only; the interface never calls this). Returns true when it arrived.
    pub fn wait(&mut self, timeout: Duration) -> bool {
        let end = Instant::now() + timeout;
        while self.is_running() {
            let left = end.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            match self.results.recv_timeout(left.min(Duration::from_millis(50))) {
                Ok(r) => {
                    self.accept(r);
                }
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => return false,
            }
        }
        true
    }
}

fn worker(jobs: Receiver<Job>, results: Sender<JobResult>, repaint: Option<egui::Context>) {
    while let Ok(mut job) = jobs.recv() {
        // Skip to the newest job: the older ones would be dropped anyway.
        while let Ok(newer) = jobs.try_recv() {
            job = newer;
        }
        let start = Instant::now();
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            background_pool().install(|| match job.map {
                JobMap::Scene(scene) => solve(&scene, &job.agents),
                JobMap::Document(doc) => {
                    let mut fields = solve(&doc.to_scene(), &job.agents)?;
                    if let Some((vis, group)) = job.compose {
                        fields.precomposed = Some(Precomposed::new(*doc, &fields, vis, group));
                    }
                    Ok(fields)
                }
            })
        }))
        .map_err(|p| {
            let msg = p
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| p.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            format!("recompute failed: {msg}")
        })
        .and_then(|solved| solved.map_err(|e| format!("recompute failed: {e}")));
        let seconds = start.elapsed().as_secs_f64();
        if results
            .send(JobResult {
                id: job.id,
                outcome,
                seconds,
            })
            .is_err()
        {
            return; // the app has gone
        }
        if let Some(ctx) = &repaint {
            ctx.request_repaint();
        }
    }
}
