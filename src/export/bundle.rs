//! The full output set of `crowdfield solve` for one scene: per group the potential and
//! gradient as `.npy` and PNG, the static field images, and `summary.json`.
//!
//! The plan it writes is [`crate::plan::plan`]'s, for an EMPTY crowd: the static planning field
//! made of terrain slope, obstacles and discomfort only (density 0 everywhere, so every face
//! walks at terrain speed). This is the field a walker would follow before any crowd is
//! simulated. Writing solves nothing.

use super::{
    Colormap, ImageOptions, field_png, gradient_png, map_png, mean_finite_over_dirs, mean_open_over_dirs,
    potential_png,
};
use crate::eikonal::{Order, Solution};
use crate::error::Result;
use crate::io::write_npy;
use crate::ownership::OwnedDir;
use crate::plan::Plan;
use crate::scene::{Group, Scene};
use ndarray::ArrayView2;
use serde::Serialize;
use serde_json::json;
use std::path::Path;
use std::time::Instant;

/// Longest folder name [`sanitize_names`] gives a group (bytes, before a `_2` suffix): far
/// below the 255 bytes most file systems allow in one name.
pub const MAX_GROUP_DIR_LEN: usize = 64;

/// File-name-safe form of a group name: ASCII letters, digits, `-` and `_` kept, anything else
/// becomes `_`, cut to [`MAX_GROUP_DIR_LEN`] characters; an empty result becomes
/// `group_<index>`. Names already taken get `_2`, `_3`, ...
pub fn sanitize_names(names: &[&str]) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(names.len());
    for (i, name) in names.iter().enumerate() {
        let mut s: String = name
            .chars()
            .map(|ch| {
                if ch.is_ascii_alphanumeric() || ch == '-' || ch == '_' {
                    ch
                } else {
                    '_'
                }
            })
            .take(MAX_GROUP_DIR_LEN)
            .collect();
        if s.trim_matches('_').is_empty() {
            s = format!("group_{i}");
        }
        let base = s.clone();
        let mut k = 2;
        while out.iter().any(|o| o.eq_ignore_ascii_case(&s)) {
            s = format!("{base}_{k}");
            k += 1;
        }
        out.push(s);
    }
    out
}

/// One group's entry under `groups` in `solve`'s `summary.json` and in a batch's `solve.json`:
/// both commands build it here, so the two files carry the same keys with the same meanings.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GroupSolveSummary {
    /// The group's name in the map.
    pub name: String,
    /// Folder of the group's files, relative to the JSON file (`.` in a batch, whose files for
    /// every group lie beside its `solve.json`).
    pub dir: String,
    /// The potential `.npy`, relative to the JSON file.
    pub potential: String,
    /// Cells of the group's goals.
    pub goal_cells: usize,
    /// Cells left at `+inf` (no goal reachable), walls included.
    pub unreachable_cells: usize,
    /// Open (non-obstacle) cells left at `+inf`: cut off from every goal.
    pub unreachable_free_cells: usize,
    /// Smallest finite potential, seconds; `null` when no cell is finite.
    pub phi_min: Option<f64>,
    /// Largest finite potential (the longest walk to a goal), seconds; `null` when no cell is
    /// finite.
    pub phi_max: Option<f64>,
    /// The solver that ran (`fmm-cpu`, `fim-gpu`).
    pub solver: &'static str,
    /// Passes the solver needed (1 for fast marching).
    pub passes: usize,
    /// The GPU solver's work counters (passes, dispatches, read-backs, relaxations; one solve
    /// for every group, so the same in each); `null` for fast marching.
    pub counters: Option<crate::eikonal::SolveCounters>,
    /// Wall time of the group's solve, seconds.
    pub solve_seconds: f64,
}

