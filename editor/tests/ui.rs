//! Rendering tests of the editor window (egui_kittest on wgpu, headless; lavapipe in CI):
//! snapshots of the main window and of each layer, and interaction tests driven by labels
//! that paint an obstacle and check that the map and the potential changed.
//!
//! `UPDATE_SNAPSHOTS=1 cargo test --workspace --test ui` rewrites `tests/snapshots/*.png`.

mod common;

use common::{app, gpu_or_skip, harness, settle};
use crowdfield_editor::Document;
use egui_kittest::kittest::Queryable;

/// The map of the snapshot tests: the bundled crossing map (two groups, walls, a hill).
fn snapshot_doc() -> Document {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../maps/crossing.json");
    crowdfield_editor::mapio::load(&path).unwrap()
}

#[test]
fn main_window_snapshot() {
    if !gpu_or_skip("main_window_snapshot") {
        return;
    }
    let mut h = harness(app(snapshot_doc()));
    h.snapshot("main_window");
}

#[test]
fn each_layer_snapshot() {
    if !gpu_or_skip("each_layer_snapshot") {
        return;
    }
    let mut h = harness(app(snapshot_doc()));
    for (label, name) in [
        ("No field", "layer_terrain"),
        ("Density", "layer_density"),
        ("Speed", "layer_speed"),
        ("Potential", "layer_potential"),
    ] {
        h.get_by_label(label).click();
        h.run();
        h.snapshot(name);
    }
    h.get_by_label("Gradient").click();
    h.get_by_label("Isolines").click();
    h.run();
    h.snapshot("layer_gradient");
}

#[test]
fn painting_an_obstacle_changes_the_map_and_the_potential() {
    if !gpu_or_skip("painting_an_obstacle_changes_the_map_and_the_potential") {
        return;
    }
    let mut doc = Document::new("open field", 40, 20, 0.5);
    let mut g = crowdfield_editor::doc::GroupDoc::new("walkers", 0);
    g.goals.push(crowdfield_editor::doc::GoalArea {
        name: None,
        shape: crowdfield_editor::doc::AreaShape::rect_from_corners([19.0, 0.0], [20.0, 10.0]),
        width: None,
        closed: false,
    });
    doc.groups.push(g);
    let mut h = harness(app(doc));
    let before_map = h.state().doc.obstacle.clone();
    let before = h.state().recompute.latest.clone();
    let before_id = h.state().recompute.latest_id;

    h.get_by_label("Wall brush").click();
    h.run();
    assert_eq!(h.state().tools.tool, crowdfield_editor::tools::Tool::WallBrush);
    // Paint a wall from (10, 2) to (10, 8) m: between the west side and the exit.
    let (view, rect) = (h.state().viewport.view.unwrap(), h.state().viewport.rect);
    let a = view.to_screen(rect, [10.0, 2.0]);
    let b = view.to_screen(rect, [10.0, 8.0]);
    h.hover_at(a);
    h.step();
    h.drag_at(a);
    h.step();
    for i in 1..=10 {
        h.hover_at(a + (b - a) * (i as f32 / 10.0));
        h.step();
    }
    h.drop_at(b);
    h.step();
    settle(&mut h);

    let app = h.state();
    let painted = app
        .doc
        .obstacle
        .iter()
        .zip(before_map.iter())
        .filter(|(a, b)| a != b)
        .count();
    assert!(painted >= 12, "only {painted} cells changed");
    let cell = app.doc.grid.cell_of(10.0, 5.0).unwrap();
    assert!(app.doc.obstacle[cell], "the wall is on the drag path");
    assert!(app.dirty());
    assert!(
        app.recompute.latest_id > before_id,
        "no new fields after the edit"
    );
    assert_eq!(app.recompute.error, None);
    let (old, new) = (
        &before.unwrap().groups[0].phi,
        &app.recompute.latest.as_ref().unwrap().groups[0].phi,
    );
    // West of the wall, walkers now go around it: the potential grew.
    let west = app.doc.grid.cell_of(8.0, 5.0).unwrap();
    assert!(
        new[west] > old[west] + 0.5,
        "potential {} -> {}",
        old[west],
        new[west]
    );
    assert!(new[cell].is_infinite(), "a wall cell is unreachable");

    // Undo by its button restores the map and recomputes.
    h.get_by_label("Undo").click();
    h.step();
    settle(&mut h);
    assert_eq!(h.state().doc.obstacle, before_map);
    let phi = &h.state().recompute.latest.as_ref().unwrap().groups[0].phi;
    assert_eq!(phi[west], old[west]);
}

