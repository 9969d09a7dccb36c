//! A scene that changes while it runs: the map's exits opening and closing at their times,
//! sources bringing walkers in, and the run-time API a game loop drives (walkers added and
//! removed by stable handles, exits opened and closed, the events of each step).
//!
//! A walker's handle is its id ([`Simulation::handles`]): ids are given in ascending order and
//! never reused, and the agents stay in id order, so a handle is found by a binary search.
//! Whether an exit is open is kept in one place, the planner ([`Simulation::exit_open`]).

use super::spawn::{Occupied, place_clear_of};
use super::{Arrival, Simulation};
use crate::agents::Agents;
use crate::error::{Error, Result};
use crate::scene::Scene;
use crate::schedule::{ExitEvent, Schedule};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// The ChaCha stream of the sources' Poisson times (0 places the starting crowd, 1 draws the
/// pre-movement times).
const SOURCE_TIMES_STREAM: u64 = 2;

/// The ChaCha stream of the sources' places, speeds and pre-movement times.
const SOURCE_PLACES_STREAM: u64 = 3;

/// An event is due at the start of a step that begins within this of its time, seconds (the
/// clock is rounded to the nanosecond).
const DUE_SLACK: f64 = 1e-9;

/// An exit that opened or closed, and when.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExitChange {
    /// Simulated time, seconds.
    pub time: f64,
    /// The exit's name (every goal of that name).
    pub name: String,
    /// Opened (`true`) or closed (`false`).
    pub open: bool,
}

/// What happened in one step ([`Simulation::step`]), for a loop that reacts without scanning.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StepEvents {
    /// The simulated time at the end of the step, seconds.
    pub time: f64,
    /// The walkers that left through an exit in the step (handle, group, exit, time).
    pub arrivals: Vec<Arrival>,
    /// The exits that opened or closed at the start of the step (the map's events).
    pub exits: Vec<ExitChange>,
    /// The handles of the walkers a source brought in at the start of the step.
    pub entered: Vec<u32>,
    /// The walkers due from a source that found no room and wait for the next step.
    pub waiting_to_enter: usize,
    /// The stages of their routes that walkers passed at the start of the step.
    pub stages: Vec<super::routes::StagePassed>,
    /// The walkers a moving obstacle reached and a wall kept from getting out of its way
    /// (handles; `sim::movers`).
    pub blocked: Vec<u32>,
    /// How many walkers the moving obstacles pushed aside in the step.
    pub pushed: usize,
}

/// One walker a source brings at `time`: the `k`-th of the `n` of source `source`.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Due {
    time: f64,
    source: usize,
    k: usize,
    n: usize,
}

/// The changing part of a run: the exit events still to come, the sources' walkers not yet in,
/// the exit changes so far, and the limits an added walker must keep.
pub(crate) struct Dynamics {
    /// The scene's exit events in time order (ties in the map's order).
    events: Vec<ExitEvent>,
    /// The first event not yet applied.
    next_event: usize,
    /// The sources' walkers not yet in, in time order.
    due: VecDeque<Due>,
    /// Places, speeds and pre-movement times of the sources' walkers.
    rng: ChaCha8Rng,
    /// Every exit change so far (the map's events and the API's), in order.
    pub exit_log: Vec<ExitChange>,
    /// Per group, walkers taken off through [`Simulation::remove_walker`].
    pub removed: Vec<usize>,
    /// Per group, walkers of a source that had to wait for room.
    pub late: Vec<usize>,
    /// Per group, walkers of a source due by the current time that are not in yet (no room).
    pub waiting: Vec<usize>,
    /// The id the next walker gets.
    next_id: u32,
    /// The largest body the run's neighbour grids were built for, m.
    pub max_radius: f32,
    /// The fastest walker the time step was chosen for, m/s.
    pub v_max: f64,
}

