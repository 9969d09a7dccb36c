//! `report.html`: one self-contained page per run (images embedded as `data:` URIs, no script
//! or style fetched from anywhere) that a planner hands on: warnings first, the map and its
//! parameters, the crowdfield version and the map's SHA-256, the inputs (the model and why it
//! ran, its parameters, each group's speeds, bodies, spawn counts and pre-movement times), the
//! figures of `report.json` as tables, the plots and the level-of-service and clear-time maps. [`index_page`] is a batch's
//! comparison of maps, sortable by a click on a column head (a few lines of inline script).

use crate::names::Named as _;
use crate::sim::Report;
use crate::sim::levels::LEVELS;
use std::fmt::Write as _;

/// Escapes text for HTML element content and attribute values.
pub fn escape(text: &str) -> String {
    let mut s = String::with_capacity(text.len());
    for ch in text.chars() {
        match ch {
            '&' => s.push_str("&amp;"),
            '<' => s.push_str("&lt;"),
            '>' => s.push_str("&gt;"),
            '"' => s.push_str("&quot;"),
            '\'' => s.push_str("&#39;"),
            _ => s.push(ch),
        }
    }
    s
}

/// The `href` of a link from a page to the file at `relative` (a path relative to the page's
/// folder): `./` and then each component's bytes percent-encoded (RFC 3986: letters, digits and
/// `-._~` stay, every other byte becomes `%XX`), joined by `/`. A file name never becomes a
/// scheme (`javascript:`), a fragment (`#`) or a query (`?`): the link always opens that file.
/// Every page that links to a file builds its links here.
pub fn file_href(relative: &std::path::Path) -> String {
    let mut href = String::from(".");
    for part in relative.components() {
        let std::path::Component::Normal(name) = part else {
            continue;
        };
        href.push('/');
        for &b in name.as_encoded_bytes() {
            if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
                href.push(b as char);
            } else {
                let _ = write!(href, "%{b:02X}");
            }
        }
    }
    href
}

/// SHA-256 of `bytes`, lower-case hex (the map's fingerprint on the page).
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Standard base64 (RFC 4648, with padding), for `data:` URIs.
pub fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut s = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let n = (b[0] as u32) << 16 | (b[1] as u32) << 8 | b[2] as u32;
        for k in 0..4 {
            if k <= chunk.len() {
                s.push(ALPHABET[(n >> (18 - 6 * k) & 63) as usize] as char);
            } else {
                s.push('=');
            }
        }
    }
    s
}

/// Everything the page shows besides the report itself.
#[derive(Clone, Debug, Default)]
pub struct PageInput<'a> {
    /// The map file as given on the command line.
    pub map_path: &'a str,
    /// SHA-256 of the map file's bytes, hex.
    pub map_sha256: &'a str,
    /// Grid: columns, rows, cell size (m).
    pub grid: (usize, usize, f64),
    /// Further parameters shown in the parameter table (name, value).
    pub parameters: Vec<(String, String)>,
    /// Images in page order: (heading, caption, PNG bytes).
    pub images: Vec<(String, String, Vec<u8>)>,
}

