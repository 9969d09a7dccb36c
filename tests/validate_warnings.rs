//! `validate`'s warnings about parameter combinations that freeze walkers or make figures
//! unreliable: each names the file and the field, and the lone-walker case is checked by
//! running the walker.

use crowdfield::prelude::*;
use serde_json::{Value, json};
use std::process::Command;

/// A corridor 20 m x 2 m at `cell` metres with one walker walking east and the given params.
fn corridor(cell: f64, params: Value) -> Value {
    json!({
        "version": 1,
        "name": "lone",
        "grid": {"cols": (20.0 / cell) as usize, "rows": (2.0 / cell) as usize, "cell_size": cell},
        "groups": [{
            "name": "walker",
            "goals": [{"rect": {"min": [19.5, 0], "max": [20, 2]}}],
            "spawns": [{"rect": {"min": [0, 0.5], "max": [1, 1.5]}, "count": 1}]
        }],
        "params": params
    })
}

/// `validate`'s stdout for the map `v`, written as `name`.
fn validate(v: &Value, name: &str) -> (tempfile::TempDir, std::path::PathBuf, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, serde_json::to_string_pretty(v).unwrap()).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_crowdfield"))
        .arg("validate")
        .arg(&path)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    (dir, path, String::from_utf8(out.stdout).unwrap())
}

/// The warning lines of `stdout` that contain every one of `parts`.
fn warnings_with<'a>(stdout: &'a str, parts: &[&str]) -> Vec<&'a str> {
    stdout
        .lines()
        .filter(|l| l.contains(": warning: ") && parts.iter().all(|p| l.contains(p)))
        .collect()
}

#[test]
fn a_lone_walker_reading_its_own_body_is_warned_about_and_crawls() {
    let params = json!({"speed_law": "weidmann", "density_at_walker": true});
    let (_dir, path, stdout) = validate(&corridor(0.25, params), "frozen.json");
    let found = warnings_with(
        &stdout,
        &["frozen.json", "params.density_at_walker", "density_window"],
    );
    assert_eq!(found.len(), 1, "{stdout}");
    // The warning's speed is what the walker does: run it for 10 s.
    let scene = crowdfield::map::load(&path).unwrap();
    let mut sim = Simulation::builder(scene).max_time(10.0).build().unwrap();
    while !sim.finished() {
        sim.step();
    }
    let x = sim.positions().0[0] as f64;
    let speed = (x - 0.5).max(0.0) / 10.0;
    assert!(speed < 0.5, "a walker reading its own body walked at {speed} m/s");
    let words = found[0];
    let claimed: f64 = words
        .split("walks at about ")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .and_then(|s| s.parse().ok())
        .expect("the warning gives the speed");
    assert!(
        (claimed - speed).abs() < 0.3,
        "warning says {claimed} m/s, the walker walked {speed} m/s"
    );
}

#[test]
fn a_density_window_or_no_density_at_walker_is_not_warned_about() {
    for params in [
        json!({"speed_law": "weidmann", "density_at_walker": true, "density_window": 1}),
        json!({"speed_law": "weidmann"}),
        json!({}),
    ] {
        let (_dir, _path, stdout) = validate(&corridor(0.25, params.clone()), "fine.json");
        assert!(!stdout.contains("warning"), "{params}: {stdout}");
    }
}

#[test]
fn a_door_one_cell_wide_is_warned_about() {
    let mut v = corridor(0.5, json!({}));
    v["grid"] = json!({"cols": 40, "rows": 8, "cell_size": 0.5});
    v["layers"] = json!({"obstacles": {"shapes": [
        {"rect": {"min": [10, 0], "max": [10.5, 4]}},
        {"rect": {"min": [10, 2], "max": [10.5, 2.5]}, "value": 0}
    ]}});
    v["groups"][0]["goals"] = json!([{"rect": {"min": [19.5, 0], "max": [20, 4]}}]);
    let (_dir, _path, stdout) = validate(&v, "door.json");
    assert_eq!(
        warnings_with(
            &stdout,
            &[
                "door.json",
                "layers.obstacles",
                "(10.25, 2.25) m",
                "cell_size 0.5"
            ]
        )
        .len(),
        1,
        "{stdout}"
    );
    // The same door two cells wide is fine.
    v["layers"]["obstacles"]["shapes"][1]["rect"] = json!({"min": [10, 2], "max": [10.5, 3]});
    let (_dir, _path, stdout) = validate(&v, "door.json");
    assert!(!stdout.contains("warning"), "{stdout}");
}

