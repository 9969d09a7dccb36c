//! The Run panel: play, pause, step and reset a simulation of the map, a speed slider, and the
//! live count of walkers evacuated through each exit.

use crate::command::{Command, SimCommand};

/// Fastest simulation speed offered, simulated seconds per real second.
pub const MAX_SIM_SPEED: f32 = 20.0;

/// What the Run panel shows about the current run (filled in by the app).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunInfo {
    /// Whether a run exists.
    pub exists: bool,
    /// Simulated time, seconds.
    pub time: f64,
    /// Walkers still walking.
    pub walking: usize,
    /// Per group: name and, per exit, (exit name, walkers evacuated through it).
    pub exits: Vec<(String, Vec<(String, usize)>)>,
    /// Set when the run could not start.
    pub error: Option<String>,
}

/// The Run panel's state.
#[derive(Clone, Debug, PartialEq)]
pub struct RunPanel {
    /// Whether the run advances by itself.
    pub playing: bool,
    /// Simulated seconds per real second.
    pub speed: f32,
}

impl Default for RunPanel {
    fn default() -> Self {
        Self {
            playing: false,
            speed: 1.0,
        }
    }
}

impl RunPanel {
    /// Draws the panel and returns the simulation controls pressed.
    pub fn ui(&mut self, ui: &mut egui::Ui, info: &RunInfo) -> Vec<Command> {
        let Self { playing, speed } = self;
        let mut commands = Vec::new();
        ui.heading("Run");
        ui.horizontal(|ui| {
            if *playing {
                if ui.button("Pause").clicked() {
                    commands.push(Command::Sim(SimCommand::Pause));
                }
            } else if ui.button("Play").clicked() {
                commands.push(Command::Sim(SimCommand::Play));
            }
            if ui.button("Step").clicked() {
                commands.push(Command::Sim(SimCommand::Step));
            }
            if ui.add_enabled(info.exists, egui::Button::new("Reset")).clicked() {
                commands.push(Command::Sim(SimCommand::Reset));
            }
        });
        ui.add(
            egui::Slider::new(speed, 0.1..=MAX_SIM_SPEED)
                .logarithmic(true)
                .text("× real time"),
        );
        if let Some(e) = &info.error {
            ui.colored_label(ui.visuals().error_fg_color, e);
        }
        if info.exists {
            ui.label(format!("t = {:.1} s, {} walking", info.time, info.walking));
            for (group, exits) in &info.exits {
                ui.label(egui::RichText::new(group).strong());
                for (exit, n) in exits {
                    ui.label(format!("  {exit}: {n} evacuated"));
                }
            }
        }
        commands
    }
}
