//! The level-set march's tests: analytic distances, scikit-fmm's values, and every way of
//! marching against the plain port in `plain.rs`, bit for bit.

use super::*;

fn max_err(a: &Array2<f64>, exact: impl Fn(usize, usize) -> f64, skip: impl Fn(usize, usize) -> bool) -> f64 {
    let mut worst: f64 = 0.0;
    for ((r, c), v) in a.indexed_iter() {
        if !skip(r, c) {
            worst = worst.max((v - exact(r, c)).abs());
        }
    }
    worst
}

#[test]
fn a_straight_contour_gives_the_exact_signed_distance_on_unequal_spacing() {
    // phi = x - 3.3 on columns 0.4 apart, rows 1.7 apart: the distance is exact in both orders.
    let (hr, hc) = (1.7, 0.4);
    let phi = Array2::from_shape_fn((7, 20), |(_, c)| c as f64 * hc - 3.3);
    for order in [Order::First, Order::Second] {
        let d = distance(phi.view(), None, [hr, hc], order).unwrap();
        let err = max_err(&d.values, |_, c| c as f64 * hc - 3.3, |_, _| false);
        assert!(err < 1e-12, "{order}: {err}");
        assert_eq!(d.unreached, 0);
    }
}

#[test]
fn a_circle_converges_to_its_distance_faster_in_second_order() {
    // phi = |x| - R, the exact signed distance; error measured away from the centre's kink.
    let err = |n: usize, order| {
        let h = 4.0 / n as f64;
        let at = |i: usize| i as f64 * h - 2.0;
        let exact = |r: usize, c: usize| (at(r).powi(2) + at(c).powi(2)).sqrt() - 1.0;
        let phi = Array2::from_shape_fn((n + 1, n + 1), |(r, c)| exact(r, c));
        let d = distance(phi.view(), None, [h, h], order).unwrap();
        max_err(&d.values, exact, |r, c| {
            (at(r).powi(2) + at(c).powi(2)).sqrt() < 0.5
        })
    };
    let (e1a, e1b) = (err(40, Order::First), err(80, Order::First));
    let (e2a, e2b) = (err(40, Order::Second), err(80, Order::Second));
    // Measured: first order 0.046 -> 0.021, second order 0.031 -> 0.0105.
    assert!(e2b < 0.6 * e1b, "second order {e2b} against first {e1b}");
    assert!(e1a / e1b > 1.5, "first order halves its error: {e1a} -> {e1b}");
    assert!(
        e2a / e2b > 2.5,
        "second order cuts its error more: {e2a} -> {e2b}"
    );
    assert!(e2b < 0.015, "{e2b}");
}

#[test]
fn travel_time_from_a_point_at_constant_speed_approaches_distance_over_speed() {
    let (n, h, s) = (81, 0.25, 2.0);
    let mut phi = Array2::from_elem((n, n), 1.0);
    phi[(40, 40)] = 0.0;
    let speed = Array2::from_elem((n, n), s);
    let exact = |r: usize, c: usize| h * ((r as f64 - 40.0).powi(2) + (c as f64 - 40.0).powi(2)).sqrt() / s;
    let t1 = travel_time(phi.view(), speed.view(), None, [h, h], Order::First).unwrap();
    let t2 = travel_time(phi.view(), speed.view(), None, [h, h], Order::Second).unwrap();
    assert_eq!(t1.values[(40, 40)], 0.0);
    // Along the axes the front is exact; the diagonal error is first order at worst.
    assert!((t1.values[(40, 80)] - 5.0).abs() < 1e-12);
    let e1 = max_err(&t1.values, exact, |_, _| false);
    let e2 = max_err(&t2.values, exact, |_, _| false);
    assert!(e2 < e1, "second order {e2} against first {e1}");
    assert!(e1 < 0.2 * 10.0 / s && e1 > 0.0, "{e1}");
}

