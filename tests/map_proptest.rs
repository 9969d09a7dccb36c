//! Property tests of the map loader: thousands of mutated bundled maps (deleted or replaced JSON
//! nodes, extreme numbers, wrong types, copied subtrees, truncated or corrupted text) never make
//! it panic; every error names the file; every map it accepts is a consistent scene that survives
//! a save → load round trip.

use crowdfield::Error;
use crowdfield::map::{self, MapFile};
use proptest::prelude::*;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

fn maps_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("maps")
}

/// The maps mutated. Small and medium grids keep each case to a few milliseconds; the office
/// brings a PNG raster, the hills a height profile, the hall many shapes.
const SEEDS: [&str; 7] = [
    "corridor.json",
    "crossing.json",
    "bottleneck.json",
    "four_exits.json",
    "hill.json",
    "office.json",
    "hall.json",
];

fn seed(i: usize) -> Value {
    let text = std::fs::read_to_string(maps_dir().join(SEEDS[i % SEEDS.len()])).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// Numbers that break things: zero, signs, fractions, huge and tiny, integer limits.
const NUMBERS: [f64; 16] = [
    0.0,
    1.0,
    -1.0,
    0.5,
    2.0,
    3.7,
    100.0,
    255.0,
    1e9,
    -1e9,
    1e300,
    -1e300,
    1e-300,
    9007199254740993.0,
    1.8446744073709552e19,
    -0.0,
];

fn number(k: u32) -> Value {
    let x = NUMBERS[k as usize % NUMBERS.len()];
    if x.fract() == 0.0 && x.abs() < 1e15 {
        json!(x as i64)
    } else {
        json!(x)
    }
}

/// Values of every JSON type, including shapes that belong somewhere else.
fn other_value(k: u32) -> Value {
    match k % 10 {
        0 => Value::Null,
        1 => json!(true),
        2 => json!("x"),
        3 => json!([]),
        4 => json!({}),
        5 => json!([1, 2, 3]),
        6 => json!({"rect": {"min": [0, 0], "max": [1, 1]}}),
        7 => json!({"circle": {"center": [1, 1], "radius": 1e9, "profile": "dome"}, "value": -1}),
        8 => json!(u64::MAX),
        _ => json!("#zzzzzz"),
    }
}

/// A step into a JSON value.
#[derive(Clone, Debug)]
enum Key {
    Field(String),
    Index(usize),
}

/// Paths of every node, root first.
fn all_paths(v: &Value) -> Vec<Vec<Key>> {
    fn walk(v: &Value, here: &mut Vec<Key>, out: &mut Vec<Vec<Key>>) {
        out.push(here.clone());
        match v {
            Value::Object(m) => {
                for (k, child) in m {
                    here.push(Key::Field(k.clone()));
                    walk(child, here, out);
                    here.pop();
                }
            }
            Value::Array(a) => {
                for (i, child) in a.iter().enumerate() {
                    here.push(Key::Index(i));
                    walk(child, here, out);
                    here.pop();
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(v, &mut Vec::new(), &mut out);
    out
}

fn node_mut<'a>(v: &'a mut Value, path: &[Key]) -> &'a mut Value {
    path.iter().fold(v, |v, k| match k {
        Key::Field(f) => &mut v[f.as_str()],
        Key::Index(i) => &mut v[*i],
    })
}

/// One mutation: which node (`at`, modulo the node count), what to do (`op`), with what (`arg`).
#[derive(Clone, Debug)]
struct Mutation {
    at: u32,
    op: u8,
    arg: u32,
}

fn apply(v: &mut Value, m: &Mutation) {
    let paths = all_paths(v);
    let path = &paths[m.at as usize % paths.len()];
    match m.op % 6 {
        // Delete the node from its parent.
        0 => {
            if let Some((last, parent)) = path.split_last() {
                match (node_mut(v, parent), last) {
                    (Value::Object(o), Key::Field(f)) => {
                        o.remove(f);
                    }
                    (Value::Array(a), Key::Index(i)) => {
                        a.remove(*i);
                    }
                    _ => {}
                }
            }
        }
        // Replace with an extreme number.
        1 => *node_mut(v, path) = number(m.arg),
        // Replace with a value of another type.
        2 => *node_mut(v, path) = other_value(m.arg),
        // Scale a number.
        3 => {
            let node = node_mut(v, path);
            if let Some(x) = node.as_f64() {
                let factor = [-1.0, 0.0, 1e6, 0.5, 3.0][m.arg as usize % 5];
                *node = json!(x * factor);
            }
        }
        // Add an unknown field, or duplicate an array element.
        4 => match node_mut(v, path) {
            Value::Object(o) => {
                o.insert(format!("extra{}", m.arg % 3), json!(1));
            }
            Value::Array(a) if !a.is_empty() => {
                let item = a[m.arg as usize % a.len()].clone();
                a.push(item);
            }
            _ => {}
        },
        // Copy another node's subtree here (wrong structure in the right syntax).
        _ => {
            let from = &paths[m.arg as usize % paths.len()];
            let copy = node_mut(&mut v.clone(), from).clone();
            *node_mut(v, path) = copy;
        }
    }
}

fn mutation() -> impl Strategy<Value = Mutation> {
    (any::<u32>(), any::<u8>(), any::<u32>()).prop_map(|(at, op, arg)| Mutation { at, op, arg })
}

const FILE: &str = "fuzz.json";

/// Asserts that `e` (and each of several) names the file.
fn assert_names_the_file(e: &Error) {
    match e {
        Error::Many(all) => all.iter().for_each(assert_names_the_file),
        other => {
            let s = other.to_string();
            assert!(s.starts_with("fuzz.json: "), "error does not name the file: {s}");
        }
    }
}

/// Loads `text` as the editor would (parse, then compile with rasters from maps/), checking the
/// properties every outcome must have.
fn check_text(text: &str) {
    let parsed = MapFile::from_json(text, FILE);
    let map = match parsed {
        Ok(m) => m,
        Err(e) => return assert_names_the_file(&e),
    };
    let problems = map::check(&map, &maps_dir(), FILE);
    match map::compile(&map, &maps_dir(), FILE) {
        Err(e) => {
            assert!(!problems.is_empty());
            assert_names_the_file(&e);
        }
        Ok(scene) => {
            assert!(problems.is_empty());
            let shape = scene.grid.shape();
            assert_eq!(scene.height.dim(), shape);
            assert!(scene.height.iter().all(|h| h.is_finite()));
            assert!(scene.discomfort.iter().all(|g| g.is_finite() && *g >= 0.0));
            for g in &scene.groups {
                assert!(!g.goals.is_empty() || g.boids.is_some());
                assert!(g.speed_min > 0.0 && g.speed_min <= g.speed_max && g.radius > 0.0);
                for a in g.goals.iter().chain(g.spawns.iter().map(|s| &s.area)) {
                    assert_eq!(a.mask.shape(), shape);
                    assert!(a.width.is_finite() && a.width > 0.0);
                }
            }
            // What loads, saves and loads back to the same scene.
            let again = MapFile::from_json(&map.to_json(), FILE).unwrap();
            assert_eq!(again, map);
            assert_eq!(map::compile(&again, &maps_dir(), FILE).unwrap(), scene);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1500, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn mutated_maps_never_panic(which in 0usize..SEEDS.len(), mutations in prop::collection::vec(mutation(), 1..4)) {
        let mut v = seed(which);
        for m in &mutations {
            apply(&mut v, m);
        }
        check_text(&serde_json::to_string(&v).unwrap());
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn corrupted_or_truncated_text_never_panics(
        which in 0usize..SEEDS.len(),
        cut in any::<prop::sample::Index>(),
        byte in any::<u8>(),
        truncate in any::<bool>(),
    ) {
        let text = serde_json::to_string_pretty(&seed(which)).unwrap();
        let mut bytes = text.into_bytes();
        let i = cut.index(bytes.len());
        if truncate {
            bytes.truncate(i);
        } else {
            bytes[i] = byte;
        }
        // Invalid UTF-8 is an I/O error when reading a file; here it is replaced, as a text
        // editor would show it.
        check_text(&String::from_utf8_lossy(&bytes));
    }
}

#[test]
fn non_utf8_map_files_are_an_error_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.json");
    std::fs::write(&path, [0xff, 0xfe, b'{', b'}']).unwrap();
    assert_eq!(map::validate(&path).len(), 1);
    assert!(map::load(&path).is_err());
}
