//! `crowdfield study`: the statistics against numpy on the runs' own results, a blocked exit
//! never faster than the map as drawn, shards merged equal to one machine, scenario files and
//! their errors, and the page in headless Chromium.

mod browser_support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn crowdfield(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_crowdfield"))
        .args(args)
        .output()
        .unwrap()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// A 12 m x 8 m room with a 1 m exit on each side ("west", "east") and 40 people.
fn two_exit_room(dir: &Path) -> PathBuf {
    let map = serde_json::json!({
        "version": 1,
        "name": "two exits",
        "model": "pedestrian",
        "grid": {"cols": 48, "rows": 32, "cell_size": 0.25},
        "layers": {"obstacles": {"shapes": [
            {"rect": {"min": [0, 0], "max": [12, 0.25]}},
            {"rect": {"min": [0, 7.75], "max": [12, 8]}},
            {"rect": {"min": [0, 0], "max": [0.25, 8]}},
            {"rect": {"min": [11.75, 0], "max": [12, 8]}},
            {"rect": {"min": [0, 3.5], "max": [0.25, 4.5]}, "value": 0},
            {"rect": {"min": [11.75, 3.5], "max": [12, 4.5]}, "value": 0}
        ]}},
        "groups": [{
            "name": "occupants",
            "goals": [
                {"rect": {"min": [0, 3.5], "max": [0.25, 4.5]}, "name": "west", "width": 1},
                {"rect": {"min": [11.75, 3.5], "max": [12, 4.5]}, "name": "east", "width": 1}
            ],
            "spawns": [{"rect": {"min": [2, 1], "max": [6, 7]}, "count": 40, "name": "hall",
                        "premovement": {"min": 0, "max": 10}}]
        }]
    });
    let path = dir.join("two_exits.json");
    std::fs::write(&path, serde_json::to_string_pretty(&map).unwrap()).unwrap();
    path
}

fn read_json(path: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(path).unwrap())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn study(args: &[&str]) -> String {
    let o = crowdfield(args);
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert!(o.status.success(), "{err}");
    err
}

fn scenario<'a>(study: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    study["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == name)
        .unwrap_or_else(|| panic!("no scenario {name}"))
}

#[test]
fn statistics_match_numpy_and_blocking_an_exit_never_helps() {
    let dir = tempfile::tempdir().unwrap();
    let map = two_exit_room(dir.path());
    let out = dir.path().join("study");
    let err = study(&[
        "study",
        s(&map),
        "--seeds",
        "5",
        "--discount-exits",
        "--aset",
        "60",
        "--quiet",
        "--out",
        s(&out),
    ]);
    assert!(
        err.contains(&format!("study: {}", out.join("study.json").display())),
        "{err}"
    );
    let got = read_json(&out.join("study.json"));
    let names: Vec<&str> = got["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["as drawn", "exit \"west\" blocked", "exit \"east\" blocked"]
    );
    assert_eq!(got["seeds"], serde_json::json!([1, 2, 3, 4, 5]));
    // numpy recomputes every scenario's figures from the runs' result.json files.
    let check = r#"
import json, pathlib, sys
import numpy as np
out = pathlib.Path(sys.argv[1])
study = json.loads((out / "study.json").read_text())
for sc in study["scenarios"]:
    runs = [json.loads((out / e["folder"] / "result.json").read_text()) for e in sc["seeds"]]
    t = np.array([r["evacuation_time"] for r in runs if r["complete"]], dtype=float)
    want = dict(mean=t.mean(), sd=t.std(ddof=1), min=t.min(), p50=np.percentile(t, 50),
                p95=np.percentile(t, 95), max=t.max())
    for k, v in want.items():
        got = sc["evacuation_time"][k]
        assert abs(got - v) <= 1e-9 * max(1.0, abs(v)), (sc["name"], k, got, v)
    pre = np.array([r["premovement"] for r in runs], dtype=float)
    assert abs(sc["premovement"]["mean"] - pre.mean()) <= 1e-9 * max(1.0, pre.mean())
    assert abs(sc["margin"] - (60 - want["p95"])) <= 1e-9
    for ex in sc["exits"]:
        last = np.array([e["last_arrival"] for r in runs for e in r["exits"]
                         if e["name"] == ex["name"] and e["last_arrival"] is not None], dtype=float)
        if len(last):
            assert abs(ex["last_arrival"]["p95"] - np.percentile(last, 95)) <= 1e-9 * max(1.0, last.max())
