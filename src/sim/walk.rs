//! The walk of a step: each walker's preferred velocity from the field (capped at its own
//! speed), the pedestrian model's speed, the local layer, the move against the walls, and the
//! separation of overlapping bodies.

use super::exits::Exits;
use super::{LocalHook, SEPARATION, SEPARATION_MAX_ITERATIONS, SEPARATION_SLACK, Simulation, pedestrian};
use crate::collision::WallSegments;
use crate::collision::overlap::{Push, coincident_direction};
use crate::collision::walls::{Body, slide_body, slide_body_exact};
use crate::gradient;
use crate::neighbors::NeighborGrid;
use crate::plan::ContinuumStep;
use crate::vec2::V2;
use ndarray::Array2;
use rayon::prelude::*;

/// What the walk keeps from step to step.
pub(crate) struct WalkState {
    /// Per cell, the free floor across it in cells ([`crate::collision::walls::FreeRuns::span`]):
    /// where the walk and the separation keep out bodies wider than an opening ([`slide_body`]).
    pub spans: Array2<u32>,
    /// The walls as drawn and the openings of the goals in the map's edge, on a map with exact
    /// walls (`None`: the walls are the obstacle cells).
    pub walls: Option<WallSegments>,
    /// How walkers leave by each goal.
    pub exits: Exits,
    /// The separation's neighbour grid.
    pub neighbors: NeighborGrid,
    /// The pedestrian model's neighbour grid (bins of [`pedestrian::look_radius`]).
    pub pedestrian_grid: NeighborGrid,
    pub pedestrian_rule: pedestrian::SpeedRule,
    /// What the pedestrian model reads of the floor ([`pedestrian::Floor`]; empty for the
    /// published model).
    pub pedestrian_floor: pedestrian::Floor,
    /// The local layer, when there is one.
    pub local: Option<Box<dyn LocalHook>>,
    /// The preferred velocities of the last step (the jam tracker's reference).
    pub preferred: Vec<[f32; 2]>,
}

impl Simulation {
    /// Preferred velocity (the field's, from the CPU's gradients or the device's samples),
    /// the pedestrian model's speed, the local layer, integration with walls.
    pub(super) fn advect(&mut self, field: &ContinuumStep) {
        let bodies = self.bodies_clear_walls();
        let grid = self.scene.grid;
        let agents = &self.agents;
        let planner = &self.planner;
        let gradients = planner.gradients();
        let now = self.time;
        let walls = self.walk.walls.as_ref();
        let exits = &self.walk.exits;
        let goal_masks = planner.goal_masks();
        let scene = &self.scene;
        // The potential each walker follows (its group's unless a route or goal says otherwise).
        let route_fields = self.routes.field.as_deref();
        let regions = planner.regions();
        let speed = match field {
            ContinuumStep::Cpu => Some(&planner.fields().expect("a CPU step keeps its fields").speed),
            ContinuumStep::Device(_) => None,
        };
        let (mut vx, mut vy): (Vec<f32>, Vec<f32>) = (0..agents.len())
            .into_par_iter()
            .map(|i| {
                if now < agents.start_time[i] as f64 {
                    // Pre-movement: standing where it was placed.
                    return (0.0, 0.0);
                }
                let g = agents.group[i] as usize;
                let [mut ux, mut uy] = match (field, speed) {
                    (ContinuumStep::Device(v), _) => [v.vx[i], v.vy[i]],
                    (ContinuumStep::Cpu, Some(speed)) => {
                        let f = route_fields.map_or(g, |f| f[i] as usize);
                        gradient::velocity_at(&grid, &gradients[f], speed.view(), agents.x[i], agents.y[i])
                    }
                    (ContinuumStep::Cpu, None) => unreachable!("a CPU step has its speeds"),
                };
                if !(ux.is_finite() && uy.is_finite()) {
                    (ux, uy) = (0.0, 0.0);
                }
                // A speed region scales the walker's own speed as it scales the field's.
                let cell = grid.cell_of(agents.x[i] as f64, agents.y[i] as f64);
                let cap = agents.max_speed[i] * cell.map_or(1.0, |rc| regions.factor_at(rc));
                // On a goal cell the potential is flat: head for the goal itself (a walker
                // heading for its exits, not for a stage of its route).
                if let Some(walls) = walls
                    && route_fields.is_none_or(|f| f[i] as usize == g)
                    && let Some(rc) = grid.cell_of(agents.x[i] as f64, agents.y[i] as f64)
                    && goal_masks[g][rc]
                {
                    let p = V2::new(agents.x[i], agents.y[i]);
                    // The open goal whose cell it is (the goal masks hold only open goals).
                    let goal = (scene.groups[g].goals.iter().enumerate())
                        .position(|(j, area)| area.mask[rc] && planner.exit_open(g, j));
                    if let Some([dx, dy]) = goal.and_then(|j| exits.heading(walls, g, j, p, agents.radius[i]))
                    {
                        (ux, uy) = (dx * cap, dy * cap);
                    }
                }
                let s = (ux * ux + uy * uy).sqrt();
                if s > cap && s > 0.0 {
                    ux *= cap / s;
                    uy *= cap / s;
                }
                (ux, uy)
            })
            .unzip();
        let pedestrian_model = self.scene.params.model == crate::params::Model::Pedestrian;
        if pedestrian_model {
            // The pedestrian model orders walkers by the potential each follows.
            self.swap_route_fields();
            let (walk, agents, planner) = (&mut self.walk, &self.agents, &self.planner);
            match field {
                ContinuumStep::Cpu => pedestrian::apply(
                    &self.scene,
                    planner.faces(),
                    agents,
                    planner.cpu_potentials(),
                    &mut walk.pedestrian_grid,
                    walk.pedestrian_rule,
                    &walk.pedestrian_floor,
                    &mut vx,
                    &mut vy,
                ),
                // Sampled on the device: potentials[group * agents + agent].
                ContinuumStep::Device(v) => {
                    let n = agents.len();
                    let phi_at = |group: usize, j: usize| -> f64 {
                        match v.potentials.get(group * n + j) {
                            Some(&p) if p < crate::gpu::PHI_INF => f64::from(p),
                            _ => f64::INFINITY,
                        }
                    };
                    pedestrian::apply_with(
                        &self.scene,
                        planner.faces(),
                        agents,
                        phi_at,
                        &mut walk.pedestrian_grid,
                        walk.pedestrian_rule,
                        &walk.pedestrian_floor,
                        &mut vx,
                        &mut vy,
                    );
                }
            }
            self.swap_route_fields();
        }
        for i in 0..vx.len() {
            [vx[i], vy[i]] = self.route_velocity(i, pedestrian_model, [vx[i], vy[i]]);
        }
        let (walk, agents) = (&mut self.walk, &self.agents);
        walk.preferred.clear();
        walk.preferred.extend(vx.iter().zip(&vy).map(|(&x, &y)| [x, y]));
        if let Some(layer) = walk.local.as_mut() {
            layer.adjust(&self.scene, agents, self.dt, &mut vx, &mut vy);
        }
        let dt = self.dt as f32;
        let scene = &self.scene;
        let spans = walk.spans.view();
        let walls = walk.walls.as_ref();
        let moved: Vec<(f32, f32, f32, f32)> = (0..agents.len())
            .into_par_iter()
            .map(|i| {
                let (x0, y0) = (agents.x[i], agents.y[i]);
                let body = Body::new(agents.radius[i], scene.grid.cell_size, bodies);
                let (p, v) = (V2::new(x0, y0), V2::new(vx[i], vy[i]));
                let q = match walls {
                    Some(walls) => slide_body_exact(scene, walls, body.rim, agents.group[i], p, v, dt),
                    None => slide_body(scene, spans, body, p, v, dt),
                };
                (q.x, q.y, (q.x - x0) / dt, (q.y - y0) / dt)
            })
            .collect();
        let a = &mut self.agents;
        for (i, (x, y, ux, uy)) in moved.into_iter().enumerate() {
            a.x[i] = x;
            a.y[i] = y;
            a.vx[i] = ux;
            a.vy[i] = uy;
        }
    }

