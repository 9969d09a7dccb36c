//! Shared helpers of the local-layer integration tests: scenes built in code, goal seeking,
//! a small deterministic random generator.

#![allow(dead_code)]

use crowdfield::Scene;
use crowdfield::agents::Agents;
use crowdfield::grid::Grid;
use crowdfield::local::LocalLayer;
use crowdfield::local::quality::CollisionCounter;
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
        speed_distribution: Default::default(),
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

/// Two blocks of 5 x 6 agents (about 1 person/m²) 20 m apart walk head-on through each other
/// for `steps` steps of `dt` on `layer` (an ORCA mode): no collision at any step, nobody leaves
/// free space, and every agent ends on the other side.
pub fn head_on_crossing(layer: &mut LocalLayer, steps: usize, dt: f32) {
    let orca = OrcaParams::default();
    let sc = scene(
        80,
        24,
        0.5,
        vec![group("east", orca.clone(), None), group("west", orca, None)],
    );
    let mut a = Agents::default();
    let mut rng = Rng(99);
    for g in 0..2u32 {
        for r in 0..6 {
            for c in 0..5 {
                let x0 = if g == 0 { 6.0 } else { 30.0 };
                let x = x0 + c as f32 + rng.range(-0.1, 0.1);
                let y = 3.5 + r as f32 + rng.range(-0.1, 0.1);
                a.push(a.len() as u32, x, y, g, 0.25, 1.3);
            }
        }
    }
    let goals: Vec<[f32; 2]> = (0..a.len())
        .map(|i| {
            if a.group[i] == 0 {
                [36.0, a.y[i]]
            } else {
                [4.0, a.y[i]]
            }
        })
        .collect();
    let mut counter = CollisionCounter::default();
    for step in 0..steps {
        let pref: Vec<[f32; 2]> = (0..a.len())
            .map(|i| seek(a.x[i], a.y[i], goals[i], 1.3, dt))
            .collect();
        layer.step(&sc, &mut a, &pref, dt).unwrap();
        let c = counter.count(&a);
        assert_eq!(c.pairs, 0, "step {step}: {c:?}");
        assert!(all_free(&sc, &a));
    }
    for i in 0..a.len() {
        let crossed = if a.group[i] == 0 {
            a.x[i] > 30.0
        } else {
            a.x[i] < 10.0
        };
        assert!(
            crossed,
            "agent {i} of group {} stuck at x = {}",
            a.group[i], a.x[i]
        );
    }
}

/// A room and a wall with an opening: 16 m x 10 m in cells of 0.25 m, a wall `thick` cells
/// thick from x = 8 m with an opening of `cells` cells from y = 4.5 m up.
pub fn wall_with_opening(cells: usize, thick: usize) -> Scene {
    let mut sc = scene(64, 40, 0.25, vec![group("walkers", OrcaParams::default(), None)]);
    for r in 0..40 {
        for c in 32..32 + thick {
            sc.obstacle[(r, c)] = !(18..18 + cells).contains(&r);
        }
    }
    sc
}

/// `count` agents of radius `radius`, packed four abreast west of the wall of
/// [`wall_with_opening`]`(cells, thick)`, seek its opening and then a point 6 m past it for
/// `steps` steps of `dt` on `layer`; nobody leaves free space. Returns the agents.
pub fn through_opening(
    layer: &mut LocalLayer,
    (cells, thick): (usize, usize),
    radius: f32,
    count: usize,
    steps: usize,
    dt: f32,
) -> Agents {
    let sc = wall_with_opening(cells, thick);
    let middle = 4.5 + 0.125 * cells as f32;
    let spacing = 2.0 * radius + 0.1;
    let rows = count.div_ceil(4);
    let mut a = Agents::default();
    for k in 0..count {
        let x = 7.5 - radius - (k % 4) as f32 * spacing;
        let y = middle + ((k / 4) as f32 - (rows - 1) as f32 / 2.0) * spacing;
        a.push(k as u32, x, y, 0, radius, 1.3);
    }
    assert!(all_free(&sc, &a));
    for _ in 0..steps {
        let pref: Vec<[f32; 2]> = (0..a.len())
            .map(|i| {
                let target = if a.x[i] < 8.0 {
                    [8.1, middle]
                } else {
                    [14.0, middle]
                };
                seek(a.x[i], a.y[i], target, 1.3, dt)
            })
            .collect();
        layer.step(&sc, &mut a, &pref, dt).unwrap();
        assert!(all_free(&sc, &a));
    }
    a
}

/// How many of `a` stand past the wall of [`wall_with_opening`] `thick` cells thick.
pub fn past_the_wall(a: &Agents, thick: usize) -> usize {
    a.x.iter().filter(|&&x| x > 8.0 + 0.25 * thick as f32).count()
}
