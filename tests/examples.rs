//! The usage examples of `examples/` run here, on small inputs, and their results are checked:
//! an example that stops compiling or starts giving wrong answers fails the suite.

#[allow(dead_code)]
#[path = "../examples/embed/embed_loop.rs"]
mod embed_loop;

#[allow(dead_code)]
#[path = "../examples/potential_png.rs"]
mod potential_png;

/// The embedding loop reads positions every step and reports every walker out: on the
/// corridor map its one walker walks the corridor and leaves.
#[test]
fn the_embedding_loop_runs_a_map_to_the_end() {
    let map = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("maps/corridor.json");
    let mut text = Vec::new();
    let (out, total) = embed_loop::run(&map, 7, &mut text).unwrap();
    let text = String::from_utf8(text).unwrap();
    assert_eq!((out, total), (1, 1), "{text}");
    assert!(text.contains("1 inside, centre"), "{text}");
    assert!(
        text.trim_end().ends_with("s)") && text.contains("1 of 1 out"),
        "{text}"
    );
}

/// The potential example writes a PNG, and its potential goes round the wall through the door:
/// the far corner is further in time than in a straight line, and only the wall is unreachable.
#[test]
fn the_potential_example_solves_round_the_wall_and_writes_a_png() {
    let dir = tempfile::tempdir().unwrap();
    let png = dir.path().join("potential.png");
    let solution = potential_png::run(&png).unwrap();
    let (rows, cols, cell) = potential_png::HALL;
    assert_eq!(
        solution.unreachable,
        rows - 8,
        "the wall's cells, less the door's 8"
    );
    let corner = solution.phi[(rows - 1, cols - 1)];
    let straight = (cols - 1) as f64 * cell / 1.34;
    // The shortest path: from the corner's centre to the door's upper edge on the wall's east
    // face (x = 30.5 m, y = 17 m), through the door, then west to the goal cells' centres.
    let centre = |i: usize| (i as f64 + 0.5) * cell;
    let (x0, y0) = (centre(cols - 1), centre(rows - 1));
    let detour = ((x0 - 30.5).hypot(y0 - 17.0) + 0.5 + (30.0 - centre(0))) / 1.34;
    assert!(
        corner > straight + 1.0,
        "{corner} s vs {straight} s in a straight line"
    );
    assert!(
        (corner - detour).abs() < 0.02 * detour,
        "{corner} s vs {detour} s round the wall"
    );
    let img = image::open(&png).unwrap();
    assert!(img.width() as usize > cols && img.height() as usize > rows);
}
