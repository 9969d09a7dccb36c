//! `crowdfield batch` end to end, through the binary: a broken map among good ones, and a
//! batch killed mid-run then rerun.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// A small valid map: a `cols x 10` grid of 0.5 m cells, `agents` walkers spawned on the west
/// side heading for the east end.
fn write_map(dir: &Path, stem: &str, cols: usize, agents: usize) -> PathBuf {
    let width = cols as f64 * 0.5;
    let map = serde_json::json!({
        "version": 1,
        "name": stem,
        "grid": {"cols": cols, "rows": 10, "cell_size": 0.5},
        "groups": [{
            "name": "walkers",
            "goals": [{"rect": {"min": [width - 1.0, 0.0], "max": [width, 5.0]}, "name": "east"}],
            "spawns": [{"rect": {"min": [0.5, 0.5], "max": [4.5, 4.5]}, "count": agents}],
            "speed": {"min": 1.2, "max": 1.4}
        }]
    });
    let path = dir.join(format!("{stem}.json"));
    std::fs::write(&path, serde_json::to_string_pretty(&map).unwrap()).unwrap();
    path
}

fn batch() -> Command {
    Command::new(env!("CARGO_BIN_EXE_crowdfield"))
}

/// Every `.json` under `dir` parses and every `.npy` loads; returns how many of each.
fn check_outputs(dir: &Path) -> (usize, usize) {
    let (mut json, mut npy) = (0, 0);
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            let (j, n) = check_outputs(&path);
            json += j;
            npy += n;
        } else if path.extension().is_some_and(|e| e == "json") {
            let text = std::fs::read_to_string(&path).unwrap();
            serde_json::from_str::<serde_json::Value>(&text)
                .unwrap_or_else(|e| panic!("{} does not parse: {e}", path.display()));
            json += 1;
        } else if path.extension().is_some_and(|e| e == "npy") {
            crowdfield::io::read_npy_f64(&path).unwrap_or_else(|e| panic!("{e}"));
            npy += 1;
        }
    }
    (json, npy)
}

fn summary(out: &Path) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(out.join("summary.json")).unwrap();
    serde_json::from_str::<Vec<serde_json::Value>>(&text).unwrap()
}

/// The rows of a CSV text (RFC 4180: quoted fields may hold commas, doubled quotes and line
/// breaks), header included.
fn csv_rows(text: &str) -> Vec<Vec<String>> {
    let (mut rows, mut row, mut field) = (Vec::new(), Vec::new(), String::new());
    let (mut quoted, mut chars) = (false, text.chars().peekable());
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                field.push('"');
                chars.next();
            }
            (true, '"') => quoted = false,
            (true, c) => field.push(c),
            (false, '"') => quoted = true,
            (false, ',') => row.push(std::mem::take(&mut field)),
            (false, '\n') => {
                row.push(std::mem::take(&mut field));
                rows.push(std::mem::take(&mut row));
            }
            (false, c) => field.push(c),
        }
    }
    assert!(
        !quoted && field.is_empty() && row.is_empty(),
        "the CSV ends mid-row: {text}"
    );
    rows
}

/// The value of `column` in the row of `summary.csv` whose map ends with `stem.json`.
fn csv_cell(out: &Path, stem: &str, column: &str) -> String {
    let rows = csv_rows(&std::fs::read_to_string(out.join("summary.csv")).unwrap());
    let at = rows[0]
        .iter()
        .position(|h| h == column)
        .unwrap_or_else(|| panic!("no {column} column: {:?}", rows[0]));
    let row = rows[1..]
        .iter()
        .find(|r| r[0].ends_with(&format!("{stem}.json")))
        .unwrap_or_else(|| panic!("{stem} missing from summary.csv"));
    assert_eq!(row.len(), rows[0].len(), "{row:?}");
    row[at].clone()
}

