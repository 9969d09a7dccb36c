//! Property test: random arrays (sizes down to 1 x 1, NaN/inf/negative/zero costs, random or no
//! sources, bad cell sizes) never make the solver panic or return NaN, and the result satisfies
//! the discrete equations it is meant to solve.

use crowdfield::eikonal::{Order, solve_fmm};
use ndarray::{Array2, Array3};
use proptest::prelude::*;
use std::collections::VecDeque;

/// A uniform value in `[low, high]`, drawn through an integer.
///
/// proptest 1.12's own float-range sampler can trip its internal
/// `debug_assert!(self.low - result < initial.step)` on some seeds (it failed CI once), so
/// float ranges are built from a `u32` instead; that also shrinks towards `low`.
fn uniform(low: f64, high: f64) -> impl Strategy<Value = f64> + Clone {
    any::<u32>().prop_map(move |u| low + (high - low) * (f64::from(u) / f64::from(u32::MAX)))
}

/// A unit cost: mostly ordinary positive values, often something a solver must treat as a wall.
fn cost_value() -> impl Strategy<Value = f32> {
    prop_oneof![
        6 => uniform(0.05, 20.0).prop_map(|v| v as f32),
        1 => Just(f32::NAN),
        1 => Just(f32::INFINITY),
        1 => Just(f32::NEG_INFINITY),
        1 => Just(0.0f32),
        1 => uniform(-5.0, -1e-6).prop_map(|v| v as f32),
        1 => Just(f32::MAX),
        1 => Just(1e-30f32),
    ]
}

#[derive(Debug, Clone)]
struct Case {
    cost: Array3<f32>,
    goal: Array2<bool>,
    cell_size: f64,
    order: Order,
}

fn case() -> impl Strategy<Value = Case> {
    (1usize..14, 1usize..14).prop_flat_map(|(rows, cols)| {
        (
            prop::collection::vec(cost_value(), rows * cols * 4),
            prop::collection::vec(prop::bool::weighted(0.08), rows * cols),
            prop_oneof![4 => Just(1.0), 2 => uniform(0.01, 10.0), 1 => Just(0.0), 1 => Just(f64::NAN), 1 => Just(-2.0)],
            prop_oneof![Just(Order::First), Just(Order::Second)],
        )
            .prop_map(move |(cost, goal, cell_size, order)| Case {
                cost: Array3::from_shape_vec((rows, cols, 4), cost).unwrap(),
                goal: Array2::from_shape_vec((rows, cols), goal).unwrap(),
                cell_size,
                order,
            })
    })
}

/// `(d_row, d_col)` per direction index E, N, W, S.
const OFFSETS: [(isize, isize); 4] = [(0, 1), (1, 0), (0, -1), (-1, 0)];

fn neighbour(rows: usize, cols: usize, r: usize, c: usize, d: usize) -> Option<(usize, usize)> {
    let (dr, dc) = OFFSETS[d];
    let (nr, nc) = (r as isize + dr, c as isize + dc);
    (nr >= 0 && nc >= 0 && (nr as usize) < rows && (nc as usize) < cols).then_some((nr as usize, nc as usize))
}

fn step(h: f64, c: f32) -> f64 {
    if c > 0.0 && h > 0.0 && h.is_finite() {
        h * c as f64
    } else {
        f64::INFINITY
    }
}

/// Cells from which a source can be walked to through passable faces (reverse search).
fn reachable(case: &Case) -> Array2<bool> {
    let (rows, cols) = case.goal.dim();
    let mut seen = case.goal.clone();
    let mut queue: VecDeque<_> = case
        .goal
        .indexed_iter()
        .filter(|(_, g)| **g)
        .map(|(i, _)| i)
        .collect();
    while let Some((r, c)) = queue.pop_front() {
        // A neighbour N can step into (r, c) if its face towards (r, c) is passable.
        for d in 0..4 {
            if let Some((nr, nc)) = neighbour(rows, cols, r, c, d) {
                let back = (d + 2) % 4;
                if !seen[(nr, nc)] && step(case.cell_size, case.cost[(nr, nc, back)]).is_finite() {
                    seen[(nr, nc)] = true;
                    queue.push_back((nr, nc));
                }
            }
        }
    }
    seen
}

