//! The suite's maps: the scene sizes of the full and the quick suite and every map the tests
//! run, built from the options before anything runs.

use super::tag;
use crate::error::Result;
use crate::map::{MapFile, SpeedRange};
use crate::speeds::RimeaPopulation;
use crate::verify::VerifyOptions;
use crate::verify::criteria::WEIDMANN_FREE_SPEED;
use crate::verify::scenarios::{SceneBuilder, goal, group, rect, spawn, spawn_waiting};

/// Cell edge of most scenes, m: doors of 1 m are four cells wide.
const CELL: f64 = 0.25;
/// Cell edge of the bottleneck scenes, m: every width of the series is a whole number of cells.
const BOTTLENECK_CELL: f64 = 0.1;

/// The body radius of the fundamental-diagram crowds, m: a hexagonal packing of discs of
/// 0.2 m holds 7.2 persons/m², so RiMEA 4's 5 persons/m² can be placed.
const DENSE_RADIUS: f64 = 0.2;

/// The scene sizes of a suite.
pub(super) struct Sizes {
    pub(super) densities: Vec<f64>,
    pub(super) line_densities: Vec<f64>,
    pub(super) widths: Vec<f64>,
    pub(super) bottleneck_persons: usize,
    pub(super) rimea9_room: (f64, f64, usize),
    pub(super) rimea11_persons: usize,
    pub(super) rimea12_persons: usize,
    pub(super) rimea15_persons: usize,
}

impl Sizes {
    pub(super) fn of(quick: bool) -> Self {
        if quick {
            Sizes {
                densities: vec![0.5, 2.0, 4.0],
                line_densities: vec![1.0, 2.0],
                widths: vec![0.7, 1.2, 2.5],
                bottleneck_persons: 60,
                rimea9_room: (15.0, 10.0, 250),
                rimea11_persons: 100,
                rimea12_persons: 80,
                rimea15_persons: 100,
            }
        } else {
            Sizes {
                densities: vec![0.5, 1.0, 2.0, 3.0, 4.0, 5.0],
                line_densities: vec![1.0, 1.5, 2.0],
                widths: vec![0.7, 1.0, 1.2, 1.6, 2.0, 2.5],
                bottleneck_persons: 100,
                rimea9_room: (30.0, 20.0, 1000),
                rimea11_persons: 200,
                rimea12_persons: 150,
                rimea15_persons: 200,
            }
        }
    }

    /// Runs per seed: one per map the tests run.
    pub(super) fn runs_per_seed(&self) -> usize {
        // 1, 4 (densities), 5, 6, 7, 9 (two), 10, 11, 12, 15, 16 (line densities), bottleneck.
        1 + self.densities.len()
            + 1
            + 1
            + 1
            + 2
            + 1
            + 1
            + 1
            + 1
            + self.line_densities.len()
            + self.widths.len()
    }
}

/// RiMEA 6's corner: the corridor's width, m, and the walkers.
pub(super) const RIMEA6_CORNER: (f64, usize) = (2.0, 20);
/// RiMEA 15's corner: the corridor's width, m (the walkers depend on the suite's size).
pub(super) const RIMEA15_WIDTH: f64 = 4.0;

/// Every map the suite runs, built from the options before anything runs, so a `params` block
/// or model the maps cannot carry is refused before the first run ([`Scenarios::check`]).
pub(super) struct Scenarios {
    pub(super) rimea1: MapFile,
    pub(super) rimea4: Vec<MapFile>,
    pub(super) rimea5: MapFile,
    pub(super) rimea6: MapFile,
    pub(super) rimea7: MapFile,
    pub(super) rimea9: [MapFile; 2],
    pub(super) rimea10: MapFile,
    pub(super) rimea11: MapFile,
    pub(super) rimea12: MapFile,
    pub(super) rimea15: MapFile,
    pub(super) rimea16: Vec<MapFile>,
    pub(super) bottleneck: Vec<MapFile>,
}