#[test]
fn a_broken_map_is_reported_and_the_good_ones_complete() {
    let dir = tempfile::tempdir().unwrap();
    let maps = dir.path().join("maps");
    std::fs::create_dir(&maps).unwrap();
    write_map(&maps, "alpha", 30, 5);
    write_map(&maps, "gamma", 30, 5);
    std::fs::write(maps.join("beta.json"), "{ \"version\": 1, \"grid\": ").unwrap();
    // Loads (the editor saves maps whose groups are not drawn yet) but has nothing to solve:
    // it used to pass as ok and complete.
    std::fs::write(
        maps.join("delta.json"),
        r#"{"version": 1, "name": "empty", "grid": {"cols": 10, "rows": 10, "cell_size": 1}, "groups": []}"#,
    )
    .unwrap();
    let out = dir.path().join("out");
    let run = batch()
        .args(["batch", "--simulate", "--quiet", "--max-time", "60", "--out"])
        .arg(&out)
        .arg(&maps)
        .output()
        .unwrap();
    assert!(
        !run.status.success(),
        "a failed map must make the batch exit non-zero"
    );
    // --quiet drops the progress bar, not the failure.
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        stderr.contains("failed: ") && stderr.contains("beta.json") && stderr.contains("2 failed"),
        "{stderr}"
    );
    let rows = summary(&out);
    let status_of = |stem: &str| {
        rows.iter()
            .find(|r| r["map"].as_str().unwrap().ends_with(&format!("{stem}.json")))
            .unwrap_or_else(|| panic!("{stem} missing from the summary"))
            .clone()
    };
    assert_eq!(rows.len(), 4);
    let beta = status_of("beta");
    assert_eq!(beta["status"], "failed");
    assert!(beta["error"].as_str().unwrap().contains("beta.json"), "{beta}");
    let delta = status_of("delta");
    assert_eq!(delta["status"], "failed", "{delta}");
    let error = delta["error"].as_str().unwrap();
    assert!(
        error.contains("delta.json") && error.contains("groups: no groups"),
        "{delta}"
    );
    assert!(!out.join("delta").join("done.json").exists());
    for good in ["alpha", "gamma"] {
        let row = status_of(good);
        assert_eq!(row["status"], "ok", "{row}");
        assert_eq!(row["agents_out"], 5, "{row}");
        assert_eq!(row["complete"], true, "{row}");
        assert!(out.join(good).join("report.json").is_file());
        assert!(out.join(good).join("potential_0.npy").is_file());
        assert!(out.join(good).join("done.json").is_file());
    }
    let csv = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    assert!(csv.starts_with(
        "map,status,error,seconds,evacuation_time,agents_out,agents_remaining,complete,warnings\n"
    ));
    assert_eq!(csv.lines().count(), 5);
    check_outputs(&out);

    // A rerun skips the complete maps; --force redoes them.
    let again = batch()
        .args(["batch", "--simulate", "--quiet", "--max-time", "60", "--out"])
        .arg(&out)
        .arg(&maps)
        .status()
        .unwrap();
    assert!(!again.success());
    let rows = summary(&out);
    assert_eq!(rows.iter().filter(|r| r["status"] == "skipped").count(), 2);
    // Sharding: slice 1 of 3 (0-based) of the sorted list [alpha, beta, gamma] is beta.
    let shard = batch()
        .args(["batch", "--quiet", "--shard", "1/3", "--out"])
        .arg(&out)
        .arg(&maps)
        .status()
        .unwrap();
    assert!(!shard.success());
    let text = std::fs::read_to_string(out.join("summary-shard-1-of-3.json")).unwrap();
    let rows: Vec<serde_json::Value> = serde_json::from_str(&text).unwrap();
    assert_eq!(rows.len(), 1);
    assert!(rows[0]["map"].as_str().unwrap().ends_with("beta.json"));
}

