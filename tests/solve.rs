//! The `solve` output set (library half, scenes built in code) and the `crowdfield solve`
//! command end to end.

use crowdfield::eikonal::Order;
use crowdfield::export::ImageOptions;
use crowdfield::export::bundle::{MAX_GROUP_DIR_LEN, sanitize_names, write_solve_bundle};
use crowdfield::io::read_npy_f64;
use crowdfield::plan::{PlanOptions, plan};
use crowdfield::scene::{Area, Group};
use crowdfield::{Grid, Scene};
use ndarray::Array2;

fn group(name: &str, goal: Array2<bool>) -> Group {
    Group {
        name: name.into(),
        color: [200, 50, 50],
        goals: vec![Area {
            name: format!("{name} goal"),
            mask: goal.into(),
            width: 1.0,
        }],
        spawns: vec![],
        speed_min: 1.2,
        speed_max: 1.4,
        speed_distribution: Default::default(),
        radius: 0.25,
        boids: None,
        orca: Default::default(),
    }
}

/// A 24 x 12 corridor with a wall splitting off an enclosed pocket (unreachable) and two groups.
fn corridor() -> Scene {
    let g = Grid::new(24, 12, 0.5);
    let mut s = Scene::empty("corridor", g);
    for r in 0..12 {
        s.obstacle[[r, 20]] = true;
    }
    let west = Array2::from_shape_fn(g.shape(), |(_, c)| c == 0);
    let east = Array2::from_shape_fn(g.shape(), |(r, c)| c == 19 && r < 3);
    s.groups.push(group("West exit / main", west));
    s.groups.push(group("east", east));
    s
}

#[test]
fn bundle_writes_every_file_with_consistent_contents() {
    let s = corridor();
    let dir = tempfile::tempdir().unwrap();
    let mut lines = Vec::new();
    let plan = plan(&s, &PlanOptions::default()).unwrap();
    let summary = write_solve_bundle(&s, &plan, dir.path(), &ImageOptions::default(), &mut |l| {
        lines.push(l.to_string())
    })
    .unwrap();
    assert!(lines.len() >= 4, "{lines:?}");
    for f in ["density.png", "speed.png", "cost.png", "summary.json"] {
        assert!(dir.path().join(f).is_file(), "{f}");
    }
    assert!(
        !dir.path().join("height.png").exists(),
        "a flat map has no terrain picture"
    );
    // A slope gets one.
    let mut hill = corridor();
    hill.height = ndarray::Array2::from_shape_fn(hill.grid.shape(), |(_, c)| c as f32 * 0.1);
    let hill_dir = tempfile::tempdir().unwrap();
    solve_quietly(&hill, hill_dir.path());
    let img = image::open(hill_dir.path().join("height.png")).unwrap();
    assert!(img.width() > 24 && img.height() > 12);
    let names = ["West_exit___main", "east"];
    for (i, name) in names.iter().enumerate() {
        let gdir = dir.path().join(name);
        for f in [
            "potential.npy",
            "gradient_x.npy",
            "gradient_y.npy",
            "potential.png",
            "gradient.png",
        ] {
            assert!(gdir.join(f).is_file(), "{name}/{f}");
        }
        let phi = read_npy_f64(&gdir.join("potential.npy")).unwrap();
        assert_eq!(phi.dim(), (12, 24));
        // Columns 20.. lie behind the wall: unreachable (the wall itself too).
        let unreachable = phi.iter().filter(|v| v.is_infinite()).count();
        assert_eq!(unreachable, 12 * 4);
        assert_eq!(summary["groups"][i]["unreachable_cells"], unreachable);
        assert_eq!(summary["groups"][i]["unreachable_free_cells"], 12 * 3);
        assert_eq!(summary["groups"][i]["dir"], *name);
        assert!(phi.iter().all(|v| !v.is_nan()));
        let gx = read_npy_f64(&gdir.join("gradient_x.npy")).unwrap();
        // West exit: walking west means d phi / d x > 0 away from the goal column.
        if i == 0 {
            assert!(gx[[5, 10]] > 0.0);
            let expect = 10.0 * 0.5 / 1.34;
            assert!(
                (phi[[5, 10]] - expect).abs() < 1e-6,
                "{} vs {expect}",
                phi[[5, 10]]
            );
        }
    }
    let on_disk: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("summary.json")).unwrap()).unwrap();
    assert_eq!(on_disk, summary);
    assert_eq!(summary["grid"]["cols"], 24);
    assert_eq!(summary["order"], 1);
    assert_eq!(summary["params"]["f_max"], 1.34);
    assert_eq!(summary["groups"][0]["phi_min"], 0.0);
}

#[test]
fn group_names_become_distinct_safe_file_names() {
    assert_eq!(
        sanitize_names(&["a/b", "a b", "", "..", "Ok-1_x", "ok-1_X"]),
        vec!["a_b", "a_b_2", "group_2", "group_3", "Ok-1_x", "ok-1_X_2"]
    );
    // A name longer than a file name may be (300 characters; 255 bytes on most file systems)
    // is cut, and two names alike in their first characters stay apart.
    let long_a = "x".repeat(300);
    let long_b = format!("{}b", "x".repeat(299));
    let dirs = sanitize_names(&[&long_a, &long_b]);
    assert_eq!(dirs[0], "x".repeat(MAX_GROUP_DIR_LEN));
    assert_eq!(dirs[1], format!("{}_2", "x".repeat(MAX_GROUP_DIR_LEN)));
}

/// `solve`'s files for `scene` in `dir`, first order, default images, no log.
fn solve_quietly(scene: &Scene, dir: &std::path::Path) {
    let options = PlanOptions {
        order: Order::First,
        ..PlanOptions::default()
    };
    let plan = plan(scene, &options).unwrap();
    write_solve_bundle(scene, &plan, dir, &ImageOptions::default(), &mut |_| {}).unwrap();
}

#[test]
fn a_group_with_a_very_long_name_solves() {
    let dir = tempfile::tempdir().unwrap();
    let mut scene = crowdfield::map::load(std::path::Path::new("maps/corridor.json")).unwrap();
    scene.groups[0].name = "walkers ".repeat(40);
    solve_quietly(&scene, dir.path());
    assert!(
        dir.path()
            .join("walkers_".repeat(8))
            .join("potential.npy")
            .is_file()
    );
}
