//! `crowdfield import`: DXF drawings made here with the `dxf` crate's writer (every entity kind
//! the reader takes, millimetres, UTM offsets, INSERTs), WKT and GeoJSON (their areas held to
//! shapely's), images at two resolutions, every error the reader gives, and a plan imported,
//! validated and simulated to the end.

use crowdfield::import::{ImportOptions, Imported, from_dxf::LayerNames, import, read_plan};
use dxf::entities::{Entity, EntityType, Insert, Line, LwPolyline, MText, Polyline, Text, Vertex};
use dxf::enums::{AcadVersion, Units};
use dxf::{Block, Drawing, LwPolylineVertex, Point};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A drawing at a version that writes LWPOLYLINEs and `$INSUNITS`.
fn drawing(units: Units) -> Drawing {
    let mut d = Drawing::new();
    d.header.version = AcadVersion::R2018;
    d.header.default_drawing_units = units;
    d
}

fn on(layer: &str, specific: EntityType) -> Entity {
    let mut e = Entity::new(specific);
    e.common.layer = layer.to_string();
    e
}

fn lw(points: &[(f64, f64)], closed: bool) -> EntityType {
    let mut p = LwPolyline {
        vertices: points
            .iter()
            .map(|&(x, y)| LwPolylineVertex {
                x,
                y,
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    };
    p.set_is_closed(closed);
    EntityType::LwPolyline(p)
}

fn rect(x0: f64, y0: f64, x1: f64, y1: f64) -> Vec<(f64, f64)> {
    vec![(x0, y0), (x1, y0), (x1, y1), (x0, y1)]
}

fn pt(x: f64, y: f64) -> Point {
    Point::new(x, y, 0.0)
}

fn save(d: &Drawing, dir: &Path, name: &str) -> PathBuf {
    let path = dir.join(name);
    d.save_file(&path).unwrap();
    path
}

fn read(path: &Path, options: &ImportOptions) -> crowdfield::error::Result<Imported> {
    let plan = read_plan(path, &LayerNames::default(), None, None)?;
    import(&plan, options)
}

fn err(path: &Path, options: &ImportOptions) -> String {
    read(path, options).unwrap_err().to_string()
}

/// The handle (hex, as messages show it) of the first entity on `layer` of the saved file.
fn handle_on(path: &Path, layer: &str) -> String {
    let d = Drawing::load_file(path).unwrap();
    let e = d.entities().find(|e| e.common.layer == layer).unwrap();
    format!("{:X}", e.common.handle.0)
}

/// Millimetres east and north of a UTM zone's origin, where a surveyed plan lies.
const UTM_MM: (f64, f64) = (412_345_000.0, 5_654_321_000.0);

/// A plan in millimetres at UTM coordinates with every entity kind the reader takes.
fn every_entity_plan(dir: &Path) -> PathBuf {
    let mut d = drawing(Units::Millimeters);
    let (ox, oy) = UTM_MM;
    let r = |x0: f64, y0: f64, x1: f64, y1: f64| rect(ox + x0, oy + y0, ox + x1, oy + y1);
    // Walkable: 20 m x 10 m.
    d.add_entity(on("jps-walkablearea", lw(&r(0.0, 0.0, 20_000.0, 10_000.0), true)));
    // A POLYLINE square of 2 m (4 m²).
    let mut poly = Polyline::default();
    poly.set_is_closed(true);
    for (x, y) in r(2000.0, 2000.0, 4000.0, 4000.0) {
        poly.add_vertex(&mut d, Vertex::new(pt(x, y)));
    }
    d.add_entity(on("JPS-OBSTACLES", EntityType::Polyline(poly)));
    // Three LINEs (one drawn backwards) and an ARC: a 2 m square with a half disc on top.
    d.add_entity(on(
        "jps-obstacles",
        EntityType::Line(Line::new(
            pt(ox + 6000.0, oy + 2000.0),
            pt(ox + 8000.0, oy + 2000.0),
        )),
    ));
    d.add_entity(on(
        "jps-obstacles",
        EntityType::Line(Line::new(
            pt(ox + 8000.0, oy + 4000.0),
            pt(ox + 8000.0, oy + 2000.0),
        )),
    ));
    d.add_entity(on(
        "jps-obstacles",
        EntityType::Line(Line::new(
            pt(ox + 6000.0, oy + 4000.0),
            pt(ox + 6000.0, oy + 2000.0),
        )),
    ));
    d.add_entity(on(
        "jps-obstacles",
        EntityType::Arc(dxf::entities::Arc::new(
            pt(ox + 7000.0, oy + 4000.0),
            1000.0,
            0.0,
            180.0,
        )),
    ));
    // A CIRCLE pillar of radius 0.5 m.
    d.add_entity(on(
        "obstacles",
        EntityType::Circle(dxf::entities::Circle::new(pt(ox + 12_000.0, oy + 3000.0), 500.0)),
    ));
    // A block of a 1 m square on layer 0, INSERTed on the obstacles layer, turned 45°.
    let mut block = Block {
        name: "PILLAR".into(),
        ..Default::default()
    };
    block
        .entities
        .push(on("0", lw(&rect(0.0, 0.0, 1000.0, 1000.0), true)));
    d.add_block(block);
    let mut insert = Insert {
        name: "PILLAR".into(),
        location: pt(ox + 15_000.0, oy + 5000.0),
        rotation: 45.0,
        ..Default::default()
    };
    insert.x_scale_factor = 1.0;
    insert.y_scale_factor = 1.0;
    d.add_entity(on("jps-obstacles", EntityType::Insert(insert)));
    // An exit at the east wall; two distributions, one with a number, one with a radius.
    d.add_entity(on("jps-exits", lw(&r(19_000.0, 4000.0, 20_000.0, 6000.0), true)));
    d.add_entity(on(
        "jps-distributions",
        lw(&r(1000.0, 6000.0, 5000.0, 9000.0), true),
    ));
    d.add_entity(on(
        "jps-parameters",
        EntityType::Text(Text {
            location: pt(ox + 3000.0, oy + 7500.0),
            value: "number=20".into(),
            ..Default::default()
        }),
    ));
    d.add_entity(on(
        "jps-distributions",
        lw(&r(10_000.0, 6000.0, 14_000.0, 9000.0), true),
    ));
    d.add_entity(on(
        "jps-parameters",
        EntityType::MText(MText {
            insertion_point: pt(ox + 12_000.0, oy + 7500.0),
            text: "radius=0.2".into(),
            ..Default::default()
        }),
    ));
    save(&d, dir, "every_entity.dxf")
}

#[test]
fn a_dxf_plan_with_every_entity_kind_in_mm_at_utm_coordinates_imports() {
    let dir = tempfile::tempdir().unwrap();
    let path = every_entity_plan(dir.path());
    let options = ImportOptions {
        density: Some(0.5),
        ..ImportOptions::default()
    };
    let imported = read(&path, &options).unwrap();
    let s = &imported.summary;
    let sin5 = 5f64.to_radians().sin();
    // Arcs and circles are drawn in 5° steps: a half disc of 36 triangles, a disc of 72.
    let expected = 200.0 - 4.0 - (4.0 + 18.0 * sin5) - 72.0 * 0.5 * 0.25 * sin5 - 1.0;
    assert!(
        ((s.walkable_area - expected) / expected).abs() < 1e-6,
        "{} vs {expected}",
        s.walkable_area
    );
    assert_eq!(s.units, "mm");
    assert_eq!(s.holes, 4);
    assert_eq!(s.origin, [412_344.0, 5_654_320.0]);
    assert_eq!(imported.map.grid.origin, Some([412_344.0, 5_654_320.0]));
    assert_eq!((s.exits, s.distributions, s.persons), (1, 2, 20 + 6));
    assert_eq!(s.distribution_details[0].count_from, "the plan");
    // Distributions of two radii: two groups, each with the exit.
    let radii: Vec<f64> = imported.map.groups.iter().map(|g| g.radius).collect();
    assert_eq!(radii, vec![0.25, 0.2]);
    // The map compiles; the rotated pillar's centre is blocked, the floor beside it free.
    let scene = crowdfield::map::compile(&imported.map, dir.path(), "m").unwrap();
    let cell = |x: f64, y: f64| {
        let cs = scene.grid.cell_size;
        let (c, r) = ((x - s.origin[0]) / cs, (y - s.origin[1]) / cs);
        scene.obstacle[[r as usize, c as usize]]
    };
    let (ux, uy) = (UTM_MM.0 / 1000.0, UTM_MM.1 / 1000.0);
    // The square turned 45° about its corner (15, 5) has its centre at (15, 5 + 0.707).
    assert!(cell(ux + 15.0, uy + 5.7));
    assert!(!cell(ux + 16.0, uy + 5.7));
    assert!(cell(ux + 12.0, uy + 3.0), "the circle pillar");
    assert!(cell(ux + 7.0, uy + 4.5), "the arc's half disc");
    assert!(!cell(ux + 10.0, uy + 8.0));
    assert!(cell(ux - 0.5, uy + 5.0), "outside the walkable area");
}

#[test]
fn layer_names_from_other_conventions_and_any_case() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = drawing(Units::Meters);
    d.add_entity(on("FLOOR", lw(&rect(0.0, 0.0, 10.0, 5.0), true)));
    // A sheet's frame in paper space is not part of the floor.
    let mut frame = on("FLOOR", lw(&rect(-50.0, -50.0, 50.0, 50.0), true));
    frame.common.is_in_paper_space = true;
    d.add_entity(frame);
    d.add_entity(on("Exits", lw(&rect(9.0, 2.0, 10.0, 3.0), true)));
    d.add_entity(on("People", lw(&rect(1.0, 1.0, 3.0, 3.0), true)));
    d.add_entity(on(
        "People",
        EntityType::Text(Text {
            location: pt(2.0, 2.0),
            value: "number=7".into(),
            ..Default::default()
        }),
    ));
    let path = save(&d, dir.path(), "floor.dxf");
    let layers = LayerNames::parse("walkable=floor,distributions=PEOPLE").unwrap();
    let plan = read_plan(&path, &layers, None, None).unwrap();
    let s = import(&plan, &ImportOptions::default()).unwrap().summary;
    assert_eq!((s.walkable_area, s.exits, s.persons), (50.0, 1, 7));
    // Without the names the drawing has no walkable layer, and the error lists its layers.
    let e = err(&path, &ImportOptions::default());
    assert!(e.contains("floor.dxf") && e.contains("no walkable layer"), "{e}");
    assert!(
        e.contains("FLOOR") && e.contains("People") && e.contains("walkable=NAME"),
        "{e}"
    );
}

#[test]
fn a_ring_inside_a_walkable_ring_is_a_hole_and_bulges_are_arcs() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = drawing(Units::Centimeters);
    d.add_entity(on("jps-walkablearea", lw(&rect(0.0, 0.0, 1000.0, 1000.0), true)));
    d.add_entity(on(
        "jps-walkablearea",
        lw(&rect(400.0, 400.0, 600.0, 600.0), true),
    ));
    // A 2 m x 1 m room whose top is a half circle of radius 1 m, by a bulge of 1.
    let mut p = LwPolyline::default();
    for (x, y, bulge) in [
        (2000.0, 0.0, 0.0),
        (2200.0, 0.0, 0.0),
        (2200.0, 100.0, 1.0),
        (2000.0, 100.0, 0.0),
    ] {
        p.vertices.push(LwPolylineVertex {
            x,
            y,
            bulge,
            ..Default::default()
        });
    }
    p.set_is_closed(true);
    d.add_entity(on("jps-walkablearea", EntityType::LwPolyline(p)));
    let path = save(&d, dir.path(), "rooms.dxf");
    let s = read(&path, &ImportOptions::default()).unwrap().summary;
    let half_disc = 18.0 * 5f64.to_radians().sin();
    let expected = 100.0 - 4.0 + 2.0 + half_disc;
    assert!(
        (s.walkable_area - expected).abs() < 1e-9 * expected,
        "{}",
        s.walkable_area
    );
    assert_eq!((s.walkable_polygons, s.holes), (2, 1));
    assert_eq!(s.units, "cm");
}

