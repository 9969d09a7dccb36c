//! Images: size, colour bar, y-up orientation, obstacle/unreachable/goal marks, symmetry.

use crowdfield::export::render::{GOAL, Layout, NO_VALUE_BG, NO_VALUE_HATCH, OBSTACLE};
use crowdfield::export::{
    Colormap, ImageOptions, field_image, gradient_image, potential_image, potential_png,
};
use crowdfield::gradient::gradient;
use crowdfield::{Grid, Scene};
use image::RgbaImage;
use ndarray::{Array2, Array3};

fn px(img: &RgbaImage, x: u32, y: u32) -> [u8; 3] {
    let p = img.get_pixel(x, y);
    [p[0], p[1], p[2]]
}

fn close(a: [u8; 3], b: [u8; 3], tol: i32) -> bool {
    a.iter().zip(b).all(|(&x, y)| (x as i32 - y as i32).abs() <= tol)
}

/// A symmetric test scene: goals in the left and right columns, an obstacle block in the middle.
fn symmetric_scene() -> (Scene, Array2<f64>, Array2<bool>) {
    let g = Grid::new(21, 11, 1.0);
    let mut s = Scene::empty("sym", g);
    for r in 3..8 {
        for c in 9..12 {
            s.obstacle[[r, c]] = true;
        }
    }
    let mut goal = Array2::from_elem(g.shape(), false);
    for r in 4..7 {
        goal[[r, 0]] = true;
        goal[[r, 20]] = true;
    }
    // Exactly mirror-symmetric potential: distance to the nearer goal column, a y term.
    let phi = Array2::from_shape_fn(g.shape(), |(r, c)| {
        if s.obstacle[[r, c]] {
            f64::INFINITY
        } else {
            let dx = c.min(20 - c) as f64;
            let dy = (r as f64 - 5.0).abs().max(1.0) - 1.0;
            dx.hypot(dy) * 0.8
        }
    });
    (s, phi, goal)
}

#[test]
fn potential_image_is_large_enough_and_has_its_colour_bar() {
    let (s, phi, goal) = symmetric_scene();
    let opts = ImageOptions::default();
    let img = potential_image(&s, phi.view(), goal.view(), "sym", &opts);
    let l = Layout::new(11, 21, 3, &opts);
    assert_eq!((img.width(), img.height()), (l.width, l.height));
    assert!(img.width() >= 800 && l.map_w >= 800);
    assert_eq!(l.map_w, 21 * l.scale);
    // The bar: top is the highest value (viridis yellow), bottom the lowest (dark purple).
    let mid_x = l.bar_x + 12;
    assert!(close(
        px(&img, mid_x, l.bar_y + 2),
        Colormap::Viridis.rgb(1.0),
        12
    ));
    assert!(close(
        px(&img, mid_x, l.bar_y + l.bar_h - 3),
        Colormap::Viridis.rgb(0.0),
        12
    ));
    // Tick labels: some dark text pixels right of the bar.
    let ink = (l.bar_y..l.bar_y + l.bar_h)
        .flat_map(|y| (l.bar_x + 32..l.width).map(move |x| (x, y)))
        .filter(|&(x, y)| px(&img, x, y)[0] < 100)
        .count();
    assert!(ink > 50, "tick labels drawn ({ink} dark pixels)");
    // Obstacles are dark grey; goals outlined at their left border.
    let cell_px = |r: usize, c: usize| {
        (
            l.map_x + c as u32 * l.scale + l.scale / 2,
            l.map_y + (10 - r as u32) * l.scale + l.scale / 2,
        )
    };
    let (ox, oy) = cell_px(5, 10);
    assert_eq!(px(&img, ox, oy), OBSTACLE);
    let (gx, gy) = cell_px(5, 0);
    assert_eq!(px(&img, gx - l.scale / 2, gy), GOAL);
}

#[test]
fn row_zero_is_drawn_at_the_bottom() {
    let g = Grid::new(10, 8, 1.0);
    let s = Scene::empty("ramp", g);
    // Highest values in row 0 (y = 0).
    let field = Array2::from_shape_fn(g.shape(), |(r, _)| (7 - r) as f32);
    let img = field_image(
        &s,
        field.view(),
        "rows",
        "m",
        Colormap::Viridis,
        &ImageOptions::default(),
    );
    let l = Layout::new(8, 10, 2, &ImageOptions::default());
    let bottom = px(&img, l.map_x + 5, l.map_y + l.map_h - 2);
    let top = px(&img, l.map_x + 5, l.map_y + 2);
    assert_eq!(bottom, Colormap::Viridis.rgb(1.0));
    assert_eq!(top, Colormap::Viridis.rgb(0.0));
}

#[test]
fn unreachable_cells_are_hatched() {
    let g = Grid::new(10, 4, 1.0);
    let s = Scene::empty("u", g);
    let phi = Array2::from_shape_fn(g.shape(), |(_, c)| if c >= 5 { f64::INFINITY } else { c as f64 });
    let goal = Array2::from_shape_fn(g.shape(), |(_, c)| c == 0);
    let img = potential_image(&s, phi.view(), goal.view(), "u", &ImageOptions::default());
    let l = Layout::new(4, 10, 3, &ImageOptions::default());
    let mut seen = [0usize; 2];
    for y in l.map_y..l.map_y + l.map_h {
        for x in l.map_x + l.map_w - 3 * l.scale..l.map_x + l.map_w {
            let p = px(&img, x, y);
            assert!(p == NO_VALUE_BG || p == NO_VALUE_HATCH, "{p:?}");
            seen[(p == NO_VALUE_HATCH) as usize] += 1;
        }
    }
    assert!(seen[0] > 0 && seen[1] > 0, "both hatch colours present");
}

