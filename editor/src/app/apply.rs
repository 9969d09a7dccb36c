//! Applying the commands the panels return: history, painting, groups, files, quitting and
//! the simulation. Every change of the map goes through [`EditorApp::apply`].

use super::{EditorApp, Stroke, new_size_ok};
use crate::command::{Command, SimCommand};
use crate::doc::{Document, GroupDoc};
use crate::history::Part;
use crate::panels::run::RunInfo;
use crate::tools::{self, TerrainOp, Tool};

impl EditorApp {
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
    pub(super) fn apply_history(&mut self, command: Command) {
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
    pub(super) fn apply_paint(&mut self, command: Command) {
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
    pub(super) fn apply_groups(&mut self, command: Command) {
        match command {
            Command::AddGoal { group, shape } => {
                if self.ensure_group(group) {
                    self.record_groups("Goal area", None);
                    self.doc.groups[group].goals.push(crate::doc::GoalArea {
                        name: None,
                        shape,
                        width: None,
                        closed: false,
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
                        source: None,
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
    pub(super) fn apply_file(&mut self, command: Command) {
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
            // Another map's file is replaced only when the user says so (a Save as would
            // otherwise overwrite it, and its rasters, without a word).
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
    pub(super) fn apply_quit(&mut self, command: Command) {
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

    pub(super) fn ensure_group(&mut self, group: usize) -> bool {
        if group < self.doc.groups.len() {
            return true;
        }
        self.message = "Add a group first".into();
        false
    }

    pub(super) fn record_groups(&mut self, label: &str, coalesce: Option<String>) {
        if coalesce.is_none() {
            self.history.seal();
        }
        self.history
            .record(label, Part::Groups(self.doc.groups.clone()), coalesce);
    }

    pub(super) fn dab(&mut self, tool: Tool, at: [f64; 2], first: bool) {
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

    pub(super) fn run_info(&self) -> RunInfo {
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

    pub(super) fn sim_command(&mut self, c: SimCommand) {
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
            SimCommand::SetExit { name, open } => {
                if exists {
                    self.sim.send(SimControl::SetExit(name, open));
                }
            }
            SimCommand::MoveObstacle { handle, to } => {
                if exists {
                    self.sim.send(SimControl::MoveObstacle(handle, to));
                }
            }
        }
    }
}
