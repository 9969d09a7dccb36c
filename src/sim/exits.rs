//! Where walkers leave. Each goal of a group is one of:
//! - an opening in the map's edge (a goal that reaches the edge): the walker leaves when its
//!   centre crosses the opening ([`WallSegments::crossed_opening`]); the edge beside the opening
//!   is wall, so the opening passes bodies as a door of its width does, and the goal's cells
//!   inside the map are floor the walkers cross to reach it;
//! - an area inside the map: the walker leaves when its centre enters the area as drawn (the
//!   scene's [`crate::scene::Outline`]), or the area's cells for a scene without an outline.
//!
//! The potential is 0 on every goal cell, so it gives no direction there: a walker on a goal
//! cell of its group heads straight for that goal ([`Exits::heading`]).

use crate::collision::WallSegments;
use crate::scene::Scene;
use crate::vec2::V2;
use geo::{BoundingRect, ClosestPoint, Contains, MultiPolygon, Point};

/// How arrivals at one goal are found.
#[derive(Clone, Debug)]
enum Way {
    /// Through an opening in the map's edge.
    Edge,
    /// Into the area as drawn, with its bounding box `[x0, y0, x1, y1]`.
    Area(MultiPolygon<f64>, [f64; 4]),
    /// Onto one of the goal's cells.
    Cells,
}

/// The goals of every group and how a walker leaves by each.
#[derive(Clone, Debug, Default)]
pub(crate) struct Exits {
    /// Per group, per goal.
    ways: Vec<Vec<Way>>,
}

impl Exits {
    /// The exits of `scene`, whose exact walls (and openings) are `walls`; without them every
    /// goal counts a walker on its cells.
    pub(crate) fn new(scene: &Scene, walls: Option<&WallSegments>) -> Self {
        let ways = scene
            .groups
            .iter()
            .enumerate()
            .map(|(g, group)| {
                (0..group.goals.len())
                    .map(|j| {
                        let Some(walls) = walls else {
                            return Way::Cells;
                        };
                        if walls.has_opening(g as u32, j as u32) {
                            return Way::Edge;
                        }
                        match scene.outline.as_ref().and_then(|o| o.goals.get(g)?.get(j)) {
                            Some(area) if !area.0.is_empty() => {
                                let b = area.bounding_rect().expect("a non-empty area has a box");
                                Way::Area(area.clone(), [b.min().x, b.min().y, b.max().x, b.max().y])
                            }
                            _ => Way::Cells,
                        }
                    })
                    .collect()
            })
            .collect();
        Self { ways }
    }

    /// The open goal of `group` (`open` says which are) a walker who stepped from `from` to `to`
    /// has left by, if any.
    pub(crate) fn arrival(
        &self,
        scene: &Scene,
        walls: Option<&WallSegments>,
        group: usize,
        from: V2,
        to: V2,
        open: impl Fn(usize) -> bool,
    ) -> Option<usize> {
        let ways = self.ways.get(group)?;
        if ways.iter().any(|w| matches!(w, Way::Edge))
            && let Some(crossed) = walls.and_then(|w| w.crossed_opening(from, to, group as u32))
        {
            return Some(crossed as usize);
        }
        let (x, y) = (to.x as f64, to.y as f64);
        let cell = scene.grid.cell_of(x, y);
        ways.iter().enumerate().find_map(|(j, way)| {
            let inside = match way {
                Way::Edge => false,
                Way::Area(area, b) => {
                    x >= b[0] && x <= b[2] && y >= b[1] && y <= b[3] && area.contains(&Point::new(x, y))
                }
                Way::Cells => cell.is_some_and(|rc| scene.groups[group].goals[j].mask[rc]),
            };
            (inside && open(j)).then_some(j)
        })
    }

    /// The unit direction a walker of `group` and radius `radius` at `p` on a cell of its goal `goal` walks in: to
    /// the nearest point of the goal's opening and out through it, or into its area.
    pub(crate) fn heading(
        &self,
        walls: &WallSegments,
        group: usize,
        goal: usize,
        p: V2,
        radius: f32,
    ) -> Option<[f32; 2]> {
        let way = self.ways.get(group)?.get(goal)?;
        let (x, y) = (p.x as f64, p.y as f64);
        let target = match way {
            Way::Edge => {
                let (q, normal) = walls.nearest_opening(p, radius, group as u32, goal as u32)?;
                // A point a little past the opening: straight out where the walker is in front
                // of it, towards its nearest end otherwise.
                [q[0] + 0.05 * normal[0], q[1] + 0.05 * normal[1]]
            }
            Way::Area(area, _) => match area.closest_point(&Point::new(x, y)) {
                geo::Closest::Intersection(q) | geo::Closest::SinglePoint(q) => [q.x(), q.y()],
                geo::Closest::Indeterminate => return None,
            },
            Way::Cells => return None,
        };
        let (dx, dy) = (target[0] - x, target[1] - y);
        let len = dx.hypot(dy);
        (len > 1e-9).then(|| [(dx / len) as f32, (dy / len) as f32])
    }
}
