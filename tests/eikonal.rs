//! Fast-marching solver against analytic solutions, invariants and symmetric cases (SPEC §4).

use crowdfield::eikonal::{
    Order, Solution, cell_cost_from_speed, cost_from_speed, isotropic, solve_fmm, solve_groups,
};
use ndarray::{Array2, Array3};

/// A uniform unit-speed cost on `rows x cols` cells.
fn uniform_cost(rows: usize, cols: usize) -> Array3<f32> {
    Array3::from_elem((rows, cols, 4), 1.0)
}

fn point_goal(rows: usize, cols: usize, r: usize, c: usize) -> Array2<bool> {
    let mut goal = Array2::from_elem((rows, cols), false);
    goal[(r, c)] = true;
    goal
}

/// Max and mean absolute error against `exact` over the cells other than the sources.
fn errors(sol: &Solution, exact: impl Fn(usize, usize) -> f64, goal: &Array2<bool>) -> (f64, f64) {
    let (mut max, mut sum, mut n) = (0.0f64, 0.0, 0usize);
    for ((r, c), &v) in sol.phi.indexed_iter() {
        if goal[(r, c)] {
            continue;
        }
        let e = (v - exact(r, c)).abs();
        max = max.max(e);
        sum += e;
        n += 1;
    }
    (max, sum / n as f64)
}

/// Point source at the centre of an `n x n` grid on the unit square: (max, mean) error of
/// both orders.
fn point_source_errors(n: usize) -> [(f64, f64); 2] {
    let h = 1.0 / n as f64;
    let mid = n / 2;
    let cost = uniform_cost(n, n);
    let goal = point_goal(n, n, mid, mid);
    let exact = |r: usize, c: usize| h * ((r as f64 - mid as f64).hypot(c as f64 - mid as f64));
    [Order::First, Order::Second].map(|order| {
        let sol = solve_fmm(cost.view(), goal.view(), h, order);
        assert_eq!(sol.unreachable, 0);
        assert_eq!(sol.phi[(mid, mid)], 0.0);
        errors(&sol, exact, &goal)
    })
}

#[test]
fn point_source_converges_and_second_order_is_more_accurate() {
    let sizes = [33, 65, 129];
    let errs: Vec<_> = sizes.iter().map(|&n| point_source_errors(n)).collect();
    for (n, e) in sizes.iter().zip(&errs) {
        eprintln!(
            "n={n}: order 1 max {:.5} mean {:.5}; order 2 max {:.5} mean {:.5}",
            e[0].0, e[0].1, e[1].0, e[1].1
        );
    }
    for w in errs.windows(2) {
        for order in 0..2 {
            // Halving h must cut the error clearly (first order near a point source converges like
            // h log(1/h), so not quite by half).
            assert!(
                w[1][order].0 < 0.75 * w[0][order].0,
                "max error does not shrink: {errs:?}"
            );
            assert!(
                w[1][order].1 < 0.75 * w[0][order].1,
                "mean error does not shrink: {errs:?}"
            );
        }
    }
    for e in &errs {
        assert!(
            e[1].0 < 0.4 * e[0].0,
            "order 2 max error not clearly smaller: {errs:?}"
        );
        assert!(
            e[1].1 < 0.5 * e[0].1,
            "order 2 mean error not clearly smaller: {errs:?}"
        );
    }
}

#[test]
fn axis_cells_of_a_point_source_are_exact() {
    let n = 21;
    let sol = solve_fmm(
        uniform_cost(n, n).view(),
        point_goal(n, n, 10, 10).view(),
        0.5,
        Order::First,
    );
    for k in 0..=10 {
        let d = 0.5 * k as f64;
        assert_eq!(sol.phi[(10, 10 + k)], d);
        assert_eq!(sol.phi[(10 - k, 10)], d);
    }
    // The first diagonal cell solves the quadratic with two neighbours at h: h (1 + 1/sqrt 2).
    assert!((sol.phi[(11, 11)] - 0.5 * (1.0 + 0.5f64.sqrt())).abs() < 1e-12);
}