#[test]
fn travel_time_along_an_axis_counts_each_axis_spacing() {
    let mut phi = Array2::from_elem((4, 6), 1.0);
    phi[(0, 0)] = 0.0;
    let speed = Array2::from_elem((4, 6), 0.5);
    let t = travel_time(phi.view(), speed.view(), None, [3.0, 0.25], Order::First).unwrap();
    assert!((t.values[(0, 5)] - 5.0 * 0.25 / 0.5).abs() < 1e-12);
    assert!((t.values[(3, 0)] - 3.0 * 3.0 / 0.5).abs() < 1e-12);
    // Second order starts one-sided stencils beside the source: close, not exact.
    let t = travel_time(phi.view(), speed.view(), None, [3.0, 0.25], Order::Second).unwrap();
    assert!((t.values[(0, 5)] - 2.5).abs() < 1e-9, "{}", t.values[(0, 5)]);
    assert!((t.values[(3, 0)] - 18.0).abs() < 1e-4, "{}", t.values[(3, 0)]);
}

#[test]
fn masks_and_zero_speeds_block_the_front_and_stay_unreached() {
    // A wall across column 3 with no gap: the right side is cut off.
    let mut phi = Array2::from_elem((5, 7), 1.0);
    phi[(2, 0)] = 0.0;
    let mask = Array2::from_shape_fn((5, 7), |(_, c)| c == 3);
    let d = distance(phi.view(), Some(mask.view()), [1.0, 1.0], Order::Second).unwrap();
    assert_eq!(d.unreached, 5 * 4);
    assert!(d.values[(0, 4)].is_infinite() && d.values[(0, 2)].is_finite());
    let speed = Array2::from_shape_fn((5, 7), |(_, c)| if c == 3 { 0.0 } else { 1.0 });
    let t = travel_time(phi.view(), speed.view(), None, [1.0, 1.0], Order::First).unwrap();
    assert_eq!(t.unreached, 5 * 4);
    assert_eq!(t.reached(), d.reached());
}

#[test]
fn bad_input_is_refused_with_the_argument_named() {
    let phi = Array2::from_elem((3, 3), 1.0);
    let e = distance(phi.view(), None, [1.0, 1.0], Order::First).unwrap_err();
    assert!(e.to_string().contains("no zero contour"), "{e}");
    let mut nan = phi.clone();
    nan[(1, 2)] = f64::NAN;
    let e = distance(nan.view(), None, [1.0, 1.0], Order::First).unwrap_err();
    assert_eq!(
        e.to_string(),
        "phi: NaN at (1, 2): expected finite values (or the cell masked)"
    );
    let e = distance(phi.view(), None, [1.0, -2.0], Order::First).unwrap_err();
    assert!(e.to_string().starts_with("dx: -2.0 along axis 1"), "{e}");
    let speed = Array2::from_elem((3, 2), 1.0);
    let e = travel_time(phi.view(), speed.view(), None, [1.0, 1.0], Order::First).unwrap_err();
    assert!(e.to_string().starts_with("speed: shape (3, 2)"), "{e}");
}

#[test]
fn a_contour_nearer_than_the_smallest_float_is_on_its_cell_and_gives_no_nan() {
    // phi = 5e-324 beside -1 at spacing 0.3: the interpolated crossing (1.5e-324) underflows
    // to 0. scikit-fmm starts those cells at +inf and fills half the grid with NaN.
    let phi = Array2::from_shape_fn((20, 20), |(r, c)| match c {
        10 if r < 10 => 5e-324,
        10 => 0.5,
        c if c > 10 => -1.0,
        _ => 1.0,
    });
    let speed = Array2::from_elem((20, 20), 2.0);
    for order in [Order::First, Order::Second] {
        let d = distance(phi.view(), None, [0.3, 0.3], order).unwrap();
        let t = travel_time(phi.view(), speed.view(), None, [0.3, 0.3], order).unwrap();
        assert!(d.values.iter().chain(&t.values).all(|v| v.is_finite()), "{order}");
        for r in 0..10 {
            assert_eq!(d.values[(r, 10)], 0.0, "{order} row {r}");
            assert_eq!(t.values[(r, 10)], 0.0, "{order} row {r}");
        }
        // The cells beside the contour are a step from it, on its side.
        assert!((d.values[(3, 9)] - 0.3).abs() < 1e-12, "{}", d.values[(3, 9)]);
        assert!(d.values[(3, 12)] < 0.0, "{}", d.values[(3, 12)]);
        // The plain port makes the same departure from scikit-fmm.
        let plain = plain::march(&phi, None, None, [0.3, 0.3], order).unwrap();
        assert_same_bits(&d.values, &plain, &order.to_string());
    }
}

