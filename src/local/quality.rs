//! Quality figures of a crowd step (SPEC §5): collisions (pairs of agents closer than the sum of
//! their radii, found with the bin grid) with their mean and largest depth, and jams (agents
//! that want to move but have not moved for longer than a time T).

use crate::agents::Agents;
use crate::neighbors::NeighborGrid;
use crate::vec2::V2;
use rayon::prelude::*;

/// The collision grid has at most this many bins along an axis: caps its memory when agents
/// are spread over a huge area (bins then grow, queries stay correct).
const MAX_COLLISION_BINS_PER_AXIS: f32 = 2048.0;

/// Default preferred speed (m/s) above which an agent "wants to move": well below any walking
/// speed (f_min is 0.1 m/s at the steepest slope) yet above round-off.
pub const DEFAULT_WANT_SPEED: f32 = 0.05;

/// Default distance (m) an agent must cover to count as moving: about one body radius, so
/// jostling in place is still a jam.
pub const DEFAULT_MOVE_DISTANCE: f32 = 0.25;

/// Default jam time T (s): a walker stuck this long in a free-flowing crowd is a deadlock, not
/// queueing at a door (pedestrian flow at a 1 m exit is about 1.3 persons/s).
pub const DEFAULT_JAM_SECONDS: f32 = 5.0;

/// Collisions at one instant.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CollisionStats {
    /// Pairs closer than the sum of their radii by more than the counter's slack (each pair
    /// once; with no slack, every pair closer than the sum of their radii).
    pub pairs: usize,
    /// Pairs closer than the sum of their radii by no more than the slack: bodies in contact,
    /// not counted in `pairs` (always 0 with no slack).
    pub contacts: usize,
    /// Mean penetration depth `r_i + r_j - d` of those pairs, m (0 when none).
    pub mean_depth: f32,
    /// Largest penetration depth, m (0 when none).
    pub max_depth: f32,
}

/// Counts collisions with its own bin grid (reused across calls).
#[derive(Clone, Debug, Default)]
pub struct CollisionCounter {
    grid: NeighborGrid,
    per_agent: Vec<(u32, u32, f64, f32)>,
    slack: f32,
}

impl CollisionCounter {
    /// A counter for which a pair overlapping by at most `slack` times the sum of its radii is
    /// a contact, not a collision (the simulation's separation leaves pairs within its own
    /// slack, [`crate::sim::SEPARATION_SLACK`]). The default counter has no slack.
    pub fn with_slack(slack: f64) -> Self {
        Self {
            slack: slack.clamp(0.0, 1.0) as f32,
            ..Self::default()
        }
    }

    /// Collisions among `agents` now. Deterministic: per-agent figures are summed in agent
    /// order.
    pub fn count(&mut self, agents: &Agents) -> CollisionStats {
        let n = agents.len();
        if n < 2 {
            return CollisionStats::default();
        }
        let finite_max = |v: &[f32]| v.iter().copied().filter(|x| x.is_finite()).fold(0.0f32, f32::max);
        let r_max = finite_max(&agents.radius);
        let (w, h) = (finite_max(&agents.x) + 1.0, finite_max(&agents.y) + 1.0);
        let bin = (2.0 * r_max)
            .max(w.max(h) / MAX_COLLISION_BINS_PER_AXIS)
            .max(1e-3);
        self.grid.reshape(w, h, bin);
        self.grid.rebuild(&agents.x, &agents.y);
        let grid = &self.grid;
        self.per_agent.resize(n, (0, 0, 0.0, 0.0));
        let slack = self.slack;
        self.per_agent.par_iter_mut().enumerate().for_each(|(i, out)| {
            let p = V2::new(agents.x[i], agents.y[i]);
            let mut acc = (0u32, 0u32, 0.0f64, 0.0f32);
            grid.for_each_near(p.x, p.y, |j| {
                let j = j as usize;
                if j <= i {
                    return;
                }
                let r = agents.radius[i] + agents.radius[j];
                let d = (V2::new(agents.x[j], agents.y[j]) - p).len();
                if d < r {
                    if r - d <= slack * r {
                        acc.1 += 1;
                        return;
                    }
                    acc.0 += 1;
                    acc.2 += (r - d) as f64;
                    acc.3 = acc.3.max(r - d);
                }
            });
            *out = acc;
        });
        let (mut pairs, mut contacts, mut sum, mut max) = (0usize, 0usize, 0.0f64, 0.0f32);
        for &(c, t, s, m) in &self.per_agent {
            pairs += c as usize;
            contacts += t as usize;
            sum += s;
            max = max.max(m);
        }
        CollisionStats {
            pairs,
            contacts,
            mean_depth: if pairs > 0 {
                (sum / pairs as f64) as f32
            } else {
                0.0
            },
            max_depth: max,
        }
    }
}

