//! The planner's outputs of a run: the JuPedSim SQLite trajectories against the CSV, the
//! clear-time (RSET) map of one walker, exit usage against the arrivals, the report page's
//! contents, atomic writing under a killed run, and the page rendered in headless Chromium.

mod browser_support;

use crowdfield::run::planner::exit_usage;
use crowdfield::sim::{SimConfig, Simulation};
use rusqlite::Connection;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn map(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("maps").join(name)
}

/// Runs `crowdfield simulate ARGS`.
fn crowdfield(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_crowdfield"))
        .arg("simulate")
        .args(args)
        .output()
        .unwrap()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn the_sqlite_file_has_jupedsims_schema_and_the_csvs_rows() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let o = crowdfield(&[
        s(&map("bottleneck.json")),
        "--out",
        s(&out),
        "--max-time",
        "6",
        "--trajectories",
        "--trajectory-every",
        "3",
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap();
    let dt = report["dt"].as_f64().unwrap();
    let db = Connection::open(out.join("trajectories.sqlite")).unwrap();
    let columns = |table: &str| -> Vec<(String, String)> {
        let mut st = db.prepare(&format!("PRAGMA table_info({table})")).unwrap();
        st.query_map([], |r| Ok((r.get::<_, String>(1)?, r.get::<_, String>(2)?)))
            .unwrap()
            .map(|r| r.unwrap())
            .collect()
    };
    let names = |cols: Vec<(String, String)>| {
        cols.into_iter()
            .map(|c| format!("{} {}", c.0, c.1))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        names(columns("trajectory_data")),
        [
            "frame INTEGER",
            "id INTEGER",
            "pos_x REAL",
            "pos_y REAL",
            "ori_x REAL",
            "ori_y REAL"
        ]
    );
    assert_eq!(names(columns("metadata")), ["key TEXT", "value TEXT"]);
    assert_eq!(names(columns("geometry")), ["hash INTEGER", "wkt TEXT"]);
    assert_eq!(
        names(columns("frame_data")),
        ["frame INTEGER", "geometry_hash INTEGER"]
    );
    let meta = |key: &str| -> String {
        db.query_row("SELECT value FROM metadata WHERE key = ?1", [key], |r| r.get(0))
            .unwrap()
    };
    assert_eq!(meta("version"), "2");
    let fps: f64 = meta("fps").parse().unwrap();
    assert!((fps - 1.0 / (3.0 * dt)).abs() < 1e-9, "fps {fps}, dt {dt}");
    let wkt: String = db
        .query_row("SELECT wkt FROM geometry", [], |r| r.get(0))
        .unwrap();
    assert!(wkt.starts_with("POLYGON (("), "{wkt}");

    // Row for row the CSV: same agents, same positions, frame = t * fps.
    let csv = std::fs::read_to_string(out.join("trajectories.csv")).unwrap();
    let csv_rows: Vec<(i64, i64, f64, f64)> = csv
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            let t: f64 = f[0].parse().unwrap();
            (
                (t * fps).round() as i64,
                f[1].parse().unwrap(),
                f[3].parse().unwrap(),
                f[4].parse().unwrap(),
            )
        })
        .collect();
    let mut st = db
        .prepare("SELECT frame, id, pos_x, pos_y, ori_x, ori_y FROM trajectory_data ORDER BY rowid")
        .unwrap();
    let db_rows: Vec<(i64, i64, f64, f64, f64, f64)> = st
        .query_map([], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?))
        })
        .unwrap()
        .map(|r| r.unwrap())
        .collect();
    assert_eq!(db_rows.len(), csv_rows.len());
    assert!(db_rows.len() > 200 * 3, "several frames of 200 agents");
    for (d, c) in db_rows.iter().zip(&csv_rows) {
        assert_eq!((d.0, d.1), (c.0, c.1));
        assert!(
            (d.2 - c.2).abs() < 1e-4 && (d.3 - c.3).abs() < 1e-4,
            "{d:?} vs {c:?}"
        );
        assert!(
            ((d.4 * d.4 + d.5 * d.5).sqrt() - 1.0).abs() < 1e-6,
            "unit orientation {d:?}"
        );
    }
    let frames: i64 = db
        .query_row("SELECT COUNT(*) FROM frame_data", [], |r| r.get(0))
        .unwrap();
    let last: i64 = db
        .query_row("SELECT MAX(frame) FROM trajectory_data", [], |r| r.get(0))
        .unwrap();
    assert_eq!(frames, last + 1);
}