#[test]
fn values_under_the_mask_take_no_part_whatever_they_are() {
    // numpy's masked_invalid: NaN and infinite values, masked.
    let mut phi = Array2::from_shape_fn((7, 9), |(r, c)| (r as f64 - 3.2).hypot(c as f64 - 4.1) - 2.0);
    let mut speed = Array2::from_shape_fn((7, 9), |(r, c)| 1.0 + 0.1 * (r + c) as f64);
    let mut mask = Array2::from_elem((7, 9), false);
    for (at, v) in [
        ((0, 0), f64::NAN),
        ((6, 8), f64::INFINITY),
        ((3, 0), f64::NEG_INFINITY),
    ] {
        mask[at] = true;
        let times = |phi: &Array2<f64>, speed: &Array2<f64>, mask: &Array2<bool>| {
            travel_time(
                phi.view(),
                speed.view(),
                Some(mask.view()),
                [1.0, 0.5],
                Order::Second,
            )
            .unwrap()
        };
        let plain = times(&phi, &speed, &mask);
        phi[at] = v;
        speed[at] = v;
        for order in [Order::First, Order::Second] {
            let d = distance(phi.view(), Some(mask.view()), [1.0, 0.5], order).unwrap();
            assert!(d.values.iter().all(|v| !v.is_nan()));
            assert_eq!(d.values[at], f64::INFINITY);
        }
        let t = times(&phi, &speed, &mask);
        assert!(
            t.values
                .iter()
                .zip(&plain.values)
                .all(|(a, b)| a.to_bits() == b.to_bits())
        );
    }
    // Unmasked, the same values are refused.
    mask[(6, 8)] = false;
    let e = distance(phi.view(), Some(mask.view()), [1.0, 1.0], Order::First).unwrap_err();
    assert!(e.to_string().starts_with("phi: inf at (6, 8)"), "{e}");
}

#[test]
fn spacings_and_speeds_out_of_scale_are_refused_and_the_extremes_scale_the_values() {
    let phi = Array2::from_shape_fn((9, 11), |(r, c)| (r as f64 - 4.3).hypot(c as f64 - 5.2) - 2.5);
    let unit = distance(phi.view(), None, [1.0, 1.0], Order::Second).unwrap();
    for h in [MAX_SCALE, MIN_SPACING] {
        let d = distance(phi.view(), None, [h, h], Order::Second).unwrap();
        for (a, b) in d.values.iter().zip(&unit.values) {
            assert!(
                (a / h - b).abs() <= 1e-12 * b.abs().max(1.0),
                "{a} / {h} against {b}"
            );
        }
        let fast = Array2::from_elem((9, 11), MAX_SCALE);
        let t = travel_time(phi.view(), fast.view(), None, [h, h], Order::First).unwrap();
        assert!(t.values.iter().all(|v| v.is_finite() && *v > 0.0 || *v == 0.0));
    }
    for h in [MAX_SCALE * 10.0, MIN_SPACING / 10.0] {
        let e = distance(phi.view(), None, [1.0, h], Order::First).unwrap_err();
        assert!(e.to_string().starts_with("dx: "), "{e}");
        assert!(
            e.to_string()
                .contains("along axis 1: expected a length from 1e-50 to 1e50"),
            "{e}"
        );
    }
    let mut speed = Array2::from_elem((9, 11), 1.0);
    speed[(2, 3)] = 1e60;
    let e = travel_time(phi.view(), speed.view(), None, [1.0, 1.0], Order::First).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("speed: 1e60 at (2, 3): expected finite speeds up to 1e50"),
        "{e}"
    );
    // Too slow everywhere on the contour: the speeds are named, not phi.
    let slow = Array2::from_elem((9, 11), -1.0);
    let e = travel_time(phi.view(), slow.view(), None, [1.0, 1.0], Order::First).unwrap_err();
    assert!(
        e.to_string().starts_with("speed: below 2.220446049250313e-16"),
        "{e}"
    );
    let flat = Array2::from_elem((9, 11), 1.0);
    let e = travel_time(flat.view(), slow.view(), None, [1.0, 1.0], Order::First).unwrap_err();
    assert!(e.to_string().starts_with("phi: has no zero contour"), "{e}");
}

