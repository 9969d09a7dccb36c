//! The checks and the building of a map's groups: walking speeds, colours, goals and spawns
//! and whether each spawn reaches a goal (the flood fill over free cells).

use super::{Checker, num, parse_color};
use crate::grid::{Dir, Grid};
use crate::map::format::SpawnSpec;
use crate::map::format::{DEFAULT_SPEED, GroupSpec, SpeedRange};
use crate::map::raster::default_width;
use crate::map::{COORD_LIMIT, MAX_PREMOVEMENT, MAX_RADIUS, MAX_WALK_SPEED, MIN_RADIUS};
use crate::scene::{Area, Group, Spawn};
use crate::schedule::{Source, SourceTimes};
use crate::speeds::{RimeaPopulation, SpeedDistribution};
use crate::text::{name_problem, quoted};
use ndarray::Array2;
use std::collections::VecDeque;

/// Display colours of groups without a `color`, by index (matplotlib's "tab10").
const PALETTE: [[u8; 3]; 10] = [
    [31, 119, 180],
    [255, 127, 14],
    [44, 160, 44],
    [214, 39, 40],
    [148, 103, 189],
    [140, 86, 75],
    [227, 119, 194],
    [127, 127, 127],
    [188, 189, 34],
    [23, 190, 207],
];