print("ok", len(study["scenarios"]))
"#;
    let o = Command::new("python3")
        .args(["-c", check, s(&out)])
        .output()
        .expect("python3 runs (the test command installs numpy with PedPy)");
    assert!(
        o.status.success(),
        "numpy check failed: {}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), "ok 3");
    // One exit instead of two: never faster, seed by seed.
    let drawn = scenario(&got, "as drawn");
    for blocked in ["exit \"west\" blocked", "exit \"east\" blocked"] {
        let b = scenario(&got, blocked);
        assert_eq!(b["complete_runs"], 5, "{b}");
        for (x, y) in drawn["seeds"]
            .as_array()
            .unwrap()
            .iter()
            .zip(b["seeds"].as_array().unwrap())
        {
            let (tx, ty) = (
                x["evacuation_time"].as_f64().unwrap(),
                y["evacuation_time"].as_f64().unwrap(),
            );
            assert!(
                ty >= tx,
                "{blocked}, seed {}: {ty} s against {tx} s as drawn",
                x["seed"]
            );
        }
        // Everyone leaves through the exit left open.
        let exits = b["exits"].as_array().unwrap();
        let used: Vec<&serde_json::Value> = exits
            .iter()
            .filter(|e| e["arrivals"]["mean"].as_f64().unwrap() > 0.0)
            .collect();
        assert_eq!(used.len(), 1, "{exits:?}");
        assert_eq!(used[0]["arrivals"]["mean"], 40.0);
    }
    // Each run has its report page, linked from the study's page.
    let page = std::fs::read_to_string(out.join("study.html")).unwrap();
    for e in drawn["seeds"].as_array().unwrap() {
        let folder = e["folder"].as_str().unwrap();
        assert!(out.join(folder).join("report.html").is_file(), "{folder}");
        assert!(page.contains(&format!("./{folder}/report.html")), "{folder}");
    }
}

#[test]
fn shards_merged_give_one_machines_study_bit_for_bit() {
    let dir = tempfile::tempdir().unwrap();
    let map = two_exit_room(dir.path());
    let one = dir.path().join("one");
    let spread = dir.path().join("spread");
    let common = ["--seeds", "3", "--discount-exits", "--quiet"];
    study(&[&["study", s(&map)][..], &common, &["--out", s(&one)]].concat());
    for shard in ["0/2", "1/2"] {
        let err = study(
            &[
                &["study", s(&map)][..],
                &common,
                &["--shard", shard, "--out", s(&spread)],
            ]
            .concat(),
        );
        assert!(err.contains("--merge"), "{err}");
        assert!(!spread.join("study.json").exists(), "a shard writes no study");
    }
    study(
        &[
            &["study", s(&map)][..],
            &common,
            &["--merge", "--out", s(&spread)],
        ]
        .concat(),
    );
    assert_eq!(
        std::fs::read(one.join("study.json")).unwrap(),
        std::fs::read(spread.join("study.json")).unwrap()
    );
    // A merge with no runs says what to do.
    let empty = dir.path().join("empty");
    std::fs::create_dir_all(empty.join("runs")).unwrap();
    let o = crowdfield(&[&["study", s(&map)][..], &common, &["--merge", "--out", s(&empty)]].concat());
    assert!(!o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("run the shards"),
        "{o:?}"
    );
}

#[test]
fn scenario_files_change_the_map_and_say_what_is_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let map = two_exit_room(dir.path());
    let file = dir.path().join("more.json");
    std::fs::write(
        &file,
        r#"{"name": "more people, east closed", "closed_exits": ["east"], "population": 1.5, "aset": 90}"#,
    )
    .unwrap();
    let alone = dir.path().join("alone.json");
    std::fs::write(&alone, r#"{"name": "no exit", "closed_exits": ["east", "west"]}"#).unwrap();
    let out = dir.path().join("study");
    let err = study(&[
        "study",
        s(&map),
        "--seeds",
        "2",
        "--scenario",
        s(&file),
        "--scenario",
        s(&alone),
        "--quiet",
        "--out",
        s(&out),
    ]);
    assert!(err.contains("scenario \"no exit\" is not run"), "{err}");
    let got = read_json(&out.join("study.json"));
    let more = scenario(&got, "more people, east closed");
    assert_eq!(more["blocked"], serde_json::json!(["east"]));
    assert_eq!(more["aset"], 90.0);
    let result = read_json(
        &out.join(more["seeds"][0]["folder"].as_str().unwrap())
            .join("result.json"),
    );
    assert_eq!(result["agents"], 60);
    let none = scenario(&got, "no exit");
    assert_eq!(none["runs"], 0);
    assert!(
        none["cannot_run"].as_str().unwrap().contains("no exit left"),
        "{none}"
    );

    // Errors name the file, the key and the value.
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, r#"{"name": "x", "closed_exits": ["north"]}"#).unwrap();
    let o = crowdfield(&["study", s(&map), "--scenario", s(&bad), "--out", s(&out)]);
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(
        e.contains("bad.json")
            && e.contains("closed_exits[0]")
            && e.contains("\"north\"")
            && e.contains("west, east"),
        "{e}"
    );
    std::fs::write(&bad, r#"{"name": "x", "populaton": 2}"#).unwrap();
    let o = crowdfield(&["study", s(&map), "--scenario", s(&bad), "--out", s(&out)]);
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success() && e.contains("bad.json") && e.contains("populaton"),
        "{e}"
    );
    let o = crowdfield(&["study", s(&map), "--seeds", "0", "--out", s(&out)]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("--seeds: 0"), "{o:?}");
}

