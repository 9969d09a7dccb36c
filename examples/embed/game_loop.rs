//! A game's loop driving a simulation: scripted input stands for a player (at given frames a
//! "click" adds a hundred walkers at a point, a "key" closes or opens a door), and a tram (a
//! moving obstacle, the map's `movers`) crosses the crowd, which parts ahead of it: the
//! potentials see where the tram stands and where it will be within a second, and bodies it
//! reaches are pushed aside.
//!
//! `cargo run --release -p crowdfield-examples --example game_loop -- [OUT] [SEED]` (defaults
//! `out/game` and 7): writes one frame every [`FRAME_EVERY`] steps as PNG into the folder OUT
//! and prints where, then how many got out, how many times the tram touched a walker and how
//! many frames the loop ran. The scene is `examples/embed/game.json`; `tests/movers.rs` plays
//! the same script and checks that no body ever overlaps the tram.

use crowdfield::prelude::*;
use crowdfield::run::draw::{FrameField, frame};
use crowdfield::sim::StepEvents;
use std::path::{Path, PathBuf};

/// The scene: a 40 m x 24 m square with a north door and an east exit, a crowd in its south
/// half and a tram line across the middle.
pub const SCENE: &str = include_str!("game.json");

/// One frame is saved every this many steps (a second at the 0.1 s time step).
pub const FRAME_EVERY: usize = 10;

/// The time step, seconds: one step per game frame.
pub const DT: f64 = 0.1;

/// What the player does, and at which frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Input {
    /// A click: a hundred walkers at the point `(x, y)`, metres, on a 10 x 10 lattice.
    Click(f32, f32),
    /// A key: the door named so closes if open, opens if closed.
    Key(&'static str),
}

/// The scripted player: a click north of the tram line at 4 s, the north door closed at 10 s
/// (the clicked crowd then crosses the line to the east exit) and opened again at 20 s.
pub const SCRIPT: &[(usize, Input)] = &[
    (40, Input::Click(30.0, 19.0)),
    (100, Input::Key("north door")),
    (200, Input::Key("north door")),
];

/// Spacing of the clicked walkers' lattice, metres (clear of each other's 0.22 m bodies).
const CLICK_SPACING: f32 = 0.55;

/// What a game ran to.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Summary {
    /// Frames (steps) played.
    pub frames: usize,
    /// Walkers that came in, at the start and by clicks.
    pub walkers: usize,
    /// Walkers out.
    pub out: usize,
    /// Times the tram pushed a walker aside (a walker pushed in two steps counts twice).
    pub contacts: usize,
    /// Walkers a wall held against the tram (none on this map).
    pub blocked: usize,
    /// PNG frames written.
    pub pngs: usize,
}

fn main() -> std::process::ExitCode {
    let mut args = std::env::args().skip(1);
    let out = PathBuf::from(args.next().unwrap_or_else(|| "out/game".to_string()));
    let seed = match args.next().map(|s| s.parse::<u64>()) {
        None => 7,
        Some(Ok(seed)) => seed,
        Some(Err(_)) => {
            eprintln!("error: SEED: expected a whole number");
            return std::process::ExitCode::FAILURE;
        }
    };
    println!("writing frames to {}", out.display());
    match play(seed, Some(&out), |_, _| {}) {
        Ok(s) => {
            println!(
                "{} of {} out after {} frames; the tram pushed a walker aside {} times, {} held \
                 against a wall; {} frames in {}",
                s.out,
                s.walkers,
                s.frames,
                s.contacts,
                s.blocked,
                s.pngs,
                out.display()
            );
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// Plays [`SCRIPT`] on [`SCENE`] with `seed` until everyone is out (at most 300 s), calling
/// `each` after every frame and writing every [`FRAME_EVERY`]th frame into `frames` (created
/// when missing) as `frame_NNNNN.png`.
pub fn play(
    seed: u64,
    frames: Option<&Path>,
    mut each: impl FnMut(&Simulation, &StepEvents),
) -> Result<Summary> {
    let map = crowdfield::map::MapFile::from_json(SCENE, "game.json")?;
    let scene = crowdfield::map::compile(&map, Path::new("."), "game.json")?;
    let mut sim = Simulation::builder(scene)
        .seed(seed)
        .dt(DT)
        .max_time(300.0)
        .build()?;
    if let Some(dir) = frames {
        std::fs::create_dir_all(dir).map_err(|e| Error::Io {
            path: dir.to_path_buf(),
            source: e,
        })?;
    }
    let mut s = Summary {
        walkers: sim.agents().len(),
        ..Summary::default()
    };
    let mut door_open = std::collections::HashMap::new();
    while !sim.finished() {
        for &(_, input) in SCRIPT.iter().filter(|(at, _)| *at == s.frames) {
            match input {
                Input::Click(x, y) => {
                    for k in 0..100 {
                        let dx = (k % 10) as f32 - 4.5;
                        let dy = (k / 10) as f32 - 4.5;
                        let (px, py) = (x + CLICK_SPACING * dx, y + CLICK_SPACING * dy);
                        sim.add_walker(px, py, 0, 1.3, 0.22)?;
                        s.walkers += 1;
                    }
                }
                Input::Key(door) => {
                    let open = door_open.entry(door).or_insert(true);
                    *open = !*open;
                    sim.set_exit_open(door, *open)?;
                }
            }
        }
        let events = sim.step();
        s.frames += 1;
        s.contacts += events.pushed;
        s.blocked += events.blocked.len();
        each(&sim, &events);
        if let Some(dir) = frames
            && s.frames.is_multiple_of(FRAME_EVERY)
        {
            let img = frame(&sim, FrameField::Density);
            let path = dir.join(format!("frame_{:05}.png", s.frames));
            crowdfield::export::save_png(&path, &img)?;
            s.pngs += 1;
        }
    }
    s.out = sim.arrivals().len();
    Ok(s)
}
