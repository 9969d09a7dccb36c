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

/// Whether a GPU adapter opens; without one the GPU checks are skipped unless
/// `CROWDFIELD_REQUIRE_GPU=1` (CI on lavapipe sets it), which makes that a failure.
fn gpu_available() -> bool {
    match crowdfield::gpu::GpuContext::new() {
        Ok(_) => true,
        Err(e) => {
            let required = std::env::var("CROWDFIELD_REQUIRE_GPU").is_ok_and(|v| v == "1");
            assert!(!required, "CROWDFIELD_REQUIRE_GPU=1 but no GPU context: {e}");
            eprintln!("skipping the GPU checks: {e}");
            false
        }
    }
}

/// The GPU solver's counters reach `bench eikonal`, `eikonal --timing` and `solve`'s
/// summary.json, with the same figures as the library's solve.
#[test]
fn the_gpu_counters_reach_every_report() {
    if !gpu_available() {
        return;
    }
    let n = 100;
    let out = crowdfield(&[
        "bench",
        "eikonal",
        "--grid",
        "walls",
        "--sizes",
        "100",
        "--repeats",
        "1",
        "--backend",
        "gpu",
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    let row = text
        .lines()
        .find(|l| l.starts_with("| 100², walls"))
        .unwrap_or_else(|| panic!("{text}"));
    let cells: Vec<&str> = row.split('|').map(str::trim).collect();
    assert!(cells[3].contains("block FIM"), "{row}");
    let ctx = crowdfield::gpu::GpuContext::new().unwrap();
    let (cost, goal) =
        crowdfield::eikonal::grids::bench_grid(crowdfield::eikonal::grids::BenchGrid::Walls, n);
    let lib = ctx.solve_fim(cost.view(), &[goal], 1.0).unwrap()[0]
        .counters
        .unwrap();
    assert_eq!(cells[7], lib.passes.to_string(), "{row}");
    assert_eq!(cells[8], lib.dispatches.to_string(), "{row}");
    assert_eq!(cells[9], lib.read_backs.to_string(), "{row}");
    assert_eq!(
        cells[10],
        format!("{:.1}", lib.relaxations_per_reachable_cell),
        "{row}"
    );
    assert!(
        lib.passes > 0 && lib.relaxations_per_reachable_cell >= 1.0,
        "{lib:?}"
    );

    // eikonal --timing: the counters object, null on the CPU.
    let dir = tempfile::tempdir().unwrap();
    let (speed, goal, phi) = (
        dir.path().join("speed.npy"),
        dir.path().join("goal.npy"),
        dir.path().join("phi.npy"),
    );
    crowdfield::io::write_npy(&speed, ndarray::Array2::from_elem((40, 70), 1.5f64).view()).unwrap();
    let mut g = ndarray::Array2::from_elem((40, 70), false);
    g[(3, 5)] = true;
    crowdfield::io::write_npy(&goal, g.view()).unwrap();
    let p = |p: &std::path::Path| p.to_str().unwrap().to_string();
    for (backend, gpu) in [("gpu", true), ("cpu", false)] {
        let o = crowdfield(&[
            "eikonal",
            "--speed",
            &p(&speed),
            "--goal",
            &p(&goal),
            "--out",
            &p(&phi),
            "--timing",
            "--backend",
            backend,
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let timing: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let c = &timing["counters"];
        if gpu {
            // The front crosses the one row of tiles from the source's tile eastwards.
            assert_eq!(c["passes"], 70usize.div_ceil(ctx.fim_tile()), "{timing}");
            assert_eq!(c["dispatches"], 64, "{timing}");
            assert_eq!(c["read_backs"], 1, "{timing}");
            assert_eq!(c["tile"], ctx.fim_tile(), "{timing}");
            assert!(c["relaxations"].as_u64().unwrap() > 2800, "{timing}");
        } else {
            assert!(c.is_null(), "{timing}");
        }
    }

    // solve: summary.json per group.
    let map = concat!(env!("CARGO_MANIFEST_DIR"), "/maps/corridor.json");
    let out_dir = dir.path().join("solved");
    let o = crowdfield(&["solve", map, "--out", &p(&out_dir), "--backend", "gpu"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("summary.json")).unwrap()).unwrap();
    let group = &summary["groups"][0];
    assert_eq!(group["solver"], "fim-gpu");
    assert_eq!(group["counters"]["passes"], group["passes"], "{group}");
    assert!(group["counters"]["dispatches"].as_u64().unwrap() >= 64, "{group}");
    assert!(
        group["counters"]["relaxations_per_reachable_cell"]
            .as_f64()
            .unwrap()
            >= 1.0,
        "{group}"
    );
}
