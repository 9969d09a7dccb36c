//! Frame rate of the editor on a 256 x 256 map while the user paints and the fields recompute
//! in the background.
//!
//! A measurement, not a pass/fail check (speed is never asserted in tests): run it with
//! `cargo test --workspace --release --test fps -- --ignored --nocapture` and copy the printed
//! figures into BENCHMARKS.md.
//!
//! The pointer paints brush strokes without pause (raise, discomfort, wall brush, eraser, in
//! turn; each stroke sweeps across the map and ends with a release), so dabs change the map
//! every frame and recomputes run one after another on the worker thread. Two runs of the same
//! script are timed:
//! - **rendered**: each frame is laid out and rendered by egui_kittest on wgpu (lavapipe in CI),
//!   which also reads the frame back into memory; the figure includes that read-back, which a
//!   real window does not do.
//! - **CPU**: each frame is laid out and tessellated without a GPU (what eframe does on the CPU
//!   every frame before handing the triangles to the GPU).
//!
//! A third run moves the pointer over the rendered map without painting: the cost of
//! rendering alone in this harness, for comparison.
//!
//! All report frames per second (mean, and the worst 5 % of frames), the editor's own time per
//! frame (`EditorApp::show`, which includes composing the layer image), and how many
//! recomputes finished during the run. A second test times frames with 10,000 agents of a
//! running simulation drawn.

mod common;

use common::{app, gpu_or_skip};
use crowdfield_editor::tools::Tool;
use crowdfield_editor::{Document, EditorApp};
use egui_kittest::Harness;
use std::cell::RefCell;
use std::rc::Rc;
use std::time::{Duration, Instant};

/// Grid side of the measured map, cells.
const SIDE: usize = 256;
/// How long each run is timed.
const MEASURE: Duration = Duration::from_secs(12);
/// Frames per brush stroke: press, drag across the map, release.
const STROKE_FRAMES: usize = 40;
/// The tools the strokes use, in turn (the eraser follows the wall brush on the same path and
/// removes its wall again, so the map stays open).
const STROKE_TOOLS: [Tool; 4] = [Tool::Raise, Tool::Discomfort, Tool::WallBrush, Tool::Eraser];

