//! ORCA against a reference and against its own guarantee.
//!
//! - `dodgy_2d` (a Rust port of RVO2) is the oracle: on hundreds of random neighbourhoods our
//!   half-planes plus linear program give the same new velocity. `dodgy_2d` differs from RVO2
//!   in one documented place (an agent already outside the velocity obstacle takes the whole
//!   correction instead of half), so these comparisons build our lines with that share
//!   ([`Share`] `{inside: 0.5, outside: 1.0}`); everything else (cut-off circle, legs,
//!   overlap case, linearProgram1/2/3) is compared as is.
//! - ORCA's guarantee with the layer's own reciprocal (RVO2) share: in random feasible cases no
//!   pair collides within the time horizon when all agents keep their new velocities.

mod local_common;

use crowdfield::agents::Agents;
use crowdfield::local::orca::{self, Share};
use crowdfield::local::{LocalBackend, LocalLayer, LocalMode};
use crowdfield::params::OrcaParams;
use crowdfield::vec2::V2;
use dodgy_2d::{Agent, AvoidanceOptions, Vec2};
use local_common::{Rng, group, scene};
use std::borrow::Cow;

/// Largest difference allowed between our velocity and dodgy's, m/s: both are f32 with the
/// same operations in nearly the same order; 1e-3 m/s is far below anything visible (1 mm per
/// second) and above accumulated round-off in near-degenerate programs.
const ORACLE_TOLERANCE: f32 = 1e-3;

/// dodgy_2d's share: half inside the velocity obstacle (equal responsibilities), all outside.
const DODGY_SHARE: Share = Share {
    inside: 0.5,
    outside: 1.0,
};

struct Case {
    pos: V2,
    vel: V2,
    radius: f32,
    others: Vec<(V2, V2, f32)>,
    preferred: V2,
    max_speed: f32,
}

fn random_case(rng: &mut Rng, dense: bool) -> Case {
    let spread = if dense { 1.5 } else { 5.0 };
    let n = (rng.f() * 12.0) as usize;
    let others = (0..n)
        .map(|_| {
            (
                V2::new(rng.range(-spread, spread), rng.range(-spread, spread)),
                V2::new(rng.range(-1.5, 1.5), rng.range(-1.5, 1.5)),
                rng.range(0.2, 0.5),
            )
        })
        .collect();
    Case {
        pos: V2::ZERO,
        vel: V2::new(rng.range(-1.5, 1.5), rng.range(-1.5, 1.5)),
        radius: rng.range(0.2, 0.5),
        others,
        preferred: V2::new(rng.range(-2.0, 2.0), rng.range(-2.0, 2.0)),
        max_speed: rng.range(0.5, 2.0),
    }
}

fn ours(c: &Case, tau: f32, dt: f32) -> orca::Solution {
    let lines: Vec<orca::Line> = c
        .others
        .iter()
        .map(|&(p, v, r)| orca::agent_line(c.pos, c.vel, c.radius, p, v, r, tau, dt, DODGY_SHARE))
        .collect();
    orca::solve(&lines, 0, c.max_speed, c.preferred, &mut Vec::new())
}

fn theirs(c: &Case, tau: f32, dt: f32) -> V2 {
    let me = Agent {
        position: Vec2::new(c.pos.x, c.pos.y),
        velocity: Vec2::new(c.vel.x, c.vel.y),
        radius: c.radius,
        avoidance_responsibility: 1.0,
    };
    let others: Vec<Cow<'_, Agent>> = c
        .others
        .iter()
        .map(|&(p, v, r)| {
            Cow::Owned(Agent {
                position: Vec2::new(p.x, p.y),
                velocity: Vec2::new(v.x, v.y),
                radius: r,
                avoidance_responsibility: 1.0,
            })
        })
        .collect();
    let opts = AvoidanceOptions {
        obstacle_margin: 0.0,
        time_horizon: tau,
        obstacle_time_horizon: tau,
    };
    let v = me.compute_avoiding_velocity(
        &others,
        &[],
        Vec2::new(c.preferred.x, c.preferred.y),
        c.max_speed,
        dt,
        &opts,
    );
    V2::new(v.x, v.y)
}

