//! JSON text to [`MapFile`], reporting every structural problem with its JSON path.
//!
//! serde stops at the first error, so when the whole map does not deserialise, the parser walks
//! the JSON tree section by section (top-level keys, each layer, each group, each shape) and
//! deserialises each piece on its own: one error per broken piece, each with its full path
//! (`groups[1].goals[0].rect.max`), tracked inside a piece by `serde_path_to_error`.

use super::format::{EventSpec, GoalSpec, GridSpec, LayerShape, MapFile, Raster, SpawnSpec, SpeedRange};
use super::format::{RegionSpec, StageSpec};
use crate::error::Error;
use crate::params::{BoidsParams, Model, OrcaParams, Params};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

/// Keys of the map's top-level object.
const ROOT_KEYS: &[&str] = &[
    "version", "name", "grid", "layers", "groups", "model", "params", "walls", "events", "regions", "movers",
];
/// Keys of `layers`.
const LAYERS_KEYS: &[&str] = &["height", "obstacles", "discomfort"];
/// Keys of one layer.
const LAYER_KEYS: &[&str] = &["raster", "shapes"];
/// Keys of a group.
const GROUP_KEYS: &[&str] = &[
    "name",
    "color",
    "goals",
    "spawns",
    "speed",
    "radius",
    "boids",
    "orca",
    "route",
    "exit_shares",
];

/// Parses map JSON; on failure returns every structural problem found.
pub(crate) fn parse_map(text: &str, file: &str) -> Result<MapFile, Vec<Error>> {
    let value: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => return Err(vec![syntax_error(file, &e)]),
    };
    let duplicates = duplicate_keys(text);
    let counts = spawn_count_problems(&value);
    let first = match serde_path_to_error::deserialize::<_, MapFile>(&value) {
        Ok(map) if duplicates.is_empty() && counts.is_empty() => return Ok(map),
        Ok(_) => None,
        Err(e) => Some(e),
    };
    let mut c = Collector {
        file,
        errors: Vec::new(),
    };
    for at in duplicates {
        let key = at.rsplit('.').next().unwrap_or(&at).to_string();
        c.push(
            &at,
            format!(
                "key `{key}` given twice in one object: expected each key once (JSON keeps only \
                 the last, so the first value would be lost without a word)"
            ),
        );
    }
    for (at, message) in counts {
        c.push(&at, message);
    }
    if let Some(first) = first {
        let before = c.errors.len();
        c.root(&value);
        if c.errors.len() == before {
            // The piecewise walk is meant to find at least what the whole deserialisation
            // found; should it ever miss it, report the whole-map error rather than nothing.
            c.push_de_error("", &first);
        }
    }
    Err(c.errors)
}

/// The spawn areas that give neither `count` nor a source's `rate` or `times`, or a count
/// beside them: `(JSON path, message)`. A spawn area either places `count` walkers at the start
/// or brings them in over time, and the format's `count` has a default only for the latter.
fn spawn_count_problems(value: &Value) -> Vec<(String, String)> {
    let mut found = Vec::new();
    let Some(groups) = value.get("groups").and_then(Value::as_array) else {
        return found;
    };
    for (gi, group) in groups.iter().enumerate() {
        let Some(spawns) = group.get("spawns").and_then(Value::as_array) else {
            continue;
        };
        for (si, spawn) in spawns.iter().enumerate() {
            let Some(obj) = spawn.as_object() else {
                continue;
            };
            let at = format!("groups[{gi}].spawns[{si}]");
            // A key given `null` is a key left out, as serde reads an optional field.
            let given = |key: &str| obj.get(key).is_some_and(|v| !v.is_null());
            let source = ["rate", "times"].into_iter().find(|k| given(k));
            match (given("count"), source) {
                (false, None) => found.push((at, "missing field `count`".to_string())),
                (true, Some(key)) => found.push((
                    format!("{at}.count"),
                    format!(
                        "given with `{key}`: expected either `count` (walkers placed at the start) \
                         or a source's `rate` or `times` (walkers arriving over time)"
                    ),
                )),
                _ => {}
            }
        }
    }
    found
}

/// The JSON paths of the keys given more than once in one object (each repeat once).
/// `serde_json` keeps the last value of a repeated key; in a map file a repeat is almost surely
/// an edit gone wrong (two `radius` in a group), so the loader refuses it. The text is known to
/// be valid JSON here.
fn duplicate_keys(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut de = serde_json::Deserializer::from_str(text);
    let _ = serde::de::DeserializeSeed::deserialize(
        DuplicateKeys {
            path: String::new(),
            found: &mut found,
        },
        &mut de,
    );
    found
}

/// A walk over any JSON value that records repeated keys (see [`duplicate_keys`]).
struct DuplicateKeys<'a> {
    /// JSON path of the value walked.
    path: String,
    found: &'a mut Vec<String>,
}

