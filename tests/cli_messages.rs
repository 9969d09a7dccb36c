//! What the commands print for a user: layer names as the flags spell them, numbers rounded,
//! counts with the right plural, negative numbers reported by the program's own checks, the
//! documented `--timing` key order, help texts, maps without groups, and reruns into the same
//! output folder.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn corridor() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("maps/corridor.json")
}

fn crowdfield(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_crowdfield"))
        .args(args)
        .output()
        .unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn simulate_names_the_local_layer_as_the_flag_does_and_counts_one_agent_in_the_singular() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let o = crowdfield(&["simulate", s(&corridor()), "--out", s(&out), "--local", "orca"]);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("local layer: orca on "), "{err}");
    assert!(!err.contains("Orca"), "{err}");
    assert!(err.contains(": 1 agent out in "), "{err}");
    assert!(!err.contains("1 agents"), "{err}");
    let o = crowdfield(&["simulate", s(&corridor()), "--out", s(&out), "--max-time", "1"]);
    let err = stderr(&o);
    assert!(
        err.contains("local layer: none;") || err.contains("local layer: none\n"),
        "{err}"
    );
    assert!(err.contains("0 of 1 agent out by 1.0 s; 1 remains"), "{err}");
}

/// Boids act only on groups with a `boids` block (or goal-less ones, which flock): `simulate`
/// names them, and on a map with none runs the boids mode as what is left of it, saying so
/// (even with `--quiet`), with the very walk of that mode.
#[test]
fn simulate_names_the_groups_boids_act_on_and_runs_without_boids_when_there_are_none() {
    let dir = tempfile::tempdir().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let fish = root.join("maps/fish_tank.json");
    let bottleneck = root.join("maps/bottleneck.json");
    let run = |map: &Path, local: &str, name: &str| {
        let out = dir.path().join(name);
        let o = crowdfield(&[
            "simulate",
            s(map),
            "--out",
            s(&out),
            "--local",
            local,
            "--max-time",
            "20",
            "--quiet",
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        (stderr(&o), std::fs::read(out.join("report.json")).unwrap())
    };
    for (local, runs_as) in [("boids", "none"), ("boids+orca", "orca")] {
        let (err, report) = run(&bottleneck, local, local);
        let want = format!(
            "warning: local layer: {local}, but no group of {} has a `boids` block: boids would \
             steer no one, so the run uses --local {runs_as}",
            bottleneck.display()
        );
        assert!(err.contains(&want), "{local}: {err}");
        let (_, plain) = run(&bottleneck, runs_as, &format!("plain-{runs_as}"));
        assert!(report == plain, "--local {local} walks as --local {runs_as}");
        let out = dir.path().join("fish");
        let o = crowdfield(&[
            "simulate",
            s(&fish),
            "--out",
            s(&out),
            "--local",
            local,
            "--max-time",
            "0.2",
        ]);
        let err = stderr(&o);
        assert!(o.status.success(), "{err}");
        assert!(err.contains("boids parameters: group \"fish\""), "{local}: {err}");
        assert!(!err.contains("steer no one"), "{local}: {err}");
    }
    let o = crowdfield(&[
        "simulate",
        s(&corridor()),
        "--out",
        s(&dir.path().join("o")),
        "--local",
        "orca",
    ]);
    assert!(!stderr(&o).contains("boids"), "{}", stderr(&o));
}

#[test]
fn solve_prints_the_potential_range_to_three_decimals() {
    let dir = tempfile::tempdir().unwrap();
    let o = crowdfield(&["solve", s(&corridor()), "--out", s(&dir.path().join("out"))]);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    let line = err
        .lines()
        .find(|l| l.contains(" phi "))
        .expect("a phi range line");
    let range = line.split(" phi ").nth(1).unwrap().split(" s,").next().unwrap();
    let (lo, hi) = range.split_once(" .. ").expect("phi LO .. HI");
    for v in [lo, hi] {
        let decimals = v.split_once('.').map_or(0, |(_, d)| d.len());
        assert_eq!(decimals, 3, "{line}");
        assert!(v.parse::<f64>().unwrap() >= 0.0, "{line}");
    }
    assert!(err.contains("solved 1 group in"), "{err}");
}

#[test]
fn negative_numbers_reach_the_programs_own_checks() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let missing = dir.path().join("missing.npy");
    let map = corridor();
    let cases: [(Vec<&str>, &str); 4] = [
        (
            vec!["simulate", s(&map), "--out", s(&out), "--max-time", "-5"],
            "--max-time: -5: expected a positive, finite number of seconds",
        ),
        (
            vec!["simulate", s(&map), "--out", s(&out), "--dt", "-0.5"],
            "--dt: -0.5",
        ),
        (
            vec![
                "eikonal",
                "--speed",
                s(&missing),
                "--goal",
                s(&missing),
                "--out",
                s(&out),
                "--cell-size",
                "-1",
            ],
            "--cell-size: -1 is not a positive finite length",
        ),
        (
            vec![
                "batch",
                s(&map),
                "--out",
                s(&out),
                "--simulate",
                "--max-time",
                "-3",
            ],
            "--max-time -3: expected a positive number of seconds",
        ),
    ];
    for (args, want) in cases {
        let o = crowdfield(&args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
        assert!(
            !err.contains("unexpected argument") && !err.contains("'--"),
            "{args:?}: {err}"
        );
    }
    // A negative whole number is named as an invalid value, not as an unexpected argument
    // (`solve --order` and the `bench` options used to say "unexpected argument '-1'").
    for (args, want) in [
        (
            vec!["simulate", s(&map), "--out", s(&out), "--seed", "-1"],
            "invalid value '-1' for '--seed",
        ),
        (
            vec!["solve", s(&map), "--out", s(&out), "--order", "-1"],
            "invalid value '-1' for '--order",
        ),
        (
            vec!["bench", "eikonal", "--order", "-1"],
            "invalid value '-1' for '--order",
        ),
        (
            vec!["bench", "eikonal", "--repeats", "-1"],
            "invalid value '-1' for '--repeats",
        ),
        (
            vec!["bench", "eikonal", "--sizes", "-1"],
            "invalid value '-1' for '--sizes",
        ),
        (
            vec!["bench", "sim", s(&map), "--steps", "-1"],
            "invalid value '-1' for '--steps",
        ),
        (
            vec!["bench", "local", "--agents", "-1"],
            "invalid value '-1' for '--agents",
        ),
        (
            vec!["bench", "local", "--steps", "-1"],
            "invalid value '-1' for '--steps",
        ),
        (vec!["bench", "local", "--density", "-1"], "--density -1"),
    ] {
        let o = crowdfield(&args);
        let err = stderr(&o);
        assert!(
            err.contains(want) && !err.contains("unexpected argument"),
            "{args:?}: {err}"
        );
        assert!(!o.status.success(), "{args:?}");
    }
    assert!(!out.exists());
}

#[test]
fn eikonal_timing_keys_come_in_the_documented_order() {
    let dir = tempfile::tempdir().unwrap();
    let (speed, goal, out) = (
        dir.path().join("speed.npy"),
        dir.path().join("goal.npy"),
        dir.path().join("phi.npy"),
    );
    crowdfield::io::write_npy(&speed, ndarray::Array2::from_elem((4, 5), 1.0f64).view()).unwrap();
    let mut g = ndarray::Array2::from_elem((4, 5), false);
    g[(0, 0)] = true;
    crowdfield::io::write_npy(&goal, g.view()).unwrap();
    let o = crowdfield(&[
        "eikonal",
        "--speed",
        s(&speed),
        "--goal",
        s(&goal),
        "--out",
        s(&out),
        "--timing",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let line = String::from_utf8(o.stdout).unwrap();
    let keys = [
        "\"rows\":4",
        "\"cols\":5",
        "\"order\":1",
        "\"solver\":",
        "\"solve_seconds\":",
    ];
    let at: Vec<usize> = keys
        .iter()
        .map(|k| line.find(k).unwrap_or_else(|| panic!("{k} missing: {line}")))
        .collect();
    assert!(at.windows(2).all(|w| w[0] < w[1]), "{line}");
}

#[test]
fn bench_eikonal_prints_no_table_before_a_bad_size() {
    let o = crowdfield(&["bench", "eikonal", "--sizes", "17", "1", "--repeats", "1"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(String::from_utf8_lossy(&o.stdout), "", "nothing on stdout");
    assert!(
        stderr(&o).contains("--sizes 1: expected at least 3"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn help_texts_fit_their_command_and_show_defaults() {
    let help = String::from_utf8(crowdfield(&["eikonal", "--help"]).stdout).unwrap();
    assert!(help.contains("--backend"), "{help}");
    assert!(
        !help.contains("over groups"),
        "a raw solve has one source set: {help}"
    );
    let help = String::from_utf8(crowdfield(&["simulate", "--help"]).stdout).unwrap();
    let speed_law = help.split("--speed-law").nth(1).unwrap();
    let speed_law = speed_law.split("\n      --").next().unwrap();
    assert!(speed_law.contains("[default: the map's"), "{speed_law}");
}

/// `--local` lists its values in `simulate --help` and `-h`, as the other choices do, and a
/// mistyped one is answered with the list.
#[test]
fn the_local_layers_are_listed_in_help_and_in_the_error_for_a_bad_one() {
    let help = String::from_utf8(crowdfield(&["simulate", "--help"]).stdout).unwrap();
    let local = help.split("--local <").nth(1).unwrap();
    let local = local.split("\n      --").next().unwrap();
    assert!(local.contains("Possible values:"), "{local}");
    for value in ["none", "boids", "orca", "boids+orca"] {
        assert!(local.contains(&format!("- {value}:")), "{value}: {local}");
    }
    let short = String::from_utf8(crowdfield(&["simulate", "-h"]).stdout).unwrap();
    let want = "[possible values: none, boids, orca, boids+orca]";
    // The option's short help: its line, and the next when clap puts the text below the name.
    let entry = short.split("--local <").nth(1).unwrap();
    let entry = entry.split("\n  -").next().unwrap();
    assert!(entry.contains(want), "{entry}");
    let o = crowdfield(&["simulate", s(&corridor()), "--out", "unused", "--local", "bogus"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains(want), "{}", stderr(&o));
}

/// `--backend auto` keeps a grid under 512² cells on the CPU, where the CPU is faster (even
/// against an NVIDIA H200), and says so with the count, whatever GPU the machine has.
#[test]
fn auto_keeps_small_grids_on_the_cpu_and_says_why() {
    let dir = std::env::temp_dir().join(format!("crowdfield-auto-{}", std::process::id()));
    let want = "(auto: 1344 cells, fewer than the 262144 (512²) from which the GPU overtakes the CPU";
    let o = crowdfield(&[
        "solve",
        s(&corridor()),
        "--out",
        s(&dir.join("solve")),
        "--backend",
        "auto",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!("cpu: fast marching (first order) {want}")),
        "{}",
        stderr(&o)
    );
    let o = crowdfield(&[
        "simulate",
        s(&corridor()),
        "--out",
        s(&dir.join("sim")),
        "--backend",
        "auto",
        "--max-time",
        "1",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!("potentials: cpu: fast marching {want}")),
        "{}",
        stderr(&o)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Help texts are read by people: no rustdoc link such as [`GpuContext::for_auto`] shows in them.
#[test]
fn help_texts_hold_no_rustdoc_links() {
    let commands: [&[&str]; 11] = [
        &[],
        &["solve"],
        &["eikonal"],
        &["image"],
        &["validate"],
        &["simulate"],
        &["batch"],
        &["bench"],
        &["bench", "eikonal"],
        &["bench", "sim"],
        &["bench", "local"],
    ];
    for command in commands {
        for flag in ["--help", "-h"] {
            let o = crowdfield(&[command, &[flag]].concat());
            let help = String::from_utf8(o.stdout).unwrap();
            assert!(o.status.success() && help.contains("Usage:"), "{command:?}");
            assert!(
                !help.contains("[`") && !help.contains("`]") && !help.contains("::"),
                "{command:?} {flag}: {help}"
            );
        }
    }
}

/// A map the loader accepts but that has nothing to solve or walk: `"groups": []`.
fn map_without_groups(dir: &Path) -> PathBuf {
    let path = dir.join("empty.json");
    std::fs::write(
        &path,
        r#"{"version": 1, "name": "empty", "grid": {"cols": 8, "rows": 4, "cell_size": 0.5}, "groups": []}"#,
    )
    .unwrap();
    assert!(crowdfield::map::load(&path).is_ok(), "the loader accepts it");
    path
}

#[test]
fn a_map_without_groups_is_an_error_for_validate_solve_and_simulate() {
    let dir = tempfile::tempdir().unwrap();
    let map = map_without_groups(dir.path());
    let want = format!(
        "{}: groups: no groups: a map needs at least one group with a goal",
        map.display()
    );
    let o = crowdfield(&["validate", s(&map)]);
    assert_eq!(o.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains(&want), "{stdout}");
    assert!(!stdout.contains(": ok"), "{stdout}");
    assert!(stderr(&o).contains("1 of 1 map has problems"), "{}", stderr(&o));
    let out = dir.path().join("out");
    for cmd in ["solve", "simulate"] {
        let o = crowdfield(&[cmd, s(&map), "--out", s(&out)]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{cmd}: {err}");
        assert!(err.contains(&want), "{cmd}: {err}");
    }
    assert!(!out.exists());
}

/// `validate maps/*.json` and `batch maps/*.json` name `maps/map.schema.json` too: both skip
/// it, saying so, where `validate` used to report it as a bad map (and `batch` as a failed one).
#[test]
fn validate_and_batch_skip_json_schemas_given_by_name() {
    let maps_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("maps");
    let mut maps: Vec<PathBuf> = std::fs::read_dir(&maps_dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    maps.sort();
    let schema = maps_dir.join("map.schema.json");
    assert!(maps.contains(&schema));
    let skipped = format!("skipped {}: a JSON Schema", schema.display());
    let args: Vec<&str> = maps.iter().map(|p| s(p)).collect();
    let o = crowdfield(&[&["validate"][..], &args].concat());
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{stdout}{}", stderr(&o));
    assert!(!stdout.contains("map.schema.json"), "{stdout}");
    assert_eq!(stdout.matches(": ok\n").count(), maps.len() - 1, "{stdout}");
    assert!(stderr(&o).contains(&skipped), "{}", stderr(&o));

    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let o = crowdfield(&["batch", "--quiet", "--out", s(&out), s(&corridor()), s(&schema)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains(&skipped), "{}", stderr(&o));
    let summary = std::fs::read_to_string(out.join("summary.json")).unwrap();
    assert!(!summary.contains("map.schema.json"), "{summary}");

    let o = crowdfield(&["validate", s(&schema)]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("no map given"), "{}", stderr(&o));
}

#[test]
fn a_batch_writing_into_its_input_folder_skips_its_own_summary_on_a_rerun() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(corridor(), dir.path().join("corridor.json")).unwrap();
    for run in 0..2 {
        let o = Command::new(env!("CARGO_BIN_EXE_crowdfield"))
            .args(["batch", ".", "--out", ".", "--quiet"])
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert!(o.status.success(), "run {run}: {}", stderr(&o));
        let summary = std::fs::read_to_string(dir.path().join("summary.json")).unwrap();
        let outcomes: serde_json::Value = serde_json::from_str(&summary).unwrap();
        let outcomes = outcomes.as_array().unwrap();
        assert_eq!(outcomes.len(), 1, "run {run}: only the map: {summary}");
        assert!(outcomes[0]["map"].as_str().unwrap().ends_with("corridor.json"));
    }
    // A file named like a summary outside the output folder is still a map input.
    let elsewhere = tempfile::tempdir().unwrap();
    assert!(!crowdfield::run::batch::is_summary_of(
        &dir.path().join("summary.json"),
        elsewhere.path()
    ));
    assert!(crowdfield::run::batch::is_summary_of(
        &dir.path().join("summary-shard-0-of-4.json"),
        dir.path()
    ));
    assert!(!crowdfield::run::batch::is_summary_of(
        &dir.path().join("corridor.json"),
        dir.path()
    ));
}

#[test]
fn a_rerun_without_trajectories_removes_the_earlier_runs_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let traj = out.join("trajectories.csv");
    let map = corridor();
    let base = [
        "simulate",
        s(&map),
        "--out",
        s(&out),
        "--quiet",
        "--max-time",
        "2",
    ];
    let o = crowdfield(&[&base[..], &["--trajectories"]].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(traj.is_file());
    let o = crowdfield(&base);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!traj.exists(), "a stale trajectories.csv is left");
    assert!(out.join("report.json").is_file());
}

/// The `frame_NNNNN.png` files of `dir/frames`, sorted.
fn frame_files(dir: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir.join("frames")) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("frame_"))
        .collect();
    names.sort();
    names
}

/// A rerun without `--frames` removes an earlier run's frames (and their folder when nothing
/// else is in it), as it removes its trajectories; it used to leave them.
#[test]
fn a_rerun_without_frames_removes_the_earlier_runs_frames_and_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let map = corridor();
    let base = [
        "simulate",
        s(&map),
        "--out",
        s(&out),
        "--quiet",
        "--max-time",
        "2",
    ];
    let with_frames = [&base[..], &["--frames", "5"]].concat();
    let o = crowdfield(&with_frames);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(frame_files(&out).contains(&"frame_00000.png".to_string()));
    let o = crowdfield(&base);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(frame_files(&out), Vec::<String>::new(), "stale frames are left");
    assert!(!out.join("frames").exists(), "the emptied folder is left");

    // Files that are not this command's frames refuse the folder; forced, they stay.
    let o = crowdfield(&with_frames);
    assert!(o.status.success(), "{}", stderr(&o));
    std::fs::write(out.join("frames/notes.txt"), "mine").unwrap();
    std::fs::write(out.join("frames/frame_best.png"), "mine").unwrap();
    let o = crowdfield(&base);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("\"frames/frame_best.png\""), "{}", stderr(&o));
    let o = crowdfield(&[&base[..], &["--force"]].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(frame_files(&out), ["frame_best.png"]);
    assert!(out.join("frames/notes.txt").is_file());
}

#[test]
fn the_order_of_the_update_reads_as_words() {
    use crowdfield::eikonal::Order;
    assert_eq!(Order::First.to_string(), "first order");
    assert_eq!(Order::Second.to_string(), "second order");
}

/// A walking speed typed in km/h, or above `params.f_max` under the published model (which
/// caps walkers at f_max), is valid but warned about by `validate` (still `ok`, exit 0) and by
/// `simulate` before its run.
#[test]
fn walking_speeds_that_look_wrong_are_warned_about() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(corridor()).unwrap();
    let published = text.replacen(
        "\"version\": 1,",
        "\"version\": 1,\n  \"model\": \"continuum_crowds\",",
        1,
    );
    for (speed, want, text) in [("5", "km/h", &text), ("2", "params.f_max", &published)] {
        let map = dir.path().join(format!("fast{speed}.json"));
        std::fs::write(&map, text.replace("\"max\": 1.34", &format!("\"max\": {speed}"))).unwrap();
        let o = crowdfield(&["validate", s(&map)]);
        let stdout = String::from_utf8_lossy(&o.stdout);
        assert_eq!(o.status.code(), Some(0), "{stdout}");
        assert!(stdout.contains(": ok"), "{stdout}");
        assert!(
            stdout.contains("warning: groups[0].speed.max") && stdout.contains(want),
            "{stdout}"
        );
        let out = dir.path().join("out");
        let o = crowdfield(&["simulate", "--quiet", s(&map), "--out", s(&out)]);
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(stderr(&o).contains(want), "{}", stderr(&o));
    }
    let o = crowdfield(&["validate", s(&corridor())]);
    assert!(!String::from_utf8_lossy(&o.stdout).contains("warning"));
}

/// `--max-time` shorter than one time step is refused, naming both; a limit that is not a
/// multiple of the step ends the run at the last whole step before it, never after (the report
/// said `end_time` 0.1 for `--max-time 0.05`).
#[test]
fn a_time_limit_shorter_than_a_step_is_refused_and_no_run_ends_past_its_limit() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let map = corridor();
    let o = crowdfield(&[
        "simulate",
        s(&map),
        "--out",
        s(&out),
        "--max-time",
        "0.05",
        "--dt",
        "0.1",
    ]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("--max-time: 0.05 s is shorter than one time step (0.1 s)"),
        "{err}"
    );
    let help = String::from_utf8(crowdfield(&["simulate", "--help"]).stdout).unwrap();
    assert!(
        help.contains("A --max-time shorter than one step is refused"),
        "{help}"
    );
    for (max_time, steps) in [("0.1", 1), ("0.35", 3), ("1", 10)] {
        let o = crowdfield(&[
            "simulate",
            "--quiet",
            s(&map),
            "--out",
            s(&out),
            "--max-time",
            max_time,
            "--dt",
            "0.1",
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        let report: serde_json::Value =
            serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap();
        let end = report["end_time"].as_f64().unwrap();
        let limit: f64 = max_time.parse().unwrap();
        assert!(end <= limit, "--max-time {max_time}: end_time {end}");
        assert_eq!(report["steps"], steps, "--max-time {max_time}");
    }
}

/// A map for the exit-flow warning: 30 walkers in a 3 m square walk 4 m to a goal strip as high
/// as the room, which claims to be `width` wide; `params` as given.
fn fast_exit_map(dir: &Path, name: &str, width: f64, params: serde_json::Value) -> PathBuf {
    let map = serde_json::json!({
        "version": 1,
        "name": name,
        "grid": {"cols": 16, "rows": 8, "cell_size": 0.5},
        "params": params,
        "groups": [{
            "name": "walkers",
            "goals": [{"rect": {"min": [7.0, 0.0], "max": [8.0, 4.0]}, "name": "door", "width": width}],
            "spawns": [{"rect": {"min": [0.0, 0.5], "max": [3.0, 3.5]}, "count": 30}],
            "speed": {"min": 1.2, "max": 1.4}
        }]
    });
    let path = dir.join(format!("{name}.json"));
    std::fs::write(&path, serde_json::to_string_pretty(&map).unwrap()).unwrap();
    path
}

/// The warning about an exit faster than bottleneck experiments suggests only the calibration
/// params the map does not already have; with all of them it says so and points at the exit's
/// `width` (here declared 0.25 m for a 4 m opening) instead of suggesting what is there.
#[test]
fn the_exit_flow_warning_suggests_only_params_the_map_lacks() {
    let dir = tempfile::tempdir().unwrap();
    let calibrated =
        serde_json::json!({"speed_law": "weidmann", "density_window": 1.0, "density_at_walker": true});
    let partly = serde_json::json!({"speed_law": "weidmann", "density_window": 1.0});
    let cases = [
        ("calibrated", calibrated, None),
        ("partly", partly, Some("\"density_at_walker\": true")),
        (
            "defaults",
            serde_json::json!({}),
            Some("\"speed_law\": \"weidmann\""),
        ),
    ];
    for (name, params, suggested) in cases {
        let map = fast_exit_map(dir.path(), name, 0.25, params);
        let out = dir.path().join(format!("out_{name}"));
        let o = crowdfield(&["simulate", "--quiet", s(&map), "--out", s(&out)]);
        let err = stderr(&o);
        assert!(o.status.success(), "{err}");
        let line = err
            .lines()
            .find(|l| l.contains("persons/(m·s)"))
            .unwrap_or_else(|| panic!("{name}: no exit-flow warning: {err}"));
        assert!(
            !line.contains(';'),
            "a batch's summary.csv joins warnings with '; ': {line}"
        );
        match suggested {
            None => {
                assert!(line.contains("already has the calibrated params"), "{line}");
                assert!(line.contains("\"width\""), "{line}");
                assert!(
                    !line.contains("adding") && !line.contains("bring door flows"),
                    "{line}"
                );
            }
            Some(want) => {
                let advice = line.split("likely too short (").nth(1).unwrap();
                assert!(advice.contains(want), "{name}: {line}");
                if name == "partly" {
                    let suggestion = advice.split("adding").nth(1).unwrap();
                    assert!(!suggestion.contains("speed_law"), "{line}");
                    assert!(!suggestion.contains("density_window"), "{line}");
                }
            }
        }
    }
    // The same calibrated map with its door's real width passes experiment-like flows: no warning.
    let calibrated =
        serde_json::json!({"speed_law": "weidmann", "density_window": 1.0, "density_at_walker": true});
    let map = fast_exit_map(dir.path(), "honest", 4.0, calibrated);
    let out = dir.path().join("out_honest");
    let o = crowdfield(&["simulate", "--quiet", s(&map), "--out", s(&out)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stderr(&o).contains("persons/(m·s)"), "{}", stderr(&o));
}

/// A spawn area asked for far more agents than fit is refused naming the file, the count's
/// JSON path, the value and how many fit, by `validate` and `simulate` alike.
#[test]
fn an_overfull_spawn_area_names_its_count_and_how_many_fit() {
    let dir = tempfile::tempdir().unwrap();
    let map = serde_json::json!({
        "version": 1,
        "name": "packed",
        "grid": {"cols": 20, "rows": 10, "cell_size": 0.5},
        "groups": [{
            "name": "walkers",
            "goals": [{"rect": {"min": [9.0, 0.0], "max": [10.0, 5.0]}}],
            "spawns": [{"rect": {"min": [1.0, 1.0], "max": [3.0, 3.0]}, "count": 100000, "name": "pen"}],
            "radius": 0.3,
            "speed": {"min": 1.2, "max": 1.4}
        }]
    });
    let path = dir.path().join("packed.json");
    std::fs::write(&path, serde_json::to_string_pretty(&map).unwrap()).unwrap();
    let fit = {
        let scene_map = {
            let mut m = map.clone();
            m["groups"][0]["spawns"][0]["count"] = 1.into();
            let p = dir.path().join("one.json");
            std::fs::write(&p, m.to_string()).unwrap();
            crowdfield::map::load(&p).unwrap()
        };
        let spawn = &scene_map.groups[0].spawns[0];
        crowdfield::sim::spawn::area_capacity(
            &scene_map.grid,
            &spawn.area.mask,
            &scene_map.obstacle,
            scene_map.groups[0].radius,
        )
    };
    assert!(fit > 0 && fit < 16, "{fit} agents fit in 2 m x 2 m");
    let want = format!(
        "{}: groups[0].spawns[0].count: 100000: the area 'pen' (4 m² of free cells) holds at most {fit} agents",
        path.display()
    );
    let o = crowdfield(&["validate", s(&path)]);
    assert_eq!(o.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains(&want), "{stdout}");
    assert!(stdout.contains(&format!("lower the count to {fit}")), "{stdout}");
    let out = dir.path().join("out");
    let o = crowdfield(&["simulate", s(&path), "--out", s(&out)]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains(&want), "{}", stderr(&o));
    assert!(!stderr(&o).contains("panick"), "{}", stderr(&o));

    // Bodies smaller than cells: the limit is one agent per free cell, and the message says so.
    let mut m = map.clone();
    m["groups"][0]["radius"] = 0.2.into();
    std::fs::write(&path, m.to_string()).unwrap();
    let o = crowdfield(&["validate", s(&path)]);
    assert_eq!(o.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&o.stdout);
    let want = format!(
        "{}: groups[0].spawns[0].count: 100000: the area 'pen' (4 m², 16 free cells) takes at most 16 agents",
        path.display()
    );
    assert!(stdout.contains(&want), "{stdout}");

    // Just over what fits (fewer than the free cells): the same message, from placing them.
    let mut m = map.clone();
    m["groups"][0]["spawns"][0]["count"] = (fit + 1).into();
    std::fs::write(&path, m.to_string()).unwrap();
    let o = crowdfield(&["simulate", s(&path), "--out", s(&out)]);
    assert_eq!(o.status.code(), Some(1));
    let want = format!(
        "{}: groups[0].spawns[0].count: {}: the area 'pen' (4 m² of free cells) holds at most {fit} agents",
        path.display(),
        fit + 1
    );
    assert!(stderr(&o).contains(&want), "{}", stderr(&o));
}

#[test]
fn simulate_names_its_report_page_and_folder_on_stdout_even_when_quiet() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let map = corridor();
    for quiet in [false, true] {
        let mut args = vec!["simulate", s(&map), "--max-time", "2", "--out", s(&out)];
        if quiet {
            args.push("--quiet");
        }
        let o = crowdfield(&args);
        assert!(o.status.success(), "{}", stderr(&o));
        let stdout = String::from_utf8_lossy(&o.stdout);
        assert_eq!(
            stdout,
            format!(
                "report: {}\nall files: {}\n",
                out.join("report.html").display(),
                out.display()
            ),
            "quiet {quiet}"
        );
        assert!(out.join("report.html").is_file());
        assert!(!stderr(&o).contains("wrote "), "{}", stderr(&o));
    }
}

#[test]
fn a_trajectory_interval_beyond_the_run_or_of_no_steps_is_refused_with_the_option() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    for (every, want) in [
        (
            "1e300s",
            r#"--trajectory-every "1e300s": 1e301 steps of 0.1 s: expected at most 20 steps"#,
        ),
        (
            "21",
            r#"--trajectory-every "21": 21 steps of 0.1 s: expected at most 20 steps, the whole run (--max-time 2.0 s)"#,
        ),
        ("0", r#"--trajectory-every "0": expected at least 1 step"#),
        (
            "infs",
            r#"--trajectory-every "infs": expected a positive number of seconds"#,
        ),
    ] {
        let o = crowdfield(&[
            "simulate",
            s(&corridor()),
            "--max-time",
            "2",
            "--dt",
            "0.1",
            "--quiet",
            "--trajectory-every",
            every,
            "--out",
            s(&out),
        ]);
        assert_eq!(o.status.code(), Some(1), "{every}");
        assert!(stderr(&o).contains(want), "{every}: {}", stderr(&o));
        assert!(!out.exists(), "{every}: refused before the folder is made");
    }
    let o = crowdfield(&[
        "simulate",
        s(&corridor()),
        "--max-time",
        "2",
        "--dt",
        "0.1",
        "--quiet",
        "--trajectory-every",
        "2s",
        "--out",
        s(&out),
    ]);
    assert!(o.status.success(), "the whole run is allowed: {}", stderr(&o));
}

#[test]
fn solve_draws_the_map_with_its_people_goals_and_spawn_areas() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let map = Path::new(env!("CARGO_MANIFEST_DIR")).join("maps/bottleneck.json");
    let o = crowdfield(&["solve", s(&map), "--quiet", "--out", s(&out)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let written = image::open(out.join("map.png")).unwrap().to_rgba8();
    let scene = crowdfield::map::load(&map).unwrap();
    let agents = crowdfield::sim::spawn::spawn_agents(&scene, 0).unwrap();
    let (drawn, _) =
        crowdfield::export::map_image_with(&scene, &agents, &crowdfield::export::ImageOptions::default());
    assert!(written == drawn, "map.png is the library's image of the map");
    let manifest = std::fs::read_to_string(out.join(crowdfield::ownership::MANIFEST_FILE)).unwrap();
    assert!(manifest.contains("\"map.png\""), "{manifest}");
}

/// `simulate` says which walls the bodies meet, and the report keeps it.
#[test]
fn simulate_says_which_walls_the_bodies_meet() {
    let dir = tempfile::tempdir().unwrap();
    let mut map: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(corridor()).unwrap()).unwrap();
    for (walls, words) in [
        ("cells", "walls: cells (the obstacle cells' edges)"),
        ("exact", "walls: exact (the walls as drawn)"),
    ] {
        map["walls"] = serde_json::json!(walls);
        let file = dir.path().join(format!("{walls}.json"));
        std::fs::write(&file, map.to_string()).unwrap();
        let out = dir.path().join(walls);
        let o = crowdfield(&["simulate", s(&file), "--out", s(&out), "--max-time", "1"]);
        let err = stderr(&o);
        assert!(o.status.success(), "{err}");
        assert!(err.contains(words), "{err}");
        let report: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
        assert_eq!(report["walls"], walls);
        let page = std::fs::read_to_string(out.join("report.html")).unwrap();
        // Up to the apostrophe, which the page escapes.
        let shown = words["walls: ".len()..].split('\'').next().unwrap();
        assert!(page.contains(shown), "the report page names the walls: {shown}");
    }
}
