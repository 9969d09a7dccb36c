//! Profiling harness for the CPU fast marcher: a point source at the centre of an `N x N`
//! uniform grid, both orders, best of a few runs, with the error against the exact distance.
//!
//! `cargo run --release --example bench_eikonal -- [N] [REPEATS]` (defaults 2048 and 3).

use crowdfield::eikonal::{Order, solve_fmm};
use ndarray::{Array2, Array3};

fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args
        .next()
        .map_or(2048, |a| a.parse().expect("N must be a whole number"));
    let repeats: usize = args
        .next()
        .map_or(3, |a| a.parse().expect("REPEATS must be a whole number"));
    let cost = Array3::from_elem((n, n, 4), 1.0f32);
    let mut goal = Array2::from_elem((n, n), false);
    let mid = n / 2;
    goal[(mid, mid)] = true;
    for order in [Order::First, Order::Second] {
        let mut best = f64::INFINITY;
        let mut phi = None;
        for _ in 0..repeats {
            let sol = solve_fmm(cost.view(), goal.view(), 1.0, order);
            best = best.min(sol.seconds);
            phi = Some(sol.phi);
        }
        let phi = phi.expect("at least one run");
        let (mut max, mut sum) = (0.0f64, 0.0);
        for ((r, c), &v) in phi.indexed_iter() {
            let e = (v - (r as f64 - mid as f64).hypot(c as f64 - mid as f64)).abs();
            max = max.max(e);
            sum += e;
        }
        println!(
            "{n}x{n} {order:?}: best {best:.4} s ({:.1} ns/cell), error max {max:.4} mean {:.4}",
            best * 1e9 / (n * n) as f64,
            sum / (n * n - 1) as f64
        );
    }
}
