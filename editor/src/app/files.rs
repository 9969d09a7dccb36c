//! Opening, saving and recovering maps, and exporting the view and the field images.

use super::{EditorApp, MAX_VIEW_SIDE};
use crate::command::SimCommand;
use crate::history::Part;
use std::path::{Path, PathBuf};

impl EditorApp {
    /// Opens the map at `path`, or imports the floor plan there (`.dxf`, `.wkt`, `.geojson`:
    /// the map is new and unsaved, its path the plan's with `.json`, so a save never writes
    /// over the plan); on failure the current map stays and the error shows.
    pub fn open(&mut self, path: &Path) {
        if crate::mapio::is_plan(path) {
            match crate::mapio::import_plan(path) {
                Ok((doc, _)) if doc.grid.cols.max(doc.grid.rows) > MAX_VIEW_SIDE => {
                    self.message = format!(
                        "Could not import {}: its grid is {} x {} cells, and the editor shows at most \
                         {MAX_VIEW_SIDE} cells a side; `crowdfield import --cell-size` makes a coarser map",
                        path.display(),
                        doc.grid.cols,
                        doc.grid.rows
                    );
                }
                Ok((doc, summary)) => {
                    let map_path = path.with_extension("json");
                    self.doc = doc;
                    self.sim_command(SimCommand::Reset);
                    self.path = None;
                    self.file.path = map_path.display().to_string();
                    self.history.clear();
                    self.stroke = None;
                    self.revision += 1;
                    self.recovery_revision = self.revision;
                    self.unsaved_since = None;
                    self.groups.selected = 0;
                    self.viewport.refit();
                    self.request_fields();
                    self.recovery_offer = None;
                    self.message = format!(
                        "Imported {} ({summary}); not saved yet: Save as writes it as a map",
                        path.display()
                    );
                }
                Err(e) => self.message = format!("Could not import: {e}"),
            }
            return;
        }
        match crate::mapio::load(path) {
            Ok(doc) if doc.grid.cols.max(doc.grid.rows) > MAX_VIEW_SIDE => {
                self.message = format!(
                    "Could not open {}: its grid is {} x {} cells, and the editor shows at most {MAX_VIEW_SIDE} \
                     cells a side (one pixel per cell in one GPU texture); the command line reads it",
                    path.display(),
                    doc.grid.cols,
                    doc.grid.rows
                );
            }
            Ok(doc) => {
                self.doc = doc;
                self.sim_command(SimCommand::Reset);
                self.path = Some(path.to_path_buf());
                self.file.path = path.display().to_string();
                self.history.clear();
                self.stroke = None;
                self.revision += 1;
                self.saved_revision = self.revision;
                self.recovery_revision = self.revision;
                self.unsaved_since = None;
                self.groups.selected = 0;
                self.viewport.refit();
                self.request_fields();
                self.recovery_offer = crate::mapio::recovery_for(path);
                let problems = crate::mapio::problems(&self.doc, path);
                self.message = match problems.first() {
                    None => format!("Opened {}", path.display()),
                    Some(first) => format!("Opened {}; not valid yet: {first}", path.display()),
                };
            }
            Err(e) => self.message = format!("Could not open: {e}"),
        }
    }

    /// Saves the map to `path` (atomically), which becomes the current path; removes the
    /// recovery file.
    pub fn save_to(&mut self, path: &Path) {
        if self.doc.name.is_empty() {
            self.doc.name = path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
        }
        match crate::mapio::save(&self.doc, path) {
            Ok(()) => {
                if let Some(old) = &self.path {
                    crate::mapio::remove_recovery(&crate::mapio::recovery_path(old));
                }
                crate::mapio::remove_recovery(&crate::mapio::recovery_path(path));
                self.path = Some(path.to_path_buf());
                self.file.path = path.display().to_string();
                self.saved_revision = self.revision;
                self.recovery_revision = self.revision;
                self.unsaved_since = None;
                let problems = crate::mapio::problems(&self.doc, path);
                self.message = match problems.first() {
                    None => format!("Saved {}", path.display()),
                    Some(first) => format!(
                        "Saved {}, but the map is not valid yet ({} problem(s)): {first}",
                        path.display(),
                        problems.len()
                    ),
                };
            }
            Err(e) => self.message = format!("Could not save: {e}"),
        }
    }

