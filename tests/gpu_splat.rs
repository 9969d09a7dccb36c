//! The GPU density splat against its CPU twin and on invariants: mass, a single agent at a
//! cell centre, uniform velocity, determinism.

mod gpu_support;

use crowdfield::agents::Agents;
use crowdfield::gpu::{SPLAT_FIXED_SCALE, splat_twin};
use crowdfield::grid::Grid;
use gpu_support::{Rng, gpu};

fn crowd(n: usize, seed: u64, w: f32, h: f32) -> Agents {
    let mut rng = Rng(seed);
    let mut a = Agents::default();
    for i in 0..n {
        a.push(i as u32, rng.next_f32() * w, rng.next_f32() * h, 0, 0.25, 1.3);
        a.vx[i] = rng.next_f32() * 2.0 - 1.0;
        a.vy[i] = rng.next_f32() * 2.0 - 1.0;
    }
    a
}

#[test]
fn gpu_matches_twin() {
    let Some(ctx) = gpu() else { return };
    let grid = Grid::new(30, 20, 0.5);
    let agents = crowd(4000, 1, 15.0, 10.0);
    let g = ctx.splat(&grid, 1.5, &agents).unwrap();
    let t = splat_twin(&grid, 1.5, &agents).unwrap();
    // pow() on a GPU is approximate: allow a few fixed-point units per contribution.
    let per_agent = 4.0 / SPLAT_FIXED_SCALE / (0.5 * 0.5);
    for ((i, a), b) in g.rho.indexed_iter().zip(t.rho.iter()) {
        let n_here = 60.0; // generous bound on agents touching one cell
        assert!(
            (a - b).abs() <= 1e-4 * a.abs() + per_agent * n_here,
            "rho {i:?}: {a} vs {b}"
        );
    }
    for (a, b) in g.vx.iter().zip(t.vx.iter()).chain(g.vy.iter().zip(t.vy.iter())) {
        assert!((a - b).abs() <= 1e-3, "v: {a} vs {b}");
    }
    // Determinism: the same input gives the same bits.
    assert_eq!(g, ctx.splat(&grid, 1.5, &agents).unwrap());
}

#[test]
fn single_agent_at_a_centre_stays_in_its_cell() {
    let Some(ctx) = gpu() else { return };
    let grid = Grid::new(10, 10, 2.0);
    let mut a = Agents::default();
    a.push(0, 5.0, 7.0, 0, 0.25, 1.3); // centre of cell (row 3, col 2)
    a.vx[0] = 0.8;
    a.vy[0] = -0.3;
    let d = ctx.splat(&grid, 1.5, &a).unwrap();
    for ((r, c), &v) in d.rho.indexed_iter() {
        let expected = if (r, c) == (3, 2) { 1.0 / 4.0 } else { 0.0 };
        assert!((v - expected).abs() < 1e-6, "({r},{c}) {v}");
    }
    assert!((d.vx[(3, 2)] - 0.8).abs() < 1e-4 && (d.vy[(3, 2)] + 0.3).abs() < 1e-4);
}

#[test]
fn uniform_velocity_averages_to_itself_and_mass_matches_weights() {
    let Some(ctx) = gpu() else { return };
    let grid = Grid::new(16, 16, 1.0);
    let mut agents = crowd(500, 2, 14.0, 14.0);
    agents.x.iter_mut().for_each(|x| *x += 1.0);
    agents.y.iter_mut().for_each(|y| *y += 1.0);
    agents.vx.fill(0.7);
    agents.vy.fill(-0.2);
    let d = ctx.splat(&grid, 1.0, &agents).unwrap();
    // lambda = 1: the four weights are min() terms; with agents inside the centre lattice the
    // total weight per agent is in [1, 2].
    let total: f32 = d.rho.sum();
    assert!((500.0 * 0.999..=1000.0 * 1.001).contains(&total), "{total}");
    let twin_total: f32 = splat_twin(&grid, 1.0, &agents).unwrap().rho.sum();
    assert!((total - twin_total).abs() < 0.01, "{total} vs {twin_total}");
    for ((i, &rho), (&vx, &vy)) in d.rho.indexed_iter().zip(d.vx.iter().zip(d.vy.iter())) {
        if rho > 1e-3 {
            assert!(
                (vx - 0.7).abs() < 1e-3 && (vy + 0.2).abs() < 1e-3,
                "{i:?}: {vx} {vy}"
            );
        }
    }
}