impl Scenarios {
    /// The maps of a suite of `sizes` under `o`.
    pub(super) fn of(o: &VerifyOptions, sizes: &Sizes) -> Self {
        Scenarios {
            rimea1: rimea1_map(o),
            rimea4: rimea4_maps(o, sizes),
            rimea5: rimea5_map(o),
            rimea6: corner_map(o, 6, RIMEA6_CORNER.0, RIMEA6_CORNER.1),
            rimea7: rimea7_map(o),
            rimea9: [rimea9_map(o, sizes, 4), rimea9_map(o, sizes, 2)],
            rimea10: rimea10_map(o),
            rimea11: rimea11_map(o, sizes),
            rimea12: rimea12_map(o, sizes),
            rimea15: corner_map(o, 15, RIMEA15_WIDTH, sizes.rimea15_persons),
            rimea16: rimea16_maps(o, sizes),
            bottleneck: bottleneck_maps(o, sizes),
        }
    }

    /// Every map, in the order the tests run them.
    pub(super) fn all(&self) -> Vec<&MapFile> {
        let mut all = vec![&self.rimea1];
        all.extend(&self.rimea4);
        all.extend([&self.rimea5, &self.rimea6, &self.rimea7]);
        all.extend(&self.rimea9);
        all.extend([&self.rimea10, &self.rimea11, &self.rimea12, &self.rimea15]);
        all.extend(&self.rimea16);
        all.extend(&self.bottleneck);
        all
    }

    /// Compiles every map as a run would: the first map's problems (every map carries the same
    /// `params` block and model), each named by the map's file and the JSON path.
    pub(super) fn check(&self) -> Result<()> {
        for map in self.all() {
            crate::map::compile(map, std::path::Path::new("."), &format!("{}.json", map.name))?;
        }
        Ok(())
    }
}

/// RiMEA 1's map: one walker at 1.33 m/s along a 40 m corridor 2 m wide.
fn rimea1_map(o: &VerifyOptions) -> MapFile {
    let mut g = group("walker", 1.33);
    g.goals.push(goal("end", rect(39.75, 0.0, 40.0, 2.0), 2.0));
    g.spawns.push(spawn("start", rect(0.0, 0.75, 0.5, 1.25), 1));
    SceneBuilder::new("rimea-1-corridor", 40.0, 2.0, CELL)
        .group(g)
        .params(o.params.clone())
        .model(o.model)
        .build()
}

/// RiMEA 5's map: ten walkers with pre-movement times uniform in 10–100 s.
fn rimea5_map(o: &VerifyOptions) -> MapFile {
    let mut g = group("walkers", 1.34);
    g.goals.push(goal("exit", rect(7.75, 2.0, 8.0, 3.0), 1.0));
    g.spawns
        .push(spawn_waiting("room", rect(0.5, 0.5, 4.5, 4.5), 10, 10.0, 100.0));
    SceneBuilder::new("rimea-5-premovement", 8.0, 5.0, CELL)
        .group(g)
        .params(o.params.clone())
        .model(o.model)
        .build()
}

/// The map of RiMEA 6 or 15 (`number`): `persons` walkers round a left turn of a corridor
/// `width` metres wide.
fn corner_map(o: &VerifyOptions, number: u32, width: f64, persons: usize) -> MapFile {
    // The leg walked first runs along x; the second turns left (up) at its end.
    let (leg, up) = (6.0 * width, 6.0 * width);
    let size = leg + width;
    let mut g = group("walkers", 1.34);
    g.goals
        .push(goal("top", rect(leg, up + width - 0.25, size, up + width), width));
    g.spawns
        .push(spawn("start", rect(0.0, 0.0, 0.6 * leg, width), persons));
    SceneBuilder::new(&format!("rimea-{number}-corner"), size, up + width, CELL)
        .wall(rect(0.0, width, leg, up + width))
        .group(g)
        .params(o.params.clone())
        .model(o.model)
        .build()
}