#[test]
fn a_killed_batch_reruns_to_completion_without_corrupt_files() {
    let dir = tempfile::tempdir().unwrap();
    let maps = dir.path().join("maps");
    std::fs::create_dir(&maps).unwrap();
    let mut manifest = String::new();
    // Long corridors (200 m): each map takes a good fraction of a second, so the kill below,
    // sent as soon as the first map is done, lands while the batch still has maps to run.
    for k in 0..6 {
        write_map(&maps, &format!("m{k}"), 400, 60);
        manifest.push_str(&format!("maps/m{k}.json\n"));
    }
    std::fs::write(dir.path().join("list.txt"), manifest).unwrap();
    let out = dir.path().join("out");
    let run = || {
        let mut c = batch();
        c.args(["batch", "--simulate", "--quiet", "--jobs", "1", "--out"])
            .arg(&out)
            .arg(dir.path().join("list.txt"));
        c
    };
    let mut child = run().spawn().unwrap();
    // Kill it once the first map is done (its completion marker written), mid-batch.
    let first_done = out.join("m0").join(crowdfield::run::batch::DONE_FILE);
    let start = std::time::Instant::now();
    while !first_done.exists() {
        assert!(
            child.try_wait().unwrap().is_none(),
            "the batch ended before its first map was done"
        );
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "the first map never finished"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
    assert!(
        child.try_wait().unwrap().is_none(),
        "the batch finished before the kill: the test needs longer maps"
    );
    child.kill().unwrap();
    let _ = child.wait();
    check_outputs(&out);
    let status = run().status().unwrap();
    assert!(status.success());
    let rows = summary(&out);
    assert_eq!(rows.len(), 6);
    assert!(
        rows.iter()
            .all(|r| r["status"] == "ok" || r["status"] == "skipped"),
        "{rows:?}"
    );
    // The rerun skipped what the killed run had finished and ran the rest.
    assert_eq!(
        rows[0]["status"], "skipped",
        "m0 was done before the kill: {rows:?}"
    );
    assert!(
        rows.iter().any(|r| r["status"] == "ok"),
        "the killed run cannot have finished every map: {rows:?}"
    );
    let (json, npy) = check_outputs(&out);
    // Per map: solve.json, report.json, timings.json, done.json; plus summary.json.
    assert!(json > 6 * 4, "{json} JSON files");
    // Per map: potential_0.npy, and the planner's los_worst, los_crowded_seconds and clear_time.
    assert_eq!(npy, 6 * 4);
    for k in 0..6 {
        let d = out.join(format!("m{k}"));
        for f in std::fs::read_dir(&d).unwrap() {
            let name = f.unwrap().file_name().to_string_lossy().into_owned();
            assert!(
                !name.ends_with(".tmp"),
                "temporary file {name} left in {}",
                d.display()
            );
        }
    }
}

#[test]
fn simulate_tells_when_a_goal_less_group_will_not_move() {
    let dir = tempfile::tempdir().unwrap();
    let map = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("maps/fish_tank.json");
    let run = |local: &str| {
        let out = Command::new(env!("CARGO_BIN_EXE_crowdfield"))
            .args(["simulate", "--max-time", "0.5", "--local", local, "--out"])
            .arg(dir.path().join(local))
            .arg(&map)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let note = "group \"fish\" has no goals";
    assert!(run("none").contains(note));
    assert!(
        !run("boids").contains(note),
        "the boids layer moves them: no note"
    );
}

/// The fish tank's flock has no goal and never leaves: its report says `"complete": false`,
/// and the batch summary, JSON and CSV, says the same (it used to say `yes`).
#[test]
fn a_flock_that_never_leaves_is_not_complete_in_the_report_or_the_summary() {
    let dir = tempfile::tempdir().unwrap();
    let map = Path::new(env!("CARGO_MANIFEST_DIR")).join("maps/fish_tank.json");
    let out = dir.path().join("out");
    let o = batch()
        .args(["batch", "--simulate", "--quiet", "--max-time", "0.5", "--out"])
        .arg(&out)
        .arg(&map)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let report = std::fs::read_to_string(out.join("fish_tank/report.json")).unwrap();
    let report: serde_json::Value = serde_json::from_str(&report).unwrap();
    assert_eq!(report["complete"], false, "{report}");
    assert_eq!(summary(&out)[0]["complete"], false);
    assert_eq!(csv_cell(&out, "fish_tank", "complete"), "no");
}

/// The warnings `simulate` prints (a walking speed above `params.f_max`, an exit flow above
/// what experiments measure, the published model) are printed by `batch` too, prefixed with the map, and kept in the
/// summaries: a list in `summary.json`, one quoted `warnings` cell in `summary.csv`.
#[test]
fn batch_prints_and_summarises_the_warnings_simulate_prints() {
    let dir = tempfile::tempdir().unwrap();
    let bottleneck = Path::new(env!("CARGO_MANIFEST_DIR")).join("maps/bottleneck.json");
    let mut map: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(bottleneck).unwrap()).unwrap();
    map["groups"][0]["speed"] = serde_json::json!({"min": 1.2, "max": 2.0});
    // The published model, whose door flows exceed the experiments' (the second warning).
    map["model"] = serde_json::json!("continuum_crowds");
    let map_path = dir.path().join("door.json");
    std::fs::write(&map_path, map.to_string()).unwrap();

    let o = batch()
        .args(["simulate", "--quiet", "--max-time", "30", "--out"])
        .arg(dir.path().join("sim"))
        .arg(&map_path)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let simulate_warnings: Vec<String> = String::from_utf8_lossy(&o.stderr)
        .lines()
        .filter_map(|l| l.strip_prefix("warning: "))
        .map(|w| {
            // `simulate` names the map before the map's own warnings only.
            let prefix = format!("{}: ", map_path.display());
            w.strip_prefix(&prefix).unwrap_or(w).to_string()
        })
        .collect();
    // The speed above f_max, the door flow and the published model.
    assert_eq!(simulate_warnings.len(), 3, "{simulate_warnings:?}");

    let out = dir.path().join("out");
    let o = batch()
        .args(["batch", "--simulate", "--quiet", "--max-time", "30", "--out"])
        .arg(&out)
        .arg(&map_path)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    let row = &summary(&out)[0];
    let map_name = row["map"].as_str().unwrap();
    let listed: Vec<String> = row["warnings"]
        .as_array()
        .unwrap_or_else(|| panic!("no warnings list: {row}"))
        .iter()
        .map(|w| w.as_str().unwrap().to_string())
        .collect();
    assert_eq!(listed, simulate_warnings);
    for w in &listed {
        assert!(err.contains(&format!("warning: {map_name}: {w}\n")), "{w}: {err}");
    }
    let cell = csv_cell(&out, "door", "warnings");
    assert_eq!(cell, listed.join("; "));
    assert!(
        cell.contains("speed.max") && cell.contains("\"speed_law\": \"weidmann\""),
        "{cell}"
    );
    assert_eq!(
        cell.split("; ").count(),
        3,
        "no warning holds the separator: {cell}"
    );
}

#[test]
fn a_batch_never_deletes_files_it_did_not_write() {
    // The map's output folder is OUT/<stem>/; a user's file in it is never wiped.
    let dir = tempfile::tempdir().unwrap();
    let map = write_map(dir.path(), "plan", 20, 2);
    let out = dir.path().join("out");
    std::fs::create_dir_all(out.join("plan/notes")).unwrap();
    std::fs::write(out.join("plan/notes.txt"), "mine").unwrap();
    let o = batch()
        .args(["batch", "--out"])
        .arg(&out)
        .arg(&map)
        .output()
        .unwrap();
    assert!(!o.status.success());
    // stderr is a pipe here, not a terminal: the failure still shows there, not only in the summary.
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("failed: ") && err.contains("notes.txt") && err.contains("plan"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(out.join("plan/notes.txt")).unwrap(),
        "mine"
    );
    assert!(out.join("plan/notes").is_dir());
    let row = &summary(&out)[0];
    assert_eq!(row["status"], "failed");
    assert!(row["error"].as_str().unwrap().contains("did not write"), "{row}");

    // A folder holding only an interrupted run's outputs is cleared and redone: what a run
    // killed while writing leaves, its manifest naming the files it had begun.
    std::fs::remove_dir_all(out.join("plan")).unwrap();
    let mut owned =
        crowdfield::ownership::OwnedDir::open(&out.join("plan"), crowdfield::run::batch::BATCH_WRITER, false)
            .unwrap();
    std::fs::write(owned.claim("potential_0.npy").unwrap(), "half").unwrap();
    owned.claim("solve.json").unwrap();
    std::fs::write(out.join("plan/.solve.json.123.tmp"), "half").unwrap();
    let status = batch()
        .args(["batch", "--quiet", "--out"])
        .arg(&out)
        .arg(&map)
        .status()
        .unwrap();
    assert!(status.success());
    assert!(!out.join("plan/.solve.json.123.tmp").exists());
    check_outputs(&out);
}

#[test]
fn bad_batch_options_are_refused_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let map = write_map(dir.path(), "plan", 20, 2);
    let out = dir.path().join("out");
    for (flags, expected) in [
        (&["--jobs", "100000"][..], "--jobs 100000: expected at most"),
        (&["--jobs", "0"][..], "--jobs 0"),
        (&["--simulate", "--max-time=-1"][..], "--max-time -1"),
        (&["--simulate", "--max-time", "NaN"][..], "--max-time NaN"),
        // Every map would be solved, then refused for its step count.
        (
            &["--simulate", "--max-time", "1e300"][..],
            "--max-time 1e300: expected at most 1e6 s",
        ),
        (&["--shard", "3/2"][..], "--shard"),
    ] {
        let o = batch()
            .args(["batch", "--out"])
            .arg(&out)
            .arg(&map)
            .args(flags)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{flags:?}: {err}");
        assert!(
            err.contains(expected) && !err.contains("panicked"),
            "{flags:?}: {err}"
        );
        assert!(!out.exists(), "{flags:?}: nothing is solved or written");
    }
}

