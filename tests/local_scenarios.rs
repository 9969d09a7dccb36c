//! Scenario tests of the local layer: antipodal circle swap, head-on groups, a fish
//! school in a tank, a crowd through a bottleneck, bodies before openings narrower than
//! themselves. Small agent counts: they run in debug CI.

mod local_common;

use crowdfield::agents::Agents;
use crowdfield::local::quality::{CollisionCounter, JamTracker};
use crowdfield::local::{LocalBackend, LocalLayer, LocalMode};
use crowdfield::params::{BoidsParams, OrcaParams};
use local_common::{Rng, all_free, group, head_on_crossing, past_the_wall, scene, seek, through_opening};

const DT: f32 = 0.1;

/// The seeds of the preferred-velocity perturbation each scenario runs with
/// ([`LocalLayer::set_seed`]): the outcome of a dense, symmetric scene depends on such small
/// differences, so a scenario passing for one seed says little.
const SEEDS: std::ops::Range<u64> = 0..8;

#[test]
fn circle_swap_all_arrive_without_collision() {
    // Every seed: no overlap at any step, and everyone arrives within 60 s (four times the
    // straight walk of 15 s); typically within 40 s (the median over the seeds; the ring that
    // forms in the centre takes a while to unwind on some seeds).
    let mut times: Vec<f32> = SEEDS
        .map(|seed| circle_swap(seed).unwrap_or_else(|| panic!("seed {seed}: not all arrived within 60 s")))
        .collect();
    times.sort_by(f32::total_cmp);
    let median = times[times.len() / 2];
    assert!(median < 40.0, "median arrival {median} s: {times:?}");
}

/// The circle swap with perturbation seed `seed`: panics on an overlap, returns when all
/// arrived (s), `None` when they did not within 60 s.
fn circle_swap(seed: u64) -> Option<f32> {
    // RVO2's Circle example, scaled down: 32 agents on a 9 m circle walk to the antipode.
    // Like RVO2's example, it sets its own horizon: 3 s (RVO2's uses 10 s for agents of 1.5 m
    // radius at 2 m/s). With the pedestrian default of 2 s the perfectly symmetric crowd closes
    // into a ring around the centre, each agent's preferred velocity cancelled by its two ring
    // neighbours: ORCA's known symmetric deadlock, which RVO2's own examples break with random
    // perturbations. The outcome of this symmetric case depends on the horizon (measured with
    // 10 neighbours: 1.5 s and 2 s deadlock, 2.5 s and 3 s resolve, 4 s deadlocks again), so
    // the test pins the value and checks the two guarantees that matter: everyone arrives and
    // no two bodies ever overlap.
    let n = 32;
    let orca = OrcaParams {
        time_horizon: 3.0,
        ..OrcaParams::default()
    };
    let sc = scene(48, 48, 0.5, vec![group("circle", orca, None)]);
    let (cx, cy, radius) = (12.0f32, 12.0f32, 9.0f32);
    let mut a = Agents::default();
    let mut goals = Vec::new();
    for i in 0..n {
        let t = i as f32 / n as f32 * std::f32::consts::TAU;
        a.push(
            i as u32,
            cx + radius * t.cos(),
            cy + radius * t.sin(),
            0,
            0.4,
            1.2,
        );
        goals.push([cx - radius * t.cos(), cy - radius * t.sin()]);
    }
    let mut layer = LocalLayer::new(LocalMode::Orca, LocalBackend::CpuMulti).unwrap();
    layer.set_seed(seed);
    let mut counter = CollisionCounter::default();
    let mut steps = 0;
    while steps < 600 {
        let pref: Vec<[f32; 2]> = (0..n).map(|i| seek(a.x[i], a.y[i], goals[i], 1.2, DT)).collect();
        layer.step(&sc, &mut a, &pref, DT).unwrap();
        let c = counter.count(&a);
        assert_eq!(c.pairs, 0, "seed {seed}, step {steps}: {c:?}");
        steps += 1;
        let arrived = (0..n).all(|i| (a.x[i] - goals[i][0]).hypot(a.y[i] - goals[i][1]) < 0.1);
        if arrived {
            break;
        }
    }
    (steps < 600).then_some(steps as f32 * DT)
}

#[test]
fn head_on_groups_pass_through_each_other_without_collision() {
    for seed in SEEDS {
        let mut layer = LocalLayer::new(LocalMode::Orca, LocalBackend::CpuSingle).unwrap();
        layer.set_seed(seed);
        head_on_crossing(&mut layer, 500, DT);
    }
}

