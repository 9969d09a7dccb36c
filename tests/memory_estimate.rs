//! The memory estimate against the heap bytes a run allocates: `simulate`'s work (the map's
//! check, the build, the steps, the trajectories, frames and outputs) done through the library
//! under a counting allocator. A test binary of its own, since it counts every heap byte of the
//! process.

mod memory_support;

use crowdfield::local::LocalMode;
use crowdfield::run::draw::FrameField;
use crowdfield::run::output;
use crowdfield::sim::{SimConfig, Simulation};
use std::path::Path;

#[global_allocator]
static HEAP: memory_support::Counting = memory_support::Counting;

/// A `cols x rows` hall of 0.5 m cells: a wall across it with two doors, `groups` groups of 40
/// walkers on the west side, each heading for its own exit on the east side.
fn write_map(
    dir: &Path,
    cols: usize,
    rows: usize,
    groups: usize,
    model: &str,
    params: serde_json::Value,
) -> std::path::PathBuf {
    let (w, h) = (cols as f64 * 0.5, rows as f64 * 0.5);
    let groups: Vec<serde_json::Value> = (0..groups)
        .map(|g| {
            let band = h / groups as f64;
            serde_json::json!({
                "name": format!("g{g}"),
                "goals": [{"rect": {"min": [w - 1.0, band * g as f64], "max": [w, band * (g + 1) as f64]}}],
                "spawns": [{"rect": {"min": [1.0, band * g as f64 + 0.5], "max": [9.0, band * (g + 1) as f64 - 0.5]},
                            "count": 40}],
                "speed": {"min": 1.2, "max": 1.4}
            })
        })
        .collect();
    let map = serde_json::json!({
        "version": 1,
        "name": "hall",
        "grid": {"cols": cols, "rows": rows, "cell_size": 0.5},
        "layers": {"obstacles": {"shapes": [
            {"rect": {"min": [w / 2.0, 0.0], "max": [w / 2.0 + 0.5, h * 0.3]}},
            {"rect": {"min": [w / 2.0, h * 0.35], "max": [w / 2.0 + 0.5, h * 0.65]}},
            {"rect": {"min": [w / 2.0, h * 0.7], "max": [w / 2.0 + 0.5, h]}}
        ]}},
        "model": model,
        "params": params,
        "groups": groups
    });
    let path = dir.join("hall.json");
    std::fs::write(&path, map.to_string()).unwrap();
    path
}

/// What a run of `simulate` does, through the library: the map's check, the build, `steps`
/// steps with the trajectories (SQLite) and `frames` every so many steps, the outputs and the
/// report page. Returns the peak heap bytes above those live before it, and the estimate.
fn peak_of_a_run(
    map: &Path,
    out: &Path,
    local: LocalMode,
    frames: Option<(usize, FrameField)>,
) -> (u64, u64) {
    memory_support::reset_peak();
    let before = memory_support::live();
    let scene = crowdfield::sim::load_map(map, &Default::default()).unwrap();
    let _ = crowdfield::map::warnings(&scene);
    let config = SimConfig {
        max_time: 3.0,
        full_potentials: matches!(frames, Some((_, FrameField::Potential))),
        ..SimConfig::default()
    };
    let mut sim = Simulation::builder(scene)
        .config(config)
        .local(local)
        .build()
        .unwrap();
    let estimate = sim.memory_size().simulation_bytes();
    let grid = sim.scene().grid;
    let mut db = crowdfield::export::jupedsim::SqliteTrajectories::create(
        &out.join("trajectories.sqlite"),
        10.0,
        &crowdfield::export::jupedsim::scene_walkable_wkt(sim.scene()),
    )
    .unwrap();
    db.record(&sim).unwrap();
    let mut frame = 0;
    sim.run(|s| {
        db.record(s)?;
        if let Some((every, field)) = frames
            && (s.steps() - 1).is_multiple_of(every)
        {
            output::write_frame_to(out, frame, s, field)?;
            frame += 1;
        }
        Ok(())
    })
    .unwrap();
    db.finish().unwrap();
    let report = output::write_run(out, &sim).unwrap();
    crowdfield::run::planner::write_report_page(out, &report, &grid, "hall.json", "0", Vec::new()).unwrap();
    drop(sim);
    ((memory_support::peak() - before) as u64, estimate)
}

/// The estimate covers what a run allocates at its peak, and is not far above it: for one and
/// for three groups, for the pedestrian model and for the published one with ORCA, potential
/// frames and a density window.
#[test]
fn the_memory_estimate_covers_a_runs_peak_within_a_factor() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (1, "pedestrian", serde_json::json!({}), LocalMode::None, None),
        (
            3,
            "pedestrian",
            serde_json::json!({}),
            LocalMode::None,
            Some((5, FrameField::Density)),
        ),
        (
            2,
            "continuum_crowds",
            serde_json::json!({"density_window": 1.0}),
            LocalMode::Orca,
            Some((5, FrameField::Potential)),
        ),
    ];
    for (i, (groups, model, params, local, frames)) in cases.into_iter().enumerate() {
        let case = dir.path().join(format!("case{i}"));
        std::fs::create_dir(&case).unwrap();
        let map = write_map(&case, 800, 600, groups, model, params.clone());
        let (peak, estimate) = peak_of_a_run(&map, &case, local, frames);
        eprintln!("case {i}: {groups} group(s), {model}, {params}: peak {peak} bytes, estimate {estimate}");
        assert!(
            peak <= estimate,
            "case {i}: a run took {peak} bytes, the estimate says {estimate}"
        );
        assert!(
            estimate <= 2 * peak,
            "case {i}: the estimate {estimate} is over twice the run's {peak} bytes"
        );
    }
}
