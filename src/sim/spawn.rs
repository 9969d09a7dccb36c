//! Placing agents in their groups' spawn areas: reproducible from a seed, never inside an
//! obstacle, never overlapping.
//!
//! Each spawn area is filled from a jittered hexagonal lattice: the lattice spacing is chosen so
//! that the area holds its count with room to spare (shrinking toward the closest packing
//! `2 * radius` only when the area is crowded), the lattice points inside the area's free cells
//! are shuffled with the seed, the first `count` kept, and each is moved by a random offset small
//! enough that no two agents can overlap. Sparse areas therefore look random, dense ones
//! approach the hexagonal packing, and an area that cannot hold its count is a clear error.

use crate::agents::Agents;
use crate::error::{Error, Result};
use crate::scene::{Area, Scene};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::HashMap;

pub use crate::lattice::area_capacity;
use crate::lattice::{
    MAX_LATTICE_POINTS, SPAWN_CLEARANCE, cell_is_free, free_bounds, lattice, lattice_size, square_metres,
};

/// Each failed attempt to fit an area's count shrinks the lattice spacing by this factor; 3 %
/// keeps the final spacing within 3 % of the largest one that fits.
const SPACING_SHRINK: f64 = 0.97;

/// The first lattice tried leaves each agent this multiple of its share of the area, so sparse
/// areas keep room for a large random jitter.
const SPACING_HEADROOM: f64 = 1.5;

/// Tries per agent to find a jittered position that stays in the area and clear of agents
/// placed by earlier spawn areas, before falling back to the lattice point itself.
const JITTER_TRIES: usize = 4;

/// The ChaCha stream of the pre-movement times (stream 0 places the agents and draws speeds).
const PREMOVEMENT_STREAM: u64 = 1;

/// Places every group's agents. Agent ids are `0..n` in group order, then spawn-area order.
/// Preferred speeds follow the group's distribution ([`crate::speeds::sample_speed`]), pre-movement times
/// uniform in the spawn area's range. The pre-movement times come from a random stream of their
/// own (seeded from `seed`), so giving an area a pre-movement time moves no one's position or
/// speed.
pub fn spawn_agents(scene: &Scene, seed: u64) -> Result<Agents> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut start_rng = ChaCha8Rng::seed_from_u64(seed);
    start_rng.set_stream(PREMOVEMENT_STREAM);
    let mut agents = Agents::default();
    let max_radius = scene.groups.iter().map(|g| g.radius).fold(0.05, f64::max);
    let mut occupied = SpatialHash::new(2.0 * max_radius * (1.0 + SPAWN_CLEARANCE));
    for (gi, group) in scene.groups.iter().enumerate() {
        let at_group = format!("groups[{gi}]");
        if !(group.radius.is_finite() && group.radius > 0.0) {
            return Err(Error::invalid(
                &scene.name,
                format!("{at_group}.radius"),
                format!("{} m: expected a positive radius", group.radius),
            ));
        }
        if !(group.speed_min.is_finite() && group.speed_min >= 0.0 && group.speed_max >= group.speed_min) {
            return Err(Error::invalid(
                &scene.name,
                format!("{at_group}.speed"),
                format!(
                    "[{}, {}] m/s: expected 0 <= speed_min <= speed_max",
                    group.speed_min, group.speed_max
                ),
            ));
        }
        for (si, spawn) in group.spawns.iter().enumerate() {
            let points = place_in_area(scene, &spawn.area, spawn.count, group.radius, &mut rng, &occupied)
                .map_err(|message| {
                    Error::invalid(
                        &scene.name,
                        format!("{at_group}.spawns[{si}].count"),
                        format!("{}: {message}", spawn.count),
                    )
                })?;
            let n = points.len();
            for (i, (x, y)) in points.into_iter().enumerate() {
                let speed = crate::speeds::sample_speed(
                    &group.speed_distribution,
                    group.speed_min,
                    group.speed_max,
                    i,
                    n,
                    &mut rng,
                );
                let id = agents.len() as u32;
                agents.push(
                    id,
                    x as f32,
                    y as f32,
                    gi as u32,
                    group.radius as f32,
                    speed as f32,
                );
                let [early, late] = spawn.premovement;
                if late > 0.0 {
                    let wait = if late > early {
                        start_rng.random_range(early..=late)
                    } else {
                        early
                    };
                    *agents.start_time.last_mut().expect("just pushed") = wait as f32;
                }
                occupied.insert(x, y, group.radius);
            }
        }
    }
    Ok(agents)
}

