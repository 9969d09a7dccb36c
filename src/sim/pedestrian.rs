//! The pedestrian model's speed (the map default, [`crate::params::Model::Pedestrian`]): the
//! continuum field gives each walker its direction, and the walker's own surroundings give its
//! speed, the least of three:
//!
//! 1. its free speed: its preferred speed, capped by the terrain speed across the faces it
//!    walks through (slopes slow it as in the published model);
//! 2. Weidmann's fundamental diagram at the density of the **other** walkers around it,
//!    `rho_i = sum_j K(|x_j - x_i|)` with a kernel of radius [`DENSITY_RADIUS`] that integrates
//!    to one (the expected count of others around a walker in a crowd of density `rho` is
//!    `rho` per square metre, so a lone walker reads 0 and walks at its free speed), divided by
//!    the share of the disc over open floor ([`open_share`]);
//! 3. a headway: at most `gap / T` ([`TIME_GAP`]), where `gap` is the distance between the
//!    bodies of the nearest walker ahead (in its walking lane: the bodies would touch if it
//!    walked straight on) that is nearer the walker's goal than it is (a lower potential of
//!    its own group). Ordering by potential means that two walkers never wait for each other,
//!    so a door cannot lock two walkers that each yield to the other. In a passage too narrow
//!    for two bodies side by side (single file, [`Floor::single_file`]) the gap is
//!    [`SINGLE_FILE_TIME_GAP`], the time people keep in single file.
//!
//! The separation step then keeps bodies apart. Everything here reads the state at the start
//! of the step and writes per agent, in agent order: deterministic for any thread count.

use crate::agents::Agents;
use crate::fields::SceneFaces;
use crate::grid::Dir;
use crate::neighbors::NeighborGrid;
use crate::params::Params;
use crate::scene::Scene;
use ndarray::Array2;
use rayon::prelude::*;

/// Radius of the density kernel, metres: a disc of 4.5 m², wide enough to hold several others
/// at the densities of a free-flowing crowd (pedestrian studies measure density over a few
/// square metres); with 0.8 m a walker in a crowd of 1 person/m² often counts no one.
pub const DENSITY_RADIUS: f32 = 1.2;

/// Time gap of the headway rule, seconds: a walker keeps at least this many seconds of its
/// own speed between its body and the body ahead. With 0.3 s the rule stops bodies from
/// pressing into each other but binds only above about 3 persons/m² (0.5 m bodies); a longer
/// gap slows dense crowds below Weidmann's diagram (0.7 s: 62 % of it at 2 persons/m²).
pub const TIME_GAP: f32 = 0.3;

/// Time gap of the headway rule in single file, seconds: walkers who cannot pass or walk
/// beside the one ahead keep the distance of Seyfried et al. 2005's single-file experiments,
/// whose required length grows by 1.06 m per m/s of speed (`d = 0.36 m + 1.06 s · v`). In a
/// crowd the staggered walkers use the gaps beside the one ahead, and [`TIME_GAP`] applies.
pub const SINGLE_FILE_TIME_GAP: f32 = 1.06;

/// How far a passage must stay too narrow for two bodies, ahead of and behind a walker, m,
/// for it to walk in single file: a door in a wall is a short constriction through which a
/// crowd passes in a zipper, not a file.
pub const SINGLE_FILE_REACH: f32 = 0.5;

/// Least bin size of the pedestrian model's neighbour grid, metres: its 3x3 bins cover every
/// walker within the bin size, which is at least [`DENSITY_RADIUS`] and the headway's reach
/// (`free speed x TIME_GAP` plus two body radii, beyond which the rule never binds;
/// [`look_radius`]).
pub const LOOK_RADIUS: f32 = 1.6;

/// The bin size for walkers of at most `max_speed` m/s and `max_radius` m keeping a time gap
/// of at most `time_gap` s: [`LOOK_RADIUS`], or the headway's reach when that is longer.
pub fn look_radius(max_speed: f32, max_radius: f32, time_gap: f32) -> f32 {
    LOOK_RADIUS.max(max_speed * time_gap + 2.0 * max_radius)
}

