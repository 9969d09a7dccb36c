//! `study.html`: one self-contained page a planner can hand on: the scenarios side by side
//! (the worst highlighted), the arrival curves of every scenario with their spread over the
//! seeds, per-exit use and flow, a small plan of each scenario with its blocked exits marked,
//! and links to each run's report.

use super::{RunResult, Scenario, Study, Summary};
use crate::error::Result;
use crate::export::html::{base64, escape, file_href};
use crate::export::render::ImageOptions;
use crate::export::{map_image_with, png_bytes};
use crate::io::write_bytes_atomic;
use crate::run::draw::{PlotSeries, XyPlot, xy_plot};
use std::fmt::Write as _;
use std::path::Path;

/// The study's page.
pub const STUDY_PAGE: &str = "study.html";

/// The colour a blocked exit is marked in on a scenario's plan.
const BLOCKED: [u8; 3] = [214, 39, 40];

/// Colours of the scenarios' curves, in order (repeating).
const SERIES: [[u8; 3]; 6] = [
    [31, 119, 180],
    [214, 39, 40],
    [44, 160, 44],
    [148, 103, 189],
    [255, 127, 14],
    [23, 190, 207],
];

/// A page style of its own: the report's look, with a highlighted row.
const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:1.5em auto;max-width:1200px;color:#222;padding:0 1em}\
table{border-collapse:collapse;margin:0.5em 0}th,td{border:1px solid #ccc;padding:0.25em 0.5em;text-align:left}\
td.n{text-align:right;font-variant-numeric:tabular-nums}tr.worst td{background:#fde2e1;font-weight:600}\
img{max-width:100%;height:auto}.plans{display:flex;flex-wrap:wrap;gap:1em}.plans figure{margin:0;max-width:360px}\
.warn{background:#fff4ce;border:1px solid #e0c060;padding:0.5em}";

fn secs(v: Option<f64>) -> String {
    v.map_or_else(|| "–".to_string(), |v| format!("{v:.1}"))
}

fn stat(s: Option<&Summary>, f: impl Fn(&Summary) -> f64) -> String {
    secs(s.map(f))
}

/// The scenario whose 95th-percentile evacuation time is the longest (a scenario with runs
/// cut short by the time limit counts as longer than any complete one).
pub fn worst_scenario(study: &Study) -> Option<usize> {
    study
        .scenarios
        .iter()
        .enumerate()
        .filter(|(_, s)| s.runs > 0)
        .max_by(|(_, a), (_, b)| {
            let key = |s: &super::ScenarioStats| {
                if s.complete_runs < s.runs {
                    f64::INFINITY
                } else {
                    s.evacuation_time.map_or(f64::INFINITY, |t| t.p95)
                }
            };
            key(a).total_cmp(&key(b))
        })
        .map(|(i, _)| i)
}

/// Persons out at time `t` on an arrival curve.
fn out_at(curve: &[(f64, usize)], t: f64) -> usize {
    curve
        .iter()
        .take_while(|(time, _)| *time <= t)
        .last()
        .map_or(0, |p| p.1)
}

/// Writes `out/study.html` for `study`, whose runs gave `results` (their folders under `out`;
/// maps' rasters under `base_dir`).
///
/// # Errors
/// Write errors; the scenario plans' map errors.
pub fn write_study_page(
    out: &Path,
    study: &Study,
    scenarios: &[Scenario],
    base_dir: &Path,
    results: &[RunResult],
) -> Result<()> {
    let page = study_page(study, scenarios, base_dir, results)?;
    write_bytes_atomic(&out.join(STUDY_PAGE), page.as_bytes())
}

/// The page's HTML.
fn study_page(
    study: &Study,
    scenarios: &[Scenario],
    base_dir: &Path,
    results: &[RunResult],
) -> Result<String> {
    let mut h = String::new();
    let title = format!("{}: evacuation study", study.map);
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{t}</title><style>{STYLE}</style></head><body>\n<h1>{t}</h1>\n\
         <p>{} scenarios, {} seeds each (seeds {}), time limit {} s. Evacuation time is the RSET the model gives: \
         pre-movement (the 99th percentile of the persons' pre-movement times) and movement (the rest). \
         Statistics over the runs that completed; standard deviation over n − 1.</p>\n",
        study.scenarios.len(),
        study.seeds.len(),
        seed_range(&study.seeds),
        study.max_time,
        t = escape(&title)
    );
    let worst = worst_scenario(study);
    h.push_str(
        "<h2>Scenarios</h2><table id=\"scenarios\"><thead><tr><th>scenario</th><th>runs (complete)</th>\
         <th>mean, s</th><th>sd, s</th><th>min, s</th><th>p50, s</th><th>p95, s</th><th>max, s</th>\
         <th>pre-movement p95, s</th><th>movement mean, s</th><th>converged after (seeds)</th><th>ASET, s</th><th>margin, s</th></tr></thead><tbody>\n",
    );
    for (i, s) in study.scenarios.iter().enumerate() {
        let class = if Some(i) == worst { " class=\"worst\"" } else { "" };
        if let Some(why) = &s.cannot_run {
            let _ = writeln!(
                h,
                "<tr{class}><td>{}</td><td colspan=\"12\">not run: {}</td></tr>",
                escape(&s.name),
                escape(why)
            );
            continue;
        }
        let t = s.evacuation_time.as_ref();
        let _ = writeln!(
            h,
            "<tr{class}><td>{}</td><td class=\"n\">{} ({})</td><td class=\"n\">{}</td><td class=\"n\">{}</td>\
             <td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>\
             <td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
            escape(&s.name),
            s.runs,
            s.complete_runs,
            stat(t, |x| x.mean),
            stat(t, |x| x.sd),
            stat(t, |x| x.min),
            stat(t, |x| x.p50),
            stat(t, |x| x.p95),
            stat(t, |x| x.max),
            stat(s.premovement.as_ref(), |x| x.p95),
            stat(s.movement.as_ref(), |x| x.mean),
            s.converged_after
                .map_or_else(|| "not yet".to_string(), |k| k.to_string()),
            secs(s.aset),
            secs(s.margin),
        );
    }
    h.push_str("</tbody></table>\n");
    let incomplete: Vec<&str> = study
        .scenarios
        .iter()
        .filter(|s| s.complete_runs < s.runs)
        .map(|s| s.name.as_str())
        .collect();
    if !incomplete.is_empty() {
        let _ = writeln!(
            h,
            "<div class=\"warn\">Runs cut short by the time limit in: {}. Their evacuation times are \
             longer than {} s and are not in the statistics.</div>",
            escape(&incomplete.join(", ")),
            study.max_time
        );
    }

    // Arrival curves: the median over the seeds, and the slowest seed's, per scenario.
    let t_end = study
        .scenarios
        .iter()
        .filter_map(|s| s.evacuation_time.map(|t| t.max))
        .fold(0.0f64, f64::max)
        .max(1.0);
    let mut series = Vec::new();
    let mut y_max = 1.0f64;
    for (i, s) in study.scenarios.iter().enumerate().filter(|(_, s)| s.runs > 0) {
        let curves: Vec<&Vec<(f64, usize)>> = results
            .iter()
            .filter(|r| r.scenario == s.name)
            .map(|r| &r.arrival_curve)
            .collect();
        let color = SERIES[i % SERIES.len()];
        let samples = 200;
        let (mut median, mut low) = (Vec::new(), Vec::new());
        for k in 0..=samples {
            let t = t_end * k as f64 / samples as f64;
            let mut counts: Vec<f64> = curves.iter().map(|c| out_at(c, t) as f64).collect();
            counts.sort_by(f64::total_cmp);
            y_max = y_max.max(counts.last().copied().unwrap_or(0.0));
            median.push((t, super::stats::percentile(&counts, 50.0)));
            low.push((t, counts[0]));
        }
        series.push(PlotSeries::Line {
            name: format!("{}: median", s.name),
            color,
            points: median,
        });
        series.push(PlotSeries::Line {
            name: format!("{}: slowest seed", s.name),
            color: crate::export::render::washed(color, 0.5),
            points: low,
        });
    }
    let plot = xy_plot(&XyPlot {
        title: format!("{}: persons out over time, per scenario", study.map),
        x_name: "time, s".into(),
        y_name: "persons out".into(),
        x_max: t_end,
        y_max: y_max * 1.05,
        series,
    });
    let _ = writeln!(
        h,
        "<h2>Arrival curves</h2><p>Per scenario the median over the seeds of the persons out at each time, \
         and the slowest seed's curve (fewest out at each time).</p>\
         <img id=\"arrivals\" alt=\"arrival curves\" src=\"data:image/png;base64,{}\">",
        base64(&png_bytes(&plot, "arrival curves")?)
    );

    // Exits.
    h.push_str(
        "<h2>Exits</h2><table id=\"exits\"><thead><tr><th>scenario</th><th>exit</th><th>persons out, mean</th>\
         <th>min–max</th><th>last out, s, mean</th><th>last out, s, p95</th><th>flow, persons/s, mean</th></tr></thead><tbody>\n",
    );
    for s in &study.scenarios {
        for e in &s.exits {
            let a = e.arrivals.as_ref();
            let _ = writeln!(
                h,
                "<tr><td>{}</td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>\
                 <td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
                escape(&s.name),
                escape(&e.name),
                a.map_or_else(|| "–".to_string(), |a| format!("{:.1}", a.mean)),
                a.map_or_else(|| "–".to_string(), |a| format!("{:.0}–{:.0}", a.min, a.max)),
                stat(e.last_arrival.as_ref(), |x| x.mean),
                stat(e.last_arrival.as_ref(), |x| x.p95),
                e.flow
                    .as_ref()
                    .map_or_else(|| "–".to_string(), |f| format!("{:.2}", f.mean)),
            );
        }
    }
    h.push_str("</tbody></table>\n");

    // Plans.
    h.push_str("<h2>Plans</h2><div class=\"plans\">\n");
    let drawn = match scenarios.first() {
        Some(d) => Some(crate::map::compile(&d.map, base_dir, &d.name)?),
        None => None,
    };
    for s in scenarios {
        let img = scenario_plan(
            s,
            drawn.as_ref(),
            base_dir,
            study.seeds.first().copied().unwrap_or(1),
        )?;
        let _ = writeln!(
            h,
            "<figure><img alt=\"plan of {n}\" src=\"data:image/png;base64,{}\"><figcaption>{n}{}</figcaption></figure>",
            base64(&png_bytes(&img, &s.name)?),
            if s.blocked.is_empty() {
                ""
            } else {
                " (blocked exits in red)"
            },
            n = escape(&s.name)
        );
    }
    h.push_str("</div>\n");

    // Runs.
    h.push_str("<h2>Runs</h2><table id=\"runs\"><thead><tr><th>scenario</th><th>seed</th><th>evacuation time, s</th><th>report</th></tr></thead><tbody>\n");
    for s in &study.scenarios {
        for r in &s.seeds {
            let href = file_href(&Path::new(&r.folder).join(crate::run::planner::REPORT_PAGE));
            let _ = writeln!(
                h,
                "<tr><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td><a href=\"{}\">report</a></td></tr>",
                escape(&s.name),
                r.seed,
                r.evacuation_time
                    .map_or_else(|| "not complete".to_string(), |t| format!("{t:.1}")),
                escape(&href)
            );
        }
    }
    h.push_str("</tbody></table>\n");
    h.push_str(crate::export::html::IMAGE_CHECK_SCRIPT);
    h.push_str("</body></html>\n");
    Ok(h)
}

/// `1–20` for consecutive seeds, else the list.
fn seed_range(seeds: &[u64]) -> String {
    match (seeds.first(), seeds.last()) {
        (Some(a), Some(b)) if (b - a) as usize + 1 == seeds.len() && seeds.len() > 1 => format!("{a}–{b}"),
        _ => seeds.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(", "),
    }
}

/// The plan of `scenario` (its walkers as seed `seed` places them), with the exits it blocks
/// marked on `drawn`, the map as drawn (compiled once for every plan). A scenario that cannot
/// run (a group without an exit) is shown on the map as drawn.
fn scenario_plan(
    scenario: &Scenario,
    drawn: Option<&crate::scene::Scene>,
    base_dir: &Path,
    seed: u64,
) -> Result<image::RgbaImage> {
    let scene = match (&scenario.cannot_run, drawn) {
        (Some(_), Some(d)) => d.clone(),
        _ => crate::map::compile(&scenario.map, base_dir, &scenario.name)?,
    };
    let opts = ImageOptions {
        min_map_width: 320,
        max_map_height: 320,
    };
    let agents = crate::sim::spawn::spawn_agents(&scene, seed).unwrap_or_default();
    let (mut img, layout) = map_image_with(&scene, &agents, &opts);
    if let Some(drawn) = drawn {
        for group in &drawn.groups {
            for goal in &group.goals {
                if !scenario.blocked.contains(&goal.name) {
                    continue;
                }
                for (r, c) in goal.mask.cells() {
                    let s = layout.scale as i64;
                    let (px0, py0) = (c as i64 * s, (layout.rows - 1 - r) as i64 * s);
                    for dy in 0..s {
                        for dx in 0..s {
                            layout.blend_map(&mut img, px0 + dx, py0 + dy, BLOCKED, 0.85);
                        }
                    }
                }
            }
        }
    }
    Ok(img)
}
