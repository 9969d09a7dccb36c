//! Density splat, speed and unit cost against the SPEC §2–3 formulas on small scenes.

use crowdfield::agents::Agents;
use crowdfield::fields::{Density, Fields, speed, splat, unit_cost};
use crowdfield::params::{Params, SpeedLaw};
use crowdfield::{Dir, Grid, Scene};

fn one_agent(x: f32, y: f32) -> Agents {
    let mut a = Agents::default();
    a.push(0, x, y, 0, 0.25, 1.34);
    a
}

/// Weights in persons (density times cell area).
fn persons(grid: &Grid, d: &Density) -> ndarray::Array2<f64> {
    d.rho.mapv(|v| v as f64 * grid.cell_size * grid.cell_size)
}

#[test]
fn an_agent_at_a_cell_centre_is_one_person_in_that_cell() {
    let g = Grid::new(6, 5, 0.5);
    let (x, y) = g.cell_center(2, 3);
    let d = splat(&g, 1.5, &one_agent(x as f32, y as f32));
    let p = persons(&g, &d);
    assert!((p[[2, 3]] - 1.0).abs() < 1e-6, "{}", p[[2, 3]]);
    assert!((p.sum() - 1.0).abs() < 1e-6);
    assert!((d.rho[[2, 3]] - 4.0).abs() < 1e-5, "1 person in 0.25 m² is 4 /m²");
}

#[test]
fn splat_is_continuous_in_position_across_cell_boundaries() {
    let g = Grid::new(8, 8, 0.5);
    let step = 1e-4f64;
    for lambda in [1.0, 1.5, 2.0] {
        // Positions on a fine lattice include exact cell centres (where A changes) and edges.
        for i in 0..=40 {
            for j in [0usize, 7, 20, 25, 33] {
                let x = 1.0 + i as f64 * 0.025;
                let y = 1.0 + j as f64 * 0.025;
                let before = persons(&g, &splat(&g, lambda, &one_agent(x as f32, y as f32)));
                for (dx, dy) in [(step, 0.0), (0.0, step), (-step, step)] {
                    let after = persons(
                        &g,
                        &splat(&g, lambda, &one_agent((x + dx) as f32, (y + dy) as f32)),
                    );
                    let worst = (&after - &before).iter().fold(0.0f64, |m, v| m.max(v.abs()));
                    // Lipschitz bound of min(..)^lambda: lambda per cell moved.
                    let bound = lambda * 2.0 * step / g.cell_size + 1e-5;
                    assert!(
                        worst <= bound,
                        "lambda {lambda} at ({x}, {y}): jump {worst} > {bound}"
                    );
                }
            }
        }
    }
}

#[test]
fn each_agent_keeps_its_own_cell_share_and_no_more_in_neighbours() {
    let g = Grid::new(10, 10, 1.0);
    for lambda in [1.0, 1.5, 3.0] {
        let share = 0.5f64.powf(lambda);
        for k in 0..400 {
            // A deterministic scatter of positions over the interior, offsets all over the cell.
            let x = 2.0 + (k as f64 * 0.618_033_988_7).fract() * 6.0;
            let y = 2.0 + (k as f64 * 0.414_213_562_3).fract() * 6.0;
            let p = persons(&g, &splat(&g, lambda, &one_agent(x as f32, y as f32)));
            let (r, c) = g.cell_of(x, y).unwrap();
            assert!(
                p[[r, c]] >= share - 1e-5,
                "own cell {} < {share} at ({x}, {y})",
                p[[r, c]]
            );
            for ((rr, cc), &v) in p.indexed_iter() {
                if (rr, cc) != (r, c) {
                    assert!(v <= share + 1e-5, "neighbour ({rr}, {cc}) got {v} > {share}");
                }
            }
        }
    }
}

#[test]
fn average_velocity_of_a_uniform_crowd_is_their_velocity() {
    let g = Grid::new(12, 9, 0.5);
    let mut a = Agents::default();
    for k in 0..300 {
        let x = 0.2 + (k as f32 * 0.618_034).fract() * 5.6;
        let y = 0.2 + (k as f32 * 0.414_213_6).fract() * 4.1;
        a.push(k, x, y, 0, 0.25, 1.34);
    }
    a.vx.iter_mut().for_each(|v| *v = 0.7);
    a.vy.iter_mut().for_each(|v| *v = -0.3);
    let d = splat(&g, 1.5, &a);
    let mut covered = 0;
    for ((r, c), &rho) in d.rho.indexed_iter() {
        if rho > 0.0 {
            covered += 1;
            assert!((d.vx[[r, c]] - 0.7).abs() < 1e-5 && (d.vy[[r, c]] + 0.3).abs() < 1e-5);
        } else {
            assert_eq!((d.vx[[r, c]], d.vy[[r, c]]), (0.0, 0.0));
        }
    }
    assert!(covered > 50);
}