#[test]
fn a_goal_narrower_than_two_cells_is_warned_about() {
    let mut v = corridor(0.5, json!({}));
    v["groups"][0]["goals"][0]["width"] = json!(0.6);
    let (_dir, _path, stdout) = validate(&v, "goal.json");
    assert_eq!(
        warnings_with(
            &stdout,
            &[
                "goal.json",
                "groups[0].goals[0].width",
                "0.6 m",
                "narrower than two cells"
            ]
        )
        .len(),
        1,
        "{stdout}"
    );
}

/// A goal `width` far from the opening the goal is drawn in is warned about by `validate` and
/// `simulate` (the specific flow divides by it): the bottleneck's 1 m door given `"width": 10`,
/// and a goal drawn over the wall around a 1 m door, whose default width (the longer side of
/// its rectangle) is 3 m. The door's own width, and a strip across a corridor, are quiet.
#[test]
fn a_goal_width_far_from_its_opening_is_warned_about() {
    let bottleneck = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("maps/bottleneck.json");
    let mut map: Value = serde_json::from_str(&std::fs::read_to_string(bottleneck).unwrap()).unwrap();
    let (_dir, _path, stdout) = validate(&map, "door.json");
    assert!(warnings_with(&stdout, &["width"]).is_empty(), "{stdout}");
    map["groups"][0]["goals"][0]["width"] = json!(10);
    let (dir, path, stdout) = validate(&map, "door.json");
    assert!(stdout.contains("door.json: ok"), "{stdout}");
    let found = warnings_with(
        &stdout,
        &[
            "door.json",
            "groups[0].goals[0].width: 10.0 m",
            "span 1.0 m",
            "off by 90 %",
        ],
    );
    assert_eq!(found.len(), 1, "{stdout}");
    let o = Command::new(env!("CARGO_BIN_EXE_crowdfield"))
        .args(["simulate", "--quiet", "--max-time", "0.5", "--out"])
        .arg(dir.path().join("out"))
        .arg(&path)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("groups[0].goals[0].width: 10.0 m"), "{err}");

    // Drawn over the wall around the door, width left out: 3 m for a 1 m opening.
    let goal = &mut map["groups"][0]["goals"][0];
    goal.as_object_mut().unwrap().remove("width");
    goal["rect"] = json!({"min": [19.5, 6.5], "max": [20, 9.5]});
    let (_dir, _path, stdout) = validate(&map, "wide.json");
    assert_eq!(
        warnings_with(&stdout, &["goals[0].width: 3.0 m", "span 1.0 m"]).len(),
        1,
        "{stdout}"
    );

    // A strip across the whole end of a corridor: its width is the corridor's.
    let (_dir, _path, stdout) = validate(&corridor(0.5, json!({})), "strip.json");
    assert!(warnings_with(&stdout, &["width"]).is_empty(), "{stdout}");
}

/// The corridor with RiMEA's adults (free speeds up to 1.64 m/s) and no `params`.
fn adults_corridor(model: Option<&str>) -> Value {
    let mut v = corridor(0.25, Value::Null);
    let o = v.as_object_mut().unwrap();
    o.remove("params");
    o["groups"][0]["speed"] = json!({"rimea": "adults"});
    if let Some(m) = model {
        o.insert("model".to_string(), json!(m));
    }
    v
}

#[test]
fn the_pedestrian_model_is_not_told_to_raise_f_max() {
    // The pedestrian model keeps speeds above f_max: a warning to raise it (by adding
    // `params`, which switches the map to the published model) would be false.
    let (_dir, _path, stdout) = validate(&adults_corridor(None), "adults.json");
    assert!(warnings_with(&stdout, &["f_max"]).is_empty(), "{stdout}");
    let (_dir, _path, stdout) = validate(&adults_corridor(Some("continuum_crowds")), "cc.json");
    assert_eq!(warnings_with(&stdout, &["cc.json", "f_max"]).len(), 1, "{stdout}");
}

#[test]
fn the_report_leads_with_the_maps_warnings() {
    // What `validate` and the batch index warn about, the run's report.json and report.html
    // say too.
    let dir = tempfile::tempdir().unwrap();
    let map = dir.path().join("cc.json");
    std::fs::write(
        &map,
        serde_json::to_string(&adults_corridor(Some("continuum_crowds"))).unwrap(),
    )
    .unwrap();
    let out = dir.path().join("run");
    let run = Command::new(env!("CARGO_BIN_EXE_crowdfield"))
        .args(["simulate", "--quiet", "--max-time", "5"])
        .arg(&map)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(
        stderr.matches("above params.f_max").count(),
        1,
        "said once: {stderr}"
    );
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    let warnings = report["warnings"].as_array().unwrap();
    assert!(
        warnings
            .iter()
            .any(|w| w.as_str().unwrap().contains("above params.f_max")),
        "{warnings:?}"
    );
    let page = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(page.contains("above params.f_max"));
    assert!(!page.contains("No warnings."));
}