fn mean_nearest_distance(a: &Agents) -> f32 {
    let n = a.len();
    let mut sum = 0.0;
    for i in 0..n {
        let mut best = f32::INFINITY;
        for j in 0..n {
            if i != j {
                best = best.min((a.x[i] - a.x[j]).hypot(a.y[i] - a.y[j]));
            }
        }
        sum += best;
    }
    sum / n as f32
}

/// Sizes of the groups linked by distance `link` (union-find), largest first.
fn clusters(a: &Agents, link: f32) -> Vec<usize> {
    let n = a.len();
    let mut parent: Vec<usize> = (0..n).collect();
    fn find(p: &mut [usize], i: usize) -> usize {
        let mut r = i;
        while p[r] != r {
            r = p[r];
        }
        p[i] = r;
        r
    }
    for i in 0..n {
        for j in i + 1..n {
            if (a.x[i] - a.x[j]).hypot(a.y[i] - a.y[j]) < link {
                let (ri, rj) = (find(&mut parent, i), find(&mut parent, j));
                parent[ri] = rj;
            }
        }
    }
    let mut size = vec![0; n];
    for i in 0..n {
        size[find(&mut parent, i)] += 1;
    }
    let mut s: Vec<usize> = size.into_iter().filter(|&s| s > 0).collect();
    s.sort_unstable_by(|a, b| b.cmp(a));
    s
}

#[test]
fn fish_school_stays_in_its_tank_and_forms_groups() {
    // A 30 x 15 m tank with a rock in the middle; 120 fish, random positions and headings.
    let mut sc = scene(
        60,
        30,
        0.5,
        vec![group("fish", OrcaParams::default(), Some(BoidsParams::default()))],
    );
    for r in 12..18 {
        for c in 27..33 {
            sc.obstacle[(r, c)] = true;
        }
    }
    let mut rng = Rng(2024);
    let mut a = Agents::default();
    while a.len() < 120 {
        let (x, y) = (rng.range(0.5, 29.5), rng.range(0.5, 14.5));
        let mut probe = Agents::default();
        probe.push(0, x, y, 0, 0.1, 1.5);
        if all_free(&sc, &probe) {
            let id = a.len() as u32;
            a.push(id, x, y, 0, 0.1, 1.5);
            let t = rng.range(0.0, std::f32::consts::TAU);
            a.vx[id as usize] = t.cos();
            a.vy[id as usize] = t.sin();
        }
    }
    swim_and_check_schools(&sc, &mut a);
}

/// Flocks `a` for 30 s (600 steps of 0.05 s) in `sc`: every fish stays in the water (inside
/// the domain, out of obstacles) at every step, and the school gathers into groups: nearer
/// neighbours, far fewer clusters, a largest school of at least 10 fish, still swimming.
fn swim_and_check_schools(sc: &crowdfield::Scene, a: &mut Agents) {
    let nn_start = mean_nearest_distance(a);
    let clusters_start = clusters(a, 1.5).len();
    let mut layer = LocalLayer::new(LocalMode::Boids, LocalBackend::CpuMulti).unwrap();
    for step in 0..600 {
        layer.flock(sc, a, 0.05).unwrap();
        assert!(all_free(sc, a), "step {step}: a fish left the water");
    }
    let nn_end = mean_nearest_distance(a);
    let c = clusters(a, 1.5);
    assert!(
        nn_end < 0.8 * nn_start,
        "nearest-neighbour distance {nn_start} -> {nn_end}"
    );
    assert!(
        c.len() < clusters_start / 2,
        "groups {clusters_start} -> {}",
        c.len()
    );
    assert!(c[0] >= 10, "largest school has {} fish", c[0]);
    // Still swimming (not collapsed to rest).
    let mean_speed: f32 = (0..a.len()).map(|i| a.vx[i].hypot(a.vy[i])).sum::<f32>() / a.len() as f32;
    assert!(mean_speed > 0.3, "mean speed {mean_speed}");
}

#[test]
fn the_bundled_fish_tank_school_stays_in_the_water_and_forms_groups() {
    // maps/fish_tank.json: the same tank and rock as a map file, a flocking group without
    // goals, its 120 fish placed by the simulation's spawner and given random headings.
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("maps/fish_tank.json");
    let sc = crowdfield::map::load(&path).unwrap();
    assert_eq!(sc.groups.len(), 1);
    assert!(sc.groups[0].goals.is_empty() && sc.groups[0].boids.is_some());
    let rock = sc.grid.cell_of(15.0, 7.5).unwrap();
    assert!(sc.obstacle[rock], "the rock is in the middle of the tank");
    let mut a = crowdfield::sim::spawn::spawn_agents(&sc, 11).unwrap();
    assert_eq!(a.len(), 120);
    assert!(all_free(&sc, &a));
    assert!(a.radius.iter().all(|&r| (r - 0.1).abs() < 1e-6));
    assert!(a.max_speed.iter().all(|&v| (1.0..=1.5).contains(&v)));
    let mut rng = Rng(77);
    for i in 0..a.len() {
        let t = rng.range(0.0, std::f32::consts::TAU);
        a.vx[i] = t.cos();
        a.vy[i] = t.sin();
    }
    swim_and_check_schools(&sc, &mut a);
}