    /// Loads the offered recovery file in place of the map (keeping the map's path, so the
    /// next save goes to the map; the recovered state counts as unsaved).
    pub(super) fn recover(&mut self) {
        let Some(rec) = self.recovery_offer.take() else {
            return;
        };
        match crate::mapio::load(&rec) {
            Ok(doc) => {
                self.history
                    .record("Recover", Part::Document(Box::new(self.doc.clone())), None);
                self.doc = doc;
                self.viewport.refit();
                self.changed();
                self.message = format!("Recovered unsaved changes from {}", rec.display());
            }
            Err(e) => self.message = format!("Could not read the recovery file: {e}"),
        }
    }

    /// Writes the recovery file beside the map (or `untitled.recovery.json` in the current
    /// folder for a map never saved).
    pub fn write_recovery(&mut self) {
        self.unsaved_since = None;
        if self.revision == self.recovery_revision || !self.dirty() {
            return;
        }
        let map = self
            .path
            .clone()
            .unwrap_or_else(|| PathBuf::from("untitled.json"));
        let rec = crate::mapio::recovery_path(&map);
        match crate::mapio::save(&self.doc, &rec) {
            Ok(()) => self.recovery_revision = self.revision,
            Err(e) => self.message = format!("Could not write the recovery file: {e}"),
        }
    }

    /// Writes the layer image as shown (without the vector overlays) as a PNG, through the
    /// command line's PNG writer.
    pub fn export_view(&mut self, path: &Path) {
        let img = self.compose();
        let bytes: Vec<u8> = img.pixels.as_flattened().to_vec();
        let Some(rgba) = image::RgbaImage::from_raw(img.width as u32, img.height as u32, bytes) else {
            self.message = "Export failed: empty image".into();
            return;
        };
        self.message = match crowdfield::export::save_png(path, &rgba) {
            Ok(()) => format!("Wrote {}", path.display()),
            Err(e) => format!("Export failed: {e}"),
        };
    }

    /// Writes every field as a PNG (the same images as `crowdfield solve`): per group the
    /// potential with isolines and the gradient arrows, then density, speed and unit cost.
    /// `target` is a folder, or a `.png` path whose folder is used.
    pub fn export_fields(&mut self, target: &Path) {
        let dir = if target.extension().is_some_and(|e| e.eq_ignore_ascii_case("png")) {
            crowdfield::map::base_dir(target).to_path_buf()
        } else {
            target.to_path_buf()
        };
        let Some(fields) = self.recompute.latest.clone() else {
            self.message = "No fields yet: wait for the recompute".into();
            return;
        };
        if self.recompute.is_running() || fields.density.dim() != self.doc.grid.shape() {
            self.message = "The fields are being recomputed: export again when they are up to date".into();
            return;
        }
        match write_field_pngs(&self.doc.to_scene(), &fields, &dir) {
            Ok(n) => self.message = format!("Wrote {n} images to {}", dir.display()),
            Err(e) => self.message = format!("Export failed: {e}"),
        }
    }
}

/// Writes the field images of `scene` into `dir`; returns how many.
pub fn write_field_pngs(
    scene: &crowdfield::Scene,
    fields: &crate::recompute::FieldSet,
    dir: &Path,
) -> crowdfield::Result<usize> {
    use crowdfield::export::{self, Colormap, ImageOptions};
    let opts = ImageOptions::default();
    let mut n = 0;
    for (i, (g, gf)) in scene.groups.iter().zip(&fields.groups).enumerate() {
        let goal = g.goal_mask(&scene.grid);
        let slug: String = g
            .name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() {
                    c.to_ascii_lowercase()
                } else {
                    '_'
                }
            })
            .collect();
        let stem = format!("group{i}_{slug}");
        export::potential_png(
            &dir.join(format!("{stem}_potential.png")),
            scene,
            gf.phi.view(),
            goal.view(),
            &format!("potential, {}", g.name),
            &opts,
        )?;
        export::gradient_png(
            &dir.join(format!("{stem}_gradient.png")),
            scene,
            gf.phi.view(),
            &gf.grad,
            goal.view(),
            &format!("walking direction, {}", g.name),
            &opts,
        )?;
        n += 2;
    }
    let f = &fields.fields;
    export::field_png(
        &dir.join("density.png"),
        scene,
        f.density.rho.view(),
        "density",
        "persons/m²",
        Colormap::YellowOrangeRed,
        &opts,
    )?;
    export::field_png(
        &dir.join("speed.png"),
        scene,
        export::max_over_dirs(f.speed.view()).view(),
        "speed (fastest direction)",
        "m/s",
        Colormap::Cividis,
        &opts,
    )?;
    export::field_png(
        &dir.join("cost.png"),
        scene,
        export::mean_finite_over_dirs(f.cost.view()).view(),
        "unit cost (mean over directions)",
        "s/m",
        Colormap::Inferno,
        &opts,
    )?;
    Ok(n + 3)
}
