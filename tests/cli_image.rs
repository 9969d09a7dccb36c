//! `crowdfield image` end to end: an array drawn the right way up with its colours, hatching
//! and isolines, and every bad input refused with a message naming it.

use crowdfield::export::render::{Layout, hatch};
use crowdfield::export::{Colormap, ImageOptions};
use crowdfield::io::write_npy;
use ndarray::{Array1, Array2};
use ndarray_npy::WriteNpyExt;
use std::path::Path;
use std::process::{Command, Output};

fn crowdfield(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_crowdfield"))
        .args(args)
        .output()
        .unwrap()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// A 30 x 40 ramp (value = column), with the bottom-left 5 x 5 cells NaN.
fn ramp() -> Array2<f64> {
    Array2::from_shape_fn(
        (30, 40),
        |(r, c)| if r < 5 && c < 5 { f64::NAN } else { c as f64 },
    )
}

fn pixel(img: &image::RgbaImage, l: &Layout, row: usize, col: usize) -> [u8; 3] {
    // The centre of cell (row, col): row 0 at the bottom of the map.
    let x = l.map_x + col as u32 * l.scale + l.scale / 2;
    let y = l.map_y + (l.rows - 1 - row) as u32 * l.scale + l.scale / 2;
    let p = img.get_pixel(x, y).0;
    [p[0], p[1], p[2]]
}

#[test]
fn an_array_is_drawn_row_zero_at_the_bottom_with_its_colours_and_hatching() {
    let dir = tempfile::tempdir().unwrap();
    let (input, out) = (dir.path().join("ramp.npy"), dir.path().join("ramp.png"));
    write_npy(&input, ramp().view()).unwrap();
    let o = crowdfield(&[
        "image",
        s(&input),
        "--out",
        s(&out),
        "--isolines",
        "off",
        "--colormap",
        "cividis",
        "--unit",
        "m",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("30 x 40") && err.contains("25 not finite"), "{err}");
    let img = image::open(&out).unwrap().to_rgba8();
    let l = Layout::new(30, 40, 1, &ImageOptions::default());
    assert_eq!((img.width(), img.height()), (l.width, l.height));
    // The range is the finite one, 0..39: the last column is the top colour, the first open
    // cells of column 0 the bottom one.
    assert_eq!(pixel(&img, &l, 20, 39), Colormap::Cividis.rgb(1.0));
    assert_eq!(pixel(&img, &l, 20, 0), Colormap::Cividis.rgb(0.0));
    // NaN cells are hatched at the bottom left, not the top left.
    let hatched = |row: usize, col: usize| {
        let x0 = l.map_x + col as u32 * l.scale;
        let y0 = l.map_y + (l.rows - 1 - row) as u32 * l.scale;
        (0..l.scale).all(|d| {
            let p = img.get_pixel(x0 + d, y0 + d).0;
            [p[0], p[1], p[2]] == hatch(x0 + d, y0 + d)
        })
    };
    assert!(hatched(0, 0) && hatched(4, 4));
    assert!(!hatched(29, 0) && !hatched(4, 5));
}

#[test]
fn isolines_are_drawn_unless_turned_off_and_a_range_clamps_the_colours() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("ramp.npy");
    write_npy(&input, ramp().view()).unwrap();
    let draw = |name: &str, extra: &[&str]| {
        let out = dir.path().join(name);
        let mut args = vec!["image", s(&input), "--out", s(&out), "--quiet"];
        args.extend_from_slice(extra);
        let o = crowdfield(&args);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert!(o.stderr.is_empty(), "--quiet");
        image::open(&out).unwrap().to_rgba8()
    };
    let l = Layout::new(30, 40, 1, &ImageOptions::default());
    let off = draw("off.png", &["--isolines", "off"]);
    let every_10 = draw("ten.png", &["--isolines", "10"]);
    // Lines every 10 along a ramp of one per column: near columns 10, 20 and 30 only.
    let row_y = l.map_y + 10 * l.scale;
    let changed: Vec<u32> = (0..l.map_w)
        .filter(|&px| off.get_pixel(l.map_x + px, row_y) != every_10.get_pixel(l.map_x + px, row_y))
        .map(|px| px / l.scale)
        .collect();
    assert!(!changed.is_empty());
    assert!(
        changed.iter().all(|c| [9, 10, 19, 20, 29, 30].contains(c)),
        "isoline pixels in columns {changed:?}"
    );
    // --range 10 20: everything from column 20 on is the top colour.
    let ranged = draw("ranged.png", &["--isolines", "off", "--range", "10", "20"]);
    assert_eq!(pixel(&ranged, &l, 20, 25), Colormap::Viridis.rgb(1.0));
    assert_eq!(pixel(&ranged, &l, 20, 5), Colormap::Viridis.rgb(0.0));
}

#[test]
fn bad_input_is_refused_with_a_message_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("ramp.npy");
    write_npy(&input, ramp().view()).unwrap();
    let one_d = dir.path().join("line.npy");
    Array1::from_elem(5, 1.0f64)
        .write_npy(std::fs::File::create(&one_d).unwrap())
        .unwrap();
    let huge = dir.path().join("huge.npy");
    let mut big = ramp();
    big[(1, 2)] = -1e308;
    write_npy(&huge, big.view()).unwrap();
    let out = dir.path().join("x.png");
    let missing_dir = dir.path().join("no/such/dir/x.png");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["image", "no/such.npy", "--out", s(&out)], "no/such.npy"),
        (vec!["image", s(&one_d), "--out", s(&out)], "2-D"),
        (
            vec!["image", s(&input), "--out", s(&missing_dir)],
            "does not exist",
        ),
        (
            vec!["image", s(&input), "--out", s(&out), "--range", "5", "1"],
            "--range 5 1",
        ),
        // Read as values (not as an unknown flag `-i`), then refused as not finite.
        (
            vec!["image", s(&input), "--out", s(&out), "--range", "-inf", "inf"],
            "--range -inf inf: expected two finite numbers",
        ),
        (
            vec!["image", s(&input), "--out", s(dir.path()), "--range", "0", "1"],
            "is a folder",
        ),
        (
            vec!["image", s(&input), "--out", s(&out), "--isolines", "-2"],
            "--isolines -2",
        ),
        (
            vec!["image", s(&input), "--out", s(&out), "--cell-size", "0"],
            "--cell-size 0",
        ),
        // Beyond f32, where the image is drawn: such cells were hatched as "not finite" while
        // the count said 0, and such a range had no colours.
        (
            vec!["image", s(&huge), "--out", s(&out)],
            "value -1e308 at row 1, column 2 is beyond the image's f32 range",
        ),
        (
            vec!["image", s(&input), "--out", s(&out), "--range", "-1e308", "1e308"],
            "--range -1e308 1e308: expected a span within",
        ),
    ];
    for (args, expected) in cases {
        let o = crowdfield(&args);
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(expected), "{args:?}: {err}");
        assert!(!out.exists(), "nothing written for {args:?}");
    }
}
