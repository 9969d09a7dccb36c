//! The group panel: pick the group the goal/spawn tools and field layers apply to; add,
//! rename, recolour and remove groups; set their speed limits; list and remove their areas;
//! set each spawn area's walker count and pre-movement times.

use crate::command::Command;
use crate::doc::Document;
use crowdfield::map::{MAX_PREMOVEMENT, Premovement};

/// Fastest preferred walking speed offered, m/s: above any human sprint (the map format's
/// limit).
pub const MAX_WALK_SPEED: f64 = 15.0;

/// The pre-movement range a spawn area gets when its "waits" box is ticked, seconds: a
/// typical alarm-to-start spread of an office or venue (RiMEA's examples use such ranges).
pub const DEFAULT_PREMOVEMENT: Premovement = Premovement { min: 5.0, max: 60.0 };

/// The pre-movement rows of spawn area `i`: a "waits" box (off: everyone starts at once) and,
/// when on, a row with the shortest and longest wait, kept in order. Returns true when it
/// changed.
fn premovement_ui(ui: &mut egui::Ui, i: usize, premovement: &mut Option<Premovement>) -> bool {
    let mut changed = false;
    ui.horizontal(|ui| {
        ui.add_space(12.0);
        let mut waits = premovement.is_some();
        if ui
            .checkbox(&mut waits, format!("spawn {i} waits"))
            .on_hover_text(
                "Pre-movement (reaction) time: each walker of this area stands for a time drawn \
                 uniformly between the two values before it starts to walk",
            )
            .changed()
        {
            *premovement = waits.then_some(DEFAULT_PREMOVEMENT);
            changed = true;
        }
    });
    let Some(p) = premovement else {
        return changed;
    };
    ui.horizontal(|ui| {
        ui.add_space(30.0);
        let range = 0.0..=MAX_PREMOVEMENT;
        let min = ui.add(
            egui::DragValue::new(&mut p.min)
                .range(range.clone())
                .clamp_existing_to_range(false)
                .speed(0.5)
                .prefix("from ")
                .suffix(" s"),
        );
        if min.changed() {
            p.max = p.max.max(p.min);
            changed = true;
        }
        let max = ui.add(
            egui::DragValue::new(&mut p.max)
                .range(range)
                .clamp_existing_to_range(false)
                .speed(0.5)
                .prefix("to ")
                .suffix(" s"),
        );
        if max.changed() {
            p.min = p.min.min(p.max);
            changed = true;
        }
    });
    changed
}

/// The group panel's state.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GroupsPanel {
    /// Index of the selected group.
    pub selected: usize,
}

impl GroupsPanel {
    /// Draws the panel and returns the edits made.
    pub fn ui(&mut self, ui: &mut egui::Ui, doc: &Document) -> Vec<Command> {
        let Self { selected } = self;
        let mut commands = Vec::new();
        ui.heading("Groups");
        if *selected >= doc.groups.len() {
            *selected = doc.groups.len().saturating_sub(1);
        }
        ui.horizontal_wrapped(|ui| {
            for (i, g) in doc.groups.iter().enumerate() {
                let c = egui::Color32::from_rgb(g.color[0], g.color[1], g.color[2]);
                ui.selectable_value(selected, i, egui::RichText::new(&g.name).color(c));
            }
        });
        ui.horizontal(|ui| {
            if ui.button("Add group").clicked() {
                commands.push(Command::AddGroup);
                *selected = doc.groups.len();
            }
            if !doc.groups.is_empty() && ui.button("Remove group").clicked() {
                commands.push(Command::RemoveGroup(*selected));
            }
        });
        let Some(group) = doc.groups.get(*selected) else {
            ui.weak("No group: add one, then draw its goal and spawn areas.");
            return commands;
        };
        let index = *selected;
        let mut g = group.clone();
        let mut key = None;
        egui::Grid::new("group settings").num_columns(2).show(ui, |ui| {
            let label = ui.label("Name");
            if ui
                .add(egui::TextEdit::singleline(&mut g.name).desired_width(120.0))
                .labelled_by(label.id)
                .changed()
            {
                key = Some("name");
            }
            ui.end_row();
            ui.label("Colour");
            if ui.color_edit_button_srgb(&mut g.color).changed() {
                key = Some("colour");
            }
            ui.end_row();
            ui.label("Speed min");
            if ui
                .add(
                    egui::DragValue::new(&mut g.speed_min)
                        .range(0.01..=MAX_WALK_SPEED)
                        .clamp_existing_to_range(false)
                        .speed(0.01)
                        .suffix(" m/s"),
                )
                .changed()
            {
                g.speed_max = g.speed_max.max(g.speed_min);
                key = Some("speed");
            }
            ui.end_row();
            ui.label("Speed max");
            if ui
                .add(
                    egui::DragValue::new(&mut g.speed_max)
                        .range(0.01..=MAX_WALK_SPEED)
                        .clamp_existing_to_range(false)
                        .speed(0.01)
                        .suffix(" m/s"),
                )
                .changed()
            {
                g.speed_min = g.speed_min.min(g.speed_max);
                key = Some("speed");
            }
            ui.end_row();
        });
        ui.label(format!("Goals ({})", g.goals.len()));
        for (i, goal) in group.goals.iter().enumerate() {
            ui.horizontal(|ui| {
                ui.label(
                    goal.name
                        .clone()
                        .unwrap_or_else(|| format!("{} goal {i}", group.name)),
                );
                if ui.small_button("Remove goal").clicked() {
                    commands.push(Command::RemoveGoal {
                        group: index,
                        index: i,
                    });
                }
            });
        }
        ui.label(format!(
            "Spawns ({} walkers)",
            g.spawns.iter().fold(0usize, |n, s| n.saturating_add(s.count))
        ));
        for i in 0..g.spawns.len() {
            ui.horizontal(|ui| {
                let label = ui.label(format!("spawn {i}"));
                if ui
                    .add(
                        egui::DragValue::new(&mut g.spawns[i].count)
                            .range(0..=1_000_000)
                            .clamp_existing_to_range(false),
                    )
                    .labelled_by(label.id)
                    .changed()
                {
                    key = Some("count");
                }
                if ui.small_button("Remove spawn").clicked() {
                    commands.push(Command::RemoveSpawn {
                        group: index,
                        index: i,
                    });
                }
            });
            if premovement_ui(ui, i, &mut g.spawns[i].premovement) {
                key = Some("pre-movement");
            }
        }
        if let Some(k) = key {
            commands.push(Command::SetGroup {
                index,
                group: Box::new(g),
                coalesce: format!("group {index} {k}"),
            });
        }
        commands
    }
}
