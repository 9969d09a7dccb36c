//! `verify`'s output folder: `verify.json`, `verify.md` (the table and the plots), the plots
//! as PNG and every map the suite ran. The folder is an [`OwnedDir`]: a later run replaces
//! only the files an earlier `verify` wrote, and only once it has run the whole suite and
//! written every new file.

use super::criteria::{single_file_speed, weidmann_speed};
use super::{GeneratedMap, Status, VerifyReport};
use crate::error::{Error, Result};
use crate::export::png_bytes;
use crate::ownership::OwnedDir;
use crate::run::draw::{PlotSeries, XyPlot, xy_plot};
use std::fmt::Write as _;
use std::path::Path;

/// The report as JSON.
pub const JSON_FILE: &str = "verify.json";
/// The report as Markdown.
pub const MARKDOWN_FILE: &str = "verify.md";
/// RiMEA 4 and 16: measured speeds over the reference diagrams.
pub const FUNDAMENTAL_DIAGRAM_PNG: &str = "fundamental_diagram.png";
/// The bottleneck series over the experiments' band.
pub const BOTTLENECK_PNG: &str = "bottleneck_flow.png";
/// RiMEA 9's arrival curves.
pub const ARRIVALS_PNG: &str = "rimea9_arrivals.png";

/// Colour of the reference curves and bands.
const REFERENCE: [u8; 3] = [90, 90, 90];
/// Colour of the measured points.
const MEASURED: [u8; 3] = [200, 40, 40];
/// Colour of the single-file points.
const MEASURED_1D: [u8; 3] = [40, 90, 200];

/// Opens the output folder `dir` (created when missing) before the suite runs, so a folder
/// that cannot be written is refused at once. Without `force`, a folder holding files
/// `verify` did not write is refused (see [`OwnedDir::open`]). The files an earlier `verify`
/// wrote stay in place: [`write`] replaces them once the new run is complete, and a run that
/// fails or is killed before then leaves them whole.
///
/// # Errors
/// The folder's refusal; a folder that cannot be read or written.
pub fn open(dir: &Path, force: bool) -> Result<OwnedDir> {
    OwnedDir::open_replacing(dir, "crowdfield verify", force)
}

/// The files of a finished suite, each a name in the folder and its bytes: every map the
/// suite ran, the plots, `verify.json` and `verify.md`.
///
/// # Errors
/// A report or plot that cannot be encoded.
pub fn files(report: &VerifyReport, maps: &[GeneratedMap]) -> Result<Vec<(String, Vec<u8>)>> {
    let mut files: Vec<(String, Vec<u8>)> = maps
        .iter()
        .map(|m| (m.file.clone(), m.map.to_json().into_bytes()))
        .collect();
    let plots = [
        (FUNDAMENTAL_DIAGRAM_PNG, fundamental_diagram_plot(report)),
        (BOTTLENECK_PNG, bottleneck_plot(report)),
        (ARRIVALS_PNG, arrivals_plot(report)),
    ];
    for (name, plot) in &plots {
        files.push((name.to_string(), png_bytes(&xy_plot(plot), name)?));
    }
    let mut json = serde_json::to_string_pretty(report)
        .map_err(|e| Error::invalid(JSON_FILE, "(root)", e.to_string()))?;
    json.push('\n');
    files.push((JSON_FILE.to_string(), json.into_bytes()));
    files.push((MARKDOWN_FILE.to_string(), markdown(report).into_bytes()));
    Ok(files)
}

/// Writes `report` and `maps` into the folder `out` ([`open`]) as one set
/// ([`OwnedDir::write_all`]: every file complete beside its target before any is renamed over
/// an earlier run's), then removes the earlier run's files this one did not write again.
///
/// # Errors
/// A file that cannot be written; the earlier files are then left as they were.
pub fn write(out: &mut OwnedDir, report: &VerifyReport, maps: &[GeneratedMap]) -> Result<()> {
    out.write_all(&files(report, maps)?)?;
    out.finish()
}

/// The table of results as Markdown rows (also what the command prints).
pub fn table(report: &VerifyReport) -> String {
    let mut s =
        String::from("| test | checks | criterion (source) | measured | result |\n|---|---|---|---|---|\n");
    for t in &report.tests {
        let _ = writeln!(
            s,
            "| {} | {} | {} ({}) | {} | {} |",
            t.title,
            t.checks,
            t.criterion,
            t.source,
            t.measured,
            match t.status {
                Status::Pass => "pass",
                Status::Fail => "**FAIL**",
                Status::NotApplicable => "not applicable",
            }
        );
    }
    s
}

