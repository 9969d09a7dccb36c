//! Generated map assets: the office floor plan `maps/office_walls.png` is drawn by
//! [`office_walls`] below, and this test checks that the committed image matches it pixel for
//! pixel. Run `CROWDFIELD_REGENERATE_MAPS=1 cargo test --test map_assets` after changing the
//! plan to rewrite the PNG.

use image::{GrayImage, Luma};
use std::path::Path;

/// Edge of one pixel (one grid cell of maps/office.json), metres.
const CELL: f64 = 0.25;
/// Floor size, metres.
const WIDTH: f64 = 50.0;
const HEIGHT: f64 = 30.0;
/// Thickness of every wall, metres (two cells: thick enough that no diagonal leaks through).
const WALL: f64 = 0.5;

/// A plan drawn in metres (y up) onto an image (row 0 at the top), by cell centres, the same
/// convention the map loader uses for shapes.
struct Plan {
    img: GrayImage,
}

impl Plan {
    fn new() -> Self {
        let cols = (WIDTH / CELL) as u32;
        let rows = (HEIGHT / CELL) as u32;
        Self {
            img: GrayImage::from_pixel(cols, rows, Luma([255])),
        }
    }

    /// Paints the cells whose centre lies in `[x0, x1) x [y0, y1)`: black for walls, white for
    /// openings.
    fn paint(&mut self, x0: f64, y0: f64, x1: f64, y1: f64, wall: bool) {
        let (cols, rows) = self.img.dimensions();
        for r in 0..rows {
            for c in 0..cols {
                let x = (c as f64 + 0.5) * CELL;
                let y = (r as f64 + 0.5) * CELL;
                if x0 <= x && x < x1 && y0 <= y && y < y1 {
                    let value = if wall { 0 } else { 255 };
                    self.img.put_pixel(c, rows - 1 - r, Luma([value]));
                }
            }
        }
    }

    fn wall(&mut self, x0: f64, y0: f64, x1: f64, y1: f64) {
        self.paint(x0, y0, x1, y1, true);
    }

    fn door(&mut self, x0: f64, y0: f64, x1: f64, y1: f64) {
        self.paint(x0, y0, x1, y1, false);
    }
}

/// The office floor: a corridor along y in [13, 17] m with stairs at both ends, five offices to
/// the south (the middle one split by an inner wall with a door at its far end), an open-plan
/// area with desk islands and two meeting rooms to the north. Black = wall.
fn office_walls() -> GrayImage {
    let mut p = Plan::new();
    // Outer walls, with the stair exits at the corridor's ends.
    p.wall(0.0, 0.0, WIDTH, WALL);
    p.wall(0.0, HEIGHT - WALL, WIDTH, HEIGHT);
    p.wall(0.0, 0.0, WALL, HEIGHT);
    p.wall(WIDTH - WALL, 0.0, WIDTH, HEIGHT);
    p.door(0.0, 14.0, WALL, 16.0);
    p.door(WIDTH - WALL, 14.0, WIDTH, 16.0);
    // Corridor walls.
    p.wall(0.0, 12.5, WIDTH, 13.0);
    p.wall(0.0, 17.0, WIDTH, 17.5);
    // South offices: partitions every 10 m, a 1 m door from each office to the corridor.
    for i in 1..5 {
        let x = 10.0 * i as f64;
        p.wall(x - 0.25, 0.0, x + 0.25, 13.0);
    }
    for i in 0..5 {
        let x = 10.0 * i as f64 + 5.0;
        p.door(x - 0.5, 12.5, x + 0.5, 13.0);
    }
    // The middle office is split: its back part is reached through a door at its east end.
    p.wall(20.0, 5.75, 30.0, 6.25);
    p.door(28.0, 5.75, 29.0, 6.25);
    // North: open plan (x < 30) with three 2 m openings, and two meeting rooms.
    for x in [5.0, 15.0, 25.0] {
        p.door(x - 1.0, 17.0, x + 1.0, 17.5);
    }
    for x in [30.0, 40.0] {
        p.wall(x - 0.25, 17.0, x + 0.25, HEIGHT);
    }
    for x in [35.0, 45.0] {
        p.door(x - 0.5, 17.0, x + 0.5, 17.5);
    }
    // Desk islands in the open plan.
    for y in [21.0, 25.0] {
        for x in [3.0, 12.0, 21.0] {
            p.wall(x, y, x + 6.0, y + 1.0);
        }
    }
    p.img
}

#[test]
fn office_png_matches_its_generator() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("maps/office_walls.png");
    let want = office_walls();
    if std::env::var_os("CROWDFIELD_REGENERATE_MAPS").is_some() {
        let mut png = Vec::new();
        want.write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
            .unwrap();
        crowdfield::io::write_bytes_atomic(&path, &png).unwrap();
    }
    let got = image::open(&path)
        .unwrap_or_else(|e| {
            panic!(
                "{}: {e} (regenerate with CROWDFIELD_REGENERATE_MAPS=1)",
                path.display()
            )
        })
        .to_luma8();
    assert_eq!(got.dimensions(), want.dimensions());
    assert!(
        got.as_raw() == want.as_raw(),
        "maps/office_walls.png differs from its generator; regenerate with CROWDFIELD_REGENERATE_MAPS=1"
    );
}
