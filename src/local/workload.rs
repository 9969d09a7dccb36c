//! The scaling benchmark's crowd (after the boids benchmark of SPEC §5): `n` agents spread
//! uniformly at a given density in an open square, heading in random directions at 1 m/s,
//! each wanting 1.2 m/s in another random direction. Shared by `crowdfield bench local` and
//! `examples/bench_local.rs`, so both time the same workload.

use crate::agents::Agents;
use crate::grid::Grid;
use crate::params::{BoidsParams, OrcaParams};
use crate::scene::{Group, Scene};

/// Untimed steps before a benchmark of the layer times it: buffers allocated, caches filled, and
/// the overlaps of the random placement resolved (at 10⁶ agents the contact pass takes about
/// six steps over them, 0.3 s in the first; afterwards it lists a few thousand agents a step
/// and pushes none).
pub const WARM_UP_STEPS: usize = 8;

/// An open square for `n` agents at `density` agents/m² (at least 10 m a side, cells of 2 m)
/// with one group (radius 0.25 m, speed 1.2 to 1.5 m/s, default boids and ORCA parameters),
/// the agents, and their preferred velocities. The same `n` and `density` always give the same
/// crowd (a fixed xorshift sequence).
pub fn open_crowd(n: usize, density: f32) -> (Scene, Agents, Vec<[f32; 2]>) {
    let side = (n as f32 / density).sqrt().max(10.0);
    let cell = 2.0f64;
    let cols = (side as f64 / cell).ceil() as usize;
    let mut scene = Scene::empty("bench", Grid::new(cols, cols, cell));
    scene.groups.push(Group {
        name: "crowd".into(),
        color: [0, 0, 0],
        goals: vec![],
        spawns: vec![],
        speed_min: 1.2,
        speed_max: 1.2,
        speed_distribution: Default::default(),
        radius: 0.25,
        boids: Some(BoidsParams::default()),
        orca: OrcaParams::default(),
    });
    let side = (cols as f64 * cell) as f32;
    let mut s = 0x2545F4914F6CDD1Du64;
    let mut rnd = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s >> 40) as f32 / (1u64 << 24) as f32
    };
    let mut a = Agents::default();
    let mut pref = Vec::with_capacity(n);
    for i in 0..n {
        a.push(i as u32, rnd() * side, rnd() * side, 0, 0.25, 1.5);
        let t = rnd() * std::f32::consts::TAU;
        a.vx[i] = t.cos();
        a.vy[i] = t.sin();
        let t = rnd() * std::f32::consts::TAU;
        pref.push([1.2 * t.cos(), 1.2 * t.sin()]);
    }
    (scene, a, pref)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_crowd_has_its_density_inside_its_square() {
        let (scene, a, pref) = open_crowd(20_000, 0.5);
        let (w, h) = (scene.grid.width() as f32, scene.grid.height() as f32);
        let density = a.len() as f32 / (w * h);
        assert!((0.45..=0.5).contains(&density), "{density} agents/m²");
        assert!((0..a.len()).all(|i| (0.0..w).contains(&a.x[i]) && (0.0..h).contains(&a.y[i])));
        assert!(pref.iter().all(|p| (p[0].hypot(p[1]) - 1.2).abs() < 1e-5));
        assert_eq!(open_crowd(20_000, 0.5).1, a, "the same crowd every time");
    }
}