/// Reference first-order update from the neighbours whose value is below `limit`.
fn first_order_update(case: &Case, phi: &Array2<f64>, r: usize, c: usize, limit: f64) -> f64 {
    let (rows, cols) = phi.dim();
    let mut axes = [(f64::INFINITY, f64::INFINITY); 2];
    for d in 0..4 {
        if let Some(n) = neighbour(rows, cols, r, c, d) {
            let m = phi[n];
            let s = step(case.cell_size, case.cost[(r, c, d)]);
            if m < limit && m + s < axes[d % 2].0 + axes[d % 2].1 {
                axes[d % 2] = (m, s);
            }
        }
    }
    let [(mx, sx), (my, sy)] = axes;
    let one = (mx + sx).min(my + sy);
    if !(mx + sx).is_finite() || !(my + sy).is_finite() || (mx - my).abs() >= if mx <= my { sx } else { sy } {
        return one;
    }
    // Larger root of the quadratic, written the textbook way.
    let (a, b) = (1.0 / (sx * sx), 1.0 / (sy * sy));
    let qa = a + b;
    let qb = -2.0 * (a * mx + b * my);
    let qc = a * mx * mx + b * my * my - 1.0;
    let root = (-qb + (qb * qb - 4.0 * qa * qc).sqrt()) / (2.0 * qa);
    root.min(one)
}

/// The properties of the module comment for one case.
fn check(case: &Case) -> Result<(), TestCaseError> {
    let sol = solve_fmm(case.cost.view(), case.goal.view(), case.cell_size, case.order);
    let phi = &sol.phi;
    let (rows, cols) = phi.dim();
    prop_assert_eq!(phi.dim(), case.goal.dim());
    let reach = reachable(case);
    let mut infinite = 0;
    for ((r, c), &v) in phi.indexed_iter() {
        prop_assert!(!v.is_nan(), "NaN at ({}, {})", r, c);
        prop_assert!(v >= 0.0);
        if case.goal[(r, c)] {
            prop_assert_eq!(v, 0.0);
            continue;
        }
        // Finite exactly where a source can be walked to.
        prop_assert_eq!(v.is_finite(), reach[(r, c)], "({}, {}) = {}", r, c, v);
        if v.is_infinite() {
            infinite += 1;
            continue;
        }
        // Never more than one step to any neighbour, and never below every neighbour.
        let mut lowest = f64::INFINITY;
        for d in 0..4 {
            if let Some(n) = neighbour(rows, cols, r, c, d) {
                let bound = phi[n] + step(case.cell_size, case.cost[(r, c, d)]);
                prop_assert!(
                    v <= bound * (1.0 + 1e-12),
                    "({}, {}) = {} > {} via {:?}",
                    r,
                    c,
                    v,
                    bound,
                    n
                );
                lowest = lowest.min(phi[n]);
            }
        }
        prop_assert!(v >= lowest);
        let near_tie = (0..4)
            .filter_map(|d| neighbour(rows, cols, r, c, d))
            .any(|n| (phi[n] - v).abs() <= 1e-9 * v);
        if case.order == Order::First && !near_tie {
            // The value is the lowest of the updates computed as neighbours were accepted, so
            // it is at most the last one: the update from every neighbour accepted before the
            // cell (a neighbour tied with the cell could have been accepted either side of it,
            // hence the skip). With isotropic costs the two are equal (tested in
            // tests/eikonal.rs against exact solutions); with anisotropic ones a later
            // neighbour with a lower total `phi_M + h C` but higher `phi_M` can raise it.
            let u = first_order_update(case, phi, r, c, v);
            prop_assert!(
                v <= u + 1e-9 * v.max(1e-300),
                "({}, {}) = {} but update gives {}",
                r,
                c,
                v,
                u
            );
        }
    }
    prop_assert_eq!(sol.unreachable, infinite);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1500, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn random_arrays_solve_without_panic_or_nan(case in case()) {
        check(&case)?;
    }
}

/// The case proptest once shrank a failure to (a NaN face next to an `f32::MAX` face, second
/// order, an odd cell size), kept as a fixed test: the random cases are drawn anew each run
/// and no longer reach it from its old seed.
#[test]
fn a_nan_face_next_to_an_f32_max_face_in_second_order() {
    let mut cost = Array3::from_elem((1, 8, 4), 0.05f32);
    cost[(0, 1, 0)] = f32::NAN;
    cost[(0, 4, 0)] = f32::MAX;
    let mut goal = Array2::from_elem((1, 8), false);
    goal[(0, 5)] = true;
    let case = Case {
        cost,
        goal,
        cell_size: 3.164270863598306,
        order: Order::Second,
    };
    check(&case).unwrap();
}