/// Timings of one run.
struct Figures {
    frames: usize,
    /// Wall time per frame, seconds, sorted.
    frame: Vec<f64>,
    /// Time in `EditorApp::show` per frame, seconds, sorted.
    show: Vec<f64>,
    recomputes: u64,
    edits: u64,
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

/// The value at or above which the slowest 5 % of the (sorted) samples lie.
fn worst_5_percent(sorted: &[f64]) -> f64 {
    sorted
        .get(((sorted.len() as f64 * 0.95) as usize).min(sorted.len().saturating_sub(1)))
        .copied()
        .unwrap_or(f64::NAN)
}

impl Figures {
    fn print(&self, what: &str) {
        println!(
            "{what}: {:.1} frames/s mean, {:.1} frames/s over the worst 5 % of frames \
             ({} frames; frame {:.1} ms mean, {:.1} ms 95th percentile); \
             EditorApp::show {:.2} ms mean, {:.2} ms 95th percentile; \
             {} recomputes finished, {} map edits",
            1.0 / mean(&self.frame),
            1.0 / worst_5_percent(&self.frame),
            self.frames,
            mean(&self.frame) * 1e3,
            worst_5_percent(&self.frame) * 1e3,
            mean(&self.show) * 1e3,
            worst_5_percent(&self.show) * 1e3,
            self.recomputes,
            self.edits,
        );
    }
}

/// World position of the pointer at `frame` of the stroke script: strokes sweep from west to
/// east along rows spread over the map.
fn script_point(frame: usize, width: f64, height: f64) -> [f64; 2] {
    let stroke = frame / STROKE_FRAMES;
    let t = (frame % STROKE_FRAMES) as f64 / (STROKE_FRAMES - 1) as f64;
    // Wall and eraser strokes (a pair) share a row; the others use the next rows.
    let row = [0, 1, 2, 2][stroke % 4] + 3 * (stroke / 4);
    let y = height * (0.15 + 0.7 * ((row as f64 * 0.37) % 1.0));
    [width * (0.1 + 0.8 * t), y]
}

/// Runs the stroke script for `MEASURE` on `h`, timing every frame.
fn measure(
    h: &mut Harness<'static, EditorApp>,
    show_times: &Rc<RefCell<Vec<f64>>>,
    tessellate: bool,
    paint: bool,
) -> Figures {
    let (width, height) = (h.state().doc.grid.width(), h.state().doc.grid.height());
    let (mut frame_times, mut recomputes) = (Vec::new(), 0u64);
    let start_revision = h.state().revision;
    let mut last_id = h.state().recompute.latest_id;
    show_times.borrow_mut().clear();
    let start = Instant::now();
    let mut i = 0;
    while start.elapsed() < MEASURE || i % STROKE_FRAMES != 0 {
        let (view, rect) = (h.state().viewport.view.unwrap(), h.state().viewport.rect);
        let p = view.to_screen(rect, script_point(i, width, height));
        match i % STROKE_FRAMES {
            _ if !paint => h.hover_at(p),
            0 => {
                h.state_mut().tools.tool = STROKE_TOOLS[(i / STROKE_FRAMES) % STROKE_TOOLS.len()];
                h.drag_at(p);
            }
            // A release without the pointer leaving (`drop_at` would add a second frame).
            k if k == STROKE_FRAMES - 1 => h.event(egui::Event::PointerButton {
                pos: p,
                button: egui::PointerButton::Primary,
                pressed: false,
                modifiers: egui::Modifiers::NONE,
            }),
            _ => h.hover_at(p),
        }
        let t0 = Instant::now();
        h.step();
        if tessellate {
            let shapes = h.output().shapes.clone();
            let ppp = h.output().pixels_per_point;
            std::hint::black_box(h.ctx.tessellate(shapes, ppp));
        }
        frame_times.push(t0.elapsed().as_secs_f64());
        let id = h.state().recompute.latest_id;
        if id != last_id {
            recomputes += 1;
            last_id = id;
        }
        i += 1;
    }
    let mut show = show_times.borrow().clone();
    frame_times.sort_by(f64::total_cmp);
    show.sort_by(f64::total_cmp);
    Figures {
        frames: frame_times.len(),
        frame: frame_times,
        show,
        recomputes,
        edits: h.state().revision - start_revision,
    }
}

/// A harness around an app on the measured map whose closure records the time of each
/// `EditorApp::show`.
fn timed_harness(rendered: bool) -> (Harness<'static, EditorApp>, Rc<RefCell<Vec<f64>>>) {
    let mut app = app(Document::demo(SIDE, SIDE));
    app.timings_in_status = true;
    let times = Rc::new(RefCell::new(Vec::new()));
    let sink = times.clone();
    let builder = Harness::builder().with_size(common::WINDOW);
    let builder = if rendered {
        builder.wgpu().with_render_every_step(true)
    } else {
        builder
    };
    let mut h = builder.build_ui_state(
        move |ui, app: &mut EditorApp| {
            let t = Instant::now();
            app.show(ui);
            sink.borrow_mut().push(t.elapsed().as_secs_f64());
        },
        app,
    );
    h.run_steps(2);
    (h, times)
}

#[test]
#[ignore = "measurement: run with --ignored --nocapture in release"]
fn frames_per_second_while_painting() {
    let first = {
        let app = app(Document::demo(SIDE, SIDE));
        app.recompute.last_seconds.unwrap_or(f64::NAN)
    };
    println!(
        "{SIDE}x{SIDE} map, {} threads available; first full recompute {:.0} ms",
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        first * 1e3
    );

    let (mut h, times) = timed_harness(false);
    let cpu = measure(&mut h, &times, true, true);
    cpu.print("CPU (layout + tessellation, no GPU)");
    assert!(cpu.edits > 0 && cpu.recomputes > 0, "the script painted nothing");
    drop(h);

    if gpu_or_skip("frames_per_second_while_painting") {
        let (mut h, times) = timed_harness(true);
        let rendered = measure(&mut h, &times, false, true);
        rendered.print("rendered (egui_kittest on wgpu, with read-back)");
        assert!(rendered.recomputes > 0, "no recompute finished");
        // The same pointer path without painting: what rendering alone costs in this harness.
        let idle = measure(&mut h, &times, false, false);
        idle.print("rendered, pointer moving without painting (no edits, no recomputes)");
    }
}

/// Agents drawn in the agents run: a large crowd for the editor (the simulation issue's 10k).
const AGENTS: usize = 10_000;

#[test]
#[ignore = "measurement: run with --ignored --nocapture in release"]
fn frames_per_second_with_ten_thousand_agents() {
    // The Run panel's dots: a simulation frame of 10,000 agents spread over the map, drawn
    // every frame (layout + tessellation, no GPU) while the pointer moves.
    let (mut h, times) = timed_harness(false);
    let grid = h.state().doc.grid;
    let mut agents = crowdfield::agents::Agents::default();
    let mut state = 12345u64;
    let mut next = move || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 40) as f32 / (1u64 << 24) as f32
    };
    for i in 0..AGENTS {
        let (x, y) = (next() * grid.width() as f32, next() * grid.height() as f32);
        agents.push(i as u32, x, y, (i % 2) as u32, 0.25, 1.34);
    }
    h.state_mut().sim.latest = Some(crowdfield_editor::simrun::SimFrame {
        agents,
        ..Default::default()
    });
    let f = measure(&mut h, &times, true, false);
    f.print(&format!("CPU with {AGENTS} agents drawn (no painting)"));
}