/// The page's style: readable on screen and on paper, no web fonts.
const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:1.5em auto;max-width:1100px;color:#222;padding:0 1em}\
h1{font-size:1.6em}h2{margin-top:1.6em;border-bottom:1px solid #ccc}\
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:.25em .6em;text-align:left}\
th{background:#f2f2f2}td.n{text-align:right;font-variant-numeric:tabular-nums}\
.warn{background:#fff3cd;border:2px solid #d39e00;padding:.6em 1em;margin:1em 0}\
.warn li{margin:.3em 0}.ok{background:#e8f5e9;border:1px solid #81c784;padding:.5em 1em}\
img{max-width:100%;height:auto;border:1px solid #ddd}figure{margin:1em 0}figcaption{color:#555;font-size:.9em}\
code{font-size:.95em}th.sort{cursor:pointer}";

/// Formats an optional number with `decimals`, "–" when absent.
fn opt(v: Option<f64>, decimals: usize) -> String {
    v.map_or_else(|| "–".to_string(), |v| format!("{v:.decimals$}"))
}

/// The warnings a page leads with: an incomplete run first, then the report's own.
pub fn page_warnings(report: &Report) -> Vec<String> {
    let mut warnings = Vec::new();
    let r = &report.total.remaining;
    let inside = r.total - r.no_goal;
    if inside > 0 {
        warnings.push(format!(
            "The evacuation did not complete: {inside} person(s) still inside when the run stopped at {:.1} s.",
            report.end_time
        ));
    }
    warnings.extend(report.warnings.iter().cloned());
    warnings
}

/// The worst level of service reached anywhere (`"A"` to `"F"`), from the report.
pub fn worst_level(report: &Report) -> String {
    report
        .level_of_service
        .iter()
        .rev()
        .find(|l| l.worst_area_m2 > 0.0)
        .map_or_else(|| LEVELS[0].to_string(), |l| l.level.clone())
}

/// The script by which a page checks its own images once loaded: a console error names any
/// that did not decode, and `data-images-loaded` on the body says how many did (the browser
/// tests read it).
pub const IMAGE_CHECK_SCRIPT: &str = "<script>window.addEventListener('load',function(){var im=document.images,n=0;\
for(var i=0;i<im.length;i++){if(im[i].complete&&im[i].naturalWidth>0){n++;}\
else{console.error('image did not load: '+im[i].alt);}}\
document.body.setAttribute('data-images-loaded',n+' of '+im.length);});</script>\n";

/// The report page of one run.
pub fn report_page(report: &Report, input: &PageInput) -> String {
    let mut h = String::new();
    let title = format!("{}: evacuation report", report.map);
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{}</title><style>{STYLE}</style></head><body>\n<h1>{}</h1>\n",
        escape(&title),
        escape(&title)
    );
    let warnings = page_warnings(report);
    if warnings.is_empty() {
        h.push_str("<p class=\"ok\" id=\"warnings\">No warnings.</p>\n");
    } else {
        h.push_str("<div class=\"warn\" id=\"warnings\"><strong>Warnings</strong><ul>");
        for w in &warnings {
            let _ = write!(h, "<li>{}</li>", escape(w));
        }
        h.push_str("</ul></div>\n");
    }

    // Headline figures.
    let t = &report.total;
    let _ = writeln!(
        h,
        "<h2>Summary</h2><table id=\"summary\"><tr><th>evacuation time</th><td class=\"n\">{}</td></tr>\
         <tr><th>persons out</th><td class=\"n\">{} of {}</td></tr>\
         <tr><th>worst level of service</th><td>{}</td></tr>\
         <tr><th>peak density</th><td class=\"n\">{:.2} persons/m² at ({:.1}, {:.1}) m, {:.1} s</td></tr>\
         <tr><th>mean walking speed</th><td class=\"n\">{:.2} m/s</td></tr></table>",
        t.evacuation_time
            .map_or_else(|| "not complete".to_string(), |e| format!("{e:.1} s")),
        t.arrived,
        t.agents,
        escape(&worst_level(report)),
        t.peak_density.persons_per_m2,
        t.peak_density.x,
        t.peak_density.y,
        t.peak_density.time,
        t.mean_speed
    );

    // Map and parameters.
    let (cols, rows, h_cell) = input.grid;
    let mut params: Vec<(String, String)> = vec![
        ("map".into(), format!("{} ({})", report.map, input.map_path)),
        ("map SHA-256".into(), input.map_sha256.to_string()),
        ("crowdfield".into(), env!("CARGO_PKG_VERSION").to_string()),
        (
            "grid".into(),
            format!(
                "{cols} × {rows} cells of {h_cell} m ({:.1} × {:.1} m)",
                cols as f64 * h_cell,
                rows as f64 * h_cell
            ),
        ),
        ("seed".into(), report.seed.to_string()),
        ("time step".into(), format!("{} s", report.dt)),
        ("time limit".into(), format!("{} s", report.max_time)),
        ("steps".into(), report.steps.to_string()),
        ("end time".into(), format!("{:.1} s", report.end_time)),
        (
            "speed law".into(),
            format!("{:?}", report.speed_law).to_lowercase(),
        ),
        ("replan every".into(), format!("{} steps", report.replan_every)),
        ("density window".into(), format!("{} m²", report.density_window)),
        ("walls".into(), report.walls.describe().into()),
    ];
    params.extend(input.parameters.iter().cloned());
    h.push_str("<h2>Map and parameters</h2><table id=\"parameters\">");
    for (k, v) in &params {
        let _ = write!(
            h,
            "<tr><th>{}</th><td><code>{}</code></td></tr>",
            escape(k),
            escape(v)
        );
    }
    h.push_str("</table>\n");

    inputs_tables(&mut h, &report.inputs);

    // Groups.
    h.push_str(
        "<h2>Groups</h2><table id=\"groups\"><tr><th>group</th><th>persons</th><th>out</th>\
         <th>evacuation time, s</th><th>last out, s</th><th>peak density, /m²</th>\
         <th>mean speed, m/s</th><th>min speed, m/s</th><th>remaining</th></tr>",
    );
    for g in report.groups.iter().chain(std::iter::once(&report.total)) {
        let _ = write!(
            h,
            "<tr><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>\
             <td class=\"n\">{}</td><td class=\"n\">{:.2}</td><td class=\"n\">{:.2}</td><td class=\"n\">{:.2}</td>\
             <td class=\"n\">{}</td></tr>",
            escape(&g.name),
            g.agents,
            g.arrived,
            opt(g.evacuation_time, 1),
            opt(g.last_arrival, 1),
            g.peak_density.persons_per_m2,
            g.mean_speed,
            g.min_speed,
            g.remaining.total
        );
    }
    h.push_str("</table>\n");

    // Exits.
    h.push_str(
        "<h2>Exits</h2><table id=\"exits\"><tr><th>exit</th><th>width, m</th><th>persons</th>\
         <th>first out, s</th><th>last out, s</th><th>flow, persons/s</th><th>specific flow, persons/(m·s)</th></tr>",
    );
    for e in &report.total.exits {
        let _ = write!(
            h,
            "<tr><td>{}</td><td class=\"n\">{:.2}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>\
             <td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
            escape(&e.name),
            e.width,
            e.arrivals,
            opt(e.first_arrival, 1),
            opt(e.last_arrival, 1),
            opt(e.flow, 2),
            opt(e.specific_flow, 2)
        );
    }
    h.push_str("</table>\n");

    // Exit events, then releases and regions.
    let exit_rows: Vec<(f64, &str, &str)> = report
        .exit_changes
        .iter()
        .map(|c| (c.time, c.name.as_str(), if c.open { "opens" } else { "closes" }))
        .collect();
    event_table(
        &mut h,
        "exit-events",
        "Exit events",
        "Exits that opened or closed during the run (marked on the plots: red a closing, green an \
         opening); a closed exit is no goal and takes no one.",
        "exit",
        &exit_rows,
    );
    let scene_rows: Vec<(f64, &str, &str)> = report
        .scene_changes
        .iter()
        .map(|c| (c.time, c.name.as_str(), c.what.as_str()))
        .collect();
    event_table(
        &mut h,
        "scene-events",
        "Waiting areas and regions",
        "Waiting areas released and speed regions changed during the run (marked in blue on the \
         arrivals plot).",
        "area or region",
        &scene_rows,
    );

    // Level of service.
    h.push_str(
        "<h2>Level of service</h2><p>Fruin's walkway levels (persons/m² of the people who have started to move, walking or queueing, \
         counted over a 2 m × 2 m square around each place; people still in their pre-movement time are not counted). \
         Area: where this level is the worst reached; time: the longest one place spent at it.</p>\
         <table id=\"los\"><tr><th>level</th><th>up to, persons/m²</th><th>area, m²</th><th>longest time, s</th></tr>",
    );
    for l in &report.level_of_service {
        let _ = write!(
            h,
            "<tr><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{:.2}</td><td class=\"n\">{:.1}</td></tr>",
            escape(&l.level),
            opt(l.max_density, 3),
            l.worst_area_m2,
            l.longest_seconds
        );
    }
    h.push_str("</table>\n");

    // Quality.
    let q = &report.quality;
    let _ = writeln!(
        h,
        "<h2>Model quality</h2><table id=\"quality\"><tr><th>collisions per step</th><td class=\"n\">{:.2}</td></tr>\
         <tr><th>most collisions in a step</th><td class=\"n\">{}</td></tr>\
         <tr><th>mean collision depth</th><td class=\"n\">{:.1} mm</td></tr>\
         <tr><th>contacts per step</th><td class=\"n\">{:.2}</td></tr>\
         <tr><th>most jammed at once</th><td class=\"n\">{}</td></tr>\
         <tr><th>longest jam</th><td class=\"n\">{:.1} s</td></tr></table>",
        q.collisions_per_step,
        q.max_collisions,
        q.mean_collision_depth * 1000.0,
        q.contacts_per_step,
        q.max_jammed,
        q.longest_jam
    );

    // Images.
    for (heading, caption, png) in &input.images {
        let _ = writeln!(
            h,
            "<h2>{}</h2><figure><img alt=\"{}\" src=\"data:image/png;base64,{}\"><figcaption>{}</figcaption></figure>",
            escape(heading),
            escape(heading),
            base64(png),
            escape(caption)
        );
    }
    h.push_str(IMAGE_CHECK_SCRIPT);
    h.push_str("</body></html>\n");
    h
}

/// The page's inputs: what the run assumed, as an authority needs it, beyond the grid, step,
/// seed and local layer of the parameters table above it: the model and why, its parameters,
/// then per group and spawn area the speeds, body radius, persons and pre-movement times.
fn inputs_tables(h: &mut String, inputs: &crate::sim::report::Inputs) {
    // As a map's `params` would hold them, one `"key": value` after another (so lines wrap).
    let params = match serde_json::to_value(&inputs.params) {
        Ok(serde_json::Value::Object(fields)) => fields
            .iter()
            .map(|(k, v)| format!("\"{k}\": {v}"))
            .collect::<Vec<_>>()
            .join(", "),
        _ => String::new(),
    };
    let rows = [
        ("model", inputs.model.name().to_string()),
        ("why this model", inputs.model_source.clone()),
        ("params in effect", params),
    ];
    h.push_str("<h2>Inputs</h2><table id=\"inputs\">");
    for (k, v) in rows {
        let _ = write!(
            h,
            "<tr><th>{}</th><td><code>{}</code></td></tr>",
            escape(k),
            escape(&v)
        );
    }
    h.push_str(
        "</table>\n<table id=\"input-groups\"><tr><th>group</th><th>walking speed, m/s</th>\
         <th>speed distribution</th><th>body radius, m</th><th>spawn area</th><th>persons</th>\
         <th>pre-movement, s</th></tr>",
    );
    for g in &inputs.groups {
        if g.spawns.is_empty() {
            let _ = write!(
                h,
                "<tr><td>{}</td><td class=\"n\">{} to {}</td><td>{}</td><td class=\"n\">{}</td>\
                 <td>none</td><td class=\"n\">0</td><td></td></tr>",
                escape(&g.name),
                g.speed_min,
                g.speed_max,
                escape(&g.speed_distribution),
                g.radius
            );
        }
        for (k, sp) in g.spawns.iter().enumerate() {
            let group_cells = if k == 0 {
                format!(
                    "<td>{}</td><td class=\"n\">{} to {}</td><td>{}</td><td class=\"n\">{}</td>",
                    escape(&g.name),
                    g.speed_min,
                    g.speed_max,
                    escape(&g.speed_distribution),
                    g.radius
                )
            } else {
                "<td></td><td></td><td></td><td></td>".to_string()
            };
            let _ = write!(
                h,
                "<tr>{group_cells}<td>{}</td><td class=\"n\">{}</td><td class=\"n\">{} to {}</td></tr>",
                escape(&sp.name),
                sp.count,
                sp.premovement[0],
                sp.premovement[1]
            );
        }
    }
    h.push_str("</table>\n");
}

/// One map's row in a batch's index page.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct IndexRow {
    /// Map name (the folder's name).
    pub name: String,
    /// The `href` of the map's `report.html` ([`file_href`]), when it has one.
    pub link: Option<String>,
    /// Evacuation time, s (`None`: not complete or failed).
    pub evacuation_time: Option<f64>,
    /// The exit with the latest last arrival, and that time.
    pub worst_exit: Option<(String, f64)>,
    /// Worst level of service reached.
    pub worst_level: Option<String>,
    /// Warnings (or the error of a failed map).
    pub warnings: Vec<String>,
}

impl IndexRow {
    /// The row of a run's report.
    pub fn of(name: &str, link: Option<String>, report: &Report) -> Self {
        let worst_exit = report
            .total
            .exits
            .iter()
            .filter_map(|e| e.last_arrival.map(|t| (e.name.clone(), t)))
            .max_by(|a, b| a.1.total_cmp(&b.1));
        Self {
            name: name.to_string(),
            link,
            evacuation_time: report.total.evacuation_time,
            worst_exit,
            worst_level: Some(worst_level(report)),
            warnings: page_warnings(report),
        }
    }
}

/// The sorting script of the index page: a click on a column head sorts by it (numbers by
/// the `data-v` value, text otherwise), a second click reverses.
const SORT_SCRIPT: &str = "document.querySelectorAll('th.sort').forEach(function(th,i){th.addEventListener('click',function(){\
var tb=th.closest('table').tBodies[0],rows=Array.from(tb.rows),d=th.dataset.dir==='asc'?-1:1;th.dataset.dir=d>0?'asc':'desc';\
rows.sort(function(a,b){var x=a.cells[i].dataset.v,y=b.cells[i].dataset.v;var nx=parseFloat(x),ny=parseFloat(y);\
return d*(isNaN(nx)||isNaN(ny)?x.localeCompare(y):nx-ny);});rows.forEach(function(r){tb.appendChild(r);});});});";

/// A batch's index page: one row per map, sortable by any column.
pub fn index_page(title: &str, rows: &[IndexRow]) -> String {
    let mut h = String::new();
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title><style>{STYLE}</style></head><body>\n\
         <h1>{}</h1><p>Click a column head to sort.</p>\n<table id=\"maps\"><thead><tr>\
         <th class=\"sort\">map</th><th class=\"sort\">evacuation time, s</th><th class=\"sort\">worst exit (last out, s)</th>\
         <th class=\"sort\">worst level of service</th><th class=\"sort\">warnings</th></tr></thead><tbody>\n",
        escape(title),
        escape(title)
    );
    for r in rows {
        let name = match &r.link {
            Some(l) => format!("<a href=\"{}\">{}</a>", escape(l), escape(&r.name)),
            None => escape(&r.name),
        };
        // Incomplete runs sort after every complete one.
        let evac_v = r.evacuation_time.map_or("1e300".to_string(), |e| e.to_string());
        let (exit_text, exit_v) = match &r.worst_exit {
            Some((n, t)) => (format!("{} ({t:.1})", escape(n)), t.to_string()),
            None => ("–".to_string(), "1e300".to_string()),
        };
        let level = r.worst_level.clone().unwrap_or_else(|| "–".to_string());
        let warn = if r.warnings.is_empty() {
            String::new()
        } else {
            format!(
                "<ul>{}</ul>",
                r.warnings
                    .iter()
                    .map(|w| format!("<li>{}</li>", escape(w)))
                    .collect::<String>()
            )
        };
        let _ = writeln!(
            h,
            "<tr><td data-v=\"{}\">{name}</td><td class=\"n\" data-v=\"{evac_v}\">{}</td><td data-v=\"{exit_v}\">{exit_text}</td>\
             <td data-v=\"{}\">{}</td><td data-v=\"{}\">{warn}</td></tr>",
            escape(&r.name),
            r.evacuation_time
                .map_or_else(|| "not complete".to_string(), |e| format!("{e:.1}")),
            escape(&level),
            escape(&level),
            r.warnings.len()
        );
    }
    let _ = write!(
        h,
        "</tbody></table>\n<script>{SORT_SCRIPT}</script>\n</body></html>\n"
    );
    h
}

/// A table of timed events (`(time, name, event)`) under a heading, with the table's `id`;
/// nothing when there are none.
fn event_table(h: &mut String, id: &str, heading: &str, intro: &str, what: &str, rows: &[(f64, &str, &str)]) {
    if rows.is_empty() {
        return;
    }
    let _ = write!(
        h,
        "<h2>{heading}</h2><p>{intro}</p><table id=\"{id}\"><tr><th>time, s</th><th>{what}</th><th>event</th></tr>"
    );
    for (time, name, event) in rows {
        let _ = write!(
            h,
            "<tr><td class=\"n\">{time:.1}</td><td>{}</td><td>{}</td></tr>",
            escape(name),
            escape(event)
        );
    }
    h.push_str("</table>\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_rfc_4648_vectors() {
        for (plain, coded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(plain.as_bytes()), coded, "{plain}");
        }
    }

    #[test]
    fn file_hrefs_are_relative_and_percent_encoded() {
        use std::path::Path;
        assert_eq!(
            file_href(Path::new("a-b_c.d~/report.html")),
            "./a-b_c.d~/report.html"
        );
        assert_eq!(
            file_href(Path::new("JaVaScRiPt:alert(1);void(0)/report.html")),
            "./JaVaScRiPt%3Aalert%281%29%3Bvoid%280%29/report.html"
        );
        assert_eq!(file_href(Path::new("a#b?c d%/x")), "./a%23b%3Fc%20d%25/x");
        assert_eq!(file_href(Path::new("é/x")), "./%C3%A9/x");
    }

    #[test]
    fn escape_covers_markup() {
        assert_eq!(
            escape("<a href=\"x\">&'"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
    }
}
