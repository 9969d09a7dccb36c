//! Bad map input: each case gives an error naming the file, the JSON path and the value, and
//! `validate` reports every problem at once. Every map here is written to a temporary folder.

use crowdfield::map::{self, MapFile};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use tempfile::TempDir;

/// A small valid map: 10 m x 6 m at 0.5 m, a wall with a gap, one group walking east.
fn good() -> Value {
    json!({
        "version": 1,
        "name": "test",
        "grid": {"cols": 20, "rows": 12, "cell_size": 0.5},
        "layers": {"obstacles": {"shapes": [
            {"rect": {"min": [5, 0], "max": [5.5, 6]}},
            {"rect": {"min": [5, 2], "max": [5.5, 3]}, "value": 0}
        ]}},
        "groups": [{
            "name": "walkers",
            "goals": [{"rect": {"min": [9, 0], "max": [10, 6]}}],
            "spawns": [{"rect": {"min": [0, 0], "max": [2, 6]}, "count": 10}]
        }]
    })
}

/// Writes `text` as `map.json` in a fresh temporary folder.
fn write(text: &str) -> (TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("map.json");
    std::fs::write(&path, text).unwrap();
    (dir, path)
}

/// Every problem `validate` reports for `text`, as strings; `load` must fail too.
fn problems_of_text(text: &str) -> Vec<String> {
    let (_dir, path) = write(text);
    problems_at(&path)
}

fn problems_at(path: &Path) -> Vec<String> {
    let problems: Vec<String> = map::validate(path).iter().map(|e| e.to_string()).collect();
    let loaded = map::load(path);
    assert_eq!(
        problems.is_empty(),
        loaded.is_ok(),
        "validate and load disagree: {problems:#?}"
    );
    problems
}

fn problems(v: &Value) -> Vec<String> {
    problems_of_text(&serde_json::to_string_pretty(v).unwrap())
}

/// Asserts that one problem contains every one of `parts` (and names the file).
#[track_caller]
fn assert_reported(problems: &[String], parts: &[&str]) {
    assert!(
        problems
            .iter()
            .any(|p| p.contains("map.json: ") && parts.iter().all(|part| p.contains(part))),
        "no problem contains {parts:?}: {problems:#?}"
    );
}

#[test]
fn the_base_map_is_valid() {
    assert_eq!(problems(&good()), Vec::<String>::new());
}

#[test]
fn malformed_json_gives_line_and_column() {
    let text = "{\n  \"version\": 1,\n  \"name\": \"test\"\n  \"grid\": {}\n}";
    let p = problems_of_text(text);
    assert_eq!(p.len(), 1, "{p:#?}");
    assert_reported(&p, &["line 4, column 3", "expected"]);
}

#[test]
fn truncated_json_says_the_file_ends_early() {
    let text = serde_json::to_string_pretty(&good()).unwrap();
    let p = problems_of_text(&text[..text.len() / 2]);
    assert_reported(&p, &["line ", "ends early"]);
}

#[test]
fn unknown_fields_are_named_with_their_path() {
    let mut v = good();
    v["groups"][0]["speeed"] = json!({"min": 1});
    v["grid"]["cell"] = json!(1);
    let p = problems(&v);
    assert_reported(&p, &["groups[0].speeed", "unknown field `speeed`", "`speed`"]);
    assert_reported(&p, &["grid.cell", "unknown field `cell`", "`cell_size`"]);
}

#[test]
fn a_key_given_twice_is_reported_with_its_path() {
    // serde_json would keep the last value silently; the loader names each repeat.
    let text = serde_json::to_string_pretty(&good()).unwrap();
    let text = text
        .replacen(
            "\"name\": \"walkers\",",
            "\"name\": \"walkers\", \"name\": \"others\",",
            1,
        )
        .replacen("\"cols\": 20,", "\"cols\": 20, \"cols\": 40,", 1);
    let p = problems_of_text(&text);
    assert_reported(&p, &["groups[0].name", "given twice"]);
    assert_reported(&p, &["grid.cols", "given twice"]);
    assert_eq!(p.len(), 2, "{p:#?}");
    // The same key in two different objects is fine.
    assert!(problems(&good()).is_empty());
}

