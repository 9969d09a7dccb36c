//! Moving obstacles in a run: the map's `movers` and the obstacles the API adds, one kind of
//! thing ([`Obstacle`], from a [`Mover`]), each with a handle that stays valid until removed.
//!
//! Each step, before the continuum, every obstacle moves to where it stands at the step's end
//! (a path's point at that time, or its velocity times the time step on from where it stood),
//! and the planner is given the cells it covers, widened by the largest walker's radius
//! ([`crate::plan::Planner::set_blocked`]): no face leads into them, so the potentials plan
//! around the obstacle in the same step, and a step whose cells are those of the last costs no
//! replan. After the separation every body an obstacle reaches is pushed to its edge, as by a
//! wall that moves: through the same wall handling as every other move, so never through a
//! static wall; a body held between an obstacle and a wall stays where the wall holds it, and
//! the step reports it ([`StepEvents::blocked`](super::StepEvents::blocked)).

use super::Simulation;
use crate::collision::walls::{Body, slide_body, slide_body_exact};
use crate::error::{Error, Result};
use crate::mover::{Motion, Mover, MoverShape};
use crate::vec2::V2;
use rayon::prelude::*;
use std::collections::BTreeMap;

/// A pushed body is left this far (metres) clear of the obstacle's outline, so that rounding
/// of the move never leaves it touching.
const PUSH_CLEARANCE: f64 = 0.005;

/// A body nearer an obstacle than its radius less this (metres) after its push counts as
/// blocked (held by a wall).
const BLOCKED_SLACK: f64 = 0.002;

/// The potentials see where an obstacle stands and where it will stand within this many
/// seconds (its path ahead, or its velocity): the crowd parts ahead of a vehicle, not only
/// beside it.
pub const MOVER_LOOKAHEAD: f64 = 1.0;

/// The look-ahead is sampled every this fraction of a cell of the obstacle's travel.
const LOOKAHEAD_STEP_CELLS: f64 = 0.5;

/// At most this many look-ahead samples per obstacle and step.
const MAX_LOOKAHEAD_SAMPLES: usize = 32;

/// Pushes per body and step: one per obstacle it overlaps, and a second round for a body that
/// the push off one obstacle carries into another.
const PUSH_ROUNDS: usize = 3;

/// One moving obstacle of a run: its shape, where it stands and how it moves.
#[derive(Clone, Debug, PartialEq)]
pub struct Obstacle {
    name: String,
    shape: MoverShape,
    position: [f64; 2],
    velocity: [f64; 2],
    motion: Motion,
}

impl Obstacle {
    /// Its name (the map's, or empty for one the API added).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its outline.
    pub fn shape(&self) -> &MoverShape {
        &self.shape
    }

    /// Where it stands, metres.
    pub fn position(&self) -> [f64; 2] {
        self.position
    }

    /// Its velocity over the last step (or the one it was given), m/s.
    pub fn velocity(&self) -> [f64; 2] {
        self.velocity
    }

    /// How it moves.
    pub fn motion(&self) -> &Motion {
        &self.motion
    }

    /// Where it stands at time `t` (its position) and where it will stand within
    /// [`MOVER_LOOKAHEAD`] seconds, a point every [`LOOKAHEAD_STEP_CELLS`] of a cell of
    /// `cell_size` metres along the way, each with its velocity there.
    fn ahead(&self, t: f64, cell_size: f64) -> Vec<([f64; 2], [f64; 2])> {
        let speed = match &self.motion {
            Motion::Path { speed, .. } => *speed,
            Motion::Free { .. } => self.velocity[0].hypot(self.velocity[1]),
        };
        let travel = speed * MOVER_LOOKAHEAD;
        let n = ((travel / (LOOKAHEAD_STEP_CELLS * cell_size)).ceil() as usize).min(MAX_LOOKAHEAD_SAMPLES);
        (0..=n)
            .map(|k| {
                let tau = if n == 0 {
                    0.0
                } else {
                    MOVER_LOOKAHEAD * k as f64 / n as f64
                };
                self.motion.on_path_at(t + tau).unwrap_or((
                    [
                        self.position[0] + self.velocity[0] * tau,
                        self.position[1] + self.velocity[1] * tau,
                    ],
                    self.velocity,
                ))
            })
            .collect()
    }

    /// The signed distance from `(x, y)` to its outline, metres (negative inside): a body of
    /// radius `r` there overlaps it when this is below `r`.
    pub fn distance(&self, x: f64, y: f64) -> f64 {
        self.shape.distance(self.position, [x, y]).0
    }
}

/// The run's moving obstacles by handle, and the handle the next one gets.
#[derive(Clone, Debug, Default)]
pub(crate) struct Movers {
    list: BTreeMap<u32, Obstacle>,
    next: u32,
}

impl Movers {
    /// The obstacles of the scene's `movers`: handles `0..n` in the map's order.
    pub(crate) fn new(movers: &[Mover]) -> Self {
        let mut out = Self::default();
        for m in movers {
            out.insert(m.clone());
        }
        out
    }

