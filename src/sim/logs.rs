//! The run's logs, kept step by step for the report: collision and jam figures, each walker's
//! distance, start, anchor and exit time, the densities met, the level of service and clear
//! time per cell, and the arrivals that end a step.

use super::{Arrival, STUCK_DISTANCE, Simulation, levels, measure};
use crate::agents::Agents;
use crate::grid::Grid;
use crate::local::quality::{CollisionCounter, CollisionStats, JamTracker};
use ndarray::Array2;

/// Collision and jam figures summed over the steps run (see [`crate::local::quality`]).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct QualityLog {
    pub steps: usize,
    pub pairs: usize,
    pub contacts: usize,
    pub max_pairs: usize,
    pub depth_sum: f64,
    pub max_jammed: usize,
    pub longest_jam_s: f32,
}

impl QualityLog {
    fn record(&mut self, c: &CollisionStats, jammed: usize, longest_s: f32) {
        let (pairs, mean_depth) = (c.pairs, c.mean_depth);
        self.steps += 1;
        self.pairs += pairs;
        self.contacts += c.contacts;
        self.max_pairs = self.max_pairs.max(pairs);
        self.depth_sum += mean_depth as f64 * pairs as f64;
        self.max_jammed = self.max_jammed.max(jammed);
        self.longest_jam_s = self.longest_jam_s.max(longest_s);
    }
}

/// Per-walker bookkeeping: one row per agent still walking, in the order of the simulation's
/// agents, and per group what the walkers that left leave behind (their lowest mean speed).
/// Walkers that come and go take no memory once gone.
#[derive(Clone, Debug, Default)]
pub(crate) struct AgentLog {
    /// The id of each row (the agents' ids, in their order).
    pub ids: Vec<u32>,
    /// Group of each row.
    pub group: Vec<u32>,
    /// Distance walked so far, metres.
    pub walked: Vec<f64>,
    /// Point the agent has stayed near since `anchor_t` (for the stuck test).
    pub anchor: Vec<(f32, f32, f64)>,
    /// Time the agent starts walking (its pre-movement time), seconds.
    pub start_at: Vec<f64>,
    /// Per group, the lowest mean speed (distance over time on the move) of the walkers that
    /// left, m/s; `+inf` while none did.
    pub left_min_speed: Vec<f64>,
}

impl AgentLog {
    /// The log of `agents` at time 0, for a scene of `groups` groups.
    pub(crate) fn new(agents: &Agents, groups: usize) -> Self {
        let mut log = Self {
            left_min_speed: vec![f64::INFINITY; groups],
            ..Self::default()
        };
        for i in 0..agents.len() {
            log.enter(agents, i, 0.0);
        }
        log
    }

    /// Adds the row of agent `i` of `agents`, entering at `time`.
    pub(crate) fn enter(&mut self, agents: &Agents, i: usize, time: f64) {
        self.ids.push(agents.id[i]);
        self.group.push(agents.group[i]);
        self.walked.push(0.0);
        self.anchor.push((agents.x[i], agents.y[i], time));
        self.start_at.push(agents.start_time[i] as f64);
    }

    /// Keeps the rows of the ids still in `ids` (a subsequence of the rows' ids, in their
    /// order); the others leave at `time`, each folding its mean speed into its group's
    /// lowest.
    pub(crate) fn keep_ids(&mut self, ids: &[u32], time: f64) {
        let mut keep = vec![false; self.ids.len()];
        let mut k = 0;
        for (row, id) in self.ids.iter().enumerate() {
            if ids.get(k) == Some(id) {
                keep[row] = true;
                k += 1;
            }
        }
        for row in (0..keep.len()).filter(|&r| !keep[r]) {
            // Time on the move: from the end of its pre-movement time to its leaving.
            let moving = time - self.start_at[row];
            if moving > 0.0 {
                let g = self.group[row] as usize;
                let speed = self.walked[row] / moving;
                self.left_min_speed[g] = self.left_min_speed[g].min(speed);
            }
        }
        fn filter<T: Copy>(v: &mut Vec<T>, keep: &[bool]) {
            let mut i = 0;
            v.retain(|_| {
                i += 1;
                keep[i - 1]
            });
        }
        filter(&mut self.ids, &keep);
        filter(&mut self.group, &keep);
        filter(&mut self.walked, &keep);
        filter(&mut self.anchor, &keep);
        filter(&mut self.start_at, &keep);
    }