#[test]
fn wrong_types_name_the_path_the_value_and_the_expected_type() {
    let mut v = good();
    v["grid"]["cols"] = json!("twenty");
    v["groups"][0]["goals"][0]["rect"]["max"] = json!([10, "6"]);
    let p = problems(&v);
    assert_reported(&p, &["grid.cols", "\"twenty\"", "expected usize"]);
    assert_reported(&p, &["groups[0].goals[0].rect.max[1]", "\"6\"", "expected f64"]);
}

#[test]
fn missing_required_fields_are_named() {
    let mut v = good();
    v["groups"][0]["spawns"][0]
        .as_object_mut()
        .unwrap()
        .remove("count");
    v.as_object_mut().unwrap().remove("grid");
    let p = problems(&v);
    assert_reported(&p, &["groups[0].spawns[0]", "missing field `count`"]);
    assert_reported(&p, &["(root)", "missing field `grid`"]);
}

#[test]
fn non_positive_cell_size_is_refused() {
    for bad in [0.0, -0.5] {
        let mut v = good();
        v["grid"]["cell_size"] = json!(bad);
        let p = problems(&v);
        assert_reported(
            &p,
            &["grid.cell_size", &format!("{bad:?}"), "between 0.01 and 100"],
        );
    }
}

#[test]
fn zero_rows_or_columns_are_refused() {
    let mut v = good();
    v["grid"]["cols"] = json!(0);
    v["grid"]["rows"] = json!(0);
    let p = problems(&v);
    assert_reported(&p, &["grid.cols", "0: expected at least 1"]);
    assert_reported(&p, &["grid.rows", "0: expected at least 1"]);
}

#[test]
fn negative_and_fractional_counts_are_refused() {
    let mut v = good();
    v["grid"]["rows"] = json!(-3);
    v["groups"][0]["spawns"][0]["count"] = json!(2.5);
    let p = problems(&v);
    assert_reported(&p, &["grid.rows", "-3", "expected usize"]);
    assert_reported(&p, &["groups[0].spawns[0].count", "2.5", "expected usize"]);
}

#[test]
fn huge_numbers_are_range_checked() {
    let mut v = good();
    v["groups"][0]["goals"][0]["rect"]["max"] = json!([1e300, 6]);
    v["grid"]["cell_size"] = json!(1e200);
    v["params"] = json!({"f_max": 1e30});
    v["groups"][0]["speed"] = json!({"min": 1.0, "max": 400.0});
    let p = problems(&v);
    assert_reported(
        &p,
        &[
            "groups[0].goals[0].rect.max",
            "1e300",
            "expected finite coordinates",
        ],
    );
    assert_reported(&p, &["grid.cell_size", "1e200"]);
    assert_reported(&p, &["params.f_max", "1e30", "at most 1e6"]);
    assert_reported(&p, &["groups[0].speed.max", "400.0", "at most 15.0 m/s"]);
}

#[test]
fn numbers_beyond_f64_are_a_syntax_error() {
    let text = serde_json::to_string_pretty(&good())
        .unwrap()
        .replacen("0.5", "1e400", 1);
    let p = problems_of_text(&text);
    assert_reported(&p, &["line ", "column", "number out of range"]);
}

#[test]
fn nan_and_infinity_from_the_editor_are_refused() {
    // JSON has no NaN, but a map edited in memory can hold one.
    let mut m: MapFile = serde_json::from_value(good()).unwrap();
    m.grid.cell_size = f64::NAN;
    m.groups[0].radius = f64::INFINITY;
    m.layers.obstacles.as_mut().unwrap().shapes[0].value = f64::NAN;
    let e = map::compile(&m, Path::new("."), "edited.json")
        .unwrap_err()
        .to_string();
    assert!(e.contains("edited.json: grid.cell_size: NaN"), "{e}");
    assert!(e.contains("edited.json: groups[0].radius: inf"), "{e}");
    assert!(
        e.contains("edited.json: layers.obstacles.shapes[0].value: NaN"),
        "{e}"
    );
}

