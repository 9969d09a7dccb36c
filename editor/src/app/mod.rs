//! The editor application: lays out the panels, applies the commands they return (the one
//! place where the map changes and undo is recorded), and keeps the caches (layer image,
//! background fields) and jobs (recompute, recovery, simulation) in step with the map.
//!
//! This module holds the app's state, the frame (panels, dialogs, the layer texture) and the
//! jobs it keeps in step; [`apply`] applies the commands, [`files`] opens, saves, recovers and
//! exports.

mod apply;
mod files;

use crate::command::Command;
use crate::doc::Document;
use crate::history::History;
use crate::layers;
use crate::panels::file::FilePanel;
use crate::panels::groups::GroupsPanel;
use crate::panels::layers::LayersPanel;
use crate::panels::run::RunPanel;
use crate::panels::status::StatusBar;
use crate::panels::tools::ToolsPanel;
use crate::recompute::Recompute;
use crate::viewport::{ViewInputs, Viewport};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

pub use files::write_field_pngs;

/// A recovery file is written this long after the first unsaved change (and again after
/// each further interval with changes): at most half a minute of work is lost in a crash.
pub const RECOVERY_INTERVAL: Duration = Duration::from_secs(30);

/// Largest grid side the editor opens: the layer image has one pixel per cell and is one GPU
/// texture, and egui-wgpu asks the device for textures of at most 8192 pixels a side (a larger
/// one failed wgpu's validation, which panics).
pub const MAX_VIEW_SIDE: usize = 8192;

/// A modal question: `heading`, `text`, and one button per answer, whose command is pushed
/// when it is clicked.
fn question<const N: usize>(
    ui: &mut egui::Ui,
    id: &str,
    heading: &str,
    text: &str,
    answers: [(&str, Command); N],
    commands: &mut Vec<Command>,
) {
    egui::Modal::new(ui.scope_id().with(id)).show(ui.ctx(), |ui| {
        ui.heading(heading);
        ui.label(text);
        ui.horizontal(|ui| {
            for (label, command) in answers {
                if ui.button(label).clicked() {
                    commands.push(command);
                }
            }
        });
    });
}

/// Whether a new map of `cols x rows` cells of `cell_size` m can be made.
fn new_size_ok(cols: usize, rows: usize, cell_size: f64) -> bool {
    cols > 0 && rows > 0 && cell_size > 0.0
}

/// The brush stroke in progress.
#[derive(Clone, Copy, Debug)]
struct Stroke {
    /// Height under the first dab (the flatten target).
    flatten_to: f32,
}

/// The editor.
pub struct EditorApp {
    // --- Saved state ---
    /// The map being edited.
    pub doc: Document,
    /// Where it is saved (`None` for a new map not yet saved).
    pub path: Option<PathBuf>,

    // --- Interface state ---
    /// Tool panel.
    pub tools: ToolsPanel,
    /// Group panel.
    pub groups: GroupsPanel,
    /// Layer panel.
    pub layers: LayersPanel,
    /// File bar.
    pub file: FilePanel,
    /// Run panel.
    pub run: RunPanel,
    /// Map view.
    pub viewport: Viewport,
    /// Status bar.
    status_bar: StatusBar,
    /// Last message for the status bar.
    pub message: String,
    /// Show recompute durations in the status bar (tests turn this off for reproducible
    /// snapshots).
    pub timings_in_status: bool,

    // --- Caches and jobs (never saved) ---
    /// Undo and redo.
    pub history: History,
    /// The background recompute.
    pub recompute: Recompute,
    /// The simulation thread of the Run panel.
    pub sim: crate::simrun::SimRunner,
    /// Simulation speed last sent to the thread.
    sim_speed_sent: f32,
    /// Increases with every change of the map.
    pub revision: u64,
    /// Revision at the last save or open.
    saved_revision: u64,
    /// Revision last sent to the recompute.
    requested_revision: u64,
    /// The composed layer image (recomposed where the map or the fields changed).
    layer_cache: layers::LayerCache,
    /// The layer image on the GPU (updated where the cached image changed).
    texture: Option<egui::TextureHandle>,
    stroke: Option<Stroke>,
    /// When the oldest unsaved change not yet in a recovery file was made.
    unsaved_since: Option<Instant>,
    /// Revision written to the recovery file.
    recovery_revision: u64,
    /// A recovery file offered on open.
    pub recovery_offer: Option<PathBuf>,
    /// The quit question is showing.
    pub quit_asked: bool,
    /// An Open or New held back while the "unsaved changes" question shows.
    pub discard_asked: Option<Command>,
    /// A Save as over another existing file, held back while "replace it?" shows.
    pub replace_asked: Option<PathBuf>,
    /// Quit has been decided: let the next close request through.
    quit_confirmed: bool,
    /// The window should close at the end of this frame.
    pub pending_close: bool,
    title: String,
}