/// `verify.md`: what was run, the table and the plots.
pub fn markdown(report: &VerifyReport) -> String {
    let mut s = String::from("# crowdfield verify\n\n");
    let failed = report.tests.iter().filter(|t| t.status == Status::Fail).count();
    let passed = report.tests.iter().filter(|t| t.status == Status::Pass).count();
    let params = match &report.params {
        Some(p) => format!(
            "`{}`",
            serde_json::to_string(p).unwrap_or_else(|_| "(unprintable)".to_string())
        ),
        None => "none (the model's defaults)".to_string(),
    };
    let _ = writeln!(
        s,
        "Suite: {}, {} per test; model: `{}`; `params`: {params}; local layer: {}.\n\n{passed} passed, {failed} failed, {} not applicable.\n",
        if report.quick { "quick" } else { "full" },
        if report.seeds == 1 {
            "1 seed".to_string()
        } else {
            format!("{} seeds", report.seeds)
        },
        report.model,
        report.local,
        report.tests.len() - passed - failed
    );
    s.push_str(&table(report));
    s.push_str(
        "\nEvery map the suite ran is in this folder (`rimea-*.json`, `bottleneck-*.json`): open it \
         in the editor or run it with `crowdfield simulate`.\n\n## Plots\n\n",
    );
    let _ = writeln!(s, "![fundamental diagram]({FUNDAMENTAL_DIAGRAM_PNG})\n");
    let _ = writeln!(s, "![flow against door width]({BOTTLENECK_PNG})\n");
    let _ = writeln!(s, "![RiMEA 9 arrival curves]({ARRIVALS_PNG})");
    s
}

/// RiMEA 4 over Weidmann's curve, RiMEA 16 over the single-file curve.
fn fundamental_diagram_plot(report: &VerifyReport) -> XyPlot {
    let curve = |f: fn(f64) -> f64, to: f64| {
        (0..=100)
            .map(|k| 0.25 + (to - 0.25) * k as f64 / 100.0)
            .map(|r| (r, f(r)))
            .collect()
    };
    XyPlot {
        title: "Speed against density: measured and published".to_string(),
        x_name: "density, persons/m² (single file: persons/m)".to_string(),
        y_name: "speed, m/s".to_string(),
        x_max: 6.0,
        y_max: 1.6,
        series: vec![
            PlotSeries::Line {
                name: "Weidmann 1993".to_string(),
                color: REFERENCE,
                points: curve(weidmann_speed, 5.4),
            },
            PlotSeries::Line {
                name: "1-D, Seyfried 2005".to_string(),
                color: [120, 150, 220],
                points: curve(single_file_speed, 3.0),
            },
            PlotSeries::Points {
                name: "RiMEA 4, measured".to_string(),
                color: MEASURED,
                points: report.fundamental_diagram.iter().map(|p| (p.x, p.y)).collect(),
            },
            PlotSeries::Points {
                name: "RiMEA 16, measured".to_string(),
                color: MEASURED_1D,
                points: report.single_file.iter().map(|p| (p.x, p.y)).collect(),
            },
        ],
    }
}

/// Specific flow against door width over the experiments' band.
fn bottleneck_plot(report: &VerifyReport) -> XyPlot {
    XyPlot {
        title: "Specific flow against door width".to_string(),
        x_name: "door width, m".to_string(),
        y_name: "specific flow, persons/(m·s)".to_string(),
        x_max: 3.0,
        y_max: report
            .bottleneck
            .iter()
            .map(|p| p.y)
            .fold(2.5, f64::max)
            .min(10.0),
        series: vec![
            PlotSeries::Band {
                name: "experiments 1.3–1.9".to_string(),
                color: REFERENCE,
                range: (1.3, 1.9),
            },
            PlotSeries::Points {
                name: "measured".to_string(),
                color: MEASURED,
                points: report.bottleneck.iter().map(|p| (p.x, p.y)).collect(),
            },
        ],
    }
}

/// RiMEA 9's arrival curves, four exits in one colour and two in another.
fn arrivals_plot(report: &VerifyReport) -> XyPlot {
    let t_max = report
        .arrival_curves
        .iter()
        .filter_map(|c| c.curve.last().map(|p| p.0))
        .fold(10.0, f64::max);
    let n_max = report
        .arrival_curves
        .iter()
        .filter_map(|c| c.curve.last().map(|p| p.1 as f64))
        .fold(1.0, f64::max);
    XyPlot {
        title: "RiMEA 9: persons out over time, four and two exits".to_string(),
        x_name: "time, s".to_string(),
        y_name: "persons out".to_string(),
        x_max: t_max,
        y_max: n_max,
        series: report
            .arrival_curves
            .iter()
            .map(|c| PlotSeries::Steps {
                name: c.label.clone(),
                color: if c.exits == 4 {
                    [40, 120, 40]
                } else {
                    [200, 120, 0]
                },
                points: c.curve.iter().map(|&(t, n)| (t, n as f64)).collect(),
            })
            .collect(),
    }
}