#[test]
fn one_walkers_clear_time_is_when_it_left_each_cell() {
    let scene = crowdfield::map::load(map("corridor.json")).unwrap();
    let grid = scene.grid;
    let mut sim = Simulation::builder(scene)
        .config(SimConfig::default())
        .build()
        .unwrap();
    // The time each cell was left: the first sample at which the walker is elsewhere.
    let mut left = std::collections::HashMap::new();
    let mut cell = grid
        .cell_of(sim.agents().x[0] as f64, sim.agents().y[0] as f64)
        .unwrap();
    while !sim.finished() {
        sim.step();
        let now = (!sim.agents().is_empty()).then(|| {
            grid.cell_of(sim.agents().x[0] as f64, sim.agents().y[0] as f64)
                .unwrap()
        });
        if now != Some(cell) {
            left.insert(cell, sim.time());
            match now {
                Some(c) => cell = c,
                None => break,
            }
        }
    }
    assert!(sim.agents().is_empty(), "the walker arrived");
    assert!(left.len() > 100, "it crossed the corridor: {} cells", left.len());
    let clear = sim.places().clear_time();
    for ((r, c), &v) in clear.indexed_iter() {
        match left.get(&(r, c)) {
            Some(&t) => assert!((v - t).abs() < 1e-9, "cell ({r}, {c}): {v} vs {t}"),
            None => assert!(v.is_nan(), "cell ({r}, {c}) never stood on reads {v}"),
        }
    }
}

#[test]
fn names_that_a_spreadsheet_would_run_are_written_to_the_csvs_as_text() {
    let mut scene = crowdfield::map::load(map("corridor.json")).unwrap();
    scene.groups[0].name = "=HYPERLINK(\"http://x\")".to_string();
    scene.groups[0].goals[0].name = "+exit".to_string();
    let mut sim = Simulation::builder(scene)
        .config(SimConfig::default())
        .build()
        .unwrap();
    while !sim.finished() {
        sim.step();
    }
    assert_eq!(sim.arrivals().len(), 1);
    let dir = tempfile::tempdir().unwrap();
    crowdfield::run::planner::write_planner_outputs(dir.path(), &sim).unwrap();
    let times = std::fs::read_to_string(dir.path().join("evacuation_times.csv")).unwrap();
    let row = times.lines().nth(1).unwrap();
    assert!(
        row.starts_with("0,\"'=HYPERLINK(\"\"http://x\"\")\",'+exit,"),
        "{row}"
    );
    let usage = std::fs::read_to_string(dir.path().join("exit_usage.csv")).unwrap();
    // Its exit columns are named `n:GROUP/EXIT`: quoted as one cell each.
    assert_eq!(
        usage.lines().next().unwrap(),
        r#"time,"n:=HYPERLINK(""http://x"")/+exit","flow:=HYPERLINK(""http://x"")/+exit""#
    );
}

#[test]
fn exit_usage_sums_to_the_arrivals() {
    let scene = crowdfield::map::load(map("four_exits.json")).unwrap();
    let mut sim = Simulation::builder(scene)
        .config(SimConfig {
            max_time: 40.0,
            ..SimConfig::default()
        })
        .build()
        .unwrap();
    sim.run(|_| Ok(())).unwrap();
    let report = sim.report();
    let curves = exit_usage(&sim);
    let total: usize = curves.iter().map(|c| c.count_at(sim.time())).sum();
    assert!(total > 0);
    assert_eq!(total, sim.arrivals().len());
    assert_eq!(curves.len(), report.total.exits.len());
    for (c, e) in curves.iter().zip(&report.total.exits) {
        assert_eq!(c.name, e.name);
        assert_eq!(c.count_at(sim.time()), e.arrivals);
        assert_eq!(c.count_at(-1.0), 0);
    }
    // The CSV's last row holds the same counts.
    let csv = crowdfield::run::planner::exit_usage_csv(&curves, sim.dt(), sim.time());
    let last: Vec<f64> = csv
        .lines()
        .last()
        .unwrap()
        .split(',')
        .map(|v| v.parse().unwrap())
        .collect();
    let counted: f64 = last[1..].iter().step_by(2).sum();
    assert_eq!(counted as usize, sim.arrivals().len());
}