#[test]
fn raster_of_the_wrong_size_is_refused() {
    let mut v = good();
    v["layers"]["height"] = json!({"raster": {"file": "h.png", "range": [0, 2]}});
    v["layers"]["discomfort"] = json!({"raster": {"file": "g.npy"}});
    let (dir, path) = write(&serde_json::to_string(&v).unwrap());
    image::GrayImage::new(20, 11)
        .save(dir.path().join("h.png"))
        .unwrap();
    crowdfield::io::write_npy(
        &dir.path().join("g.npy"),
        ndarray::Array2::<f32>::zeros((20, 12)).view(),
    )
    .unwrap();
    let p = problems_at(&path);
    assert_reported(
        &p,
        &["layers.height.raster.file", "20x11 pixels", "expected 20x12"],
    );
    assert_reported(
        &p,
        &[
            "layers.discomfort.raster.file",
            "shape (20, 12)",
            "expected (rows, cols) = (12, 20)",
        ],
    );
}

#[test]
fn a_missing_raster_file_is_named() {
    let mut v = good();
    v["layers"]["obstacles"]["raster"] = json!({"file": "walls/missing.png"});
    let p = problems(&v);
    assert_reported(
        &p,
        &[
            "layers.obstacles.raster.file",
            "walls/missing.png",
            "cannot read raster",
        ],
    );
}

#[test]
fn a_raster_that_is_not_an_image_is_refused() {
    let mut v = good();
    v["layers"]["obstacles"]["raster"] = json!({"file": "walls.png"});
    v["layers"]["height"] = json!({"raster": {"file": "h.npy"}});
    v["layers"]["discomfort"] = json!({"raster": {"file": "g.txt"}});
    let (dir, path) = write(&serde_json::to_string(&v).unwrap());
    std::fs::write(dir.path().join("walls.png"), b"this is not a PNG").unwrap();
    std::fs::write(dir.path().join("h.npy"), b"nor an npy").unwrap();
    let p = problems_at(&path);
    assert_reported(&p, &["layers.obstacles.raster.file", "walls.png"]);
    assert_reported(&p, &["layers.height.raster.file", "h.npy"]);
    assert_reported(
        &p,
        &[
            "layers.discomfort.raster.file",
            "\"g.txt\"",
            "expected a .png or .npy",
        ],
    );
}

#[test]
fn raster_values_are_checked() {
    let mut v = good();
    v["layers"]["height"] = json!({"raster": {"file": "h.npy"}});
    v["layers"]["discomfort"] = json!({"raster": {"file": "g.npy"}});
    let (dir, path) = write(&serde_json::to_string(&v).unwrap());
    let mut h = ndarray::Array2::<f64>::zeros((12, 20));
    h[[3, 4]] = f64::NAN;
    crowdfield::io::write_npy(&dir.path().join("h.npy"), h.view()).unwrap();
    let mut g = ndarray::Array2::<f64>::zeros((12, 20));
    g[[1, 2]] = -1.0;
    crowdfield::io::write_npy(&dir.path().join("g.npy"), g.view()).unwrap();
    let p = problems_at(&path);
    assert_reported(&p, &["layers.height.raster.file", "NaN at row 3, column 4"]);
    assert_reported(
        &p,
        &[
            "layers.discomfort.raster.file",
            "-1.0 at row 1, column 2",
            "discomfort in [0",
        ],
    );
}

#[test]
fn a_grid_too_large_for_memory_is_refused_before_allocating() {
    // 10^10 cells: over the cell cap. Allocating even one bool per cell would take 10 GB.
    let mut v = good();
    v["grid"] = json!({"cols": 100000, "rows": 100000, "cell_size": 0.5});
    let p = problems(&v);
    assert_reported(&p, &["grid", "100000 x 100000 cells is too large", "2^28"]);
    // Under the cell cap, but 20 groups' fields would need about 170 GiB.
    let mut v = good();
    v["grid"] = json!({"cols": 16000, "rows": 8000, "cell_size": 0.5});
    let group = v["groups"][0].clone();
    v["groups"] = Value::Array(
        (0..20)
            .map(|i| {
                let mut g = group.clone();
                g["name"] = json!(format!("g{i}"));
                g
            })
            .collect(),
    );
    let p = problems(&v);
    assert_reported(
        &p,
        &[
            "grid",
            "16000 x 8000 cells with 20 group(s) needs about",
            "GiB",
            "expected at most 8.0 GiB",
        ],
    );
    // A thin grid (4e6 px tall images) and a grid 20 km across (f32 positions).
    let mut v = good();
    v["grid"] = json!({"cols": 1, "rows": 4_000_000, "cell_size": 0.01});
    assert_reported(
        &problems(&v),
        &["grid", "1 x 4000000 cells", "at most 65536 cells a side"],
    );
    let mut v = good();
    v["grid"] = json!({"cols": 200, "rows": 100, "cell_size": 100});
    assert_reported(
        &problems(&v),
        &["grid", "is 20000.0 m across", "at most 10000.0 m"],
    );
    // Overflowing usize is refused too.
    let mut v = good();
    v["grid"] = json!({"cols": usize::MAX, "rows": 3, "cell_size": 0.5});
    assert_reported(&problems(&v), &["grid", "too large"]);
}

