//! One run from its first step to its last, the same for every front end: `simulate`,
//! `batch`, the Python package and the editor step a built [`Simulation`] through a
//! [`RunDriver`], which decides when a trajectory sample is taken
//! ([`crate::run::output::trajectory_every_steps`]), tells a [`RunObserver`] (the files of
//! [`crate::run::output::RunWriter`], Python's trajectory rows, a progress bar) after each step
//! and at each sample, and gathers the warnings the run ends with (agents still inside, the
//! report's warnings, a GPU solver that fell back to the CPU).
//!
//! ```
//! use crowdfield::run::driver::{RunDriver, local_layer_for};
//! use crowdfield::sim::{SimConfig, Simulation};
//!
//! let scene = crowdfield::map::load(concat!(env!("CARGO_MANIFEST_DIR"), "/maps/corridor.json"))?;
//! let (local, warning) = local_layer_for(&scene, crowdfield::local::LocalMode::None, "corridor.json");
//! assert!(warning.is_none());
//! let config = SimConfig { max_time: 2.0, ..Default::default() };
//! let sim = Simulation::builder(scene).config(config).local(local).build()?;
//! let mut run = RunDriver::new(sim, None);
//! run.run(&mut ())?;
//! assert!(run.simulation().finished());
//! // Two seconds are not enough to leave the corridor: the run says so.
//! assert!(run.take_warnings().iter().any(|w| w.contains("still inside")));
//! # Ok::<(), crowdfield::Error>(())
//! ```

use crate::error::Result;
use crate::local::LocalMode;
use crate::names::Named as _;
use crate::scene::Scene;
use crate::sim::Simulation;

/// What watches a run as a [`RunDriver`] steps it. Both methods do nothing unless overridden;
/// `()` watches nothing.
pub trait RunObserver {
    /// The run's state is trajectory sample number `index` (0 at the start; the sample of step
    /// `n` is number `n / every`).
    ///
    /// # Errors
    /// Whatever the observer fails with (a file it cannot write); the run stops there.
    fn sample(&mut self, _sim: &Simulation, _index: u64) -> Result<()> {
        Ok(())
    }

    /// A step has been taken (called before [`RunObserver::sample`] for the same step).
    ///
    /// # Errors
    /// As [`RunObserver::sample`].
    fn stepped(&mut self, _sim: &Simulation) -> Result<()> {
        Ok(())
    }
}

impl RunObserver for () {}

impl<T: RunObserver + ?Sized> RunObserver for &mut T {
    fn sample(&mut self, sim: &Simulation, index: u64) -> Result<()> {
        (**self).sample(sim, index)
    }

    fn stepped(&mut self, sim: &Simulation) -> Result<()> {
        (**self).stepped(sim)
    }
}

/// Two observers, the first told first.
impl<A: RunObserver, B: RunObserver> RunObserver for (A, B) {
    fn sample(&mut self, sim: &Simulation, index: u64) -> Result<()> {
        self.0.sample(sim, index)?;
        self.1.sample(sim, index)
    }

    fn stepped(&mut self, sim: &Simulation) -> Result<()> {
        self.0.stepped(sim)?;
        self.1.stepped(sim)
    }
}

/// An observer told only of steps, through a function (a progress bar).
pub struct OnStep<F: FnMut(&Simulation)>(pub F);

impl<F: FnMut(&Simulation)> RunObserver for OnStep<F> {
    fn stepped(&mut self, sim: &Simulation) -> Result<()> {
        (self.0)(sim);
        Ok(())
    }
}

/// A run of a built [`Simulation`]: steps it one at a time ([`RunDriver::step`]) or to the end
/// ([`RunDriver::run`]), samples its trajectories every so many steps, and queues the warnings
/// a front end gives ([`RunDriver::take_warnings`]): those given at the start
/// ([`RunDriver::warn`]) and, once the run is over, [`end_warnings`].
pub struct RunDriver {
    sim: Simulation,
    /// Steps between two trajectory samples; 0 for none.
    sample_every: usize,
    /// Warnings of the start ([`RunDriver::warn`]) not yet taken.
    start_warnings: Vec<String>,
    /// Warnings of the end not yet taken.
    end_warnings: Vec<String>,
    /// Whether the run's end warnings are queued (or were taken).
    end_warned: bool,
}

impl RunDriver {
    /// A run of `sim` sampling its trajectories every `sample_every` steps (from
    /// [`crate::run::output::trajectory_every_steps`]; `None` or 0: no samples). When `sim` is
    /// already over (nobody to walk), its end warnings are queued now.
    pub fn new(sim: Simulation, sample_every: Option<usize>) -> Self {
        let mut driver = Self {
            sim,
            sample_every: sample_every.unwrap_or(0),
            start_warnings: Vec::new(),
            end_warnings: Vec::new(),
            end_warned: false,
        };
        driver.warn_if_over();
        driver
    }

