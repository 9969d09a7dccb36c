//! A real client reads crowdfield's trajectories: PedPy (installed from PyPI by
//! scripts/test.sh) loads `trajectories.sqlite` of a `maps/bottleneck.json` run, computes the
//! classic density in front of the door and the N-t curve at a line across it
//! (`tests/python/pedpy_check.py`), and its door flow must agree with `report.json`'s. The
//! PedPy snippet of docs/outputs.md runs on the same kind of output.
//!
//! Without PedPy the tests are skipped, unless `CROWDFIELD_REQUIRE_PEDPY=1` (set by the test
//! command), which makes them fail.

use std::path::Path;
use std::process::Command;

/// PedPy's door flow and crowdfield's may differ by this fraction: PedPy counts walkers at a
/// line across the room 1 m before the door (they leave the trajectories as they step into the
/// door, before any line in its mouth), where the crowd still spreads over more than the door's
/// width, so the first and last passages there come up to about a second apart from the door's
/// over a span of about 20 s (measured: 9.13 against 8.69 persons/s, 5 %).
const FLOW_TOLERANCE: f64 = 0.10;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Whether python3 imports pedpy; panics when it does not and the test command requires it.
fn pedpy_available() -> bool {
    let ok = Command::new("python3")
        .args(["-c", "import pedpy"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var("CROWDFIELD_REQUIRE_PEDPY").as_deref() != Ok("1"),
            "python3 cannot import pedpy, and CROWDFIELD_REQUIRE_PEDPY=1"
        );
        eprintln!("skipped: no PedPy (scripts/test.sh installs it)");
    }
    ok
}