impl GroupSolveSummary {
    /// The entry of `group` (of `scene`), solved as `sol` towards the cells of `goal`, whose
    /// files lie in `dir` with the potential at `potential` (both relative to the JSON file).
    pub fn new(
        scene: &Scene,
        group: &Group,
        sol: &Solution,
        goal: ArrayView2<bool>,
        dir: &str,
        potential: &str,
    ) -> Self {
        let (lo, hi) = sol
            .phi
            .iter()
            .filter(|v| v.is_finite())
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| {
                (a.min(v), b.max(v))
            });
        let unreachable_free_cells = sol
            .phi
            .iter()
            .zip(scene.obstacle.iter())
            .filter(|&(p, &o)| !o && !p.is_finite())
            .count();
        Self {
            name: group.name.clone(),
            dir: dir.to_string(),
            potential: potential.to_string(),
            goal_cells: goal.iter().filter(|&&g| g).count(),
            unreachable_cells: sol.unreachable,
            unreachable_free_cells,
            phi_min: (lo <= hi).then_some(lo),
            phi_max: (lo <= hi).then_some(hi),
            solver: sol.solver,
            passes: sol.passes,
            counters: sol.counters,
            solve_seconds: sol.seconds,
        }
    }
}

/// Writes the plan of `scene` ([`crate::plan::plan`]: its static fields and every group's
/// potential and gradient) under `out`, solving nothing:
/// `<group>/potential.npy` (f64, `+inf` unreachable), `<group>/gradient_x.npy`,
/// `<group>/gradient_y.npy` (f32, per metre), `<group>/potential.png`, `<group>/gradient.png`,
/// `map.png` (the map with its spawn areas, named goals and the walkers where they spawn with
/// seed 0, [`super::map_image_with`]), `density.png`, `speed.png` (mean over open directions),
/// `cost.png`, `height.png` (only when
/// the terrain is not flat) and `summary.json`, which is also returned; `summary.json` and the
/// log say which solver ran. `log` receives one line per stage with its timing.
///
/// ```
/// use crowdfield::prelude::*;
/// use crowdfield::export::{ImageOptions, bundle::write_solve_bundle};
///
/// let scene = crowdfield::map::load(concat!(env!("CARGO_MANIFEST_DIR"), "/maps/corridor.json"))?;
/// let plan = plan(&scene, &PlanOptions::default())?;
/// let out = std::env::temp_dir().join(format!("crowdfield-doc-bundle-{}", std::process::id()));
/// let summary = write_solve_bundle(&scene, &plan, &out, &ImageOptions::default(), &mut |_| {})?;
/// assert_eq!(summary["order"], 1);
/// # std::fs::remove_dir_all(&out).ok();
/// # Ok::<(), crowdfield::Error>(())
/// ```
///
/// The folder `out` is an [`OwnedDir`] of [`SOLVE_WRITER`] ([`OwnedDir::open_replacing`]): a
/// folder holding files `solve` did not write is refused, and an earlier solve's files that
/// this one does not write again (a renamed group's) are removed once it is written.
///
/// # Errors
/// [`crate::Error::Io`] naming the file that could not be written; the folder's refusal.
pub fn write_solve_bundle(
    scene: &Scene,
    plan: &Plan,
    out: &Path,
    opts: &ImageOptions,
    log: &mut dyn FnMut(&str),
) -> Result<serde_json::Value> {
    let mut owned = OwnedDir::open_replacing(out, SOLVE_WRITER, false)?;
    write_solve_bundle_into(scene, plan, &mut owned, opts, log)
}

/// The writer named in a `solve` folder's manifest (and in the messages about it).
pub const SOLVE_WRITER: &str = "crowdfield solve";