#[test]
fn a_march_in_the_callers_buffer_leaves_the_values_in_its_grid_rows() {
    let mut phi = Array2::from_elem((6, 5), 1.0);
    phi[(2, 3)] = 0.0;
    let speed = Array2::from_shape_fn((6, 5), |(r, c)| 0.5 + (r * 5 + c) as f64 / 10.0);
    let whole = travel_time(phi.view(), speed.view(), None, [0.5, 1.5], Order::Second).unwrap();
    let mut buffer = vec![7.0; buffer_len((6, 5))];
    let unreached = travel_time_in(
        phi.view(),
        speed.view(),
        None,
        [0.5, 1.5],
        Order::Second,
        &mut buffer,
    )
    .unwrap();
    assert_eq!(unreached, whole.unreached);
    let grid = &buffer[BUFFER_MARGIN * 5..(BUFFER_MARGIN + 6) * 5];
    assert!(
        grid.iter()
            .zip(whole.values.iter())
            .all(|(a, b)| a.to_bits() == b.to_bits())
    );
    let e = distance_in(phi.view(), None, [1.0, 1.0], Order::First, &mut buffer[1..]).unwrap_err();
    assert!(e.to_string().starts_with("buffer: 49 values: expected 50"), "{e}");
    // The checks report in their order whatever else is wrong.
    let mut nan = phi.clone();
    nan[(0, 1)] = f64::NAN;
    let e = travel_time(nan.view(), speed.view(), None, [1.0, -1.0], Order::First).unwrap_err();
    assert_eq!(
        e.to_string(),
        "phi: NaN at (0, 1): expected finite values (or the cell masked)"
    );
    let mut slow = speed.clone();
    slow[(5, 4)] = f64::INFINITY;
    let e = travel_time(phi.view(), slow.view(), None, [1.0, 1.0], Order::First).unwrap_err();
    assert_eq!(
        e.to_string(),
        "speed: inf at (5, 4): expected finite speeds up to 1e50 (or the cell masked)"
    );
}

/// Random inputs of every kind the march treats apart: contours of both signs, exact
/// zeros and ties, values whose products underflow, masks, zero and uniform speeds,
/// unequal spacings, grids one to three cells wide.
fn random_case(seed: u64) -> (Array2<f64>, Option<Array2<bool>>, Array2<f64>, [f64; 2]) {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let rows = rng.random_range(1..14);
    let cols = if seed.is_multiple_of(5) {
        rng.random_range(1..4)
    } else {
        rng.random_range(1..14)
    };
    let kind = seed % 6;
    let (cy, cx, radius) = (
        rng.random_range(0.0..rows as f64),
        rng.random_range(0.0..cols as f64),
        rng.random_range(0.5..6.0),
    );
    let mut phi = Array2::from_shape_fn((rows, cols), |(r, c)| {
        let d = ((r as f64 - cy).powi(2) + (c as f64 - cx).powi(2)).sqrt() - radius;
        match kind {
            0 => d,
            1 => (d * 2.0).round() / 2.0,
            2 => d * 1e-160,
            3 => 1.0,
            4 => rng.random_range(-1.0..1.0),
            _ => d.signum() * rng.random_range(1..3) as f64,
        }
    });
    phi[(rng.random_range(0..rows), rng.random_range(0..cols))] = 0.0;
    let mask = (seed % 3 == 1).then(|| Array2::from_shape_fn((rows, cols), |_| rng.random_bool(0.15)));
    let uniform = seed.is_multiple_of(4);
    let speed = Array2::from_shape_fn((rows, cols), |_| {
        if rng.random_bool(0.06) {
            0.0
        } else if uniform {
            1.7
        } else {
            rng.random_range(0.2..3.0)
        }
    });
    let spacing = [[1.0, 1.0], [0.37, 0.37], [1.0, 2.5], [0.3, 0.11]][(seed % 4) as usize];
    (phi, mask, speed, spacing)
}

#[test]
fn the_march_gives_the_plain_ports_values_bit_for_bit() {
    the_march_matches_the_plain_port();
}