#[test]
fn the_study_page_renders_in_headless_chromium() {
    let Some(browser) = browser_support::chromium() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let map = two_exit_room(dir.path());
    let out = dir.path().join("study");
    study(&[
        "study",
        s(&map),
        "--seeds",
        "2",
        "--discount-exits",
        "--quiet",
        "--out",
        s(&out),
    ]);
    let o = browser_support::run(
        browser,
        &out.join("study.html"),
        &dir.path().join("profile"),
        &["--dump-dom"],
    );
    let dom = String::from_utf8_lossy(&o.stdout);
    let console = browser_support::console(&o);
    assert!(console.is_empty(), "console messages: {console:#?}");
    // The arrival curves and one plan per scenario, all decoded.
    assert!(
        dom.contains("data-images-loaded=\"4 of 4\""),
        "{}",
        &dom[..dom.len().min(400)]
    );
    // The worst scenario is highlighted: one of the blocked exits.
    let worst = dom
        .split("<tr class=\"worst\"><td>")
        .nth(1)
        .expect("a highlighted row");
    assert!(worst.starts_with("exit \""), "{}", &worst[..80.min(worst.len())]);
}

/// The scenario file docs/guide.md shows is one the study reads.
#[test]
fn the_guides_scenario_example_is_a_scenario_file() {
    let guide = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/guide.md")).unwrap();
    let section = guide.split("## study").nth(1).expect("a study section");
    let json = section
        .split("```json\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("a json block in the study section");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("late.json");
    std::fs::write(&path, json).unwrap();
    let file = crowdfield::run::study::ScenarioFile::read(&path).unwrap();
    assert_eq!(file.name, "late alarm, more people");
    assert_eq!(file.closed_exits, ["east exit"]);
    assert_eq!(file.aset, Some(300.0));
    // It applies to the bundled hall, whose exits and spawn areas it names.
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("maps/hall.json");
    let map = crowdfield::map::format::MapFile::from_path(&path).unwrap();
    let scenarios =
        crowdfield::run::study::scenarios(&map, false, &[("late.json".into(), file)], None).unwrap();
    let late = &scenarios[1];
    assert!(late.cannot_run.is_none());
    assert_eq!(late.blocked, ["east exit"]);
    let spawns: Vec<(String, usize)> = late.map.groups[0]
        .spawns
        .iter()
        .map(|s| (s.name.clone().unwrap(), s.count.unwrap()))
        .collect();
    let before: Vec<usize> = map.groups[0].spawns.iter().map(|s| s.count.unwrap()).collect();
    assert_eq!(spawns[0], ("front floor".to_string(), 300));
    assert_eq!(spawns[1].1, (before[1] as f64 * 1.5).round() as usize);
    assert!(
        late.map.groups[0]
            .goals
            .iter()
            .all(|g| g.name.as_deref() != Some("east exit"))
    );
    crowdfield::map::compile(&late.map, path.parent().unwrap(), "late").unwrap();
}

/// Whether the Slurm test must run (the test command starts a one-node Slurm and sets this).
fn slurm_required() -> bool {
    std::env::var("CROWDFIELD_REQUIRE_SLURM").is_ok_and(|v| v == "1")
}

/// A study spread over a real Slurm job array (`deploy/slurm_study.sh`), merged, gives one
/// machine's `study.json` bit for bit.
#[test]
fn a_study_on_slurm_merges_to_one_machines_numbers() {
    let up = Command::new("sinfo")
        .args(["-h", "-o", "%T"])
        .output()
        .is_ok_and(|o| o.status.success() && String::from_utf8_lossy(&o.stdout).contains("idle"));
    if !up {
        assert!(
            !slurm_required(),
            "no idle Slurm node (sinfo), and CROWDFIELD_REQUIRE_SLURM=1: scripts/slurm_local.sh starts one"
        );
        eprintln!("skipped: no Slurm (scripts/test.sh starts one with scripts/slurm_local.sh)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let map = two_exit_room(dir.path());
    let one = dir.path().join("one");
    let spread = dir.path().join("spread");
    let options = ["--seeds", "3", "--discount-exits"];
    study(&[&["study", s(&map)][..], &options, &["--quiet", "--out", s(&one)]].concat());
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/slurm_study.sh");
    let log = dir.path().join("slurm-%a.out");
    let o = Command::new("sbatch")
        .args([
            "--wait",
            "--array=0-2",
            "--cpus-per-task=1",
            "--mem=1G",
            "--time=00:10:00",
        ])
        .arg(format!("--output={}", log.display()))
        .arg(format!(
            "--export=ALL,CROWDFIELD={}",
            env!("CARGO_BIN_EXE_crowdfield")
        ))
        .arg(&script)
        .args([s(&map), s(&spread)])
        .args(options)
        .output()
        .unwrap();
    let logs: String = (0..3)
        .map(|i| std::fs::read_to_string(dir.path().join(format!("slurm-{i}.out"))).unwrap_or_default())
        .collect();
    assert!(
        o.status.success(),
        "sbatch: {}{}\ntask logs:\n{logs}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(!spread.join("study.json").exists(), "the tasks write runs only");
    study(
        &[
            &["study", s(&map)][..],
            &options,
            &["--merge", "--quiet", "--out", s(&spread)],
        ]
        .concat(),
    );
    assert_eq!(
        std::fs::read(one.join("study.json")).unwrap(),
        std::fs::read(spread.join("study.json")).unwrap(),
        "task logs:\n{logs}"
    );
}

/// On every bundled map with more than one exit, no exit blocked makes the evacuation faster
/// than the map as drawn (one seed each, through the library).
#[test]
fn on_the_bundled_maps_a_blocked_exit_is_never_faster() {
    use crowdfield::run::study::{StudyOptions, run_study, scenarios};
    let maps = Path::new(env!("CARGO_MANIFEST_DIR")).join("maps");
    let dir = tempfile::tempdir().unwrap();
    let mut studied = 0;
    for name in ["four_exits.json", "hall.json", "office.json"] {
        let path = maps.join(name);
        let map = crowdfield::map::format::MapFile::from_path(&path).unwrap();
        let all = scenarios(&map, true, &[], None).unwrap();
        assert!(all.len() > 2, "{name}: more than one exit");
        let options = StudyOptions {
            seeds: 1,
            first_seed: 1,
            max_time: 600.0,
            until_converged: false,
            max_seeds: 1,
            shard: None,
        };
        let study = run_study(&path, &all, &options, &dir.path().join(name), &|_, _| {})
            .unwrap()
            .unwrap();
        let drawn = study.scenarios[0]
            .evacuation_time
            .expect("the map as drawn evacuates")
            .max;
        for s in &study.scenarios[1..] {
            if s.cannot_run.is_some() {
                continue;
            }
            let t = s
                .evacuation_time
                .unwrap_or_else(|| panic!("{name}, {}: not complete", s.name))
                .max;
            assert!(
                t >= drawn,
                "{name}, {}: {t} s, faster than {drawn} s as drawn",
                s.name
            );
            studied += 1;
        }
    }
    assert!(studied >= 8, "{studied} blocked-exit scenarios");
}

/// `--until-converged` doubles the seeds while a scenario's figures still move, up to
/// `--max-seeds`: from 2 seeds none can have stood still for five, so 2, 4 and then 8 run.
#[test]
fn until_converged_adds_seeds_up_to_the_cap() {
    let dir = tempfile::tempdir().unwrap();
    let map = two_exit_room(dir.path());
    let out = dir.path().join("study");
    let args = ["--seeds", "2", "--until-converged", "--max-seeds", "8", "--quiet"];
    study(&[&["study", s(&map)][..], &args, &["--out", s(&out)]].concat());
    let got = read_json(&out.join("study.json"));
    assert_eq!(got["seeds"], serde_json::json!([1, 2, 3, 4, 5, 6, 7, 8]));
    let drawn = scenario(&got, "as drawn");
    assert_eq!(drawn["runs"], 8);
    let k = &drawn["converged_after"];
    assert!(k.is_null() || k.as_u64().unwrap() <= 3, "{k}");
    // A cap below the seeds is refused.
    let o = crowdfield(&[
        "study",
        s(&map),
        "--seeds",
        "4",
        "--until-converged",
        "--max-seeds",
        "2",
        "--out",
        s(&out),
    ]);
    assert!(!o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("--max-seeds: 2"),
        "{o:?}"
    );
}