#[test]
fn an_open_polyline_is_an_error_naming_the_layer_entity_and_gap() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = drawing(Units::Meters);
    d.add_entity(on(
        "jps-walkablearea",
        lw(
            &[(0.0, 0.0), (10.0, 0.0), (10.0, 5.0), (0.0, 5.0), (0.0, 1.5)],
            false,
        ),
    ));
    let path = save(&d, dir.path(), "open.dxf");
    let e = err(&path, &ImportOptions::default());
    let handle = handle_on(&path, "jps-walkablearea");
    assert!(
        e.contains("open.dxf") && e.contains("layer jps-walkablearea"),
        "{e}"
    );
    assert!(e.contains(&format!("entity {handle}")), "{e}");
    assert!(e.contains("open outline") && e.contains("1.5 apart"), "{e}");
}

#[test]
fn a_self_intersecting_outline_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = drawing(Units::Meters);
    d.add_entity(on(
        "jps-walkablearea",
        lw(&[(0.0, 0.0), (10.0, 10.0), (10.0, 0.0), (0.0, 10.0)], true),
    ));
    let path = save(&d, dir.path(), "bowtie.dxf");
    let e = err(&path, &ImportOptions::default());
    let handle = handle_on(&path, "jps-walkablearea");
    assert!(
        e.contains("bowtie.dxf") && e.contains(&format!("entity {handle}")),
        "{e}"
    );
    assert!(e.contains("self-intersection"), "{e}");
}