impl Dynamics {
    /// The changing part of a run of `scene` starting with `agents`: the sources' times drawn
    /// from `seed`.
    pub(crate) fn new(scene: &Scene, agents: &Agents, seed: u64, max_radius: f32, v_max: f64) -> Self {
        let schedule = &scene.schedule;
        let mut events = schedule.events.clone();
        events.sort_by(|a, b| a.time.total_cmp(&b.time));
        let mut times_rng = ChaCha8Rng::seed_from_u64(seed);
        times_rng.set_stream(SOURCE_TIMES_STREAM);
        let mut due: Vec<Due> = Vec::new();
        for (source, s) in schedule.sources.iter().enumerate() {
            let times = s.times.times(&mut times_rng);
            let n = times.len();
            due.extend(
                times
                    .into_iter()
                    .enumerate()
                    .map(|(k, time)| Due { time, source, k, n }),
            );
        }
        due.sort_by(|a, b| a.time.total_cmp(&b.time));
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        rng.set_stream(SOURCE_PLACES_STREAM);
        let groups = scene.groups.len();
        Self {
            events,
            next_event: 0,
            due: due.into(),
            rng,
            exit_log: Vec::new(),
            removed: vec![0; groups],
            late: vec![0; groups],
            waiting: vec![0; groups],
            next_id: agents.id.iter().max().map_or(0, |&m| m + 1),
            max_radius,
            v_max,
        }
    }

    /// Whether a source still has walkers to bring.
    pub(crate) fn sources_pending(&self) -> bool {
        !self.due.is_empty()
    }
}

/// The largest body and the fastest walker a run of `scene` starting with `agents` is built
/// for: the starting walkers', every group's radius, and the speeds of the groups with a
/// source (the time step keeps those walkers within a cell per step).
pub(crate) fn walker_limits(scene: &Scene, agents: &Agents) -> (f32, f64) {
    let max_radius = agents
        .radius
        .iter()
        .copied()
        .chain(scene.groups.iter().map(|g| g.radius as f32))
        .fold(0.05f32, f32::max);
    let v_max = agents
        .max_speed
        .iter()
        .map(|&v| v as f64)
        .chain(source_speeds(&scene.schedule, scene))
        .fold(scene.params.f_max, f64::max);
    (max_radius, v_max)
}

/// The fastest speed of each group with a source.
fn source_speeds<'a>(schedule: &'a Schedule, scene: &'a Scene) -> impl Iterator<Item = f64> + 'a {
    schedule.sources.iter().map(|s| scene.groups[s.group].speed_max)
}

impl Simulation {
    /// Applies what is due at the start of a step: the exit events whose time has come (the
    /// planner replans in this step), then the sources' walkers due by the current time, each on a free spot
    /// of its area clear of the bodies there (those that find none wait for the next step).
    pub(super) fn apply_schedule(&mut self) -> StepEvents {
        let mut events = StepEvents::default();
        let due_by = self.time + DUE_SLACK;
        while let Some(e) = self.dynamics.events.get(self.dynamics.next_event) {
            if e.time > due_by {
                break;
            }
            let (name, open) = (e.name.clone(), e.open);
            self.dynamics.next_event += 1;
            self.open_exit(&name, open);
            events.exits.push(ExitChange {
                time: self.time,
                name,
                open,
            });
        }
        self.admit_due(due_by, &mut events);
        events
    }

    /// Brings in the sources' walkers due by `due_by` (seconds), in time order, stopping at the first that
    /// finds no room (it and those after it wait for the next step).
    fn admit_due(&mut self, due_by: f64, events: &mut StepEvents) {
        self.dynamics.waiting.iter_mut().for_each(|w| *w = 0);
        // The bodies on the map, gathered once the first walker is due.
        let mut occupied = None;
        while let Some(&due) = self.dynamics.due.front() {
            if due.time > due_by {
                break;
            }
            let source = &self.scene.schedule.sources[due.source];
            let group = &self.scene.groups[source.group];
            let max_radius = self.dynamics.max_radius as f64;
            let occupied = occupied.get_or_insert_with(|| Occupied::of(&self.agents, max_radius));
            let Some((x, y)) = place_clear_of(
                &self.scene,
                &source.area,
                group.radius,
                &mut self.dynamics.rng,
                occupied,
            ) else {
                break;
            };
            self.dynamics.due.pop_front();
            let speed = crate::speeds::sample_speed(
                &group.speed_distribution,
                group.speed_min,
                group.speed_max,
                due.k,
                due.n,
                &mut self.dynamics.rng,
            );
            let [early, late] = source.premovement;
            let wait = if late > early {
                rand::Rng::random_range(&mut self.dynamics.rng, early..=late)
            } else {
                early
            };
            let g = source.group;
            // Late: it was due at the start of an earlier step already.
            if due.time + self.dt <= due_by {
                self.dynamics.late[g] += 1;
            }
            let radius = group.radius as f32;
            let handle = self.push_walker(
                x as f32,
                y as f32,
                g,
                speed as f32,
                radius,
                (self.time + wait) as f32,
            );
            events.entered.push(handle);
        }
        for due in self.dynamics.due.iter().take_while(|d| d.time <= due_by) {
            self.dynamics.waiting[self.scene.schedule.sources[due.source].group] += 1;
            events.waiting_to_enter += 1;
        }
    }