    /// Whether walls stop the walkers' bodies (the pedestrian model) rather than their centres
    /// (the published model): [`slide_body`] is given the walker's radius as its rim, else 0.
    /// In both models no body enters an opening narrower than itself.
    fn bodies_clear_walls(&self) -> bool {
        self.scene.params.model == crate::params::Model::Pedestrian
    }

    /// Pushes overlapping pairs apart until every pair is within `SEPARATION_SLACK / 2` of its
    /// minimum distance or `SEPARATION_MAX_ITERATIONS` is reached. Each iteration is a Jacobi
    /// sweep: every agent moves by half of each of its overlaps ([`Push`] under [`SEPARATION`]),
    /// computed from the positions at the start of the iteration, then walls are enforced
    /// ([`slide_body`]: no push crosses a wall or carries a body into an opening narrower than
    /// itself).
    pub(super) fn separate(&mut self) {
        let scene = &self.scene;
        let bodies = self.bodies_clear_walls();
        let walk = &mut self.walk;
        let spans = walk.spans.view();
        for _ in 0..SEPARATION_MAX_ITERATIONS {
            let a = &self.agents;
            walk.neighbors.rebuild(&a.x, &a.y);
            let grid = &walk.neighbors;
            let pushes: Vec<(V2, f32)> = (0..a.len())
                .into_par_iter()
                .map(|i| {
                    let p = V2::new(a.x[i], a.y[i]);
                    let mut push = Push::default();
                    grid.for_each_near(p.x, p.y, |j| {
                        let j = j as usize;
                        if j == i {
                            return;
                        }
                        let d = p - V2::new(a.x[j], a.y[j]);
                        // Coincident agents split along a direction fixed by their indices.
                        push.add(SEPARATION, d, a.radius[i] + a.radius[j], 0.5, || {
                            coincident_direction((i.min(j) * 7919 + i.max(j)) as u64, i < j)
                        });
                    });
                    (push.total(a.radius[i]), push.worst)
                })
                .collect();
            let worst = pushes.iter().fold(0.0f32, |m, p| m.max(p.1));
            if (worst as f64) < 0.5 * SEPARATION_SLACK {
                break;
            }
            let a = &mut self.agents;
            for (i, (push, _)) in pushes.into_iter().enumerate() {
                if push != V2::ZERO {
                    let body = Body::new(a.radius[i], scene.grid.cell_size, bodies);
                    let p = V2::new(a.x[i], a.y[i]);
                    let q = match &walk.walls {
                        Some(walls) => slide_body_exact(scene, walls, body.rim, a.group[i], p, push, 1.0),
                        None => slide_body(scene, spans, body, p, push, 1.0),
                    };
                    a.x[i] = q.x;
                    a.y[i] = q.y;
                }
            }
        }
    }
}