#[test]
fn layered_field_with_a_line_source_is_piecewise_linear() {
    // Source along row 0; speed f1 in rows < k, f2 from row k up. A step from a cell costs
    // h / f(cell), so phi(row r) = h (min(r, k-1) / f1 + max(0, r-k+1) / f2), the exact travel
    // time when the speed changes at the centre of row k-1.
    let (rows, cols, k, h) = (40, 7, 15, 0.25);
    let (f1, f2) = (1.5, 0.4);
    let speed = Array2::from_shape_fn((rows, cols), |(r, _)| if r < k { f1 } else { f2 });
    let mut goal = Array2::from_elem((rows, cols), false);
    goal.row_mut(0).fill(true);
    let cost = cost_from_speed(speed.view());
    for order in [Order::First, Order::Second] {
        let sol = solve_fmm(cost.view(), goal.view(), h, order);
        for ((r, c), &v) in sol.phi.indexed_iter() {
            // The cost is stored as f32: compare with the f32 unit costs.
            let (c1, c2) = ((1.0 / f1) as f32 as f64, (1.0 / f2) as f32 as f64);
            let exact = h * ((r.min(k - 1)) as f64 * c1 + (r + 1).saturating_sub(k) as f64 * c2);
            let tol = if order == Order::First {
                1e-12 * exact.max(1.0)
            } else {
                0.5 * h / f2
            };
            assert!((v - exact).abs() <= tol, "{order:?} ({r},{c}): {v} vs {exact}");
        }
    }
}

/// Exact travel time from a vertical line source at x = 0 into two layers: fast (speed `ff`)
/// for y < y0, slow (`fs`) above, with the head wave along the interface.
fn head_wave_exact(x: f64, y: f64, y0: f64, ff: f64, fs: f64) -> f64 {
    if y <= y0 {
        x / ff
    } else {
        let d = y - y0;
        (x / fs).min(x / ff + d * (1.0 / (fs * fs) - 1.0 / (ff * ff)).sqrt())
    }
}

#[test]
fn two_speed_layers_with_a_head_wave_converge_to_the_exact_solution() {
    let (ff, fs) = (2.0, 1.0);
    let mut last = [f64::INFINITY; 2];
    for n in [32usize, 64, 128] {
        let h = 1.0 / n as f64;
        let speed = Array2::from_shape_fn((n, n), |(r, _)| if r < n / 2 { ff } else { fs });
        let mut goal = Array2::from_elem((n, n), false);
        goal.column_mut(0).fill(true);
        let cost = cost_from_speed(speed.view());
        for (i, order) in [Order::First, Order::Second].into_iter().enumerate() {
            let sol = solve_fmm(cost.view(), goal.view(), h, order);
            // The discrete cost puts the interface between the centres of rows n/2-1 and n/2;
            // take it half-way, at y = (n/2 - 1/2 + 1/2) h = 0.5 (cell edge), measured from the
            // source centres at x = h/2.
            let exact = |r: usize, c: usize| head_wave_exact(c as f64 * h, (r as f64 + 0.5) * h, 0.5, ff, fs);
            let (max, mean) = errors(&sol, exact, &goal);
            eprintln!("n={n} {order:?}: max {max:.5} mean {mean:.5}");
            assert!(
                max < 0.6 * last[i],
                "{order:?} n={n}: max error {max} vs {} before",
                last[i]
            );
            assert!(
                max < 2.0 * h,
                "{order:?} n={n}: max error {max} is more than 2 cells"
            );
            last[i] = max;
        }
    }
}

#[test]
fn a_wall_with_a_gap_forces_the_path_around() {
    // 41 x 41 cells of 1 m, wall in column 20 except rows 35..=37; source left, target right.
    let n = 41;
    let speed = Array2::from_shape_fn((n, n), |(r, c)| {
        if c == 20 && !(35..=37).contains(&r) {
            0.0
        } else {
            1.0
        }
    });
    let cost = cost_from_speed(speed.view());
    let goal = point_goal(n, n, 20, 5);
    for order in [Order::First, Order::Second] {
        let sol = solve_fmm(cost.view(), goal.view(), 1.0, order);
        // Shortest Euclidean path from (5.5, 20.5) to (30.5, 20.5) through the gap
        // x in [20, 21], y in [35, 38]: via the corners (20, 35) and (21, 35).
        let around = (14.5f64.hypot(14.5)) + 1.0 + 9.5f64.hypot(14.5);
        let v = sol.phi[(20, 30)];
        assert!(v >= around - 0.5, "{order:?}: {v} < path around {around}");
        // And no worse than a staircase path through the gap: 15 up, 25 across, 15 down.
        assert!(v <= 55.0, "{order:?}: {v}");
        // The wall cells are impassable: unreachable, counted.
        let wall = (0..n).filter(|r| !(35..=37).contains(r)).count();
        assert_eq!(sol.unreachable, wall);
        assert_eq!(sol.phi[(0, 20)], f64::INFINITY);
        assert!(sol.phi.iter().all(|v| !v.is_nan()));
    }
}