impl EditorApp {
    /// An editor on `doc` (saved at `path`, if any); `ctx` is woken by the background thread.
    pub fn new(doc: Document, path: Option<PathBuf>, ctx: Option<egui::Context>) -> Self {
        let mut app = Self {
            doc,
            path,
            tools: ToolsPanel::default(),
            groups: GroupsPanel::default(),
            layers: LayersPanel::default(),
            file: FilePanel::default(),
            run: RunPanel::default(),
            viewport: Viewport::default(),
            status_bar: StatusBar,
            message: String::new(),
            timings_in_status: true,
            history: History::default(),
            recompute: Recompute::start(ctx.clone()),
            sim: crate::simrun::SimRunner::start(ctx),
            sim_speed_sent: 1.0,
            revision: 0,
            saved_revision: 0,
            requested_revision: 0,
            layer_cache: layers::LayerCache::default(),
            texture: None,
            stroke: None,
            unsaved_since: None,
            recovery_revision: 0,
            recovery_offer: None,
            quit_asked: false,
            discard_asked: None,
            replace_asked: None,
            quit_confirmed: false,
            pending_close: false,
            title: String::new(),
        };
        if let Some(p) = &app.path {
            app.file.path = p.display().to_string();
        }
        app.request_fields();
        app
    }

    /// An editor on the map file at `path`: loaded when it exists (an error shows in the
    /// status bar and a demonstration map opens instead when it cannot be read), a new
    /// 128 x 128 map of 0.5 m cells to be saved there otherwise.
    pub fn open_path(path: &Path, ctx: Option<egui::Context>) -> Self {
        let name = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut app = Self::new(Document::new(&name, 128, 128, 0.5), Some(path.to_path_buf()), ctx);
        if path.exists() {
            app.open(path);
        } else {
            app.message = format!("New map: {} does not exist yet", path.display());
        }
        app
    }

    /// True when the map has changes not saved.
    pub fn dirty(&self) -> bool {
        self.revision != self.saved_revision
    }

    /// The map's file for messages, or "The new map" when it has none yet.
    fn path_label(&self) -> String {
        match &self.path {
            Some(p) => p.display().to_string(),
            None => "The new map".into(),
        }
    }