    /// Queues `warning` (one of the start: see [`local_layer_for`]) before any the run gives.
    pub fn warn(&mut self, warning: impl Into<String>) {
        self.start_warnings.push(warning.into());
    }

    /// The simulation, as it stands between two steps.
    pub fn simulation(&self) -> &Simulation {
        &self.sim
    }

    /// The simulation, to change between two steps through its run-time API (walkers added
    /// and removed, exits opened and closed: [`crate::sim::dynamic`]).
    pub fn simulation_mut(&mut self) -> &mut Simulation {
        &mut self.sim
    }

    /// Steps between two trajectory samples (0: none are taken).
    pub fn sample_every(&self) -> usize {
        self.sample_every
    }

    /// Tells `observer` of the start's sample (when the run samples trajectories). Call it once,
    /// before the first step.
    ///
    /// # Errors
    /// The observer's.
    pub fn start(&mut self, observer: &mut impl RunObserver) -> Result<()> {
        self.sample_if_due(observer)
    }

    /// One step, then `observer` is told of it (and of the sample, on a sampling step); the
    /// step that ends the run queues its end warnings. Once the run is over it does nothing and
    /// returns no event. Returns the step's events ([`crate::sim::StepEvents`]: arrivals, exits
    /// opened or closed, walkers that came in).
    ///
    /// # Errors
    /// The observer's.
    pub fn step(&mut self, observer: &mut impl RunObserver) -> Result<crate::sim::StepEvents> {
        if self.sim.finished() {
            return Ok(crate::sim::StepEvents {
                time: self.sim.time(),
                ..Default::default()
            });
        }
        let arrived = self.sim.step();
        observer.stepped(&self.sim)?;
        self.sample_if_due(observer)?;
        self.warn_if_over();
        Ok(arrived)
    }

    /// Steps until the run is over (every agent out, or the time limit), telling `observer`
    /// as [`RunDriver::step`] does.
    ///
    /// # Errors
    /// The observer's; the run stops at the step that failed.
    pub fn run(&mut self, observer: &mut impl RunObserver) -> Result<()> {
        while !self.sim.finished() {
            self.step(observer)?;
        }
        Ok(())
    }

    /// The warnings queued since the last call, each once, in the order they arose.
    pub fn take_warnings(&mut self) -> Vec<String> {
        let mut warnings = std::mem::take(&mut self.start_warnings);
        warnings.append(&mut self.end_warnings);
        warnings
    }

    /// Tells `observer` of the sample when the current step is a sampling step.
    fn sample_if_due(&mut self, observer: &mut impl RunObserver) -> Result<()> {
        let every = self.sample_every;
        if every != 0 && self.sim.steps().is_multiple_of(every) {
            observer.sample(&self.sim, (self.sim.steps() / every) as u64)?;
        }
        Ok(())
    }

    /// Queues the end warnings once the run is over.
    fn warn_if_over(&mut self) {
        if self.sim.finished() && !self.end_warned {
            self.end_warned = true;
            self.end_warnings = end_warnings(&self.sim);
        }
    }
}

/// The warnings a finished run ends with, in the command's words: the agents still inside
/// ([`crate::run::output::incomplete_warning`]), the report's warnings (the map's first), a
/// GPU solver that failed mid-run, and the steps of a GPU run that moving obstacles sent to the
/// CPU.
pub fn end_warnings(sim: &Simulation) -> Vec<String> {
    let report = sim.report();
    let mut warnings: Vec<String> = crate::run::output::incomplete_warning(&report)
        .into_iter()
        .collect();
    warnings.extend(report.warnings);
    if let Some(why) = sim.gpu_fallback() {
        warnings.push(format!(
            "the GPU solver failed mid-run ({why}); the run finished on the CPU"
        ));
    }
    let mover_steps = sim.mover_cpu_steps();
    if mover_steps > 0 {
        warnings.push(format!(
            "{mover_steps} of {} steps ran their continuum on the CPU: the GPU's fields hold no              moving obstacle",
            sim.steps()
        ));
    }
    warnings
}