/// Jams at one instant.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct JamStats {
    /// Agents that want to move and have stood still (moved less than the move distance) for
    /// longer than the jam time.
    pub jammed: usize,
    /// Longest current stand-still of an agent that wants to move, s.
    pub longest_s: f32,
    /// Longest stand-still seen since the tracker started, s.
    pub worst_s: f32,
}

#[derive(Clone, Copy, Debug, Default)]
struct JamState {
    anchor: V2,
    still_for: f32,
    seen: bool,
}

/// Tracks, per agent id, how long each agent that wants to move has stayed within
/// `move_distance` of where it last moved. Update it once per step. It holds one state per
/// agent of the last update, so agents that leave (and ids that come and go over a long run)
/// take no memory.
#[derive(Clone, Debug)]
pub struct JamTracker {
    /// Preferred speed (m/s) above which an agent wants to move.
    pub want_speed: f32,
    /// Distance (m) that counts as having moved.
    pub move_distance: f32,
    /// Jam time T (s).
    pub jam_seconds: f32,
    /// The ids of the last update, in its order, and each one's state.
    ids: Vec<u32>,
    state: Vec<JamState>,
    /// The next update's, swapped in at its end (kept to reuse its memory).
    next_ids: Vec<u32>,
    next_state: Vec<JamState>,
    worst: f32,
}

impl Default for JamTracker {
    fn default() -> Self {
        Self::new(DEFAULT_WANT_SPEED, DEFAULT_MOVE_DISTANCE, DEFAULT_JAM_SECONDS)
    }
}

impl JamTracker {
    /// A tracker with the given thresholds.
    pub fn new(want_speed: f32, move_distance: f32, jam_seconds: f32) -> Self {
        Self {
            want_speed,
            move_distance,
            jam_seconds,
            ids: Vec::new(),
            state: Vec::new(),
            next_ids: Vec::new(),
            next_state: Vec::new(),
            worst: 0.0,
        }
    }

    /// The number of agents the tracker holds a state for (those of the last update).
    pub fn tracked(&self) -> usize {
        self.ids.len()
    }