/// A batch's `solve.json` describes each group with the same keys, meaning the same, as
/// `solve`'s `summary.json` (it had `max_finite_potential_s` and no `goal_cells`,
/// `unreachable_free_cells`, `phi_min`, `passes`), and its `potential` names the file written.
#[test]
fn batch_solve_json_has_the_same_group_keys_as_solve_summary() {
    let dir = tempfile::tempdir().unwrap();
    let map = Path::new(env!("CARGO_MANIFEST_DIR")).join("maps/corridor.json");
    let solved = dir.path().join("solve");
    let o = batch()
        .args(["solve", "--quiet"])
        .arg(&map)
        .arg("--out")
        .arg(&solved)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let batched = dir.path().join("batch");
    let o = batch()
        .args(["batch", "--quiet"])
        .arg(&map)
        .arg("--out")
        .arg(&batched)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let read = |p: PathBuf| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap()
    };
    let summary = read(solved.join("summary.json"));
    let solve_json = read(batched.join("corridor/solve.json"));
    let keys = |v: &serde_json::Value| -> Vec<String> {
        let mut k: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
        k.sort();
        k
    };
    let (a, b) = (&summary["groups"][0], &solve_json["groups"][0]);
    assert_eq!(keys(a), keys(b), "summary.json: {a}\nsolve.json: {b}");
    for key in [
        "name",
        "goal_cells",
        "unreachable_cells",
        "unreachable_free_cells",
        "phi_min",
        "phi_max",
        "solver",
        "passes",
    ] {
        assert_eq!(a[key], b[key], "{key}");
    }
    assert_eq!(summary["grid"], solve_json["grid"]);
    for (root, group) in [(&solved, a), (&batched.join("corridor"), b)] {
        let potential = root.join(group["potential"].as_str().unwrap());
        assert!(potential.is_file(), "{}", potential.display());
        assert!(root.join(group["dir"].as_str().unwrap()).is_dir());
    }
}