/// The bodies on the map, for placing a source's walkers clear of them
/// ([`place_clear_of`]).
pub(crate) struct Occupied(SpatialHash);

impl Occupied {
    /// The bodies of `agents`, for walkers of at most `max_radius` (at least every radius of
    /// `agents`).
    pub(crate) fn of(agents: &Agents, max_radius: f64) -> Self {
        let mut hash = SpatialHash::new(2.0 * max_radius * (1.0 + SPAWN_CLEARANCE));
        for i in 0..agents.len() {
            hash.insert(agents.x[i] as f64, agents.y[i] as f64, agents.radius[i] as f64);
        }
        Self(hash)
    }
}

/// One position in `area` (free cells only) for a body of `radius`, clear of every body of
/// `occupied`, which then holds it too: a source's walker arriving among those already there.
/// `None` when the area has no room for it at present.
pub(crate) fn place_clear_of(
    scene: &Scene,
    area: &Area,
    radius: f64,
    rng: &mut ChaCha8Rng,
    occupied: &mut Occupied,
) -> Option<(f64, f64)> {
    let (x, y) = place_in_area(scene, area, 1, radius, rng, &occupied.0)
        .ok()
        .and_then(|points| points.first().copied())?;
    occupied.0.insert(x, y, radius);
    Some((x, y))
}

/// `count` positions in `area` (free cells only), at least `2 * radius` apart and clear of the
/// agents already in `occupied`. The error message (to follow the count) names the area and
/// says how many it can hold.
fn place_in_area(
    scene: &Scene,
    area: &Area,
    count: usize,
    radius: f64,
    rng: &mut ChaCha8Rng,
    occupied: &SpatialHash,
) -> std::result::Result<Vec<(f64, f64)>, String> {
    if count == 0 {
        return Ok(Vec::new());
    }
    let grid = &scene.grid;
    let free = |x: f64, y: f64| cell_is_free(grid, &area.mask, &scene.obstacle, x, y);
    let Some((bbox, free_cells)) = free_bounds(grid, &area.mask, &scene.obstacle) else {
        return Err(format!(
            "the area '{}' has no free cell (all are obstacles or outside the grid)",
            crate::text::truncate_for_message(&area.name)
        ));
    };
    let h = grid.cell_size;
    let min_spacing = 2.0 * radius * (1.0 + SPAWN_CLEARANCE);
    let area_m2 = free_cells as f64 * h * h;
    // Hexagonal lattice: each point owns sqrt(3)/2 * s^2 of area.
    let mut spacing = (SPACING_HEADROOM * area_m2 / (count as f64 * 3f64.sqrt() / 2.0)).sqrt();
    spacing = spacing.max(min_spacing);
    let mut best_fit = 0usize;
    // A placement that needs a lattice this large gives up (the area is taken by other
    // groups' agents: ever finer lattices found no room and cost ever more).
    let most_points = MAX_LATTICE_POINTS.max(64.0 * count as f64);
    let holds_at_most = |best_fit: usize, how: &str| {
        format!(
            "the area '{}' ({} m² of free cells) holds at most {best_fit} agents of radius {radius} m \
             {how}: lower the count to {best_fit} or enlarge the area",
            crate::text::truncate_for_message(&area.name),
            square_metres(area_m2)
        )
    };
    loop {
        if lattice_size(bbox, spacing) > most_points {
            return Err(holds_at_most(best_fit, "clear of the agents already placed"));
        }
        let mut points = lattice(bbox, spacing, |x, y| {
            free(x, y) && !occupied.conflicts(x, y, radius)
        });
        best_fit = best_fit.max(points.len());
        if points.len() >= count {
            points.shuffle(rng);
            points.truncate(count);
            // Jitter: two lattice points are `spacing` apart, so moving each by at most
            // `(spacing - min_spacing) / 2` keeps them `min_spacing` apart.
            let jitter = 0.5 * (spacing - min_spacing);
            for p in &mut points {
                if jitter <= 0.0 {
                    break;
                }
                for _ in 0..JITTER_TRIES {
                    let angle = rng.random_range(0.0..std::f64::consts::TAU);
                    let dist = jitter * rng.random::<f64>().sqrt();
                    let (x, y) = (p.0 + dist * angle.cos(), p.1 + dist * angle.sin());
                    if free(x, y) && !occupied.conflicts(x, y, radius) {
                        *p = (x, y);
                        break;
                    }
                }
            }
            return Ok(points);
        }
        if spacing <= min_spacing {
            return Err(holds_at_most(best_fit, "without overlap"));
        }
        spacing = (spacing * SPACING_SHRINK).max(min_spacing);
    }
}

