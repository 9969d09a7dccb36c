//! The published model's calibrated door flow (docs/model.md): the bundled bottleneck (200 people, one 1 m
//! door) with Weidmann's law, a 1 m² density window and the density at the walker passes
//! persons at a rate near the bottleneck experiments' 1.3–1.9 persons/(m·s) on two cell sizes,
//! with evacuation times close to each other; with the default parameters the same room
//! empties several times too fast (the option is what changes it).

use crowdfield::map::{self, MapFile};
use crowdfield::params::{Model, SpeedLaw};
use crowdfield::sim::{SimConfig, Simulation};
use std::path::Path;

/// The specific flows (persons/(m·s)) of the bottleneck experiments the calibration follows
/// (docs/model.md).
const EXPERIMENTS_MIN_FLOW: f64 = 1.3;
/// See [`EXPERIMENTS_MIN_FLOW`].
const EXPERIMENTS_MAX_FLOW: f64 = 1.9;

/// Long enough for the slowest calibrated run (about 135 s) with a wide margin.
const MAX_TIME: f64 = 300.0;

/// The bottleneck map at `cell_size` (its shapes are in metres, so a coarser grid of the same
/// 20 m x 16 m is the same room), calibrated or with the map's own parameters.
fn bottleneck(cell_size: f64, calibrated: bool) -> crowdfield::Scene {
    let maps = Path::new(env!("CARGO_MANIFEST_DIR")).join("maps");
    let mut file = MapFile::from_path(&maps.join("bottleneck.json")).unwrap();
    assert_eq!(file.grid.cell_size, 0.25, "the map's own cell size changed");
    let (width, height) = (file.grid.cols as f64 * 0.25, file.grid.rows as f64 * 0.25);
    file.grid.cols = (width / cell_size).round() as usize;
    file.grid.rows = (height / cell_size).round() as usize;
    file.grid.cell_size = cell_size;
    // The published model, calibrated by its params or with its defaults.
    file.model = Some(Model::ContinuumCrowds);
    if calibrated {
        let params = file.params.get_or_insert_with(Default::default);
        params.speed_law = SpeedLaw::Weidmann;
        params.density_window = 1.0;
        params.density_at_walker = true;
    }
    map::compile(&file, &maps, "bottleneck.json").unwrap()
}

/// Runs the room empty and returns (the door's specific flow, the evacuation time).
fn evacuate(cell_size: f64, calibrated: bool) -> (f64, f64) {
    let config = SimConfig {
        max_time: MAX_TIME,
        ..SimConfig::default()
    };
    let mut sim = Simulation::builder(bottleneck(cell_size, calibrated))
        .config(config)
        .build()
        .unwrap();
    sim.run(|_| Ok(())).unwrap();
    let report = sim.report();
    let what = format!("{cell_size} m cells, calibrated {calibrated}");
    assert!(
        report.complete,
        "{what}: {} left at {MAX_TIME} s",
        sim.agents().len()
    );
    assert_eq!(report.density_at_walker, calibrated);
    let door = &report.total.exits[0];
    assert_eq!((door.arrivals, door.width), (200, 1.0), "{what}");
    if calibrated {
        // The published model is named as not meant for evacuation figures; no exit's flow
        // is called implausible.
        assert!(
            report.warnings.iter().all(|w| !w.starts_with("exit ")),
            "{what}: the report calls the calibrated run implausible: {:?}",
            report.warnings
        );
    }
    let flow = door.specific_flow.expect("every arrival went through the door");
    let time = report.total.evacuation_time.expect("complete");
    eprintln!("{what}: {flow:.2} persons/(m·s), out in {time:.1} s");
    (flow, time)
}

#[test]
fn the_calibrated_door_flow_is_near_the_experiments_on_two_cell_sizes() {
    let (flow_fine, time_fine) = evacuate(0.25, true);
    let (flow_coarse, time_coarse) = evacuate(0.5, true);
    for (h, q) in [(0.25, flow_fine), (0.5, flow_coarse)] {
        // The experiments' range (docs/calibration.md), which the calibrated runs fall in
        // (1.52 and 1.69); a regression such as counting walls in the window's area (1.9–2.1)
        // leaves it.
        assert!(
            (EXPERIMENTS_MIN_FLOW..=EXPERIMENTS_MAX_FLOW).contains(&q),
            "{h} m cells: {q} persons/(m·s), outside the experiments' {EXPERIMENTS_MIN_FLOW}–{EXPERIMENTS_MAX_FLOW}"
        );
    }
    let spread = (time_fine - time_coarse).abs() / time_fine.min(time_coarse);
    assert!(
        spread <= 0.2,
        "evacuation times {time_fine} s and {time_coarse} s differ by {:.0} %",
        100.0 * spread
    );
    // The same room with the map's own (default) parameters: a packed crowd leaves at the free
    // speed beyond the door.
    let (flow_default, _) = evacuate(0.25, false);
    assert!(
        flow_default > 5.0,
        "default parameters: {flow_default} persons/(m·s)"
    );
}
