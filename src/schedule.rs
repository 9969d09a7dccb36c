//! What changes in a scene while a run goes: exits that start closed, exits that open or close
//! at given times, and sources that bring walkers in over time (a [`Scene`](crate::scene::Scene)'s
//! [`Schedule`]). The map's `"events"`, a goal's `"closed"` and a spawn area's `"rate"` or
//! `"times"` compile to it; the simulation applies it step by step (`crate::sim::dynamic`).

use crate::scene::Area;
use rand::Rng;
use serde::{Deserialize, Serialize};

/// One exit opening or closing at a time of the run.
#[derive(Clone, Debug, PartialEq)]
pub struct ExitEvent {
    /// Simulated time, seconds: the event applies at the start of the first step that begins
    /// at or after it.
    pub time: f64,
    /// The exit's name: every goal of that name, in every group, opens or closes.
    pub name: String,
    /// Open (`true`) or close (`false`).
    pub open: bool,
}

/// How a source spaces the walkers it brings at a rate.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ArrivalPattern {
    /// One walker every `1 / rate` seconds from `from` on (default).
    #[default]
    Even,
    /// A Poisson process of the rate: exponential gaps drawn from the run's seed.
    Poisson,
}

/// When a source's walkers appear.
#[derive(Clone, Debug, PartialEq)]
pub enum SourceTimes {
    /// `rate` persons per second over `[from, until)`, spaced as `pattern` says.
    Rate {
        /// Persons per second.
        rate: f64,
        /// First time, seconds.
        from: f64,
        /// End of the period, seconds (no walker at or after it).
        until: f64,
        /// Even or Poisson.
        pattern: ArrivalPattern,
    },
    /// At these times, seconds, in ascending order.
    Listed(Vec<f64>),
}

impl SourceTimes {
    /// The times of the source's walkers, ascending: evenly spaced ones need no randomness,
    /// Poisson ones draw their gaps from `rng`.
    pub fn times(&self, rng: &mut impl Rng) -> Vec<f64> {
        match self {
            SourceTimes::Listed(times) => times.clone(),
            SourceTimes::Rate {
                rate,
                from,
                until,
                pattern,
            } => {
                if !(*rate > 0.0 && until > from) {
                    return Vec::new();
                }
                match pattern {
                    ArrivalPattern::Even => {
                        // The count is fixed by rate x duration; 1e-9 keeps 2/s for 30 s at 60.
                        let n = ((until - from) * rate - 1e-9).ceil().max(0.0) as usize;
                        (0..n).map(|k| from + k as f64 / rate).collect()
                    }
                    ArrivalPattern::Poisson => {
                        let mut times = Vec::new();
                        let mut t = *from;
                        loop {
                            let u: f64 = rng.random();
                            t += -(1.0 - u).ln() / rate;
                            if t >= *until {
                                return times;
                            }
                            times.push(t);
                        }
                    }
                }
            }
        }
    }

    /// The number of walkers expected (the exact count for even spacing and listed times, the
    /// mean for a Poisson process).
    pub fn expected_count(&self) -> f64 {
        match self {
            SourceTimes::Listed(times) => times.len() as f64,
            SourceTimes::Rate {
                rate, from, until, ..
            } => (rate * (until - from)).max(0.0),
        }
    }
}

/// A spawn area that brings its group's walkers in over time.
#[derive(Clone, Debug, PartialEq)]
pub struct Source {
    /// Index of the group in `Scene::groups`.
    pub group: usize,
    /// Where the walkers appear (each on a free spot clear of the bodies already there).
    pub area: Area,
    /// When they appear.
    pub times: SourceTimes,
    /// Pre-movement time range `[min, max]`, seconds, counted from each walker's arrival.
    pub premovement: [f64; 2],
}

/// Everything that changes while a run goes (empty for a static scene).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Schedule {
    /// The goals `(group, goal)` closed at the start.
    pub closed: Vec<(usize, usize)>,
    /// Exits opening and closing, in the map's order (applied in time order, ties in this order).
    pub events: Vec<ExitEvent>,
    /// Spawn areas that spawn over time.
    pub sources: Vec<Source>,
    /// Routes, exit shares, speed regions and their events.
    pub routes: crate::routes::Routes,
    /// Obstacles that move (the map's `movers`), in the map's order.
    pub movers: Vec<crate::mover::Mover>,
}

impl Schedule {
    /// True when nothing changes: no closed goal, no event, no source, no route or region, no
    /// mover.
    pub fn is_empty(&self) -> bool {
        self.closed.is_empty()
            && self.events.is_empty()
            && self.sources.is_empty()
            && self.routes.is_empty()
            && self.movers.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn even_rates_give_rate_times_duration_walkers() {
        let mut rng = ChaCha8Rng::seed_from_u64(0);
        let times = SourceTimes::Rate {
            rate: 2.0,
            from: 0.0,
            until: 30.0,
            pattern: ArrivalPattern::Even,
        }
        .times(&mut rng);
        assert_eq!(times.len(), 60);
        assert_eq!((times[0], times[1], times[59]), (0.0, 0.5, 29.5));
        let third = SourceTimes::Rate {
            rate: 3.0,
            from: 1.0,
            until: 2.0,
            pattern: ArrivalPattern::Even,
        };
        assert_eq!(third.times(&mut rng).len(), 3);
    }

    #[test]
    fn poisson_counts_scatter_about_the_mean_and_repeat_from_the_seed() {
        let source = SourceTimes::Rate {
            rate: 2.0,
            from: 5.0,
            until: 1005.0,
            pattern: ArrivalPattern::Poisson,
        };
        let times = source.times(&mut ChaCha8Rng::seed_from_u64(3));
        // 2000 expected, standard deviation sqrt(2000) = 45: five of them either side.
        assert!((1775..=2225).contains(&times.len()), "{}", times.len());
        assert!(times.windows(2).all(|w| w[0] < w[1]) && times[0] >= 5.0);
        assert_eq!(times, source.times(&mut ChaCha8Rng::seed_from_u64(3)));
    }
}
