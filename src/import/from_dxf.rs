//! DXF plans, read with the `dxf` crate, by JuPedSim's layer names: `jps-walkablearea`,
//! `jps-obstacles`, `jps-exits`, `jps-distributions` (with `jps-parameters` texts such as
//! `number=20` or `radius=0.3` inside a distribution), `jps-waypoints`, `jps-journeys`; with or
//! without `jps-`, any case, or other names through [`LayerNames`].
//!
//! Outlines are LWPOLYLINEs and POLYLINEs (bulges drawn as arcs), CIRCLEs, and chains of LINEs,
//! ARCs and open polylines joined end to end (ends within [`super::JOIN_TOLERANCE_M`]); block
//! INSERTs are expanded (scaled, rotated, arrayed; entities on layer `0` inside a block take
//! the INSERT's layer). A ring on the walkable layer inside another one is a hole. `$INSUNITS`
//! gives the unit (mm, cm, dm, m, km, in, ft; none: metres).

use super::{Distribution, JOIN_TOLERANCE_M, NamedArea, Plan, Role};
use crate::error::{Error, OPTIONS, Result, num};
use ::dxf::entities::{Entity, EntityType};
use ::dxf::enums::Units;
use ::dxf::{Drawing, Point};
use geo::{Contains, InteriorPoint, Polygon};
use std::path::Path;

/// Largest angle one straight segment of a drawn arc or circle spans, degrees: 5° keeps the
/// chord within 0.1 % of the radius.
pub const ARC_STEP_DEG: f64 = 5.0;

/// How deep block INSERTs may nest before the drawing is taken as circular.
pub const MAX_INSERT_DEPTH: usize = 16;

/// The most points the outlines of one drawing may expand to (arrays of INSERTs multiply).
pub const MAX_POINTS: usize = 50_000_000;

/// Layer names for the roles, beyond JuPedSim's: `walkable=NAME,obstacles=NAME,...`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LayerNames {
    /// A role and the layer (lower case) that holds it.
    pub names: Vec<(Role, String)>,
}

impl LayerNames {
    /// Parses `walkable=FLOOR,exits=EXIT,...` (keys: walkable, obstacles, exits,
    /// distributions, parameters, waypoints, journeys, doors).
    pub fn parse(spec: &str) -> Result<LayerNames> {
        let mut names = Vec::new();
        for part in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let bad = || {
                Error::invalid(
                    OPTIONS,
                    "LayerNames",
                    format!(
                        "\"{part}\": expected ROLE=LAYER with ROLE one of walkable, obstacles, \
                         exits, distributions, parameters, waypoints, journeys, doors"
                    ),
                )
            };
            let (key, layer) = part.split_once('=').ok_or_else(bad)?;
            let role = Role::of_name(key).ok_or_else(bad)?;
            names.push((role, layer.trim().to_ascii_lowercase()));
        }
        Ok(LayerNames { names })
    }

    /// The role of `layer`: a name given here first, then JuPedSim's names.
    pub fn role_of(&self, layer: &str) -> Option<Role> {
        let lower = layer.trim().to_ascii_lowercase();
        self.names
            .iter()
            .find(|(_, name)| *name == lower)
            .map(|(role, _)| *role)
            .or_else(|| Role::of_name(&lower))
    }
}

/// Metres per drawing unit and the unit's name.
fn unit_scale(units: Units, file: &str) -> Result<(f64, &'static str)> {
    Ok(match units {
        Units::Unitless => (1.0, "m (no $INSUNITS: read as metres)"),
        Units::Millimeters => (1e-3, "mm"),
        Units::Centimeters => (1e-2, "cm"),
        Units::Decimeters => (0.1, "dm"),
        Units::Meters => (1.0, "m"),
        Units::Kilometers => (1e3, "km"),
        Units::Inches => (0.0254, "in"),
        Units::Feet => (0.3048, "ft"),
        Units::USSurveyFeet => (1200.0 / 3937.0, "US survey ft"),
        other => {
            return Err(Error::invalid(
                file,
                "$INSUNITS",
                format!(
                    "{other:?}: a unit a floor plan is not drawn in; expected mm, cm, dm, m, km, \
                     in or ft (set $INSUNITS in the CAD program)"
                ),
            ));
        }
    })
}

/// A 2-D affine map `(x, y) -> (a x + b y + c, d x + e y + f)`.
#[derive(Clone, Copy, Debug)]
struct Affine([f64; 6]);

