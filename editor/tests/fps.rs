//! Frame rate of the editor while the fields recompute in the background, on a 256 x 256 map.
//!
//! A measurement, not a pass/fail check (speed is never asserted in tests): run it with
//! `cargo test --release -p crowdfield-editor --test fps -- --ignored --nocapture` and copy the
//! printed figure into BENCHMARKS.md. Each frame is laid out and rendered (wgpu, lavapipe in
//! CI) while the recompute thread solves; the figure is frames per second of wall time spent
//! with a recompute in flight.

mod common;

use common::{app, gpu_or_skip};
use crowdfield_editor::{Document, EditorApp};
use egui_kittest::Harness;
use std::time::{Duration, Instant};

/// Grid side of the measured map, cells.
const SIDE: usize = 256;
/// How long to measure.
const MEASURE: Duration = Duration::from_secs(10);

#[test]
#[ignore = "measurement: run with --ignored --nocapture in release"]
fn frames_per_second_while_recomputing() {
    if !gpu_or_skip("frames_per_second_while_recomputing") {
        return;
    }
    let mut app = app(Document::demo(SIDE, SIDE));
    app.timings_in_status = true;
    let first = app.recompute.last_seconds.unwrap_or(f64::NAN);
    let mut h = Harness::builder()
        .with_size(common::WINDOW)
        .wgpu()
        .with_render_every_step(true)
        .build_ui_state(|ui, app: &mut EditorApp| app.show(ui), app);
    let (mut frames, mut busy, mut solves) = (0u64, Duration::ZERO, 0u64);
    let start = Instant::now();
    while start.elapsed() < MEASURE {
        if !h.state().recompute.is_running() {
            // An edit: a small wall dab, as a user painting would make.
            let t = solves as f64;
            h.state_mut()
                .apply(crowdfield_editor::command::Command::WallRect {
                    a: [10.0 + t % 50.0, 20.0],
                    b: [10.5 + t % 50.0, 21.0],
                });
            solves += 1;
        }
        let t0 = Instant::now();
        h.step();
        if h.state().recompute.is_running() {
            busy += t0.elapsed();
            frames += 1;
        }
    }
    let fps = frames as f64 / busy.as_secs_f64();
    let last = h.state().recompute.last_seconds.unwrap_or(f64::NAN);
    println!(
        "editor fps while recomputing on {SIDE}x{SIDE}: {fps:.1} frames/s over {frames} frames \
         ({solves} recomputes; first recompute {:.0} ms, last {:.0} ms)",
        first * 1e3,
        last * 1e3
    );
    assert!(frames > 0, "no frame ran while a recompute was in flight");
}
