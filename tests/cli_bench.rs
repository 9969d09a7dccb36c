//! `crowdfield bench` runs end to end and reports sensible figures (no timing is asserted).

use std::process::Command;

fn crowdfield(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_crowdfield"))
        .args(args)
        .output()
        .expect("run crowdfield")
}

#[test]
fn bench_eikonal_prints_a_row_per_size_with_a_small_error() {
    let out = crowdfield(&["bench", "eikonal", "--sizes", "17", "33", "--repeats", "1"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    let rows: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("| 17²") || l.starts_with("| 33²"))
        .collect();
    assert_eq!(rows.len(), 2, "{text}");
    for row in rows {
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        assert!(cells[3].contains("fast marching"), "{row}");
        let max_err: f64 = cells[6].parse().unwrap();
        assert!(
            max_err > 0.0 && max_err < 2.0,
            "first-order error out of range: {row}"
        );
    }
}

#[test]
fn bench_sim_reports_steps_on_a_bundled_map_and_rejects_a_missing_one() {
    let map = concat!(env!("CARGO_MANIFEST_DIR"), "/maps/corridor.json");
    let out = crowdfield(&["bench", "sim", map, "--steps", "3"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("corridor.json"));
    let out = crowdfield(&["bench", "sim", "no/such/map.json"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no/such/map.json"));
}

#[test]
fn bench_eikonal_refuses_a_grid_too_large_for_memory() {
    // 100000² cells used to abort on allocation (no message, signal exit).
    let out = crowdfield(&["bench", "eikonal", "--sizes", "100000", "--repeats", "1"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--sizes 100000") && err.contains("too large"),
        "{err}"
    );
}

#[test]
fn bench_refuses_zero_steps_or_repeats_rather_than_timing_nothing() {
    let map = concat!(env!("CARGO_MANIFEST_DIR"), "/maps/corridor.json");
    for args in [
        &["bench", "sim", map, "--steps", "0"][..],
        &["bench", "eikonal", "--sizes", "17", "--repeats", "0"][..],
    ] {
        let out = crowdfield(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("'0'") && err.contains("not in 1.."),
            "{args:?}: {err}"
        );
        assert!(out.stdout.is_empty(), "no table for {args:?}");
    }
}

#[test]
fn bench_sim_says_when_the_crowd_left_before_the_steps_were_timed() {
    // The corridor's single walker takes about 30 s: 10,000 steps outlast it.
    let map = concat!(env!("CARGO_MANIFEST_DIR"), "/maps/corridor.json");
    let out = crowdfield(&["bench", "sim", map, "--steps", "10000"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("the crowd left after") && err.contains("of the 10000 timed steps"),
        "{err}"
    );
}

#[test]
fn bench_local_prints_a_row_per_size_and_names_the_backend() {
    let out = crowdfield(&["bench", "local", "--agents", "300", "1200", "--steps", "2"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    let rows: Vec<Vec<String>> = text
        .lines()
        .filter(|l| l.starts_with("| 300 ") || l.starts_with("| 1200 "))
        .map(|l| l.split('|').map(|c| c.trim().to_string()).collect())
        .collect();
    assert_eq!(rows.len(), 2, "{text}");
    for cells in &rows {
        assert_eq!(cells[2], "boids+orca", "{cells:?}");
        assert!(cells[3].starts_with("cpu-multi ("), "{cells:?}");
        let steps_per_s: f64 = cells[4].parse().unwrap();
        assert!(steps_per_s > 0.0, "{cells:?}");
        let infeasible: f64 = cells[8].parse().unwrap();
        assert!((0.0..=100.0).contains(&infeasible), "{cells:?}");
    }
    let out = crowdfield(&[
        "bench",
        "local",
        "--agents",
        "400",
        "--steps",
        "1",
        "--backend",
        "cpu-single",
        "--mode",
        "orca",
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("| 400 | orca | cpu-single |"));
}

#[test]
fn bench_local_on_the_gpu_names_the_adapter_or_says_why_not() {
    let out = crowdfield(&[
        "bench",
        "local",
        "--agents",
        "500",
        "--steps",
        "1",
        "--backend",
        "gpu",
    ]);
    if out.status.success() {
        assert!(String::from_utf8_lossy(&out.stdout).contains("| boids+orca | gpu on "));
    } else {
        assert!(
            std::env::var_os("CROWDFIELD_REQUIRE_GPU").is_none(),
            "a GPU is required here: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            String::from_utf8_lossy(&out.stderr)
                .to_lowercase()
                .contains("adapter")
        );
    }
}

#[test]
fn bench_local_refuses_bad_arguments_before_any_table() {
    for (args, says) in [
        (&["--agents", "0"][..], "--agents 0"),
        (&["--agents", "30000000"][..], "--agents 30000000"),
        (&["--density", "0"][..], "--density 0"),
        (&["--density", "NaN"][..], "--density NaN"),
        (&["--mode", "none"][..], "--mode none"),
        // A square too large for memory (once an ndarray panic after the table's header).
        (
            &["--agents", "1", "--density", "1e-20"][..],
            "--agents 1 at --density 1e-20",
        ),
        (
            &["--agents", "10", "--density", "1e-300"][..],
            "--agents 10 at --density 1e-300: a square of 1.5811388300841897e150 x",
        ),
    ] {
        let out = crowdfield(&[&["bench", "local"][..], args].concat());
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "no table for {args:?}");
    }
}