/// `batch --simulate --model` runs every map on the model named, as `simulate --model` does:
/// the same report, and a batch without the option runs each map's own model (here the
/// bundled hall's `params` pick the published model). Changing the model redoes the map.
#[test]
fn batch_model_runs_every_map_on_the_model_named_as_simulate_does() {
    let dir = tempfile::tempdir().unwrap();
    let map = Path::new(env!("CARGO_MANIFEST_DIR")).join("maps/bottleneck.json");
    let report = |path: &Path| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    };
    let run = |args: &[&str]| {
        let o = batch().args(args).output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    };
    let out = dir.path().join("out");
    let sim = dir.path().join("sim");
    let (out_s, sim_s, map_s) = (
        out.to_str().unwrap(),
        sim.to_str().unwrap(),
        map.to_str().unwrap(),
    );
    let common = ["--quiet", "--max-time", "8", "--model", "continuum_crowds"];
    run(&[&["batch", "--simulate", "--out", out_s, map_s][..], &common].concat());
    run(&[&["simulate", map_s, "--out", sim_s][..], &common].concat());
    let (from_batch, from_simulate) = (
        report(&out.join("bottleneck/report.json")),
        report(&sim.join("report.json")),
    );
    assert_eq!(from_batch["model"], "continuum_crowds");
    for key in ["model", "speed_law", "steps", "total", "groups"] {
        assert_eq!(from_batch[key], from_simulate[key], "{key}");
    }
    // Without --model the map's own (pedestrian: the bundled bottleneck has no params), and
    // the changed option is not taken for the finished run.
    run(&[
        "batch",
        "--simulate",
        "--quiet",
        "--max-time",
        "8",
        "--out",
        out_s,
        map_s,
    ]);
    assert_eq!(report(&out.join("bottleneck/report.json"))["model"], "pedestrian");
    assert_eq!(summary(&out)[0]["status"], "ok");
}

