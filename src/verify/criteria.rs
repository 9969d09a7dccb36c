//! The published references the verification tests compare with, and the arithmetic that
//! turns a run into a measured value: Weidmann's fundamental diagram, the single-file diagram
//! of Seyfried et al., the specific flow of a door, summaries over seeds.

/// Weidmann's free walking speed, m/s (Weidmann 1993).
pub const WEIDMANN_FREE_SPEED: f64 = 1.34;
/// Weidmann's jam density, persons/m² (Weidmann 1993).
pub const WEIDMANN_JAM_DENSITY: f64 = 5.4;
/// Weidmann's shape constant, 1/m² (Weidmann 1993).
pub const WEIDMANN_GAMMA: f64 = 1.913;

/// Weidmann's fundamental diagram: the walking speed, m/s, at density `rho` persons/m²
/// (Weidmann 1993: `v = 1.34 (1 - exp(-1.913 (1/rho - 1/5.4)))`, 0 at and above the jam
/// density).
pub fn weidmann_speed(rho: f64) -> f64 {
    if rho <= 0.0 {
        return WEIDMANN_FREE_SPEED;
    }
    let v = WEIDMANN_FREE_SPEED * (1.0 - (-WEIDMANN_GAMMA * (1.0 / rho - 1.0 / WEIDMANN_JAM_DENSITY)).exp());
    v.max(0.0)
}

/// Length a walker needs in single file at rest, m (Seyfried et al. 2005: `d = 0.36 + 1.06 v`).
pub const SINGLE_FILE_REST_LENGTH: f64 = 0.36;
/// Extra length per m/s of speed in single file, s (Seyfried et al. 2005).
pub const SINGLE_FILE_LENGTH_PER_SPEED: f64 = 1.06;

/// The single-file fundamental diagram: speed, m/s, at line density `rho` persons/m, from
/// the required length `d = 0.36 + 1.06 v` of Seyfried et al. 2005 (`v = (1/rho - 0.36) /
/// 1.06`), between 0 and Weidmann's free speed.
pub fn single_file_speed(rho: f64) -> f64 {
    if rho <= 0.0 {
        return WEIDMANN_FREE_SPEED;
    }
    ((1.0 / rho - SINGLE_FILE_REST_LENGTH) / SINGLE_FILE_LENGTH_PER_SPEED).clamp(0.0, WEIDMANN_FREE_SPEED)
}

/// How far a measured speed may lie from a fundamental diagram's: 0.15 m/s or a quarter of
/// the diagram's speed, whichever is larger. Experiments scatter about this much around the
/// fitted curves (Weidmann's is a fit to 25 studies; its spread at a density is ±0.2 m/s and
/// more), so a model inside it cannot be told from the data.
pub fn speed_tolerance(reference: f64) -> f64 {
    (0.25 * reference).max(0.15)
}

/// Whether `measured` lies within [`speed_tolerance`] of `reference`.
pub fn speed_matches(measured: f64, reference: f64) -> bool {
    (measured - reference).abs() <= speed_tolerance(reference)
}

/// The steady part of a door's outflow: from the arrival times (any order), the flow between
/// the 10th and the 90th percentile of the arrivals divided by the opening's `width`,
/// persons/(m·s). The start (the first walkers reach the door unhindered) and the end (the
/// last stragglers) are left out, as the experiments measure the flow of the jammed crowd.
/// `None` with fewer than 10 arrivals or when they share one instant.
pub fn steady_specific_flow(times: &[f64], width: f64) -> Option<f64> {
    if times.len() < 10 || width <= 0.0 {
        return None;
    }
    let mut t = times.to_vec();
    t.sort_by(f64::total_cmp);
    let n = t.len();
    let last = (n - 1) as f64;
    let (i0, i1) = ((0.1 * last).round() as usize, (0.9 * last).round() as usize);
    let dt = t[i1] - t[i0];
    (dt > 0.0).then(|| (i1 - i0) as f64 / dt / width)
}

/// The smallest, mean and largest of `values` (`None` when empty).
pub fn summary(values: &[f64]) -> Option<(f64, f64, f64)> {
    if values.is_empty() {
        return None;
    }
    let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    Some((lo, values.iter().sum::<f64>() / values.len() as f64, hi))
}

