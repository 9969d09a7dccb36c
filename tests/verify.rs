//! `crowdfield verify --quick`: the suite runs, its folder holds the report, the table, the
//! plots and every map it ran, its exit code says whether any test failed, and the default model
//! passes every test that applies to it (what CI holds the model to); the criteria's
//! arithmetic is tested on synthetic data in `crowdfield::verify::criteria`.

use serde_json::Value;
use std::process::Command;

/// The tests the suite reports, in order.
const TESTS: &[&str] = &[
    "rimea-1",
    "rimea-2",
    "rimea-3",
    "rimea-4",
    "rimea-5",
    "rimea-6",
    "rimea-7",
    "rimea-9",
    "rimea-10",
    "rimea-11",
    "rimea-12",
    "rimea-13",
    "rimea-15",
    "rimea-16",
    "bottleneck",
    "overlap",
];

#[test]
fn the_quick_suite_writes_its_report_plots_and_maps() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("verify");
    let run = Command::new(env!("CARGO_BIN_EXE_crowdfield"))
        .args(["verify", "--quick", "--quiet", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    let stdout = String::from_utf8_lossy(&run.stdout);
    let report: Value = serde_json::from_str(
        &std::fs::read_to_string(out.join("verify.json")).unwrap_or_else(|e| panic!("{e}: {stderr}")),
    )
    .unwrap();
    let tests = report["tests"].as_array().unwrap();
    let ids: Vec<&str> = tests.iter().map(|t| t["id"].as_str().unwrap()).collect();
    assert_eq!(ids, TESTS);
    assert_eq!(report["quick"], true);
    assert_eq!(report["seeds"], 1);
    let mut failed = 0;
    for t in tests {
        let status = t["status"].as_str().unwrap();
        assert!(["pass", "fail", "not_applicable"].contains(&status), "{t}");
        for key in ["title", "checks", "criterion", "source", "measured"] {
            assert!(!t[key].as_str().unwrap().is_empty(), "{key} of {t}");
        }
        if status == "not_applicable" {
            assert!(t["values"].as_array().unwrap().is_empty());
            continue;
        }
        failed += (status == "fail") as usize;
        assert!(!t["values"].as_array().unwrap().is_empty(), "{t}");
        for map in t["maps"].as_array().unwrap() {
            let path = out.join(map.as_str().unwrap());
            // Every map the suite ran is an ordinary, valid map.
            assert!(crowdfield::map::validate(&path).is_empty(), "{}", path.display());
        }
        assert!(
            stdout.contains(t["title"].as_str().unwrap()),
            "the table names {t}"
        );
    }
    // The default (pedestrian) model passes every applicable test.
    for t in tests {
        let want = match t["id"].as_str().unwrap() {
            "rimea-2" | "rimea-3" | "rimea-13" => "not_applicable",
            _ => "pass",
        };
        assert_eq!(t["status"], want, "{}: {}", t["id"], t["measured"]);
    }
    // The stairs tests are not applicable: the terrain has no stairs.
    for id in ["rimea-2", "rimea-3", "rimea-13"] {
        assert_eq!(
            tests[ids.iter().position(|i| *i == id).unwrap()]["status"],
            "not_applicable"
        );
    }
    assert_eq!(report["passed"], failed == 0);
    assert_eq!(
        run.status.code(),
        Some(if failed == 0 { 0 } else { 1 }),
        "{stderr}"
    );
    // The plotted series: three densities, two line densities, three widths, and the arrival
    // curves with four and two exits.
    assert_eq!(report["fundamental_diagram"].as_array().unwrap().len(), 3);
    assert_eq!(report["single_file"].as_array().unwrap().len(), 2);
    assert_eq!(report["bottleneck"].as_array().unwrap().len(), 3);
    assert_eq!(report["arrival_curves"].as_array().unwrap().len(), 2);
    for png in [
        "fundamental_diagram.png",
        "bottleneck_flow.png",
        "rimea9_arrivals.png",
    ] {
        let bytes = std::fs::read(out.join(png)).unwrap();
        assert_eq!(&bytes[1..4], b"PNG", "{png}");
    }
    let md = std::fs::read_to_string(out.join("verify.md")).unwrap();
    assert!(md.contains("| test | checks | criterion (source) | measured | result |"));
    assert!(md.contains("![fundamental diagram](fundamental_diagram.png)"));

    // A second run replaces the first's files; a file of the user's stops it.
    std::fs::write(out.join("notes.txt"), "mine").unwrap();
    let again = Command::new(env!("CARGO_BIN_EXE_crowdfield"))
        .args(["verify", "--quick", "--quiet", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(1));
    let err = String::from_utf8_lossy(&again.stderr);
    assert!(err.contains("notes.txt") && err.contains("--out"), "{err}");
    assert_eq!(std::fs::read_to_string(out.join("notes.txt")).unwrap(), "mine");
}

#[test]
fn bad_params_name_the_option_and_the_value() {
    let dir = tempfile::tempdir().unwrap();
    let run = Command::new(env!("CARGO_BIN_EXE_crowdfield"))
        .args([
            "verify",
            "--quick",
            "--quiet",
            "--params",
            r#"{"speed_lav": "weidmann"}"#,
            "--out",
        ])
        .arg(dir.path().join("v"))
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(1));
    let err = String::from_utf8_lossy(&run.stderr);
    assert!(err.contains("--params") && err.contains("speed_lav"), "{err}");
}