#[test]
fn dense_crowd_through_a_bottleneck_does_not_jam() {
    for seed in SEEDS {
        bottleneck(seed);
    }
}

/// The bottleneck with perturbation seed `seed`: everyone through the door within 45 s, no
/// overlap of a centimetre, and nobody who wants to move stands still for more than 15 s.
/// Measured over seeds 0..32: all through in at most 31.6 s, the longest stand-still 4.8-13.8 s
/// (agents pressed against the wall beside the door while the crowd squeezes through: the
/// door passes about 2.7 persons a second), no overlap of a centimetre.
fn bottleneck(seed: u64) {
    // A 24 x 12 m room; a wall at x = 12 m with a 2 m door; 80 walkers start packed on the left
    // and head for a point beyond the door.
    let mut sc = scene(48, 24, 0.5, vec![group("crowd", OrcaParams::default(), None)]);
    for r in 0..24 {
        if !(10..14).contains(&r) {
            sc.obstacle[(r, 24)] = true;
            sc.obstacle[(r, 25)] = true;
        }
    }
    // Aim just past the door's far side (the wall's east face is at x = 13 m).
    let door = [13.5f32, 6.0f32];
    let mut a = Agents::default();
    let mut rng = Rng(5);
    for r in 0..10 {
        for c in 0..8 {
            let x = 2.0 + c as f32 * 0.9 + rng.range(-0.05, 0.05);
            let y = 1.5 + r as f32 * 0.9 + rng.range(-0.05, 0.05);
            a.push(a.len() as u32, x, y, 0, 0.25, rng.range(1.1, 1.4));
        }
    }
    let mut layer = LocalLayer::new(LocalMode::Orca, LocalBackend::CpuMulti).unwrap();
    layer.set_seed(seed);
    let mut counter = CollisionCounter::default();
    let jam_seconds = 15.0;
    let mut jams = JamTracker::new(0.05, 0.25, jam_seconds);
    let mut worst = 0.0f32;
    let mut steps = 0;
    while steps < 900 {
        let pref: Vec<[f32; 2]> = (0..a.len())
            .map(|i| {
                // Left of the door's far side: aim through the door; beyond it: spread out to
                // ten points along the far wall of the next room.
                let target = if a.x[i] < 13.0 {
                    door
                } else {
                    [21.0, 1.5 + (i % 10) as f32]
                };
                seek(a.x[i], a.y[i], target, a.max_speed[i], DT)
            })
            .collect();
        layer.step(&sc, &mut a, &pref, DT).unwrap();
        assert!(all_free(&sc, &a));
        // At the door bodies may still overlap by a few millimetres, where the contact pass's
        // push is stopped by the wall; never by a centimetre.
        let c = counter.count(&a);
        assert!(c.max_depth < 1e-2, "seed {seed}, step {steps}: {c:?}");
        // The jam figure concerns the bottleneck: walkers past the door no longer count.
        let wanting: Vec<[f32; 2]> = (0..a.len())
            .map(|i| if a.x[i] > 14.0 { [0.0, 0.0] } else { pref[i] })
            .collect();
        let s = jams.update(&a, &wanting, DT);
        worst = worst.max(s.longest_s);
        steps += 1;
        if (0..a.len()).all(|i| a.x[i] > 13.0) {
            break;
        }
    }
    assert!(
        worst <= jam_seconds,
        "seed {seed}: an agent stood still for {worst} s"
    );
    assert!(steps < 450, "seed {seed}: not everyone passed the door in 45 s");
}

/// The local layer's move keeps bodies out of openings narrower than themselves, its contact
/// pass included: two bodies of 4 m stay before a door of 1 m, twenty of 0.5 m before a
/// corridor of 0.25 m, and twenty of 0.5 m pass a door of 1 m.
#[test]
fn no_body_passes_an_opening_narrower_than_itself() {
    for (opening, radius, count, passes) in
        [((4, 2), 2.0, 2, 0), ((1, 8), 0.25, 20, 0), ((4, 2), 0.25, 20, 20)]
    {
        let mut layer = LocalLayer::new(LocalMode::Orca, LocalBackend::CpuMulti).unwrap();
        let a = through_opening(&mut layer, opening, radius, count, 400, 0.1);
        assert_eq!(
            past_the_wall(&a, opening.1),
            passes,
            "{opening:?} cells, radius {radius} m: {:?}",
            a.x
        );
    }
}