    /// The window title: map name, file, and "*" when there are unsaved changes.
    pub fn title(&self) -> String {
        let file = self
            .path
            .as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|| "unsaved".into());
        format!(
            "{}{} ({file}) – crowdfield editor",
            if self.dirty() { "*" } else { "" },
            self.doc.name
        )
    }

    /// Sends the current map to the background recompute (a copy: the worker compiles it).
    pub fn request_fields(&mut self) {
        self.recompute
            .request_document(self.doc.clone(), self.layers.vis.clone(), self.groups.selected);
        self.requested_revision = self.revision;
    }

    /// Marks the map changed: new revision, recompute unless a stroke is still going.
    fn changed(&mut self) {
        self.revision += 1;
        self.unsaved_since.get_or_insert_with(Instant::now);
        if self.stroke.is_none() {
            self.request_fields();
        }
    }

    /// Draws the whole editor into `ui` and applies what the user asked.
    pub fn show(&mut self, ui: &mut egui::Ui) {
        let ctx = ui.ctx().clone();
        self.recompute.poll();
        self.sim.poll();
        let mut commands = self.shortcuts(&ctx);

        egui::Panel::top("file bar").show(ui, |ui| {
            commands.extend(self.file.ui(ui, &self.history, self.path.is_some()));
        });
        egui::Panel::bottom("status bar").show(ui, |ui| {
            self.status_bar.ui(
                ui,
                &self.doc.grid,
                self.viewport.cursor,
                &self.recompute,
                &self.message,
                self.timings_in_status,
            );
        });
        egui::Panel::left("tools and groups")
            .default_size(250.0)
            .show(ui, |ui| {
                egui::ScrollArea::vertical().show(ui, |ui| {
                    self.tools.ui(ui, self.doc.grid.cell_size);
                    ui.separator();
                    commands.extend(self.groups.ui(ui, &self.doc));
                });
            });
        egui::Panel::right("layers and run")
            .default_size(200.0)
            .show(ui, |ui| {
                // A change of the switches shows through the layer cache's key.
                let places = self.sim.latest.as_ref().and_then(|f| f.places.clone());
                self.layers.ui(ui, places.as_deref());
                ui.separator();
                commands.extend(self.run.ui(ui, &self.run_info()));
            });
        self.update_texture(&ctx);
        // The exits a run holds closed (its switches), or none without a run.
        let closed_exits: Option<Vec<String>> = self.sim.latest.as_ref().filter(|f| f.info.exists).map(|f| {
            f.info
                .exit_open
                .iter()
                .filter(|(_, open)| !open)
                .map(|(name, _)| name.clone())
                .collect()
        });
        egui::CentralPanel::no_frame().show(ui, |ui| {
            let fields = self.recompute.latest.clone();
            commands.extend(self.viewport.ui(
                ui,
                ViewInputs {
                    doc: &self.doc,
                    fields: fields.as_deref(),
                    fields_id: self.recompute.latest_id,
                    texture: self.texture.as_ref(),
                    vis: &self.layers.vis,
                    group: self.groups.selected,
                    tool: self.tools.tool,
                    brush: &self.tools.brush,
                    agents: self.sim.latest.as_ref().map(|f| &f.agents),
                    closed_exits: closed_exits.as_deref(),
                    obstacles: self.sim.latest.as_ref().map(|f| f.obstacles.as_slice()),
                },
            ));
        });
        self.dialogs(ui, &mut commands);

        for c in commands {
            self.apply(c);
        }
        self.after_frame(&ctx);
    }

    /// Whether a question (recovery, quit, unsaved changes) is showing: the keyboard
    /// shortcuts wait for its answer (Ctrl+S under the recovery question would otherwise save
    /// the old map and delete the recovery file on offer).
    pub fn dialog_open(&self) -> bool {
        self.recovery_offer.is_some()
            || self.quit_asked
            || self.discard_asked.is_some()
            || self.replace_asked.is_some()
    }

    /// Whether a brush stroke is in progress (undo and redo wait for its end).
    pub fn stroke_in_progress(&self) -> bool {
        self.stroke.is_some()
    }

    fn shortcuts(&self, ctx: &egui::Context) -> Vec<Command> {
        use egui::{Key, KeyboardShortcut, Modifiers};
        let mut out = Vec::new();
        if ctx.egui_wants_keyboard_input() || self.dialog_open() {
            return out;
        }
        let stroke = self.stroke_in_progress();
        ctx.input_mut(|i| {
            let redo = i.consume_shortcut(&KeyboardShortcut::new(
                Modifiers::COMMAND | Modifiers::SHIFT,
                Key::Z,
            )) || i.consume_shortcut(&KeyboardShortcut::new(Modifiers::COMMAND, Key::Y));
            if redo && !stroke {
                out.push(Command::Redo);
            }
            if i.consume_shortcut(&KeyboardShortcut::new(Modifiers::COMMAND, Key::Z)) && !stroke {
                out.push(Command::Undo);
            }
            if i.consume_shortcut(&KeyboardShortcut::new(Modifiers::COMMAND, Key::S)) {
                out.push(Command::Save);
            }
        });
        out
    }

    fn dialogs(&mut self, ui: &mut egui::Ui, commands: &mut Vec<Command>) {
        if let Some(rec) = &self.recovery_offer {
            let text = format!(
                "A recovery file with changes to this map that were never saved exists: {}",
                rec.display()
            );
            let answers = [
                ("Recover", Command::Recover),
                ("Discard recovery", Command::DiscardRecovery),
            ];
            question(
                ui,
                "recovery",
                "Recover unsaved changes?",
                &text,
                answers,
                commands,
            );
        }
        if let Some(held) = &self.discard_asked {
            let what = match held {
                Command::Open(p) => format!("Opening {}", p.display()),
                _ => "A new map".to_string(),
            };
            let text = format!(
                "{} has changes that are not saved. {what} replaces it.",
                self.path_label()
            );
            let answers = [
                ("Save, then continue", Command::SaveAndContinue),
                ("Discard changes", Command::DiscardAndContinue),
                ("Cancel", Command::CancelDiscard),
            ];
            question(ui, "discard", "Unsaved changes", &text, answers, commands);
        }
        if let Some(p) = &self.replace_asked {
            let text = format!(
                "{} exists (another map, or another file). Save this map over it?",
                p.display()
            );
            let answers = [
                ("Replace", Command::ReplaceFile),
                ("Cancel", Command::CancelReplace),
            ];
            question(ui, "replace", "Replace the file?", &text, answers, commands);
        }
        if self.quit_asked {
            let text = format!("{} has changes that are not saved.", self.path_label());
            let answers = [
                ("Save and quit", Command::Quit { save: true }),
                ("Quit without saving", Command::Quit { save: false }),
                ("Cancel", Command::CancelQuit),
            ];
            question(ui, "quit", "Unsaved changes", &text, answers, commands);
        }
    }

    /// Brings the layer image and its texture up to date: recomposes and uploads only the
    /// pixels of the cells that changed, everything when the fields or the switches changed.
    fn update_texture(&mut self, ctx: &egui::Context) {
        let fields = self.current_fields();
        let places = self.sim.latest.as_ref().and_then(|f| f.places.clone());
        let change = self.layer_cache.update(layers::LayerInputs {
            doc: &self.doc,
            revision: self.revision,
            fields: fields.as_deref(),
            fields_id: self.recompute.latest_id,
            places: places.as_deref(),
            vis: &self.layers.vis,
            group: self.groups.selected,
        });
        let options = egui::TextureOptions::NEAREST;
        match (change, &mut self.texture) {
            (layers::ImageChange::None, Some(_)) => {}
            (layers::ImageChange::Region(rect), Some(t)) => {
                t.set_partial([rect.x, rect.y], self.layer_cache.region(rect), options)
            }
            _ => {
                let img = self.layer_cache.image.as_ref().expect("composed by update");
                let color = egui::ColorImage::from_rgba_unmultiplied(
                    [img.width, img.height],
                    img.pixels.as_flattened(),
                );
                match &mut self.texture {
                    Some(t) => t.set(color, options),
                    None => self.texture = Some(ctx.load_texture("map layers", color, options)),
                }
            }
        }
    }

    /// The newest fields when they belong to the map's grid (just after New or Open they are
    /// of the previous map and left out).
    fn current_fields(&self) -> Option<std::sync::Arc<crate::recompute::FieldSet>> {
        self.recompute
            .latest
            .clone()
            .filter(|f| f.density.dim() == self.doc.grid.shape())
    }

    /// The layer image as currently shown.
    pub fn compose(&self) -> layers::RgbaImage {
        layers::compose_with(
            &self.doc,
            self.current_fields().as_deref(),
            self.sim.latest.as_ref().and_then(|f| f.places.as_deref()),
            &self.layers.vis,
            self.groups.selected,
        )
    }

    fn after_frame(&mut self, ctx: &egui::Context) {
        if self.run.speed != self.sim_speed_sent {
            self.sim.send(crate::simrun::SimControl::Speed(self.run.speed));
            self.sim_speed_sent = self.run.speed;
        }
        if self.run.playing && self.sim.latest.as_ref().is_some_and(|f| f.finished) {
            // The thread stops stepping too, rather than polling a finished run.
            self.sim.send(crate::simrun::SimControl::Play(false));
            self.run.playing = false;
        }
        let title = self.title();
        if title != self.title {
            ctx.send_viewport_cmd(egui::ViewportCommand::Title(title.clone()));
            self.title = title;
        }
        if ctx.input(|i| i.viewport().close_requested()) && !self.quit_confirmed && self.dirty() {
            ctx.send_viewport_cmd(egui::ViewportCommand::CancelClose);
            self.quit_asked = true;
        }
        // During a stroke the fields follow the brush: the next recompute starts as soon as
        // the previous one has finished (at most one in flight, so a long stroke never queues
        // up work), and the stroke's end sends the final state.
        if self.stroke.is_some() && self.requested_revision != self.revision && !self.recompute.is_running() {
            self.request_fields();
        }
        if self.recompute.is_running() {
            ctx.request_repaint_after(Duration::from_millis(100));
        }
        if let Some(since) = self.unsaved_since {
            // One reading: two could straddle the interval and underflow the subtraction.
            let elapsed = since.elapsed();
            if elapsed >= RECOVERY_INTERVAL {
                self.write_recovery();
            } else {
                ctx.request_repaint_after(RECOVERY_INTERVAL.saturating_sub(elapsed));
            }
        }
    }
}

impl eframe::App for EditorApp {
    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        self.show(ui);
        if self.pending_close {
            ui.ctx().send_viewport_cmd(egui::ViewportCommand::Close);
        }
    }
}
