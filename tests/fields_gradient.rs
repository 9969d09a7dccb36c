//! Upwind gradient and walking velocity (SPEC §4, last paragraph) on exact distance fields.

use crowdfield::agents::Agents;
use crowdfield::fields::Fields;
use crowdfield::gradient::{gradient, velocity_at};
use crowdfield::{Dir, Grid, Scene};
use ndarray::{Array2, Array3};

/// Exact Euclidean distance from the centre of cell `(r0, c0)` to every cell centre.
fn distance_from(grid: &Grid, r0: usize, c0: usize) -> Array2<f64> {
    let (x0, y0) = grid.cell_center(r0, c0);
    Array2::from_shape_fn(grid.shape(), |(r, c)| {
        let (x, y) = grid.cell_center(r, c);
        (x - x0).hypot(y - y0)
    })
}

#[test]
fn gradient_of_an_exact_distance_field_points_away_from_the_source() {
    let g = Grid::new(41, 31, 0.5);
    let (r0, c0) = (15, 20);
    let phi = distance_from(&g, r0, c0);
    let cost = Array3::from_elem(g.dir_shape(), 1.0f32);
    let grad = gradient(phi.view(), cost.view(), g.cell_size);
    assert_eq!(
        (grad.gx[[r0, c0]], grad.gy[[r0, c0]]),
        (0.0, 0.0),
        "the source has no gradient"
    );
    let (x0, y0) = g.cell_center(r0, c0);
    for r in 0..g.rows {
        for c in 0..g.cols {
            if (r, c) == (r0, c0) {
                continue;
            }
            let (x, y) = g.cell_center(r, c);
            let (ax, ay) = ((x - x0) / phi[[r, c]], (y - y0) / phi[[r, c]]);
            let (gx, gy) = (grad.gx[[r, c]] as f64, grad.gy[[r, c]] as f64);
            let cos = (gx * ax + gy * ay) / gx.hypot(gy);
            // One-sided differences bend the direction near the source, less farther out.
            let cells = phi[[r, c]] / g.cell_size;
            let min_cos = if cells > 8.0 { 0.995 } else { 0.9 };
            assert!(cos > min_cos, "cell ({r}, {c}): cos {cos}");
            // The walking direction is the opposite: toward the source.
            let d = grad.direction(r, c).unwrap();
            assert!(d[0] as f64 * ax + d[1] as f64 * ay < -min_cos);
        }
    }
}

#[test]
fn velocity_at_walks_at_f_max_toward_the_goal_on_flat_empty_ground() {
    let g = Grid::new(30, 20, 0.5);
    let scene = Scene::empty("flat", g);
    let fields = Fields::compute(&scene, &Agents::default());
    let (r0, c0) = (10, 12);
    let phi = distance_from(&g, r0, c0);
    let grad = gradient(phi.view(), fields.cost.view(), g.cell_size);
    let f_max = scene.params.f_max as f32;
    let (gx0, gy0) = g.cell_center(r0, c0);
    for k in 0..500 {
        let x = (k as f32 * 0.618_034).fract() * g.width() as f32;
        let y = (k as f32 * 0.754_877_7).fract() * g.height() as f32;
        let v = velocity_at(&g, &grad, fields.speed.view(), x, y);
        if g.cell_of(x as f64, y as f64) == Some((r0, c0)) {
            assert_eq!(v, [0.0, 0.0], "no direction in the goal cell");
            continue;
        }
        let speed = v[0].hypot(v[1]);
        assert!((speed - f_max).abs() < 1e-4, "|v| = {speed} at ({x}, {y})");
        let to_goal = (gx0 as f32 - x, gy0 as f32 - y);
        assert!(v[0] * to_goal.0 + v[1] * to_goal.1 > 0.0, "walks toward the goal");
    }
    assert_eq!(velocity_at(&g, &grad, fields.speed.view(), -1.0, 2.0), [0.0, 0.0]);
    assert_eq!(
        velocity_at(&g, &grad, fields.speed.view(), 2.0, f32::NAN),
        [0.0, 0.0]
    );
}

#[test]
fn velocity_follows_the_face_speeds_uphill_and_is_zero_where_unreachable() {
    // A ramp rising to the east with the goal on the east edge: walking east is uphill.
    let g = Grid::new(20, 6, 1.0);
    let mut scene = Scene::empty("ramp", g);
    scene.height = Array2::from_shape_fn(g.shape(), |(_, c)| 0.1 * c as f32);
    let fields = Fields::compute(&scene, &Agents::default());
    let phi = Array2::from_shape_fn(
        g.shape(),
        |(r, c)| if r == 5 { f64::INFINITY } else { (19 - c) as f64 },
    );
    let grad = gradient(phi.view(), fields.cost.view(), g.cell_size);
    let p = &scene.params;
    let uphill = p.f_max + 0.1 / p.s_max * (p.f_min - p.f_max);
    let v = velocity_at(&g, &grad, fields.speed.view(), 5.5, 2.5);
    assert!(
        (v[0] as f64 - uphill).abs() < 1e-5 && v[1] == 0.0,
        "{v:?} vs {uphill}"
    );
    assert!((fields.speed[[2, 5, Dir::E.index()]] as f64 - uphill).abs() < 1e-5);
    assert_eq!(
        velocity_at(&g, &grad, fields.speed.view(), 5.5, 5.5),
        [0.0, 0.0],
        "unreachable row"
    );
    assert_eq!(
        velocity_at(&g, &grad, fields.speed.view(), 19.5, 2.5),
        [0.0, 0.0],
        "goal column"
    );
}
