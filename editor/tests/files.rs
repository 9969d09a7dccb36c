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
        // The schedule (closed exits, events, sources) as the library compiles it.
        assert_eq!(
            first.to_scene().schedule,
            crowdfield::map::load(&map).unwrap().schedule,
            "{}",
            map.display()
        );
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

/// A valid map opens without a problem: the check reads the document's painted rasters, not
/// raster files that only a save writes beside the map.
#[test]
fn every_valid_bundled_map_opens_without_a_problem() {
    for map in bundled_maps() {
        let valid = crowdfield::sim::check_map(&map, &Default::default()).1.is_empty();
        let app = EditorApp::open_path(&map, None);
        assert!(!app.message.contains("not valid"), "{}", app.message);
        assert_eq!(
            valid,
            app.message == format!("Opened {}", map.display()),
            "{}",
            app.message
        );
    }
}

/// A spawn area painted over with walls is a problem before the map is saved.
#[test]
fn a_spawn_area_under_painted_walls_is_a_problem() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../maps/corridor.json");
    let mut doc = mapio::load(&path).unwrap();
    assert_eq!(mapio::problems(&doc, &path), Vec::<String>::new());
    doc.obstacle.fill(true);
    let problems = mapio::problems(&doc, &path);
    assert!(problems.iter().any(|p| p.contains("spawns[0]")), "{problems:?}");
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
    // The shortcuts wait while the question shows: Ctrl+S here used to save the old map and
    // delete the recovery file on offer.
    assert!(again.dialog_open());
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

/// Open and New ask before replacing a map with unsaved changes (they used to discard them
/// with no question and no recovery file): Cancel keeps the map, "Save, then continue" saves
/// it first, "Discard changes" goes on. A New whose path names an existing file (the open
/// map's, shown in the path field) starts untitled, so Ctrl+S cannot replace that map.
#[test]
fn open_and_new_ask_before_discarding_unsaved_changes() {
    let tmp = tempfile::tempdir().unwrap();
    let (first, second) = (tmp.path().join("first.json"), tmp.path().join("second.json"));
    let mut app = EditorApp::new(crowdfield_editor::Document::demo(30, 20), None, None);
    app.apply(Command::SaveAs(second.clone()));
    app.apply(Command::SaveAs(first.clone()));
    let saved = app.doc.clone();
    app.apply(Command::AddGroup);
    let edited = app.doc.clone();

    app.apply(Command::Open(second.clone()));
    assert!(app.dialog_open() && app.discard_asked.is_some());
    assert_eq!(app.doc, edited, "nothing replaced before the answer");
    app.apply(Command::CancelDiscard);
    assert!(!app.dialog_open());
    assert_eq!(
        (app.doc.clone(), app.path.clone()),
        (edited.clone(), Some(first.clone()))
    );

    app.apply(Command::Open(second.clone()));
    app.apply(Command::SaveAndContinue);
    assert_eq!(app.path.as_deref(), Some(second.as_path()), "{}", app.message);
    assert_eq!(mapio::load(&first).unwrap(), edited, "saved before the open");

    app.apply(Command::AddGroup);
    app.apply(Command::Open(first.clone()));
    app.apply(Command::DiscardAndContinue);
    assert_eq!(app.doc, edited);
    assert!(!app.dirty());
    assert_eq!(mapio::load(&second).unwrap(), saved, "discarded, not saved");

    // A clean map opens and news without a question; New over an existing file is untitled.
    app.apply(Command::New {
        cols: 10,
        rows: 10,
        cell_size: 1.0,
        path: first.clone(),
    });
    assert!(!app.dialog_open());
    assert_eq!(app.path, None, "{}", app.message);
    assert!(app.message.contains("untitled"), "{}", app.message);
    app.apply(Command::Save);
    assert_eq!(
        mapio::load(&first).unwrap(),
        edited,
        "the open map's file is untouched"
    );
    let fresh = tmp.path().join("fresh.json");
    app.apply(Command::New {
        cols: 10,
        rows: 10,
        cell_size: 1.0,
        path: fresh.clone(),
    });
    assert!(app.dialog_open(), "the new map had changes");
    app.apply(Command::DiscardAndContinue);
    assert_eq!(app.path.as_deref(), Some(fresh.as_path()), "{}", app.message);

    // Save as over another map's file asks first (it used to overwrite it and its rasters).
    app.apply(Command::SaveAs(second.clone()));
    assert!(app.replace_asked.is_some() && app.dialog_open());
    app.apply(Command::CancelReplace);
    assert_eq!(mapio::load(&second).unwrap(), saved, "kept");
    assert!(app.dirty());
    app.apply(Command::SaveAs(second.clone()));
    app.apply(Command::ReplaceFile);
    assert!(!app.dirty(), "{}", app.message);
    assert_eq!(mapio::load(&second).unwrap(), app.doc, "replaced when asked to");
    // Saving again to the map's own file does not ask.
    app.apply(Command::AddGroup);
    app.apply(Command::SaveAs(second.clone()));
    assert!(!app.dialog_open() && !app.dirty(), "{}", app.message);
}

