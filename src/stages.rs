//! The stages of a simulation step and the one timer that times them.
//!
//! A step runs its stages in order ([`crate::sim::Simulation::step`]): the continuum (density
//! splat, speed and cost fields, potentials and gradients, all of it under
//! [`Stage::Potentials`] when it runs on a GPU), the walk ([`Stage::Advection`]: field
//! velocities, the pedestrian model, the local layer, the move with its walls; and the run's
//! logs and arrivals after the separation) and the separation ([`Stage::Separation`]). A
//! [`StageTimer`] laps once per stage, so every stage is timed the same way.

use serde::{Deserialize, Serialize};
use std::time::Instant;

/// A timed stage of a step (the fields of [`StageTimes`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// The density splat.
    Splat,
    /// Speed and unit cost.
    Fields,
    /// Eikonal solves and gradients (the whole continuum when it runs on a GPU).
    Potentials,
    /// Field velocities, local layer, integration, walls, the run's logs and arrivals.
    Advection,
    /// Minimum-distance enforcement.
    Separation,
}

/// Wall time spent in each stage, seconds, summed over the steps run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StageTimes {
    /// Density splat.
    pub splat: f64,
    /// Speed and unit cost.
    pub fields: f64,
    /// Eikonal solves and gradients.
    pub potentials: f64,
    /// Field velocity, local layer, integration, walls, arrivals.
    pub advection: f64,
    /// Minimum-distance enforcement.
    pub separation: f64,
}

impl StageTimes {
    /// Sum of the stages, seconds.
    pub fn total(&self) -> f64 {
        self.splat + self.fields + self.potentials + self.advection + self.separation
    }

    /// The time of `stage`, seconds.
    pub fn get(&self, stage: Stage) -> f64 {
        match stage {
            Stage::Splat => self.splat,
            Stage::Fields => self.fields,
            Stage::Potentials => self.potentials,
            Stage::Advection => self.advection,
            Stage::Separation => self.separation,
        }
    }

    fn slot(&mut self, stage: Stage) -> &mut f64 {
        match stage {
            Stage::Splat => &mut self.splat,
            Stage::Fields => &mut self.fields,
            Stage::Potentials => &mut self.potentials,
            Stage::Advection => &mut self.advection,
            Stage::Separation => &mut self.separation,
        }
    }
}

/// Times the stages of one step: each [`StageTimer::lap`] adds the wall time since the last lap
/// (or the start) to a stage.
#[derive(Debug)]
pub struct StageTimer {
    last: Instant,
    times: StageTimes,
}

impl StageTimer {
    /// A timer whose first lap starts now.
    pub fn start() -> Self {
        Self {
            last: Instant::now(),
            times: StageTimes::default(),
        }
    }

    /// Adds the time since the last lap to `stage` and starts the next lap.
    pub fn lap(&mut self, stage: Stage) {
        let now = Instant::now();
        *self.times.slot(stage) += (now - self.last).as_secs_f64();
        self.last = now;
    }

    /// Adds the laps so far to `total`.
    pub fn add_to(&self, total: &mut StageTimes) {
        for stage in [
            Stage::Splat,
            Stage::Fields,
            Stage::Potentials,
            Stage::Advection,
            Stage::Separation,
        ] {
            *total.slot(stage) += self.times.get(stage);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn laps_add_to_their_stage_only() {
        let mut timer = StageTimer::start();
        std::thread::sleep(std::time::Duration::from_millis(2));
        timer.lap(Stage::Fields);
        timer.lap(Stage::Separation);
        let mut total = StageTimes {
            splat: 1.0,
            ..StageTimes::default()
        };
        timer.add_to(&mut total);
        assert_eq!(total.splat, 1.0);
        assert!(total.fields >= 0.002, "{total:?}");
        assert!(total.separation < total.fields, "{total:?}");
        assert_eq!(total.potentials + total.advection, 0.0);
        assert!((total.total() - (1.0 + total.fields + total.separation)).abs() < 1e-12);
    }
}