#[test]
fn enclosed_regions_are_unreachable_and_counted() {
    let n = 20;
    // A closed ring of walls around rows/cols 5..=12 (interior 6..=11), plus NaN and negative
    // speeds which are impassable too.
    let mut speed = Array2::from_elem((n, n), 1.0);
    for i in 5..=12 {
        speed[(5, i)] = 0.0;
        speed[(12, i)] = -1.0;
        speed[(i, 5)] = f64::NAN;
        speed[(i, 12)] = f64::INFINITY;
    }
    let goal = point_goal(n, n, 1, 1);
    let sol = solve_fmm(
        cost_from_speed(speed.view()).view(),
        goal.view(),
        1.0,
        Order::First,
    );
    let ring = 4 * 8 - 4;
    let inside = 6 * 6;
    assert_eq!(sol.unreachable, ring + inside);
    for r in 6..=11 {
        for c in 6..=11 {
            assert_eq!(sol.phi[(r, c)], f64::INFINITY);
        }
    }
    // A source inside the ring is reached from nothing outside, and reaches only its inside.
    let goal = point_goal(n, n, 8, 8);
    let sol = solve_fmm(
        cost_from_speed(speed.view()).view(),
        goal.view(),
        1.0,
        Order::Second,
    );
    assert_eq!(sol.unreachable, n * n - inside);
    assert!(sol.phi[(11, 11)].is_finite());
}

#[test]
fn a_symmetric_map_gives_a_symmetric_field() {
    // Odd grid, centre source, obstacles placed symmetrically under both mirrors.
    let n = 31;
    let speed = Array2::from_shape_fn((n, n), |(r, c)| {
        let (dr, dc) = ((r as i32 - 15).abs(), (c as i32 - 15).abs());
        if (dr == 6 && dc <= 4) || (dc == 9 && (3..=10).contains(&dr)) {
            0.0
        } else if dr + dc > 20 {
            0.5
        } else {
            1.0
        }
    });
    let cost = cost_from_speed(speed.view());
    let goal = point_goal(n, n, 15, 15);
    for order in [Order::First, Order::Second] {
        let phi = solve_fmm(cost.view(), goal.view(), 0.3, order).phi;
        for ((r, c), &v) in phi.indexed_iter() {
            for (rr, cc) in [(n - 1 - r, c), (r, n - 1 - c), (n - 1 - r, n - 1 - c)] {
                let w = phi[(rr, cc)];
                assert!(
                    v == w || (v - w).abs() <= 1e-12 * v.abs(),
                    "{order:?}: ({r},{c})={v} vs ({rr},{cc})={w}"
                );
            }
        }
    }
}

#[test]
fn anisotropic_cost_is_respected() {
    // Leaving a cell eastwards costs 1 s/m, westwards 3 s/m, north/south 2 s/m.
    let (rows, cols) = (9, 21);
    let mut cost = Array3::from_elem((rows, cols, 4), 2.0f32);
    cost.slice_mut(ndarray::s![.., .., 0]).fill(1.0);
    cost.slice_mut(ndarray::s![.., .., 2]).fill(3.0);
    let goal = point_goal(rows, cols, 4, 10);
    let sol = solve_fmm(cost.view(), goal.view(), 0.5, Order::First);
    for k in 1..=10 {
        // West of the goal a walker heads east (cheap); east of it, west (dear).
        assert_eq!(sol.phi[(4, 10 - k)], 0.5 * k as f64);
        assert_eq!(sol.phi[(4, 10 + k)], 1.5 * k as f64);
    }
    for k in 1..=4 {
        assert_eq!(sol.phi[(4 + k, 10)], 1.0 * k as f64);
        assert_eq!(sol.phi[(4 - k, 10)], 1.0 * k as f64);
    }
    // Off the axes too, the cheap side stays cheaper.
    for r in 0..rows {
        for k in 1..=10 {
            assert!(sol.phi[(r, 10 - k)] < sol.phi[(r, 10 + k)]);
        }
    }
}

#[test]
fn tiny_and_degenerate_inputs() {
    // 1 x 1 with a source.
    let sol = solve_fmm(
        uniform_cost(1, 1).view(),
        point_goal(1, 1, 0, 0).view(),
        1.0,
        Order::Second,
    );
    assert_eq!(sol.phi[(0, 0)], 0.0);
    assert_eq!(sol.unreachable, 0);
    // No source: everything unreachable.
    let none = Array2::from_elem((3, 4), false);
    let sol = solve_fmm(uniform_cost(3, 4).view(), none.view(), 1.0, Order::First);
    assert_eq!(sol.unreachable, 12);
    assert!(sol.phi.iter().all(|&v| v == f64::INFINITY));
    // A cell size that is not a positive length leaves only the sources finite.
    for h in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        let sol = solve_fmm(
            uniform_cost(3, 4).view(),
            point_goal(3, 4, 1, 1).view(),
            h,
            Order::First,
        );
        assert_eq!(sol.unreachable, 11, "h = {h}");
        assert_eq!(sol.phi[(1, 1)], 0.0);
    }
    // Empty grid.
    let sol = solve_fmm(
        uniform_cost(0, 5).view(),
        Array2::from_elem((0, 5), false).view(),
        1.0,
        Order::First,
    );
    assert_eq!(sol.phi.dim(), (0, 5));
    assert_eq!(sol.unreachable, 0);
}