#[test]
fn a_goal_inside_an_obstacle_is_refused() {
    let mut v = good();
    v["groups"][0]["goals"][0] = json!({"rect": {"min": [5, 4], "max": [5.5, 5]}, "name": "in the wall"});
    let p = problems(&v);
    assert_reported(&p, &["groups[0].goals[0]", "all 2 of its cells are obstacles"]);
}

#[test]
fn a_spawn_count_above_the_free_cells_is_refused() {
    let mut v = good();
    // The spawn rect covers 4 x 12 = 48 cells.
    v["groups"][0]["spawns"][0]["count"] = json!(49);
    let p = problems(&v);
    assert_reported(
        &p,
        &[
            "groups[0].spawns[0].count",
            "49: the area",
            "takes at most 48 agents",
            "lower the count to 48",
        ],
    );
}

#[test]
fn an_unreachable_goal_is_refused() {
    let mut v = good();
    // Close the gap in the wall: the spawn area is cut off from the goal.
    v["layers"]["obstacles"]["shapes"].as_array_mut().unwrap().pop();
    let p = problems(&v);
    assert_reported(
        &p,
        &[
            "groups[0].spawns[0]",
            "no goal of group \"walkers\" can be reached",
        ],
    );
    // A diagonal gap does not connect (4-connected walking).
    let mut v = good();
    v["grid"] = json!({"cols": 4, "rows": 4, "cell_size": 1});
    v["layers"] = json!({"obstacles": {"shapes": [
        {"rect": {"min": [1, 0], "max": [2, 1]}},
        {"rect": {"min": [0, 1], "max": [1, 2]}}
    ]}});
    v["groups"][0]["spawns"][0] = json!({"rect": {"min": [0, 0], "max": [1, 1]}, "count": 1});
    v["groups"][0]["goals"][0] = json!({"rect": {"min": [3, 3], "max": [4, 4]}});
    assert_reported(&problems(&v), &["groups[0].spawns[0]", "can be reached"]);
}

#[test]
fn shapes_are_checked() {
    let mut v = good();
    let shapes = v["layers"]["obstacles"]["shapes"].as_array_mut().unwrap();
    shapes.push(json!({"rect": {"min": [3, 3], "max": [2, 4]}}));
    shapes.push(json!({"circle": {"center": [3, 3], "radius": -1}}));
    shapes.push(json!({"polygon": {"points": [[0, 0], [1, 1]]}}));
    shapes.push(json!({"value": 1}));
    shapes.push(json!({"rect": {"min": [30, 30], "max": [40, 40]}}));
    shapes.push(json!({"circle": {"center": [3, 3], "radius": 1, "profile": "dome"}}));
    let p = problems(&v);
    assert_reported(
        &p,
        &[
            "layers.obstacles.shapes[2].rect.max",
            "[2.0, 4.0]",
            "larger than min [3.0, 3.0]",
        ],
    );
    assert_reported(&p, &["layers.obstacles.shapes[3].circle.radius", "-1.0"]);
    assert_reported(
        &p,
        &[
            "layers.obstacles.shapes[4].polygon.points",
            "2 point(s)",
            "at least 3",
        ],
    );
    assert_reported(
        &p,
        &["layers.obstacles.shapes[5]", "has 0 of the keys", "exactly one"],
    );
    assert_reported(
        &p,
        &[
            "layers.obstacles.shapes[6]",
            "covers no cell centre",
            "[0, 10.0] x [0, 6.0]",
        ],
    );
    assert_reported(
        &p,
        &[
            "layers.obstacles.shapes[7].circle.profile",
            "only allowed on height and discomfort",
        ],
    );
}

