//! `crowdfield eikonal` end to end: arrays in, phi out, timing line, and every bad input giving
//! an error that names the file and the problem, with a non-zero exit.

use crowdfield::io::{read_npy_f64, write_npy};
use ndarray::{Array2, Array3};
use ndarray_npy::WriteNpyExt;
use std::path::Path;
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

#[test]
fn solves_a_speed_map_with_walls_and_prints_timing() {
    let dir = tempfile::tempdir().unwrap();
    let (speed, goal, out) = (
        dir.path().join("speed.npy"),
        dir.path().join("goal.npy"),
        dir.path().join("phi.npy"),
    );
    // uint8 speed 2 m/s, a wall of zeros in column 3 (rows 0..=3), goal at (0, 0) as bool.
    let mut sp = Array2::from_elem((6, 8), 2u8);
    for r in 0..=3 {
        sp[(r, 3)] = 0;
    }
    write_npy(&speed, sp.view()).unwrap();
    let mut g = Array2::from_elem((6, 8), false);
    g[(0, 0)] = true;
    write_npy(&goal, g.view()).unwrap();
    let o = crowdfield(&[
        "eikonal",
        "--speed",
        s(&speed),
        "--goal",
        s(&goal),
        "--out",
        s(&out),
        "--cell-size",
        "0.5",
        "--order",
        "2",
        "--timing",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let stdout = String::from_utf8(o.stdout).unwrap();
    assert_eq!(
        stdout.lines().count(),
        1,
        "stdout is the timing line only: {stdout}"
    );
    let timing: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(timing["rows"], 6);
    assert_eq!(timing["cols"], 8);
    assert_eq!(timing["order"], 2);
    assert_eq!(timing["solver"], "fmm-cpu");
    assert!(timing["solve_seconds"].as_f64().unwrap() >= 0.0);

    let phi = read_npy_f64(&out).unwrap();
    assert_eq!(phi.dim(), (6, 8));
    assert_eq!(phi[(0, 0)], 0.0);
    // Along row 0 up to the wall: 0.5 m per cell at 2 m/s.
    assert_eq!(phi[(0, 1)], 0.25);
    assert_eq!(phi[(0, 2)], 0.5);
    assert_eq!(phi[(0, 3)], f64::INFINITY);
    // Behind the wall the walk goes round its top (row 4).
    assert!(phi[(0, 4)] > 0.25 * 8.0, "{}", phi[(0, 4)]);
    assert!(phi.iter().all(|v| !v.is_nan()));

    // Without --timing nothing goes to stdout; float64 speed and numeric goal work too.
    write_npy(&speed, Array2::from_elem((3, 3), 1.0f64).view()).unwrap();
    let mut g = Array2::from_elem((3, 3), 0.0f32);
    g[(1, 1)] = 7.0;
    write_npy(&goal, g.view()).unwrap();
    let o = crowdfield(&[
        "eikonal",
        "--speed",
        s(&speed),
        "--goal",
        s(&goal),
        "--out",
        s(&out),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(o.stdout.is_empty());
    let phi = read_npy_f64(&out).unwrap();
    assert_eq!(phi[(1, 1)], 0.0);
    assert_eq!(phi[(1, 2)], 1.0);
}

/// Runs with the given arrays and flags, expects failure, returns stderr.
fn fails(speed: Option<&Path>, goal: &Path, out: &Path, extra: &[&str]) -> String {
    let missing = goal.with_file_name("missing_speed.npy");
    let speed = speed.unwrap_or(&missing);
    let mut args = vec!["eikonal", "--speed", s(speed), "--goal", s(goal), "--out", s(out)];
    args.extend_from_slice(extra);
    let o = crowdfield(&args);
    assert!(!o.status.success(), "expected failure for {args:?}");
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(!err.contains("panicked"), "{err}");
    assert!(!out.exists(), "no output on failure");
    err
}

#[test]
fn bad_input_names_the_file_and_the_problem() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n);
    let out = p("phi.npy");
    write_npy(&p("speed.npy"), Array2::from_elem((4, 5), 1.0f32).view()).unwrap();
    let mut g = Array2::from_elem((4, 5), 0u8);
    g[(0, 0)] = 1;
    write_npy(&p("goal.npy"), g.view()).unwrap();
    write_npy(&p("goal_small.npy"), Array2::from_elem((5, 4), 1u8).view()).unwrap();
    write_npy(&p("goal_empty.npy"), Array2::from_elem((4, 5), 0u8).view()).unwrap();
    let mut nan_goal = Array2::from_elem((4, 5), 0.0f64);
    nan_goal[(2, 3)] = f64::NAN;
    write_npy(&p("goal_nan.npy"), nan_goal.view()).unwrap();
    let mut cube = Vec::new();
    Array3::from_elem((2, 4, 5), 1.0f64).write_npy(&mut cube).unwrap();
    std::fs::write(p("speed3d.npy"), cube).unwrap();
    std::fs::write(p("garbage.npy"), b"hello").unwrap();

    let e = fails(None, &p("goal.npy"), &out, &[]);
    assert!(e.contains("missing_speed.npy"), "{e}");
    let e = fails(Some(&p("speed.npy")), &p("goal_small.npy"), &out, &[]);
    assert!(
        e.contains("goal_small.npy") && e.contains("(5, 4)") && e.contains("(4, 5)"),
        "{e}"
    );
    let e = fails(Some(&p("speed.npy")), &p("goal_empty.npy"), &out, &[]);
    assert!(e.contains("goal_empty.npy") && e.contains("no source"), "{e}");
    let e = fails(Some(&p("speed.npy")), &p("goal_nan.npy"), &out, &[]);
    assert!(
        e.contains("goal_nan.npy") && e.contains("NaN") && e.contains("row 2"),
        "{e}"
    );
    let e = fails(Some(&p("speed3d.npy")), &p("goal.npy"), &out, &[]);
    assert!(e.contains("speed3d.npy") && e.contains("dimensions"), "{e}");
    let e = fails(Some(&p("garbage.npy")), &p("goal.npy"), &out, &[]);
    assert!(e.contains("garbage.npy"), "{e}");
    // No cells at all: refused before anything the size of the claimed shape is allocated.
    write_npy(&p("speed_empty.npy"), Array2::<f64>::zeros((0, 5)).view()).unwrap();
    write_npy(&p("goal_empty_grid.npy"), Array2::<u8>::zeros((0, 5)).view()).unwrap();
    let e = fails(Some(&p("speed_empty.npy")), &p("goal_empty_grid.npy"), &out, &[]);
    assert!(
        e.contains("speed_empty.npy") && e.contains("(0, 5)") && e.contains("at least one cell"),
        "{e}"
    );
    for bad in ["0", "-1", "nan", "inf"] {
        let flag = format!("--cell-size={bad}");
        let e = fails(Some(&p("speed.npy")), &p("goal.npy"), &out, &[&flag]);
        assert!(e.contains("cell-size"), "{bad}: {e}");
    }
    let e = fails(Some(&p("speed.npy")), &p("goal.npy"), &out, &["--order", "3"]);
    assert!(e.contains("--order"), "{e}");
}

/// An `--out` in a folder that does not exist fails before the solve, naming the folder.
#[test]
fn an_output_folder_that_does_not_exist_is_refused_up_front() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n);
    write_npy(&p("speed.npy"), Array2::from_elem((4, 5), 1.0f32).view()).unwrap();
    let mut g = Array2::from_elem((4, 5), 0u8);
    g[(0, 0)] = 1;
    write_npy(&p("goal.npy"), g.view()).unwrap();
    let missing = p("no_such_dir").join("sub");
    let e = fails(
        Some(&p("speed.npy")),
        &p("goal.npy"),
        &missing.join("phi.npy"),
        &[],
    );
    let want = format!("the folder {} does not exist", missing.display());
    assert!(e.contains("--out") && e.contains(&want), "{e}");
    assert!(!e.contains("solver"), "refused before the solve: {e}");
    assert!(!p("no_such_dir").exists(), "no folder is created");
    // A missing --speed and a bad --out: the --out is named first, before any reading.
    let e = fails(None, &p("goal.npy"), &missing.join("phi.npy"), &[]);
    assert!(e.contains(&want), "{e}");
}

