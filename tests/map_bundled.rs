//! Every bundled map in `maps/` loads, validates clean, matches `maps/map.schema.json`, survives
//! a load → save → load round trip unchanged, and shows what it is meant to show.

use crowdfield::map::{self, MapFile};
use crowdfield::scene::Scene;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn maps_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("maps")
}

/// Every `maps/*.json` map (the schema excluded).
fn bundled_maps() -> Vec<PathBuf> {
    let mut maps: Vec<_> = std::fs::read_dir(maps_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json") && !p.ends_with("map.schema.json"))
        .collect();
    maps.sort();
    maps
}

fn load(name: &str) -> Scene {
    map::load(maps_dir().join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn cells(mask: &ndarray::Array2<bool>) -> usize {
    mask.iter().filter(|&&b| b).count()
}

#[test]
fn the_required_maps_are_there() {
    let names: Vec<String> = bundled_maps()
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    for want in [
        "bottleneck.json",
        "corridor.json",
        "fish_tank.json",
        "crossing.json",
        "four_exits.json",
        "hall.json",
        "hill.json",
        "hill_gentle.json",
        "office.json",
    ] {
        assert!(names.iter().any(|n| n == want), "maps/{want} missing: {names:?}");
    }
}

#[test]
fn every_bundled_map_loads_and_validates_clean() {
    for path in bundled_maps() {
        let problems = map::validate(&path);
        assert!(problems.is_empty(), "{}: {problems:#?}", path.display());
        let scene = map::load(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert!(
            scene.grid.cols <= 200 && scene.grid.rows <= 200,
            "{}",
            path.display()
        );
        assert!(!scene.groups.is_empty(), "{}", path.display());
        for (gi, g) in scene.groups.iter().enumerate() {
            let source = scene.schedule.sources.iter().any(|s| s.group == gi);
            assert!(
                g.agent_count() > 0 || source,
                "{}: group {} has no walkers",
                path.display(),
                g.name
            );
        }
    }
}

#[test]
fn every_bundled_map_matches_the_json_schema() {
    let schema: Value =
        serde_json::from_str(&std::fs::read_to_string(maps_dir().join("map.schema.json")).unwrap())
            .expect("the schema is JSON");
    let validator =
        jsonschema::draft202012::new(&schema).expect("the schema is a valid draft 2020-12 schema");
    for path in bundled_maps() {
        let instance: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let errors: Vec<String> = validator
            .iter_errors(&instance)
            .map(|e| format!("{}: {e}", e.instance_path()))
            .collect();
        assert!(errors.is_empty(), "{}: {errors:#?}", path.display());
    }
}

#[test]
fn the_schema_rejects_what_the_loader_rejects_structurally() {
    let schema: Value =
        serde_json::from_str(&std::fs::read_to_string(maps_dir().join("map.schema.json")).unwrap()).unwrap();
    let validator = jsonschema::draft202012::new(&schema).unwrap();
    let good: Value =
        serde_json::from_str(&std::fs::read_to_string(maps_dir().join("corridor.json")).unwrap()).unwrap();
    assert!(validator.is_valid(&good));
    let breakages: [(&str, fn(&mut Value)); 7] = [
        ("unknown top-level field", |v| v["colour"] = "red".into()),
        ("wrong version", |v| v["version"] = 2.into()),
        ("zero columns", |v| v["grid"]["cols"] = 0.into()),
        ("unknown group field", |v| v["groups"][0]["speeed"] = 1.into()),
        ("two shapes in one goal", |v| {
            v["groups"][0]["goals"][0]["circle"] = serde_json::json!({"center": [1, 1], "radius": 1})
        }),
        ("string count", |v| {
            v["groups"][0]["spawns"][0]["count"] = "one".into()
        }),
        // Only a flocking group (with boids) may have no goals.
        ("no goals and no boids", |v| {
            v["groups"][0]["goals"] = serde_json::json!([])
        }),
    ];
    // And with boids the schema and the loader both accept it.
    let mut flock = good.clone();
    flock["groups"][0]["goals"] = serde_json::json!([]);
    flock["groups"][0]["boids"] = serde_json::json!({});
    assert!(
        validator.is_valid(&flock),
        "the schema refuses a flocking group without goals"
    );
    let text = serde_json::to_string(&flock).unwrap();
    MapFile::from_json(&text, "flock.json")
        .and_then(|m| map::compile(&m, &maps_dir(), "flock.json"))
        .expect("the loader refuses a flocking group without goals");
    for (what, breakage) in breakages {
        let mut bad = good.clone();
        breakage(&mut bad);
        assert!(!validator.is_valid(&bad), "the schema accepts a map with {what}");
        let text = serde_json::to_string(&bad).unwrap();
        assert!(
            MapFile::from_json(&text, "bad.json")
                .and_then(|m| map::compile(&m, &maps_dir(), "bad.json"))
                .is_err(),
            "the loader accepts a map with {what}"
        );
    }
}

#[test]
fn the_schema_and_the_loader_agree_on_every_parameter() {
    let schema: Value =
        serde_json::from_str(&std::fs::read_to_string(maps_dir().join("map.schema.json")).unwrap()).unwrap();
    let validator = jsonschema::draft202012::new(&schema).unwrap();
    let good: Value =
        serde_json::from_str(&std::fs::read_to_string(maps_dir().join("corridor.json")).unwrap()).unwrap();
    let loads = |v: &Value| {
        MapFile::from_json(&serde_json::to_string(v).unwrap(), "params.json")
            .and_then(|m| map::compile(&m, &maps_dir(), "params.json"))
            .is_ok()
    };
    // Every parameter as the editor saves it (all of them written out), and the calibrated
    // door-flow settings.
    let mut all = good.clone();
    all["params"] = serde_json::to_value(crowdfield::params::Params::default()).unwrap();
    let mut calibrated = good.clone();
    calibrated["params"] =
        serde_json::json!({"speed_law": "weidmann", "density_window": 1.0, "density_at_walker": true});
    for v in [&all, &calibrated] {
        assert!(validator.is_valid(v), "the schema refuses {}", v["params"]);
        assert!(loads(v), "the loader refuses {}", v["params"]);
    }
    // The model by name, at the map's root.
    for (model, ok) in [
        ("pedestrian", true),
        ("continuum_crowds", true),
        ("social_force", false),
    ] {
        let mut v = good.clone();
        v["model"] = serde_json::json!(model);
        assert_eq!(validator.is_valid(&v), ok, "the schema on model {model}");
        assert_eq!(loads(&v), ok, "the loader on model {model}");
    }
    for bad in [
        serde_json::json!({"density_window": -0.5}),
        serde_json::json!({"density_window": 101}),
        serde_json::json!({"density_at_walker": 1}),
    ] {
        let mut v = good.clone();
        v["params"] = bad;
        assert!(!validator.is_valid(&v), "the schema accepts {}", v["params"]);
        assert!(!loads(&v), "the loader accepts {}", v["params"]);
    }
}

#[test]
fn load_save_load_round_trips_every_map() {
    let dir = tempfile::tempdir().unwrap();
    for path in bundled_maps() {
        let first = MapFile::from_path(&path).unwrap();
        let saved = dir.path().join(path.file_name().unwrap());
        first.save(&saved).unwrap();
        let second = MapFile::from_path(&saved).unwrap();
        assert_eq!(first, second, "{}", path.display());
        // Saving again gives the same bytes: the written form is canonical.
        let again = dir.path().join("again.json");
        second.save(&again).unwrap();
        assert_eq!(std::fs::read(&saved).unwrap(), std::fs::read(&again).unwrap());
        // Rasters stay relative to the original folder.
        let a = map::compile(&first, &maps_dir(), "first").unwrap();
        let b = map::compile(&second, &maps_dir(), "second").unwrap();
        assert_eq!(a, b, "{}", path.display());
    }
}

#[test]
fn hall_is_a_large_evacuation_with_several_exits() {
    let s = load("hall.json");
    assert_eq!((s.grid.cols, s.grid.rows, s.grid.cell_size), (120, 80, 0.5));
    let g = &s.groups[0];
    assert!(g.goals.len() >= 3);
    assert!(g.agent_count() >= 300);
    // The exits are cut into the wall: every goal cell is free.
    for goal in &g.goals {
        assert!(goal.mask.cells().all(|rc| !s.obstacle[rc]), "{}", goal.name);
    }
}

#[test]
fn hills_differ_only_in_height() {
    let steep = load("hill.json");
    let gentle = load("hill_gentle.json");
    assert_eq!(steep.grid, gentle.grid);
    assert_eq!(steep.groups, gentle.groups);
    assert_eq!(steep.obstacle, gentle.obstacle);
    let max_slope = |s: &Scene| {
        let h = &s.height;
        let mut m = 0.0f32;
        for r in 0..s.grid.rows {
            for c in 0..s.grid.cols - 1 {
                m = m.max((h[[r, c + 1]] - h[[r, c]]).abs() / s.grid.cell_size as f32);
            }
        }
        m
    };
    // Steeper than s_max (walkers slow to f_min) versus far below it.
    assert!(
        max_slope(&steep) > steep.params.s_max as f32,
        "{}",
        max_slope(&steep)
    );
    assert!(
        max_slope(&gentle) < 0.2 * gentle.params.s_max as f32,
        "{}",
        max_slope(&gentle)
    );
    // The hill stands between the spawn area (west) and the goal (east) on the straight line.
    let h = &steep.height;
    let mid_row = steep.grid.rows / 2;
    assert!(h[[mid_row, steep.grid.cols / 2]] > 7.0);
    // A walk around it stays flat: the top and bottom rows are at height 0.
    assert!(h.row(0).iter().all(|&v| v == 0.0) && h.row(steep.grid.rows - 1).iter().all(|&v| v == 0.0));
}

#[test]
fn four_exits_is_the_rimea_room() {
    let s = load("four_exits.json");
    let g = &s.groups[0];
    assert_eq!(g.goals.len(), 4);
    assert_eq!(g.agent_count(), 1000);
    for goal in &g.goals {
        assert_eq!(goal.width, 1.0);
        assert_eq!(goal.mask.count() as f64 * s.grid.cell_size, 1.0, "{}", goal.name);
    }
    // The room inside the walls is 30 m x 20 m.
    let free = s.obstacle.iter().filter(|&&b| !b).count() as f64 * s.grid.cell_size.powi(2);
    assert!((free - (30.0 * 20.0 + 4.0 * 0.5)).abs() < 1e-9, "{free}");
}

#[test]
fn crossing_groups_walk_at_right_angles() {
    let s = load("crossing.json");
    assert_eq!(s.groups.len(), 2);
    let centroid = |m: &ndarray::Array2<bool>| {
        let (mut x, mut y, mut n) = (0.0, 0.0, 0.0);
        for ((r, c), &b) in m.indexed_iter() {
            if b {
                x += c as f64;
                y += r as f64;
                n += 1.0;
            }
        }
        (x / n, y / n)
    };
    let dir = |g: &crowdfield::scene::Group| {
        let (sx, sy) = centroid(&g.spawns[0].area.mask.to_dense());
        let (gx, gy) = centroid(&g.goal_mask(&s.grid));
        (gx - sx, gy - sy)
    };
    let (a, b) = (dir(&s.groups[0]), dir(&s.groups[1]));
    let cos = (a.0 * b.0 + a.1 * b.1) / (a.0.hypot(a.1) * b.0.hypot(b.1));
    assert!(cos.abs() < 1e-9, "{cos}");
}

#[test]
fn office_walls_come_from_the_png() {
    let s = load("office.json");
    let blocked = cells(&s.obstacle);
    assert!(blocked > 1000, "{blocked}");
    // The outer wall's bottom-left corner is blocked, the corridor (y 13..17 m) is free.
    assert!(s.obstacle[[0, 0]]);
    let corridor_row = (15.0 / s.grid.cell_size) as usize;
    assert!(!s.obstacle[[corridor_row, 100]]);
    // The stairs exits at both corridor ends are open.
    for goal in &s.groups[0].goals {
        assert!(goal.mask.cells().all(|rc| !s.obstacle[rc]));
    }
}

#[test]
fn corridor_is_forty_metres_for_one_walker() {
    let s = load("corridor.json");
    let g = &s.groups[0];
    assert_eq!(g.agent_count(), 1);
    assert_eq!((g.speed_min, g.speed_max), (1.34, 1.34));
    let xs = |m: &crowdfield::scene::CellMask| {
        m.cells()
            .map(|(r, c)| s.grid.cell_center(r, c).0)
            .collect::<Vec<_>>()
    };
    let spawn_x = xs(&g.spawns[0].area.mask).iter().sum::<f64>() / 4.0;
    let goal_x0 = xs(&g.goals[0].mask).into_iter().fold(f64::INFINITY, f64::min);
    // From the spawn centre to the first goal cell's centre: 40 m.
    assert!((goal_x0 - spawn_x - 40.125).abs() < 1e-9, "{spawn_x} {goal_x0}");
}

#[test]
fn bottleneck_has_one_exit() {
    let s = load("bottleneck.json");
    let g = &s.groups[0];
    assert_eq!(g.goals.len(), 1);
    assert_eq!(g.goals[0].width, 1.0);
    // The only way out of the room is the 1 m door: the east wall is otherwise closed.
    let wall_col = (19.75 / s.grid.cell_size) as usize;
    let open = (0..s.grid.rows).filter(|&r| !s.obstacle[[r, wall_col]]).count();
    assert_eq!(open as f64 * s.grid.cell_size, 1.0);
}

/// The example map of docs/map-format.md loads, validates clean and gives no
/// warning (it had a speed above the default `f_max`, which `validate` warns about).
#[test]
fn the_map_format_example_is_valid_and_quiet() {
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/map-format.md")).unwrap();
    let section = &doc[doc.find("## An example").expect("an example section")..];
    let start = section.find("```json\n").expect("a JSON example") + "```json\n".len();
    let example = &section[start..start + section[start..].find("```").unwrap()];
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("readme_example.json");
    std::fs::write(&path, example).unwrap();
    let problems = map::validate(&path);
    assert!(problems.is_empty(), "{problems:#?}");
    let scene = map::load(&path).unwrap();
    assert_eq!(scene.groups.len(), 1);
    assert_eq!(map::warnings(&scene), Vec::<String>::new());
}