/// The speed rule's constants.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SpeedRule {
    /// Kernel radius, m (at most the neighbour grid's bin size, [`look_radius`]).
    pub density_radius: f32,
    /// Time gap, s.
    pub time_gap: f32,
    /// Time gap in single file, s.
    pub single_file_time_gap: f32,
}

impl Default for SpeedRule {
    fn default() -> Self {
        Self {
            density_radius: DENSITY_RADIUS,
            time_gap: TIME_GAP,
            single_file_time_gap: SINGLE_FILE_TIME_GAP,
        }
    }
}

/// The least share of the density kernel's disc that counts as open: the others around a
/// walker in a cell whose disc is mostly wall are counted over at least this share of it.
pub const MIN_OPEN_SHARE: f32 = 0.25;

/// Per cell, the share of the density kernel (radius `radius`, centred on the cell's centre)
/// over open cells of the grid: the others around a walker are counted over the open area
/// only, as an experiment measures a density over the floor where people can stand. Closed
/// are obstacle cells, cells outside the grid and goal cells (on a map with exact walls, only
/// of goals inside the map: a goal that reaches the map's edge is an opening there, and its
/// cells are floor): a goal drawn in a doorway stands
/// for the door's passage, whose walls would narrow the floor the walkers in it read (without
/// this, walkers vanish on entering the door before its constriction slows them, and such a
/// door passes 2.2 persons/(m·s) where a goal past the door gives 1.5–1.7). 0 in obstacle
/// cells.
pub fn open_share(scene: &Scene, radius: f32) -> Array2<f32> {
    let g = scene.grid;
    let h = g.cell_size as f32;
    let reach = (radius / h).ceil() as i64;
    let mut taps = Vec::new();
    for dr in -reach..=reach {
        for dc in -reach..=reach {
            let d2 = ((dr * dr + dc * dc) as f32) * h * h;
            if d2 < radius * radius {
                taps.push((dr, dc, 1.0 - d2 / (radius * radius)));
            }
        }
    }
    let total: f32 = taps.iter().map(|t| t.2).sum();
    let (rows, cols) = (g.rows as i64, g.cols as i64);
    let mut closed = scene.obstacle.clone();
    let on_border = |(r, c): (usize, usize)| r == 0 || c == 0 || r + 1 == g.rows || c + 1 == g.cols;
    for group in &scene.groups {
        for goal in &group.goals {
            // With exact walls a goal at the map's edge is an opening there; its cells are floor.
            if !scene.exact_walls || !goal.mask.cells().any(on_border) {
                goal.mask.or_into(&mut closed);
            }
        }
    }
    let mut share = Array2::<f32>::zeros(g.shape());
    share
        .as_slice_mut()
        .expect("a new array is contiguous")
        .par_chunks_mut(g.cols.max(1))
        .enumerate()
        .for_each(|(r, row)| {
            for (c, out) in row.iter_mut().enumerate() {
                if scene.obstacle[[r, c]] {
                    continue;
                }
                let open: f32 = taps
                    .iter()
                    .filter(|&&(dr, dc, _)| {
                        let (rr, cc) = (r as i64 + dr, c as i64 + dc);
                        (0..rows).contains(&rr)
                            && (0..cols).contains(&cc)
                            && !closed[[rr as usize, cc as usize]]
                    })
                    .map(|t| t.2)
                    .sum();
                *out = if total > 0.0 { open / total } else { 1.0 };
            }
        });
    share
}

/// What the pedestrian model reads of the floor, computed once per scene: the open share of
/// each cell's density disc, and the width of open floor across each cell.
#[derive(Clone, Debug, Default)]
pub struct Floor {
    /// Per cell, [`open_share`].
    pub open_share: Array2<f32>,
    /// Per cell, the width of open floor across a walk along x (the run of non-obstacle cells
    /// of the grid in the cell's column through it), m; 0 in obstacle cells.
    pub across_x: Array2<f32>,
    /// Per cell, the width of open floor across a walk along y (the run in the cell's row), m.
    pub across_y: Array2<f32>,
}