#[test]
fn an_exit_outside_the_walkable_area_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = drawing(Units::Meters);
    d.add_entity(on("jps-walkablearea", lw(&rect(0.0, 0.0, 10.0, 5.0), true)));
    d.add_entity(on("jps-exits", lw(&rect(12.0, 2.0, 13.0, 3.0), true)));
    let path = save(&d, dir.path(), "exit.dxf");
    let e = err(&path, &ImportOptions::default());
    assert!(
        e.contains("layer jps-exits") && e.contains(&handle_on(&path, "jps-exits")),
        "{e}"
    );
    assert!(
        e.contains("exit 1: the exit lies outside the walkable area"),
        "{e}"
    );
}

#[test]
fn a_distribution_in_a_wall_and_one_without_a_count_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = drawing(Units::Meters);
    d.add_entity(on("jps-walkablearea", lw(&rect(0.0, 0.0, 10.0, 5.0), true)));
    d.add_entity(on("jps-obstacles", lw(&rect(4.0, 0.0, 5.0, 4.0), true)));
    d.add_entity(on("jps-exits", lw(&rect(9.0, 2.0, 10.0, 3.0), true)));
    d.add_entity(on("jps-distributions", lw(&rect(3.0, 1.0, 6.0, 3.0), true)));
    let path = save(&d, dir.path(), "wall.dxf");
    let e = err(&path, &ImportOptions::default());
    assert!(
        e.contains("layer jps-distributions") && e.contains(&handle_on(&path, "jps-distributions")),
        "{e}"
    );
    assert!(
        e.contains("distribution 1: the distribution lies in a wall") && e.contains("2 m²"),
        "{e}"
    );

    let mut d = drawing(Units::Meters);
    d.add_entity(on("jps-walkablearea", lw(&rect(0.0, 0.0, 10.0, 5.0), true)));
    d.add_entity(on("jps-exits", lw(&rect(9.0, 2.0, 10.0, 3.0), true)));
    d.add_entity(on("jps-distributions", lw(&rect(1.0, 1.0, 3.0, 3.0), true)));
    let path = save(&d, dir.path(), "nocount.dxf");
    let e = err(&path, &ImportOptions::default());
    assert!(e.contains("nocount.dxf") && e.contains("distribution 1"), "{e}");
    assert!(
        e.contains("number=20") && e.contains("ImportOptions.density"),
        "{e}"
    );
    let s = read(
        &path,
        &ImportOptions {
            density: Some(2.0),
            ..Default::default()
        },
    )
    .unwrap()
    .summary;
    assert_eq!(s.persons, 8);
}

