//! `crowdfield import PLAN... --out MAP.json [--cell-size M] [--density P] [--json]`: turns
//! floor plans (DXF, WKT, GeoJSON, PNG/JPEG) into an ordinary map with the vectors kept
//! ([`crowdfield::import`]), prints what it found and writes `MAP.png`, the imported plan with
//! its exits and distributions labelled.

use anyhow::Context;
use crowdfield::import::{ImportOptions, Plan, from_dxf::LayerNames, import, read_plan};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Arguments of `crowdfield import`.
#[derive(clap::Args)]
pub struct Args {
    /// Plan files: .dxf, .wkt, .geojson/.json, .png, .jpg; several are read as one plan.
    #[arg(required = true, value_name = "PLAN")]
    plans: Vec<PathBuf>,
    /// The map to write (JSON); the image of the plan goes beside it as .png.
    #[arg(long, value_name = "MAP.json")]
    out: PathBuf,
    /// Cell size, metres (default 0.25, doubled while the grid would pass 2^24 cells).
    #[arg(long, value_name = "M", allow_negative_numbers = true)]
    cell_size: Option<f64>,
    /// Persons per m² for each distribution that gives no number of walkers.
    #[arg(long, value_name = "P", allow_negative_numbers = true)]
    density: Option<f64>,
    /// DXF layer names beyond JuPedSim's: walkable=NAME,obstacles=NAME,exits=NAME,
    /// distributions=NAME,parameters=NAME,waypoints=NAME,journeys=NAME.
    #[arg(long, value_name = "ROLE=NAME,...")]
    layer: Option<String>,
    /// Image plans: metres per pixel.
    #[arg(long, value_name = "M", allow_negative_numbers = true)]
    pixel_size: Option<f64>,
    /// Image plans: pixels darker than this (0-255) are walls.
    #[arg(long, default_value_t = 128)]
    threshold: u8,
    /// The map's name (default: the first plan's file name).
    #[arg(long)]
    name: Option<String>,
    /// Print what was found as JSON.
    #[arg(long)]
    json: bool,
    /// Replace MAP.json and its image when they exist.
    #[arg(long)]
    force: bool,
}

/// Runs `crowdfield import`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if args.out.extension().is_none_or(|e| e != "json") {
        anyhow::bail!(
            "--out {}: expected a map file name ending in .json",
            args.out.display()
        );
    }
    let image = args.out.with_extension("png");
    if let Some(plan) = args.plans.iter().find(|p| **p == args.out || **p == image) {
        anyhow::bail!(
            "--out {}: the map or its image would replace the plan {} itself; choose another --out",
            args.out.display(),
            plan.display()
        );
    }
    for path in [&args.out, &image] {
        if path.exists() && !args.force {
            anyhow::bail!(
                "--out: {} exists; choose another --out, or pass --force to replace it",
                path.display()
            );
        }
    }
    let layers = match &args.layer {
        Some(spec) => {
            LayerNames::parse(spec).map_err(|e| anyhow::anyhow!(super::flag_text(&e.to_string())))?
        }
        None => LayerNames::default(),
    };
    let mut plan: Option<Plan> = None;
    let mut files = Vec::new();
    for path in &args.plans {
        let next = read_plan(path, &layers, args.pixel_size, Some(args.threshold))
            .map_err(|e| anyhow::anyhow!(super::flag_text(&e.to_string())))?;
        files.push(next.file.clone());
        match &mut plan {
            Some(p) => p.merge(next),
            None => plan = Some(next),
        }
    }
    let plan = plan.expect("clap requires a plan");
    let options = ImportOptions {
        cell_size: args.cell_size,
        density: args.density,
        name: args.name.clone(),
    };
    let mut imported =
        import(&plan, &options).map_err(|e| anyhow::anyhow!(super::flag_text(&e.to_string())))?;
    imported.summary.files = files;
    imported.save(&args.out)?;
    let scene =
        crowdfield::map::load(&args.out).with_context(|| format!("reading back {}", args.out.display()))?;
    let agents = if scene.groups.is_empty() {
        crowdfield::agents::Agents::default()
    } else {
        crowdfield::sim::spawn::spawn_agents(&scene, crowdfield::sim::SimConfig::default().seed)
            .with_context(|| format!("placing the walkers of {}", args.out.display()))?
    };
    crowdfield::export::plan_png(&image, &scene, &agents, &Default::default())?;
    let s = &imported.summary;
    if args.json {
        let mut value = serde_json::to_value(s)?;
        value["map"] = args.out.display().to_string().into();
        value["image"] = image.display().to_string().into();
        println!("{}", serde_json::to_string_pretty(&value)?);
    } else {
        print_summary(s, &args.out, &image);
    }
    Ok(ExitCode::SUCCESS)
}

/// The summary as lines of text.
fn print_summary(s: &crowdfield::import::ImportSummary, map: &Path, image: &Path) {
    use super::count_of;
    println!("read {} (units: {})", s.files.join(", "), s.units);
    if s.walkable_polygons > 0 {
        println!(
            "walkable area: {:.2} m² in {}, {}",
            s.walkable_area,
            count_of(s.walkable_polygons, "polygon", "polygons"),
            count_of(s.holes, "hole", "holes")
        );
        println!(
            "origin: map (0, 0) is ({}, {}) in the plan",
            s.origin[0], s.origin[1]
        );
    } else {
        println!("walkable area: {:.2} m² of free cells", s.walkable_area);
    }
    let names = if s.exit_names.is_empty() {
        String::new()
    } else {
        format!(" ({})", s.exit_names.join(", "))
    };
    println!(
        "exits: {}{names}; doors: {} (not used: an opening is a door)",
        s.exits, s.doors
    );
    println!(
        "distributions: {}, {}",
        s.distributions,
        count_of(s.persons, "person", "persons")
    );
    for d in &s.distribution_details {
        println!(
            "  {}: {:.2} m², {} from {}",
            d.name, d.area, d.persons, d.count_from
        );
    }
    if s.waypoints + s.journeys > 0 {
        println!(
            "waypoints: {}, journeys: {} (not used: walkers take the quickest way to the nearest exit)",
            s.waypoints, s.journeys
        );
    }
    println!(
        "cell size: {} m, {}; grid {} x {} cells",
        s.cell_size, s.cell_size_reason, s.cols, s.rows
    );
    if s.exits == 0 {
        println!("note: the plan has no exits: add goals before simulating (crowdfield-editor)");
    }
    println!("wrote {} and {}", map.display(), image.display());
}