impl<'de> serde::de::DeserializeSeed<'de> for DuplicateKeys<'_> {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for DuplicateKeys<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }

    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }

    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }

    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }

    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let found = self.found;
        let mut i = 0;
        while seq
            .next_element_seed(DuplicateKeys {
                path: format!("{}[{i}]", self.path),
                found: &mut *found,
            })?
            .is_some()
        {
            i += 1;
        }
        Ok(())
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let found = self.found;
        let mut seen = std::collections::HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            let path = join_path(&self.path, &key);
            if !seen.insert(key) {
                found.push(path.clone());
            }
            map.next_value_seed(DuplicateKeys {
                path,
                found: &mut *found,
            })?;
        }
        Ok(())
    }
}

/// A JSON syntax error with its line and column.
fn syntax_error(file: &str, e: &serde_json::Error) -> Error {
    let full = e.to_string();
    // serde_json appends " at line L column C" to the message; the location goes in `at`.
    let message = match full.rfind(" at line ") {
        Some(i) if e.line() > 0 => full[..i].to_string(),
        _ => full,
    };
    let message = match e.classify() {
        serde_json::error::Category::Eof => format!("{message}: the file ends early (truncated?)"),
        _ => format!("{message}: expected valid JSON"),
    };
    Error::invalid(file, format!("line {}, column {}", e.line(), e.column()), message)
}

/// Joins a JSON path prefix and a relative path from `serde_path_to_error`.
pub(crate) fn join_path(prefix: &str, rest: &str) -> String {
    match (prefix.is_empty(), rest.is_empty() || rest == ".") {
        (true, true) => "(root)".to_string(),
        (true, false) => rest.to_string(),
        (false, true) => prefix.to_string(),
        (false, false) if rest.starts_with('[') => format!("{prefix}{rest}"),
        (false, false) => format!("{prefix}.{rest}"),
    }
}

/// Walks the JSON tree and collects one error per piece that does not deserialise.
struct Collector<'a> {
    file: &'a str,
    errors: Vec<Error>,
}

impl Collector<'_> {
    fn push(&mut self, at: &str, message: String) {
        let at = join_path(at, "");
        self.errors.push(Error::invalid(self.file, at, message));
    }

    fn push_de_error(&mut self, at: &str, e: &serde_path_to_error::Error<serde_json::Error>) {
        let path = join_path(at, &e.path().to_string());
        self.errors.push(Error::invalid(
            self.file,
            path,
            crate::text::shorten_quoted_value(&e.inner().to_string()),
        ));
    }

    /// Deserialises one piece; records its error.
    fn de<T: DeserializeOwned>(&mut self, v: &Value, at: &str) {
        if let Err(e) = serde_path_to_error::deserialize::<_, T>(v) {
            self.push_de_error(at, &e);
        }
    }

    /// Checks that `v` is an object with only `known` keys and every `required` key; returns it.
    fn object<'v>(
        &mut self,
        v: &'v Value,
        at: &str,
        what: &str,
        known: &[&str],
        required: &[&str],
    ) -> Option<&'v Map<String, Value>> {
        let Some(obj) = v.as_object() else {
            self.push(at, format!("invalid type: {}, expected {what}", kind(v)));
            return None;
        };
        for key in obj.keys() {
            if !known.contains(&key.as_str()) {
                let key = crate::text::truncate_for_message(key);
                let expected = known
                    .iter()
                    .map(|k| format!("`{k}`"))
                    .collect::<Vec<_>>()
                    .join(", ");
                self.push(
                    &join_path(at, &key),
                    format!("unknown field `{key}`, expected one of {expected}"),
                );
            }
        }
        for key in required {
            if !obj.contains_key(*key) {
                self.push(at, format!("missing field `{key}`"));
            }
        }
        Some(obj)
    }

    /// Deserialises each element of an array piece by piece with `each`.
    fn array(&mut self, v: &Value, at: &str, each: impl Fn(&mut Self, &Value, &str)) {
        match v.as_array() {
            Some(items) => {
                for (i, item) in items.iter().enumerate() {
                    each(self, item, &format!("{at}[{i}]"));
                }
            }
            None => self.push(at, format!("invalid type: {}, expected an array", kind(v))),
        }
    }

    fn root(&mut self, v: &Value) {
        let Some(obj) = self.object(v, "", "a map object", ROOT_KEYS, &["version", "name", "grid"]) else {
            return;
        };
        for (key, v) in obj {
            match key.as_str() {
                "version" => self.de::<u32>(v, "version"),
                "name" => self.de::<String>(v, "name"),
                "grid" => self.de::<GridSpec>(v, "grid"),
                "layers" => self.layers(v),
                "groups" => self.array(v, "groups", Self::group),
                "model" => self.de::<Option<Model>>(v, "model"),
                "params" => self.de::<Option<Params>>(v, "params"),
                "walls" => self.de::<Option<super::format::Walls>>(v, "walls"),
                "events" => self.array(v, "events", |c, v, at| c.de::<EventSpec>(v, at)),
                "regions" => self.array(v, "regions", |c, v, at| c.de::<RegionSpec>(v, at)),
                "movers" => self.array(v, "movers", |c, v, at| c.de::<super::format::MoverSpec>(v, at)),
                _ => {}
            }
        }
    }

    fn layers(&mut self, v: &Value) {
        let Some(obj) = self.object(v, "layers", "an object of layers", LAYERS_KEYS, &[]) else {
            return;
        };
        for (key, v) in obj {
            if LAYERS_KEYS.contains(&key.as_str()) && !v.is_null() {
                self.layer(v, &format!("layers.{key}"));
            }
        }
    }

    fn layer(&mut self, v: &Value, at: &str) {
        let Some(obj) = self.object(v, at, "a layer object", LAYER_KEYS, &[]) else {
            return;
        };
        if let Some(r) = obj.get("raster") {
            self.de::<Option<Raster>>(r, &format!("{at}.raster"));
        }
        if let Some(s) = obj.get("shapes") {
            self.array(s, &format!("{at}.shapes"), |c, v, at| c.de::<LayerShape>(v, at));
        }
    }

    fn group(&mut self, v: &Value, at: &str) {
        let Some(obj) = self.object(v, at, "a group object", GROUP_KEYS, &["name", "goals"]) else {
            return;
        };
        for (key, v) in obj {
            let here = format!("{at}.{key}");
            match key.as_str() {
                "name" => self.de::<String>(v, &here),
                "color" => self.de::<Option<String>>(v, &here),
                "goals" => self.array(v, &here, |c, v, at| c.de::<GoalSpec>(v, at)),
                "spawns" => self.array(v, &here, |c, v, at| c.de::<SpawnSpec>(v, at)),
                "speed" => self.de::<SpeedRange>(v, &here),
                "radius" => self.de::<f64>(v, &here),
                "boids" => self.de::<Option<BoidsParams>>(v, &here),
                "orca" => self.de::<Option<OrcaParams>>(v, &here),
                "route" => self.array(v, &here, |c, v, at| c.de::<StageSpec>(v, at)),
                "exit_shares" => self.de::<Option<std::collections::BTreeMap<String, f64>>>(v, &here),
                _ => {}
            }
        }
    }
}

