//! Routes, goals and speed regions while a run goes: each walker's stage (a waypoint to reach,
//! a waiting area to stand in), the potential it follows (its group's, a stage's or one exit's:
//! [`crate::plan::Planner::add_target`]), the exit share drawn for it, the goals set through
//! the API, the waiting areas released and the regions changed by the map's events or the API.
//!
//! At the start of a step, after the exits' events and the sources, [`Simulation::route_step`]
//! moves every walker on along its route and gives the continuum step a field column: per
//! walker, the index of the potential it follows (the group's own index when it heads for its
//! quickest exit). The continuum step reads that column in place of the agents' `group`, on
//! the CPU and on a GPU alike; everything else (the report, the walls' openings, the local
//! layer) reads the real group. A walker waiting in an area, or holding at a stage it was sent
//! to, walks to a spot of the area drawn for it and stands there with its body.

use super::Simulation;
use crate::error::{Error, Result};
use crate::routes::{RouteEventKind, pick_share};
use crate::scene::Scene;
use crate::text::quoted;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeMap;

/// The ChaCha stream of a walker's exit share.
const SHARE_STREAM: u64 = 4;

/// The ChaCha stream of a walker's spot in a waiting area.
const SPOT_STREAM: u64 = 5;

/// A walker holding a spot stops within this of it, metres.
const SPOT_REACHED: f32 = 0.05;

/// An event is due at the start of a step that begins within this of its time, seconds.
const DUE_SLACK: f64 = 1e-9;

/// A walker that passed a stage of its route: a waypoint reached, or a waiting area left.
#[derive(Clone, Debug, PartialEq)]
pub struct StagePassed {
    /// The walker's handle.
    pub handle: u32,
    /// Its group.
    pub group: u32,
    /// The stage's name.
    pub stage: String,
    /// Simulated time, seconds (the start of the step that saw it).
    pub time: f64,
    /// Whether it waited there (a waiting area) or passed through (a waypoint).
    pub waited: bool,
}

/// Where a walker heads once its route is walked.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Goal {
    /// The quickest open exit of its group (its group's potential).
    #[default]
    Quickest,
    /// This goal of its group (by index), through that exit's own potential; the quickest
    /// while it is closed.
    Exit(usize),
    /// This stage (by index in the scene's stages): it walks there and stands in it.
    Stage(usize),
}

/// One walker's place on its route.
#[derive(Clone, Debug)]
struct WalkerRoute {
    id: u32,
    /// The index of its stage in its group's route (the route's length: done).
    step: usize,
    /// When it entered the waiting area it stands in.
    since: Option<f64>,
    /// Its spot in the area it stands in.
    spot: Option<[f32; 2]>,
    /// Where it heads after its route.
    goal: Goal,
}

/// The routes' state of a run.
pub(crate) struct RouteRun {
    /// Per walker on the map (in the agents' order as of the last [`Simulation::route_step`]).
    walkers: Vec<WalkerRoute>,
    /// Per stage, the index of its potential.
    stage_field: Vec<usize>,
    /// Per `(group, goal)`, the index of that exit's potential, added on first need.
    exit_field: BTreeMap<(usize, usize), usize>,
    /// Per stage, whether it is released.
    released: Vec<bool>,
    /// Per group, the goal given to its walkers after their route (`None`: share or quickest).
    group_goal: Vec<Option<Goal>>,
    /// The scene's route events in time order; the first not yet applied.
    events: Vec<crate::routes::RouteEvent>,
    next_event: usize,
    seed: u64,
    /// Per walker, the potential it follows this step (`None`: every walker its group's).
    pub field: Option<Vec<u32>>,
    /// Per walker, the spot it holds this step.
    pub hold: Vec<Option<[f32; 2]>>,
    /// Every stage passed so far, in order.
    pub passed: Vec<StagePassed>,
    /// The waiting areas released and the regions changed so far, in order.
    pub changes: Vec<SceneChange>,
}

/// A change of the scene besides an exit's: a waiting area released, a region's speed factor
/// or discomfort changed (by the map's events or the API), for the report and its plots.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SceneChange {
    /// Simulated time, seconds.
    pub time: f64,
    /// The stage's or region's name.
    pub name: String,
    /// What happened, in words: `released`, or the region's values after the change
    /// (`speed factor 0.3, discomfort 0`).
    pub what: String,
}