impl Affine {
    fn apply(&self, x: f64, y: f64) -> (f64, f64) {
        let [a, b, c, d, e, f] = self.0;
        (a * x + b * y + c, d * x + e * y + f)
    }

    /// `self` after `inner`: first `inner`, then `self`.
    fn then(&self, inner: &Affine) -> Affine {
        let [a, b, c, d, e, f] = self.0;
        let [p, q, r, s, t, u] = inner.0;
        Affine([
            a * p + b * s,
            a * q + b * t,
            a * r + b * u + c,
            d * p + e * s,
            d * q + e * t,
            d * r + e * u + f,
        ])
    }
}

/// One outline piece: its points (drawing units, transformed), whether it is closed, where.
#[derive(Clone, Debug)]
struct Piece {
    points: Vec<(f64, f64)>,
    closed: bool,
    at: String,
}

/// What one layer role collects.
#[derive(Default)]
struct Collected {
    pieces: [Vec<Piece>; 8],
    texts: Vec<((f64, f64), String)>,
    counts: [usize; 8],
    layers: Vec<String>,
    points: usize,
}

fn slot(role: Role) -> usize {
    Role::NAMES.iter().position(|(r, _)| *r == role).unwrap_or(0)
}

/// Reads a DXF plan.
pub fn read(path: &Path, layers: &LayerNames) -> Result<Plan> {
    let file = crate::text::show_path(path);
    let drawing = Drawing::load_file(path).map_err(|e| match e {
        ::dxf::DxfError::IoError(source) => Error::Io {
            path: path.to_path_buf(),
            source,
        },
        other => Error::invalid(
            file.clone(),
            "(DXF)",
            format!("not a DXF drawing the reader takes: {other}"),
        ),
    })?;
    from_drawing(&drawing, &file, layers)
}

/// A plan from a loaded drawing; `file` names it in errors.
pub fn from_drawing(drawing: &Drawing, file: &str, layers: &LayerNames) -> Result<Plan> {
    let (scale, unit) = unit_scale(drawing.header.default_drawing_units, file)?;
    let mut got = Collected::default();
    let to_metres = Affine([scale, 0.0, 0.0, 0.0, scale, 0.0]);
    for entity in drawing.entities() {
        visit(drawing, entity, &to_metres, None, "", 0, layers, file, &mut got)?;
    }
    let mut plan = Plan::new(file);
    plan.units = unit.to_string();
    let walkable = &got.pieces[slot(Role::Walkable)];
    if walkable.is_empty() {
        let mut names: Vec<String> = drawing.layers().map(|l| l.name.clone()).collect();
        names.extend(got.layers.iter().cloned());
        names.sort();
        names.dedup();
        return Err(Error::invalid(
            file,
            "(layers)",
            format!(
                "no walkable layer: the drawing has the layers {}; name the floor's layer \
                 jps-walkablearea, or give its name as LayerNames walkable=NAME",
                if names.is_empty() {
                    "(none)".to_string()
                } else {
                    names.join(", ")
                }
            ),
        ));
    }
    let rings = |role: Role| close_rings(&got.pieces[slot(role)], file);
    // The walkable layer's rings by nesting: a ring inside an odd number of others is a hole.
    let mut walk = rings(Role::Walkable)?;
    walk.sort_by(|a, b| ring_area(&b.points).total_cmp(&ring_area(&a.points)));
    let polygons: Vec<Polygon<f64>> = walk.iter().map(|r| polygon(&r.points)).collect();
    for (i, ring) in walk.iter().enumerate() {
        let inside = polygons[i]
            .interior_point()
            .map_or(0, |p| (0..i).filter(|&j| polygons[j].contains(&p)).count());
        let name = format!("walkable {}", i + 1);
        let area = NamedArea {
            name,
            polygon: polygons[i].clone(),
            at: ring.at.clone(),
            file: file.to_string(),
        };
        if inside.is_multiple_of(2) {
            plan.walkable.push(area);
        } else {
            plan.obstacles.push(NamedArea {
                name: format!("hole in the walkable area {}", i + 1),
                ..area
            });
        }
    }
    for (i, ring) in rings(Role::Obstacles)?.into_iter().enumerate() {
        plan.obstacles.push(NamedArea {
            name: format!("obstacle {}", i + 1),
            polygon: polygon(&ring.points),
            at: ring.at,
            file: file.to_string(),
        });
    }
    for (i, ring) in rings(Role::Exits)?.into_iter().enumerate() {
        plan.exits.push(NamedArea {
            name: format!("exit {}", i + 1),
            polygon: polygon(&ring.points),
            at: ring.at,
            file: file.to_string(),
        });
    }
    for (i, ring) in rings(Role::Distributions)?.into_iter().enumerate() {
        let poly = polygon(&ring.points);
        let mut count = None;
        let mut radius = None;
        for ((x, y), text) in &got.texts {
            if poly.contains(&geo::Point::new(*x, *y)) {
                let (n, r) = super::parse_parameters(text);
                count = n.or(count);
                radius = r.or(radius);
            }
        }
        plan.distributions.push(Distribution {
            area: NamedArea {
                name: format!("distribution {}", i + 1),
                polygon: poly,
                at: ring.at,
                file: file.to_string(),
            },
            count,
            radius,
        });
    }
    plan.waypoints = got.counts[slot(Role::Waypoints)];
    plan.journeys = got.counts[slot(Role::Journeys)];
    plan.doors = got.counts[slot(Role::Doors)];
    Ok(plan)
}

