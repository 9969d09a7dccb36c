//! Memory of a map with many areas: each spawn area and goal takes the memory of its own cells,
//! not of the grid. A test binary of its own, since it counts every heap byte of the process.

mod memory_support;

#[global_allocator]
static HEAP: memory_support::Counting = memory_support::Counting;

/// A 1000 x 1000 grid of 0.5 m cells with 20,000 spawn areas of one walker each (1 m squares
/// 3 m apart) and an exit along the east edge: validated (the check every command runs,
/// walkers placed as `simulate` places them) and built into a simulation within 1 GiB of heap,
/// where a grid-sized mask per area would take 20 GB.
#[test]
fn twenty_thousand_spawn_areas_validate_and_build_within_a_gigabyte() {
    let mut spawns = Vec::new();
    for i in 0..20_000 {
        let (x, y) = (2.0 + 3.0 * (i % 150) as f64, 2.0 + 3.0 * (i / 150) as f64);
        spawns.push(serde_json::json!({
            "rect": {"min": [x, y], "max": [x + 1.0, y + 1.0]},
            "count": 1
        }));
    }
    let map = serde_json::json!({
        "version": 1,
        "name": "many areas",
        "grid": {"cols": 1000, "rows": 1000, "cell_size": 0.5},
        "groups": [{
            "name": "walkers",
            "goals": [{"rect": {"min": [499.0, 0.0], "max": [500.0, 500.0]}, "name": "east"}],
            "spawns": spawns,
            "speed": {"min": 1.2, "max": 1.4}
        }]
    });
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("many.json");
    std::fs::write(&path, map.to_string()).unwrap();

    memory_support::set_cap(memory_support::live() + (1 << 30));
    let scene = crowdfield::sim::load_map(&path, &Default::default()).unwrap();
    assert_eq!(scene.groups[0].spawns.len(), 20_000);
    let sim = crowdfield::sim::Simulation::builder(scene)
        .max_time(1.0)
        .build()
        .unwrap();
    assert_eq!(sim.spawned(), [20_000]);
    memory_support::set_cap(usize::MAX);
}