/// Runs python3 with shapely on `script`; a missing python3 or shapely fails the test.
fn shapely(script: &str) -> String {
    let out = Command::new("python3")
        .args(["-c", script])
        .output()
        .expect("python3 runs (shapely comes with PedPy; the test needs it)");
    assert!(
        out.status.success(),
        "python3 with shapely failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn wkt_and_geojson_areas_equal_shapelys() {
    let dir = tempfile::tempdir().unwrap();
    let venue = Path::new(env!("CARGO_MANIFEST_DIR")).join("maps/venue.wkt");
    let ours = read(
        &venue,
        &ImportOptions {
            density: Some(1.0),
            ..Default::default()
        },
    )
    .unwrap()
    .summary
    .walkable_area;
    let theirs: f64 = shapely(&format!(
        "import shapely; g = shapely.from_wkt(open({:?}).read()); \
         print(repr(shapely.unary_union(list(g.geoms[0].geoms)).area))",
        venue.display().to_string()
    ))
    .trim()
    .parse()
    .unwrap();
    assert!(
        ((ours - theirs) / theirs).abs() < 1e-6,
        "{ours} vs shapely {theirs}"
    );

    // GeoJSON: two overlapping rooms (a union), a courtyard hole, an obstacle across a wall,
    // at irregular coordinates.
    let geojson = r#"{"type": "FeatureCollection", "features": [
      {"type": "Feature", "properties": {"layer": "jps-walkablearea"}, "geometry": {"type": "Polygon",
        "coordinates": [[[0.13, 0.2], [30.7, 0.1], [31.3, 18.9], [0.4, 19.55], [0.13, 0.2]],
                        [[10.1, 5.3], [14.9, 5.1], [15.2, 9.8], [10.3, 9.9], [10.1, 5.3]]]}},
      {"type": "Feature", "properties": {}, "geometry": {"type": "Polygon",
        "coordinates": [[[25.5, 10.25], [42.3, 11.1], [41.9, 25.7], [26.1, 24.9], [25.5, 10.25]]]}},
      {"type": "Feature", "properties": {"layer": "obstacles"}, "geometry": {"type": "Polygon",
        "coordinates": [[[29.0, 3.0], [33.0, 3.3], [32.7, 6.1], [28.8, 5.9], [29.0, 3.0]]]}},
      {"type": "Feature", "properties": {"layer": "exits", "name": "north"}, "geometry": {"type": "Polygon",
        "coordinates": [[[30.0, 24.0], [32.0, 24.0], [32.0, 25.0], [30.0, 25.0], [30.0, 24.0]]]}},
      {"type": "Feature", "properties": {"layer": "distributions", "number": 40, "radius": 0.22},
        "geometry": {"type": "Polygon", "coordinates": [[[2, 2], [8, 2], [8, 8], [2, 8], [2, 2]]]}}
    ]}"#;
    let path = dir.path().join("rooms.geojson");
    std::fs::write(&path, geojson).unwrap();
    let imported = read(&path, &ImportOptions::default()).unwrap();
    let ours = imported.summary.walkable_area;
    let theirs: f64 = shapely(&format!(
        "import json, shapely; from shapely.geometry import shape\n\
         fs = json.load(open({:?}))['features']\n\
         walk = shapely.unary_union([shape(f['geometry']) for f in fs if f['properties'].get('layer', 'walkable') in ('walkable', 'jps-walkablearea')])\n\
         obst = shapely.unary_union([shape(f['geometry']) for f in fs if f['properties'].get('layer') == 'obstacles'])\n\
         print(repr(walk.difference(obst).area))",
        path.display().to_string()
    ))
    .trim()
    .parse()
    .unwrap();
    assert!(
        ((ours - theirs) / theirs).abs() < 1e-6,
        "{ours} vs shapely {theirs}"
    );
    assert_eq!(imported.summary.exit_names, vec!["north"]);
    assert_eq!(imported.summary.persons, 40);
    assert_eq!(imported.map.groups[0].radius, 0.22);
}