impl RouteRun {
    /// The routes' state of a run of `scene`: one potential per stage and per exit that a
    /// group's shares name, added to `planner`.
    pub(crate) fn new(scene: &Scene, seed: u64, planner: &mut crate::plan::Planner) -> Self {
        let routes = &scene.schedule.routes;
        let stage_field = (routes.stages.iter())
            .map(|s| planner.add_target(s.mask.to_dense()))
            .collect();
        let mut events = routes.events.clone();
        events.sort_by(|a, b| a.time.total_cmp(&b.time));
        let mut run = Self {
            walkers: Vec::new(),
            stage_field,
            exit_field: BTreeMap::new(),
            released: vec![false; routes.stages.len()],
            group_goal: vec![None; scene.groups.len()],
            events,
            next_event: 0,
            seed,
            field: None,
            hold: Vec::new(),
            passed: Vec::new(),
            changes: Vec::new(),
        };
        for g in 0..scene.groups.len() {
            for (e, &share) in routes.shares(g).unwrap_or(&[]).iter().enumerate() {
                if share > 0.0 {
                    run.exit_field(scene, planner, g, e);
                }
            }
        }
        run
    }

    /// The potential of exit `e` of group `g`, added on first need.
    fn exit_field(&mut self, scene: &Scene, planner: &mut crate::plan::Planner, g: usize, e: usize) -> usize {
        *self.exit_field.entry((g, e)).or_insert_with(|| {
            let mut mask = ndarray::Array2::from_elem(scene.grid.shape(), false);
            scene.groups[g].goals[e].mask.or_into(&mut mask);
            planner.add_target(mask)
        })
    }

    /// A walker's goal when it first comes: its group's, else an exit drawn by the group's
    /// shares (from the seed and its handle), else the quickest.
    fn first_goal(&self, scene: &Scene, id: u32, g: usize) -> Goal {
        if let Some(goal) = self.group_goal.get(g).copied().flatten() {
            return goal;
        }
        match scene.schedule.routes.shares(g) {
            Some(shares) => Goal::Exit(pick_share(
                shares,
                walker_rng(self.seed, id, SHARE_STREAM).random(),
            )),
            None => Goal::Quickest,
        }
    }
}

