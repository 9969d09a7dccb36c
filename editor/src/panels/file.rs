//! The file bar: open, new, save, save-as and export, with paths typed into text fields (no
//! native dialogs: they need a desktop portal that CI machines lack), plus undo and redo.

use crate::command::Command;
use crate::history::History;
use std::path::PathBuf;

/// Largest grid side offered for a new map, cells.
pub const MAX_NEW_GRID: usize = 4096;

/// The file bar's state: what has been typed.
#[derive(Clone, Debug, PartialEq)]
pub struct FilePanel {
    /// Path typed for Open / Save as.
    pub path: String,
    /// New map: columns.
    pub new_cols: usize,
    /// New map: rows.
    pub new_rows: usize,
    /// New map: cell size, metres.
    pub new_cell: f64,
    /// Path for exports (a PNG for the view; a folder for the fields).
    pub export: String,
    /// Whether the New-map fields are open.
    pub new_open: bool,
}

impl Default for FilePanel {
    fn default() -> Self {
        Self {
            path: "maps/untitled.json".into(),
            new_cols: 128,
            new_rows: 128,
            new_cell: 0.5,
            export: "out/view.png".into(),
            new_open: false,
        }
    }
}

impl FilePanel {
    /// Draws the bar and returns what was asked.
    pub fn ui(&mut self, ui: &mut egui::Ui, history: &History, has_path: bool) -> Vec<Command> {
        let Self {
            path,
            new_cols,
            new_rows,
            new_cell,
            export,
            new_open,
        } = self;
        let mut commands = Vec::new();
        ui.horizontal(|ui| {
            let label = ui.label("Map file");
            ui.add(egui::TextEdit::singleline(path).desired_width(220.0))
                .labelled_by(label.id);
            if ui.button("Open").clicked() {
                commands.push(Command::Open(PathBuf::from(path.trim())));
            }
            if ui.add_enabled(has_path, egui::Button::new("Save")).clicked() {
                commands.push(Command::Save);
            }
            if ui.button("Save as").clicked() {
                commands.push(Command::SaveAs(PathBuf::from(path.trim())));
            }
            ui.toggle_value(new_open, "New map…");
            ui.separator();
            let undo = ui.add_enabled(history.undo_label().is_some(), egui::Button::new("Undo"));
            if undo.clicked() {
                commands.push(Command::Undo);
            }
            if let Some(l) = history.undo_label() {
                undo.on_hover_text(format!("Undo {l} (Ctrl+Z)"));
            }
            let redo = ui.add_enabled(history.redo_label().is_some(), egui::Button::new("Redo"));
            if redo.clicked() {
                commands.push(Command::Redo);
            }
            if let Some(l) = history.redo_label() {
                redo.on_hover_text(format!("Redo {l} (Ctrl+Shift+Z)"));
            }
            ui.separator();
            let label = ui.label("Export to");
            ui.add(egui::TextEdit::singleline(export).desired_width(140.0))
                .labelled_by(label.id);
            if ui.button("Export view").clicked() {
                commands.push(Command::ExportView(PathBuf::from(export.trim())));
            }
            if ui.button("Export fields").clicked() {
                commands.push(Command::ExportFields(PathBuf::from(export.trim())));
            }
        });
        if *new_open {
            ui.horizontal(|ui| {
                let l = ui.label("Columns");
                ui.add(egui::DragValue::new(new_cols).range(1..=MAX_NEW_GRID))
                    .labelled_by(l.id);
                let l = ui.label("Rows");
                ui.add(egui::DragValue::new(new_rows).range(1..=MAX_NEW_GRID))
                    .labelled_by(l.id);
                let l = ui.label("Cell size");
                ui.add(
                    egui::DragValue::new(new_cell)
                        .range(0.01..=100.0)
                        .speed(0.01)
                        .suffix(" m"),
                )
                .labelled_by(l.id);
                if ui.button("Create").clicked() {
                    commands.push(Command::New {
                        cols: *new_cols,
                        rows: *new_rows,
                        cell_size: *new_cell,
                        path: PathBuf::from(path.trim()),
                    });
                    *new_open = false;
                }
            });
        }
        commands
    }
}