#[test]
fn cursor_readout_and_zoom() {
    if !gpu_or_skip("cursor_readout_and_zoom") {
        return;
    }
    let mut h = harness(app(Document::new("plain", 20, 10, 1.0)));
    let (view, rect) = (h.state().viewport.view.unwrap(), h.state().viewport.rect);
    let p = view.to_screen(rect, [3.5, 2.5]);
    h.hover_at(p);
    h.run();
    let c = h.state().viewport.cursor.unwrap();
    assert!((c[0] - 3.5).abs() < 0.05 && (c[1] - 2.5).abs() < 0.05, "{c:?}");
    h.get_by_label_contains("cell (row 2, col 3)");
    // Scrolling up zooms in about the pointer: the point under it stays put.
    h.event(egui::Event::MouseWheel {
        unit: egui::MouseWheelUnit::Point,
        delta: egui::vec2(0.0, 100.0),
        phase: egui::TouchPhase::Move,
        modifiers: egui::Modifiers::NONE,
        source: egui::MouseWheelSource::Wheel,
    });
    h.run();
    let v2 = h.state().viewport.view.unwrap();
    assert!(v2.scale > view.scale, "{} -> {}", view.scale, v2.scale);
    let c2 = v2.to_world(rect, p);
    assert!((c2[0] - 3.5).abs() < 0.05 && (c2[1] - 2.5).abs() < 0.05, "{c2:?}");
}

#[test]
fn shape_tools_by_label_add_goals_spawns_and_walls() {
    if !gpu_or_skip("shape_tools_by_label_add_goals_spawns_and_walls") {
        return;
    }
    let mut h = harness(app(Document::demo(40, 20)));
    let drag =
        |h: &mut egui_kittest::Harness<'static, crowdfield_editor::EditorApp>, a: [f64; 2], b: [f64; 2]| {
            let (view, rect) = (h.state().viewport.view.unwrap(), h.state().viewport.rect);
            let (a, b) = (view.to_screen(rect, a), view.to_screen(rect, b));
            h.hover_at(a);
            h.step();
            h.drag_at(a);
            h.step();
            h.hover_at(a + (b - a) * 0.5);
            h.step();
            h.hover_at(b);
            h.step();
            h.drop_at(b);
            h.step();
            settle(h);
        };
    h.get_by_label("northbound").click();
    h.get_by_label("Goal area").click();
    h.run();
    drag(&mut h, [1.0, 1.0], [3.0, 4.0]);
    let goals = &h.state().doc.groups[1].goals;
    assert_eq!(goals.len(), 2);
    let (lo, hi) = goals[1].shape.bounds();
    assert!(
        (lo[0] - 1.0).abs() < 0.1 && (hi[1] - 4.0).abs() < 0.1,
        "{lo:?} {hi:?}"
    );

    h.get_by_label("Spawn area").click();
    h.run();
    drag(&mut h, [12.0, 2.0], [14.0, 3.0]);
    let spawns = &h.state().doc.groups[1].spawns;
    assert_eq!(spawns.len(), 2);
    assert_eq!(spawns[1].count, h.state().tools.brush.spawn_count);

    let before = h.state().doc.obstacle.iter().filter(|&&b| b).count();
    h.get_by_label("Wall rectangle").click();
    h.run();
    drag(&mut h, [2.0, 6.0], [5.0, 8.0]);
    let after = h.state().doc.obstacle.iter().filter(|&&b| b).count();
    assert_eq!(after - before, 6 * 4, "3 x 2 m of 0.5 m cells");

    // Polygon: three clicks, then a click on the first vertex closes it.
    h.get_by_label("Wall polygon").click();
    h.run();
    let (view, rect) = (h.state().viewport.view.unwrap(), h.state().viewport.rect);
    for p in [[15.0, 1.0], [19.0, 1.0], [17.0, 5.0], [15.0, 1.0]] {
        let s = view.to_screen(rect, p);
        h.hover_at(s);
        h.step();
        h.drag_at(s);
        h.step();
        h.drop_at(s);
        h.step();
    }
    settle(&mut h);
    let cell = h.state().doc.grid.cell_of(17.0, 2.0).unwrap();
    assert!(h.state().doc.obstacle[cell], "the polygon was filled");
    assert!(h.state().viewport.polygon.is_empty());

    // Four edits, four undo steps back to the demo map.
    for _ in 0..4 {
        h.get_by_label("Undo").click();
        h.step();
    }
    settle(&mut h);
    assert_eq!(h.state().doc, Document::demo(40, 20));
}

