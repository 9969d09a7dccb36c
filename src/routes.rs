//! Routes, fixed exit shares and speed regions of a scene (a [`Schedule`](crate::schedule::Schedule)'s
//! [`Routes`]): the stages a group walks through before its exits (waypoints and waiting areas,
//! as JuPedSim's journeys), the share of a group that takes each exit, the regions that scale
//! the walking speed, and the map's events that release a waiting area or change a region. The
//! map's `"route"`, `"exit_shares"`, `"regions"` and their `"events"` compile to it; the
//! simulation applies it step by step (`crate::sim::routes`).

use crate::error::Error;
use crate::scene::CellMask;

/// Largest speed factor of a region: ten times the walking speed (a moving walkway at most).
pub const MAX_SPEED_FACTOR: f64 = 10.0;

/// A stage area: a waypoint or a waiting area, one potential of its own in the planner. Stages
/// of the same name in several routes are one stage.
#[derive(Clone, Debug, PartialEq)]
pub struct Stage {
    /// Name (the map's `name`, or "`<group> stage <k>`").
    pub name: String,
    /// The cells of the area: a walker reaches the stage when its centre stands in one.
    pub mask: CellMask,
}

/// How long a walker stays in a waiting area.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Wait {
    /// At least this long from its arrival in the area, seconds.
    pub seconds: f64,
    /// And until the area is released (by a map event or `Simulation::release`).
    pub until_released: bool,
}

/// One step of a group's route: a stage, passed through (a waypoint) or waited in.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RouteStep {
    /// Index of the stage in [`Routes::stages`].
    pub stage: usize,
    /// `None` for a waypoint.
    pub wait: Option<Wait>,
}

/// A region whose walking speed is scaled (smoke, stairs, a slow zone).
#[derive(Clone, Debug, PartialEq)]
pub struct Region {
    /// Name (the map's `name`, or "`region <k>`").
    pub name: String,
    /// The cells of the region.
    pub mask: CellMask,
    /// Factor on the walking speed and on the speed field inside, in `(0, MAX_SPEED_FACTOR]`.
    pub speed_factor: f64,
    /// Discomfort added to the unit cost of the faces leaving the region's cells.
    pub discomfort: f64,
}

/// A waiting area released, or a region changed, at a time of the run.
#[derive(Clone, Debug, PartialEq)]
pub enum RouteEventKind {
    /// Every waiting area of this stage name lets its walkers go (once their seconds are
    /// over) from then on.
    Release(String),
    /// The region of this name takes these values.
    Region {
        /// The region's name.
        name: String,
        /// Its new speed factor (`None`: unchanged).
        speed_factor: Option<f64>,
        /// Its new discomfort (`None`: unchanged).
        discomfort: Option<f64>,
    },
}

/// One route event of the map.
#[derive(Clone, Debug, PartialEq)]
pub struct RouteEvent {
    /// Simulated time, seconds: applies at the start of the first step that begins at or after it.
    pub time: f64,
    /// What happens.
    pub kind: RouteEventKind,
}

/// A scene's routes, exit shares, regions and their events (empty for a scene without).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Routes {
    /// Every stage area, each with its own potential.
    pub stages: Vec<Stage>,
    /// Per group, its route (empty: straight to the exits). Empty when no group has one.
    pub routes: Vec<Vec<RouteStep>>,
    /// Per group, the share of its walkers that takes each of its goals (summing to 1), or
    /// `None` for the quickest exit. Empty when no group has shares.
    pub exit_shares: Vec<Option<Vec<f64>>>,
    /// The regions with a speed factor or a discomfort.
    pub regions: Vec<Region>,
    /// Releases and region changes, in the map's order (applied in time order).
    pub events: Vec<RouteEvent>,
}

impl Routes {
    /// True when there is nothing of it: no stage, route, share, region or event.
    pub fn is_empty(&self) -> bool {
        self.stages.is_empty()
            && self.routes.iter().all(Vec::is_empty)
            && self.exit_shares.iter().all(Option::is_none)
            && self.regions.is_empty()
            && self.events.is_empty()
    }

    /// The route of group `g` (empty without one).
    pub fn route(&self, g: usize) -> &[RouteStep] {
        self.routes.get(g).map_or(&[], Vec::as_slice)
    }

    /// The exit shares of group `g`, when it has them.
    pub fn shares(&self, g: usize) -> Option<&[f64]> {
        self.exit_shares.get(g).and_then(|s| s.as_deref())
    }

