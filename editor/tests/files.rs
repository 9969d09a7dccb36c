//! Maps on disk: load → save → load gives the same map for every bundled map, saves are
//! atomic and leave no temporary files, the title tracks unsaved changes, the recovery file
//! is written and offered, and bad files give an error naming them (no rendering needed).

use crowdfield_editor::command::Command;
use crowdfield_editor::{EditorApp, mapio};
use std::path::{Path, PathBuf};

fn bundled_maps() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../maps");
    let mut maps: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.extension().is_some_and(|e| e == "json") && !p.to_string_lossy().ends_with("schema.json")
        })
        .collect();
    maps.sort();
    assert!(!maps.is_empty(), "no bundled maps in {}", dir.display());
    maps
}

#[test]
fn load_save_load_gives_the_same_map_for_every_bundled_map() {
    let tmp = tempfile::tempdir().unwrap();
    for map in bundled_maps() {
        let first = mapio::load(&map).unwrap_or_else(|e| panic!("{}: {e}", map.display()));
        let out = tmp.path().join(map.file_name().unwrap());
        mapio::save(&first, &out).unwrap();
        let second = mapio::load(&out).unwrap();
        assert_eq!(second, first, "{}: the saved map differs", map.display());
        assert_eq!(second.to_scene(), first.to_scene());
        // The compiled map is also what the library's own loader gives.
        assert_eq!(
            crowdfield::map::load(&out).unwrap(),
            crowdfield::map::load(&map).unwrap()
        );
        // Saving again writes the same bytes.
        let json = std::fs::read_to_string(&out).unwrap();
        mapio::save(&second, &out).unwrap();
        assert_eq!(std::fs::read_to_string(&out).unwrap(), json);
    }
    let names: Vec<String> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        names.iter().all(|n| !n.ends_with(".tmp")),
        "temporary files left: {names:?}"
    );
}

#[test]
fn save_as_open_round_trip_through_the_app_with_title_and_recovery() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("edited.json");
    let mut app = EditorApp::new(crowdfield_editor::Document::demo(30, 20), None, None);
    app.apply(Command::WallRect {
        a: [1.0, 1.0],
        b: [3.0, 2.0],
    });
    assert!(app.title().starts_with('*'));
    app.apply(Command::SaveAs(path.clone()));
    assert!(!app.dirty(), "{}", app.message);
    assert!(!app.title().starts_with('*'));
    for layer in ["height", "obstacles", "discomfort"] {
        assert!(
            tmp.path().join(format!("edited.{layer}.npy")).exists(),
            "{layer} raster"
        );
    }
    let saved = app.doc.clone();

    // An unsaved edit, then a crash after the recovery file was written.
    app.apply(Command::AddGroup);
    app.write_recovery();
    let recovery = tmp.path().join("edited.recovery.json");
    assert!(recovery.exists());
    let edited = app.doc.clone();
    drop(app);

    let mut again = EditorApp::open_path(&path, None);
    assert_eq!(again.doc, saved, "{}", again.message);
    assert_eq!(again.recovery_offer.as_deref(), Some(recovery.as_path()));
    again.apply(Command::Recover);
    assert_eq!(again.doc, edited);
    assert!(again.dirty());
    again.apply(Command::Save);
    assert!(!recovery.exists(), "saving removes the recovery file");
    assert_eq!(mapio::load(&path).unwrap(), edited);

    // Discarding a recovery file deletes it and keeps the saved map.
    again.apply(Command::RemoveGroup(2));
    again.write_recovery();
    let mut third = EditorApp::open_path(&path, None);
    assert!(third.recovery_offer.is_some());
    third.apply(Command::DiscardRecovery);
    assert!(!recovery.exists());
    assert_eq!(third.doc, edited);
}

#[test]
fn bad_files_name_the_file_and_keep_the_map() {
    let tmp = tempfile::tempdir().unwrap();
    let bad = tmp.path().join("broken.json");
    std::fs::write(&bad, "{\"version\": 1, \"name\": 3}").unwrap();
    let mut app = EditorApp::new(crowdfield_editor::Document::demo(10, 8), None, None);
    let before = app.doc.clone();
    app.apply(Command::Open(bad));
    assert!(app.message.contains("broken.json"), "{}", app.message);
    app.apply(Command::Open(tmp.path().join("missing.json")));
    assert!(app.message.contains("missing.json"), "{}", app.message);
    assert_eq!(app.doc, before);
    // Saving into a path whose folder is a file fails with a message, the map stays unsaved.
    std::fs::write(tmp.path().join("file"), "x").unwrap();
    app.apply(Command::AddGroup);
    app.apply(Command::SaveAs(tmp.path().join("file/sub.json")));
    assert!(app.message.starts_with("Could not save"), "{}", app.message);
    assert!(app.dirty());
}

#[test]
fn a_map_being_drawn_opens_even_when_not_yet_valid() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("draft.json");
    let mut app = EditorApp::new(crowdfield_editor::Document::new("draft", 12, 8, 0.5), None, None);
    app.apply(Command::AddGroup); // a group without goals: not a valid map yet
    app.apply(Command::SaveAs(path.clone()));
    assert!(app.message.contains("not valid yet"), "{}", app.message);
    assert!(app.message.contains("goal"), "{}", app.message);
    let again = EditorApp::open_path(&path, None);
    assert_eq!(again.doc, app.doc, "{}", again.message);
    assert!(again.message.contains("not valid yet"), "{}", again.message);
}