#[test]
fn a_symmetric_scene_gives_a_mirror_symmetric_map() {
    let (s, phi, goal) = symmetric_scene();
    let opts = ImageOptions::default();
    let img = potential_image(&s, phi.view(), goal.view(), "sym", &opts);
    let l = Layout::new(11, 21, 3, &opts);
    let mut differ = 0;
    for y in l.map_y..l.map_y + l.map_h {
        for x in 0..l.map_w {
            let a = px(&img, l.map_x + x, y);
            let b = px(&img, l.map_x + l.map_w - 1 - x, y);
            if a != b {
                differ += 1;
            }
        }
    }
    // Isolines are interpolated in floating point; allow a handful of boundary pixels.
    let total = (l.map_w * l.map_h) as usize;
    assert!(
        differ * 2000 <= total,
        "{differ} of {total} pixels differ from their mirror image"
    );
}

#[test]
fn gradient_image_draws_arrows_and_png_round_trips() {
    let (s, phi, goal) = symmetric_scene();
    let cost = Array3::from_elem(s.grid.dir_shape(), 1.0f32);
    let grad = gradient(phi.view(), cost.view(), 1.0);
    let opts = ImageOptions::default();
    let img = gradient_image(&s, phi.view(), &grad, goal.view(), "arrows", &opts);
    let l = Layout::new(11, 21, 3, &opts);
    let ink = (l.map_y..l.map_y + l.map_h)
        .flat_map(|y| (l.map_x..l.map_x + l.map_w).map(move |x| (x, y)))
        .filter(|&(x, y)| px(&img, x, y) == [20, 20, 20])
        .count();
    assert!(ink > 500, "arrows drawn ({ink} ink pixels)");

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sub/potential.png");
    potential_png(&path, &s, phi.view(), goal.view(), "sym", &opts).unwrap();
    let back = image::open(&path).unwrap().to_rgba8();
    assert_eq!(back, potential_image(&s, phi.view(), goal.view(), "sym", &opts));
}

/// The map image of `maps/NAME.json` with its walkers spawned from seed 0, and its layout.
fn map_of(name: &str) -> (Scene, crowdfield::agents::Agents, RgbaImage, Layout) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("maps")
        .join(name);
    let scene = crowdfield::map::load(path).unwrap();
    let agents = crowdfield::sim::spawn::spawn_agents(&scene, 0).unwrap();
    let (img, layout) = crowdfield::export::map_image_with(&scene, &agents, &ImageOptions::default());
    (scene, agents, img, layout)
}

/// The pixels of the map area inside the cells of `area`.
fn pixels_in(img: &RgbaImage, layout: &Layout, area: ndarray::ArrayView2<bool>) -> Vec<[u8; 3]> {
    let mut out = Vec::new();
    for py in 0..layout.map_h {
        for px_ in 0..layout.map_w {
            if area[layout.cell(px_, py)] {
                out.push(px(img, layout.map_x + px_, layout.map_y + py));
            }
        }
    }
    out
}

#[test]
fn the_map_image_shows_the_goals_the_spawn_areas_and_every_person() {
    use crowdfield::export::{goal_fill, spawn_fill};
    for name in ["bottleneck.json", "four_exits.json", "hall.json"] {
        let (scene, agents, img, layout) = map_of(name);
        assert!(!agents.is_empty(), "{name}");
        for group in &scene.groups {
            for goal in &group.goals {
                let inside = pixels_in(&img, &layout, goal.mask.to_dense().view());
                let filled = inside.iter().filter(|&&p| p == goal_fill()).count();
                let outlined = inside.iter().filter(|&&p| p == GOAL).count();
                assert!(
                    filled > 0 && outlined > 0,
                    "{name}: goal {:?}: {filled} filled and {outlined} outline pixels",
                    goal.name
                );
            }
            for spawn in &group.spawns {
                let inside = pixels_in(&img, &layout, spawn.area.mask.to_dense().view());
                let tinted = inside.iter().filter(|&&p| p == spawn_fill(group.color)).count();
                let people = inside.iter().filter(|&&p| p == group.color).count();
                assert!(
                    tinted > 0 && people > inside.len() / 20,
                    "{name}: group {:?}: {tinted} tinted and {people} people pixels of {}",
                    group.name,
                    inside.len()
                );
            }
        }
        // Every person is a dot of its group's colour where it spawned.
        let hit = (0..agents.len())
            .filter(|&i| {
                let (x, y) = layout.map_point(agents.x[i] as f64, agents.y[i] as f64, scene.grid.cell_size);
                let color = scene.groups[agents.group[i] as usize].color;
                px(&img, layout.map_x + x as u32, layout.map_y + y as u32) == color
            })
            .count();
        assert!(
            hit * 10 >= agents.len() * 9,
            "{name}: {hit} of {} people seen",
            agents.len()
        );
        // Obstacles are drawn as obstacles.
        if let Some(((r, c), _)) = scene.obstacle.indexed_iter().find(|(_, o)| **o) {
            let s = layout.scale;
            let (x, y) = (c as u32 * s + s / 2, (layout.rows - 1 - r) as u32 * s + s / 2);
            assert_eq!(px(&img, layout.map_x + x, layout.map_y + y), OBSTACLE, "{name}");
        }
    }
}
