//! The Run panel's simulation: step, play, pause and reset through the app's commands; the
//! agents come from the map's spawn areas and the evacuated counts per exit add up (no
//! rendering needed).

use crowdfield_editor::EditorApp;
use crowdfield_editor::command::{Command, SimCommand};
use crowdfield_editor::doc::{AreaShape, Document, GoalArea, GroupDoc, SpawnArea};
use std::time::{Duration, Instant};

/// A 12 x 4 m corridor, 8 walkers at the west end, the exit at the east end.
fn corridor() -> Document {
    let mut doc = Document::new("corridor", 24, 8, 0.5);
    let mut g = GroupDoc::new("walkers", 0);
    g.goals.push(GoalArea {
        name: Some("east".into()),
        shape: AreaShape::rect_from_corners([11.5, 0.0], [12.0, 4.0]),
        width: None,
    });
    g.spawns.push(SpawnArea {
        name: None,
        shape: AreaShape::rect_from_corners([0.0, 0.0], [2.0, 4.0]),
        count: 8,
    });
    doc.groups.push(g);
    doc
}

#[test]
fn step_play_pause_reset_and_live_exit_counts() {
    let mut app = EditorApp::new(corridor(), None, None);
    app.apply(Command::Sim(SimCommand::Step));
    assert!(app.sim.wait_frame(Duration::from_secs(30)), "no frame after Step");
    while app.sim.wait_frame(Duration::from_millis(300)) {}
    let f = app.sim.latest.as_ref().unwrap();
    assert_eq!(f.info.error, None);
    assert!(f.info.exists);
    assert_eq!(f.agents.len(), 8);
    let t1 = f.info.time;
    assert!(t1 > 0.0, "one step advanced time");
    assert!(f.agents.x.iter().all(|&x| x < 3.0));

    // Fast playback until everyone is out (12 m at 1.34 m/s: about 9 s simulated).
    app.run.speed = 20.0;
    app.apply(Command::Sim(SimCommand::Play));
    let start = Instant::now();
    loop {
        app.sim.wait_frame(Duration::from_millis(200));
        let f = app.sim.latest.as_ref().unwrap();
        if f.finished || start.elapsed() > Duration::from_secs(60) {
            break;
        }
    }
    let f = app.sim.latest.as_ref().unwrap();
    assert!(f.finished, "not finished after 60 s: t = {}", f.info.time);
    assert_eq!(f.info.walking, 0);
    assert_eq!(
        f.info.exits,
        vec![("walkers".to_string(), vec![("east".to_string(), 8)])]
    );
    assert!(f.info.time > 12.0 / 1.34 - 2.0, "t = {}", f.info.time);

    app.apply(Command::Sim(SimCommand::Pause));
    app.apply(Command::Sim(SimCommand::Reset));
    assert!(app.sim.latest.is_none());
    assert!(!app.run.playing);
}
