//! The checks and the building of a map's routes, exit shares, speed regions and the events
//! that release a waiting area or change a region ([`crate::routes::Routes`]).

use super::{Checker, MAX_EVENT_TIME, num};
use crate::grid::Grid;
use crate::map::format::{EventSpec, GroupSpec, MapFile, StageArea, WaitUntil};
use crate::routes::{MAX_SPEED_FACTOR, Region, RouteEvent, RouteEventKind, RouteStep, Routes, Stage, Wait};
use crate::scene::goal_problem;
use crate::text::{name_problem, quoted};
use ndarray::Array2;

/// Exit shares must sum to 1 within this.
const SHARE_SUM_SLACK: f64 = 1e-6;

impl Checker<'_> {
    /// The map's routes, exit shares, regions and route events, each problem with its path.
    pub(super) fn routes(
        &mut self,
        map: &MapFile,
        grid: Option<&Grid>,
        obstacle: Option<&Array2<bool>>,
    ) -> Routes {
        let mut routes = Routes::default();
        // 1. The stages given with a shape, in the map's order; a named one once.
        let mut shaped: Vec<(String, String)> = Vec::new();
        for (i, g) in map.groups.iter().enumerate() {
            for (k, s) in g.route.iter().enumerate() {
                let at = format!("groups[{i}].route[{k}]");
                let Some((area, key, _)) = self.stage_area(s.waypoint.as_ref(), s.wait.as_ref(), &at) else {
                    continue;
                };
                let at = format!("{at}.{key}");
                if let Some(message) = area.name.as_deref().and_then(name_problem) {
                    self.push(&format!("{at}.name"), message);
                }
                if area.rect.is_none() && area.circle.is_none() && area.polygon.is_none() {
                    if area.name.is_none() {
                        self.push(
                            &at,
                            "has neither a shape nor a name: expected rect, circle or polygon, or \
                             the name of a stage given with its shape elsewhere"
                                .into(),
                        );
                    }
                    continue;
                }
                let name = area
                    .name
                    .clone()
                    .unwrap_or_else(|| format!("{} stage {k}", g.name));
                if let Some((_, first)) = shaped.iter().find(|(n, _)| *n == name) {
                    self.push(
                        &format!("{at}.name"),
                        format!(
                            "{}: a stage of this name has its shape at {first} already: expected \
                             the name alone here, or another name",
                            quoted(&name)
                        ),
                    );
                    continue;
                }
                shaped.push((name.clone(), at.clone()));
                let Some(shape) = self.shape(area, &at, false) else {
                    continue;
                };
                let (Some(grid), Some(obstacle)) = (grid, obstacle) else {
                    continue;
                };
                let Some(mask) = self.area_mask(shape, grid, &at) else {
                    continue;
                };
                if let Some(problem) = goal_problem(&mask, obstacle) {
                    self.push(&at, problem.replace("a goal", "a stage"));
                }
                routes.stages.push(Stage { name, mask });
            }
        }
        // 2. Each group's route, by stage index.
        let names: Vec<&str> = shaped.iter().map(|(n, _)| n.as_str()).collect();
        let mut any_route = false;
        let mut group_routes = Vec::new();
        for (i, g) in map.groups.iter().enumerate() {
            let mut steps = Vec::new();
            for (k, s) in g.route.iter().enumerate() {
                let at = format!("groups[{i}].route[{k}]");
                // The first pass reported a stage with neither or both keys.
                let (area, key, waits) = match (&s.waypoint, &s.wait) {
                    (Some(a), None) => (a, "waypoint", false),
                    (None, Some(a)) => (a, "wait", true),
                    _ => continue,
                };
                let at = format!("{at}.{key}");
                let wait = self.stage_wait(area, waits, &at);
                let has_shape = area.rect.is_some() || area.circle.is_some() || area.polygon.is_some();
                let name = match (&area.name, has_shape) {
                    (Some(n), _) => n.clone(),
                    (None, true) => format!("{} stage {k}", g.name),
                    (None, false) => continue,
                };
                let Some(stage) = names.iter().position(|n| *n == name) else {
                    let listed: Vec<String> = names.iter().take(20).map(|n| quoted(n)).collect();
                    self.push(
                        &format!("{at}.name"),
                        format!(
                            "{}: expected the name of a stage given with its shape: {}",
                            quoted(&name),
                            if listed.is_empty() {
                                "(none)".to_string()
                            } else {
                                listed.join(", ")
                            }
                        ),
                    );
                    continue;
                };
                steps.push(RouteStep { stage, wait });
            }
            any_route |= !steps.is_empty();
            group_routes.push(steps);
        }
        if any_route {
            routes.routes = group_routes;
        }
        // 3. Exit shares.
        let shares: Vec<Option<Vec<f64>>> = map
            .groups
            .iter()
            .enumerate()
            .map(|(i, g)| self.exit_shares(g, &format!("groups[{i}].exit_shares")))
            .collect();
        if shares.iter().any(Option::is_some) {
            routes.exit_shares = shares;
        }
        // 4. Regions.
        for (k, r) in map.regions.iter().enumerate() {
            let at = format!("regions[{k}]");
            if let Some(message) = r.name.as_deref().and_then(name_problem) {
                self.push(&format!("{at}.name"), message);
            }
            let name = r.name.clone().unwrap_or_else(|| format!("region {k}"));
            if map.regions[..k]
                .iter()
                .enumerate()
                .any(|(j, o)| o.name.clone().unwrap_or_else(|| format!("region {j}")) == name)
            {
                self.push(
                    &format!("{at}.name"),
                    format!(
                        "{}: used by an earlier region: expected unique names",
                        quoted(&name)
                    ),
                );
            }
            let ok = self.speed_factor(r.speed_factor, &format!("{at}.speed_factor"))
                & self.discomfort_value(r.discomfort, &format!("{at}.discomfort"));
            let Some(shape) = self.shape(r, &at, false) else {
                continue;
            };
            let Some(grid) = grid else {
                continue;
            };
            let Some(mask) = self.area_mask(shape, grid, &at) else {
                continue;
            };
            if ok {
                routes.regions.push(Region {
                    name,
                    mask,
                    speed_factor: r.speed_factor,
                    discomfort: r.discomfort,
                });
            }
        }
        // 5. The events that release a waiting area or change a region.
        let region_names: Vec<String> = (map.regions.iter().enumerate())
            .map(|(k, r)| r.name.clone().unwrap_or_else(|| format!("region {k}")))
            .collect();
        let wait_names: Vec<String> = (map.groups.iter())
            .flat_map(|g| g.route.iter().filter_map(|s| s.wait.as_ref()?.name.clone()))
            .collect();
        for (i, e) in map.events.iter().enumerate() {
            if let Some(event) = self.route_event(e, &format!("events[{i}]"), &wait_names, &region_names) {
                routes.events.push(event);
            }
        }
        routes
    }

    /// The area of a stage and its key, `None` (and a problem) unless exactly one of
    /// `waypoint` and `wait` is given.
    fn stage_area<'s>(
        &mut self,
        waypoint: Option<&'s StageArea>,
        wait: Option<&'s StageArea>,
        at: &str,
    ) -> Option<(&'s StageArea, &'static str, bool)> {
        match (waypoint, wait) {
            (Some(a), None) => Some((a, "waypoint", false)),
            (None, Some(a)) => Some((a, "wait", true)),
            (both, _) => {
                let problem = if both.is_some() {
                    "gives both `waypoint` and `wait`"
                } else {
                    "gives neither `waypoint` nor `wait`"
                };
                self.push(at, format!("{problem}: expected one of them"));
                None
            }
        }
    }

    /// A stage's waiting: `None` for a waypoint (which may not give `seconds` or `until`).
    fn stage_wait(&mut self, area: &StageArea, waits: bool, at: &str) -> Option<Wait> {
        if !waits {
            for (key, given) in [
                ("seconds", area.seconds.is_some()),
                ("until", area.until.is_some()),
            ] {
                if given {
                    self.push(
                        &format!("{at}.{key}"),
                        format!("is given on a waypoint: expected `{key}` only on a `wait` stage"),
                    );
                }
            }
            return None;
        }
        let seconds = area.seconds.unwrap_or(0.0);
        let ok = self.number_within(
            seconds,
            &format!("{at}.seconds"),
            (0.0, MAX_EVENT_TIME),
            "seconds",
        );
        let until_released = area.until == Some(WaitUntil::Released);
        if until_released && area.name.is_none() {
            self.push(
                &format!("{at}.until"),
                "\"released\" on a waiting area without a name: expected a `name` for the \
                 events that release it"
                    .into(),
            );
        }
        ok.then_some(Wait {
            seconds,
            until_released,
        })
    }

    /// A group's `exit_shares` per goal, in the goals' order: every key the name of one of its
    /// goals, every share in [0, 1], summing to 1.
    fn exit_shares(&mut self, g: &GroupSpec, at: &str) -> Option<Vec<f64>> {
        let given = g.exit_shares.as_ref()?;
        let names: Vec<String> = (g.goals.iter().enumerate())
            .map(|(k, goal)| {
                goal.name
                    .clone()
                    .unwrap_or_else(|| format!("{} goal {k}", g.name))
            })
            .collect();
        let mut shares = vec![0.0; names.len()];
        let mut ok = true;
        for (name, &share) in given {
            let here = format!("{at}.{name}");
            ok &= self.number_within(share, &here, (0.0, 1.0), "(a share)");
            match names.iter().position(|n| n == name) {
                Some(k) => shares[k] = share,
                None => {
                    let listed: Vec<String> = names.iter().map(|n| quoted(n)).collect();
                    self.push(
                        &here,
                        format!(
                            "{}: expected the name of one of the group's goals: {}",
                            quoted(name),
                            listed.join(", ")
                        ),
                    );
                    ok = false;
                }
            }
        }
        let sum: f64 = given.values().sum();
        if ok && (sum - 1.0).abs() > SHARE_SUM_SLACK {
            // Rounded to show 0.9 for 0.3 + 0.6, not its binary neighbour.
            let shown = (sum * 1e9).round() / 1e9;
            self.push(at, format!("shares sum to {}: expected 1", num(shown)));
            ok = false;
        }
        ok.then_some(shares)
    }

    fn speed_factor(&mut self, v: f64, at: &str) -> bool {
        let ok = v.is_finite() && v > 0.0 && v <= MAX_SPEED_FACTOR;
        self.ensure(ok, at, || {
            format!(
                "{}: expected a speed factor above 0 and at most {MAX_SPEED_FACTOR}",
                num(v)
            )
        })
    }

    fn discomfort_value(&mut self, v: f64, at: &str) -> bool {
        self.number(v, at, |v| v >= 0.0, ">= 0")
    }

    /// An event that releases a waiting area or changes a region (`None` for the exits' events,
    /// checked in `events`, and for a problem).
    fn route_event(
        &mut self,
        e: &EventSpec,
        at: &str,
        wait_names: &[String],
        region_names: &[String],
    ) -> Option<RouteEvent> {
        let keys = [
            ("open", e.open.is_some()),
            ("close", e.close.is_some()),
            ("release", e.release.is_some()),
            ("region", e.region.is_some()),
        ];
        let given: Vec<&str> = keys.iter().filter(|k| k.1).map(|k| k.0).collect();
        let route_keys = e.release.is_some() || e.region.is_some();
        if route_keys && given.len() > 1 {
            self.push(
                at,
                format!(
                    "gives {}: expected exactly one of `open`, `close`, `release`, `region`",
                    given.join(" and ")
                ),
            );
            return None;
        }
        if e.region.is_none() {
            for (key, v) in [("speed_factor", e.speed_factor), ("discomfort", e.discomfort)] {
                if v.is_some() {
                    self.push(
                        &format!("{at}.{key}"),
                        format!("is given without `region`: expected `{key}` only on a region's event"),
                    );
                }
            }
        }
        if !route_keys {
            return None;
        }
        let time_ok = self.number_within(e.at, &format!("{at}.at"), (0.0, MAX_EVENT_TIME), "seconds");
        let unknown = |what: &str, name: &str, known: &[String]| {
            let listed: Vec<String> = known.iter().take(20).map(|n| quoted(n)).collect();
            format!(
                "{}: expected the name of a {what}: {}",
                quoted(name),
                if listed.is_empty() {
                    "(none in the map)".to_string()
                } else {
                    listed.join(", ")
                }
            )
        };
        let kind = if let Some(name) = &e.release {
            if !wait_names.contains(name) {
                self.push(
                    &format!("{at}.release"),
                    unknown("waiting area", name, wait_names),
                );
                return None;
            }
            RouteEventKind::Release(name.clone())
        } else {
            let name = e.region.clone().expect("a region event");
            let mut ok = true;
            if !region_names.contains(&name) {
                self.push(&format!("{at}.region"), unknown("region", &name, region_names));
                ok = false;
            }
            if e.speed_factor.is_none() && e.discomfort.is_none() {
                self.push(
                    at,
                    "changes nothing: expected `speed_factor` and/or `discomfort` with `region`".into(),
                );
                ok = false;
            }
            if let Some(f) = e.speed_factor {
                ok &= self.speed_factor(f, &format!("{at}.speed_factor"));
            }
            if let Some(d) = e.discomfort {
                ok &= self.discomfort_value(d, &format!("{at}.discomfort"));
            }
            if !ok {
                return None;
            }
            RouteEventKind::Region {
                name,
                speed_factor: e.speed_factor,
                discomfort: e.discomfort,
            }
        };
        time_ok.then_some(RouteEvent { time: e.at, kind })
    }
}
