//! Undo and redo of every tool, through the app's command path (no rendering needed): each
//! edit changes the map, undo restores it exactly, redo restores the edit exactly.

use crowdfield_editor::EditorApp;
use crowdfield_editor::command::Command;
use crowdfield_editor::doc::{AreaShape, Document};
use crowdfield_editor::tools::Tool;

fn app() -> EditorApp {
    let mut doc = Document::demo(40, 24);
    // Some relief so smooth and flatten have something to act on.
    for ((r, c), h) in doc.height.indexed_iter_mut() {
        *h += 0.05 * (r as f32) + 0.02 * (c as f32 % 5.0);
    }
    let mut app = EditorApp::new(doc, None, None);
    app.tools.brush.radius = 2.0;
    app.tools.brush.strength = 0.8;
    app
}

/// Applies `commands`, then checks the map changed, undo (once, `undo_steps` times for
/// multi-command edits) restores it and redo brings the edit back.
fn check(name: &str, commands: Vec<Command>, undo_steps: usize) {
    let mut app = app();
    let before = app.doc.clone();
    let rev = app.revision;
    for c in commands {
        app.apply(c);
    }
    let after = app.doc.clone();
    assert_ne!(after, before, "{name}: the edit changed nothing");
    assert!(app.revision > rev, "{name}: revision not bumped");
    assert!(app.dirty(), "{name}: not marked unsaved");
    for _ in 0..undo_steps {
        app.apply(Command::Undo);
    }
    assert_eq!(app.doc, before, "{name}: undo did not restore the map");
    for _ in 0..undo_steps {
        app.apply(Command::Redo);
    }
    assert_eq!(app.doc, after, "{name}: redo did not restore the edit");
}

fn stroke(tool: Tool, path: &[[f64; 2]]) -> Vec<Command> {
    let mut out: Vec<Command> = path
        .iter()
        .enumerate()
        .map(|(i, &at)| Command::Dab {
            tool,
            at,
            first: i == 0,
        })
        .collect();
    out.push(Command::EndStroke);
    out
}

const PATH: [[f64; 2]; 3] = [[3.0, 3.0], [4.0, 3.5], [5.0, 4.0]];

#[test]
fn terrain_brushes_undo_as_one_stroke() {
    for tool in [Tool::Raise, Tool::Lower, Tool::Smooth, Tool::Flatten] {
        check(tool.label(), stroke(tool, &PATH), 1);
    }
}

#[test]
fn flatten_pulls_towards_the_first_dab() {
    let mut app = app();
    let grid = app.doc.grid;
    // Dabs on cell centres, full strength: the centre cell takes the target exactly.
    let first = grid.cell_of(3.25, 3.25).unwrap();
    let target = app.doc.height[first];
    app.tools.brush.strength = 1.0;
    for c in stroke(Tool::Flatten, &[[3.25, 3.25], [5.25, 5.25]]) {
        app.apply(c);
    }
    let at = grid.cell_of(5.25, 5.25).unwrap();
    assert_ne!(target, 0.0);
    assert!((app.doc.height[at] - target).abs() < 1e-6);
}

#[test]
fn obstacle_tools_undo() {
    check("Wall brush", stroke(Tool::WallBrush, &PATH), 1);
    check("Eraser", stroke(Tool::Eraser, &[[11.0, 2.0], [11.0, 8.0]]), 1);
    check(
        "Wall rectangle",
        vec![Command::WallRect {
            a: [2.0, 8.0],
            b: [4.0, 6.0],
        }],
        1,
    );
    check(
        "Wall polygon",
        vec![Command::WallPolygon {
            points: vec![[1.0, 1.0], [5.0, 1.0], [3.0, 4.0]],
        }],
        1,
    );
}

#[test]
fn discomfort_brush_undo() {
    check("Discomfort", stroke(Tool::Discomfort, &PATH), 1);
}

#[test]
fn area_and_group_edits_undo() {
    let rect = AreaShape::rect_from_corners([1.0, 1.0], [2.0, 3.0]);
    check(
        "Goal",
        vec![Command::AddGoal {
            group: 1,
            shape: rect.clone(),
        }],
        1,
    );
    check(
        "Spawn",
        vec![Command::AddSpawn {
            group: 0,
            shape: rect,
            count: 7,
        }],
        1,
    );
    check("Remove goal", vec![Command::RemoveGoal { group: 0, index: 0 }], 1);
    check(
        "Remove spawn",
        vec![Command::RemoveSpawn { group: 1, index: 0 }],
        1,
    );
    check("Add group", vec![Command::AddGroup], 1);
    check("Remove group", vec![Command::RemoveGroup(0)], 1);
    let base = app().doc.groups[0].clone();
    // Typing a name letter by letter coalesces into one undo step.
    let typing: Vec<Command> = ["x", "xy", "xyz"]
        .iter()
        .map(|n| {
            let mut g = base.clone();
            g.name = n.to_string();
            Command::SetGroup {
                index: 0,
                group: Box::new(g),
                coalesce: "group 0 name".into(),
            }
        })
        .collect();
    check("Rename", typing, 1);
    let mut g = base.clone();
    g.speed_min = 0.8;
    g.speed_max = 1.6;
    g.color = [1, 2, 3];
    check(
        "Speeds and colour",
        vec![Command::SetGroup {
            index: 0,
            group: Box::new(g),
            coalesce: "group 0 speed".into(),
        }],
        1,
    );
}

#[test]
fn new_map_undoes_to_the_old_map() {
    check(
        "New",
        vec![Command::New {
            cols: 8,
            rows: 6,
            cell_size: 0.25,
            path: "x/new.json".into(),
        }],
        1,
    );
}

#[test]
fn edits_after_undo_clear_redo_and_bad_input_changes_nothing() {
    let mut app = app();
    let before = app.doc.clone();
    app.apply(Command::WallRect {
        a: [0.0, 0.0],
        b: [2.0, 2.0],
    });
    app.apply(Command::Undo);
    app.apply(Command::AddGroup);
    assert_eq!(app.history.redo_label(), None);
    app.apply(Command::Undo);
    assert_eq!(app.doc, before);
    // Areas for a group that does not exist, and an empty new map, are refused.
    app.apply(Command::AddGoal {
        group: 9,
        shape: AreaShape::rect_from_corners([0.0, 0.0], [1.0, 1.0]),
    });
    app.apply(Command::New {
        cols: 0,
        rows: 5,
        cell_size: 1.0,
        path: "x.json".into(),
    });
    assert_eq!(app.doc, before);
    assert!(app.message.contains("positive size"), "{}", app.message);
}