/// A walker's own random stream: the same for a handle and a seed whatever else happens.
fn walker_rng(seed: u64, id: u32, stream: u64) -> ChaCha8Rng {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ (id as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    rng.set_stream(stream);
    rng
}

/// A spot in `mask` (a free cell's centre, moved by up to a third of a cell) for walker `id`.
fn spot_in(
    scene: &Scene,
    mask: &crate::scene::CellMask,
    seed: u64,
    id: u32,
    salt: usize,
) -> Option<[f32; 2]> {
    let free: Vec<(usize, usize)> = mask.cells().filter(|&rc| !scene.obstacle[rc]).collect();
    if free.is_empty() {
        return None;
    }
    let mut rng = walker_rng(seed ^ salt as u64, id, SPOT_STREAM);
    let (r, c) = free[rng.random_range(0..free.len())];
    let (x, y) = scene.grid.cell_center(r, c);
    let h = scene.grid.cell_size / 3.0;
    let (dx, dy): (f64, f64) = (rng.random_range(-h..=h), rng.random_range(-h..=h));
    Some([(x + dx) as f32, (y + dy) as f32])
}

impl Simulation {
    /// Applies the route events due, moves every walker on along its route, and sets this
    /// step's field column and held spots. Returns the stages passed.
    pub(super) fn route_step(&mut self) -> Vec<StagePassed> {
        self.apply_route_events();
        let scene = &self.scene;
        let routes = &scene.schedule.routes;
        let run = &mut self.routes;
        // The walkers in the agents' order: those known keep their state (both in id order).
        let mut old = std::mem::take(&mut run.walkers).into_iter().peekable();
        let mut walkers = Vec::with_capacity(self.agents.len());
        for i in 0..self.agents.len() {
            let id = self.agents.id[i];
            while old.next_if(|w| w.id < id).is_some() {}
            let w = match old.next_if(|w| w.id == id) {
                Some(w) => w,
                None => WalkerRoute {
                    id,
                    step: 0,
                    since: None,
                    spot: None,
                    goal: run.first_goal(scene, id, self.agents.group[i] as usize),
                },
            };
            walkers.push(w);
        }
        drop(old);
        let now = self.time;
        let mut passed = Vec::new();
        let mut field = Vec::with_capacity(walkers.len());
        let mut hold = Vec::with_capacity(walkers.len());
        let mut routed = false;
        for (i, w) in walkers.iter_mut().enumerate() {
            let g = self.agents.group[i] as usize;
            let route = routes.route(g);
            let cell = scene
                .grid
                .cell_of(self.agents.x[i] as f64, self.agents.y[i] as f64);
            let inside = |stage: usize| cell.is_some_and(|rc| routes.stages[stage].mask.get(rc));
            let mut f = g;
            let mut spot = None;
            loop {
                if let Some(step) = route.get(w.step) {
                    let s = step.stage;
                    match (w.since, step.wait) {
                        (Some(t0), Some(wait)) => {
                            if now - t0 + DUE_SLACK >= wait.seconds
                                && (!wait.until_released || run.released[s])
                            {
                                passed.push(passage(w.id, g, &routes.stages[s].name, now, true));
                                (w.step, w.since, w.spot) = (w.step + 1, None, None);
                                continue;
                            }
                            spot = w.spot;
                        }
                        (_, wait) if inside(s) => {
                            if wait.is_some() {
                                w.since = Some(now);
                                w.spot = spot_in(scene, &routes.stages[s].mask, run.seed, w.id, s);
                                continue;
                            }
                            passed.push(passage(w.id, g, &routes.stages[s].name, now, false));
                            w.step += 1;
                            continue;
                        }
                        _ => f = run.stage_field[s],
                    }
                    break;
                }
                match w.goal {
                    Goal::Quickest => {}
                    Goal::Exit(e) => {
                        if self.planner.exit_open(g, e) {
                            f = run.exit_field(scene, &mut self.planner, g, e);
                        }
                    }
                    Goal::Stage(s) if inside(s) => {
                        if w.spot.is_none() {
                            w.spot = spot_in(scene, &routes.stages[s].mask, run.seed, w.id, s);
                        }
                        spot = w.spot;
                    }
                    Goal::Stage(s) => f = run.stage_field[s],
                }
                break;
            }
            routed |= f != g;
            field.push(f as u32);
            hold.push(spot);
        }
        run.walkers = walkers;
        run.field = routed.then_some(field);
        run.hold = hold;
        run.passed.extend(passed.iter().cloned());
        passed
    }

    /// Applies the map's releases and region changes due by the start of this step.
    fn apply_route_events(&mut self) {
        let due_by = self.time + DUE_SLACK;
        while let Some(e) = self.routes.events.get(self.routes.next_event) {
            if e.time > due_by {
                break;
            }
            let kind = e.kind.clone();
            self.routes.next_event += 1;
            // The map's check named a known stage or region.
            let _ = match kind {
                RouteEventKind::Release(name) => self.release(&name).map(|_| ()),
                RouteEventKind::Region {
                    name,
                    speed_factor,
                    discomfort,
                } => self.set_region(&name, speed_factor, discomfort),
            };
        }
    }

    /// Whether walker `i` (an index into the agents) may leave by goal `exit` of its group in
    /// this step: its route walked, and the exit its goal names when that one is open.
    pub(super) fn may_leave(&self, i: usize, exit: usize) -> bool {
        let Some(w) = self.routes.walkers.get(i).filter(|w| w.id == self.agents.id[i]) else {
            return true;
        };
        let g = self.agents.group[i] as usize;
        if w.step < self.scene.schedule.routes.route(g).len() {
            return false;
        }
        match w.goal {
            Goal::Quickest => true,
            Goal::Exit(e) => e == exit || !self.planner.exit_open(g, e),
            Goal::Stage(_) => false,
        }
    }

    /// Scales walker `i`'s preferred velocity `(vx, vy)` by the speed factor of the region it
    /// stands in (`scale_speed`: the pedestrian model's, whose speed the field does not give)
    /// and heads a walker holding a spot for it at its own speed, slowing to stop there.
    pub(super) fn route_velocity(&self, i: usize, scale_speed: bool, v: [f32; 2]) -> [f32; 2] {
        let [vx, vy] = v;
        let factor = self.region_factor(self.agents.x[i], self.agents.y[i]);
        if let Some(Some([sx, sy])) = self.routes.hold.get(i) {
            // Its own speed (the region's share of it), slowing to stop on the spot.
            let (dx, dy) = (sx - self.agents.x[i], sy - self.agents.y[i]);
            let d = (dx * dx + dy * dy).sqrt();
            if d < SPOT_REACHED || self.time < self.agents.start_time[i] as f64 {
                return [0.0, 0.0];
            }
            let speed = (self.agents.max_speed[i] * factor).min(d / self.dt as f32);
            return [dx / d * speed, dy / d * speed];
        }
        if scale_speed {
            [vx * factor, vy * factor]
        } else {
            [vx, vy]
        }
    }

    /// The speed factor at `(x, y)`: the product of the factors of the regions over its cell
    /// (1 outside every region).
    pub fn region_factor(&self, x: f32, y: f32) -> f32 {
        match self.scene.grid.cell_of(x as f64, y as f64) {
            Some(rc) => self.planner.regions().factor_at(rc),
            None => 1.0,
        }
    }

    /// Releases every waiting area named `name`: its walkers leave once their seconds are over,
    /// and those that come later wait their seconds only. Returns how many stages bear the
    /// name.
    ///
    /// # Errors
    /// [`Error::Invalid`] when no stage of the scene is named `name` (the names are listed).
    pub fn release(&mut self, name: &str) -> Result<usize> {
        let stages = &self.scene.schedule.routes.stages;
        let mut named = 0;
        for (k, s) in stages.iter().enumerate() {
            if s.name == name {
                self.routes.released[k] = true;
                named += 1;
            }
        }
        if named > 0 {
            self.routes.changes.push(SceneChange {
                time: self.time,
                name: name.to_string(),
                what: "released".into(),
            });
        }
        if named == 0 {
            return Err(unknown_name(
                "<release>",
                "name",
                name,
                "a stage",
                stage_names(&self.scene),
            ));
        }
        Ok(named)
    }

    /// Whether the stage named `name` is released (`None`: no stage of that name).
    pub fn released(&self, name: &str) -> Option<bool> {
        let k = self.scene.schedule.routes.stage_named(name)?;
        Some(self.routes.released[k])
    }

    /// Sets the speed factor and/or discomfort (`None` keeps one) of the region named `name`:
    /// the walkers inside walk at their speed times the factor from the next step on, and the
    /// potentials of the next step see the change.
    ///
    /// # Errors
    /// [`Error::Invalid`] naming the argument: an unknown region (the names are listed), a
    /// speed factor not above 0 or above [`crate::routes::MAX_SPEED_FACTOR`], a discomfort below 0
    /// or not finite.
    pub fn set_region(
        &mut self,
        name: &str,
        speed_factor: Option<f64>,
        discomfort: Option<f64>,
    ) -> Result<()> {
        let at = "<set_region>";
        let regions = &self.scene.schedule.routes.regions;
        let Some(k) = regions.iter().position(|r| r.name == name) else {
            let names = regions.iter().map(|r| quoted(&r.name)).collect();
            return Err(unknown_name(at, "name", name, "a region", names));
        };
        let max = crate::routes::MAX_SPEED_FACTOR;
        if let Some(f) = speed_factor.filter(|f| !(f.is_finite() && *f > 0.0 && *f <= max)) {
            return Err(Error::invalid(
                at,
                "speed_factor",
                format!("{f}: expected a speed factor above 0 and at most {max}"),
            ));
        }
        if let Some(d) = discomfort.filter(|d| !(d.is_finite() && *d >= 0.0)) {
            return Err(Error::invalid(
                at,
                "discomfort",
                format!("{d}: expected a finite number >= 0"),
            ));
        }
        self.planner.set_region(k, speed_factor, discomfort);
        let (f, d) = self.region(name).unwrap_or((f64::NAN, f64::NAN));
        self.routes.changes.push(SceneChange {
            time: self.time,
            name: name.to_string(),
            what: format!("speed factor {f}, discomfort {d}"),
        });
        Ok(())
    }

    /// The waiting areas released and the regions changed so far, in order.
    pub fn scene_changes(&self) -> &[SceneChange] {
        &self.routes.changes
    }

    /// The speed factor and discomfort of the region named `name` now (`None`: no region of
    /// that name).
    pub fn region(&self, name: &str) -> Option<(f64, f64)> {
        let r = self.planner.regions().regions().iter().find(|r| r.name == name)?;
        Some((r.speed_factor, r.discomfort))
    }

    /// Sends the walker `handle` to `goal` once its route is walked: the name of one of its
    /// group's goals (it leaves by that exit, through the exit's own potential, or by the
    /// quickest while that one is closed), the name of a stage (it walks there and stands in
    /// it), or `None` for the quickest exit.
    ///
    /// # Errors
    /// [`Error::Invalid`] for a handle that is not a walker on the map, or a name that is
    /// neither one of its group's goals nor a stage (the names are listed).
    pub fn set_walker_goal(&mut self, handle: u32, goal: Option<&str>) -> Result<()> {
        let at = "<set_walker_goal>";
        let i = self.index_of(handle).ok_or_else(|| {
            Error::invalid(
                at,
                "handle",
                format!(
                    "{handle}: expected the handle of a walker on the map (not one that left or was removed)"
                ),
            )
        })?;
        let g = self.agents.group[i] as usize;
        let goal = self.goal_named(at, g, goal)?;
        // A walker added since the last step has no route state yet: the next step gives it.
        self.route_step_sync_one(i, goal);
        Ok(())
    }

    /// Sends every walker of group `group` on the map, and every one that comes later, to
    /// `goal` once its route is walked (as [`Simulation::set_walker_goal`]; `None`: the
    /// group's exit shares or the quickest exit again). Returns how many walkers on the map it
    /// sent.
    ///
    /// # Errors
    /// [`Error::Invalid`] for a group that is not the scene's, or a name that is neither one
    /// of its goals nor a stage.
    pub fn set_group_goal(&mut self, group: usize, goal: Option<&str>) -> Result<usize> {
        let at = "<set_group_goal>";
        self.check_group(at, group)?;
        let resolved = self.goal_named(at, group, goal)?;
        self.routes.group_goal[group] = goal.map(|_| resolved);
        let mut sent = 0;
        for i in 0..self.agents.len() {
            if self.agents.group[i] as usize == group {
                let goal = match goal {
                    Some(_) => resolved,
                    None => self.routes.first_goal(&self.scene, self.agents.id[i], group),
                };
                self.route_step_sync_one(i, goal);
                sent += 1;
            }
        }
        Ok(sent)
    }

    /// Gives walker `i` the goal `goal`, its route state made if it has none yet.
    fn route_step_sync_one(&mut self, i: usize, goal: Goal) {
        let id = self.agents.id[i];
        let walkers = &mut self.routes.walkers;
        match walkers.binary_search_by_key(&id, |w| w.id) {
            Ok(k) => {
                let w = &mut walkers[k];
                if w.goal != goal {
                    (w.goal, w.spot) = (goal, None);
                }
            }
            Err(k) => {
                walkers.insert(
                    k,
                    WalkerRoute {
                        id,
                        step: 0,
                        since: None,
                        spot: None,
                        goal,
                    },
                );
            }
        }
    }

    /// The goal `name` names for group `g`.
    fn goal_named(&self, at: &str, g: usize, name: Option<&str>) -> Result<Goal> {
        let Some(name) = name else {
            return Ok(Goal::Quickest);
        };
        if let Some(e) = self.scene.groups[g].goals.iter().position(|a| a.name == name) {
            return Ok(Goal::Exit(e));
        }
        if let Some(s) = self.scene.schedule.routes.stage_named(name) {
            return Ok(Goal::Stage(s));
        }
        let mut names: Vec<String> = self.scene.groups[g]
            .goals
            .iter()
            .map(|a| quoted(&a.name))
            .collect();
        names.extend(stage_names(&self.scene));
        Err(unknown_name(
            at,
            "goal",
            name,
            "one of the group's goals or a stage",
            names,
        ))
    }

    /// Every stage passed so far (waypoints reached, waiting areas left), in order.
    pub fn stages_passed(&self) -> &[StagePassed] {
        &self.routes.passed
    }

    /// The goal the walker `handle` heads for after its route (`None`: not on the map, or no
    /// step has seen it yet), and how many stages of its route it has still to pass.
    pub fn walker_goal(&self, handle: u32) -> Option<(Goal, usize)> {
        let i = self.index_of(handle)?;
        let walkers = &self.routes.walkers;
        let w = &walkers[walkers.binary_search_by_key(&handle, |w| w.id).ok()?];
        let route = self.scene.schedule.routes.route(self.agents.group[i] as usize);
        Some((w.goal, route.len().saturating_sub(w.step)))
    }
}

fn passage(id: u32, g: usize, stage: &str, time: f64, waited: bool) -> StagePassed {
    StagePassed {
        handle: id,
        group: g as u32,
        stage: stage.to_string(),
        time,
        waited,
    }
}

fn stage_names(scene: &Scene) -> Vec<String> {
    scene
        .schedule
        .routes
        .stages
        .iter()
        .map(|s| quoted(&s.name))
        .collect()
}

fn unknown_name(at: &str, arg: &str, name: &str, what: &str, names: Vec<String>) -> Error {
    let listed = if names.is_empty() {
        "(none)".to_string()
    } else {
        names.join(", ")
    };
    Error::invalid(
        at,
        arg,
        format!("{}: expected the name of {what}: {listed}", quoted(name)),
    )
}

impl Simulation {
    /// Swaps the agents' `group` column with this step's field column (when some walker
    /// follows another potential than its group's): called in pairs around the passes that
    /// read the potentials by the agents' `group`.
    pub(super) fn swap_route_fields(&mut self) {
        if let Some(field) = self.routes.field.as_mut() {
            std::mem::swap(&mut self.agents.group, field);
        }
    }
}