    fn insert(&mut self, m: Mover) -> u32 {
        let handle = self.next;
        self.next += 1;
        let (position, velocity) = match &m.motion {
            Motion::Free { velocity } => (m.position, *velocity),
            Motion::Path { .. } => (m.position, [0.0, 0.0]),
        };
        self.list.insert(
            handle,
            Obstacle {
                name: m.name,
                shape: m.shape,
                position,
                velocity,
                motion: m.motion,
            },
        );
        handle
    }
}

/// Why `mover` cannot move in a run, in words, or `None`.
fn mover_problem(m: &Mover) -> Option<String> {
    if let Some(problem) = m.shape.problem() {
        return Some(problem);
    }
    let finite = |p: &[f64; 2]| p.iter().all(|v| v.is_finite());
    if !finite(&m.position) {
        return Some(format!("position {:?}: expected a finite point", m.position));
    }
    match &m.motion {
        Motion::Free { velocity } if !finite(velocity) => {
            Some(format!("velocity {velocity:?}: expected finite m/s"))
        }
        Motion::Free { .. } => None,
        Motion::Path {
            points, speed, from, ..
        } => {
            if points.is_empty() || !points.iter().all(finite) {
                Some(format!("path {points:?}: expected at least one finite point"))
            } else if !(speed.is_finite() && *speed >= 0.0) {
                Some(format!("speed {speed}: expected at least 0 m/s"))
            } else if !from.is_finite() {
                Some(format!("from {from}: expected a finite time"))
            } else {
                None
            }
        }
    }
}

fn unknown_obstacle(at: &str, handle: u32) -> Error {
    Error::invalid(
        at,
        "handle",
        format!("{handle}: expected the handle of an obstacle on the map (not one removed)"),
    )
}

impl Simulation {
    /// Adds an obstacle of `shape` standing at `position` (metres) and moving at `velocity`
    /// (m/s, `[0, 0]` for one that stands): the potentials plan around it from the next step
    /// and bodies it reaches are pushed aside. Returns its handle, valid until
    /// [`Simulation::remove_obstacle`].
    ///
    /// # Errors
    /// [`Error::Invalid`] for a shape that is not one ([`MoverShape::problem`]) or numbers
    /// that are not finite.
    pub fn add_obstacle(&mut self, shape: MoverShape, position: [f64; 2], velocity: [f64; 2]) -> Result<u32> {
        self.add_mover(Mover {
            name: String::new(),
            shape,
            position,
            motion: Motion::Free { velocity },
        })
    }

    /// Adds a moving obstacle as a map's `movers` give one (a path's times are those of the
    /// run). Returns its handle.
    ///
    /// # Errors
    /// [`Error::Invalid`] naming what is wrong with it (shape, numbers, an empty path).
    pub fn add_mover(&mut self, mover: Mover) -> Result<u32> {
        if let Some(problem) = mover_problem(&mover) {
            return Err(Error::invalid("<add_obstacle>", "obstacle", problem));
        }
        Ok(self.movers.insert(mover))
    }

    /// Puts the obstacle `handle` at `position` (metres) at once, moving on at `velocity`
    /// (m/s) when given, else at its velocity so far; one that followed a path leaves it. The
    /// next step plans around it there and pushes the bodies it reaches.
    ///
    /// # Errors
    /// [`Error::Invalid`] for an unknown handle or numbers that are not finite.
    pub fn move_obstacle(
        &mut self,
        handle: u32,
        position: [f64; 2],
        velocity: Option<[f64; 2]>,
    ) -> Result<()> {
        let at = "<move_obstacle>";
        let o = self
            .movers
            .list
            .get_mut(&handle)
            .ok_or_else(|| unknown_obstacle(at, handle))?;
        let velocity = velocity.unwrap_or(o.velocity);
        if !position.iter().chain(&velocity).all(|v| v.is_finite()) {
            return Err(Error::invalid(
                at,
                "position, velocity",
                format!("{position:?}, {velocity:?}: expected finite metres and m/s"),
            ));
        }
        o.position = position;
        o.velocity = velocity;
        o.motion = Motion::Free { velocity };
        Ok(())
    }

    /// Takes the obstacle `handle` off the map: from the next step the potentials run where it
    /// stood.
    ///
    /// # Errors
    /// [`Error::Invalid`] for an unknown handle.
    pub fn remove_obstacle(&mut self, handle: u32) -> Result<()> {
        self.movers
            .list
            .remove(&handle)
            .map(|_| ())
            .ok_or_else(|| unknown_obstacle("<remove_obstacle>", handle))
    }

    /// The obstacle `handle`, `None` when it is not on the map.
    pub fn obstacle(&self, handle: u32) -> Option<&Obstacle> {
        self.movers.list.get(&handle)
    }

    /// Every obstacle on the map with its handle, handles ascending (the map's `movers` first,
    /// in its order).
    pub fn obstacles(&self) -> impl Iterator<Item = (u32, &Obstacle)> {
        self.movers.list.iter().map(|(&h, o)| (h, o))
    }