impl Checker<'_> {
    /// The distribution of a group's `speed` (at `at`) and its range `(min, max)`; errors for
    /// a half-given normal, a normal that cannot be drawn, an unknown RiMEA population or one
    /// given with a range of its own.
    pub(super) fn speed_distribution(&mut self, s: &SpeedRange, at: &str) -> (SpeedDistribution, (f64, f64)) {
        if let Some(name) = &s.rimea {
            let Some(population) = RimeaPopulation::from_name(name) else {
                self.push(
                    &format!("{at}.rimea"),
                    format!(
                        "{}: expected a RiMEA population: {}",
                        quoted(name),
                        RimeaPopulation::names().join(", ")
                    ),
                );
                return (SpeedDistribution::Uniform, (s.min, s.max));
            };
            let given = [
                ("min", s.min != DEFAULT_SPEED),
                ("max", s.max != DEFAULT_SPEED),
                ("mean", s.mean.is_some()),
                ("sd", s.sd.is_some()),
            ];
            for (key, given) in given {
                self.ensure(!given, &format!("{at}.{key}"), || {
                    format!(
                        "given with `rimea` {}: expected `rimea` alone (the population's table sets the speeds)",
                        quoted(name)
                    )
                });
            }
            return (SpeedDistribution::Rimea(population), population.range());
        }
        match (s.mean, s.sd) {
            (None, None) => (SpeedDistribution::Uniform, (s.min, s.max)),
            (Some(mean), Some(sd)) => {
                let ok = self.number(sd, &format!("{at}.sd"), |v| v > 0.0, "> 0")
                    & self.number(mean, &format!("{at}.mean"), |v| v > 0.0, "> 0");
                if ok && s.min <= s.max {
                    self.ensure((s.min..=s.max).contains(&mean), &format!("{at}.mean"), || {
                        format!(
                            "{} m/s: expected a mean inside [min, max] = [{}, {}] m/s (the draws are \
                             truncated to that range; the defaults of both are {} m/s)",
                            num(mean),
                            num(s.min),
                            num(s.max),
                            num(DEFAULT_SPEED)
                        )
                    });
                }
                (SpeedDistribution::Normal { mean, sd }, (s.min, s.max))
            }
            (Some(_), None) | (None, Some(_)) => {
                let missing = if s.mean.is_none() { "mean" } else { "sd" };
                self.push(
                    &format!("{at}.{missing}"),
                    "missing: a normal distribution needs both `mean` and `sd` (m/s)".to_string(),
                );
                (SpeedDistribution::Uniform, (s.min, s.max))
            }
        }
    }

    pub(super) fn group(
        &mut self,
        g: &GroupSpec,
        index: usize,
        at: &str,
        grid: Option<&Grid>,
        obstacle: Option<&Array2<bool>>,
    ) -> Option<Group> {
        let before = self.errors.len();
        self.ensure(!g.name.trim().is_empty(), &format!("{at}.name"), || {
            format!("{}: expected a non-empty name", quoted(&g.name))
        });
        if let Some(message) = name_problem(&g.name) {
            self.push(&format!("{at}.name"), message);
        }
        let color = match &g.color {
            None => PALETTE[index % PALETTE.len()],
            Some(s) => match parse_color(s) {
                Some(c) => c,
                None => {
                    self.push(
                        &format!("{at}.color"),
                        format!("{}: expected \"#rrggbb\" (hexadecimal)", quoted(s)),
                    );
                    [0, 0, 0]
                }
            },
        };
        let (speed_distribution, (speed_min, speed_max)) =
            self.speed_distribution(&g.speed, &format!("{at}.speed"));
        let speed_ok = g.speed.rimea.is_none()
            && self.number(g.speed.min, &format!("{at}.speed.min"), |v| v > 0.0, "> 0")
                & self.number(g.speed.max, &format!("{at}.speed.max"), |v| v > 0.0, "> 0");
        if speed_ok {
            self.ensure(g.speed.min <= g.speed.max, &format!("{at}.speed.max"), || {
                format!(
                    "{}: expected at least speed.min ({})",
                    num(g.speed.max),
                    num(g.speed.min)
                )
            });
            self.ensure(g.speed.max <= MAX_WALK_SPEED, &format!("{at}.speed.max"), || {
                format!(
                    "{} m/s: expected at most {} m/s",
                    num(g.speed.max),
                    num(MAX_WALK_SPEED)
                )
            });
        }
        self.ensure(
            g.radius.is_finite() && (MIN_RADIUS..=MAX_RADIUS).contains(&g.radius),
            &format!("{at}.radius"),
            || {
                format!(
                    "{} m: expected a body radius from {} to {} m",
                    num(g.radius),
                    num(MIN_RADIUS),
                    num(MAX_RADIUS)
                )
            },
        );
        if let Some(b) = &g.boids {
            self.boids(b, &format!("{at}.boids"));
        }
        if let Some(o) = &g.orca {
            self.orca(o, &format!("{at}.orca"));
        }
        // A flocking group (with boids) may have no goal: it swims about (a fish school).
        self.ensure(
            !g.goals.is_empty() || g.boids.is_some(),
            &format!("{at}.goals"),
            || "is empty: expected at least one goal area (only a group with boids may have none)".into(),
        );

        let mut goals = Vec::new();
        for (k, goal) in g.goals.iter().enumerate() {
            let at = format!("{at}.goals[{k}]");
            if let Some(message) = goal.name.as_deref().and_then(name_problem) {
                self.push(&format!("{at}.name"), message);
            }
            let shape = self.shape(goal, &at, false);
            let mut ok = true;
            if let Some(w) = goal.width {
                ok = self.ensure(
                    w.is_finite() && w > 0.0 && w <= COORD_LIMIT,
                    &format!("{at}.width"),
                    || {
                        format!(
                            "{} m: expected a width > 0 and at most {} m",
                            num(w),
                            num(COORD_LIMIT)
                        )
                    },
                );
            }
            let (Some(shape), Some(grid), Some(obstacle), true) = (shape, grid, obstacle, ok) else {
                continue;
            };
            let Some(mask) = self.area_mask(shape, grid, &at) else {
                continue;
            };
            let problem = crate::scene::goal_problem(&mask, obstacle);
            let raster_note = self.obstacle_raster.as_ref().map_or_else(String::new, |r| {
                format!(
                    " (the walls come from the raster {} of layers.obstacles: check its `range`, \
                     which pixels are walls, and that the goal lies in an opening of the picture)",
                    quoted(r)
                )
            });
            if let Some(problem) = problem {
                self.push(&at, format!("{problem}{raster_note}"));
            }
            if goal.closed {
                self.closed.push((index, k));
            }
            goals.push(Area {
                name: goal
                    .name
                    .clone()
                    .unwrap_or_else(|| format!("{} goal {k}", g.name)),
                mask,
                width: goal.width.unwrap_or_else(|| default_width(shape, grid)),
            });
        }

        let mut spawns = Vec::new();
        // The sources, `(index in the group's spawns, area)`, checked for a way out as spawns are.
        let mut source_areas = Vec::new();
        // The index in the group's `spawns` of each entry of `spawns`.
        let mut spawn_index = Vec::new();
        for (k, spawn) in g.spawns.iter().enumerate() {
            let at = format!("{at}.spawns[{k}]");
            if let Some(message) = spawn.name.as_deref().and_then(name_problem) {
                self.push(&format!("{at}.name"), message);
            }
            let shape = self.shape(spawn, &at, false);
            let premovement = spawn.premovement.map_or([0.0, 0.0], |p| [p.min, p.max]);
            if let Some(p) = spawn.premovement {
                let (min_at, max_at) = (format!("{at}.premovement.min"), format!("{at}.premovement.max"));
                let range = (0.0, MAX_PREMOVEMENT);
                let ok = self.number_within(p.min, &min_at, range, "seconds")
                    & self.number_within(p.max, &max_at, range, "seconds");
                if ok {
                    self.ensure(p.min <= p.max, &max_at, || {
                        format!(
                            "{} s: expected at least premovement.min ({} s)",
                            num(p.max),
                            num(p.min)
                        )
                    });
                }
            }
            let times = self.source_times(spawn, &at);
            let (Some(shape), Some(grid), Some(obstacle)) = (shape, grid, obstacle) else {
                continue;
            };
            let Some(mask) = self.area_mask(shape, grid, &at) else {
                continue;
            };
            let free = mask.cells().filter(|&rc| !obstacle[rc]).count();
            let name = spawn
                .name
                .clone()
                .unwrap_or_else(|| format!("{} spawn {k}", g.name));
            if let Some(times) = times {
                self.ensure(free > 0, &at, || {
                    format!(
                        "the source '{}' has no free cell: expected an area with at least one free cell",
                        crate::text::truncate_for_message(&name)
                    )
                });
                let area = Area {
                    name,
                    mask,
                    width: default_width(shape, grid),
                };
                source_areas.push((k, area.clone()));
                self.sources.push(Source {
                    group: index,
                    area,
                    times,
                    premovement,
                });
                continue;
            }
            let count = spawn.count.unwrap_or(0);
            self.ensure(count <= free, &format!("{at}.count"), || {
                // Say how many bodies fit, the number a user can act on; one agent per free cell
                // is the rule only where cells are larger than bodies.
                let name = crate::text::truncate_for_message(&name);
                let fit = crate::lattice::area_capacity(grid, &mask, obstacle, g.radius);
                let m2 = crate::lattice::square_metres(free as f64 * grid.cell_size * grid.cell_size);
                if fit > 0 && fit < free {
                    format!(
                        "{}: the area '{name}' ({m2} m² of free cells) holds at most {fit} agents of radius {} m \
                         without overlap: lower the count to {fit} or enlarge the area",
                        count,
                        num(g.radius)
                    )
                } else {
                    format!(
                        "{}: the area '{name}' ({m2} m², {free} free cells) takes at most {free} agents, one per \
                         free (non-obstacle) cell: lower the count to {free} or enlarge the area",
                        count,
                    )
                }
            });
            spawn_index.push(k);
            spawns.push(Spawn {
                area: Area {
                    name,
                    mask,
                    width: default_width(shape, grid),
                },
                count,
                premovement,
            });
        }
        if self.errors.len() != before {
            return None;
        }
        let (Some(grid), Some(obstacle)) = (grid, obstacle) else {
            return None;
        };

        // Every spawn area must reach a goal: flood fill from the free goal cells. A group
        // without goals (flocking only) has nowhere to reach.
        if !goals.is_empty() {
            let mut goal_mask = Array2::from_elem(grid.shape(), false);
            for a in &goals {
                a.mask.or_into(&mut goal_mask);
            }
            let reached = flood_fill(grid, obstacle, &goal_mask);
            let numbered = spawn_index.iter().zip(&spawns).map(|(&k, s)| (k, &s.area));
            for (k, area) in numbered.chain(source_areas.iter().map(|(k, a)| (*k, a))) {
                let ok = area.mask.cells().any(|rc| reached[rc]);
                self.ensure(ok, &format!("{at}.spawns[{k}]"), || {
                    format!(
                        "no goal of group {} can be reached from this area: expected a path over free \
                         cells (4-connected) to a goal cell",
                        quoted(&g.name)
                    )
                });
            }
        }
        (self.errors.len() == before).then(|| Group {
            name: g.name.clone(),
            color,
            goals,
            spawns,
            speed_min,
            speed_max,
            speed_distribution,
            radius: g.radius,
            boids: g.boids.clone(),
            orca: g.orca.clone().unwrap_or_default(),
        })
    }
}