/// RiMEA 7's map: 50 adults of RiMEA's walking speeds by age on one line across a wide hall.
fn rimea7_map(o: &VerifyOptions) -> MapFile {
    let mut g = group("adults", 1.34);
    g.speed = SpeedRange {
        rimea: Some(RimeaPopulation::Adults.name().to_string()),
        ..Default::default()
    };
    // Everyone starts on one line across a wide hall, so a walker never catches up with a
    // slower one ahead of it: each crosses the lines at its own free speed.
    g.goals.push(goal("end", rect(49.5, 0.0, 50.0, 60.0), 60.0));
    g.spawns.push(spawn("start", rect(0.5, 0.0, 1.5, 60.0), 50));
    SceneBuilder::new("rimea-7-age-groups", 50.0, 60.0, 0.5)
        .group(g)
        .params(o.params.clone())
        .model(o.model)
        .build()
}

/// RiMEA 9's map with `n` exits (4 or 2): the room inside a 0.5 m wall with 1 m doors; each
/// exit's goal is a strip 2 m long, 1 m past its door (a goal on the map's edge with no wall
/// around it is no door: docs/model.md).
fn rimea9_map(o: &VerifyOptions, sizes: &Sizes, n: usize) -> MapFile {
    let (w, h, persons) = sizes.rimea9_room;
    const WALL: f64 = 0.5;
    const OUTSIDE: f64 = 1.0;
    let m = WALL + OUTSIDE;
    let (width, height) = (w + 2.0 * m, h + 2.0 * m);
    let mut g = group("crowd", 1.34);
    // (x of the door's centre, on the bottom wall)
    let spots = [
        (0.2 * w, true),
        (0.8 * w, false),
        (0.8 * w, true),
        (0.2 * w, false),
    ];
    let mut scene = SceneBuilder::new(&format!("rimea-9-{n}-exits"), width, height, CELL)
        .wall(rect(OUTSIDE, OUTSIDE, width - OUTSIDE, m))
        .wall(rect(OUTSIDE, height - m, width - OUTSIDE, height - OUTSIDE))
        .wall(rect(OUTSIDE, OUTSIDE, m, height - OUTSIDE))
        .wall(rect(width - m, OUTSIDE, width - OUTSIDE, height - OUTSIDE));
    for (k, &(x, bottom)) in spots.iter().take(n).enumerate() {
        let x = m + x;
        let (door, strip) = if bottom {
            (
                rect(x - 0.5, OUTSIDE, x + 0.5, m),
                rect(x - 1.0, 0.0, x + 1.0, 0.25),
            )
        } else {
            (
                rect(x - 0.5, height - m, x + 0.5, height - OUTSIDE),
                rect(x - 1.0, height - 0.25, x + 1.0, height),
            )
        };
        scene = scene.opening(door);
        g.goals.push(goal(&format!("exit {}", k + 1), strip, 1.0));
    }
    g.spawns.push(spawn(
        "room",
        rect(m + 0.5, m + 0.5, m + w - 0.5, m + h - 0.5),
        persons,
    ));
    scene.group(g).params(o.params.clone()).model(o.model).build()
}

/// RiMEA 10's map: two groups, each assigned to the exit farther from it.
fn rimea10_map(o: &VerifyOptions) -> MapFile {
    let mut east = group("to the east exit", 1.34);
    east.goals.push(goal("east", rect(19.75, 4.5, 20.0, 5.5), 1.0));
    east.spawns.push(spawn("west half", rect(2.0, 1.0, 8.0, 9.0), 20));
    let mut west = group("to the west exit", 1.34);
    west.goals.push(goal("west", rect(0.0, 4.5, 0.25, 5.5), 1.0));
    west.spawns
        .push(spawn("east half", rect(12.0, 1.0, 18.0, 9.0), 20));
    SceneBuilder::new("rimea-10-assigned-exits", 20.0, 10.0, CELL)
        .group(east)
        .group(west)
        .params(o.params.clone())
        .model(o.model)
        .build()
}

/// RiMEA 11's map: a crowd near one of two exits.
fn rimea11_map(o: &VerifyOptions, sizes: &Sizes) -> MapFile {
    let mut g = group("crowd", 1.34);
    g.goals.push(goal("near", rect(1.0, 9.75, 2.0, 10.0), 1.0));
    g.goals.push(goal("far", rect(18.0, 9.75, 19.0, 10.0), 1.0));
    g.spawns
        .push(spawn("left end", rect(0.5, 0.5, 8.0, 9.0), sizes.rimea11_persons));
    SceneBuilder::new("rimea-11-exit-choice", 20.0, 10.0, CELL)
        .group(g)
        .params(o.params.clone())
        .model(o.model)
        .build()
}

