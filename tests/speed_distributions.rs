//! Walking-speed distributions in a map (`speed`: uniform, normal, a RiMEA population): the
//! speeds drawn at spawn have the distribution's mean, spread and range, the same seed repeats
//! them, and bad values are errors naming the file, the JSON path and the value.

use crowdfield::map;
use crowdfield::sim::spawn::spawn_agents;
use crowdfield::speeds::{RIMEA_AGE_GROUPS, RimeaPopulation};
use serde_json::{Value, json};

/// A 40 m x 40 m open map at 0.5 m with one group of `count` walkers and the given `speed`.
fn map_with_speed(speed: Value, count: usize) -> Value {
    json!({
        "version": 1,
        "name": "speeds",
        "grid": {"cols": 80, "rows": 80, "cell_size": 0.5},
        "groups": [{
            "name": "walkers",
            "goals": [{"rect": {"min": [39, 0], "max": [40, 40]}}],
            "spawns": [{"rect": {"min": [0, 0], "max": [38, 40]}, "count": count}],
            "speed": speed
        }]
    })
}

/// Writes the map and returns its problems (strings) and, when valid, its scene.
fn load(
    v: &Value,
) -> (
    tempfile::TempDir,
    std::path::PathBuf,
    Result<crowdfield::scene::Scene, Vec<String>>,
) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("speeds.json");
    std::fs::write(&path, serde_json::to_string_pretty(v).unwrap()).unwrap();
    let problems: Vec<String> = map::validate(&path).iter().map(|e| e.to_string()).collect();
    let scene = if problems.is_empty() {
        Ok(map::load(&path).unwrap())
    } else {
        Err(problems)
    };
    (dir, path, scene)
}

fn speeds(v: &Value, seed: u64) -> Vec<f64> {
    let (_d, _p, scene) = load(v);
    let scene = scene.expect("a valid map");
    spawn_agents(&scene, seed)
        .unwrap()
        .max_speed
        .iter()
        .map(|&s| s as f64)
        .collect()
}

fn mean_sd(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let m = v.iter().sum::<f64>() / n;
    (
        m,
        (v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1.0)).sqrt(),
    )
}

#[test]
fn uniform_speeds_fill_their_range() {
    let v = speeds(&map_with_speed(json!({"min": 1.0, "max": 1.6}), 1500), 1);
    let (m, sd) = mean_sd(&v);
    // Uniform on [1.0, 1.6]: mean 1.3, sd 0.173; the mean's standard error is 0.0045.
    assert!((m - 1.3).abs() < 0.015, "{m}");
    assert!((sd - 0.6 / 12f64.sqrt()).abs() < 0.012, "{sd}");
    assert!(v.iter().all(|s| (1.0 - 1e-6..=1.6 + 1e-6).contains(s)));
}

#[test]
fn normal_speeds_have_their_mean_and_spread_and_stay_in_range() {
    let spec = json!({"mean": 1.34, "sd": 0.2, "min": 0.54, "max": 2.14});
    let v = speeds(&map_with_speed(spec.clone(), 1500), 2);
    let (m, sd) = mean_sd(&v);
    // +-4 sd: the truncation leaves mean and sd as they are; standard errors 0.005 and 0.004.
    assert!((m - 1.34).abs() < 0.016, "{m}");
    assert!((sd - 0.2).abs() < 0.014, "{sd}");
    let narrow = speeds(
        &map_with_speed(json!({"mean": 1.34, "sd": 0.3, "min": 1.2, "max": 1.4}), 500),
        2,
    );
    assert!(narrow.iter().all(|s| (1.2 - 1e-6..=1.4 + 1e-6).contains(s)));
    assert_eq!(
        v,
        speeds(&map_with_speed(spec, 1500), 2),
        "the same seed repeats the speeds"
    );
}

#[test]
fn a_rimea_population_holds_its_age_groups_in_their_shares() {
    let v = speeds(&map_with_speed(json!({"rimea": "adults"}), 50), 3);
    let mut counts = [0usize; 6];
    for s in &v {
        let k = RIMEA_AGE_GROUPS
            .iter()
            .position(|g| (g.min - 1e-6..=g.max + 1e-6).contains(s))
            .unwrap_or_else(|| panic!("{s} m/s is in no age group"));
        counts[k] += 1;
    }
    assert_eq!(counts, [10, 10, 10, 10, 5, 5]);
    let one = speeds(&map_with_speed(json!({"rimea": "30-39"}), 40), 3);
    assert!(one.iter().all(|s| (1.52 - 1e-6..=1.56 + 1e-6).contains(s)));
    assert_eq!(
        RimeaPopulation::from_name("adults").unwrap().range(),
        (1.07, 1.64)
    );
}

#[test]
fn a_saved_map_keeps_its_distribution() {
    for spec in [
        json!({"rimea": "adults"}),
        json!({"mean": 1.3, "sd": 0.2, "min": 0.8, "max": 1.8}),
    ] {
        let v = map_with_speed(spec.clone(), 10);
        let parsed = map::MapFile::from_json(&v.to_string(), "speeds.json").unwrap();
        let again: Value = serde_json::from_str(&parsed.to_json()).unwrap();
        for key in spec.as_object().unwrap().keys() {
            assert_eq!(again["groups"][0]["speed"][key], spec[key], "{key}");
        }
    }
}

/// Asserts that one problem names the file, the path and the value.
#[track_caller]
fn assert_reported(speed: Value, parts: &[&str]) {
    let (_d, _p, scene) = load(&map_with_speed(speed, 10));
    let problems = scene.expect_err("an invalid map");
    assert!(
        problems
            .iter()
            .any(|p| p.contains("speeds.json") && parts.iter().all(|part| p.contains(part))),
        "no problem names {parts:?}: {problems:#?}"
    );
}

#[test]
fn bad_distributions_name_the_file_the_path_and_the_value() {
    assert_reported(
        json!({"rimea": "toddlers"}),
        &["groups[0].speed.rimea", "\"toddlers\"", "adults"],
    );
    assert_reported(
        json!({"rimea": "adults", "mean": 1.3}),
        &["groups[0].speed.mean", "rimea"],
    );
    assert_reported(
        json!({"rimea": "adults", "max": 2.0}),
        &["groups[0].speed.max", "rimea"],
    );
    assert_reported(json!({"mean": 1.3}), &["groups[0].speed.sd", "missing"]);
    assert_reported(
        json!({"sd": 0.2, "min": 1, "max": 2}),
        &["groups[0].speed.mean", "missing"],
    );
    assert_reported(
        json!({"mean": 1.3, "sd": -0.2, "min": 1, "max": 2}),
        &["groups[0].speed.sd", "-0.2"],
    );
    assert_reported(
        json!({"mean": 2.5, "sd": 0.2, "min": 1, "max": 2}),
        &["groups[0].speed.mean", "2.5"],
    );
    assert_reported(
        json!({"mean": "fast", "sd": 0.2}),
        &["groups[0].speed.mean", "fast"],
    );
}