/// Agents placed so far, hashed by square buckets, to keep later spawn areas clear of them.
struct SpatialHash {
    bucket: f64,
    cells: HashMap<(i64, i64), Vec<(f64, f64, f64)>>,
}

impl SpatialHash {
    /// `bucket` must be at least the largest sum of two radii.
    fn new(bucket: f64) -> Self {
        Self {
            bucket,
            cells: HashMap::new(),
        }
    }

    fn key(&self, x: f64, y: f64) -> (i64, i64) {
        ((x / self.bucket).floor() as i64, (y / self.bucket).floor() as i64)
    }

    fn insert(&mut self, x: f64, y: f64, radius: f64) {
        let k = self.key(x, y);
        self.cells.entry(k).or_default().push((x, y, radius));
    }

    /// True when a disc of `radius` at `(x, y)` would overlap an agent already placed.
    fn conflicts(&self, x: f64, y: f64, radius: f64) -> bool {
        let (kx, ky) = self.key(x, y);
        for dy in -1..=1 {
            for dx in -1..=1 {
                if let Some(list) = self.cells.get(&(kx + dx, ky + dy)) {
                    for &(px, py, pr) in list {
                        let d = (radius + pr) * (1.0 + SPAWN_CLEARANCE);
                        if (px - x).powi(2) + (py - y).powi(2) < d * d {
                            return true;
                        }
                    }
                }
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::Grid;
    use ndarray::Array2;

    #[test]
    fn square_metres_are_never_shown_as_zero() {
        assert_eq!(square_metres(12.0), "12");
        assert_eq!(square_metres(0.25), "0.25");
        assert_eq!(square_metres(0.0025), "0.0025");
        assert_eq!(square_metres(0.0001), "0.0001");
        assert_eq!(square_metres(0.00012345), "0.00012");
        assert_eq!(square_metres(0.0), "0");
    }
    use crate::params::OrcaParams;
    use crate::scene::{Group, Spawn};

    fn rect_mask(grid: &Grid, c0: usize, r0: usize, c1: usize, r1: usize) -> crate::scene::CellMask {
        Array2::from_shape_fn(grid.shape(), |(r, c)| {
            (r0..r1).contains(&r) && (c0..c1).contains(&c)
        })
        .into()
    }

    fn scene_with_spawn(count: usize, radius: f64) -> Scene {
        let grid = Grid::new(20, 20, 0.5);
        let mut scene = Scene::empty("spawn-test", grid);
        // An obstacle inside the spawn rectangle.
        for r in 4..6 {
            for c in 4..6 {
                scene.obstacle[[r, c]] = true;
            }
        }
        scene.groups.push(Group {
            name: "g".into(),
            color: [200, 0, 0],
            goals: vec![Area {
                name: "exit".into(),
                mask: rect_mask(&grid, 19, 0, 20, 20),
                width: 10.0,
            }],
            spawns: vec![Spawn {
                area: Area {
                    name: "block".into(),
                    mask: rect_mask(&grid, 0, 0, 10, 10),
                    width: 0.0,
                },
                count,
                premovement: [0.0, 0.0],
            }],
            speed_min: 1.0,
            speed_max: 1.4,
            speed_distribution: Default::default(),
            radius,
            boids: None,
            orca: OrcaParams::default(),
        });
        scene
    }

    #[test]
    fn agents_stay_in_free_cells_apart_and_reproducible() {
        let scene = scene_with_spawn(60, 0.2);
        let a = spawn_agents(&scene, 7).unwrap();
        assert_eq!(a.len(), 60);
        for i in 0..a.len() {
            let (r, c) = scene.grid.cell_of(a.x[i] as f64, a.y[i] as f64).unwrap();
            assert!(
                r < 10 && c < 10 && !scene.obstacle[[r, c]],
                "agent {i} at ({r},{c})"
            );
            assert!((1.0..=1.4).contains(&a.max_speed[i]));
            for j in 0..i {
                let d = ((a.x[i] - a.x[j]).powi(2) + (a.y[i] - a.y[j]).powi(2)).sqrt();
                assert!(d >= 0.4, "agents {i} and {j} only {d} m apart");
            }
        }
        assert_eq!(a, spawn_agents(&scene, 7).unwrap());
        assert_ne!(a.x, spawn_agents(&scene, 8).unwrap().x);
        assert!(a.start_time.iter().all(|&t| t == 0.0));
    }

    #[test]
    fn premovement_times_are_uniform_in_the_range_and_move_no_one() {
        let plain = scene_with_spawn(60, 0.2);
        let mut waiting = plain.clone();
        waiting.groups[0].spawns[0].premovement = [10.0, 40.0];
        let (a, b) = (
            spawn_agents(&plain, 3).unwrap(),
            spawn_agents(&waiting, 3).unwrap(),
        );
        // Same places and speeds: the waits come from a stream of their own.
        assert_eq!((&a.x, &a.y, &a.max_speed), (&b.x, &b.y, &b.max_speed));
        assert!(
            b.start_time.iter().all(|t| (10.0..=40.0).contains(t)),
            "{:?}",
            b.start_time
        );
        // Spread over the range, not one value: both thirds of the range are used.
        assert!(b.start_time.iter().any(|&t| t < 20.0) && b.start_time.iter().any(|&t| t > 30.0));
        assert_eq!(b, spawn_agents(&waiting, 3).unwrap(), "reproducible");
        assert_ne!(b.start_time, spawn_agents(&waiting, 4).unwrap().start_time);
        // A fixed wait.
        waiting.groups[0].spawns[0].premovement = [5.0, 5.0];
        assert!(
            spawn_agents(&waiting, 3)
                .unwrap()
                .start_time
                .iter()
                .all(|&t| t == 5.0)
        );
    }

    #[test]
    fn dense_area_reaches_close_packing_and_overfull_area_is_an_error() {
        // 24 m² of free cells; hexagonal packing of radius 0.2 holds about 24 / 0.139 = 173.
        let scene = scene_with_spawn(140, 0.2);
        assert_eq!(spawn_agents(&scene, 1).unwrap().len(), 140);
        let scene = scene_with_spawn(400, 0.2);
        let e = spawn_agents(&scene, 1).unwrap_err().to_string();
        assert!(
            e.contains("groups[0].spawns[0]") && e.contains("holds at most"),
            "{e}"
        );
    }
}
