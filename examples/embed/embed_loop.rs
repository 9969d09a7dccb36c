//! Embedding a simulation in a program's own loop: build it, step it, and read the walkers'
//! positions after every step (as a game or a visualisation would each frame).
//!
//! `cargo run --release -p crowdfield-examples --example embed_loop -- [MAP] [SEED]` (defaults
//! `maps/hall.json` and 7). The examples are a package of their own, so this builds the example
//! alone on a tree where `cargo build --release` ran, none of the library's test-only
//! dependencies.
//! Prints the crowd's centre every 50 steps and, at the end, how many got out and when.
//! `tests/examples.rs` runs it.
//!
//! The walkers avoid each other with ORCA, which a game usually wants, and which lets fewer
//! people through a narrow door than real crowds: on `maps/bottleneck.json` (one 1 m door)
//! about half the crowd is still queueing at 300 s. For evacuation figures run without a local
//! layer (docs/model.md).

use crowdfield::prelude::*;
use std::io::Write;
use std::path::Path;

fn main() -> std::process::ExitCode {
    match main_with_args() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// Reads `[MAP] [SEED]` and runs them.
fn main_with_args() -> Result<()> {
    let mut args = std::env::args().skip(1);
    let map = args
        .next()
        .unwrap_or_else(|| concat!(env!("CARGO_MANIFEST_DIR"), "/../../maps/hall.json").to_string());
    let seed: u64 = match args.next() {
        None => 7,
        Some(s) => s.parse().map_err(|_| {
            Error::invalid(
                crowdfield::error::OPTIONS,
                "SEED",
                format!("{s:?}: expected a whole number"),
            )
        })?,
    };
    run(Path::new(&map), seed, &mut std::io::stdout())?;
    Ok(())
}

/// Runs `map` with `seed` under ORCA for at most 300 s, writing the crowd's centre every 50
/// steps and a closing line to `out`; returns how many got out and how many there were.
pub fn run(map: &Path, seed: u64, out: &mut impl Write) -> Result<(usize, usize)> {
    let scene = crowdfield::map::load(map)?;
    let mut sim = Simulation::builder(scene)
        .seed(seed)
        .local(LocalMode::Orca)
        .max_time(300.0)
        .build()?;
    let total: usize = sim.spawned().iter().sum();
    let io = |e: std::io::Error| Error::Io {
        path: "<stdout>".into(),
        source: e,
    };
    while !sim.finished() {
        sim.step();
        // What a renderer would draw this frame: one (x, y) per walker still inside.
        let (x, y) = sim.positions();
        if sim.steps() % 50 == 0 && !x.is_empty() {
            let n = x.len() as f32;
            let (cx, cy) = (x.iter().sum::<f32>() / n, y.iter().sum::<f32>() / n);
            writeln!(
                out,
                "t = {:6.1} s: {:4} inside, centre ({cx:5.1}, {cy:5.1}) m",
                sim.time(),
                x.len()
            )
            .map_err(io)?;
        }
    }
    let last = sim.arrivals().last().map_or(0.0, |a| a.time);
    writeln!(
        out,
        "{} of {total} out; the last at {last:.1} s ({} steps of {:.3} s)",
        sim.arrivals().len(),
        sim.steps(),
        sim.dt()
    )
    .map_err(io)?;
    Ok((sim.arrivals().len(), total))
}