    /// The memory the rows have room for, in rows (the largest column's capacity).
    pub(crate) fn capacity(&self) -> usize {
        [
            self.ids.capacity(),
            self.group.capacity(),
            self.walked.capacity(),
            self.anchor.capacity(),
            self.start_at.capacity(),
        ]
        .into_iter()
        .max()
        .unwrap_or(0)
    }
}

/// Density statistics gathered over the run.
#[derive(Clone, Debug)]
pub(crate) struct DensityLog {
    /// Highest measured density seen in each cell, persons/m² over the measurement window.
    pub peak_map: Array2<f32>,
    /// Highest density overall: value, cell (row, col), time.
    pub peak: (f32, (usize, usize), f64),
    /// Per group: highest density in the cell of one of its agents: value, cell, time.
    pub group_peak: Vec<(f32, (usize, usize), f64)>,
    /// Per group: sum of agents' speeds over agent-steps, and the number of agent-steps.
    pub speed_sum: Vec<(f64, u64)>,
}

impl DensityLog {
    /// An empty log over `grid` for `groups` groups.
    pub(crate) fn new(grid: &Grid, groups: usize) -> Self {
        Self {
            peak_map: Array2::zeros(grid.shape()),
            peak: (0.0, (0, 0), 0.0),
            group_peak: vec![(0.0, (0, 0), 0.0); groups],
            speed_sum: vec![(0.0, 0); groups],
        }
    }
}

/// Everything a run logs for its report.
pub(crate) struct RunLogs {
    /// Collision and jam figures.
    pub quality: QualityLog,
    /// Per walker: distance, exit time, anchor, start.
    pub agents: AgentLog,
    /// Densities met.
    pub density: DensityLog,
    /// Level of service and clear time per cell ([`levels`]).
    pub places: levels::PlaceLog,
    /// Counts the pairs that overlap after the separation.
    pub collisions: CollisionCounter,
    /// Follows the walkers held back from their preferred velocity.
    pub jams: JamTracker,
}

impl Simulation {
    /// Peak density bookkeeping (before agents move), in measured densities: persons counted
    /// in at least 1 m² ([`measure::measured_density`]), not the model's splat; the levels of
    /// service count over [`levels::LOS_AREA_M2`] the walkers who have started (people still
    /// in their pre-movement time stand and queue for nothing).
    pub(super) fn record_density(&mut self) {
        let grid = &self.scene.grid;
        let persons = measure::persons_per_cell(grid, &self.agents.x, &self.agents.y);
        let measured = measure::measured_density(persons.view(), grid.cell_size);
        let walkway = measure::measured_density_over(persons.view(), grid.cell_size, levels::LOS_AREA_M2);
        let any_waiting = (0..self.agents.len()).any(|i| self.is_waiting(i));
        let started = any_waiting.then(|| {
            let (xs, ys): (Vec<f32>, Vec<f32>) = (0..self.agents.len())
                .filter(|&i| !self.is_waiting(i))
                .map(|i| (self.agents.x[i], self.agents.y[i]))
                .unzip();
            let persons = measure::persons_per_cell(grid, &xs, &ys);
            measure::measured_density_over(persons.view(), grid.cell_size, levels::LOS_AREA_M2)
        });
        self.logs.places.record_levels(
            started.as_ref().unwrap_or(&walkway).view(),
            walkway.view(),
            self.scene.obstacle.view(),
        );
        let log = &mut self.logs.density;
        for ((rc, &rho), peak) in measured.indexed_iter().zip(log.peak_map.iter_mut()) {
            if rho > *peak {
                *peak = rho;
            }
            if rho > log.peak.0 {
                log.peak = (rho, rc, self.time);
            }
        }
        for i in 0..self.agents.len() {
            if let Some(rc) = grid.cell_of(self.agents.x[i] as f64, self.agents.y[i] as f64) {
                let g = self.agents.group[i] as usize;
                let rho = measured[rc];
                if rho > log.group_peak[g].0 {
                    log.group_peak[g] = (rho, rc, self.time);
                }
            }
        }
    }