#[test]
fn unsaved_changes_show_in_the_title_and_are_asked_about_on_quit() {
    if !gpu_or_skip("unsaved_changes_show_in_the_title_and_are_asked_about_on_quit") {
        return;
    }
    let mut h = harness(app(Document::demo(20, 10)));
    assert!(!h.state().title().starts_with('*'));
    h.get_by_label("Add group").click();
    h.step();
    settle(&mut h);
    assert!(h.state().title().starts_with('*'), "{}", h.state().title());
    let close = |h: &mut egui_kittest::Harness<'static, crowdfield_editor::EditorApp>| {
        h.input_mut()
            .viewports
            .entry(egui::ViewportId::ROOT)
            .or_default()
            .events
            .push(egui::ViewportEvent::Close);
        h.step();
        h.run();
    };
    close(&mut h);
    assert!(h.state().quit_asked);
    h.get_by_label("Cancel").click();
    h.run();
    assert!(!h.state().quit_asked && !h.state().pending_close);
    close(&mut h);
    h.get_by_label("Quit without saving").click();
    h.run();
    assert!(h.state().pending_close);
}

#[test]
fn a_spawn_areas_premovement_is_set_in_the_group_panel_undone_and_saved() {
    if !gpu_or_skip("a_spawn_areas_premovement_is_set_in_the_group_panel_undone_and_saved") {
        return;
    }
    use crowdfield_editor::panels::groups::DEFAULT_PREMOVEMENT;
    let demo = Document::demo(40, 20);
    assert!(demo.groups[0].spawns[0].premovement.is_none());
    let mut h = harness(app(demo.clone()));
    h.get_by_label("spawn 0 waits").click();
    settle(&mut h);
    assert_eq!(
        h.state().doc.groups[0].spawns[0].premovement,
        Some(DEFAULT_PREMOVEMENT),
        "ticking the box gives the default range"
    );
    assert!(h.state().dirty());
    // The range's two fields under the box (from 5.0 s, to 60.0 s).
    h.snapshot("group_panel_premovement");

    // One undo step takes it back.
    h.get_by_label("Undo").click();
    h.step();
    settle(&mut h);
    assert_eq!(h.state().doc, demo);

    // Set again and saved, the map file carries it and the loader reads it.
    h.get_by_label("spawn 0 waits").click();
    settle(&mut h);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("waits.json");
    h.state_mut().save_to(&path);
    let scene = crowdfield::map::load(&path).unwrap();
    assert_eq!(scene.groups[0].spawns[0].premovement, [5.0, 60.0]);
    assert_eq!(scene.groups[0].spawns.len(), demo.groups[0].spawns.len());
}
