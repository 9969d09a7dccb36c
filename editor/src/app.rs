//! The editor application: lays out the panels, applies the commands they return (the one
//! place where the map changes and undo is recorded), and keeps the caches (layer image,
//! background fields) and jobs (recompute, recovery, simulation) in step with the map.

use crate::command::{Command, SimCommand};
use crate::doc::{Document, GroupDoc};
use crate::history::{History, Part};
use crate::layers;
use crate::panels::file::FilePanel;
use crate::panels::groups::GroupsPanel;
use crate::panels::layers::LayersPanel;
use crate::panels::run::{RunInfo, RunPanel};
use crate::panels::status::StatusBar;
use crate::panels::tools::ToolsPanel;
use crate::recompute::Recompute;
use crate::tools::{self, TerrainOp, Tool};
use crate::viewport::{ViewInputs, Viewport};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

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
    /// shortcuts wait for its answer (Ctrl+S under the recovery question used to save the old
    /// map and delete the recovery file on offer).
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
                "A recovery file from an earlier session exists: {}",
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
            // The thread stops stepping too (it used to poll every millisecond).
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

    /// Applies one command. Every change of the map goes through here.
    pub fn apply(&mut self, command: Command) {
        match command {
            Command::Undo | Command::Redo => self.apply_history(command),
            Command::Dab { .. }
            | Command::EndStroke
            | Command::WallRect { .. }
            | Command::WallPolygon { .. } => self.apply_paint(command),
            Command::AddGoal { .. }
            | Command::AddSpawn { .. }
            | Command::RemoveGoal { .. }
            | Command::RemoveSpawn { .. }
            | Command::AddGroup
            | Command::RemoveGroup(_)
            | Command::SetGroup { .. } => self.apply_groups(command),
            Command::New { .. }
            | Command::Open(_)
            | Command::DiscardAndContinue
            | Command::SaveAndContinue
            | Command::CancelDiscard
            | Command::Save
            | Command::SaveAs(_)
            | Command::ReplaceFile
            | Command::CancelReplace
            | Command::Recover
            | Command::DiscardRecovery
            | Command::ExportView(_)
            | Command::ExportFields(_) => self.apply_file(command),
            Command::Quit { .. } | Command::CancelQuit => self.apply_quit(command),
            Command::Sim(c) => self.sim_command(c),
        }
    }

    /// Undo and redo.
    fn apply_history(&mut self, command: Command) {
        match command {
            Command::Undo => match self.history.undo(&mut self.doc) {
                Some(l) => {
                    self.message = format!("Undid {l}");
                    self.changed();
                }
                None => self.message = "Nothing to undo".into(),
            },
            Command::Redo => match self.history.redo(&mut self.doc) {
                Some(l) => {
                    self.message = format!("Redid {l}");
                    self.changed();
                }
                None => self.message = "Nothing to redo".into(),
            },
            other => unreachable!("{other:?} is not a history command"),
        }
    }

    /// Brush dabs, strokes and wall shapes: edits of the rasters.
    fn apply_paint(&mut self, command: Command) {
        match command {
            Command::Dab { tool, at, first } => self.dab(tool, at, first),
            Command::EndStroke => {
                // Unless the live recompute of the stroke already has its final state.
                if self.stroke.take().is_some() && self.requested_revision != self.revision {
                    self.request_fields();
                }
            }
            Command::WallRect { a, b } => {
                self.history
                    .record("Wall rectangle", Part::Obstacle(self.doc.obstacle.clone()), None);
                let lo = [a[0].min(b[0]), a[1].min(b[1])];
                let hi = [a[0].max(b[0]), a[1].max(b[1])];
                tools::fill_rect(&self.doc.grid, &mut self.doc.obstacle, lo, hi, true);
                self.changed();
            }
            Command::WallPolygon { points } => {
                self.history
                    .record("Wall polygon", Part::Obstacle(self.doc.obstacle.clone()), None);
                tools::fill_polygon(&self.doc.grid, &mut self.doc.obstacle, &points);
                self.changed();
            }
            other => unreachable!("{other:?} is not a paint command"),
        }
    }

    /// Groups and their goal and spawn areas.
    fn apply_groups(&mut self, command: Command) {
        match command {
            Command::AddGoal { group, shape } => {
                if self.ensure_group(group) {
                    self.record_groups("Goal area", None);
                    self.doc.groups[group].goals.push(crate::doc::GoalArea {
                        name: None,
                        shape,
                        width: None,
                    });
                    self.changed();
                }
            }
            Command::AddSpawn { group, shape, count } => {
                if self.ensure_group(group) {
                    self.record_groups("Spawn area", None);
                    self.doc.groups[group].spawns.push(crate::doc::SpawnArea {
                        name: None,
                        shape,
                        count,
                        premovement: None,
                    });
                    self.changed();
                }
            }
            Command::RemoveGoal { group, index } => {
                if self.doc.groups.get(group).is_some_and(|g| index < g.goals.len()) {
                    self.record_groups("Remove goal", None);
                    self.doc.groups[group].goals.remove(index);
                    self.changed();
                }
            }
            Command::RemoveSpawn { group, index } => {
                if self.doc.groups.get(group).is_some_and(|g| index < g.spawns.len()) {
                    self.record_groups("Remove spawn", None);
                    self.doc.groups[group].spawns.remove(index);
                    self.changed();
                }
            }
            Command::AddGroup => {
                self.record_groups("Add group", None);
                let n = self.doc.groups.len();
                self.doc
                    .groups
                    .push(GroupDoc::new(&format!("group {}", n + 1), n));
                self.groups.selected = n;
                self.changed();
            }
            Command::RemoveGroup(i) => {
                if i < self.doc.groups.len() {
                    self.record_groups("Remove group", None);
                    self.doc.groups.remove(i);
                    self.changed();
                }
            }
            Command::SetGroup {
                index,
                group,
                coalesce,
            } => {
                if index < self.doc.groups.len() && self.doc.groups[index] != *group {
                    self.record_groups("Group settings", Some(coalesce));
                    self.doc.groups[index] = *group;
                    self.changed();
                }
            }
            other => unreachable!("{other:?} is not a groups command"),
        }
    }

    /// New, open, save, recovery and export, with the questions that guard unsaved work and other maps' files.
    fn apply_file(&mut self, command: Command) {
        match command {
            // A valid New, or an Open, over unsaved changes waits for the question's answer.
            Command::New {
                cols,
                rows,
                cell_size,
                ..
            } if self.dirty() && new_size_ok(cols, rows, cell_size) => {
                self.discard_asked = Some(command);
            }
            Command::Open(_) if self.dirty() => self.discard_asked = Some(command),
            Command::DiscardAndContinue => {
                if let Some(held) = self.discard_asked.take() {
                    // Marked saved so the held command goes through; it replaces the map.
                    self.saved_revision = self.revision;
                    self.apply(held);
                }
            }
            Command::SaveAndContinue => {
                let Some(held) = self.discard_asked.take() else {
                    return;
                };
                match self.path.clone() {
                    Some(p) => self.save_to(&p),
                    None => {
                        self.message =
                            "This map has no file yet: type a path and press Save as, then open again".into();
                        return;
                    }
                }
                if !self.dirty() {
                    self.apply(held);
                } // else the save failed and the message says why; the map stays.
            }
            Command::CancelDiscard => self.discard_asked = None,
            Command::New {
                cols,
                rows,
                cell_size,
                path,
            } => {
                if !new_size_ok(cols, rows, cell_size) {
                    self.message = format!(
                        "A new map needs a positive size, not {cols} x {rows} cells of {cell_size} m"
                    );
                    return;
                }
                let name = path
                    .file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default();
                self.history
                    .record("New map", Part::Document(Box::new(self.doc.clone())), None);
                self.doc = Document::new(&name, cols, rows, cell_size);
                self.sim_command(SimCommand::Reset);
                self.viewport.refit();
                self.changed();
                // A path that names an existing file (the open map's, shown in the path field)
                // is not taken: Ctrl+S would replace that map with the empty one.
                let free = !path.as_os_str().is_empty() && !path.exists();
                self.path = free.then(|| path.clone());
                self.message = if free {
                    format!(
                        "New map: {cols} x {rows} cells of {cell_size} m, to be saved as {}",
                        path.display()
                    )
                } else {
                    format!(
                        "New map: {cols} x {rows} cells of {cell_size} m (untitled: type a path and press Save as)"
                    )
                };
            }
            Command::Open(path) => self.open(&path),
            Command::Save => match self.path.clone() {
                Some(p) => self.save_to(&p),
                None => self.message = "Type a path and press Save as".into(),
            },
            // Another map's file is replaced only when the user says so (a Save as used to
            // overwrite it, and its rasters, without a word).
            Command::SaveAs(p) if p.is_file() && self.path.as_deref() != Some(p.as_path()) => {
                self.replace_asked = Some(p);
            }
            Command::SaveAs(p) => self.save_to(&p),
            Command::ReplaceFile => {
                if let Some(p) = self.replace_asked.take() {
                    self.save_to(&p);
                }
            }
            Command::CancelReplace => self.replace_asked = None,
            Command::Recover => self.recover(),
            Command::DiscardRecovery => {
                if let Some(p) = self.recovery_offer.take() {
                    crate::mapio::remove_recovery(&p);
                    self.message = "Recovery file discarded".into();
                }
            }
            Command::ExportView(p) => self.export_view(&p),
            Command::ExportFields(dir) => self.export_fields(&dir),
            other => unreachable!("{other:?} is not a file command"),
        }
    }

    /// Quitting, saving first when asked.
    fn apply_quit(&mut self, command: Command) {
        match command {
            Command::Quit { save } => {
                if save {
                    match self.path.clone() {
                        Some(p) => self.save_to(&p),
                        None => {
                            self.message = "Type a path and press Save as before quitting".into();
                            self.quit_asked = false;
                            return;
                        }
                    }
                    if self.dirty() {
                        self.quit_asked = false;
                        return; // the save failed; the message says why
                    }
                }
                self.quit_asked = false;
                self.quit_confirmed = true;
                self.unsaved_since = None;
                self.title.clear();
                self.pending_close = true;
            }
            Command::CancelQuit => self.quit_asked = false,
            other => unreachable!("{other:?} is not a quit command"),
        }
    }

    fn ensure_group(&mut self, group: usize) -> bool {
        if group < self.doc.groups.len() {
            return true;
        }
        self.message = "Add a group first".into();
        false
    }

    fn record_groups(&mut self, label: &str, coalesce: Option<String>) {
        if coalesce.is_none() {
            self.history.seal();
        }
        self.history
            .record(label, Part::Groups(self.doc.groups.clone()), coalesce);
    }

    fn dab(&mut self, tool: Tool, at: [f64; 2], first: bool) {
        let Some(layer) = tool.brush_layer() else {
            return;
        };
        if first || self.stroke.is_none() {
            self.history.seal();
            let part = match layer {
                tools::LayerKind::Height => Part::Height(self.doc.height.clone()),
                tools::LayerKind::Obstacle => Part::Obstacle(self.doc.obstacle.clone()),
                tools::LayerKind::Discomfort => Part::Discomfort(self.doc.discomfort.clone()),
            };
            self.history.record(tool.label(), part, None);
            let flatten_to = self
                .doc
                .grid
                .cell_of(at[0], at[1])
                .map(|rc| self.doc.height[rc])
                .unwrap_or(0.0);
            self.stroke = Some(Stroke { flatten_to });
        }
        let stroke = self.stroke.expect("set above");
        let grid = self.doc.grid;
        let brush = &self.tools.brush;
        match tool {
            Tool::Raise => tools::terrain_dab(&grid, &mut self.doc.height, at, brush, TerrainOp::Raise),
            Tool::Lower => tools::terrain_dab(&grid, &mut self.doc.height, at, brush, TerrainOp::Lower),
            Tool::Smooth => tools::terrain_dab(&grid, &mut self.doc.height, at, brush, TerrainOp::Smooth),
            Tool::Flatten => tools::terrain_dab(
                &grid,
                &mut self.doc.height,
                at,
                brush,
                TerrainOp::Flatten(stroke.flatten_to),
            ),
            Tool::WallBrush => tools::obstacle_dab(&grid, &mut self.doc.obstacle, at, brush.radius, true),
            Tool::Eraser => tools::obstacle_dab(&grid, &mut self.doc.obstacle, at, brush.radius, false),
            Tool::Discomfort => tools::discomfort_dab(&grid, &mut self.doc.discomfort, at, brush),
            _ => {}
        }
        self.changed();
    }

    fn run_info(&self) -> RunInfo {
        let mut info = self
            .sim
            .latest
            .as_ref()
            .map(|f| f.info.clone())
            .unwrap_or_default();
        if !info.exists {
            // No run yet: the model the next Play runs.
            info.model = crowdfield::params::Params::for_map(self.doc.model, self.doc.params.as_ref()).model;
        }
        info
    }

    fn sim_command(&mut self, c: SimCommand) {
        use crate::simrun::SimControl;
        let exists = self.sim.latest.as_ref().is_some_and(|f| f.info.exists);
        match c {
            SimCommand::Play => {
                if !exists {
                    self.sim
                        .send(SimControl::Start(Box::new(self.doc.to_scene()), self.run.local));
                }
                self.sim.send(SimControl::Play(true));
                self.run.playing = true;
            }
            SimCommand::Pause => {
                self.sim.send(SimControl::Play(false));
                self.run.playing = false;
            }
            SimCommand::Step => {
                if !exists {
                    self.sim
                        .send(SimControl::Start(Box::new(self.doc.to_scene()), self.run.local));
                }
                self.sim.send(SimControl::Step);
                self.run.playing = false;
            }
            SimCommand::Reset => {
                self.sim.send(SimControl::Reset);
                self.run.playing = false;
            }
        }
    }

    /// Opens the map at `path`; on failure the current map stays and the error shows.
    pub fn open(&mut self, path: &Path) {
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
    fn recover(&mut self) {
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

impl eframe::App for EditorApp {
    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        self.show(ui);
        if self.pending_close {
            ui.ctx().send_viewport_cmd(egui::ViewportCommand::Close);
        }
    }
}