/// Collects `entity` (through `transform`; `layer_of_insert` for entities on layer `0` inside
/// a block) into `got`.
#[allow(clippy::too_many_arguments)]
fn visit(
    drawing: &Drawing,
    entity: &Entity,
    transform: &Affine,
    layer_of_insert: Option<&str>,
    within: &str,
    depth: usize,
    layers: &LayerNames,
    file: &str,
    got: &mut Collected,
) -> Result<()> {
    // Paper space holds the sheet's layouts, not the floor.
    if entity.common.is_in_paper_space {
        return Ok(());
    }
    let own = entity.common.layer.as_str();
    let layer = match layer_of_insert {
        Some(outer) if own == "0" => outer,
        _ => own,
    };
    let at = format!("layer {layer}, entity {:X}{within}", entity.common.handle.0);
    if let EntityType::Insert(insert) = &entity.specific {
        if depth >= MAX_INSERT_DEPTH {
            return Err(Error::invalid(
                file,
                at,
                format!(
                    "INSERT of block \"{}\" nests more than {MAX_INSERT_DEPTH} deep: a block \
                     that inserts itself?",
                    insert.name
                ),
            ));
        }
        let Some(block) = drawing.blocks().find(|b| b.name == insert.name) else {
            return Err(Error::invalid(
                file,
                at,
                format!(
                    "INSERT of block \"{}\", which the drawing does not define",
                    insert.name
                ),
            ));
        };
        let (sin, cos) = insert.rotation.to_radians().sin_cos();
        let (sx, sy) = (insert.x_scale_factor, insert.y_scale_factor);
        let base = &block.base_point;
        let columns = insert.column_count.max(1) as usize;
        let rows = insert.row_count.max(1) as usize;
        let inner_within = format!(
            "{within} in block {} of INSERT {:X}",
            block.name, entity.common.handle.0
        );
        for i in 0..rows {
            for j in 0..columns {
                // Block coordinates: less the base point, scaled, offset by the array cell,
                // rotated, moved to the insertion point.
                let (ox, oy) = (j as f64 * insert.column_spacing, i as f64 * insert.row_spacing);
                let local = Affine([
                    cos * sx,
                    -sin * sy,
                    cos * (ox - sx * base.x) - sin * (oy - sy * base.y) + insert.location.x,
                    sin * sx,
                    cos * sy,
                    sin * (ox - sx * base.x) + cos * (oy - sy * base.y) + insert.location.y,
                ]);
                let t = transform.then(&local);
                for inner in &block.entities {
                    visit(
                        drawing,
                        inner,
                        &t,
                        Some(layer),
                        &inner_within,
                        depth + 1,
                        layers,
                        file,
                        got,
                    )?;
                }
            }
        }
        return Ok(());
    }
    if !got.layers.iter().any(|l| l == layer) {
        got.layers.push(layer.to_string());
    }
    let Some(role) = layers.role_of(layer) else {
        return Ok(());
    };
    let k = slot(role);
    got.counts[k] += 1;
    let pt = |p: &Point| transform.apply(p.x, p.y);
    let piece = match &entity.specific {
        EntityType::Text(t) if role == Role::Parameters || role == Role::Distributions => {
            got.texts.push((pt(&t.location), t.value.clone()));
            return Ok(());
        }
        EntityType::MText(t) if role == Role::Parameters || role == Role::Distributions => {
            let mut text = t.extended_text.concat();
            text.push_str(&t.text);
            got.texts.push((pt(&t.insertion_point), text));
            return Ok(());
        }
        _ if matches!(
            role,
            Role::Parameters | Role::Waypoints | Role::Journeys | Role::Doors
        ) =>
        {
            return Ok(());
        }
        EntityType::LwPolyline(p) => {
            let vertices: Vec<((f64, f64), f64)> = p.vertices.iter().map(|v| ((v.x, v.y), v.bulge)).collect();
            Piece {
                points: with_bulges(&vertices, p.is_closed(), transform),
                closed: p.is_closed(),
                at,
            }
        }
        EntityType::Polyline(p) => {
            let vertices: Vec<((f64, f64), f64)> = p
                .vertices()
                .map(|v| ((v.location.x, v.location.y), v.bulge))
                .collect();
            Piece {
                points: with_bulges(&vertices, p.is_closed(), transform),
                closed: p.is_closed(),
                at,
            }
        }
        EntityType::Line(l) => Piece {
            points: vec![pt(&l.p1), pt(&l.p2)],
            closed: false,
            at,
        },
        EntityType::Arc(a) => {
            let mut sweep = a.end_angle - a.start_angle;
            if sweep <= 0.0 {
                sweep += 360.0;
            }
            Piece {
                points: arc_points(
                    (a.center.x, a.center.y),
                    a.radius,
                    a.start_angle,
                    sweep,
                    transform,
                ),
                closed: false,
                at,
            }
        }
        EntityType::Circle(c) => {
            let mut points = arc_points((c.center.x, c.center.y), c.radius, 0.0, 360.0, transform);
            points.pop();
            Piece {
                points,
                closed: true,
                at,
            }
        }
        EntityType::Text(_) | EntityType::MText(_) => return Ok(()),
        other => {
            return Err(Error::invalid(
                file,
                at,
                format!(
                    "a {} on the {} layer, which the import does not read: draw the outline as \
                     an LWPOLYLINE, POLYLINE, CIRCLE or LINEs and ARCs (explode it in the CAD \
                     program)",
                    entity_kind(other),
                    role.key()
                ),
            ));
        }
    };
    got.points += piece.points.len();
    if got.points > MAX_POINTS {
        return Err(Error::invalid(
            file,
            piece.at,
            format!("the outlines expand to more than {MAX_POINTS} points: simplify the drawing"),
        ));
    }
    got.pieces[k].push(piece);
    Ok(())
}