    /// Records one step of `dt` seconds: `agents` after the step, `preferred` their preferred
    /// velocities (index `i` is agent `i`; missing entries count as not wanting to move). An
    /// agent keeps its state from one update to the next while the ids keep their order
    /// (a simulation's agents are in ascending id order); an id not found starts afresh.
    pub fn update(&mut self, agents: &Agents, preferred: &[[f32; 2]], dt: f32) -> JamStats {
        self.next_ids.clear();
        self.next_state.clear();
        let mut k = 0;
        let (mut jammed, mut longest) = (0usize, 0.0f32);
        for i in 0..agents.len() {
            let id = agents.id[i];
            let mut found = None;
            while k < self.ids.len() {
                let old = self.ids[k];
                k += 1;
                if old == id {
                    found = Some(self.state[k - 1]);
                    break;
                }
                if old > id {
                    k -= 1;
                    break;
                }
            }
            let mut s = found.unwrap_or_default();
            let p = V2::new(agents.x[i], agents.y[i]);
            let want = preferred
                .get(i)
                .is_some_and(|v| V2::new(v[0], v[1]).len() > self.want_speed);
            if !s.seen || !want || (p - s.anchor).len() >= self.move_distance {
                s = JamState {
                    anchor: p,
                    still_for: 0.0,
                    seen: true,
                };
            } else {
                s.still_for += dt;
                longest = longest.max(s.still_for);
                if s.still_for > self.jam_seconds {
                    jammed += 1;
                }
            }
            self.next_ids.push(id);
            self.next_state.push(s);
        }
        std::mem::swap(&mut self.ids, &mut self.next_ids);
        std::mem::swap(&mut self.state, &mut self.next_state);
        self.worst = self.worst.max(longest);
        JamStats {
            jammed,
            longest_s: longest,
            worst_s: self.worst,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn collisions_counted_once_with_depth() {
        let mut a = Agents::default();
        a.push(0, 1.0, 1.0, 0, 0.3, 1.0);
        a.push(1, 1.4, 1.0, 0, 0.3, 1.0); // overlaps 0 by 0.2
        a.push(2, 3.0, 1.0, 0, 0.3, 1.0); // alone
        a.push(3, 3.5, 1.0, 0, 0.2, 1.0); // touches 2 at 0.5 = 0.3 + 0.2: not closer
        let c = CollisionCounter::default().count(&a);
        assert_eq!((c.pairs, c.contacts), (1, 0));
        assert!((c.mean_depth - 0.2).abs() < 1e-5 && (c.max_depth - 0.2).abs() < 1e-5);
    }

    #[test]
    fn overlaps_within_the_slack_are_contacts() {
        let mut a = Agents::default();
        a.push(0, 1.0, 1.0, 0, 0.25, 1.0);
        a.push(1, 1.497, 1.0, 0, 0.25, 1.0); // 3 mm deep: within 1 % of 0.5 m
        a.push(2, 3.0, 1.0, 0, 0.25, 1.0);
        a.push(3, 3.49, 1.0, 0, 0.25, 1.0); // 10 mm deep: beyond it
        let strict = CollisionCounter::default().count(&a);
        assert_eq!((strict.pairs, strict.contacts), (2, 0));
        let c = CollisionCounter::with_slack(0.01).count(&a);
        assert_eq!((c.pairs, c.contacts), (1, 1));
        assert!((c.max_depth - 0.01).abs() < 1e-4, "{c:?}");
    }

    /// `n` agents of random radii at random points of a `side` x `side` square, and the pairs
    /// closer than the sum of their radii, counted pair by pair.
    fn random_crowd(n: u32, side: f32, seed: u32) -> (Agents, usize) {
        let mut a = Agents::default();
        let mut s = seed;
        let mut rnd = || {
            s = s.wrapping_mul(1664525).wrapping_add(1013904223);
            (s >> 8) as f32 / (1u32 << 24) as f32
        };
        for i in 0..n {
            a.push(i, rnd() * side, rnd() * side, 0, 0.1 + 0.3 * rnd(), 1.0);
        }
        let mut brute = 0;
        for i in 0..a.len() {
            for j in i + 1..a.len() {
                let d = ((a.x[i] - a.x[j]).powi(2) + (a.y[i] - a.y[j]).powi(2)).sqrt();
                brute += (d < a.radius[i] + a.radius[j]) as usize;
            }
        }
        (a, brute)
    }

    #[test]
    fn collisions_match_all_pairs_on_random_points() {
        let (a, brute) = random_crowd(400, 20.0, 12345);
        assert!(brute > 10);
        assert_eq!(CollisionCounter::default().count(&a).pairs, brute);
    }

    /// One counter, its bin grid reused, over crowds of other sizes and extents (larger, then
    /// smaller, then larger again): every count is the pair-by-pair one.
    #[test]
    fn a_reused_counter_counts_each_crowd_afresh() {
        let mut counter = CollisionCounter::default();
        for (k, (n, side)) in [(400, 20.0), (600, 60.0), (50, 4.0), (300, 15.0)]
            .into_iter()
            .enumerate()
        {
            let (a, brute) = random_crowd(n, side, 777 + k as u32);
            assert!(brute > 5, "crowd {k}: {brute} pairs");
            assert_eq!(counter.count(&a).pairs, brute, "crowd {k}");
        }
    }

    #[test]
    fn jam_needs_wanting_and_standing_longer_than_t() {
        let mut a = Agents::default();
        a.push(7, 1.0, 1.0, 0, 0.3, 1.0); // wants to move, stuck
        a.push(3, 5.0, 1.0, 0, 0.3, 1.0); // does not want to move
        a.push(9, 9.0, 1.0, 0, 0.3, 1.0); // moves
        let mut t = JamTracker::new(0.05, 0.25, 1.0);
        let pref = [[1.0, 0.0], [0.0, 0.0], [1.0, 0.0]];
        let mut last = JamStats::default();
        for _ in 0..15 {
            a.x[2] += 0.1;
            last = t.update(&a, &pref, 0.1);
        }
        assert_eq!(last.jammed, 1, "{last:?}");
        assert!((last.longest_s - 1.4).abs() < 1e-4, "{last:?}");
        // Moving the stuck one resets it.
        a.x[0] += 0.5;
        let s = t.update(&a, &pref, 0.1);
        assert_eq!(s.jammed, 0);
        assert!((s.worst_s - 1.4).abs() < 1e-4);
    }
}