/// [`write_solve_bundle`] into a folder already opened (`solve --force` opens it forced);
/// records every file in its manifest before writing it, then finishes it.
///
/// # Errors
/// As [`write_solve_bundle`].
pub fn write_solve_bundle_into(
    scene: &Scene,
    plan: &Plan,
    owned: &mut OwnedDir,
    opts: &ImageOptions,
    log: &mut dyn FnMut(&str),
) -> Result<serde_json::Value> {
    let grid = scene.grid;
    let fields = &plan.fields;
    let fields_seconds = plan.fields_seconds;
    log(&format!(
        "fields ({} x {} cells, empty crowd): {:.3} s",
        grid.cols, grid.rows, fields_seconds
    ));
    let solve_wall = plan.solve_seconds;
    let backend_used = &plan.solver;
    log(&format!(
        "solved {} {} in {:.3} s on {backend_used}",
        plan.groups.len(),
        if plan.groups.len() == 1 { "group" } else { "groups" },
        solve_wall
    ));

    let names: Vec<&str> = scene.groups.iter().map(|g| g.name.as_str()).collect();
    let dirs = sanitize_names(&names);
    let mut groups_json = Vec::new();
    for ((group, planned), dir) in scene.groups.iter().zip(&plan.groups).zip(&dirs) {
        let t = Instant::now();
        let (sol, goal, grad) = (&planned.solution, &planned.goal, &planned.gradient);
        write_npy(&owned.claim(&format!("{dir}/potential.npy"))?, sol.phi.view())?;
        write_npy(&owned.claim(&format!("{dir}/gradient_x.npy"))?, grad.gx.view())?;
        write_npy(&owned.claim(&format!("{dir}/gradient_y.npy"))?, grad.gy.view())?;
        potential_png(
            &owned.claim(&format!("{dir}/potential.png"))?,
            scene,
            sol.phi.view(),
            goal.view(),
            &format!("{}: potential (walking time to goal)", group.name),
            opts,
        )?;
        gradient_png(
            &owned.claim(&format!("{dir}/gradient.png"))?,
            scene,
            sol.phi.view(),
            grad,
            goal.view(),
            &format!("{}: walking direction", group.name),
            opts,
        )?;
        let entry = GroupSolveSummary::new(
            scene,
            group,
            sol,
            goal.view(),
            dir,
            &format!("{dir}/potential.npy"),
        );
        log(&format!(
            "group '{}' -> {dir}/: solve {:.3} s, {} unreachable {} ({} free), phi {} .. {} s, files {:.3} s",
            group.name,
            sol.seconds,
            sol.unreachable,
            if sol.unreachable == 1 { "cell" } else { "cells" },
            entry.unreachable_free_cells,
            entry.phi_min.map_or("-".into(), |v| format!("{v:.3}")),
            entry.phi_max.map_or("-".into(), |v| format!("{v:.3}")),
            t.elapsed().as_secs_f64()
        ));
        groups_json.push(json!(entry));
    }

    let t = Instant::now();
    // The map as the walkers find it: spawned as `simulate` spawns them by default.
    let agents = crate::sim::spawn::spawn_agents(scene, crate::sim::SimConfig::default().seed)?;
    map_png(&owned.claim("map.png")?, scene, &agents, opts)?;
    field_png(
        &owned.claim("density.png")?,
        scene,
        fields.density.rho.view(),
        "density (empty crowd)",
        "persons/m²",
        Colormap::YellowOrangeRed,
        opts,
    )?;
    field_png(
        &owned.claim("speed.png")?,
        scene,
        mean_open_over_dirs(fields.speed.view()).view(),
        "walking speed, mean over open directions",
        "speed, m/s",
        Colormap::Cividis,
        opts,
    )?;
    // Terrain: only a map with a slope somewhere has a height worth a picture.
    let (h_lo, h_hi) = scene
        .height
        .iter()
        .fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), &h| {
            (lo.min(h), hi.max(h))
        });
    if h_hi > h_lo {
        field_png(
            &owned.claim("height.png")?,
            scene,
            scene.height.view(),
            "terrain height",
            "height, m",
            Colormap::Magma,
            opts,
        )?;
    }
    field_png(
        &owned.claim("cost.png")?,
        scene,
        mean_finite_over_dirs(fields.cost.view()).view(),
        "unit cost, mean over open directions",
        "cost, s/m",
        Colormap::Inferno,
        opts,
    )?;
    log(&format!("field images: {:.3} s", t.elapsed().as_secs_f64()));

    let order_number = match plan.order {
        Order::First => 1,
        Order::Second => 2,
    };
    let solver = plan
        .groups
        .first()
        .map_or(crate::eikonal::FMM_CPU, |g| g.solution.solver);
    let summary = json!({
        "map": scene.name,
        "grid": grid,
        "layout": "arrays are (rows, cols): row index = y, column = x, origin at the lower-left corner",
        "crowd": "empty: static planning field from terrain, obstacles and discomfort",
        "params": scene.params,
        "order": order_number,
        "solver": solver,
        "backend": backend_used,
        "fields_seconds": fields_seconds,
        "solve_wall_seconds": solve_wall,
        "obstacle_cells": scene.obstacle.iter().filter(|&&o| o).count(),
        "groups": groups_json,
    });
    let text = serde_json::to_string_pretty(&summary).expect("summary serialises");
    crate::io::write_bytes_atomic(&owned.claim("summary.json")?, text.as_bytes())?;
    owned.finish()?;
    Ok(summary)
}