/// serde's wording for the JSON type of a value.
fn kind(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => format!("boolean `{b}`"),
        Value::Number(n) => format!("number `{n}`"),
        Value::String(s) => format!("string {}", crate::text::quoted(s)),
        Value::Array(_) => "sequence".into(),
        Value::Object(_) => "map".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn errors(text: &str) -> Vec<String> {
        parse_map(text, "m.json")
            .unwrap_err()
            .into_iter()
            .map(|e| e.to_string())
            .collect()
    }

    const GRID: &str = r#""version": 1, "name": "t", "grid": {"cols": 4, "rows": 4, "cell_size": 1}"#;

    #[test]
    fn a_valid_minimal_map_parses() {
        let m = parse_map(&format!("{{{GRID}}}"), "m.json").unwrap();
        assert_eq!(m.grid.cols, 4);
        assert!(m.groups.is_empty());
    }

    #[test]
    fn syntax_errors_give_line_and_column() {
        let e = errors("{\n  \"version\": 1,\n  \"name\": ,\n}");
        assert_eq!(e.len(), 1);
        assert!(e[0].starts_with("m.json: line 3, column 11: "), "{e:?}");
        let e = errors("{\"version\": 1");
        assert!(e[0].contains("ends early"), "{e:?}");
    }

    #[test]
    fn every_broken_piece_is_reported_with_its_path() {
        let text = format!(
            r#"{{{GRID}, "colour": 1, "groups": [
                {{"name": "a", "goals": [{{"rect": {{"min": [0, 0], "max": [1, "x"]}}}}]}},
                {{"name": "b", "goals": [], "spawns": [{{"rect": {{"min": [0, 0], "max": [1, 1]}}}}]}}
            ], "layers": {{"height": {{"shapes": [{{"circle": {{"center": [1, 1], "radius": true}}}}]}}}}}}"#
        );
        let e = errors(&text);
        let want = [
            "m.json: colour: unknown field `colour`",
            "m.json: groups[0].goals[0].rect.max[1]: invalid type: string \"x\", expected f64",
            "m.json: groups[1].spawns[0]: missing field `count`",
            "m.json: layers.height.shapes[0].circle.radius: invalid type: boolean `true`, expected f64",
        ];
        for w in want {
            assert!(e.iter().any(|m| m.starts_with(w)), "missing {w:?} in {e:#?}");
        }
        assert_eq!(e.len(), want.len(), "{e:#?}");
    }

    #[test]
    fn path_joining() {
        assert_eq!(join_path("", ""), "(root)");
        assert_eq!(join_path("", "."), "(root)");
        assert_eq!(join_path("a", "b.c"), "a.b.c");
        assert_eq!(join_path("a[1]", "[2]"), "a[1][2]");
        assert_eq!(join_path("", "grid.cols"), "grid.cols");
    }
}