#[test]
fn splat_does_not_depend_on_the_thread_count() {
    let g = Grid::new(40, 30, 0.25);
    let mut a = Agents::default();
    for k in 0..5000u32 {
        let x = (k as f32 * 0.618_034).fract() * 10.0;
        let y = (k as f32 * 0.754_877_7).fract() * 7.5;
        a.push(k, x, y, 0, 0.25, 1.34);
        a.vx[k as usize] = (k as f32 * 0.37).sin();
        a.vy[k as usize] = (k as f32 * 0.11).cos();
    }
    let run = |threads| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| splat(&g, 1.5, &a))
    };
    let one = run(1);
    assert_eq!(one, run(3));
    assert_eq!(one, run(8));
}

#[test]
fn agents_outside_or_on_the_border_never_panic_and_drop_what_falls_off() {
    let g = Grid::new(4, 3, 1.0);
    let mut a = Agents::default();
    for (x, y) in [
        (4.0, 3.0),
        (0.0, 0.0),
        (-0.25, 1.5),
        (-50.0, 1.0),
        (1e30, 1e30),
        (f32::NAN, 1.0),
        (2.0, f32::INFINITY),
    ] {
        a.push(0, x, y, 0, 0.25, 1.34);
    }
    a.vx[0] = f32::NAN;
    let d = splat(&g, 1.5, &a);
    assert!(d.rho.iter().all(|v| v.is_finite() && *v >= 0.0));
    assert!(d.vx.iter().all(|v| v.is_finite()));
    // (-0.25, 1.5): 0.25 cells left of column 0's centre line; only B reaches the grid.
    let only = splat(&g, 1.0, &one_agent(-0.25, 1.5));
    assert!((only.rho[[1, 0]] - 0.25).abs() < 1e-6);
    assert!((only.rho.sum() - 0.25).abs() < 1e-6);
}

fn ramp_scene(slope: f32) -> Scene {
    let g = Grid::new(10, 4, 0.5);
    let mut s = Scene::empty("ramp", g);
    s.height = ndarray::Array2::from_shape_fn(g.shape(), |(_, c)| slope * c as f32 * 0.5);
    s
}

#[test]
fn uphill_is_slower_than_downhill_by_the_terrain_formula() {
    let s = ramp_scene(0.2);
    let f = speed(&s, &Density::empty(&s.grid));
    let p = &s.params;
    let expect_up = p.f_max + 0.2 / 0.5 * (p.f_min - p.f_max);
    for r in 0..4 {
        for c in 1..9 {
            let up = f[[r, c, Dir::E.index()]] as f64;
            let down = f[[r, c, Dir::W.index()]] as f64;
            assert!(up < down);
            assert!((up - expect_up).abs() < 1e-5, "{up} vs {expect_up}");
            assert!((down - p.f_max).abs() < 1e-6);
            assert!(
                (f[[r, c, Dir::N.index()]] as f64 - p.f_max).abs() < 1e-6,
                "flat across"
            );
        }
    }
    // Steeper than s_max: f_min.
    let steep = ramp_scene(1.0);
    let f = speed(&steep, &Density::empty(&steep.grid));
    assert!((f[[1, 3, Dir::E.index()]] as f64 - p.f_min).abs() < 1e-6);
}

#[test]
fn flat_empty_ground_walks_at_f_max_and_costs_beta_over_f_max_plus_alpha() {
    let g = Grid::new(7, 5, 0.5);
    let mut s = Scene::empty("flat", g);
    s.params.alpha = 0.5;
    let fields = Fields::compute(&s, &Agents::default());
    let p = &s.params;
    for r in 0..5 {
        for c in 0..7 {
            for d in Dir::ALL {
                let f = fields.speed[[r, c, d.index()]] as f64;
                let cost = fields.cost[[r, c, d.index()]] as f64;
                if g.neighbor(r, c, d).is_some() {
                    assert!((f - p.f_max).abs() < 1e-6);
                    assert!((cost - (p.alpha + p.beta / p.f_max)).abs() < 1e-5, "{cost}");
                } else {
                    assert_eq!(f, 0.0, "no speed out of the domain");
                    assert_eq!(cost, f64::INFINITY, "out of the domain costs +inf");
                }
            }
        }
    }
}

