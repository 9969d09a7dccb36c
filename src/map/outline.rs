//! The floor as drawn ([`Outline`]): the obstacle shapes of a map combined in their order
//! with `geo`'s boolean operations (a shape of nonzero value adds wall, one of value 0 cuts it
//! away, as the raster does cell by cell), taken from the domain, and each goal's exact area.
//! A map whose obstacles start from a raster has no outline: its walls are its cells.

use super::format::{Circle, GoalSpec, MapFile, ShapeRef, Shaped};
use crate::grid::Grid;
use crate::scene::Outline;
use geo::{BooleanOps, Coord, LineString, MultiPolygon, Polygon, Rect};

/// The largest distance, metres, between a circle and the polygon that stands for it.
pub const CIRCLE_TOLERANCE: f64 = 1e-3;

/// The most vertices a circle's polygon gets.
const CIRCLE_MAX_VERTICES: usize = 512;

/// A circle as a polygon whose vertices lie on it, with enough of them that no point of the
/// circle is farther than [`CIRCLE_TOLERANCE`] from the polygon.
pub fn circle_polygon(c: &Circle) -> Polygon<f64> {
    let r = c.radius.max(0.0);
    let n = if r <= CIRCLE_TOLERANCE {
        8
    } else {
        let half_angle = (1.0 - CIRCLE_TOLERANCE / r).acos();
        ((std::f64::consts::PI / half_angle).ceil() as usize).clamp(8, CIRCLE_MAX_VERTICES)
    };
    let ring: Vec<Coord<f64>> = (0..n)
        .map(|k| {
            let a = std::f64::consts::TAU * k as f64 / n as f64;
            Coord {
                x: c.center[0] + r * a.cos(),
                y: c.center[1] + r * a.sin(),
            }
        })
        .collect();
    Polygon::new(LineString::from(ring), vec![])
}

/// A shape of the map as a `geo` polygon (a circle by [`circle_polygon`]).
pub fn shape_polygon(shape: ShapeRef<'_>) -> Polygon<f64> {
    match shape {
        ShapeRef::Rect(r) => Rect::new(
            Coord {
                x: r.min[0],
                y: r.min[1],
            },
            Coord {
                x: r.max[0],
                y: r.max[1],
            },
        )
        .to_polygon(),
        ShapeRef::Circle(c) => circle_polygon(c),
        ShapeRef::Polygon(p) => Polygon::new(
            LineString::from(
                p.points
                    .iter()
                    .map(|q| Coord { x: q[0], y: q[1] })
                    .collect::<Vec<_>>(),
            ),
            vec![],
        ),
    }
}

/// The domain of `grid` as a polygon.
fn domain(grid: &Grid) -> MultiPolygon<f64> {
    MultiPolygon::new(vec![
        Rect::new(
            Coord { x: 0.0, y: 0.0 },
            Coord {
                x: grid.width(),
                y: grid.height(),
            },
        )
        .to_polygon(),
    ])
}

/// The outline of a checked map on `grid`, or `None` when its obstacles start from a raster.
pub(crate) fn outline(map: &MapFile, grid: &Grid) -> Option<Outline> {
    let obstacles = map.layers.obstacles.as_ref();
    if obstacles.is_some_and(|l| l.raster.is_some()) {
        return None;
    }
    let domain = domain(grid);
    let mut wall = MultiPolygon::<f64>::new(Vec::new());
    for s in obstacles.map_or(&[][..], |l| &l.shapes[..]) {
        let Ok(shape) = s.shape() else { continue };
        let polygon = MultiPolygon::new(vec![shape_polygon(shape)]);
        wall = if s.value != 0.0 {
            wall.union(&polygon)
        } else {
            wall.difference(&polygon)
        };
    }
    let walkable = domain.difference(&wall);
    let goal_area = |goal: &GoalSpec| match goal.shape() {
        Ok(shape) => MultiPolygon::new(vec![shape_polygon(shape)]).intersection(&domain),
        Err(_) => MultiPolygon::new(Vec::new()),
    };
    let goals = map
        .groups
        .iter()
        .map(|g| g.goals.iter().map(goal_area).collect())
        .collect();
    Some(Outline { walkable, goals })
}

#[cfg(test)]
mod tests {
    use super::*;
    use geo::Area;

    #[test]
    fn circle_polygon_stays_within_the_tolerance() {
        let c = Circle {
            center: [1.0, 2.0],
            radius: 3.0,
            profile: None,
        };
        let p = circle_polygon(&c);
        let exact = std::f64::consts::PI * 9.0;
        // The polygon lies inside the circle: its area is smaller by at most the tolerance's band.
        let area = p.unsigned_area();
        assert!(area < exact && exact - area < std::f64::consts::TAU * 3.0 * CIRCLE_TOLERANCE);
    }
}