    /// Appends a walker (checked) and its log row; returns its handle.
    fn push_walker(&mut self, x: f32, y: f32, group: usize, speed: f32, radius: f32, start: f32) -> u32 {
        let id = self.dynamics.next_id;
        self.dynamics.next_id += 1;
        self.agents.push(id, x, y, group as u32, radius, speed);
        let i = self.agents.len() - 1;
        self.agents.start_time[i] = start;
        self.logs.agents.enter(&self.agents, i, self.time);
        self.spawned[group] += 1;
        id
    }

    /// Opens or closes every goal named `name`; returns how many goals bear the name.
    fn open_exit(&mut self, name: &str, open: bool) -> usize {
        let mut named = 0;
        for g in 0..self.scene.groups.len() {
            for e in 0..self.scene.groups[g].goals.len() {
                if self.scene.groups[g].goals[e].name == name {
                    named += 1;
                    self.planner.set_exit_open(&self.scene, g, e, open);
                    if let Some(walls) = self.walk.walls.as_mut() {
                        walls.set_open(g as u32, e as u32, open);
                    }
                }
            }
        }
        if named > 0 {
            self.dynamics.exit_log.push(ExitChange {
                time: self.time,
                name: name.to_string(),
                open,
            });
        }
        named
    }

    /// Whether goal `goal` of group `group` is open (a goal of the potential and a way out).
    /// The one function every part of a run reads an exit's state through.
    pub fn exit_open(&self, group: usize, goal: usize) -> bool {
        self.planner.exit_open(group, goal)
    }

    /// Opens (`open`) or closes every goal named `name`, in every group: the potentials see it
    /// in the next step, and no one leaves through a closed exit. The change is recorded in
    /// [`Simulation::exit_changes`] at the current time. Returns how many goals bear the name.
    ///
    /// # Errors
    /// [`Error::Invalid`] when no goal of the scene is named `name` (the names are listed).
    pub fn set_exit_open(&mut self, name: &str, open: bool) -> Result<usize> {
        let named = self.open_exit(name, open);
        if named == 0 {
            let names: Vec<String> = self
                .scene
                .groups
                .iter()
                .flat_map(|g| g.goals.iter().map(|a| crate::text::quoted(&a.name)))
                .collect();
            return Err(Error::invalid(
                "<set_exit_open>",
                "name",
                format!(
                    "{}: expected the name of a goal: {}",
                    crate::text::quoted(name),
                    names.join(", ")
                ),
            ));
        }
        Ok(named)
    }

    /// The walkers the scene's sources still have to bring (those due and waiting for room
    /// included).
    pub fn walkers_to_come(&self) -> usize {
        self.dynamics.due.len()
    }

    /// Every exit change so far, the map's events and [`Simulation::set_exit_open`]'s, in order.
    pub fn exit_changes(&self) -> &[ExitChange] {
        &self.dynamics.exit_log
    }

    /// [`Error::Invalid`] labelled `at` unless `group` is one of the scene's groups.
    pub(crate) fn check_group(&self, at: &str, group: usize) -> Result<()> {
        let groups = self.scene.groups.len();
        if group >= groups {
            return Err(Error::invalid(
                at,
                "group",
                format!("{group}: expected a group index below {groups} (the scene's groups)"),
            ));
        }
        Ok(())
    }

    /// Adds a walker of group `group` at `(x, y)` with a preferred speed of `speed` m/s and a
    /// body of `radius` m, walking from the next step on; returns its handle, valid until it
    /// leaves (through an exit or [`Simulation::remove_walker`]).
    ///
    /// # Errors
    /// [`Error::Invalid`] naming the argument: a group that is not the scene's, a position that
    /// is not finite, outside the domain or in an obstacle cell, a speed that is not positive
    /// or above the fastest walker the run's time step was chosen for, a radius that is not
    /// positive or above the largest body its neighbour grids were built for (the largest
    /// radius of the scene's groups and starting walkers).
    pub fn add_walker(&mut self, x: f32, y: f32, group: usize, speed: f32, radius: f32) -> Result<u32> {
        let at = "<add_walker>";
        self.check_group(at, group)?;
        if let Some(problem) = self.scene.position_problem(x, y, true) {
            return Err(Error::invalid(at, "x, y", problem));
        }
        let v_max = self.dynamics.v_max;
        if !(speed.is_finite() && speed > 0.0 && speed as f64 <= v_max) {
            return Err(Error::invalid(
                at,
                "speed",
                format!(
                    "{speed} m/s: expected a speed above 0 and at most {v_max} m/s (the fastest \
                     walker the run's time step was chosen for)"
                ),
            ));
        }
        let r_max = self.dynamics.max_radius;
        if !(radius.is_finite() && radius > 0.0 && radius <= r_max) {
            return Err(Error::invalid(
                at,
                "radius",
                format!(
                    "{radius} m: expected a radius above 0 and at most {r_max} m (the largest body \
                     of the scene's groups, which the run's neighbour grids are built for)"
                ),
            ));
        }
        let start = self.time as f32;
        Ok(self.push_walker(x, y, group, speed, radius, start))
    }