#[test]
fn group_fields_are_checked() {
    let mut v = good();
    v["groups"][0]["color"] = json!("blue");
    v["groups"][0]["radius"] = json!(0);
    v["groups"][0]["speed"] = json!({"min": 1.5, "max": 1.0});
    v["groups"][0]["goals"][0]["width"] = json!(-2);
    let mut second = v["groups"][0].clone();
    second["goals"] = json!([]);
    v["groups"].as_array_mut().unwrap().push(second);
    let p = problems(&v);
    assert_reported(&p, &["groups[0].color", "\"blue\"", "#rrggbb"]);
    assert_reported(&p, &["groups[0].radius", "0.0 m"]);
    assert_reported(&p, &["groups[0].speed.max", "1.0", "at least speed.min (1.5)"]);
    assert_reported(&p, &["groups[0].goals[0].width", "-2.0"]);
    assert_reported(&p, &["groups[1].goals", "at least one goal"]);
    assert_reported(&p, &["groups[1].name", "\"walkers\"", "unique"]);
    // Bodies of a micrometre made the spawn lattices billions of points (validate ran out of
    // memory or did not end).
    let mut v = good();
    v["groups"][0]["radius"] = json!(1e-6);
    assert_reported(
        &problems(&v),
        &["groups[0].radius", "1e-6 m", "from 0.01 to 2.0 m"],
    );
}

/// A spawn count over the free cells of a large area: the capacity in the message is counted
/// or, past ten million lattice points, estimated, without building the lattice (1 cm bodies
/// over a few hectares took gigabytes).
#[test]
fn the_capacity_of_a_large_area_is_quick() {
    let mut v = good();
    v["grid"] = json!({"cols": 400, "rows": 400, "cell_size": 0.5});
    v["groups"][0]["radius"] = json!(0.01);
    v["groups"][0]["spawns"][0] = json!({"rect": {"min": [0, 0], "max": [150, 200]}, "count": 200_000});
    let t = std::time::Instant::now();
    let p = problems(&v);
    assert!(t.elapsed().as_secs_f64() < 20.0, "{:?}", t.elapsed());
    assert_reported(
        &p,
        &[
            "groups[0].spawns[0].count",
            "200000: the area",
            "takes at most 119990 agents",
        ],
    );
}

#[test]
fn pre_movement_times_are_checked() {
    let mut v = good();
    let spawn = v["groups"][0]["spawns"][0].clone();
    let with = |premovement: Value| {
        let mut s = spawn.clone();
        s["premovement"] = premovement;
        s
    };
    v["groups"][0]["spawns"] = json!([
        with(json!({"min": 30, "max": 10})),
        with(json!({"min": -1, "max": 10})),
        with(json!({"min": 0, "max": 1e9})),
    ]);
    let p = problems(&v);
    assert_reported(
        &p,
        &[
            "groups[0].spawns[0].premovement.max",
            "10.0 s",
            "at least premovement.min (30.0 s)",
        ],
    );
    assert_reported(
        &p,
        &[
            "groups[0].spawns[1].premovement.min",
            "-1.0",
            "in [0, 86400] seconds",
        ],
    );
    assert_reported(
        &p,
        &["groups[0].spawns[2].premovement.max", "in [0, 86400] seconds"],
    );
    // One bound, not also the general "at most 1e6 in magnitude" of other numbers.
    for e in p.iter().filter(|e| e.contains("premovement.m")) {
        assert!(!e.contains("1e6") && !e.contains("at most"), "{e}");
    }
    // Shape errors (the file's structure) are reported alone, with their path.
    v["groups"][0]["spawns"] = json!([with(json!({"min": 0}))]);
    assert_reported(&problems(&v), &["groups[0].spawns[0].premovement", "max"]);
    v["groups"][0]["spawns"] = json!([with(json!({"min": 0, "max": 5, "mean": 2}))]);
    assert_reported(&problems(&v), &["groups[0].spawns[0].premovement", "mean"]);
    // A valid range is accepted and reaches the scene.
    let mut v = good();
    v["groups"][0]["spawns"][0]["premovement"] = json!({"min": 5, "max": 60});
    let (_dir, path) = write(&v.to_string());
    let scene = crowdfield::map::load(&path).unwrap();
    assert_eq!(scene.groups[0].spawns[0].premovement, [5.0, 60.0]);
}