    /// The end of a step: the quality figures (collisions after the separation, jams), the
    /// clock, each walker's motion (from `old_x, old_y`), the arrivals and the occupancy.
    /// Returns the number of arrivals.
    pub(super) fn log_step(&mut self, old_x: &[f32], old_y: &[f32]) -> usize {
        let collisions = self.logs.collisions.count(&self.agents);
        let jams = self
            .logs
            .jams
            .update(&self.agents, &self.walk.preferred, self.dt as f32);
        self.logs.quality.record(&collisions, jams.jammed, jams.longest_s);
        // Rounded to the nanosecond: 299 * 0.1 is 29.900000000000002 in binary, and reports,
        // trajectories and plots should read 29.9.
        let step_began = self.time;
        self.time = self.time_after_step();
        self.steps += 1;
        self.track_motion(old_x, old_y, step_began);
        let arrived = self.remove_arrivals(old_x, old_y);
        if arrived > 0 {
            self.logs.agents.keep_ids(&self.agents.id, self.time);
        }
        self.logs
            .places
            .record_occupancy(&self.scene.grid, &self.agents.x, &self.agents.y, self.time);
        arrived
    }

    /// Distance walked and the stuck-anchor of every agent. An agent still in its pre-movement
    /// time during this step (`step_began` is the time the step began) counts in neither the
    /// speeds nor the stuck test (its anchor follows it: others may push it).
    fn track_motion(&mut self, old_x: &[f32], old_y: &[f32], step_began: f64) {
        let a = &self.agents;
        let log = &mut self.logs.agents;
        debug_assert_eq!(log.ids, a.id, "one log row per agent, in the agents' order");
        for i in 0..a.len() {
            if step_began < a.start_time[i] as f64 {
                log.anchor[i] = (a.x[i], a.y[i], self.time);
                continue;
            }
            let step = (((a.x[i] - old_x[i]).powi(2) + (a.y[i] - old_y[i]).powi(2)) as f64).sqrt();
            log.walked[i] += step;
            let g = a.group[i] as usize;
            let ss = &mut self.logs.density.speed_sum[g];
            ss.0 += step / self.dt;
            ss.1 += 1;
            let (ax, ay, _) = log.anchor[i];
            if (((a.x[i] - ax).powi(2) + (a.y[i] - ay).powi(2)) as f64) > STUCK_DISTANCE * STUCK_DISTANCE {
                log.anchor[i] = (a.x[i], a.y[i], self.time);
            }
        }
    }

    /// Removes the agents who left by a goal of their group in this step (from `old_x, old_y`
    /// to where they stand: [`super::exits::Exits::arrival`]); returns how many.
    fn remove_arrivals(&mut self, old_x: &[f32], old_y: &[f32]) -> usize {
        let a = &self.agents;
        let walk = &self.walk;
        let mut keep = vec![true; a.len()];
        let mut count = 0;
        for i in 0..a.len() {
            let g = a.group[i] as usize;
            let from = crate::vec2::V2::new(old_x[i], old_y[i]);
            let to = crate::vec2::V2::new(a.x[i], a.y[i]);
            let open = |e: usize| self.planner.exit_open(g, e) && self.may_leave(i, e);
            let Some(exit) = walk
                .exits
                .arrival(&self.scene, walk.walls.as_ref(), g, from, to, open)
            else {
                continue;
            };
            self.arrivals.push(Arrival {
                id: a.id[i],
                group: a.group[i],
                exit,
                time: self.time,
            });
            keep[i] = false;
            count += 1;
        }
        if count > 0 {
            self.agents.retain(|i| keep[i]);
        }
        count
    }
}
