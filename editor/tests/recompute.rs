//! The background recompute: the newest job wins, results match the map they were asked for,
//! the thread answers while the caller keeps going, the fields follow a stroke before it ends,
//! and a goal-less flocking map recomputes (no rendering needed).

use crowdfield::agents::Agents;
use crowdfield_editor::doc::{AreaShape, Document, GoalArea, GroupDoc};
use crowdfield_editor::recompute::Recompute;
use std::time::Duration;

/// A 30 x 10 corridor of 1 m cells with one group whose exit is the column `exit_col`.
fn corridor(exit_col: usize) -> Document {
    let mut doc = Document::new("corridor", 30, 10, 1.0);
    let mut g = GroupDoc::new("walkers", 0);
    g.goals.push(GoalArea {
        name: None,
        shape: AreaShape::rect_from_corners([exit_col as f64, 0.0], [exit_col as f64 + 1.0, 10.0]),
        width: None,
        closed: false,
    });
    doc.groups.push(g);
    doc
}

#[test]
fn the_newest_job_wins_and_matches_its_map() {
    let mut rc = Recompute::start(None);
    let mut last = 0;
    for exit in [0, 29, 15] {
        last = rc.request(corridor(exit).to_scene(), Agents::default());
    }
    assert!(rc.is_running());
    assert!(rc.wait(Duration::from_secs(60)), "recompute timed out");
    assert!(!rc.is_running());
    assert_eq!(rc.error, None);
    assert_eq!(rc.latest_id, Some(last));
    let f = rc.latest.as_ref().unwrap();
    let phi = &f.groups[0].phi;
    // The exit at column 15 is where the potential is zero; on flat open ground with the
    // default parameters the potential is the walking time, distance / 1.34 m/s.
    assert_eq!(phi[(5, 15)], 0.0);
    assert!(phi[(5, 0)] > 0.0 && phi[(5, 29)] > 0.0);
    let expected = 15.0 / 1.34;
    assert!(
        (phi[(5, 0)] - expected).abs() < 0.05 * expected,
        "phi = {}",
        phi[(5, 0)]
    );
    assert!(rc.last_seconds.unwrap() > 0.0);
    // Gradient points away from the exit on both sides (the walkers go down it).
    assert!(f.groups[0].grad.gx[(5, 5)] < 0.0 && f.groups[0].grad.gx[(5, 25)] > 0.0);
    assert_eq!(f.speed.dim(), (10, 30));
}

#[test]
fn a_map_without_groups_still_gives_speed_and_density() {
    let mut rc = Recompute::start(None);
    rc.request(Document::new("empty", 8, 6, 0.5).to_scene(), Agents::default());
    assert!(rc.wait(Duration::from_secs(60)));
    assert_eq!(rc.error, None);
    let f = rc.latest.as_ref().unwrap();
    assert!(f.groups.is_empty());
    assert!(f.density.iter().all(|&d| d == 0.0));
    assert!(f.speed.iter().all(|&v| v > 0.0));
}

#[test]
fn the_goal_less_fish_tank_opens_and_recomputes() {
    // A flocking group has no goals: its potential is +inf everywhere (nothing to reach), and
    // neither the recompute nor the layer image fails on it.
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../maps/fish_tank.json");
    let doc = crowdfield_editor::mapio::load(&path).unwrap();
    assert!(doc.groups[0].goals.is_empty() && doc.groups[0].boids.is_some());
    let mut app = crowdfield_editor::EditorApp::new(doc, Some(path.clone()), None);
    assert!(app.recompute.wait(Duration::from_secs(60)));
    assert_eq!(app.recompute.error, None);
    let f = app.recompute.latest.clone().unwrap();
    assert!(f.groups[0].phi.iter().all(|v| v.is_infinite()));
    assert!(f.groups[0].isolines.is_none());
    let img = app.compose();
    assert_eq!(img.pixels.len(), img.width * img.height);
    // Saved by the editor, it is still a valid map without goals.
    let dir = tempfile::tempdir().unwrap();
    let saved = dir.path().join("fish.json");
    app.save_to(&saved);
    assert_eq!(app.message, format!("Saved {}", saved.display()));
    let scene = crowdfield::map::load(&saved).unwrap();
    assert!(scene.groups[0].goals.is_empty() && scene.groups[0].agent_count() == 120);
}

#[test]
fn the_fields_follow_a_stroke_before_it_ends() {
    // A wall-brush stroke across the corridor, not yet released: the frame after the dabs
    // sends the map to the recompute, and the fields that come back show the wall.
    use crowdfield_editor::command::Command;
    use crowdfield_editor::tools::Tool;
    let mut app = crowdfield_editor::EditorApp::new(corridor(29), None, None);
    assert!(app.recompute.wait(Duration::from_secs(60)));
    let before = app.recompute.latest_id;
    let sent_before = app.recompute.newest_sent();
    app.tools.brush.radius = 0.6;
    for i in 0..10 {
        app.apply(Command::Dab {
            tool: Tool::WallBrush,
            at: [15.5, i as f64 + 0.5],
            first: i == 0,
        });
    }
    assert_eq!(
        app.recompute.newest_sent(),
        sent_before,
        "no recompute is sent by the dabs themselves"
    );
    let ctx = egui::Context::default();
    let mut out = ctx.run_ui(egui::RawInput::default(), |ui| app.show(ui));
    out.textures_delta.clear(); // no renderer here
    // Whether or not its result has come back yet (a small map's can arrive within the frame).
    let sent = app.recompute.newest_sent();
    assert!(sent > sent_before, "the frame sent the stroke so far");
    assert!(app.recompute.wait(Duration::from_secs(60)));
    assert!(app.recompute.latest_id > before);
    assert_eq!(app.recompute.latest_id, sent, "the fields shown are the stroke's");
    let phi = &app.recompute.latest.as_ref().unwrap().groups[0].phi;
    // The wall cuts the corridor: the west end cannot reach the exit at the east end.
    assert!(phi[(5, 0)].is_infinite(), "phi west = {}", phi[(5, 0)]);
    // Ending the stroke sends nothing more: the fields already show its final state.
    app.apply(Command::EndStroke);
    assert!(!app.recompute.is_running());
    assert_eq!(app.recompute.newest_sent(), sent);
}
