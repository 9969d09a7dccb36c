//! Shared helpers of the local-layer integration tests: scenes built in code, goal seeking,
//! a small deterministic random generator.

#![allow(dead_code)]

use crowdfield::Scene;
use crowdfield::agents::Agents;
use crowdfield::grid::Grid;
use crowdfield::params::{BoidsParams, OrcaParams};
use crowdfield::scene::Group;

/// A group with no goals or spawns (the tests place agents themselves).
pub fn group(name: &str, orca: OrcaParams, boids: Option<BoidsParams>) -> Group {
    Group {
        name: name.into(),
        color: [200, 80, 80],
        goals: Vec::new(),
        spawns: Vec::new(),
        speed_min: 1.0,
        speed_max: 1.0,
        radius: 0.25,
        boids,
        orca,
    }
}

/// An empty scene of `cols x rows` cells of `cell` metres with the given groups.
pub fn scene(cols: usize, rows: usize, cell: f64, groups: Vec<Group>) -> Scene {
    let mut s = Scene::empty("test", Grid::new(cols, rows, cell));
    s.groups = groups;
    s
}

/// Preferred velocity toward `target` at `speed`, slowing so as to stop on it within `dt`.
pub fn seek(x: f32, y: f32, target: [f32; 2], speed: f32, dt: f32) -> [f32; 2] {
    let (dx, dy) = (target[0] - x, target[1] - y);
    let d = (dx * dx + dy * dy).sqrt();
    if d < 1e-6 {
        return [0.0, 0.0];
    }
    let s = speed.min(d / dt);
    [dx / d * s, dy / d * s]
}

/// A deterministic xorshift generator (tests must not depend on a global seed).
pub struct Rng(pub u64);

impl Rng {
    /// Uniform in `[0, 1)`.
    pub fn f(&mut self) -> f32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 40) as f32 / (1u64 << 24) as f32
    }

    /// Uniform in `[a, b)`.
    pub fn range(&mut self, a: f32, b: f32) -> f32 {
        a + (b - a) * self.f()
    }
}

/// True when every agent's centre is inside the domain and outside obstacle cells.
pub fn all_free(scene: &Scene, a: &Agents) -> bool {
    (0..a.len()).all(|i| match scene.grid.cell_of(a.x[i] as f64, a.y[i] as f64) {
        Some(rc) => !scene.obstacle[rc],
        None => false,
    })
}