/// The DXF name of an entity kind.
fn entity_kind(e: &EntityType) -> String {
    let debug = format!("{e:?}");
    debug
        .split(['(', ' ', '{'])
        .next()
        .unwrap_or("entity")
        .to_ascii_uppercase()
}

/// A polyline's points with each bulged segment drawn as an arc.
fn with_bulges(vertices: &[((f64, f64), f64)], closed: bool, t: &Affine) -> Vec<(f64, f64)> {
    let mut out = Vec::with_capacity(vertices.len());
    let n = vertices.len();
    for i in 0..n {
        let ((x0, y0), bulge) = vertices[i];
        out.push(t.apply(x0, y0));
        let next = if i + 1 < n {
            i + 1
        } else if closed {
            0
        } else {
            break;
        };
        if bulge.abs() > 1e-12 {
            let (x1, y1) = vertices[next].0;
            // The arc through both ends with included angle 4 atan(bulge), counter-clockwise
            // for a positive bulge.
            let theta = 4.0 * bulge.atan();
            let chord = ((x1 - x0).powi(2) + (y1 - y0).powi(2)).sqrt();
            if chord == 0.0 {
                continue;
            }
            let radius = chord / (2.0 * (theta / 2.0).sin());
            let (mx, my) = ((x0 + x1) / 2.0, (y0 + y1) / 2.0);
            let sagitta_to_centre = radius * (theta / 2.0).cos();
            let (nx, ny) = (-(y1 - y0) / chord, (x1 - x0) / chord);
            let (cx, cy) = (mx + nx * sagitta_to_centre, my + ny * sagitta_to_centre);
            let start = (y0 - cy).atan2(x0 - cx).to_degrees();
            let mut arc = arc_points((cx, cy), radius.abs(), start, theta.to_degrees(), t);
            arc.pop();
            out.extend(arc.into_iter().skip(1));
        }
    }
    out
}