impl Floor {
    /// The floor of `scene` for a density kernel of radius `radius`.
    pub fn new(scene: &Scene, radius: f32) -> Self {
        let h = scene.grid.cell_size as f32;
        let runs = crate::collision::walls::FreeRuns::new(scene.obstacle.view());
        Self {
            open_share: open_share(scene, radius),
            across_x: runs.column.mapv(|n| n as f32 * h),
            across_y: runs.row.mapv(|n| n as f32 * h),
        }
    }

    /// The width of open floor across a walk along `(dx, dy)` (unit) at `(x, y)`: the run
    /// across the axis nearer the walking direction, times the cosine between them (the chord
    /// of a straight passage at any angle); `+inf` outside the grid.
    pub fn across(&self, g: &crate::grid::Grid, x: f32, y: f32, dx: f32, dy: f32) -> f32 {
        let Some((r, c)) = g.cell_of(x as f64, y as f64) else {
            return f32::INFINITY;
        };
        if dx.abs() >= dy.abs() {
            self.across_x[[r, c]] * dx.abs()
        } else {
            self.across_y[[r, c]] * dy.abs()
        }
    }

    /// Whether the floor has a single-file passage for bodies of `radius` anywhere, walking
    /// along either axis from a cell's centre (the longest time gap the floor asks for is then
    /// [`SINGLE_FILE_TIME_GAP`]).
    pub fn has_single_file(&self, g: &crate::grid::Grid, radius: f32) -> bool {
        if self.across_x.dim() != g.shape() {
            return false;
        }
        (0..g.rows).any(|r| {
            (0..g.cols).any(|c| {
                let (x, y) = g.cell_center(r, c);
                let (x, y) = (x as f32, y as f32);
                self.across_x[[r, c]] > 0.0
                    && (self.single_file(g, x, y, 1.0, 0.0, radius)
                        || self.single_file(g, x, y, 0.0, 1.0, radius))
            })
        })
    }

    /// Whether a walker of radius `radius` at `(x, y)` walking along `(dx, dy)` (unit) walks in
    /// single file: the floor across its way is narrower than two bodies side by side, here
    /// and [`SINGLE_FILE_REACH`] ahead and behind (a passage, not a door in a wall). Narrower
    /// than two bodies, every other walker in the passage is in its lane.
    pub fn single_file(&self, g: &crate::grid::Grid, x: f32, y: f32, dx: f32, dy: f32, radius: f32) -> bool {
        let two_bodies = 4.0 * radius;
        let s = SINGLE_FILE_REACH;
        [0.0, s, -s]
            .iter()
            .all(|&t| self.across(g, x + t * dx, y + t * dy, dx, dy) < two_bodies)
    }
}

/// Weidmann's speed at density `rho` (persons/m²) for free speed `free`, floored at 0.
pub fn weidmann_speed(p: &Params, free: f32, rho: f32) -> f32 {
    if rho <= 0.0 {
        return free;
    }
    let factor = 1.0 - (-p.weidmann_gamma * (1.0 / rho as f64 - 1.0 / p.weidmann_rho_jam)).exp();
    (free as f64 * factor).max(0.0) as f32
}

/// The terrain speed across the faces a walker at cell `i` (row-major) crosses walking along
/// `(dx, dy)` (unit), weighted like the field velocity; a closed face reads the free speed.
fn terrain_along(faces: &SceneFaces, p: &Params, i: usize, dx: f32, dy: f32) -> f32 {
    let fx = if dx >= 0.0 { Dir::E } else { Dir::W };
    let fy = if dy >= 0.0 { Dir::N } else { Dir::S };
    let t = |d| faces.terrain(i, d).unwrap_or(p.f_max) as f32;
    dx * dx * t(fx) + dy * dy * t(fy)
}