/// The top level of a batch's `--out` gets the same protection as each map's folder: a user's
/// `summary.csv` or `index.html` there refuses the batch before any map runs (naming the file
/// and `--force`) and is left as it is; a rerun over the batch's own summaries needs no
/// `--force`, and the batch's manifest there is never taken for a map.
#[test]
fn a_batch_never_replaces_a_users_summary_or_index_page() {
    let dir = tempfile::tempdir().unwrap();
    let maps = dir.path().join("maps");
    std::fs::create_dir(&maps).unwrap();
    write_map(&maps, "plan", 20, 2);
    for mine in ["summary.csv", "index.html"] {
        let out = dir.path().join(format!("out-{mine}"));
        std::fs::create_dir(&out).unwrap();
        std::fs::write(out.join(mine), "mine").unwrap();
        let o = batch()
            .args(["batch", "--simulate", "--quiet", "--max-time", "1", "--out"])
            .arg(&out)
            .arg(&maps)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{mine}: {err}");
        assert!(
            err.contains(&format!("\"{mine}\"")) && err.contains("--force"),
            "{mine}: {err}"
        );
        assert_eq!(std::fs::read_to_string(out.join(mine)).unwrap(), "mine");
        assert!(!out.join("plan").exists(), "{mine}: maps ran before the refusal");
    }
    // The batch's own top level, with `--out` the input folder itself: reruns need no force.
    for _ in 0..2 {
        let o = batch()
            .args(["batch", "--simulate", "--quiet", "--max-time", "1", "--out"])
            .arg(&maps)
            .arg(&maps)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert_eq!(summary(&maps).len(), 1, "{:?}", summary(&maps));
    }
    assert!(maps.join("index.html").is_file());
    // A rerun without --simulate removes the batch's own page, which would pass for its own,
    // and leaves a user's.
    let rerun = |out: &Path| {
        let o = batch()
            .args(["batch", "--quiet", "--out"])
            .arg(out)
            .arg(maps.join("plan.json"))
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    };
    rerun(&maps);
    assert!(!maps.join("index.html").exists());
    let mine = dir.path().join("out-index.html");
    rerun(&mine);
    assert_eq!(std::fs::read_to_string(mine.join("index.html")).unwrap(), "mine");
}

