//! WKT plans as JuPedSim takes them: a `POLYGON` (holes are obstacles), a `MULTIPOLYGON` or a
//! `GEOMETRYCOLLECTION` of polygons (joined into one walkable area), and the nested collection
//! JuPedSim's `dxf2wkt` writes: a `GEOMETRYCOLLECTION` of collections, in order the walkable
//! area, the exits, the distributions, the waypoints and the journeys (the last three may be
//! left out). Distributions carry no count in WKT: [`super::ImportOptions::density`] or
//! [`super::Distribution::count`] set by the caller gives one.

use super::{Distribution, NamedArea, Plan};
use crate::error::{Error, Result};
use geo::{Geometry, Polygon};
use wkt::TryFromWkt;

/// The roles of the nested collection's items, in `dxf2wkt`'s order.
const NESTED_ORDER: [&str; 5] = ["walkable area", "exits", "distributions", "waypoints", "journeys"];

/// Parses WKT `text`; `file` names it in errors.
pub fn parse(text: &str, file: &str) -> Result<Plan> {
    let geometry = Geometry::<f64>::try_from_wkt_str(text.trim()).map_err(|e| {
        Error::invalid(
            file,
            "(WKT)",
            format!("not WKT JuPedSim reads: {e}; expected a POLYGON, MULTIPOLYGON or GEOMETRYCOLLECTION"),
        )
    })?;
    from_geometry(geometry, file)
}

/// A plan from a parsed geometry (WKT or shapely's, through WKT).
pub fn from_geometry(geometry: Geometry<f64>, file: &str) -> Result<Plan> {
    let mut plan = Plan::new(file);
    match geometry {
        Geometry::GeometryCollection(items)
            if !items.0.is_empty()
                && items
                    .0
                    .iter()
                    .all(|g| matches!(g, Geometry::GeometryCollection(_))) =>
        {
            if items.0.len() > NESTED_ORDER.len() {
                return Err(Error::invalid(
                    file,
                    "GEOMETRYCOLLECTION",
                    format!(
                        "{} collections: expected at most 5 ({})",
                        items.0.len(),
                        NESTED_ORDER.join(", ")
                    ),
                ));
            }
            for (k, item) in items.0.into_iter().enumerate() {
                let Geometry::GeometryCollection(parts) = item else {
                    unreachable!()
                };
                let role = NESTED_ORDER[k];
                let mut n = 0;
                for (i, g) in parts.0.into_iter().enumerate() {
                    let at = format!("GEOMETRYCOLLECTION item {} ({role}) item {}", k + 1, i + 1);
                    match k {
                        0 => {
                            for p in polygons(g, &at, file, role)? {
                                plan.walkable.push(named(
                                    format!("walkable {}", plan.walkable.len() + 1),
                                    p,
                                    &at,
                                    file,
                                ));
                            }
                        }
                        1 => {
                            for p in polygons(g, &at, file, role)? {
                                n += 1;
                                plan.exits.push(named(format!("exit {n}"), p, &at, file));
                            }
                        }
                        2 => {
                            for p in polygons(g, &at, file, role)? {
                                n += 1;
                                plan.distributions.push(Distribution {
                                    area: named(format!("distribution {n}"), p, &at, file),
                                    count: None,
                                    radius: None,
                                });
                            }
                        }
                        3 => plan.waypoints += 1,
                        _ => plan.journeys += 1,
                    }
                }
            }
        }
        g => {
            for (i, p) in polygons(g, "(WKT)", file, "walkable area")?
                .into_iter()
                .enumerate()
            {
                plan.walkable.push(named(
                    format!("walkable {}", i + 1),
                    p,
                    &format!("polygon {}", i + 1),
                    file,
                ));
            }
        }
    }
    Ok(plan)
}

fn named(name: String, polygon: Polygon<f64>, at: &str, file: &str) -> NamedArea {
    NamedArea {
        name,
        polygon,
        at: at.to_string(),
        file: file.to_string(),
    }
}

/// The polygons of `g` (a polygon, a multipolygon, or a collection of them).
fn polygons(g: Geometry<f64>, at: &str, file: &str, role: &str) -> Result<Vec<Polygon<f64>>> {
    match g {
        Geometry::Polygon(p) => Ok(vec![p]),
        Geometry::MultiPolygon(m) => Ok(m.0),
        Geometry::Rect(r) => Ok(vec![r.to_polygon()]),
        Geometry::GeometryCollection(c) => {
            let mut out = Vec::new();
            for g in c.0 {
                out.extend(polygons(g, at, file, role)?);
            }
            Ok(out)
        }
        other => Err(Error::invalid(
            file,
            at,
            format!(
                "a {} where the {role} needs a polygon: draw it as a POLYGON",
                kind(&other)
            ),
        )),
    }
}

/// The WKT name of a geometry's kind.
pub fn kind(g: &Geometry<f64>) -> &'static str {
    match g {
        Geometry::Point(_) => "POINT",
        Geometry::Line(_) | Geometry::LineString(_) => "LINESTRING",
        Geometry::Polygon(_) => "POLYGON",
        Geometry::MultiPoint(_) => "MULTIPOINT",
        Geometry::MultiLineString(_) => "MULTILINESTRING",
        Geometry::MultiPolygon(_) => "MULTIPOLYGON",
        Geometry::GeometryCollection(_) => "GEOMETRYCOLLECTION",
        Geometry::Rect(_) => "RECT",
        Geometry::Triangle(_) => "TRIANGLE",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_polygon_with_a_hole_is_the_walkable_area() {
        let plan = parse(
            "POLYGON((0 0,10 0,10 10,0 10,0 0),(4 4,6 4,6 6,4 6,4 4))",
            "p.wkt",
        )
        .unwrap();
        assert_eq!(plan.walkable.len(), 1);
        assert_eq!(plan.walkable[0].polygon.interiors().len(), 1);
    }

    #[test]
    fn the_nested_collection_gives_exits_and_distributions() {
        let text = "GEOMETRYCOLLECTION(GEOMETRYCOLLECTION(POLYGON((0 0,10 0,10 10,0 10,0 0))),\
                    GEOMETRYCOLLECTION(POLYGON((9 4,10 4,10 6,9 6,9 4))),\
                    GEOMETRYCOLLECTION(POLYGON((1 1,3 1,3 3,1 3,1 1))),\
                    GEOMETRYCOLLECTION(POINT(5 5)))";
        let plan = parse(text, "p.wkt").unwrap();
        assert_eq!(
            (plan.walkable.len(), plan.exits.len(), plan.distributions.len()),
            (1, 1, 1)
        );
        assert_eq!(plan.waypoints, 1);
    }

    #[test]
    fn a_point_as_walkable_area_is_an_error() {
        let e = parse("POINT(1 2)", "p.wkt").unwrap_err().to_string();
        assert!(e.contains("p.wkt") && e.contains("POINT"), "{e}");
    }
}