#[test]
fn fortran_order_arrays_solve_like_c_order_ones() {
    // numpy writes `np.asfortranarray(a)` with fortran_order True; this used to panic in the
    // solver's zero-copy view.
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n);
    let speed = Array2::from_shape_fn((5, 7), |(r, c)| 1.0 + (r * 7 + c) as f64 / 10.0);
    let fortran = speed.t().as_standard_layout().into_owned().reversed_axes();
    assert!(!fortran.is_standard_layout() && fortran == speed);
    let mut bytes = Vec::new();
    fortran.write_npy(&mut bytes).unwrap();
    std::fs::write(p("speed_f.npy"), bytes).unwrap();
    write_npy(&p("speed_c.npy"), speed.view()).unwrap();
    let mut goal = Array2::from_elem((5, 7), false);
    goal[(4, 6)] = true;
    let mut bytes = Vec::new();
    goal.t()
        .as_standard_layout()
        .into_owned()
        .reversed_axes()
        .write_npy(&mut bytes)
        .unwrap();
    std::fs::write(p("goal_f.npy"), bytes).unwrap();
    for (speed, out) in [("speed_f.npy", "phi_f.npy"), ("speed_c.npy", "phi_c.npy")] {
        let o = crowdfield(&[
            "eikonal",
            "--speed",
            s(&p(speed)),
            "--goal",
            s(&p("goal_f.npy")),
            "--out",
            s(&p(out)),
        ]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "{speed}: {err}");
    }
    let (f, c) = (
        read_npy_f64(&p("phi_f.npy")).unwrap(),
        read_npy_f64(&p("phi_c.npy")).unwrap(),
    );
    assert_eq!(f, c);
    assert_eq!(f[(4, 6)], 0.0);
    assert!(f[(0, 0)].is_finite() && f[(0, 0)] > 0.0);
}

#[test]
fn a_speed_the_solver_cannot_represent_is_refused_naming_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n);
    write_npy(&p("speed.npy"), Array2::from_elem((4, 5), 1e308f64).view()).unwrap();
    let mut goal = Array2::from_elem((4, 5), 0u8);
    goal[(0, 0)] = 1;
    write_npy(&p("goal.npy"), goal.view()).unwrap();
    let o = crowdfield(&[
        "eikonal",
        "--speed",
        s(&p("speed.npy")),
        "--goal",
        s(&p("goal.npy")),
        "--out",
        s(&p("phi.npy")),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success(),
        "a cost of 1/speed that underflows is refused"
    );
    assert!(err.contains("speed.npy") && err.contains("2^126"), "{err}");
    assert!(!p("phi.npy").exists(), "no field is written");
}