/// A simulated map cut short by `--max-time` gets `simulate`'s "did not complete" warning in
/// `summary.json` and on stderr.
#[test]
fn a_batch_run_cut_short_says_so_in_the_summary_and_on_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let map = write_map(dir.path(), "long", 80, 4);
    let out = dir.path().join("out");
    let o = batch()
        .args(["batch", "--simulate", "--quiet", "--max-time", "2", "--out"])
        .arg(&out)
        .arg(&map)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    let row = &summary(&out)[0];
    assert_eq!(row["complete"], false, "{row}");
    let warnings: Vec<&str> = row["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap())
        .collect();
    let cut = warnings
        .iter()
        .find(|w| w.contains("4 agent(s) still inside") && w.contains("did not complete"))
        .unwrap_or_else(|| panic!("{warnings:?}"));
    let map_name = row["map"].as_str().unwrap();
    assert!(err.contains(&format!("warning: {map_name}: {cut}")), "{err}");
    let index = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert_eq!(
        index.matches("did not complete").count(),
        1,
        "said once on the page"
    );
}

/// `%XX` sequences of `href` decoded to bytes (the path a browser opens).
fn percent_decode(href: &str) -> Vec<u8> {
    let bytes = href.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap();
            out.push(u8::from_str_radix(hex, 16).unwrap());
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    out
}

/// A map's file name never becomes a script, a fragment or a query in the batch's index page:
/// every link is `./` and the percent-encoded path of the map's `report.html`, which it opens.
#[test]
fn index_links_are_relative_percent_encoded_paths_that_open_the_report() {
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().unwrap();
    let maps = dir.path().join("maps");
    std::fs::create_dir(&maps).unwrap();
    let stems = [
        "javascript:alert(document.domain);void(0)",
        "JaVaScRiPt:alert(1)",
        "a#b?c=1 d%20",
    ];
    for stem in stems {
        write_map(&maps, stem, 20, 2);
    }
    let out = dir.path().join("out");
    let o = batch()
        .args(["batch", "--simulate", "--quiet", "--max-time", "1", "--out"])
        .arg(&out)
        .arg(&maps)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let page = std::fs::read_to_string(out.join("index.html")).unwrap();
    let hrefs: Vec<&str> = page
        .split("href=\"")
        .skip(1)
        .map(|rest| &rest[..rest.find('"').unwrap()])
        .collect();
    assert_eq!(hrefs.len(), stems.len(), "{page}");
    for href in &hrefs {
        assert!(href.starts_with("./"), "{href}");
        assert!(!href.contains([':', '#', '?', ' ', '&', '<']), "{href}");
        let path = out.join(std::ffi::OsStr::from_bytes(&percent_decode(&href[2..])));
        assert!(path.is_file(), "{href} opens no file");
        assert_eq!(path.file_name().unwrap(), "report.html");
    }
    assert!(
        hrefs.contains(&"./javascript%3Aalert%28document.domain%29%3Bvoid%280%29/report.html"),
        "{hrefs:?}"
    );
    assert!(
        hrefs.contains(&"./a%23b%3Fc%3D1%20d%2520/report.html"),
        "{hrefs:?}"
    );
}