/// `values` in words with `unit`: "29.7 s" for one, "29.7 s (29.6–29.8 over 3 seeds)" for
/// several, with `decimals` decimals.
pub fn describe(values: &[f64], unit: &str, decimals: usize) -> String {
    match summary(values) {
        None => "not measured".to_string(),
        Some((lo, mean, hi)) if values.len() == 1 || lo == hi => format!("{mean:.decimals$}{unit}"),
        Some((lo, mean, hi)) => format!(
            "{mean:.decimals$}{unit} ({lo:.decimals$}–{hi:.decimals$} over {} seeds)",
            values.len()
        ),
    }
}

/// Whether `values` grow with their index on average: each is at least the one before less
/// `slack` (the scatter of a few seeds).
pub fn grows(values: &[f64], slack: f64) -> bool {
    values.windows(2).all(|w| w[1] >= w[0] - slack)
}

/// Densest packing of discs of radius `r` metres, persons/m² (hexagonal: `1 / (2 sqrt(3) r²)`).
pub fn packing_limit(r: f64) -> f64 {
    1.0 / (2.0 * 3f64.sqrt() * r * r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weidmann_speed_is_free_when_sparse_and_zero_at_the_jam() {
        assert!((weidmann_speed(0.01) - 1.34).abs() < 1e-9);
        assert_eq!(weidmann_speed(5.4), 0.0);
        assert_eq!(weidmann_speed(6.0), 0.0);
        // 1.34 (1 - exp(-1.913 (1/1.5 - 1/5.4))) = 0.8066; at 3 persons/m² 0.3306.
        assert!(
            (weidmann_speed(1.5) - 0.8066).abs() < 1e-3,
            "{}",
            weidmann_speed(1.5)
        );
        assert!(
            (weidmann_speed(3.0) - 0.3306).abs() < 1e-3,
            "{}",
            weidmann_speed(3.0)
        );
    }

    #[test]
    fn single_file_speed_follows_the_required_length() {
        // 1 person/m: (1 - 0.36) / 1.06 = 0.604 m/s; 2 persons/m: (0.5 - 0.36) / 1.06 = 0.132.
        assert!((single_file_speed(1.0) - 0.6038).abs() < 1e-3);
        assert!((single_file_speed(2.0) - 0.1321).abs() < 1e-3);
        assert_eq!(single_file_speed(3.0), 0.0);
        assert_eq!(single_file_speed(0.1), 1.34);
    }

    #[test]
    fn specific_flow_of_evenly_spaced_arrivals() {
        // 101 walkers one every 0.5 s through 1.25 m: 2 persons/s, 1.6 persons/(m·s).
        let times: Vec<f64> = (0..=100).map(|i| 3.0 + 0.5 * i as f64).rev().collect();
        let f = steady_specific_flow(&times, 1.25).unwrap();
        assert!((f - 1.6).abs() < 1e-12, "{f}");
        assert_eq!(steady_specific_flow(&times[..5], 1.0), None);
        assert_eq!(steady_specific_flow(&[2.0; 20], 1.0), None);
    }

    #[test]
    fn the_steady_flow_leaves_out_the_start_and_the_end() {
        // A fast start (10 at once) and a slow tail do not change the middle's 1 person/s.
        let mut times: Vec<f64> = vec![1.0; 10];
        times.extend((0..80).map(|i| 10.0 + i as f64));
        times.extend((0..10).map(|i| 200.0 + 50.0 * i as f64));
        let f = steady_specific_flow(&times, 1.0).unwrap();
        assert!((f - 1.0).abs() < 0.02, "{f}");
    }

    #[test]
    fn summaries_and_words() {
        assert_eq!(summary(&[1.0, 3.0, 2.0]), Some((1.0, 2.0, 3.0)));
        assert_eq!(describe(&[29.71], " s", 1), "29.7 s");
        assert_eq!(
            describe(&[29.6, 29.8], " s", 1),
            "29.7 s (29.6–29.8 over 2 seeds)"
        );
        assert!(grows(&[1.0, 2.0, 1.95, 3.0], 0.1));
        assert!(!grows(&[1.0, 2.0, 1.5], 0.1));
        assert!((packing_limit(0.25) - 4.6188).abs() < 1e-3);
        assert!(speed_matches(1.0, 1.1) && !speed_matches(0.5, 1.0) && speed_matches(0.14, 0.05));
    }
}