#[test]
fn params_are_checked() {
    let mut v = good();
    v["params"] = json!({"rho_min": 5, "rho_max": 2, "f_min": 0, "lambda": -1, "speed_law": "fast"});
    let p = problems(&v);
    // An unknown enum value is a structural error and stops the range checks.
    assert_reported(&p, &["params.speed_law", "unknown variant `fast`"]);
    v["params"].as_object_mut().unwrap().remove("speed_law");
    let p = problems(&v);
    assert_reported(&p, &["params.rho_max", "2.0", "more than rho_min (5.0)"]);
    assert_reported(&p, &["params.f_min", "0.0", ">= 0.001 m/s"]);
    assert_reported(&p, &["params.lambda", "-1.0"]);
    // A positive floor so small that its unit cost overflowed: crowded faces became walls.
    let mut v = good();
    v["params"] = json!({"f_min": 5e-324});
    assert_reported(&problems(&v), &["params.f_min", "5e-324", ">= 0.001 m/s"]);
}

#[test]
fn a_bad_density_window_is_refused() {
    let mut v = good();
    v["params"] = json!({"density_window": -1});
    assert_reported(&problems(&v), &["params.density_window", "-1.0", ">= 0"]);
    v["params"] = json!({"density_window": 1e4});
    assert_reported(
        &problems(&v),
        &["params.density_window", "10000.0 m²", "at most 100 m²"],
    );
    v["params"] = json!({"density_window": "1 m2"});
    assert_reported(
        &problems(&v),
        &["params.density_window", "\"1 m2\"", "expected f64"],
    );
    v["params"] = json!({"density_at_walker": "yes"});
    assert_reported(
        &problems(&v),
        &["params.density_at_walker", "\"yes\"", "expected a boolean"],
    );
    // JSON has no NaN: a map built in code can still hold one.
    let text = serde_json::to_string(&good()).unwrap();
    let mut file = MapFile::from_json(&text, "nan.json").unwrap();
    file.params.get_or_insert_with(Default::default).density_window = f64::NAN;
    let e = map::compile(&file, Path::new("."), "nan.json")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("nan.json") && e.contains("params.density_window") && e.contains("NaN"),
        "{e}"
    );
    // A window larger than the grid (10 m x 6 m here) is fine: it is clamped to the grid.
    for ok in [
        json!({"density_window": 0}),
        json!({"density_window": 100, "density_at_walker": true}),
    ] {
        v["params"] = ok;
        assert!(problems(&v).is_empty(), "{}", v["params"]);
    }
}

#[test]
fn an_absurd_top_walking_speed_is_refused() {
    // f_max sets the automatic time step (0.9 cell per step at f_max): 1e6 m/s made it so small
    // that a run never ended.
    let mut v = good();
    v["params"] = json!({"f_max": 1e6});
    assert_reported(&problems(&v), &["params.f_max", "1e6", "at most 15"]);
    v["params"] = json!({"f_max": 15});
    assert!(problems(&v).is_empty());
}

#[test]
fn an_unsupported_version_is_refused() {
    let mut v = good();
    v["version"] = json!(2);
    assert_reported(&problems(&v), &["version", "2 is not supported: expected 1"]);
}

#[test]
fn a_missing_map_file_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nowhere.json");
    let p: Vec<String> = map::validate(&path).iter().map(|e| e.to_string()).collect();
    assert_eq!(p.len(), 1);
    assert!(p[0].contains("nowhere.json"), "{p:?}");
    let e = map::load(&path).unwrap_err().to_string();
    assert!(e.contains("nowhere.json"), "{e}");
}

#[test]
fn validate_reports_every_problem_not_only_the_first() {
    // Three independent range problems in different places.
    let mut v = good();
    v["grid"]["cell_size"] = json!(0.5);
    v["groups"][0]["radius"] = json!(-1);
    v["groups"][0]["spawns"][0]["count"] = json!(1000);
    v["params"] = json!({"beta": -1});
    let p = problems(&v);
    assert_eq!(p.len(), 3, "{p:#?}");
    // And several structural problems at once.
    let mut v = good();
    v["grid"]["rows"] = json!("x");
    v["groups"][0]["goals"][0]["rect"]["min"] = json!([0]);
    v["layers"]["height"] = json!({"shapes": [{"rect": {"min": [0, 0], "max": [1, 1]}, "valu": 3}]});
    v["extra"] = json!(true);
    let p = problems(&v);
    assert_eq!(p.len(), 4, "{p:#?}");
    assert_reported(&p, &["groups[0].goals[0].rect.min", "invalid length 1"]);
    assert_reported(&p, &["layers.height.shapes[0].valu", "unknown field `valu`"]);
    // load() returns all of them too, one per line.
    let (_dir, path) = write(&serde_json::to_string(&v).unwrap());
    let e = map::load(&path).unwrap_err().to_string();
    assert_eq!(e.lines().count(), 4, "{e}");
}