    /// The cells the potentials keep walkers out of this step (row-major indices, ascending):
    /// those the obstacles cover, widened by the largest walker's radius. No face leads into
    /// them.
    pub fn blocked_cells(&self) -> &[usize] {
        self.planner.blocked()
    }

    /// The cells the obstacles will cover within [`MOVER_LOOKAHEAD`] (widened alike, none of
    /// [`Simulation::blocked_cells`]), row-major indices, ascending, each with the faces along
    /// the travel over it ([`crate::mover::way_faces`]): no face from outside leads into them,
    /// and none out of them along the travel or toward its line.
    pub fn blocked_ahead(&self) -> &[(usize, u8)] {
        self.planner.blocked_ahead()
    }

    /// The steps of a run on a GPU that ran on the CPU because moving obstacles covered cells
    /// (the device's fields hold no moving obstacle).
    pub fn mover_cpu_steps(&self) -> usize {
        self.planner.mover_cpu_steps()
    }

    /// Moves every obstacle to where it stands at the end of the coming step and gives the
    /// planner the cells they cover, widened by the largest walker's radius.
    pub(super) fn move_obstacles(&mut self) {
        if self.movers.list.is_empty()
            && self.planner.blocked().is_empty()
            && self.planner.blocked_ahead().is_empty()
        {
            return;
        }
        let t = self.time_after_step();
        let dt = self.dt;
        for o in self.movers.list.values_mut() {
            match o.motion.on_path_at(t) {
                Some((position, velocity)) => {
                    o.position = position;
                    o.velocity = velocity;
                }
                None => {
                    o.position[0] += o.velocity[0] * dt;
                    o.position[1] += o.velocity[1] * dt;
                }
            }
        }
        let widen = self.dynamics.max_radius as f64;
        let grid = self.scene.grid;
        let (mut body, mut ahead) = (Vec::new(), Vec::new());
        for o in self.movers.list.values() {
            body.extend(o.shape.covered_cells(&grid, o.position, widen));
            for (at, v) in o.ahead(t, grid.cell_size).into_iter().skip(1) {
                ahead.extend(o.shape.covered_cells(&grid, at, widen).into_iter().map(|k| {
                    let (x, y) = grid.cell_center(k / grid.cols, k % grid.cols);
                    (k, crate::mover::way_faces(v, [x - at[0], y - at[1]]))
                }));
            }
        }
        body.sort_unstable();
        body.dedup();
        // One entry per cell, the faces of every travel over it.
        ahead.sort_unstable();
        ahead.dedup_by(|next, kept| {
            let same = next.0 == kept.0;
            if same {
                kept.1 |= next.1;
            }
            same
        });
        ahead.retain(|(k, _)| body.binary_search(k).is_err());
        self.planner.set_blocked(body, ahead);
    }

    /// Pushes every body an obstacle reaches to its edge (through the walls' step, so never
    /// through a wall); returns the handles of those still overlapping one (held by a wall)
    /// and how many were pushed.
    pub(super) fn clear_obstacles(&mut self) -> (Vec<u32>, usize) {
        if self.movers.list.is_empty() {
            return (Vec::new(), 0);
        }
        let scene = &self.scene;
        let obstacles: Vec<&Obstacle> = self.movers.list.values().collect();
        let a = &self.agents;
        let spans = self.walk.spans.view();
        let walls = self.walk.walls.as_ref();
        let bodies = scene.params.model == crate::params::Model::Pedestrian;
        let moved: Vec<Option<(f32, f32, bool)>> = (0..a.len())
            .into_par_iter()
            .map(|i| {
                let r = a.radius[i] as f64;
                let mut p = V2::new(a.x[i], a.y[i]);
                let mut pushed = false;
                for _ in 0..PUSH_ROUNDS {
                    let mut any = false;
                    for o in &obstacles {
                        let at = [p.x as f64, p.y as f64];
                        let Some(d) = o.shape.push_out(o.position, at, r, PUSH_CLEARANCE) else {
                            continue;
                        };
                        let body = Body::new(a.radius[i], scene.grid.cell_size, bodies);
                        let v = V2::new(d[0] as f32, d[1] as f32);
                        p = match walls {
                            Some(walls) => slide_body_exact(scene, walls, body.rim, a.group[i], p, v, 1.0),
                            None => slide_body(scene, spans, body, p, v, 1.0),
                        };
                        any = true;
                    }
                    pushed |= any;
                    if !any {
                        break;
                    }
                }
                pushed.then(|| {
                    let at = [p.x as f64, p.y as f64];
                    let held = obstacles
                        .iter()
                        .any(|o| o.shape.distance(o.position, at).0 < r - BLOCKED_SLACK);
                    (p.x, p.y, held)
                })
            })
            .collect();
        let mut blocked = Vec::new();
        let mut count = 0;
        for (i, m) in moved.into_iter().enumerate() {
            if let Some((x, y, held)) = m {
                count += 1;
                self.agents.x[i] = x;
                self.agents.y[i] = y;
                if held {
                    blocked.push(self.agents.id[i]);
                }
            }
        }
        (blocked, count)
    }
}