/// A picture of a 10 m x 6 m room (walls 0.2 m thick, a 1 m pillar) at `px` pixels per metre.
fn room_picture(path: &Path, px: u32) {
    let (w, h) = (10 * px, 6 * px);
    let wall = (px as f64 * 0.2).round() as u32;
    let img = image::GrayImage::from_fn(w, h, |x, y| {
        let border = x < wall || y < wall || x >= w - wall || y >= h - wall;
        let pillar = (4 * px..5 * px).contains(&x) && (2 * px..3 * px).contains(&y);
        image::Luma([if border || pillar { 0 } else { 255 }])
    });
    img.save(path).unwrap();
}

#[test]
fn images_at_two_resolutions_give_the_same_map() {
    let dir = tempfile::tempdir().unwrap();
    let mut areas = Vec::new();
    for (px, name) in [(10, "coarse.png"), (40, "fine.png")] {
        let path = dir.path().join(name);
        room_picture(&path, px);
        let plan = read_plan(&path, &LayerNames::default(), Some(1.0 / px as f64), None).unwrap();
        let imported = import(&plan, &ImportOptions::default()).unwrap();
        assert_eq!((imported.map.grid.cols, imported.map.grid.rows), (40, 24));
        let out = dir.path().join(format!("{name}.json"));
        imported.save(&out).unwrap();
        let scene = crowdfield::map::load(&out).unwrap();
        // The pillar (4..5 m, 3..4 m from the bottom) and the walls are blocked, the floor not.
        assert!(scene.obstacle[[14, 18]] && scene.obstacle[[0, 0]] && !scene.obstacle[[12, 10]]);
        areas.push(imported.summary.walkable_area);
    }
    // Walls of 0.2 m block whole cells of 0.25 m: 38 x 22 free cells less the pillar's 4 x 4,
    // at both resolutions.
    assert_eq!(areas, vec![(38.0 * 22.0 - 16.0) * 0.0625; 2]);
    // Without the pixel size the image is refused.
    let e = read_plan(&dir.path().join("fine.png"), &LayerNames::default(), None, None)
        .unwrap_err()
        .to_string();
    assert!(e.contains("fine.png") && e.contains("pixel_size"), "{e}");
}