/// Points along an arc from `start` degrees through `sweep` degrees (negative: clockwise),
/// both ends included.
fn arc_points(c: (f64, f64), r: f64, start: f64, sweep: f64, t: &Affine) -> Vec<(f64, f64)> {
    let steps = ((sweep.abs() / ARC_STEP_DEG).ceil() as usize).max(1);
    (0..=steps)
        .map(|k| {
            let a = (start + sweep * k as f64 / steps as f64).to_radians();
            t.apply(c.0 + r * a.cos(), c.1 + r * a.sin())
        })
        .collect()
}

fn dist(a: (f64, f64), b: (f64, f64)) -> f64 {
    ((a.0 - b.0).powi(2) + (a.1 - b.1).powi(2)).sqrt()
}

/// Closed rings from a layer's pieces: closed pieces as they are, open ones joined end to end.
/// An open chain left over is an error naming its first entity and the gap.
fn close_rings(pieces: &[Piece], file: &str) -> Result<Vec<Piece>> {
    let mut rings = Vec::new();
    let mut open: Vec<Piece> = Vec::new();
    for p in pieces {
        if p.points.len() < 2 {
            continue;
        }
        let ends_meet = dist(p.points[0], *p.points.last().unwrap()) <= JOIN_TOLERANCE_M;
        if p.closed || (ends_meet && p.points.len() > 3) {
            let mut ring = p.clone();
            if ends_meet && ring.points.len() > 1 {
                ring.points.pop();
            }
            ring.closed = true;
            rings.push(ring);
        } else {
            open.push(p.clone());
        }
    }
    while let Some(mut chain) = open.pop() {
        loop {
            let end = *chain.points.last().unwrap();
            let start = chain.points[0];
            if chain.points.len() > 2 && dist(start, end) <= JOIN_TOLERANCE_M {
                chain.points.pop();
                chain.closed = true;
                break;
            }
            let next = open.iter().position(|p| {
                dist(p.points[0], end) <= JOIN_TOLERANCE_M
                    || dist(*p.points.last().unwrap(), end) <= JOIN_TOLERANCE_M
            });
            let Some(i) = next else { break };
            let mut p = open.swap_remove(i);
            if dist(p.points[0], end) > JOIN_TOLERANCE_M {
                p.points.reverse();
            }
            chain.points.extend(p.points.into_iter().skip(1));
        }
        if !chain.closed {
            let gap = dist(chain.points[0], *chain.points.last().unwrap());
            return Err(Error::invalid(
                file,
                &chain.at,
                format!(
                    "an open outline where a closed one is needed: its ends are {} apart (in the \
                     plan's metres), from ({}, {}) to ({}, {}); close the polyline (its Closed \
                     flag) or draw the missing segment",
                    num((gap * 1e6).round() / 1e6),
                    num(chain.points[0].0),
                    num(chain.points[0].1),
                    num(chain.points.last().unwrap().0),
                    num(chain.points.last().unwrap().1),
                ),
            ));
        }
        rings.push(chain);
    }
    Ok(rings)
}

fn polygon(points: &[(f64, f64)]) -> Polygon<f64> {
    Polygon::new(points.to_vec().into(), Vec::new())
}

fn ring_area(points: &[(f64, f64)]) -> f64 {
    use geo::Area;
    polygon(points).unsigned_area()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layer_names_map_roles() {
        let names = LayerNames::parse("walkable=FLOOR, exits=Out").unwrap();
        assert_eq!(names.role_of("floor"), Some(Role::Walkable));
        assert_eq!(names.role_of("OUT"), Some(Role::Exits));
        assert_eq!(names.role_of("jps-obstacles"), Some(Role::Obstacles));
        assert!(LayerNames::parse("roof=X").is_err());
    }

    #[test]
    fn a_half_circle_bulge_bows_out() {
        // From (0,0) to (2,0) with bulge 1: a half circle of radius 1 through (1,-1).
        let pts = with_bulges(
            &[((0.0, 0.0), 1.0), ((2.0, 0.0), 0.0)],
            false,
            &Affine([1.0, 0.0, 0.0, 0.0, 1.0, 0.0]),
        );
        assert!(pts.iter().any(|p| dist(*p, (1.0, -1.0)) < 1e-9), "{pts:?}");
        assert_eq!(*pts.last().unwrap(), (2.0, 0.0));
    }
}