impl Checker<'_> {
    /// The times of a spawn area that is a source (`rate` or `times`, at `at`), `None` for
    /// one that places a `count` at the start or whose source has a problem (recorded).
    fn source_times(&mut self, spawn: &SpawnSpec, at: &str) -> Option<SourceTimes> {
        let limit = (0.0, MAX_SOURCE_TIME);
        let rate_keys = [
            ("from", spawn.from.is_some()),
            ("until", spawn.until.is_some()),
            ("arrivals", spawn.arrivals.is_some()),
        ];
        match (spawn.rate, &spawn.times) {
            (None, None) => {
                for (key, given) in rate_keys {
                    self.ensure(!given, &format!("{at}.{key}"), || {
                        "given without `rate`: expected it only with a source's `rate`".to_string()
                    });
                }
                None
            }
            (Some(_), Some(_)) => {
                self.push(
                    &format!("{at}.times"),
                    "given with `rate`: expected either `rate` (with `from`, `until`) or `times`".into(),
                );
                None
            }
            (None, Some(times)) => {
                for (key, given) in rate_keys {
                    self.ensure(!given, &format!("{at}.{key}"), || {
                        "given with `times`: expected it only with a source's `rate`".to_string()
                    });
                }
                let before = self.errors.len();
                for (i, &t) in times.iter().enumerate() {
                    self.number_within(t, &format!("{at}.times[{i}]"), limit, "seconds");
                }
                if self.errors.len() != before {
                    return None;
                }
                let mut times = times.clone();
                times.sort_by(f64::total_cmp);
                Some(SourceTimes::Listed(times))
            }
            (Some(rate), None) => {
                let mut ok = self.number(rate, &format!("{at}.rate"), |v| v > 0.0, "> 0");
                ok &= self.ensure(rate <= MAX_SOURCE_RATE, &format!("{at}.rate"), || {
                    format!("{} persons/s: expected at most {MAX_SOURCE_RATE}", num(rate))
                });
                let from = spawn.from.unwrap_or(0.0);
                ok &= self.number_within(from, &format!("{at}.from"), limit, "seconds");
                let Some(until) = spawn.until else {
                    self.push(
                        &format!("{at}.until"),
                        "missing: a source's `rate` needs the end of its period, seconds".into(),
                    );
                    return None;
                };
                ok &= self.number_within(until, &format!("{at}.until"), limit, "seconds");
                if ok {
                    ok = self.ensure(until > from, &format!("{at}.until"), || {
                        format!("{} s: expected a time after `from` ({} s)", num(until), num(from))
                    });
                }
                ok.then(|| SourceTimes::Rate {
                    rate,
                    from,
                    until,
                    pattern: spawn.arrivals.unwrap_or_default(),
                })
            }
        }
    }
}