/// RiMEA 12's map: room, 1 m door, corridor, second room with its exit.
fn rimea12_map(o: &VerifyOptions, sizes: &Sizes) -> MapFile {
    let mut g = group("crowd", 1.34);
    g.goals.push(goal("exit", rect(29.75, 4.0, 30.0, 6.0), 2.0));
    g.spawns.push(spawn(
        "first room",
        rect(0.5, 0.5, 8.0, 9.5),
        sizes.rimea12_persons,
    ));
    SceneBuilder::new("rimea-12-room-corridor-room", 30.0, 10.0, CELL)
        .wall(rect(10.0, 0.0, 10.5, 10.0))
        .opening(rect(10.0, 4.5, 10.5, 5.5))
        .wall(rect(10.5, 0.0, 20.0, 4.0))
        .wall(rect(10.5, 6.0, 20.0, 10.0))
        .group(g)
        .params(o.params.clone())
        .model(o.model)
        .build()
}

/// A corridor of `width` metres and 50 m with `count` walkers over its first 30 m.
fn crowded_corridor(o: &VerifyOptions, name: &str, width: f64, count: usize) -> MapFile {
    let mut g = group("walkers", WEIDMANN_FREE_SPEED);
    g.radius = DENSE_RADIUS;
    g.goals.push(goal("end", rect(49.75, 0.0, 50.0, width), width));
    g.spawns.push(spawn("crowd", rect(0.0, 0.0, 30.0, width), count));
    SceneBuilder::new(name, 50.0, width, CELL)
        .group(g)
        .params(o.params.clone())
        .model(o.model)
        .build()
}

/// The width of RiMEA 4's corridor, m.
pub(super) const RIMEA4_WIDTH: f64 = 4.0;

/// RiMEA 4's maps: a corridor 4 m wide at each starting density.
fn rimea4_maps(o: &VerifyOptions, sizes: &Sizes) -> Vec<MapFile> {
    sizes
        .densities
        .iter()
        .map(|&rho| {
            let count = (rho * 30.0 * RIMEA4_WIDTH).round() as usize;
            crowded_corridor(o, &format!("rimea-4-density-{}", tag(rho)), RIMEA4_WIDTH, count)
        })
        .collect()
}

/// RiMEA 16's maps: a corridor 0.5 m wide at each line density.
fn rimea16_maps(o: &VerifyOptions, sizes: &Sizes) -> Vec<MapFile> {
    const WIDTH: f64 = 0.5;
    sizes
        .line_densities
        .iter()
        .map(|&rho| {
            let count = (rho * 30.0).round() as usize;
            crowded_corridor(o, &format!("rimea-16-line-density-{}", tag(rho)), WIDTH, count)
        })
        .collect()
}

/// The bottleneck series' maps: a room emptying through one door of each width.
fn bottleneck_maps(o: &VerifyOptions, sizes: &Sizes) -> Vec<MapFile> {
    let persons = sizes.bottleneck_persons;
    sizes
        .widths
        .iter()
        .map(|&w| {
            // The door spans whole cells: its edges sit 0.01 m below cell boundaries, so float
            // rounding never adds or drops a row of cells.
            let (y0, y1) = (4.0 - w / 2.0 - 0.01, 4.0 + w / 2.0 - 0.01);
            let mut g = group("crowd", 1.34);
            g.goals.push(goal("door", rect(8.4, y0, 8.6, y1), w));
            g.spawns.push(spawn("room", rect(0.5, 0.5, 6.0, 7.5), persons));
            SceneBuilder::new(&format!("bottleneck-{}-m", tag(w)), 9.0, 8.0, BOTTLENECK_CELL)
                .wall(rect(8.0, 0.0, 8.4, 8.0))
                .opening(rect(8.0, y0, 8.4, y1))
                .group(g)
                .params(o.params.clone())
                .model(o.model)
                .build()
        })
        .collect()
}
