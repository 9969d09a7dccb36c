//! The map's `movers` compiled to [`Mover`]s, every problem with its JSON path; and the same
//! shape rules for an obstacle a program adds at run time ([`obstacle_shape`]).

use super::Checker;
use crate::error::{Error, Result};
use crate::map::format::{MoverSpec, ShapeRef, Shaped};
use crate::mover::{Motion, Mover, MoverShape, ShapeKind};

/// Fastest a mover may travel, m/s: a train entering a station, well above any walker.
const MAX_MOVER_SPEED: f64 = 100.0;

impl Checker<'_> {
    /// The map's `movers`, in its order (the problems recorded, the bad ones left out).
    pub(super) fn movers(&mut self, movers: &[MoverSpec]) -> Vec<Mover> {
        let mut out = Vec::new();
        for (i, m) in movers.iter().enumerate() {
            let at = format!("movers[{i}]");
            let shape = match mover_shape(m, &at) {
                Ok(shape) => Some(shape),
                Err((path, message)) => {
                    self.push(&path, message);
                    None
                }
            };
            let mut ok = shape.is_some();
            if m.path.is_empty() {
                self.push(
                    &format!("{at}.path"),
                    "[]: expected at least one point [x, y] (one point: the mover stands there)".into(),
                );
                ok = false;
            }
            for (k, p) in m.path.iter().enumerate() {
                ok &= self.point(*p, &format!("{at}.path[{k}]"));
            }
            let speed = match m.speed {
                Some(v) => {
                    ok &= self.number_within(v, &format!("{at}.speed"), (0.0, MAX_MOVER_SPEED), "m/s");
                    v
                }
                None if m.path.len() > 1 => {
                    self.push(
                        &at,
                        "missing field `speed`: expected the m/s along its path of two points or more".into(),
                    );
                    ok = false;
                    0.0
                }
                None => 0.0,
            };
            let from = m.from.unwrap_or(0.0);
            ok &= self.number_within(
                from,
                &format!("{at}.from"),
                (0.0, super::MAX_EVENT_TIME),
                "seconds",
            );
            if let (true, Some(shape)) = (ok, shape) {
                out.push(Mover {
                    name: m.name.clone().unwrap_or_else(|| format!("mover {i}")),
                    shape,
                    position: m.path[0],
                    motion: Motion::Path {
                        points: m.path.clone(),
                        speed,
                        from,
                        looped: m.looped.unwrap_or(false),
                    },
                });
            }
        }
        out
    }
}

/// The shape of mover `m` at JSON path `at`, or the path and message of its problem.
fn mover_shape(m: &MoverSpec, at: &str) -> std::result::Result<MoverShape, (String, String)> {
    let kind = match m.shape() {
        Ok(ShapeRef::Rect(r)) => ShapeKind::Rect {
            min: r.min,
            max: r.max,
        },
        Ok(ShapeRef::Circle(c)) => {
            if c.profile.is_some() {
                return Err((
                    format!("{at}.circle.profile"),
                    "given: a mover's disc has no profile (profiles shape layer values)".into(),
                ));
            }
            ShapeKind::Circle {
                center: c.center,
                radius: c.radius,
            }
        }
        Ok(ShapeRef::Polygon(_)) => {
            return Err((
                format!("{at}.polygon"),
                "given: expected a `rect` or a `circle` (a mover is a rectangle or a disc)".into(),
            ));
        }
        Err(n) => {
            return Err((
                at.to_string(),
                format!("{n} shape keys: expected exactly one of `rect` and `circle`"),
            ));
        }
    };
    let angle = m.angle.unwrap_or(0.0);
    if !(angle.is_finite() && angle.abs() <= 360.0) {
        return Err((
            format!("{at}.angle"),
            format!("{angle}: expected a finite angle in [-360, 360] degrees"),
        ));
    }
    let shape = MoverShape {
        kind,
        angle: angle.to_radians(),
    };
    if let Some(problem) = shape.problem() {
        let key = match shape.kind {
            ShapeKind::Rect { .. } => "rect",
            ShapeKind::Circle { .. } => "circle",
        };
        return Err((format!("{at}.{key}"), problem));
    }
    Ok(shape)
}

/// An obstacle's shape as a program gives it, in the map's words: a JSON object with one of
/// `rect` and `circle` (around the obstacle's position) and an optional `angle` in degrees,
/// e.g. `{"rect": {"min": [-2, -1], "max": [2, 1]}, "angle": 30}`. The Python package's
/// `add_obstacle` passes its shape through here.
///
/// # Errors
/// [`Error::Invalid`] (file `<obstacle>`) naming the key and the value that is wrong.
pub fn obstacle_shape(json: &str) -> Result<MoverShape> {
    let file = "<obstacle>";
    let value: serde_json::Value = serde_json::from_str(json)
        .map_err(|e| Error::invalid(file, "", format!("{e}: expected a JSON object")))?;
    let spec: MoverSpec = serde_path_to_error::deserialize(&value).map_err(|e| {
        let path = e.path().to_string();
        let at = if path == "." { String::new() } else { path };
        Error::invalid(file, at, e.into_inner().to_string())
    })?;
    for (key, given) in [
        ("name", spec.name.is_some()),
        ("path", !spec.path.is_empty()),
        ("speed", spec.speed.is_some()),
        ("from", spec.from.is_some()),
        ("loop", spec.looped.is_some()),
    ] {
        if given {
            return Err(Error::invalid(
                file,
                key,
                "given: a shape takes only `rect` or `circle` and `angle` (the position and velocity are arguments)",
            ));
        }
    }
    mover_shape(&spec, "").map_err(|(at, message)| Error::invalid(file, at.trim_start_matches('.'), message))
}