/// A run of `maps/bottleneck.json` into `out` with the default outputs.
fn bottleneck_run(out: &Path) {
    let o = crowdfield(&[
        s(&map("bottleneck.json")),
        "--out",
        s(out),
        "--max-time",
        "20",
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn a_default_run_writes_the_page_maps_and_sqlite_trajectories() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    bottleneck_run(&out);
    for f in crowdfield::run::planner::PLANNER_FILES
        .iter()
        .chain(&["report.html", "trajectories.sqlite"])
    {
        assert!(out.join(f).is_file(), "{f} missing");
    }
    assert!(!out.join("trajectories.csv").exists(), "CSV only on request");
    let page = std::fs::read_to_string(out.join("report.html")).unwrap();
    // Self-contained: no address to fetch.
    for needle in ["http://", "https://", "src=\"file", "<link"] {
        assert!(!page.contains(needle), "{needle} in the page");
    }
    assert_eq!(page.matches("src=\"data:image/png;base64,").count(), 7);
    // Warnings first: this run is cut short at 20 s, which leads the page.
    let warn = page.find("id=\"warnings\"").unwrap();
    assert!(warn < page.find("id=\"summary\"").unwrap());
    assert!(page[warn..].starts_with("id=\"warnings\"><strong>Warnings"));
    assert!(page.contains("did not complete"));
    let bytes = std::fs::read(map("bottleneck.json")).unwrap();
    assert!(page.contains(&crowdfield::export::html::sha256_hex(&bytes)));
    assert!(page.contains(env!("CARGO_PKG_VERSION")));
    let report: crowdfield::sim::Report =
        serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap();
    let door = &report.total.exits[0];
    assert!(page.contains(&format!("<td>{}</td>", door.name)));
    assert!(page.contains(&format!("{:.2}", door.flow.unwrap())));
    assert_eq!(report.level_of_service.len(), 6);
    // Every open cell has a worst level; the table's areas add up to the open area.
    let open: f64 = report.level_of_service.iter().map(|l| l.worst_area_m2).sum();
    assert!((open - (20.0 * 16.0 - 0.5 * 15.0)).abs() < 1e-9, "{open}");
}

#[test]
fn a_killed_run_leaves_no_half_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let mut child = Command::new(env!("CARGO_BIN_EXE_crowdfield"))
        .args([
            "simulate",
            s(&map("hall.json")),
            "--out",
            s(&out),
            "--trajectories",
            "--quiet",
        ])
        .spawn()
        .unwrap();
    // Until the trajectories are being written (their temporary files exist), then a kill.
    let started = std::time::Instant::now();
    let streaming = || {
        std::fs::read_dir(&out)
            .map(|d| {
                d.filter_map(|e| e.ok())
                    .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
                    .count()
            })
            .unwrap_or(0)
            >= 2
    };
    while !streaming() && started.elapsed().as_secs() < 60 {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(streaming(), "the run started writing");
    std::thread::sleep(std::time::Duration::from_millis(300));
    child.kill().unwrap();
    child.wait().unwrap();
    for f in [
        "trajectories.sqlite",
        "trajectories.csv",
        "report.json",
        "report.html",
        "clear_time.npy",
    ] {
        assert!(!out.join(f).exists(), "{f} exists after a kill");
    }
}

#[test]
fn the_report_page_renders_in_headless_chromium() {
    let Some(browser) = browser_support::chromium() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    bottleneck_run(&out);
    let page = out.join("report.html");
    let profile = dir.path().join("profile");
    let shot = dir.path().join("page.png");
    let run = |extra: &[&str]| browser_support::run(browser, &page, &profile, extra);
    let o = run(&["--dump-dom"]);
    let dom = String::from_utf8_lossy(&o.stdout);
    let console = browser_support::console(&o);
    assert!(console.is_empty(), "console messages: {console:#?}");
    // The page's own check: every image decoded (naturalWidth > 0).
    assert!(
        dom.contains("data-images-loaded=\"7 of 7\""),
        "{}",
        &dom[..dom.len().min(400)]
    );
    let shot_arg = format!("--screenshot={}", shot.display());
    run(&[&shot_arg]);
    let img = image::open(&shot).unwrap().to_rgba8();
    assert_eq!(img.dimensions(), (1200, 900));
    // Not a blank page: the warning box's amber and dark text are on it.
    let distinct: std::collections::HashSet<[u8; 4]> = img.pixels().map(|p| p.0).collect();
    assert!(distinct.len() > 20, "{} colours", distinct.len());
}

/// What `simulate` wrote into `out`: report.json as JSON, report.html as text, stderr.
fn run_and_read(args: &[&str], out: &Path) -> (serde_json::Value, String, String) {
    let o = crowdfield(&[args, &["--out", s(out), "--trajectories=none"]].concat());
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert!(o.status.success(), "{err}");
    let report = serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap();
    (
        report,
        std::fs::read_to_string(out.join("report.html")).unwrap(),
        err,
    )
}

/// The report states what an authority needs to judge its figures: the model and why it ran,
/// the params in effect, each group's speeds, body radius, spawn counts and pre-movement
/// times, the cell size, step, seed and local layer. The published model is named, on stderr
/// and on the page, as not meant for evacuation figures, with the way to get them.
#[test]
fn the_report_states_its_inputs_and_warns_of_the_published_model() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("cc");
    let bottleneck = map("bottleneck.json");
    let (report, page, err) = run_and_read(
        &[
            s(&bottleneck),
            "--model",
            "continuum_crowds",
            "--max-time",
            "2",
            "--seed",
            "3",
        ],
        &out,
    );
    let warning = "the model continuum_crowds is not meant for evacuation figures";
    assert!(err.contains(&format!("warning: {warning}")), "{err}");
    assert!(err.contains("--model pedestrian"), "{err}");
    let warnings = page.find("id=\"warnings\"").unwrap();
    assert!(page[warnings..page.find("id=\"summary\"").unwrap()].contains(warning));
    let inputs = &report["inputs"];
    assert_eq!(inputs["model"], "continuum_crowds");
    assert!(
        inputs["model_source"]
            .as_str()
            .unwrap()
            .starts_with("--model continuum_crowds"),
        "{inputs}"
    );
    assert_eq!(
        inputs["params"]["f_max"], 1.34,
        "the published model's defaults: {inputs}"
    );
    assert_eq!(
        (inputs["seed"].as_u64(), inputs["cell_size"].as_f64()),
        (Some(3), Some(0.25))
    );
    assert_eq!(inputs["dt"], report["dt"]);
    assert_eq!(inputs["local"], "none");
    let group = &inputs["groups"][0];
    assert_eq!(group["radius"], 0.25);
    assert_eq!(group["speed_distribution"], "uniform");
    assert_eq!(group["spawns"][0]["count"], 200);
    assert!(group["spawns"][0]["premovement"].is_array(), "{group}");
    let parameters = &page[page.find("id=\"parameters\"").expect("a parameters table")..];
    let table = &page[page.find("id=\"inputs\"").expect("an inputs table")..];
    for needle in [
        "cells of 0.25 m",
        "<th>seed</th><td><code>3</code>",
        "local layer",
    ] {
        assert!(
            parameters[..parameters.find("id=\"inputs\"").unwrap()].contains(needle),
            "{needle} not in the parameters table"
        );
    }
    for needle in [
        "continuum_crowds",
        "--model continuum_crowds",
        "&quot;f_max&quot;: 1.34",
    ] {
        assert!(table.contains(needle), "{needle} not in the inputs table");
    }
    let groups = &page[page.find("id=\"input-groups\"").expect("a table of group inputs")..];
    for needle in [
        "body radius",
        "pre-movement",
        "<td class=\"n\">200</td>",
        "uniform",
    ] {
        assert!(groups.contains(needle), "{needle} not in the group inputs");
    }

    // The bundled hall names the evacuation model: no flag is needed for evacuation figures.
    let out = dir.path().join("hall");
    let (report, page, err) = run_and_read(&[s(&map("hall.json")), "--max-time", "0.5"], &out);
    assert_eq!(report["inputs"]["model"], "pedestrian");
    assert!(!err.contains(warning) && !page.contains(warning), "{err}");

    // A map with `params` and no `model` (the hall without its model) runs the published
    // model: the page says so, and warns.
    let mut published: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(map("hall.json")).unwrap()).unwrap();
    published.as_object_mut().unwrap().remove("model");
    let published_map = dir.path().join("hall_published.json");
    std::fs::write(&published_map, published.to_string()).unwrap();
    let out = dir.path().join("hall_published");
    let (report, page, err) = run_and_read(&[s(&published_map), "--max-time", "0.5"], &out);
    assert_eq!(report["inputs"]["model"], "continuum_crowds");
    assert!(
        report["inputs"]["model_source"]
            .as_str()
            .unwrap()
            .contains("params"),
        "{}",
        report["inputs"]
    );
    assert_eq!(report["inputs"]["params"]["f_max"], 1.5);
    assert!(err.contains(warning) && page.contains(warning), "{err}");

    // The pedestrian model (a map without params) gets no such warning.
    let out = dir.path().join("ped");
    let (report, page, err) = run_and_read(&[s(&bottleneck), "--max-time", "2"], &out);
    assert_eq!(report["inputs"]["model"], "pedestrian");
    assert!(!err.contains(warning) && !page.contains(warning), "{err}");
}