#[test]
fn the_baseline_build_of_the_march_gives_the_plain_ports_values_bit_for_bit() {
    crate::eikonal::widest::tests::on_the_baseline(the_march_matches_the_plain_port);
}

thread_local! {
    /// How many marches of this thread used each [`Bands`].
    static BANDS: std::cell::RefCell<Vec<Bands>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Notes the bands a march used.
pub(super) fn count(bands: Bands) {
    BANDS.with(|b| b.borrow_mut().push(bands));
}

/// The marches of this thread that used `bands` since the last call.
fn counted(bands: Bands) -> usize {
    BANDS.with(|b| b.borrow().iter().filter(|&&x| x == bands).count())
}

fn forget_counts() {
    BANDS.with(|b| b.borrow_mut().clear());
}

/// The marches over one speed start in order of arrival and go on with the heap; whatever
/// the way, they give the heap's values bit for bit: from points, circles, lines and
/// squares, with and without obstacles, on equal and unequal spacings. Every way is taken
/// (the queue alone, the queue then the heap, the grid laid out again).
#[test]
fn the_queue_and_the_heap_give_the_plain_ports_values_bit_for_bit() {
    use rand::{Rng, SeedableRng};
    forget_counts();
    let mut compared = 0;
    for seed in 0..1500 {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let (rows, cols) = (rng.random_range(3..28), rng.random_range(3..28));
        let mut phi = match seed % 4 {
            0 => Array2::from_elem((rows, cols), 1.0),
            1 => {
                let (cy, cx, r) = (
                    rng.random_range(0.0..rows as f64),
                    rng.random_range(0.0..cols as f64),
                    rng.random_range(0.5..8.0),
                );
                Array2::from_shape_fn((rows, cols), |(a, b)| {
                    ((a as f64 - cy).powi(2) + (b as f64 - cx).powi(2)).sqrt() - r
                })
            }
            2 => {
                let (a0, b0, c0) = (
                    rng.random_range(-1.0..1.0),
                    rng.random_range(-1.0..1.0),
                    rng.random_range(-5.0..5.0),
                );
                Array2::from_shape_fn((rows, cols), |(a, b)| a0 * a as f64 + b0 * b as f64 + c0)
            }
            _ => {
                let k = rng.random_range(1..4) as f64;
                Array2::from_shape_fn((rows, cols), |(a, b)| {
                    ((a as f64 - 7.0).abs().max((b as f64 - 5.0).abs()) - k).round()
                })
            }
        };
        for _ in 0..rng.random_range(1..4) {
            phi[(rng.random_range(0..rows), rng.random_range(0..cols))] = 0.0;
        }
        let p_mask = [0.0, 0.05, 0.2, 0.35][rng.random_range(0..4)];
        let mask = (p_mask > 0.0).then(|| Array2::from_shape_fn((rows, cols), |_| rng.random_bool(p_mask)));
        let speed = Array2::from_elem((rows, cols), rng.random_range(0.3..3.0));
        let spacing = [[1.0, 1.0], [0.37, 0.37], [1.0, 2.5], [0.3, 0.11]][rng.random_range(0..4)];
        for order in [Order::First, Order::Second] {
            for travel in [false, true] {
                let speed = travel.then_some(&speed);
                if let (Ok(ours), Some(theirs)) = both_marches(&phi, mask.as_ref(), speed, spacing, order) {
                    let what = format!("seed {seed} {order} travel {travel}\nphi {phi:?}\nmask {mask:?}");
                    assert_same_bits(&ours.values, &theirs, &what);
                    compared += 1;
                }
            }
        }
    }
    assert!(compared > 5000, "{compared}");
    let ways = [Bands::Queue, Bands::QueueThenHeap, Bands::Again].map(counted);
    assert!(ways[0] > 50 && ways[1] > 200 && ways[2] > 0, "{ways:?}");
    assert_eq!(counted(Bands::Heap), 0);
}

/// From a point and through a maze of corridors, the queue alone marches the whole grid.
#[test]
fn from_a_point_and_through_a_maze_the_queue_marches_alone() {
    forget_counts();
    let n = 40;
    let mut point = Array2::from_elem((n, n), 1.0);
    point[(17, 23)] = 0.0;
    let mut corner = Array2::from_elem((n, n), 1.0);
    corner[(1, 1)] = 0.0;
    // Walls every 8 cells, each with one gap at alternate ends.
    let maze = Array2::from_shape_fn((n, n), |(r, c)| {
        r % 8 == 0 && r > 0 && if (r / 8) % 2 == 0 { c > 2 } else { c < n - 3 }
    });
    let speed = Array2::from_elem((n, n), 1.3);
    for order in [Order::First, Order::Second] {
        for (phi, mask) in [(&point, None), (&corner, Some(&maze))] {
            let (ours, theirs) = both_marches(phi, mask, Some(&speed), [1.0, 1.0], order);
            assert_same_bits(
                &ours.unwrap().values,
                &theirs.unwrap(),
                &format!("{order} {mask:?}"),
            );
        }
    }
    assert_eq!(counted(Bands::Queue), 4);
}

fn the_march_matches_the_plain_port() {
    let mut compared = 0;
    for seed in 0..600 {
        let (phi, mask, speed, spacing) = random_case(seed);
        for order in [Order::First, Order::Second] {
            for travel in [false, true] {
                let speed = travel.then_some(&speed);
                let (ours, theirs) = both_marches(&phi, mask.as_ref(), speed, spacing, order);
                match (ours, theirs) {
                    (Ok(ours), Some(theirs)) => {
                        assert_same_bits(
                            &ours.values,
                            &theirs,
                            &format!(
                                "seed {seed} {order} travel {travel}\nphi {phi:?}\nmask {mask:?}\nspacing {spacing:?}"
                            ),
                        );
                        assert_eq!(ours.unreached, theirs.iter().filter(|v| v.is_infinite()).count());
                        compared += 1;
                    }
                    (Err(e), None) => assert!(
                        e.to_string().contains("no zero contour")
                            || e.to_string().starts_with("speed: below"),
                        "{e}"
                    ),
                    (ours, theirs) => panic!(
                        "seed {seed}: {:?} vs {:?}",
                        ours.map(|o| o.unreached),
                        theirs.is_some()
                    ),
                }
            }
        }
    }
    assert!(compared > 2000, "{compared}");
    // Larger grids, whose bands are hundreds of cells long.
    for (n, masked) in [(48, false), (64, true)] {
        let phi = Array2::from_shape_fn((n, n), |(r, c)| {
            ((r as f64 - 20.3).powi(2) + (c as f64 - 17.8).powi(2)).sqrt() - 6.1
        });
        let mask =
            masked.then(|| Array2::from_shape_fn((n, n), |(r, c)| (r * 7 + c * 3) % 11 == 0 && r > 30));
        let speed = Array2::from_elem((n, n), 0.8);
        for order in [Order::First, Order::Second] {
            for travel in [false, true] {
                let speed = travel.then_some(&speed);
                let (ours, theirs) = both_marches(&phi, mask.as_ref(), speed, [1.0, 0.7], order);
                let what = format!("{n} {order} travel {travel}");
                assert_same_bits(&ours.unwrap().values, &theirs.unwrap(), &what);
            }
        }
    }
}

/// The march's result and the plain port's on the same input (the travel time where
/// `speed` is given, else the distance).
fn both_marches(
    phi: &Array2<f64>,
    mask: Option<&Array2<bool>>,
    speed: Option<&Array2<f64>>,
    spacing: [f64; 2],
    order: Order,
) -> (Result<LevelSet>, Option<Array2<f64>>) {
    let m = mask.map(|m| m.view());
    let ours = match speed {
        Some(s) => travel_time(phi.view(), s.view(), m, spacing, order),
        None => distance(phi.view(), m, spacing, order),
    };
    (ours, plain::march(phi, mask, speed, spacing, order))
}

/// Asserts that `ours` and `theirs` hold the same bits in every cell.
fn assert_same_bits(ours: &Array2<f64>, theirs: &Array2<f64>, what: &str) {
    for ((at, a), b) in ours.indexed_iter().zip(theirs.iter()) {
        assert_eq!(a.to_bits(), b.to_bits(), "{what} at {at:?}: {a} vs {b}");
    }
}