#[test]
fn the_validate_command_prints_every_problem_and_fails() {
    let (dir, bad) = write(
        &serde_json::to_string(&{
            let mut v = good();
            v["grid"]["cols"] = json!(0);
            v["groups"][0]["radius"] = json!(0);
            v
        })
        .unwrap(),
    );
    let good_path = dir.path().join("good.json");
    std::fs::write(&good_path, serde_json::to_string(&good()).unwrap()).unwrap();
    let run = |args: &[&Path]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_crowdfield"))
            .arg("validate")
            .args(args)
            .output()
            .unwrap()
    };
    let out = run(&[&good_path]);
    assert!(out.status.success());
    // A good map is ok, and the memory a run of it needs follows.
    let scene = crowdfield::map::load(&good_path).unwrap();
    let size = crowdfield::memory::RunSize::of(&scene);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        format!(
            "{shown}: ok\n{shown}: memory: a run of {} needs about {}",
            size.describe(),
            crowdfield::memory::show_bytes(size.simulation_bytes()),
            shown = good_path.display()
        )
    );
    let out = run(&[&good_path, &bad]);
    assert!(!out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(&format!("{}: ok", good_path.display())),
        "{stdout}"
    );
    assert!(stdout.contains("map.json: grid.cols: 0"), "{stdout}");
    assert!(stdout.contains("map.json: groups[0].radius: 0.0 m"), "{stdout}");
}

#[test]
fn spawn_areas_too_small_for_their_bodies_are_reported_with_the_file() {
    // 10 agents on 24 free cells pass the cell count, but at a 1 m radius the 2 m x 6 m area
    // holds only a few: `validate` said ok and `simulate` named the map's "name", not its file.
    let mut v = good();
    v["groups"][0]["radius"] = json!(1.0);
    let (dir, path) = write(&serde_json::to_string(&v).unwrap());
    let crowdfield = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_crowdfield"))
            .args(args)
            .arg(&path)
            .output()
            .unwrap()
    };
    let out = crowdfield(&["validate"]);
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let want = format!("{}: groups[0].spawns[0]", path.display());
    assert!(
        stdout.contains(&want) && stdout.contains("holds at most"),
        "{stdout}"
    );
    let out_dir = dir.path().join("out");
    let out = crowdfield(&["simulate", "--quiet", "--out", out_dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("{want}.count: 10: the area")) && stderr.contains("lower the count to"),
        "{stderr}"
    );
}

/// A map saved in Latin-1 (here an "é" in a group name on line 3) is named with the line and
/// column of the first byte that is not UTF-8, by `validate` and `load` alike.
#[test]
fn a_map_that_is_not_utf8_names_the_line_and_column() {
    let text = serde_json::to_string_pretty(&good()).unwrap();
    let mut bytes = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if i == 2 {
            bytes.extend_from_slice(b"  \"name\": \"caf");
            bytes.push(0xe9);
            bytes.extend_from_slice(b"\",");
        }
        bytes.extend_from_slice(line.as_bytes());
        bytes.push(b'\n');
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("map.json");
    std::fs::write(&path, bytes).unwrap();
    let problems = problems_at(&path);
    assert_reported(&problems, &["line 3, column 15", "0xe9", "UTF-8"]);
    let e = map::load(&path).unwrap_err().to_string();
    assert!(e.contains("line 3, column 15"), "{e}");
}

