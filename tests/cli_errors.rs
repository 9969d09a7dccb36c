//! Command-line edge cases of `simulate` and `solve` through the binary: each gives a clear error
//! and exit status 1, never a panic or a run that does not end.

use std::path::{Path, PathBuf};
use std::process::Command;

fn corridor() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("maps/corridor.json")
}

/// Runs the binary, expects exit status 1 and returns stderr.
fn fails(args: &[&str], out: &Path) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_crowdfield"))
        .args(args)
        .arg("--out")
        .arg(out)
        .arg(corridor())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
    assert!(!err.contains("panicked"), "{args:?}: {err}");
    err
}

#[test]
fn a_run_of_too_many_steps_is_refused_up_front() {
    // --dt 1e-12 or --max-time 1e300 used to start a run that never ended.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let e = fails(&["simulate", "--quiet", "--max-time", "1", "--dt", "1e-12"], &out);
    assert!(
        e.contains("--max-time") && e.contains("1e12 steps") && e.contains("at most 1e7"),
        "{e}"
    );
    // With the automatic step, raising --dt is no remedy (the step is within 10 % of the
    // largest the map allows): the message says what sets the step instead.
    let e = fails(&["simulate", "--quiet", "--max-time", "1e300"], &out);
    assert!(
        e.contains("1e300 s")
            && e.contains("lower --max-time (the time step is this map's automatic one")
            && !e.contains("--dt"),
        "{e}"
    );
    let e = fails(
        &["simulate", "--quiet", "--max-time", "1e300", "--dt", "0.01"],
        &out,
    );
    assert!(e.contains("lower --max-time or raise --dt"), "{e}");
    assert!(!out.exists());
}

#[test]
fn an_output_path_that_is_a_file_is_named_once() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("taken");
    std::fs::write(&file, "mine").unwrap();
    let at_file = format!("{}: exists and is a file, not a folder", file.display());
    let at_sub = format!(
        "{}: {} is a file, not a folder",
        file.join("sub").display(),
        file.display()
    );
    for (cmd, out, want) in [
        (
            &["simulate", "--quiet", "--max-time", "1"][..],
            file.clone(),
            &at_file,
        ),
        (&["solve", "--quiet"][..], file.clone(), &at_file),
        (&["solve", "--quiet"][..], file.join("sub"), &at_sub),
    ] {
        let e = fails(cmd, &out);
        assert!(e.contains(want.as_str()), "{cmd:?}: {e}");
        assert_eq!(
            e.matches("a file, not a folder").count(),
            1,
            "the cause is not repeated: {e}"
        );
        if out == file {
            // Named once ("taken: taken is a file" named it twice).
            let name = file.display().to_string();
            assert_eq!(e.matches(&name).count(), 1, "{cmd:?}: {e}");
        }
    }
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "mine");
}

/// A run stopped by its time limit with people inside says so, even with `--quiet`, in its
/// report, its plot's title and a batch's summary; it still exits 0 (the run itself worked).
#[test]
fn an_evacuation_cut_short_is_flagged_not_passed_off_as_complete() {
    let dir = tempfile::tempdir().unwrap();
    let map = Path::new(env!("CARGO_MANIFEST_DIR")).join("maps/bottleneck.json");
    let out = dir.path().join("run");
    let o = Command::new(env!("CARGO_BIN_EXE_crowdfield"))
        .args(["simulate", "--quiet", "--max-time", "2", "--out"])
        .arg(&out)
        .arg(&map)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("warning:") && err.contains("still inside") && err.contains("did not complete"),
        "{err}"
    );
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    assert_eq!(report["complete"], false, "{report}");

    let batch_out = dir.path().join("batch");
    let o = Command::new(env!("CARGO_BIN_EXE_crowdfield"))
        .args(["batch", "--simulate", "--quiet", "--max-time", "2", "--out"])
        .arg(&batch_out)
        .arg(&map)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let csv = std::fs::read_to_string(batch_out.join("summary.csv")).unwrap();
    let row = csv.lines().nth(1).unwrap();
    // The `complete` column, then the `warnings` one, which says so as `simulate` does.
    assert!(row.contains(",no,") && row.contains("did not complete"), "{csv}");
    assert!(row.contains(",ok,"), "{csv}");
}

/// The GPU's update is first order: `--order 2 --backend gpu` is refused before any work (it
/// used to run first order, with `"order": 2` in summary.json), naming the option and what
/// to use instead; `auto` still runs second order on the CPU.
#[test]
fn second_order_on_the_gpu_is_refused_up_front() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    for command in ["solve", "simulate"] {
        let e = fails(&[command, "--quiet", "--order", "2", "--backend", "gpu"], &out);
        assert!(
            e.contains("--order: 2: the GPU solver is first order only") && e.contains("--backend cpu"),
            "{command}: {e}"
        );
        assert!(!out.exists(), "{command}: nothing written");
    }
    let speed = dir.path().join("speed.npy");
    ndarray_npy::write_npy(&speed, &ndarray::Array2::<f64>::ones((4, 4))).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_crowdfield"))
        .args(["eikonal", "--order", "2", "--backend", "gpu", "--goal"])
        .arg(&speed)
        .arg("--out")
        .arg(dir.path().join("phi.npy"))
        .arg("--speed")
        .arg(&speed)
        .output()
        .unwrap();
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(
        e.contains("--order: 2: the GPU solver is first order only"),
        "{e}"
    );
    assert!(!dir.path().join("phi.npy").exists());
    // A negative order is a range error, not an unknown flag.
    let o = Command::new(env!("CARGO_BIN_EXE_crowdfield"))
        .args(["solve", "--order", "-1", "--out"])
        .arg(&out)
        .arg(corridor())
        .output()
        .unwrap();
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "a usage error: {e}");
    assert!(
        e.contains("-1 is not in 1..=2") && !e.contains("unexpected argument"),
        "{e}"
    );
    let o = Command::new(env!("CARGO_BIN_EXE_crowdfield"))
        .args(["solve", "--quiet", "--order", "2", "--backend", "auto", "--out"])
        .arg(&out)
        .arg(corridor())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["order"], 2, "auto keeps second order on the CPU");
}