/// Latest time a source may bring walkers, seconds: a day, as for pre-movement times.
const MAX_SOURCE_TIME: f64 = MAX_PREMOVEMENT;

/// Highest rate of a source, persons per second: a thousand a second is beyond any door or
/// platform, and keeps a day's source within memory (86.4 million walkers at most).
const MAX_SOURCE_RATE: f64 = 1000.0;

/// Cells connected to a free cell of `sources` by 4-connected steps over free cells.
pub(super) fn flood_fill(grid: &Grid, obstacle: &Array2<bool>, sources: &Array2<bool>) -> Array2<bool> {
    flood_from(grid, obstacle, sources, |_, to| !obstacle[to])
}

/// Cells connected to a free cell of `sources` by 4-connected steps from a cell to a neighbour
/// that `may_step(from, to)` allows.
pub(crate) fn flood_from(
    grid: &Grid,
    obstacle: &Array2<bool>,
    sources: &Array2<bool>,
    may_step: impl Fn((usize, usize), (usize, usize)) -> bool,
) -> Array2<bool> {
    let mut reached = Array2::from_elem(grid.shape(), false);
    let mut queue = VecDeque::new();
    for ((r, c), &s) in sources.indexed_iter() {
        if s && !obstacle[[r, c]] {
            reached[[r, c]] = true;
            queue.push_back((r, c));
        }
    }
    while let Some((r, c)) = queue.pop_front() {
        for d in Dir::ALL {
            if let Some(to) = grid.neighbor(r, c, d)
                && !reached[to]
                && may_step((r, c), to)
            {
                reached[to] = true;
                queue.push_back(to);
            }
        }
    }
    reached
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flood_fill_stops_at_walls_and_ignores_diagonals() {
        let g = Grid::new(5, 3, 1.0);
        let mut obstacle = Array2::from_elem(g.shape(), false);
        // A wall at column 2, and a diagonal-only gap is not a gap.
        for r in 0..3 {
            obstacle[[r, 2]] = true;
        }
        let mut src = Array2::from_elem(g.shape(), false);
        src[[0, 0]] = true;
        let reached = flood_fill(&g, &obstacle, &src);
        assert_eq!(reached.iter().filter(|&&b| b).count(), 6);
        assert!(!reached[[0, 3]]);
        obstacle[[1, 2]] = false;
        let reached = flood_fill(&g, &obstacle, &src);
        assert_eq!(reached.iter().filter(|&&b| b).count(), 13);
        // A blocked source reaches nothing.
        obstacle[[0, 0]] = true;
        assert_eq!(flood_fill(&g, &obstacle, &src).iter().filter(|&&b| b).count(), 0);
    }
}