/// The potential `phi` at `(x, y)`: bilinear between the four cell centres around it, over
/// those of them with a finite potential (the cell's own value where none is; `+inf` outside
/// the grid).
pub fn potential_at(g: &crate::grid::Grid, phi: &Array2<f64>, x: f32, y: f32) -> f64 {
    let Some((r, c)) = g.cell_of(x as f64, y as f64) else {
        return f64::INFINITY;
    };
    let h = g.cell_size;
    let u = (x as f64 / h - 0.5).clamp(0.0, (g.cols - 1) as f64);
    let v = (y as f64 / h - 0.5).clamp(0.0, (g.rows - 1) as f64);
    let (c0, r0) = (u.floor() as usize, v.floor() as usize);
    let (c1, r1) = ((c0 + 1).min(g.cols - 1), (r0 + 1).min(g.rows - 1));
    let (tu, tv) = (u - c0 as f64, v - r0 as f64);
    let (mut sum, mut weight) = (0.0, 0.0);
    for (rr, cc, w) in [
        (r0, c0, (1.0 - tu) * (1.0 - tv)),
        (r0, c1, tu * (1.0 - tv)),
        (r1, c1, tu * tv),
        (r1, c0, (1.0 - tu) * tv),
    ] {
        let p = phi[[rr, cc]];
        if p.is_finite() && w > 0.0 {
            sum += w * p;
            weight += w;
        }
    }
    if weight > 0.0 { sum / weight } else { phi[[r, c]] }
}

/// The pedestrian speed of every agent: `vx, vy` hold the field velocities on entry (their
/// direction is kept, 0 for a walker that stands) and the model's velocities on exit.
/// `potentials` are the groups' potentials of the last solve.
#[allow(clippy::too_many_arguments)]
pub fn apply(
    scene: &Scene,
    faces: &SceneFaces,
    agents: &Agents,
    potentials: &[Array2<f64>],
    grid: &mut NeighborGrid,
    rule: SpeedRule,
    floor: &Floor,
    vx: &mut [f32],
    vy: &mut [f32],
) {
    let g = scene.grid;
    let phi_at = |group: usize, j: usize| -> f64 {
        match potentials.get(group) {
            Some(phi) => potential_at(&g, phi, agents.x[j], agents.y[j]),
            None => f64::INFINITY,
        }
    };
    apply_with(scene, faces, agents, phi_at, grid, rule, floor, vx, vy);
}

/// What the speed rule reads of a walker when it is another's neighbour, gathered in the
/// neighbour grid's order (`NeighborGrid::sorted`): a query reads the walkers of each row of
/// bins as one contiguous slice.
#[derive(Clone, Copy, Debug)]
struct Neighbor {
    x: f32,
    y: f32,
    radius: f32,
    /// The field velocity, as it enters the rule.
    vx: f32,
    vy: f32,
    group: u32,
    /// The walker's index in the agents.
    id: u32,
    /// Its potential under its own group's field.
    phi: f64,
}

