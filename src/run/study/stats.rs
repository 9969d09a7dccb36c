//! The statistics a study states over its seeds: mean, standard deviation, min, median, 95th
//! percentile and max, and the number of seeds after which the mean and the 95th percentile
//! stop moving.
//!
//! The standard deviation is the sample one (divided by `n - 1`, numpy's `std(ddof=1)`); the
//! percentiles interpolate linearly between order statistics (numpy's default,
//! `percentile(method="linear")`), so a planner can recompute every figure from the runs'
//! results with numpy.

use serde::{Deserialize, Serialize};

/// Relative change under which a running mean or 95th percentile counts as still: 1 % of its
/// value over all the seeds.
pub const STILL_TOLERANCE: f64 = 0.01;

/// Seeds the running figures must stay still for, in a row, for a study to count as converged:
/// five, so one lucky seed does not end a study.
pub const STILL_SEEDS: usize = 5;

/// A distribution over seeds.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Values summarised.
    pub n: usize,
    /// Arithmetic mean.
    pub mean: f64,
    /// Sample standard deviation (`n - 1`); 0 for one value.
    pub sd: f64,
    /// Smallest value.
    pub min: f64,
    /// Median (linear interpolation).
    pub p50: f64,
    /// 95th percentile (linear interpolation).
    pub p95: f64,
    /// Largest value.
    pub max: f64,
}

impl Summary {
    /// The summary of `values` (`None` when empty or when one is not finite).
    pub fn of(values: &[f64]) -> Option<Summary> {
        if values.is_empty() || values.iter().any(|v| !v.is_finite()) {
            return None;
        }
        let n = values.len();
        let mean = values.iter().sum::<f64>() / n as f64;
        let sd = if n > 1 {
            (values.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / (n - 1) as f64).sqrt()
        } else {
            0.0
        };
        let mut sorted = values.to_vec();
        sorted.sort_by(f64::total_cmp);
        Some(Summary {
            n,
            mean,
            sd,
            min: sorted[0],
            p50: percentile(&sorted, 50.0),
            p95: percentile(&sorted, 95.0),
            max: sorted[n - 1],
        })
    }
}

/// The `q`-th percentile of `sorted` (ascending, not empty), interpolating linearly between
/// the order statistics at ranks `(n - 1) q / 100` (numpy's default method).
pub fn percentile(sorted: &[f64], q: f64) -> f64 {
    let n = sorted.len();
    let rank = (n - 1) as f64 * q / 100.0;
    let lo = rank.floor() as usize;
    let hi = rank.ceil() as usize;
    let t = rank - lo as f64;
    if lo == hi {
        sorted[lo]
    } else {
        sorted[lo] + (sorted[hi] - sorted[lo]) * t
    }
}

/// The number of seeds after which the running mean and 95th percentile of `values` (in seed
/// order) stay still: the smallest `k` from which every further seed moves each by at most
/// [`STILL_TOLERANCE`] of its value over all seeds, with at least [`STILL_SEEDS`] such seeds
/// after `k`. `None` while that has not happened (too few seeds, or still moving).
pub fn converged_after(values: &[f64]) -> Option<usize> {
    let n = values.len();
    if n < 2 || values.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let all = Summary::of(values)?;
    let (mean_tol, p95_tol) = (STILL_TOLERANCE * all.mean.abs(), STILL_TOLERANCE * all.p95.abs());
    let mut running = Vec::with_capacity(n);
    for k in 1..=n {
        let s = Summary::of(&values[..k])?;
        running.push((s.mean, s.p95));
    }
    // Walk back from the last seed while each step moves both figures within tolerance.
    let mut k = n;
    while k >= 2 {
        let (m0, p0) = running[k - 2];
        let (m1, p1) = running[k - 1];
        if (m1 - m0).abs() > mean_tol || (p1 - p0).abs() > p95_tol {
            break;
        }
        k -= 1;
    }
    // Figures still from seed `k` on; enough seeds after it?
    (n - k >= STILL_SEEDS).then_some(k)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_interpolate_like_numpy() {
        let v = [1.0, 2.0, 3.0, 4.0];
        // numpy.percentile([1,2,3,4], [50, 95]) == [2.5, 3.85]
        assert_eq!(percentile(&v, 50.0), 2.5);
        assert!((percentile(&v, 95.0) - 3.85).abs() < 1e-12);
        let s = Summary::of(&[4.0, 1.0, 3.0, 2.0]).unwrap();
        assert_eq!((s.min, s.max, s.mean, s.n), (1.0, 4.0, 2.5, 4));
        // numpy.std([1,2,3,4], ddof=1)
        assert!((s.sd - 1.2909944487358056).abs() < 1e-12);
        assert_eq!(Summary::of(&[7.0]).unwrap().sd, 0.0);
        assert!(Summary::of(&[]).is_none());
        assert!(Summary::of(&[1.0, f64::NAN]).is_none());
    }

    #[test]
    fn constant_values_converge_after_the_first_seed() {
        let v = [10.0; 8];
        assert_eq!(converged_after(&v), Some(1));
        // Not enough seeds after it.
        assert_eq!(converged_after(&[10.0; 5]), None);
    }

    #[test]
    fn a_late_outlier_keeps_a_study_unconverged() {
        let mut v = vec![10.0; 10];
        v.push(30.0);
        assert_eq!(converged_after(&v), None);
        // Five still seeds after the outlier end it there.
        v.extend([10.0; 30]);
        let k = converged_after(&v).unwrap();
        assert!(k > 11 && k <= v.len() - STILL_SEEDS, "{k}");
    }
}
