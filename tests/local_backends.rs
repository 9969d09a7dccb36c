//! CPU single and CPU multi give bit-identical results, for every mode, with walls, for any
//! number of rayon threads.

mod local_common;

use crowdfield::Scene;
use crowdfield::agents::Agents;
use crowdfield::local::{LocalBackend, LocalLayer, LocalMode, MovingObstacle, boids_step};
use crowdfield::params::{BoidsParams, OrcaParams};
use local_common::{Rng, all_free, group, scene, seek};

fn crowd_scene() -> Scene {
    let mut s = scene(
        80,
        60,
        0.5,
        vec![
            group("a", OrcaParams::default(), Some(BoidsParams::default())),
            group("b", OrcaParams::default(), None),
        ],
    );
    // A wall with two doors across the middle, and a pillar.
    for r in 0..60 {
        if !(10..16).contains(&r) && !(40..44).contains(&r) {
            s.obstacle[(r, 40)] = true;
        }
    }
    for r in 25..30 {
        for c in 15..20 {
            s.obstacle[(r, c)] = true;
        }
    }
    s
}

fn crowd(n: usize, scene: &Scene) -> Agents {
    let mut rng = Rng(7);
    let mut a = Agents::default();
    while a.len() < n {
        let (x, y) = (rng.range(0.5, 39.5), rng.range(0.5, 29.5));
        if all_free(scene, &{
            let mut t = Agents::default();
            t.push(0, x, y, 0, 0.2, 1.0);
            t
        }) {
            let id = a.len() as u32;
            a.push(id, x, y, id % 2, 0.2, rng.range(1.0, 1.5));
        }
    }
    a
}

fn run(mode: LocalMode, backend: LocalBackend, threads: usize) -> Agents {
    let sc = crowd_scene();
    let mut a = crowd(1500, &sc);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    pool.install(|| {
        let mut layer = LocalLayer::new(mode, backend).unwrap();
        layer.moving_obstacles.push(MovingObstacle {
            pos: [10.0, 10.0],
            vel: [0.5, 0.0],
            radius: 0.6,
        });
        for step in 0..15 {
            let pref: Vec<[f32; 2]> = (0..a.len())
                .map(|i| {
                    let target = if a.group[i] == 0 { [38.0, 6.0] } else { [2.0, 26.0] };
                    seek(a.x[i], a.y[i], target, a.max_speed[i], 0.1)
                })
                .collect();
            layer.step(&sc, &mut a, &pref, 0.1).unwrap();
            layer.moving_obstacles[0].pos[0] = 10.0 + 0.05 * step as f32;
        }
    });
    a
}

#[test]
fn single_and_multi_thread_agree_bit_for_bit_in_every_mode() {
    for mode in [
        LocalMode::None,
        LocalMode::Boids,
        LocalMode::Orca,
        LocalMode::BoidsOrca,
    ] {
        let single = run(mode, LocalBackend::CpuSingle, 1);
        assert!(
            all_free(&crowd_scene(), &single),
            "{mode:?}: an agent left free space"
        );
        for threads in [2, 3] {
            let multi = run(mode, LocalBackend::CpuMulti, threads);
            assert!(
                single == multi,
                "{mode:?}: CpuMulti with {threads} threads differs from CpuSingle"
            );
        }
    }
}

#[test]
fn flock_single_and_multi_agree() {
    let sc = crowd_scene();
    let go = |backend, threads| {
        let mut a = crowd(800, &sc);
        for i in 0..a.len() {
            a.vx[i] = ((i * 37) % 11) as f32 / 10.0 - 0.5;
            a.vy[i] = ((i * 53) % 7) as f32 / 7.0 - 0.5;
        }
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| {
                for _ in 0..10 {
                    boids_step(&sc, &mut a, 0.1, backend).unwrap();
                }
            });
        a
    };
    let single = go(LocalBackend::CpuSingle, 1);
    assert!(single == go(LocalBackend::CpuMulti, 2));
    assert!(single == go(LocalBackend::CpuMulti, 4));
}
