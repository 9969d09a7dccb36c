//! Shared helpers of the editor tests: the GPU check and a harness around the app.
#![allow(dead_code)] // each test binary uses a different subset

use crowdfield_editor::{Document, EditorApp};
use egui_kittest::Harness;
use std::time::Duration;

/// Window size of the snapshot tests, points.
pub const WINDOW: [f32; 2] = [1200.0, 760.0];
/// Longest a test waits for a background recompute (debug build, 2 cores).
pub const RECOMPUTE_TIMEOUT: Duration = Duration::from_secs(60);

/// True when wgpu finds an adapter. Without one the GPU tests are skipped, unless
/// `CROWDFIELD_REQUIRE_GPU=1`, where a missing adapter fails the test (CI has lavapipe).
pub fn gpu_or_skip(test: &str) -> bool {
    let instance =
        eframe::wgpu::Instance::new(eframe::wgpu::InstanceDescriptor::new_without_display_handle_from_env());
    let found =
        pollster::block_on(instance.request_adapter(&eframe::wgpu::RequestAdapterOptions::default())).is_ok();
    if !found {
        if std::env::var("CROWDFIELD_REQUIRE_GPU").as_deref() == Ok("1") {
            panic!(
                "{test}: no wgpu adapter found and CROWDFIELD_REQUIRE_GPU=1 (install mesa-vulkan-drivers)"
            );
        }
        eprintln!("{test}: skipped, no wgpu adapter (set CROWDFIELD_REQUIRE_GPU=1 to fail instead)");
    }
    found
}

/// An app on `doc`, with its first recompute finished, and timings hidden so snapshots are
/// reproducible.
pub fn app(doc: Document) -> EditorApp {
    let mut app = EditorApp::new(doc, None, None);
    app.timings_in_status = false;
    assert!(app.recompute.wait(RECOMPUTE_TIMEOUT), "first recompute timed out");
    app
}

/// A rendering harness around `app`.
pub fn harness(app: EditorApp) -> Harness<'static, EditorApp> {
    let mut h = Harness::builder()
        .with_size(WINDOW)
        .wgpu()
        .build_ui_state(|ui, app: &mut EditorApp| app.show(ui), app);
    settle(&mut h);
    h
}

/// Waits for the background recompute, then runs frames until the interface is idle.
pub fn settle(h: &mut Harness<'static, EditorApp>) {
    h.run_steps(2);
    assert!(
        h.state_mut().recompute.wait(RECOMPUTE_TIMEOUT),
        "recompute timed out"
    );
    h.run();
}