/// Save refuses a path that is not a `.json` file name before writing anything (an empty path
/// used to write `./map.*.npy` first), and a grid too large for the view is refused on open
/// with the reason, keeping the map (it used to crash the editor at the texture upload).
#[test]
fn bad_save_paths_and_oversized_maps_are_refused_before_any_change() {
    let tmp = tempfile::tempdir().unwrap();
    let mut app = EditorApp::new(crowdfield_editor::Document::demo(30, 20), None, None);
    app.apply(Command::AddGroup);
    std::fs::create_dir(tmp.path().join("folder.json")).unwrap();
    for bad in [
        PathBuf::new(),
        tmp.path().join("map.txt"),
        tmp.path().join("folder.json"),
        tmp.path().to_path_buf(),
    ] {
        app.apply(Command::SaveAs(bad.clone()));
        assert!(
            app.message.starts_with("Could not save"),
            "{bad:?}: {}",
            app.message
        );
        assert!(app.dirty());
    }
    let left: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        left,
        vec![std::ffi::OsString::from("folder.json")],
        "nothing written"
    );

    let wide = tmp.path().join("wide.json");
    std::fs::write(
        &wide,
        r#"{"version": 1, "name": "wide", "grid": {"cols": 9000, "rows": 2, "cell_size": 0.5}, "groups": []}"#,
    )
    .unwrap();
    let mut clean = EditorApp::new(crowdfield_editor::Document::demo(30, 20), None, None);
    let before = clean.doc.clone();
    clean.apply(Command::Open(wide));
    assert!(
        clean.message.contains("9000 x 2") && clean.message.contains("at most 8192"),
        "{}",
        clean.message
    );
    assert_eq!(clean.doc, before);
}

#[test]
fn a_group_speed_distribution_survives_load_and_save() {
    let tmp = tempfile::tempdir().unwrap();
    for speed in [
        r#"{"rimea": "adults"}"#,
        r#"{"mean": 1.3, "sd": 0.2, "min": 0.8, "max": 1.8}"#,
    ] {
        let map = format!(
            r#"{{"version": 1, "name": "speeds", "grid": {{"cols": 20, "rows": 10, "cell_size": 0.5}},
                "groups": [{{"name": "walkers",
                    "goals": [{{"rect": {{"min": [9, 0], "max": [10, 5]}}}}],
                    "spawns": [{{"rect": {{"min": [0, 0], "max": [4, 5]}}, "count": 10}}],
                    "speed": {speed}}}]}}"#
        );
        let path = tmp.path().join("speeds.json");
        std::fs::write(&path, map).unwrap();
        let doc = mapio::load(&path).unwrap();
        let out = tmp.path().join("saved.json");
        mapio::save(&doc, &out).unwrap();
        assert_eq!(
            crowdfield::map::load(&out).unwrap(),
            crowdfield::map::load(&path).unwrap(),
            "{speed}"
        );
    }
}

/// An imported plan's origin (`grid.origin`, where the map's (0, 0) lies in the plan's own
/// coordinates) is kept by the editor's load and save.
#[test]
fn an_imported_plans_origin_survives_load_and_save() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("imported.json");
    std::fs::write(
        &path,
        r#"{"version": 1, "name": "imported", "grid": {"cols": 20, "rows": 10, "cell_size": 0.5,
            "origin": [500123.25, 5400456.5]},
            "groups": [{"name": "walkers",
                "goals": [{"rect": {"min": [9, 0], "max": [10, 5]}}],
                "spawns": [{"rect": {"min": [0, 0], "max": [4, 5]}, "count": 10}]}]}"#,
    )
    .unwrap();
    let doc = mapio::load(&path).unwrap();
    assert_eq!(doc.origin, Some([500123.25, 5400456.5]));
    let out = tmp.path().join("saved.json");
    mapio::save(&doc, &out).unwrap();
    let saved = crowdfield::map::MapFile::from_path(&out).unwrap();
    assert_eq!(saved.grid.origin, Some([500123.25, 5400456.5]));
}