/// As [`apply`], with the potentials read through `phi_at(group, j)`: agent `j`'s potential
/// under group `group`'s field, as [`potential_at`] gives it (`+inf` without one). The GPU
/// backend samples these on the device.
///
/// One pass in the neighbour grid's order: the walkers are gathered bin by bin with their
/// potential under their own field (read once per walker, not once per query), and each
/// walker's queries read the bins around it as contiguous slices of that copy. The values and
/// the order of every sum are those of a query through [`NeighborGrid::for_each_near`], so the
/// speeds are the same bit for bit; nothing is allocated per walker.
#[allow(clippy::too_many_arguments)]
pub fn apply_with(
    scene: &Scene,
    faces: &SceneFaces,
    agents: &Agents,
    phi_at: impl Fn(usize, usize) -> f64 + Sync,
    grid: &mut NeighborGrid,
    rule: SpeedRule,
    floor: &Floor,
    vx: &mut [f32],
    vy: &mut [f32],
) {
    let p = &scene.params;
    let g = scene.grid;
    grid.rebuild(&agents.x, &agents.y);
    let grid = &*grid;
    let r_k = rule.density_radius;
    let norm = 2.0 / (std::f32::consts::PI * r_k * r_k);
    let (vx_in, vy_in) = (&*vx, &*vy);
    let near: Vec<Neighbor> = grid
        .sorted
        .par_iter()
        .map(|&j| {
            let k = j as usize;
            let group = agents.group[k];
            Neighbor {
                x: agents.x[k],
                y: agents.y[k],
                radius: agents.radius[k],
                vx: vx_in[k],
                vy: vy_in[k],
                group,
                id: j,
                phi: phi_at(group as usize, k),
            }
        })
        .collect();
    let near = near.as_slice();
    let out: Vec<(f32, f32)> = near
        .par_iter()
        .map(|me| {
            let i = me.id as usize;
            let (ux, uy) = (me.vx, me.vy);
            let s = (ux * ux + uy * uy).sqrt();
            if !(s > 0.0 && s.is_finite()) {
                return (0.0, 0.0);
            }
            let (dx, dy) = (ux / s, uy / s);
            let (xi, yi, ri) = (me.x, me.y, me.radius);
            let cell = g.cell_of(xi as f64, yi as f64).map(|(r, c)| r * g.cols + c);
            let terrain = cell.map_or(p.f_max as f32, |c| terrain_along(faces, p, c, dx, dy));
            // The walker's own free speed, slowed by the slope in the proportion the terrain
            // slows the model's fastest walker (`f_max` on the flat): a population's fast
            // walkers keep their speed above `f_max`.
            let slope_factor = if p.f_max > 0.0 {
                (terrain / p.f_max as f32).clamp(0.0, 1.0)
            } else {
                1.0
            };
            let free = agents.max_speed[i] * slope_factor;
            let group = me.group;
            let phi_i = me.phi;
            let mut rho = 0.0f32;
            let mut gap = f32::INFINITY;
            grid.for_each_near_slots(xi, yi, |slots| {
                for o in &near[slots] {
                    if o.id == me.id {
                        continue;
                    }
                    let (ex, ey) = (o.x - xi, o.y - yi);
                    let d2 = ex * ex + ey * ey;
                    if d2 < r_k * r_k {
                        rho += norm * (1.0 - d2 / (r_k * r_k));
                    }
                    let along = ex * dx + ey * dy;
                    if along <= 0.0 {
                        continue;
                    }
                    let reach = ri + o.radius;
                    let across = (ex * dy - ey * dx).abs();
                    if across >= reach {
                        continue;
                    }
                    // A walker coming the other way is no one to follow: waiting for it while
                    // it waits for this one would lock the two for good. The separation step
                    // keeps their bodies apart as they pass.
                    if o.vx * dx + o.vy * dy < 0.0 {
                        continue;
                    }
                    let phi_j = if o.group == group {
                        o.phi
                    } else {
                        phi_at(group as usize, o.id as usize)
                    };
                    if !(phi_j < phi_i || (phi_j == phi_i && o.id < me.id)) {
                        continue;
                    }
                    gap = gap.min(d2.sqrt() - reach);
                }
            });
            let share = cell.map_or(1.0, |c| floor.open_share.as_slice().map_or(1.0, |o| o[c]));
            let rho = rho / share.max(MIN_OPEN_SHARE);
            let mut v = weidmann_speed(p, free, rho);
            if gap.is_finite() {
                let time_gap = if floor.single_file(&g, xi, yi, dx, dy, ri) {
                    rule.single_file_time_gap
                } else {
                    rule.time_gap
                };
                v = v.min((gap / time_gap).max(0.0));
            }
            (v * dx, v * dy)
        })
        .collect();
    for (me, (x, y)) in near.iter().zip(out) {
        vx[me.id as usize] = x;
        vy[me.id as usize] = y;
    }
}