/// The local layer a run of `scene` uses when `asked` is asked for
/// ([`LocalMode::effective_for`]), with the warning when it is another one (a boids mode on a
/// map where boids would steer no one), naming the map as `map`.
pub fn local_layer_for(scene: &Scene, asked: LocalMode, map: &str) -> (LocalMode, Option<String>) {
    let runs = asked.effective_for(scene);
    let warning = (runs != asked).then(|| {
        format!(
            "local layer: {}, but no group of {map} has a `boids` block: boids would steer no one, \
             so the run uses --local {} (add a `boids` block to a group, see --local in the \
             README)",
            asked.name(),
            runs.name()
        )
    });
    (runs, warning)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::SimConfig;

    /// Records what it is told.
    #[derive(Default)]
    struct Log {
        samples: Vec<(usize, u64)>,
        steps: Vec<usize>,
    }

    impl RunObserver for Log {
        fn sample(&mut self, sim: &Simulation, index: u64) -> Result<()> {
            self.samples.push((sim.steps(), index));
            Ok(())
        }

        fn stepped(&mut self, sim: &Simulation) -> Result<()> {
            self.steps.push(sim.steps());
            Ok(())
        }
    }

    fn corridor_run(max_time: f64) -> Simulation {
        let scene = crate::map::load(concat!(env!("CARGO_MANIFEST_DIR"), "/maps/corridor.json")).unwrap();
        let config = SimConfig {
            dt: Some(0.1),
            max_time,
            ..Default::default()
        };
        Simulation::builder(scene).config(config).build().unwrap()
    }

    #[test]
    fn samples_come_at_the_start_and_every_n_steps_and_the_run_stops_at_its_end() {
        let mut run = RunDriver::new(corridor_run(1.0), Some(3));
        let mut log = Log::default();
        run.start(&mut log).unwrap();
        run.run(&mut log).unwrap();
        assert!(run.simulation().finished());
        let steps = run.simulation().steps();
        assert!(steps >= 9, "{steps}");
        assert_eq!(log.steps, (1..=steps).collect::<Vec<_>>());
        let samples: Vec<(usize, u64)> = (0..=steps).step_by(3).map(|n| (n, n as u64 / 3)).collect();
        assert_eq!(log.samples, samples);
        assert!(
            run.step(&mut log).unwrap().arrivals.is_empty(),
            "a finished run takes no step"
        );
        assert_eq!(log.steps.len(), steps);
    }

    #[test]
    fn stepping_by_hand_walks_as_running_to_the_end() {
        let mut whole = RunDriver::new(corridor_run(3.0), None);
        whole.run(&mut ()).unwrap();
        let mut by_hand = RunDriver::new(corridor_run(3.0), None);
        let mut arrived = 0;
        while !by_hand.simulation().finished() {
            arrived += by_hand.step(&mut ()).unwrap().arrivals.len();
        }
        assert_eq!(arrived, whole.simulation().arrivals().len());
        assert_eq!(by_hand.simulation().positions(), whole.simulation().positions());
        let report = |r: &RunDriver| serde_json::to_string(&r.simulation().report()).unwrap();
        assert_eq!(report(&by_hand), report(&whole));
    }

    #[test]
    fn the_end_warnings_come_once_after_the_start_ones() {
        let mut run = RunDriver::new(corridor_run(1.0), None);
        run.warn("at the start");
        assert_eq!(run.take_warnings(), ["at the start"]);
        run.step(&mut ()).unwrap();
        assert!(run.take_warnings().is_empty(), "nothing until the run is over");
        run.run(&mut ()).unwrap();
        let end = run.take_warnings();
        assert!(
            end[0].contains("still inside when the run stopped at 1.0 s"),
            "{end:?}"
        );
        assert_eq!(end, end_warnings(run.simulation()));
        run.step(&mut ()).unwrap();
        assert!(run.take_warnings().is_empty(), "each once");
    }

    #[test]
    fn an_observer_error_stops_the_run() {
        struct Fails;
        impl RunObserver for Fails {
            fn stepped(&mut self, sim: &Simulation) -> Result<()> {
                if sim.steps() == 2 {
                    return Err(crate::Error::invalid("t", "step", "refused"));
                }
                Ok(())
            }
        }
        let mut run = RunDriver::new(corridor_run(1.0), None);
        assert!(run.run(&mut Fails).is_err());
        assert_eq!(run.simulation().steps(), 2);
    }

    #[test]
    fn a_boids_mode_without_boids_runs_as_what_is_left_and_says_so() {
        // One group, with a goal and no `boids` block.
        let scene = crate::map::load(concat!(env!("CARGO_MANIFEST_DIR"), "/maps/corridor.json")).unwrap();
        let (runs, warning) = local_layer_for(&scene, LocalMode::BoidsOrca, "m.json");
        assert_eq!(runs, LocalMode::Orca);
        let w = warning.unwrap();
        assert!(
            w.starts_with("local layer: boids+orca, but no group of m.json has a `boids` block")
                && w.contains("so the run uses --local orca"),
            "{w}"
        );
        assert_eq!(
            local_layer_for(&scene, LocalMode::Orca, "m.json"),
            (LocalMode::Orca, None)
        );
    }
}