/// A 16 m x 10 m room behind a wall at x = 8 m with a door of `door` metres from y = 4.5 m
/// up, the goal along the east edge, two walkers of radius `radius` in the room.
fn room_behind_a_door(door: f64, radius: f64) -> Value {
    json!({
        "version": 1,
        "name": "door",
        "grid": {"cols": 64, "rows": 40, "cell_size": 0.25},
        "layers": {"obstacles": {"shapes": [
            {"rect": {"min": [8, 0], "max": [8.5, 4.5]}},
            {"rect": {"min": [8, 4.5 + door], "max": [8.5, 10]}}
        ]}},
        "groups": [{
            "name": "walkers",
            "radius": radius,
            "goals": [{"rect": {"min": [15.5, 0], "max": [16, 10]}, "name": "east"}],
            "spawns": [{"rect": {"min": [1, 1], "max": [7, 9]}, "count": 2, "name": "hall"}]
        }]
    })
}

#[test]
fn bodies_wider_than_every_way_out_are_warned_about() {
    // Bodies of 4 m before a door of 1 m: none can leave.
    let (_dir, path, stdout) = validate(&room_behind_a_door(1.0, 2.0), "wide.json");
    let found = warnings_with(
        &stdout,
        &[
            "wide.json",
            "groups[0]",
            "no path at least 4.0 m wide",
            "\"hall\"",
        ],
    );
    assert_eq!(found.len(), 1, "{stdout}");
    // The run agrees: nobody leaves, and the evacuation is not complete.
    let scene = crowdfield::map::load(&path).unwrap();
    let mut sim = Simulation::builder(scene).max_time(30.0).build().unwrap();
    sim.run(|_| Ok(())).unwrap();
    let report = sim.report();
    assert_eq!(report.total.arrived, 0);
    assert!(!report.complete);
    // Bodies of 0.5 m through the same door: no warning.
    let (_dir, _path, stdout) = validate(&room_behind_a_door(1.0, 0.25), "narrow.json");
    assert!(!stdout.contains("no path"), "{stdout}");
    // Bodies of exactly the door's width fit it.
    let (_dir, _path, stdout) = validate(&room_behind_a_door(1.0, 0.5), "exact.json");
    assert!(!stdout.contains("no path"), "{stdout}");
}

/// A door drawn 0.9 m wide on 0.25 m cells opens 1.0 m of walkable cells: `validate` says the
/// opening snapped to whole cells, which width the walkers pass, and which cells keep it.
#[test]
fn a_door_that_snaps_to_the_cells_is_warned_about() {
    let bottleneck = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("maps/bottleneck.json");
    let mut map: Value = serde_json::from_str(&std::fs::read_to_string(bottleneck).unwrap()).unwrap();
    let door = json!({"min": [19.5, 7.55], "max": [20, 8.45]});
    map["layers"]["obstacles"]["shapes"][1]["rect"] = door.clone();
    map["groups"][0]["goals"][0]["rect"] = door;
    map["groups"][0]["goals"][0]["width"] = json!(0.9);
    let (_dir, _path, stdout) = validate(&map, "door09.json");
    let found = warnings_with(
        &stdout,
        &[
            "groups[0].goals[0].width: 0.9 m",
            "cells of 0.25 m the walkable opening is 1.0 m",
            "snap to whole cells",
            "cells of 0.225 m (4 across it)",
        ],
    );
    assert_eq!(found.len(), 1, "{stdout}");
    // With exact walls the bodies pass the drawn 0.9 m: nothing snaps, nothing to say.
    let mut exact = map.clone();
    exact["walls"] = json!("exact");
    let (_dir, _path, stdout) = validate(&exact, "door09_exact.json");
    assert!(warnings_with(&stdout, &["width"]).is_empty(), "{stdout}");
    // A width that is not the drawn opening is still called out, with the drawn opening's.
    exact["groups"][0]["goals"][0]["width"] = json!(1.5);
    let (_dir, _path, stdout) = validate(&exact, "door15_exact.json");
    let found = warnings_with(
        &stdout,
        &[
            "groups[0].goals[0].width: 1.5 m",
            "walkable area as drawn spans 0.9 m",
        ],
    );
    assert_eq!(found.len(), 1, "{stdout}");
    // On cells that hold it the door is quiet.
    map["grid"] = json!({"cols": 400, "rows": 320, "cell_size": 0.05});
    let (_dir, _path, stdout) = validate(&map, "door09_fine.json");
    assert!(warnings_with(&stdout, &["width"]).is_empty(), "{stdout}");
}