    /// The index of the stage named `name`.
    pub fn stage_named(&self, name: &str) -> Option<usize> {
        self.stages.iter().position(|s| s.name == name)
    }

    /// The index of the region named `name`.
    pub fn region_named(&self, name: &str) -> Option<usize> {
        self.regions.iter().position(|r| r.name == name)
    }
}

impl Routes {
    /// What makes these routes unfit for a scene of grid shape `shape` and `groups` (named
    /// `file`): a stage's or region's cells on another grid, a route step naming no stage,
    /// shares not one per goal, more routes or shares than groups.
    pub fn problems(&self, file: &str, shape: (usize, usize), groups: &[crate::scene::Group]) -> Vec<Error> {
        let mut errors = Vec::new();
        let mut bad = |at: String, message: String| errors.push(Error::invalid(file, at, message));
        let masks = (self.stages.iter().enumerate())
            .map(|(k, s)| (format!("schedule.routes.stages[{k}].mask"), &s.mask));
        let regions = (self.regions.iter().enumerate())
            .map(|(k, r)| (format!("schedule.routes.regions[{k}].mask"), &r.mask));
        for (at, mask) in masks.chain(regions) {
            if mask.shape() != shape {
                bad(
                    at,
                    format!("shape {:?}: expected the grid's {shape:?}", mask.shape()),
                );
            }
        }
        for (at, len) in [
            ("routes", self.routes.len()),
            ("exit_shares", self.exit_shares.len()),
        ] {
            if len > groups.len() {
                bad(
                    format!("schedule.routes.{at}"),
                    format!("{len} entries: expected at most one per group ({})", groups.len()),
                );
            }
        }
        for (g, route) in self.routes.iter().enumerate() {
            for (k, step) in route.iter().enumerate() {
                if step.stage >= self.stages.len() {
                    bad(
                        format!("schedule.routes.routes[{g}][{k}].stage"),
                        format!(
                            "{}: expected a stage index below {}",
                            step.stage,
                            self.stages.len()
                        ),
                    );
                }
            }
        }
        for (g, shares) in self.exit_shares.iter().enumerate() {
            let goals = groups.get(g).map_or(0, |group| group.goals.len());
            if let Some(shares) = shares.as_ref().filter(|s| s.len() != goals) {
                bad(
                    format!("schedule.routes.exit_shares[{g}]"),
                    format!("{} shares: expected one per goal ({goals})", shares.len()),
                );
            }
        }
        errors
    }
}

/// The exit a share-drawn `u` in `[0, 1)` picks from `shares` (cumulative; the last exit for
/// rounding at the top).
pub fn pick_share(shares: &[f64], u: f64) -> usize {
    let mut sum = 0.0;
    for (k, &s) in shares.iter().enumerate() {
        sum += s;
        if u < sum {
            return k;
        }
    }
    shares.len().saturating_sub(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_unfit_for_the_scene_are_named() {
        let routes = Routes {
            stages: vec![Stage {
                name: "gate".into(),
                mask: CellMask::empty((2, 2)),
            }],
            routes: vec![vec![RouteStep { stage: 3, wait: None }]],
            exit_shares: vec![Some(vec![1.0])],
            ..Routes::default()
        };
        let text: Vec<String> = routes
            .problems("m", (4, 4), &[])
            .iter()
            .map(|e| e.to_string())
            .collect();
        let expected = [
            "m: schedule.routes.stages[0].mask: shape (2, 2): expected the grid's (4, 4)",
            "m: schedule.routes.routes: 1 entries: expected at most one per group (0)",
            "m: schedule.routes.exit_shares: 1 entries: expected at most one per group (0)",
            "m: schedule.routes.routes[0][0].stage: 3: expected a stage index below 1",
            "m: schedule.routes.exit_shares[0]: 1 shares: expected one per goal (0)",
        ];
        assert_eq!(text, expected);
        assert!(Routes::default().problems("m", (4, 4), &[]).is_empty());
    }

    #[test]
    fn shares_pick_by_cumulative_sum() {
        let s = [0.3, 0.7];
        assert_eq!(pick_share(&s, 0.0), 0);
        assert_eq!(pick_share(&s, 0.2999), 0);
        assert_eq!(pick_share(&s, 0.3), 1);
        assert_eq!(pick_share(&s, 0.99999), 1);
        assert_eq!(pick_share(&s, 1.0), 1);
    }
}
