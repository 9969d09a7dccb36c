//! `crowdfield image`: any 2-D `.npy` array (a phi from `crowdfield eikonal`, a speed array, a
//! potential from `solve`) drawn as the map images are: colour bar, isolines, scale bar.

use anyhow::{Context, bail, ensure};
use crowdfield::export::{ArraySpec, Colormap, ImageOptions, array_image, save_png};
use crowdfield::io::read_npy_f64;
use crowdfield::names::Named;
use std::path::PathBuf;
use std::process::ExitCode;

/// The largest side drawn, cells: beyond it the image (and its isoline buffer) would take
/// gigabytes.
const MAX_SIDE: usize = 4096;

/// Arguments of `crowdfield image`, as typed.
#[derive(clap::Args)]
pub struct Args {
    /// The array (.npy, 2-D, any float, integer or bool dtype; row index = y, row 0 at the
    /// bottom of the image).
    #[arg(value_name = "ARRAY.npy")]
    input: PathBuf,
    /// Where to write the image (PNG).
    #[arg(long, value_name = "IMAGE.png")]
    out: PathBuf,
    /// Edge length of one cell, metres (for the scale bar).
    #[arg(long, value_name = "H", default_value_t = 1.0, allow_negative_numbers = true)]
    cell_size: f64,
    /// Title. [default: the array's file name]
    #[arg(long)]
    title: Option<String>,
    /// Unit written above the colour bar (e.g. s, m/s).
    #[arg(long, default_value = "")]
    unit: String,
    /// Colour map.
    #[arg(long, value_parser = super::choice(colormap_help), default_value = Colormap::Viridis.name())]
    colormap: Colormap,
    /// Values at the bottom and top of the colour bar. [default: the finite range of the array]
    #[arg(long, num_args = 2, value_names = ["LO", "HI"], allow_hyphen_values = true)]
    range: Option<Vec<f64>>,
    /// Isolines: auto (about ten intervals over the range), off, or the interval in the
    /// array's unit.
    #[arg(
        long,
        default_value = "auto",
        value_name = "auto|off|STEP",
        allow_hyphen_values = true
    )]
    isolines: String,
    /// Print nothing on stderr.
    #[arg(long)]
    quiet: bool,
}

/// `--colormap`'s help on each [`Colormap`].
fn colormap_help(map: Colormap) -> &'static str {
    match map {
        Colormap::Viridis => "Dark blue to yellow (perceptually uniform); potentials",
        Colormap::Magma => "Black to light yellow through red (perceptually uniform)",
        Colormap::Inferno => "Black to yellow through red (perceptually uniform); costs",
        Colormap::Cividis => "Blue to yellow, colour-vision-deficiency friendly; speeds",
        Colormap::YellowOrangeRed => "Yellow-orange-red (ColorBrewer); densities",
    }
}

/// `--isolines` as [`ArraySpec::isolines`] wants it.
fn parse_isolines(text: &str) -> anyhow::Result<Option<Option<f64>>> {
    match text {
        "auto" => Ok(Some(None)),
        "off" => Ok(None),
        _ => {
            let step: f64 = text
                .parse()
                .ok()
                .filter(|s: &f64| s.is_finite() && *s > 0.0)
                .with_context(|| format!("--isolines {text}: expected auto, off or a positive interval"))?;
            Ok(Some(Some(step)))
        }
    }
}

/// Runs `crowdfield image`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    ensure!(
        args.cell_size.is_finite() && args.cell_size > 0.0,
        "--cell-size {}: expected a positive number of metres",
        args.cell_size
    );
    let isolines = parse_isolines(&args.isolines)?;
    let range = match args.range.as_deref() {
        None => None,
        Some(&[lo, hi]) => {
            ensure!(
                lo.is_finite() && hi.is_finite() && lo < hi,
                "--range {lo} {hi}: expected two finite numbers, the first below the second"
            );
            // The colour map runs in f32: a wider span would overflow to infinity.
            ensure!(
                ((hi - lo) as f32).is_finite(),
                "--range {lo:e} {hi:e}: expected a span within {:e} (the colour map's f32 range)",
                f32::MAX
            );
            Some((lo, hi))
        }
        Some(other) => bail!("--range: expected two numbers, got {}", other.len()),
    };
    // Refused before the array is read, as every output path is.
    crowdfield::io::check_output_file(&args.out).map_err(|e| anyhow::anyhow!("--out {e}"))?;
    let values = read_npy_f64(&args.input)?;
    let (rows, cols) = values.dim();
    ensure!(
        rows > 0 && cols > 0,
        "{}: the array is empty ({rows} x {cols})",
        args.input.display()
    );
    ensure!(
        rows <= MAX_SIDE && cols <= MAX_SIDE,
        "{}: {rows} x {cols} cells is too large to draw: expected at most {MAX_SIDE} per side \
         (draw a slice or a downsampled copy, e.g. a[::2, ::2] in numpy)",
        args.input.display()
    );
    // The image is drawn in f32: a finite value beyond it would be drawn hatched as "not
    // finite" while the count below says 0.
    if let Some(((r, c), v)) = values
        .indexed_iter()
        .find(|(_, v)| v.is_finite() && v.abs() > f32::MAX as f64)
    {
        bail!(
            "{}: value {v:e} at row {r}, column {c} is beyond the image's f32 range (±{:e}): rescale the \
             array (e.g. to other units) before drawing it",
            args.input.display(),
            f32::MAX
        );
    }
    let title = args.title.unwrap_or_else(|| {
        args.input.file_name().map_or_else(
            || args.input.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        )
    });
    let spec = ArraySpec {
        title: &title,
        unit: &args.unit,
        colormap: args.colormap,
        range,
        isolines,
        cell_size: args.cell_size,
    };
    let img = array_image(values.view(), &spec, &ImageOptions::default());
    save_png(&args.out, &img)?;
    if !args.quiet {
        let not_finite = values.iter().filter(|v| !v.is_finite()).count();
        eprintln!(
            "image: {} ({rows} x {cols}, {not_finite} not finite) -> {} ({} x {} px)",
            args.input.display(),
            args.out.display(),
            img.width(),
            img.height()
        );
    }
    Ok(ExitCode::SUCCESS)
}