/// `n` agents at every cell centre of `grid`, all with velocity `(vx, vy)`.
fn packed_crowd(grid: &Grid, n: usize, vx: f32, vy: f32) -> Agents {
    let mut a = Agents::default();
    for r in 0..grid.rows {
        for c in 0..grid.cols {
            let (x, y) = grid.cell_center(r, c);
            for _ in 0..n {
                let i = a.len();
                a.push(i as u32, x as f32, y as f32, 0, 0.25, 1.34);
                a.vx[i] = vx;
                a.vy[i] = vy;
            }
        }
    }
    a
}

#[test]
fn a_dense_crowd_moving_east_sets_the_flow_speed() {
    let g = Grid::new(12, 6, 1.0);
    let s = Scene::empty("flow", g);
    // 6 persons per 1 m² cell: above rho_max = 5, so the flow speed alone applies.
    let fields = Fields::compute(&s, &packed_crowd(&g, 6, 0.8, 0.0));
    assert!((fields.density.rho[[3, 5]] - 6.0).abs() < 1e-5);
    for r in 0..6 {
        for c in 0..11 {
            assert!((fields.speed[[r, c, Dir::E.index()]] - 0.8).abs() < 1e-5);
        }
        for c in 1..12 {
            // Against the flow: floored at f_min.
            assert!((fields.speed[[r, c, Dir::W.index()]] as f64 - s.params.f_min).abs() < 1e-6);
        }
    }
    // 3.5 persons/m², half-way between rho_min = 2 and rho_max = 5: the mean of f_max and 0.8.
    // Cells of 2 m² holding 7 persons each.
    let g2 = Grid::new(12, 6, 2f64.sqrt());
    let mut a = packed_crowd(&g2, 7, 0.8, 0.0);
    let half = Fields::compute(&Scene::empty("x", g2), &a);
    let e = half.speed[[2, 4, Dir::E.index()]] as f64;
    assert!((e - 0.5 * (1.34 + 0.8)).abs() < 1e-5, "{e}");
    // Weidmann: slower than free speed at that density, never below f_min.
    a.vx.iter_mut().for_each(|v| *v = 0.0);
    let mut w = Scene::empty("w", g2);
    w.params = Params {
        speed_law: SpeedLaw::Weidmann,
        ..Params::default()
    };
    let wf = Fields::compute(&w, &a);
    let v = wf.speed[[2, 4, Dir::E.index()]] as f64;
    let expect = 1.34 * (1.0 - (-1.913f64 * (1.0 / 3.5 - 1.0 / 5.4)).exp());
    assert!((v - expect).abs() < 1e-4, "{v} vs {expect}");
}

#[test]
fn obstacles_are_walls_and_discomfort_ahead_raises_the_cost() {
    let g = Grid::new(6, 5, 1.0);
    let mut s = Scene::empty("walls", g);
    s.obstacle[[2, 3]] = true;
    s.discomfort[[0, 0]] = 2.0;
    let fields = Fields::compute(&s, &Agents::default());
    let (f, c) = (&fields.speed, &fields.cost);
    for d in Dir::ALL {
        assert_eq!(c[[2, 3, d.index()]], f32::INFINITY, "out of an obstacle");
        assert_eq!(f[[2, 3, d.index()]], 0.0);
    }
    assert_eq!(
        c[[2, 2, Dir::E.index()]],
        f32::INFINITY,
        "into an obstacle from the west"
    );
    assert_eq!(c[[2, 4, Dir::W.index()]], f32::INFINITY);
    assert_eq!(c[[1, 3, Dir::N.index()]], f32::INFINITY);
    assert_eq!(c[[3, 3, Dir::S.index()]], f32::INFINITY);
    assert!(c[[2, 2, Dir::W.index()]].is_finite());
    // Discomfort 2 one cell (the look-ahead, 1 m) ahead: C = (beta + gamma g) / f.
    let p = &s.params;
    let expect = (p.beta + p.gamma * 2.0) / p.f_max;
    assert!((c[[0, 1, Dir::W.index()]] as f64 - expect).abs() < 1e-5);
    assert!((c[[1, 0, Dir::S.index()]] as f64 - expect).abs() < 1e-5);
    assert!((c[[0, 1, Dir::E.index()]] as f64 - p.beta / p.f_max).abs() < 1e-5);
    assert!(
        unit_cost(&s, fields.speed.view())
            .iter()
            .all(|v| !v.is_nan() && *v > 0.0)
    );
}