    /// Takes the walker `handle` off the map (it counts as removed, not arrived, in the
    /// report).
    ///
    /// # Errors
    /// [`Error::Invalid`] when `handle` is not a walker on the map (never given, arrived or
    /// removed already).
    pub fn remove_walker(&mut self, handle: u32) -> Result<()> {
        self.take_off("<remove_walker>", &[handle]).map(|_| ())
    }

    /// Takes the walkers `handles` off the map in one pass over the crowd (a game that removes
    /// many walkers a frame calls this once rather than [`Simulation::remove_walker`] for each);
    /// a handle given twice is taken off once. Returns how many walkers left the map.
    ///
    /// # Errors
    /// [`Error::Invalid`], removing none, when a handle is not a walker on the map.
    pub fn remove_walkers(&mut self, handles: &[u32]) -> Result<usize> {
        self.take_off("<remove_walkers>", handles)
    }

    /// Takes `handles` off the map, all or none (errors labelled `at`).
    fn take_off(&mut self, at: &str, handles: &[u32]) -> Result<usize> {
        let mut drop = Vec::with_capacity(handles.len());
        for &handle in handles {
            drop.push(self.index_of(handle).ok_or_else(|| unknown_handle(at, handle))?);
        }
        drop.sort_unstable();
        drop.dedup();
        for &i in &drop {
            self.dynamics.removed[self.agents.group[i] as usize] += 1;
        }
        let mut next = drop.iter().peekable();
        self.agents.retain(|j| {
            if next.peek() == Some(&&j) {
                next.next();
                false
            } else {
                true
            }
        });
        self.logs.agents.keep_ids(&self.agents.id, self.time);
        Ok(drop.len())
    }

    /// The handle of each walker on the map, in [`Simulation::positions`]' order (ascending).
    pub fn handles(&self) -> &[u32] {
        &self.agents.id
    }

    /// The index in [`Simulation::agents`] of the walker `handle`, `None` when it is not on the
    /// map.
    pub fn index_of(&self, handle: u32) -> Option<usize> {
        self.agents.id.binary_search(&handle).ok()
    }

    /// The position of the walker `handle`, metres, `None` when it is not on the map.
    pub fn position_of(&self, handle: u32) -> Option<(f32, f32)> {
        self.index_of(handle)
            .map(|i| (self.agents.x[i], self.agents.y[i]))
    }

    /// The velocity of the walker `handle` in the last step, m/s, `None` when it is not on the
    /// map.
    pub fn velocity_of(&self, handle: u32) -> Option<(f32, f32)> {
        self.index_of(handle)
            .map(|i| (self.agents.vx[i], self.agents.vy[i]))
    }

    /// The memory the per-walker state holds room for, in walkers: the largest capacity of the
    /// agents' columns and the run's per-walker logs. It follows the most walkers on the map at
    /// once, not the number that ever came and went.
    pub fn walker_capacity(&self) -> usize {
        let a = &self.agents;
        [
            a.id.capacity(),
            a.x.capacity(),
            a.y.capacity(),
            a.vx.capacity(),
            a.vy.capacity(),
            a.group.capacity(),
            a.radius.capacity(),
            a.max_speed.capacity(),
            a.start_time.capacity(),
            self.logs.agents.capacity(),
            self.logs.jams.tracked(),
        ]
        .into_iter()
        .max()
        .unwrap_or(0)
    }
}

/// The error for a handle that is not a walker on the map.
fn unknown_handle(at: &str, handle: u32) -> Error {
    Error::invalid(
        at,
        "handle",
        format!("{handle}: expected the handle of a walker on the map (not one that left or was removed)"),
    )
}