/// Levels of service count persons over a 2 m x 2 m square: the corridor's lone walker is
/// level A everywhere, the bottleneck's queue at its door still reaches E or F, and
/// `los_worst.npy` holds 255 for walls and for places no one came near, never A.
#[test]
fn levels_of_service_read_a_lone_walker_as_a_and_a_queue_as_crowded() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("corridor");
    let (report, page, _) = run_and_read(&[s(&map("corridor.json"))], &out);
    assert_eq!(report["complete"], true);
    assert_eq!(report["level_of_service_area_m2"], 4.0);
    let levels = report["level_of_service"].as_array().unwrap();
    for l in &levels[1..] {
        assert_eq!(l["worst_area_m2"], 0.0, "a lone walker: {l}");
    }
    assert!(page.contains("<th>worst level of service</th><td>A</td>"));
    let worst: ndarray::Array2<u8> = ndarray_npy::read_npy(out.join("los_worst.npy")).unwrap();
    assert!(worst.iter().all(|&l| l == 0 || l == 255), "{worst}");

    let out = dir.path().join("bottleneck");
    let (report, _, _) = run_and_read(&[s(&map("bottleneck.json")), "--max-time", "20"], &out);
    let levels = report["level_of_service"].as_array().unwrap();
    let crowded = levels[4]["worst_area_m2"].as_f64().unwrap() + levels[5]["worst_area_m2"].as_f64().unwrap();
    assert!(crowded > 0.0, "the queue at the door: {levels:?}");
    let worst: ndarray::Array2<u8> = ndarray_npy::read_npy(out.join("los_worst.npy")).unwrap();
    let scene = crowdfield::map::load(map("bottleneck.json")).unwrap();
    assert_eq!(worst.dim(), scene.obstacle.dim());
    for ((rc, &l), &wall) in worst.indexed_iter().zip(scene.obstacle.iter()) {
        if wall {
            assert_eq!(l, 255, "wall cell {rc:?}");
        } else {
            assert!(l <= 5 || l == 255, "{rc:?}: {l}");
        }
    }
    assert!(worst.iter().any(|&l| l >= 4));
    // The open cells with a level, and those no one came near, make up the table's area.
    let cell_area = scene.grid.cell_size * scene.grid.cell_size;
    let open = scene.obstacle.iter().filter(|&&b| !b).count() as f64 * cell_area;
    let table: f64 = levels.iter().map(|l| l["worst_area_m2"].as_f64().unwrap()).sum();
    assert!((table - open).abs() < 1e-9, "{table} vs {open}");
}
