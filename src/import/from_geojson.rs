//! GeoJSON plans: a bare polygon or multipolygon is the walkable area; in a `Feature` or a
//! `FeatureCollection` each feature's `layer` property (or `role`, `kind`: JuPedSim's layer
//! names, with or without `jps-`, any case) says what it is (walkable area when left out), its
//! `name` names it and a distribution's `number` and `radius` give its walkers. Coordinates are
//! metres.

use super::{Distribution, NamedArea, Plan, Role};
use crate::error::{Error, Result};
use geo::{Geometry, Polygon};
use geojson::{Feature, GeoJson};

/// Parses GeoJSON `text`; `file` names it in errors.
pub fn parse(text: &str, file: &str) -> Result<Plan> {
    let json: GeoJson = text
        .parse()
        .map_err(|e| Error::invalid(file, "(GeoJSON)", format!("not GeoJSON: {e}")))?;
    let features = match json {
        GeoJson::Geometry(g) => vec![Feature::from(g)],
        GeoJson::Feature(f) => vec![f],
        GeoJson::FeatureCollection(c) => c.features,
    };
    let mut plan = Plan::new(file);
    for (i, feature) in features.iter().enumerate() {
        let at = format!("features[{i}]");
        let text_prop = |key: &str| feature.property(key).and_then(|v| v.as_str());
        let role_name = text_prop("layer").or(text_prop("role")).or(text_prop("kind"));
        let role = match role_name {
            None => Role::Walkable,
            Some(name) => Role::of_name(name).ok_or_else(|| {
                Error::invalid(
                    file,
                    format!("{at}.properties.layer"),
                    format!(
                        "\"{name}\": expected one of walkablearea, obstacles, exits, \
                         distributions, waypoints, journeys (with or without \"jps-\")"
                    ),
                )
            })?,
        };
        let Some(geometry) = &feature.geometry else {
            return Err(Error::invalid(
                file,
                format!("{at}.geometry"),
                "the feature has no geometry",
            ));
        };
        let geometry = Geometry::<f64>::try_from(geometry)
            .map_err(|e| Error::invalid(file, format!("{at}.geometry"), e.to_string()))?;
        match role {
            Role::Waypoints => plan.waypoints += 1,
            Role::Journeys => plan.journeys += 1,
            Role::Doors => plan.doors += 1,
            Role::Parameters => {}
            _ => {
                let polygons = polygons(geometry, &at, file)?;
                for polygon in polygons {
                    let (default, n) = match role {
                        Role::Walkable => ("walkable", plan.walkable.len() + 1),
                        Role::Obstacles => ("obstacle", plan.obstacles.len() + 1),
                        Role::Exits => ("exit", plan.exits.len() + 1),
                        _ => ("distribution", plan.distributions.len() + 1),
                    };
                    let area = NamedArea {
                        name: text_prop("name").map_or_else(|| format!("{default} {n}"), str::to_string),
                        polygon,
                        at: at.clone(),
                        file: file.to_string(),
                    };
                    match role {
                        Role::Walkable => plan.walkable.push(area),
                        Role::Obstacles => plan.obstacles.push(area),
                        Role::Exits => plan.exits.push(area),
                        _ => {
                            let number = feature.property("number").or(feature.property("count"));
                            let count = match number {
                                None => None,
                                Some(v) => Some(v.as_u64().ok_or_else(|| {
                                    Error::invalid(
                                        file,
                                        format!("{at}.properties.number"),
                                        format!("{v}: expected a whole number of walkers"),
                                    )
                                })? as usize),
                            };
                            let radius = match feature.property("radius") {
                                None => None,
                                Some(v) => Some(v.as_f64().filter(|r| *r > 0.0).ok_or_else(|| {
                                    Error::invalid(
                                        file,
                                        format!("{at}.properties.radius"),
                                        format!("{v}: expected a body radius in metres"),
                                    )
                                })?),
                            };
                            plan.distributions.push(Distribution { area, count, radius });
                        }
                    }
                }
            }
        }
    }
    Ok(plan)
}

fn polygons(g: Geometry<f64>, at: &str, file: &str) -> Result<Vec<Polygon<f64>>> {
    match g {
        Geometry::Polygon(p) => Ok(vec![p]),
        Geometry::MultiPolygon(m) => Ok(m.0),
        other => Err(Error::invalid(
            file,
            format!("{at}.geometry"),
            format!("a {} where a Polygon is needed", super::from_wkt::kind(&other)),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn features_take_their_role_from_the_layer_property() {
        let text = r#"{"type":"FeatureCollection","features":[
          {"type":"Feature","properties":{},"geometry":{"type":"Polygon","coordinates":[[[0,0],[10,0],[10,10],[0,10],[0,0]]]}},
          {"type":"Feature","properties":{"layer":"jps-exits","name":"east"},"geometry":{"type":"Polygon","coordinates":[[[9,4],[10,4],[10,6],[9,6],[9,4]]]}},
          {"type":"Feature","properties":{"layer":"Distributions","number":12},"geometry":{"type":"Polygon","coordinates":[[[1,1],[3,1],[3,3],[1,3],[1,1]]]}}
        ]}"#;
        let plan = parse(text, "p.geojson").unwrap();
        assert_eq!(plan.exits[0].name, "east");
        assert_eq!(plan.distributions[0].count, Some(12));
        assert_eq!(plan.walkable.len(), 1);
    }

    #[test]
    fn an_unknown_layer_is_named() {
        let text = r#"{"type":"Feature","properties":{"layer":"stairs"},"geometry":{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,0]]]}}"#;
        let e = parse(text, "p.geojson").unwrap_err().to_string();
        assert!(
            e.contains("features[0].properties.layer") && e.contains("stairs"),
            "{e}"
        );
    }
}