/// Compares our new velocity with dodgy_2d's on 400 random cases (asserting each); returns
/// how many of them were infeasible.
fn compare(dense: bool, seed: u64) -> usize {
    let mut rng = Rng(seed);
    let mut infeasible = 0;
    for case_no in 0..400 {
        let c = random_case(&mut rng, dense);
        let (tau, dt) = (rng.range(1.0, 5.0), rng.range(0.05, 0.25));
        let a = ours(&c, tau, dt);
        let b = theirs(&c, tau, dt);
        assert!(
            (a.velocity - b).len() <= ORACLE_TOLERANCE,
            "case {case_no}: ours {:?} dodgy {b:?} (infeasible: {})",
            a.velocity,
            a.infeasible
        );
        infeasible += a.infeasible as usize;
    }
    infeasible
}

#[test]
fn matches_dodgy_2d_on_sparse_random_neighbourhoods() {
    // The comparisons are asserted inside `compare`, case by case.
    compare(false, 0x9E3779B97F4A7C15);
}

#[test]
fn matches_dodgy_2d_on_dense_random_neighbourhoods_including_infeasible_ones() {
    let infeasible = compare(true, 0xD1B54A32D192ED03);
    // Dense overlapping cases must exercise the linearProgram3 fallback.
    assert!(
        infeasible >= 20,
        "only {infeasible} infeasible cases: the fallback is not tested"
    );
}

/// Smallest distance between two discs' centres moving linearly over `[0, t]`.
fn min_distance_within(pa: V2, va: V2, pb: V2, vb: V2, t: f32) -> f32 {
    let dp = pb - pa;
    let dv = vb - va;
    let s = if dv.len_sq() > 0.0 {
        (-dp.dot(dv) / dv.len_sq()).clamp(0.0, t)
    } else {
        0.0
    };
    (dp + dv * s).len()
}

#[test]
fn no_pair_collides_within_the_horizon_when_feasible() {
    let tau = 2.0;
    let orca = OrcaParams {
        time_horizon: tau as f64,
        obstacle_time_horizon: 1.0,
        // Two agents at 1.5 m/s can close 6 m in 2 s; with radii this covers every pair that
        // could meet within the horizon.
        neighbor_dist: 7.5,
        max_neighbors: 64,
    };
    let sc = scene(40, 40, 1.0, vec![group("g", orca, None)]);
    let mut rng = Rng(42);
    let mut feasible_cases = 0;
    for _ in 0..120 {
        // 30 non-overlapping agents in the middle 14 x 14 m (far from the border lines).
        let mut a = Agents::default();
        while a.len() < 30 {
            let (x, y, r) = (rng.range(13.0, 27.0), rng.range(13.0, 27.0), rng.range(0.2, 0.4));
            if (0..a.len())
                .all(|j| ((a.x[j] - x).powi(2) + (a.y[j] - y).powi(2)).sqrt() > a.radius[j] + r + 0.01)
            {
                let id = a.len() as u32;
                a.push(id, x, y, 0, r, 1.5);
                let i = a.len() - 1;
                a.vx[i] = rng.range(-1.0, 1.0);
                a.vy[i] = rng.range(-1.0, 1.0);
            }
        }
        let pref: Vec<[f32; 2]> = (0..30)
            .map(|_| [rng.range(-1.5, 1.5), rng.range(-1.5, 1.5)])
            .collect();
        let before = a.clone();
        let mut layer = LocalLayer::new(LocalMode::Orca, LocalBackend::CpuSingle).unwrap();
        let stats = layer.step(&sc, &mut a, &pref, 0.1).unwrap();
        assert_eq!(stats.wall_hits, 0);
        if stats.infeasible > 0 {
            continue;
        }
        feasible_cases += 1;
        for i in 0..30 {
            assert!(V2::new(a.vx[i], a.vy[i]).len() <= 1.5 + 1e-4, "speed limit");
            for j in i + 1..30 {
                let d = min_distance_within(
                    V2::new(before.x[i], before.y[i]),
                    V2::new(a.vx[i], a.vy[i]),
                    V2::new(before.x[j], before.y[j]),
                    V2::new(a.vx[j], a.vy[j]),
                    tau,
                );
                let r = before.radius[i] + before.radius[j];
                assert!(
                    d >= r * (1.0 - 1e-4),
                    "agents {i} and {j} come within {d} < {r} m within {tau} s"
                );
            }
        }
    }
    assert!(feasible_cases >= 60, "only {feasible_cases} feasible cases");
}