/// A floor plan opens as a new, unsaved map: walls, holes, exits and distributions from the
/// plan, and a save goes to a `.json` beside it, never over the plan.
#[test]
fn a_floor_plan_opens_as_a_new_map_and_the_plan_is_never_written() {
    let tmp = tempfile::tempdir().unwrap();
    let plan = tmp.path().join("hall.geojson");
    let text = r#"{"type": "FeatureCollection", "features": [
        {"type": "Feature", "properties": {"layer": "jps-walkablearea"},
         "geometry": {"type": "Polygon", "coordinates": [[[0,0],[20,0],[20,10],[0,10],[0,0]],
                                                         [[8,4],[10,4],[10,6],[8,6],[8,4]]]}},
        {"type": "Feature", "properties": {"layer": "jps-exits", "name": "east door"},
         "geometry": {"type": "Polygon", "coordinates": [[[19.5,4],[20,4],[20,6],[19.5,6],[19.5,4]]]}},
        {"type": "Feature", "properties": {"layer": "jps-distributions", "number": 25},
         "geometry": {"type": "Polygon", "coordinates": [[[1,1],[6,1],[6,9],[1,9],[1,1]]]}}]}"#;
    std::fs::write(&plan, text).unwrap();
    let mut app = EditorApp::new(crowdfield_editor::Document::demo(30, 20), None, None);
    app.open(&plan);
    assert!(app.message.starts_with("Imported"), "{}", app.message);
    assert!(app.dirty(), "an imported plan is not saved yet");
    assert_eq!(app.doc.groups.len(), 1);
    assert_eq!(app.doc.groups[0].goals[0].name.as_deref(), Some("east door"));
    assert_eq!(app.doc.groups[0].spawns[0].count, 25);
    // The pillar is a wall: the cell at (9, 5) is blocked, the cell at (3, 5) is open.
    let cell = |x: f64, y: f64| app.doc.grid.cell_of(x, y).unwrap();
    assert!(app.doc.obstacle[cell(9.0, 5.0)]);
    assert!(!app.doc.obstacle[cell(3.0, 5.0)]);
    // Save has no map path yet: it asks for one and writes nothing; the suggested one is
    // the plan's with `.json`.
    app.apply(Command::Save);
    assert!(app.message.contains("Save as"), "{}", app.message);
    let saved = tmp.path().join("hall.json");
    assert!(!saved.exists());
    assert_eq!(app.file.path, saved.display().to_string());
    app.apply(Command::SaveAs(PathBuf::from(&app.file.path)));
    assert_eq!(
        std::fs::read_to_string(&plan).unwrap(),
        text,
        "the plan is untouched"
    );
    assert!(saved.exists(), "{}", app.message);
    assert!(!app.dirty(), "{}", app.message);
    crowdfield::map::load(&saved).unwrap();
    // A plan that lacks a count says which distribution and how to give one.
    let bare = tmp.path().join("bare.geojson");
    std::fs::write(&bare, text.replace(r#", "number": 25"#, "")).unwrap();
    app.open(&bare);
    assert!(
        app.message.starts_with("Could not import") && app.message.contains("number"),
        "{}",
        app.message
    );
}

/// A map with a route, exit shares, a speed region and their events runs in the editor with
/// the schedule the library compiles for it.
#[test]
fn routes_shares_and_regions_run_in_the_editor_as_the_library_compiles_them() {
    let tmp = tempfile::tempdir().unwrap();
    let map = r#"{
        "version": 1,
        "name": "routes",
        "grid": {"cols": 40, "rows": 20, "cell_size": 0.5},
        "groups": [{
            "name": "walkers",
            "goals": [
                {"name": "east exit", "rect": {"min": [19.5, 0], "max": [20, 10]}},
                {"name": "west exit", "rect": {"min": [0, 0], "max": [0.5, 10]}}
            ],
            "spawns": [{"rect": {"min": [8, 1], "max": [12, 9]}, "count": 20}],
            "route": [
                {"waypoint": {"name": "gate", "circle": {"center": [10, 5], "radius": 1}}},
                {"wait": {"name": "platform", "rect": {"min": [13, 2], "max": [15, 8]}, "seconds": 2, "until": "released"}}
            ],
            "exit_shares": {"east exit": 0.3, "west exit": 0.7}
        }],
        "regions": [{"name": "smoke", "rect": {"min": [2, 0], "max": [6, 10]}, "speed_factor": 0.5}],
        "events": [{"at": 5, "release": "platform"}, {"at": 8, "region": "smoke", "speed_factor": 0.3}]
    }"#;
    let path = tmp.path().join("routes.json");
    std::fs::write(&path, map).unwrap();
    let doc = mapio::load(&path).unwrap();
    let library = crowdfield::map::load(&path).unwrap().schedule;
    assert!(!library.routes.is_empty(), "the map has routes and regions");
    assert_eq!(doc.to_scene().schedule, library);
}
