//! What crowdfield writes, deletes and reads, through the binary as a careless or hostile user
//! drives it: a batch never deletes another run's or a user's files, a killed `simulate` keeps
//! the earlier frames, links are never followed to delete, a map reads rasters only from its
//! own folder, absurd names and speeds are refused with short messages, and every command gives
//! a map the same verdict.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

fn crowdfield() -> Command {
    Command::new(env!("CARGO_BIN_EXE_crowdfield"))
}

fn run(args: &[&std::ffi::OsStr]) -> Output {
    crowdfield().args(args).output().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A small map: a `cols x 10` grid of 0.5 m cells, `agents` walkers on the west side heading
/// east; `edit` changes the JSON before it is written.
fn write_map(
    dir: &Path,
    stem: &str,
    cols: usize,
    agents: usize,
    edit: impl FnOnce(&mut serde_json::Value),
) -> PathBuf {
    let width = cols as f64 * 0.5;
    let mut map = serde_json::json!({
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
    edit(&mut map);
    let path = dir.join(format!("{stem}.json"));
    std::fs::write(&path, serde_json::to_string_pretty(&map).unwrap()).unwrap();
    path
}

macro_rules! os {
    ($($a:expr),* $(,)?) => { &[$(std::ffi::OsStr::new(&$a)),*] };
}

/// Every file under `dir` (relative path → bytes).
fn snapshot(dir: &Path) -> std::collections::BTreeMap<PathBuf, Vec<u8>> {
    let mut all = std::collections::BTreeMap::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            for (k, v) in snapshot(&path) {
                all.insert(Path::new(path.file_name().unwrap()).join(k), v);
            }
        } else {
            all.insert(
                PathBuf::from(path.file_name().unwrap()),
                std::fs::read(&path).unwrap(),
            );
        }
    }
    all
}

#[test]
fn a_batch_never_deletes_or_replaces_a_simulate_run_or_a_users_files() {
    let dir = tempfile::tempdir().unwrap();
    let maps = dir.path().join("maps");
    std::fs::create_dir(&maps).unwrap();
    let hall = write_map(&maps, "hall", 20, 3, |_| {});
    let out = dir.path().join("out");
    let o = run(os![
        "simulate",
        hall,
        "--out",
        out.join("hall"),
        "--seed",
        "7",
        "--quiet"
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let before = snapshot(&out.join("hall"));
    assert!(before.contains_key(Path::new("report.json")));
    for extra in [&[][..], &["--simulate"][..]] {
        let mut args: Vec<&std::ffi::OsStr> = os!["batch", maps, "--out", out].to_vec();
        args.extend(extra.iter().map(std::ffi::OsStr::new));
        let o = run(&args);
        assert!(
            !o.status.success(),
            "batch {extra:?} wrote into a simulate run's folder"
        );
        let err = stderr(&o);
        assert!(
            err.contains(&out.join("hall").display().to_string())
                && err.contains("\"arrivals.png\"")
                && err.contains("--force")
                && err.contains("nothing was deleted"),
            "{err}"
        );
        assert_eq!(
            snapshot(&out.join("hall")),
            before,
            "batch {extra:?} changed simulate's files"
        );
    }
    // A user's own report.json among a finished batch's files is kept too.
    let o = run(os!["batch", maps, "--out", dir.path().join("b"), "--quiet"]);
    assert!(o.status.success(), "{}", stderr(&o));
    std::fs::write(dir.path().join("b/hall/report.json"), "my notes").unwrap();
    let o = run(os![
        "batch",
        maps,
        "--out",
        dir.path().join("b"),
        "--simulate",
        "--quiet"
    ]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("\"report.json\""), "{}", stderr(&o));
    assert_eq!(
        std::fs::read(dir.path().join("b/hall/report.json")).unwrap(),
        b"my notes"
    );
    // So is a file the batch wrote and someone changed since.
    std::fs::remove_file(dir.path().join("b/hall/report.json")).unwrap();
    std::fs::write(dir.path().join("b/hall/solve.json"), "{}").unwrap();
    let o = run(os![
        "batch",
        maps,
        "--out",
        dir.path().join("b"),
        "--force",
        "--quiet"
    ]);
    assert!(o.status.success(), "--force writes over it: {}", stderr(&o));
    let o = run(os![
        "batch",
        maps,
        "--out",
        dir.path().join("b"),
        "--simulate",
        "--quiet"
    ]);
    assert!(
        o.status.success(),
        "a batch's own folder is its to redo: {}",
        stderr(&o)
    );
    // --force lets the batch write into the simulate run's folder: its files of the batch's
    // names are replaced, the others (here none) kept.
    let o = run(os![
        "batch",
        maps,
        "--out",
        out,
        "--simulate",
        "--force",
        "--quiet"
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn linked_output_folders_are_never_followed_to_delete() {
    let dir = tempfile::tempdir().unwrap();
    let map = write_map(dir.path(), "plan", 20, 2, |_| {});
    let elsewhere = dir.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    for name in [
        "done.json",
        "solve.json",
        "potential_0.npy",
        "frame_00000.png",
        ".crowdfield-batch.json",
    ] {
        std::fs::write(elsewhere.join(name), "precious").unwrap();
    }
    let before = snapshot(&elsewhere);
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    std::os::unix::fs::symlink(&elsewhere, out.join("plan")).unwrap();
    for force in [false, true] {
        let mut args: Vec<&std::ffi::OsStr> = os!["batch", map, "--out", out, "--quiet"].to_vec();
        if force {
            args.push("--force".as_ref());
        }
        let o = run(&args);
        assert!(!o.status.success());
        assert!(stderr(&o).contains("symbolic link"), "{}", stderr(&o));
        assert_eq!(
            snapshot(&elsewhere),
            before,
            "followed the link (--force: {force})"
        );
    }
    // simulate's frames folder: a link simulate did not make refuses the folder; forced, it
    // is refused as a place to write frames and left alone by a run without frames.
    let sim_out = dir.path().join("sim");
    std::fs::create_dir(&sim_out).unwrap();
    std::os::unix::fs::symlink(&elsewhere, sim_out.join("frames")).unwrap();
    for extra in [&[][..], &["--frames", "1"][..], &["--frames", "1", "--force"][..]] {
        let mut args: Vec<&std::ffi::OsStr> = os!["simulate", map, "--out", sim_out, "--quiet"].to_vec();
        args.extend(extra.iter().map(std::ffi::OsStr::new));
        let o = run(&args);
        assert!(!o.status.success(), "{extra:?}");
        assert!(stderr(&o).contains("symbolic link"), "{}", stderr(&o));
    }
    let o = run(os!["simulate", map, "--out", sim_out, "--quiet", "--force"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("symbolic link"), "{}", stderr(&o));
    assert_eq!(snapshot(&elsewhere), before);
}

#[test]
fn a_killed_simulate_keeps_the_earlier_runs_frames() {
    let dir = tempfile::tempdir().unwrap();
    // A 100 m corridor: the second run draws hundreds of frames, and is killed after a few.
    let map = write_map(dir.path(), "long", 200, 5, |_| {});
    let out = dir.path().join("out");
    let o = run(os![
        "simulate",
        map,
        "--out",
        out,
        "--frames",
        "20",
        "--max-time",
        "5",
        "--quiet"
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    std::fs::write(out.join("frames/notes.txt"), "mine").unwrap();
    let earlier = snapshot(&out.join("frames"));
    assert!(earlier.len() >= 3, "{:?}", earlier.keys());
    let mut child = crowdfield()
        .args(os![
            "simulate", map, "--out", out, "--frames", "1", "--quiet", "--force"
        ])
        .spawn()
        .unwrap();
    // Wait until the new run has written a few frames (beside `frames`), then kill it.
    let start = std::time::Instant::now();
    let staged = |out: &Path| {
        std::fs::read_dir(out).unwrap().flatten().find(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            n.starts_with(".frames.") && n.ends_with(".tmp")
        })
    };
    loop {
        assert!(
            child.try_wait().unwrap().is_none(),
            "the run ended before the kill"
        );
        assert!(start.elapsed() < Duration::from_secs(120), "no frame was drawn");
        if let Some(e) = staged(&out)
            && std::fs::read_dir(e.path()).unwrap().count() >= 3
        {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap();
    let _ = child.wait();
    assert_eq!(
        snapshot(&out.join("frames")),
        earlier,
        "the killed run touched the earlier frames"
    );
    // A run that completes replaces them (and removes the killed run's leftovers); the user's
    // file among them refuses the folder unless forced, and forced it is kept.
    let mut args: Vec<&std::ffi::OsStr> = os![
        "simulate",
        map,
        "--out",
        out,
        "--frames",
        "5",
        "--max-time",
        "2",
        "--quiet"
    ]
    .to_vec();
    let o = run(&args);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(
        err.contains("\"frames/notes.txt\"") && err.contains("--force"),
        "{err}"
    );
    args.push("--force".as_ref());
    let o = run(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let now = snapshot(&out.join("frames"));
    assert_eq!(
        now.get(Path::new("notes.txt")).map(|v| &v[..]),
        Some(&b"mine"[..])
    );
    // 20 steps, a frame every 5: steps 1, 6, 11 and 16.
    let frames: Vec<_> = now.keys().filter(|k| *k != Path::new("notes.txt")).collect();
    assert_eq!(frames.len(), 4, "{frames:?}");
    assert!(staged(&out).is_none(), "the killed run's folder is left");
    // A run without frames removes the frames after it succeeds.
    let o = run(os![
        "simulate",
        map,
        "--out",
        out,
        "--max-time",
        "1",
        "--quiet",
        "--force"
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let left: Vec<_> = snapshot(&out.join("frames")).into_keys().collect();
    assert_eq!(left, [PathBuf::from("notes.txt")]);
}

#[test]
fn a_map_reads_rasters_only_inside_its_folder_unless_allowed() {
    let dir = tempfile::tempdir().unwrap();
    let site = dir.path().join("site");
    // `a/../../secret.npy` climbs out through a real folder `a`, as a path on disk does.
    std::fs::create_dir_all(site.join("a")).unwrap();
    let zeros = ndarray::Array2::<f64>::zeros((10, 20));
    crowdfield::io::write_npy(&dir.path().join("secret.npy"), zeros.view()).unwrap();
    let absolute = dir.path().join("secret.npy").display().to_string();
    std::os::unix::fs::symlink(dir.path().join("secret.npy"), site.join("link.npy")).unwrap();
    let with_raster = |stem: &str, file: &str| {
        let file = file.to_string();
        write_map(&site, stem, 20, 2, move |m| {
            m["layers"] = serde_json::json!({"discomfort": {"raster": {"file": file}}});
        })
    };
    let message = |map: &Path, extra: &[&str]| {
        let mut args: Vec<&std::ffi::OsStr> = os!["validate", map].to_vec();
        args.extend(extra.iter().map(std::ffi::OsStr::new));
        let o = run(&args);
        (o.status.success(), stdout(&o))
    };
    for (stem, file) in [
        ("up", "../secret.npy"),
        ("abs", absolute.as_str()),
        ("link", "link.npy"),
        ("deep", "a/../../secret.npy"),
    ] {
        let map = with_raster(stem, file);
        let (ok, text) = message(&map, &[]);
        assert!(!ok, "{file} was read");
        assert!(
            text.contains("layers.discomfort.raster.file") && text.contains("--allow-outside-rasters"),
            "{text}"
        );
        // The same words whether the outside file exists or not.
        let missing = file.replace("secret", "missing");
        let other = with_raster(&format!("{stem}_missing"), &missing);
        if stem != "link" {
            let (_, other_text) = message(&other, &[]);
            let norm = |t: &str, name: &str| {
                t.replace(name, "NAME")
                    .replace("secret", "X")
                    .replace("missing", "X")
            };
            assert_eq!(
                norm(&text, &format!("{stem}.json")),
                norm(&other_text, &format!("{stem}_missing.json")),
                "the message tells whether the file exists"
            );
        }
        let (ok, text) = message(&map, &["--allow-outside-rasters"]);
        assert!(ok, "{file} with --allow-outside-rasters: {text}");
        // Every command that loads maps takes the option and the refusal.
        let o = run(os!["solve", map, "--out", dir.path().join("o"), "--quiet"]);
        assert!(
            !o.status.success() && stderr(&o).contains("--allow-outside-rasters"),
            "{}",
            stderr(&o)
        );
        let o = run(os![
            "solve",
            map,
            "--out",
            dir.path().join("o"),
            "--quiet",
            "--allow-outside-rasters"
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let inside = with_raster("inside", "./here.npy");
    crowdfield::io::write_npy(&site.join("here.npy"), zeros.view()).unwrap();
    let (ok, text) = message(&inside, &[]);
    assert!(ok, "{text}");
    let e = crowdfield::map::load(site.join("up.json"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("climbs out"), "{e}");
}

#[test]
fn a_ten_megabyte_group_name_is_refused_with_a_short_message() {
    let dir = tempfile::tempdir().unwrap();
    let huge = "N".repeat(10 << 20);
    let map = write_map(dir.path(), "huge", 20, 2, |m| {
        m["groups"][0]["name"] = serde_json::json!(huge);
        m["groups"][0]["goals"][0]["name"] = serde_json::json!(huge);
    });
    // Bounded by size: the whole of each command's output is a few hundred bytes (the name
    // was echoed, and drawn into plot legends, in full).
    let o = run(os!["validate", map]);
    assert!(!o.status.success());
    let text = stdout(&o);
    assert!(
        text.len() + o.stderr.len() < 2000,
        "{} bytes of output",
        text.len()
    );
    assert!(
        text.contains("groups[0].name") && text.contains("expected at most 200"),
        "{text}"
    );
    assert!(text.contains("groups[0].goals[0].name"), "{text}");
    for cmd in ["solve", "simulate"] {
        let o = run(os![cmd, map, "--out", dir.path().join(cmd), "--quiet"]);
        assert!(!o.status.success(), "{cmd}");
        assert!(o.stderr.len() < 2000, "{cmd}: {} bytes", o.stderr.len());
        assert!(
            stderr(&o).contains("expected at most 200"),
            "{cmd}: {}",
            stderr(&o)
        );
        assert!(!dir.path().join(cmd).join("arrivals.png").exists());
    }
    // A long value where a number belongs is shortened too.
    let wrong = write_map(dir.path(), "wrong", 20, 2, |m| {
        m["grid"]["cell_size"] = serde_json::json!(huge);
    });
    let o = run(os!["validate", wrong]);
    assert!(
        !o.status.success() && o.stdout.len() < 2000,
        "{} bytes",
        o.stdout.len()
    );
    assert!(stdout(&o).contains("grid.cell_size"), "{}", stdout(&o));
}

#[test]
fn eikonal_refuses_speeds_and_cell_sizes_it_cannot_represent() {
    let dir = tempfile::tempdir().unwrap();
    let goal = dir.path().join("goal.npy");
    let mut g = ndarray::Array2::<f64>::zeros((4, 5));
    g[[0, 0]] = 1.0;
    crowdfield::io::write_npy(&goal, g.view()).unwrap();
    for fast in [1e39, 1e300] {
        let mut s = ndarray::Array2::<f64>::ones((4, 5));
        s[[2, 3]] = fast;
        let speed = dir.path().join("speed.npy");
        crowdfield::io::write_npy(&speed, s.view()).unwrap();
        // The CPU reads into the march's memory, auto through the dispatch: both refuse.
        for backend in ["cpu", "auto"] {
            let phi = dir.path().join(format!("phi_{backend}.npy"));
            let o = run(os![
                "eikonal",
                "--speed",
                speed,
                "--goal",
                goal,
                "--out",
                phi,
                "--backend",
                backend
            ]);
            assert!(!o.status.success(), "speed {fast:e} on {backend} gave a field");
            let err = stderr(&o);
            assert!(
                err.contains("(row 2, column 3)")
                    && err.contains("8.507059e37")
                    && err.contains(&format!("{fast:e}")),
                "{err}"
            );
            assert!(!phi.exists());
        }
    }
    let ones = dir.path().join("ones.npy");
    crowdfield::io::write_npy(&ones, ndarray::Array2::<f64>::ones((4, 5)).view()).unwrap();
    let phi = dir.path().join("phi.npy");
    let o = run(os![
        "eikonal",
        "--speed",
        ones,
        "--goal",
        goal,
        "--out",
        phi,
        "--cell-size",
        "1e200"
    ]);
    assert!(
        !o.status.success() && stderr(&o).contains("at most 1e100"),
        "{}",
        stderr(&o)
    );
    // At the limits the field is exact: distance over speed.
    let o = run(os![
        "eikonal",
        "--speed",
        ones,
        "--goal",
        goal,
        "--out",
        phi,
        "--cell-size",
        "1e100"
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let p = crowdfield::io::read_npy_f64(&phi).unwrap();
    assert!((p[[0, 4]] / 4e100 - 1.0).abs() < 1e-12, "{}", p[[0, 4]]);
    let mut fastest = ndarray::Array2::<f64>::ones((4, 5));
    fastest.fill(crowdfield::eikonal::MAX_SPEED);
    crowdfield::io::write_npy(&ones, fastest.view()).unwrap();
    let o = run(os!["eikonal", "--speed", ones, "--goal", goal, "--out", phi]);
    assert!(o.status.success(), "{}", stderr(&o));
    let p = crowdfield::io::read_npy_f64(&phi).unwrap();
    assert_eq!(p[[0, 4]], 4.0 / crowdfield::eikonal::MAX_SPEED);
}

#[test]
fn an_overlapping_spawn_map_gets_the_same_verdict_from_every_command() {
    let dir = tempfile::tempdir().unwrap();
    // Two groups fill the same 2 x 2 m pen: each fits alone, together they do not.
    let map = write_map(dir.path(), "pen", 20, 12, |m| {
        let mut second = m["groups"][0].clone();
        second["name"] = serde_json::json!("others");
        m["groups"][0]["spawns"][0]["rect"] = serde_json::json!({"min": [0.5, 0.5], "max": [2.5, 2.5]});
        second["spawns"][0]["rect"] = serde_json::json!({"min": [0.5, 0.5], "max": [2.5, 2.5]});
        m["groups"].as_array_mut().unwrap().push(second);
    });
    let o = run(os!["validate", map]);
    assert!(!o.status.success());
    let verdict = stdout(&o).trim_end().to_string();
    // Found by placing the agents (the map's own checks pass: each area has room alone).
    assert!(
        verdict.contains("groups[1]") && verdict.contains("holds at most"),
        "{verdict}"
    );
    for cmd in ["solve", "simulate"] {
        let o = run(os![cmd, map, "--out", dir.path().join(cmd), "--quiet"]);
        assert!(!o.status.success(), "{cmd} accepted a map validate refuses");
        assert_eq!(stderr(&o).trim_end(), format!("error: {verdict}"), "{cmd}");
    }
    for extra in ["--quiet", "--simulate"] {
        let o = run(os!["batch", map, "--out", dir.path().join("batch"), extra]);
        assert!(
            !o.status.success(),
            "batch {extra} accepted a map validate refuses"
        );
        assert!(
            stderr(&o).contains(&format!("failed: {verdict}")),
            "{}",
            stderr(&o)
        );
    }
}

#[test]
fn map_names_that_are_not_utf8_get_their_own_folders_and_exact_messages() {
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().unwrap();
    let maps = dir.path().join("maps");
    std::fs::create_dir(&maps).unwrap();
    let good = write_map(&maps, "good", 20, 2, |_| {});
    let text = std::fs::read(&good).unwrap();
    std::fs::remove_file(&good).unwrap();
    let a = maps.join(std::ffi::OsStr::from_bytes(b"hall\xff.json"));
    let b = maps.join(std::ffi::OsStr::from_bytes(b"hall\xfe.json"));
    std::fs::write(&a, &text).unwrap();
    std::fs::write(&b, &text).unwrap();
    let out = dir.path().join("out");
    let o = run(os!["batch", maps, "--out", out, "--quiet"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        out.join(std::ffi::OsStr::from_bytes(b"hall\xff"))
            .join("solve.json")
            .is_file()
    );
    assert!(
        out.join(std::ffi::OsStr::from_bytes(b"hall\xfe"))
            .join("solve.json")
            .is_file()
    );
    let rows: Vec<serde_json::Value> =
        serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
    let names: Vec<&str> = rows.iter().map(|r| r["map"].as_str().unwrap()).collect();
    assert!(
        names[0].ends_with("hall\\xfe.json") && names[1].ends_with("hall\\xff.json"),
        "{names:?}"
    );
    // A broken one is named exactly in the error.
    std::fs::write(&a, "{").unwrap();
    let o = run(os!["validate", a]);
    assert!(stdout(&o).contains("hall\\xff.json"), "{}", stdout(&o));
}

/// `simulate` and `solve` delete or replace only files they wrote: a folder holding a user's
/// files (the names a run writes among them) is refused, naming the files and `--force`, and
/// left as it was; forced, the user's files of other names survive the run; a rerun into the
/// command's own earlier output needs no `--force`.
#[test]
fn simulate_and_solve_never_delete_or_replace_a_users_files() {
    let dir = tempfile::tempdir().unwrap();
    let map = write_map(dir.path(), "plan", 20, 3, |_| {});
    for command in ["simulate", "solve"] {
        let proj = dir.path().join(format!("proj-{command}"));
        std::fs::create_dir_all(proj.join("frames")).unwrap();
        std::fs::write(proj.join("trajectories.csv"), "mine").unwrap();
        std::fs::write(proj.join("frames/frame_00001.png"), "mine").unwrap();
        std::fs::write(proj.join("report.html"), "mine").unwrap();
        std::fs::write(proj.join("summary.json"), "mine").unwrap();
        let before = snapshot(&proj);
        let base = os![command, map, "--out", proj, "--quiet"].to_vec();
        let mut short = base.clone();
        if command == "simulate" {
            short.extend(os!["--max-time", "2"]);
        }
        let o = run(&short);
        assert!(!o.status.success(), "{command} wrote into a user's folder");
        let err = stderr(&o);
        assert!(
            err.contains(&proj.display().to_string())
                && err.contains("\"frames\"")
                && err.contains("\"report.html\"")
                && err.contains("--force")
                && err.contains("nothing was deleted"),
            "{command}: {err}"
        );
        assert_eq!(snapshot(&proj), before, "{command} touched the user's files");

        let mut forced = short.clone();
        forced.push("--force".as_ref());
        let o = run(&forced);
        assert!(o.status.success(), "{command} --force: {}", stderr(&o));
        let after = snapshot(&proj);
        for kept in ["trajectories.csv", "frames/frame_00001.png"] {
            assert_eq!(
                after.get(Path::new(kept)).map(|v| &v[..]),
                Some(&b"mine"[..]),
                "{command} --force removed or replaced the user's {kept}"
            );
        }

        // Its own earlier output: rerun without --force, into a fresh folder and again.
        let own = dir.path().join(format!("own-{command}"));
        for _ in 0..2 {
            let mut args = short.clone();
            args[3] = own.as_os_str();
            let o = run(&args);
            assert!(
                o.status.success(),
                "{command} into its own output: {}",
                stderr(&o)
            );
        }
        let written = snapshot(&own);
        let report = if command == "simulate" {
            "report.json"
        } else {
            "summary.json"
        };
        assert!(written.contains_key(Path::new(report)), "{:?}", written.keys());
        // Another command's folder is not its own.
        let other = if command == "simulate" {
            "solve"
        } else {
            "simulate"
        };
        let o = run(os![other, map, "--out", own, "--quiet"]);
        assert!(!o.status.success(), "{other} wrote into {command}'s folder");
        assert!(stderr(&o).contains("--force"), "{}", stderr(&o));
        assert_eq!(snapshot(&own), written);
    }
}

/// A map that passes every check but needs more memory than the process may take (here an
/// address-space limit, `ulimit -v`, of 1 GiB) is refused by `simulate` with the memory the run
/// needs, an error and exit status 1, not killed by a failed allocation; `validate` says the
/// same as a warning.
#[cfg(target_os = "linux")]
#[test]
fn a_run_larger_than_the_memory_at_hand_is_refused_with_what_it_needs() {
    use std::os::unix::process::{CommandExt, ExitStatusExt};
    let dir = tempfile::tempdir().unwrap();
    // 2500 x 2500 cells of 0.5 m: a run needs about 1.8 GiB, loading about 300 MB.
    let map = write_map(dir.path(), "wide", 2500, 10, |m| {
        m["grid"]["rows"] = serde_json::json!(2500);
        m["groups"][0]["goals"][0]["rect"] =
            serde_json::json!({"min": [1249.0, 0.0], "max": [1250.0, 1250.0]});
    });
    let scene = crowdfield::map::load(&map).unwrap();
    let needed = crowdfield::memory::RunSize::of(&scene).simulation_bytes();
    let shown = crowdfield::memory::show_bytes(needed);
    assert!(needed > 1 << 30, "{shown}");
    let limited = |args: &[&std::ffi::OsStr]| {
        let mut command = crowdfield();
        command
            .args(args)
            .env("RAYON_NUM_THREADS", "2")
            .env("MALLOC_ARENA_MAX", "2");
        // SAFETY: only `setrlimit`, which is async-signal-safe, runs between fork and exec.
        unsafe {
            command.pre_exec(|| {
                let cap = libc::rlimit {
                    rlim_cur: 1 << 30,
                    rlim_max: 1 << 30,
                };
                if libc::setrlimit(libc::RLIMIT_AS, &cap) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        command.output().unwrap()
    };
    let o = limited(os!["simulate", map, "--out", dir.path().join("out"), "--quiet"]);
    assert_eq!(o.status.signal(), None, "killed: {}", stderr(&o));
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("grid: a run of 2500 x 2500 cells, 1 group and 10 walkers")
            && err.contains(&format!("needs about {shown} of memory")),
        "{err}"
    );
    assert!(!dir.path().join("out").join("report.json").exists());
    let o = limited(os!["validate", map]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.contains(&format!("needs about {shown}")) && text.contains("warning: a run of"),
        "{text}"
    );
}