#[test]
fn a_source_on_an_obstacle_is_still_zero() {
    let mut speed = Array2::from_elem((5, 5), 1.0);
    speed[(2, 2)] = 0.0;
    let sol = solve_fmm(
        cost_from_speed(speed.view()).view(),
        point_goal(5, 5, 2, 2).view(),
        1.0,
        Order::First,
    );
    assert_eq!(sol.phi[(2, 2)], 0.0);
    assert_eq!(sol.phi[(2, 3)], 1.0);
    assert_eq!(sol.unreachable, 0);
}

#[test]
fn cost_from_speed_inverts_speed_and_blocks_bad_values() {
    let speed = ndarray::array![[2.0, 0.0], [-1.0, f64::NAN], [f64::INFINITY, 0.25]];
    let cost = cost_from_speed(speed.view());
    assert_eq!(cost.dim(), (3, 2, 4));
    for d in 0..4 {
        assert_eq!(cost[(0, 0, d)], 0.5);
        assert_eq!(cost[(2, 1, d)], 4.0);
        for (r, c) in [(0, 1), (1, 0), (1, 1), (2, 0)] {
            assert_eq!(cost[(r, c, d)], f32::INFINITY);
        }
    }
}

#[test]
fn second_order_line_source_has_no_dip_past_its_end() {
    // A goal line (row 10, columns 0..=9) on a uniform field. Just past its end the exact
    // distance is the distance to the end cell; second order must not undershoot it by the
    // third of a cell that marching through the source pair would give.
    let (rows, cols) = (21, 25);
    let mut goal = Array2::from_elem((rows, cols), false);
    for c in 0..=9 {
        goal[(10, c)] = true;
    }
    let sol = solve_fmm(uniform_cost(rows, cols).view(), goal.view(), 1.0, Order::Second);
    for k in 1..=5 {
        let v = sol.phi[(10, 9 + k)];
        assert!((v - k as f64).abs() < 1e-12, "cell {k} past the end: {v}");
    }
    // Above the line the field is the distance to the line.
    for r in 11..rows {
        let v = sol.phi[(r, 2)];
        assert!((v - (r - 10) as f64).abs() < 1e-9, "row {r}: {v}");
    }
}

#[test]
fn group_solves_match_single_solves_whatever_the_thread_count() {
    let n = 40;
    let speed = Array2::from_shape_fn((n, n), |(r, c)| {
        if (r * 7 + c * 3) % 11 == 0 {
            0.0
        } else {
            1.0 + (r % 3) as f64
        }
    });
    let cost = cost_from_speed(speed.view());
    let goals: Vec<_> = (0..5).map(|g| point_goal(n, n, 3 + 7 * g, 35 - 6 * g)).collect();
    let single: Vec<_> = goals
        .iter()
        .map(|g| solve_fmm(cost.view(), g.view(), 0.5, Order::Second))
        .collect();
    for threads in [1, 3] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        let groups = pool.install(|| solve_groups(cost.view(), &goals, 0.5, Order::Second));
        assert_eq!(groups.len(), goals.len());
        for (a, b) in groups.iter().zip(&single) {
            assert_eq!(a.phi, b.phi);
            assert_eq!(a.unreachable, b.unreachable);
            assert_eq!(a.solver, "fmm-cpu");
        }
    }
}

#[test]
fn a_broadcast_per_cell_cost_solves_like_the_full_array() {
    // Speeds with walls (0, negative, NaN) on a grid that is not square, two sources.
    let (rows, cols) = (23, 41);
    let speed = Array2::from_shape_fn((rows, cols), |(r, c)| match (r * 7 + c * 3) % 17 {
        0 => 0.0,
        5 => -1.0,
        9 => f64::NAN,
        k => 0.5 + k as f64 * 0.1,
    });
    let mut goal = point_goal(rows, cols, 2, 3);
    goal[(20, 35)] = true;
    let cell = cell_cost_from_speed(speed.view());
    let view = isotropic(cell.view());
    assert_eq!(view.dim(), (rows, cols, 4));
    let full = cost_from_speed(speed.view());
    assert_eq!(view, full.view(), "the same cost, every direction");
    for order in [Order::First, Order::Second] {
        let a = solve_fmm(view, goal.view(), 0.4, order);
        let b = solve_fmm(full.view(), goal.view(), 0.4, order);
        assert_eq!(a.unreachable, b.unreachable);
        assert!(a.unreachable > 0);
        for (x, y) in a.phi.iter().zip(b.phi.iter()) {
            assert_eq!(x.to_bits(), y.to_bits(), "{order:?}");
        }
    }
}