/// Runs `crowdfield simulate maps/bottleneck.json --out <out>` (default outputs).
fn simulate_bottleneck(out: &Path, max_time: &str) {
    let o = Command::new(env!("CARGO_BIN_EXE_crowdfield"))
        .arg("simulate")
        .arg(root().join("maps/bottleneck.json"))
        .args(["--out"])
        .arg(out)
        .args(["--max-time", max_time, "--quiet"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn pedpy_reads_the_run_and_measures_crowdfields_door_flow() {
    if !pedpy_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    simulate_bottleneck(&out, "600");
    let o = Command::new("python3")
        .arg(root().join("tests/python/pedpy_check.py"))
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let pedpy: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let report: crowdfield::sim::Report =
        serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap();
    eprintln!("PedPy: {pedpy}");
    assert!(report.complete, "the room emptied");
    assert_eq!(pedpy["persons"], 200);
    assert!((pedpy["frame_rate"].as_f64().unwrap() - 1.0 / report.dt).abs() < 1e-9);
    // The walkable area PedPy read: the 20 m x 16 m room and the door, less nothing else.
    assert!((pedpy["walkable_area_m2"].as_f64().unwrap() - 312.5).abs() < 1e-9);
    let door = &report.total.exits[0];
    assert_eq!(
        pedpy["crossed"].as_u64().unwrap() as usize,
        door.arrivals,
        "every walker crossed the line"
    );
    let ours = door.flow.unwrap();
    let theirs = pedpy["flow"].as_f64().unwrap();
    let rel = (theirs - ours).abs() / ours;
    eprintln!(
        "door flow: crowdfield {ours:.3}/s, PedPy {theirs:.3}/s ({:.1} %)",
        rel * 100.0
    );
    assert!(rel <= FLOW_TOLERANCE, "PedPy {theirs} vs report {ours}");
    // A queue stands before the door: the classic density there reaches a crowded level.
    let max_density = pedpy["max_density"].as_f64().unwrap();
    assert!(max_density > 1.0, "density in front of the door {max_density}");
}

/// The ```python block of docs/outputs.md's PedPy section.
fn docs_snippet() -> String {
    let doc = std::fs::read_to_string(root().join("docs/outputs.md")).unwrap();
    let start = doc
        .find("```python\n")
        .expect("a python block in docs/outputs.md")
        + 10;
    let end = start + doc[start..].find("```").unwrap();
    doc[start..end].to_string()
}

#[test]
fn the_docs_pedpy_snippet_is_five_lines_and_runs_on_an_output() {
    let snippet = docs_snippet();
    assert_eq!(snippet.lines().count(), 5, "{snippet}");
    if !pedpy_available() {
        return;
    }
    // The snippet reads out/bottleneck/ relative to where it runs.
    let dir = tempfile::tempdir().unwrap();
    simulate_bottleneck(&dir.path().join("out/bottleneck"), "30");
    let o = Command::new("python3")
        .args(["-c", &snippet])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let printed = String::from_utf8_lossy(&o.stdout);
    let n: usize = printed.split_whitespace().next().unwrap().parse().unwrap();
    assert!(n > 5, "{printed}");
}

#[test]
fn pedpy_reads_the_walls_as_drawn_on_a_map_with_exact_walls() {
    if !pedpy_available() {
        return;
    }
    // A 10 m x 6 m room of 0.5 m cells: a wall 0.3 m thick at x = 6.1 with a 0.9 m door off the
    // cells' lattice, a round pillar, an exit strip at the east edge.
    let map = serde_json::json!({
        "version": 1, "name": "exact", "walls": "exact",
        "grid": {"cols": 20, "rows": 12, "cell_size": 0.5},
        "layers": {"obstacles": {"shapes": [
            {"rect": {"min": [6.1, 0.0], "max": [6.4, 6.0]}},
            {"rect": {"min": [6.1, 2.35], "max": [6.4, 3.25]}, "value": 0},
            {"circle": {"center": [3.0, 3.0], "radius": 0.6}},
        ]}},
        "groups": [{"name": "walkers",
            "goals": [{"rect": {"min": [9.5, 0.0], "max": [10.0, 6.0]}}],
            "spawns": [{"rect": {"min": [0.5, 0.5], "max": [2.0, 5.5]}, "count": 30}]}],
    });
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("exact.json");
    std::fs::write(&path, map.to_string()).unwrap();
    let out = dir.path().join("run");
    let o = Command::new(env!("CARGO_BIN_EXE_crowdfield"))
        .arg("simulate")
        .arg(&path)
        .arg("--out")
        .arg(&out)
        .args(["--max-time", "120", "--quiet"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // PedPy reads the walkable area and the trajectories; shapely builds the same floor from
    // the map's shapes (the circle as crowdfield draws it, within 1 mm); every position lies on it.
    let script = r#"
import json, sys, math
import pedpy, shapely
from shapely.geometry import box, Point
import pathlib
sqlite = pathlib.Path(sys.argv[1])
area = pedpy.load_walkable_area_from_jupedsim_sqlite(trajectory_file=sqlite)
traj = pedpy.load_trajectory_from_jupedsim_sqlite(trajectory_file=sqlite)
walls = box(6.1, 0, 6.4, 6).difference(box(6.1, 2.35, 6.4, 3.25)).union(Point(3, 3).buffer(0.6, 256))
floor = box(0, 0, 10, 6).difference(walls)
outside = sum(1 for x, y in zip(traj.data.x, traj.data.y) if not area.polygon.buffer(1e-6).contains(Point(x, y)))
print(json.dumps({"area": area.polygon.area, "shapely": floor.area, "holes": len(area.polygon.interiors), "outside": outside, "rows": len(traj.data)}))
"#;
    let o = Command::new("python3")
        .args(["-c", script])
        .arg(out.join("trajectories.sqlite"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    eprintln!("{v}");
    let (ours, theirs) = (v["area"].as_f64().unwrap(), v["shapely"].as_f64().unwrap());
    // The circle's polygon lies within 1 mm of shapely's 1024-gon: about 2 pi r 1e-3 m².
    assert!(
        (ours - theirs).abs() <= 2.0 * std::f64::consts::PI * 0.6 * 1e-3,
        "{ours} m² against {theirs} m²"
    );
    assert_eq!(v["holes"], 1, "the pillar is a hole");
    assert!(v["rows"].as_u64().unwrap() > 0);
    assert_eq!(v["outside"], 0, "every position lies on the walkable area");
}