fn crowdfield(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_crowdfield"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn an_imported_plan_validates_and_evacuates() {
    let dir = tempfile::tempdir().unwrap();
    let plan = dir.path().join("hall.wkt");
    std::fs::write(
        &plan,
        "GEOMETRYCOLLECTION(GEOMETRYCOLLECTION(POLYGON((100 200,112 200,112 206,100 206,100 200),\
         (105 202,106 202,106 204,105 204,105 202))),\
         GEOMETRYCOLLECTION(POLYGON((111 202,112 202,112 204,111 204,111 202))),\
         GEOMETRYCOLLECTION(POLYGON((101 201,104 201,104 205,101 205,101 201))))",
    )
    .unwrap();
    let map = dir.path().join("hall.json");
    let s = |p: &Path| p.to_str().unwrap().to_string();
    let out = crowdfield(&["import", &s(&plan), "--out", &s(&map)]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("distribution 1") && stderr.contains("--density"),
        "{stderr}"
    );

    // The library's names of the options read as the flags.
    let out = crowdfield(&["import", &s(&plan), "--out", &s(&map), "--density", "-1"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--density: -1.0: expected persons per m²"),
        "{stderr}"
    );
    let out = crowdfield(&["import", &s(&plan), "--out", &s(&map), "--layer", "roof=R"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--layer: \"roof=R\": expected ROLE=LAYER"),
        "{stderr}"
    );

    let out = crowdfield(&["import", &s(&plan), "--out", &s(&map), "--density", "1", "--json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(summary["walkable_area"].as_f64(), Some(70.0));
    assert_eq!(summary["exits"], 1);
    assert_eq!(summary["distributions"], 1);
    assert_eq!(summary["persons"], 12);
    assert!(dir.path().join("hall.png").is_file());
    let written = crowdfield::map::MapFile::from_path(&map).unwrap();
    assert_eq!(written.grid.origin, Some([99.0, 199.0]));

    // A second import does not write over the first without --force.
    let again = crowdfield(&["import", &s(&plan), "--out", &s(&map), "--density", "1"]);
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("--force"));

    let out = crowdfield(&["validate", &s(&map)]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
    let run = dir.path().join("run");
    let out = crowdfield(&[
        "simulate",
        &s(&map),
        "--out",
        &s(&run),
        "--trajectories=none",
        "--max-time",
        "120",
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("report.json")).unwrap()).unwrap();
    assert_eq!(report["complete"], true, "{report}");
}

#[test]
fn an_image_plan_writes_its_walls_beside_the_map() {
    let dir = tempfile::tempdir().unwrap();
    let picture = dir.path().join("room.png");
    room_picture(&picture, 20);
    let s = |p: &Path| p.to_str().unwrap().to_string();
    // The plan's image would replace the picture itself: refused, even with --force.
    let clash = dir.path().join("room.json");
    let out = crowdfield(&[
        "import",
        &s(&picture),
        "--pixel-size",
        "0.05",
        "--out",
        &s(&clash),
        "--force",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("would replace the plan"), "{stderr}");
    let map = dir.path().join("floor.json");
    let out = crowdfield(&["import", &s(&picture), "--pixel-size", "0.05", "--out", &s(&map)]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("no exits"), "{stdout}");
    assert!(dir.path().join("floor_walls.png").is_file() && dir.path().join("floor.png").is_file());
    let scene = crowdfield::map::load(&map).unwrap();
    assert_eq!(scene.grid.shape(), (24, 40));
}

#[test]
fn plans_from_several_files_are_one_plan_and_errors_name_each_file() {
    let dir = tempfile::tempdir().unwrap();
    let floor = dir.path().join("floor.wkt");
    std::fs::write(&floor, "POLYGON((0 0,10 0,10 5,0 5,0 0))").unwrap();
    let exits = dir.path().join("exits.geojson");
    let exit = |x0: f64| {
        format!(
            r#"{{"type": "Feature", "properties": {{"layer": "exits"}}, "geometry": {{"type": "Polygon",
            "coordinates": [[[{x0}, 2], [{x1}, 2], [{x1}, 3], [{x0}, 3], [{x0}, 2]]]}}}}"#,
            x1 = x0 + 1.0
        )
    };
    std::fs::write(&exits, exit(9.0)).unwrap();
    let none = LayerNames::default();
    let mut plan = read_plan(&floor, &none, None, None).unwrap();
    plan.merge(read_plan(&exits, &none, None, None).unwrap());
    let s = import(&plan, &ImportOptions::default()).unwrap().summary;
    assert_eq!((s.walkable_area, s.exits), (50.0, 1));
    std::fs::write(&exits, exit(20.0)).unwrap();
    let mut plan = read_plan(&floor, &none, None, None).unwrap();
    plan.merge(read_plan(&exits, &none, None, None).unwrap());
    let e = import(&plan, &ImportOptions::default()).unwrap_err().to_string();
    assert!(
        e.contains("exits.geojson: features[0]: exit 1: the exit lies outside"),
        "{e}"
    );
}