/// An image of another size than the grid says how to make it fit: the pixel size, or the grid
/// (cols, rows, cell size) that gives one cell per pixel, and whether the shape differs.
#[test]
fn a_raster_of_the_wrong_size_says_how_to_fit_it() {
    let mut v = good();
    v["layers"]["obstacles"] = json!({"raster": {"file": "plan.png", "range": [1, 0]}});
    let (dir, path) = write(&serde_json::to_string(&v).unwrap());
    // 10 x 6 m at 0.5 m: an image of 40 x 24 pixels is the same floor at 0.25 m.
    image::GrayImage::new(40, 24)
        .save(dir.path().join("plan.png"))
        .unwrap();
    let p = problems_at(&path);
    assert_reported(
        &p,
        &[
            "layers.obstacles.raster.file",
            "plan.png",
            "40x24 pixels, expected 20x12",
            "resample the image to 20x12 pixels",
            "\"cols\": 40, \"rows\": 24, \"cell_size\": 0.25",
        ],
    );
    assert!(!p.iter().any(|m| m.contains("shape differs")), "{p:#?}");
    image::GrayImage::new(40, 20)
        .save(dir.path().join("plan.png"))
        .unwrap();
    assert_reported(
        &problems_at(&path),
        &["40x20 pixels", "10.0 x 5.0 m", "shape differs"],
    );
}

/// A floor plan drawn on a transparent background: the transparent pixels are open floor (read
/// as black with `"range": [1, 0]`, they would make every cell a wall), the opaque black ones
/// walls.
#[test]
fn transparent_pixels_of_a_raster_are_open_floor() {
    let mut v = good();
    v["layers"]["obstacles"] = json!({"raster": {"file": "plan.png", "range": [1, 0]}});
    let (dir, path) = write(&serde_json::to_string(&v).unwrap());
    // A wall down column 10 with a door in grid rows 4 and 5; the rest fully transparent.
    let mut img = image::RgbaImage::from_pixel(20, 12, image::Rgba([0, 0, 0, 0]));
    for y in 0..12u32 {
        let row = 11 - y as usize;
        if row != 4 && row != 5 {
            img.put_pixel(10, y, image::Rgba([0, 0, 0, 255]));
        }
    }
    img.save(dir.path().join("plan.png")).unwrap();
    assert_eq!(problems_at(&path), Vec::<String>::new());
    let scene = map::load(&path).unwrap();
    for ((row, col), &wall) in scene.obstacle.indexed_iter() {
        let want = col == 10 && row != 4 && row != 5;
        assert_eq!(wall, want, "row {row}, col {col}");
    }
}

/// A goal that a raster's walls cover names the raster, so the planner looks at the picture.
#[test]
fn a_goal_in_a_rasters_walls_names_the_raster() {
    let mut v = good();
    v["layers"]["obstacles"] = json!({"raster": {"file": "plan.png", "range": [1, 0]}});
    let (dir, path) = write(&serde_json::to_string(&v).unwrap());
    // Opaque black everywhere: every cell a wall.
    image::RgbaImage::from_pixel(20, 12, image::Rgba([0, 0, 0, 255]))
        .save(dir.path().join("plan.png"))
        .unwrap();
    assert_reported(
        &problems_at(&path),
        &["groups[0].goals[0]", "cells are obstacles", "raster \"plan.png\""],
    );
}

#[test]
fn names_with_control_or_bidirectional_characters_are_refused_escaped() {
    let mut v = good();
    v["name"] = json!("hall\u{1b}[2J");
    v["groups"][0]["name"] = json!("staff\u{0}");
    v["groups"][0]["goals"][0]["name"] = json!("exit \u{202E}1 tixe");
    v["groups"][0]["spawns"][0]["name"] = json!("room\u{2066}");
    let p = problems(&v);
    assert_reported(
        &p,
        &["name: ", r#""hall\u{1b}[2J""#, "U+001B, a control character"],
    );
    assert_reported(&p, &["groups[0].name", r#""staff\0""#, "U+0000"]);
    assert_reported(
        &p,
        &[
            "groups[0].goals[0].name",
            r#""exit \u{202e}1 tixe""#,
            "U+202E, a bidirectional",
        ],
    );
    assert_reported(&p, &["groups[0].spawns[0].name", r#""room\u{2066}""#, "U+2066"]);
    // The raw characters never reach the message.
    assert!(
        p.iter()
            .all(|m| !m.contains(['\u{1b}', '\u{0}', '\u{202E}', '\u{2066}'])),
        "{p:#?}"
    );
}
