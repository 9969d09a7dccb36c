//! The Run panel: play, pause, step and reset a simulation of the map, a speed slider, the local
//! layer (none, boids, ORCA, boids + ORCA; applied when a run starts), the live count of
//! walkers evacuated through each exit with the run's collision and jam figures, and a switch
//! per exit that closes or opens it while the crowd runs; it names the model that Play runs.

use crate::command::{Command, SimCommand};
use crowdfield::local::LocalMode;
use crowdfield::names::Named;
use crowdfield::params::Model;
use crowdfield::sim::report::Quality;

/// Fastest simulation speed offered, simulated seconds per real second.
pub const MAX_SIM_SPEED: f32 = 20.0;

/// What the Run panel shows about the current run (filled in by the app).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunInfo {
    /// Whether a run exists.
    pub exists: bool,
    /// Simulated time, seconds.
    pub time: f64,
    /// Steps run.
    pub steps: usize,
    /// Walkers still walking.
    pub walking: usize,
    /// Per group: name and, per exit, (exit name, walkers evacuated through it).
    pub exits: Vec<(String, Vec<(String, usize)>)>,
    /// Each exit name of the run and whether it is open now (the panel toggles them).
    pub exit_open: Vec<(String, bool)>,
    /// The local layer the run was started with.
    pub local: LocalMode,
    /// Collision and jam figures of the run so far.
    pub quality: Option<Quality>,
    /// Set when the run could not start.
    pub error: Option<String>,
    /// The model Play runs: the map's (its `model`, else the one its `params` imply).
    pub model: Model,
    /// The run's warnings so far, in the command's words (a boids layer with nobody to steer,
    /// then at the end agents still inside and the report's warnings).
    pub warnings: Vec<String>,
}

/// The Run panel's state.
#[derive(Clone, Debug, PartialEq)]
pub struct RunPanel {
    /// Whether the run advances by itself.
    pub playing: bool,
    /// Simulated seconds per real second.
    pub speed: f32,
    /// The local layer of the next run (applied on Play or Step when no run exists, so after a
    /// Reset).
    pub local: LocalMode,
}

impl Default for RunPanel {
    fn default() -> Self {
        Self {
            playing: false,
            speed: 1.0,
            local: LocalMode::None,
        }
    }
}

impl RunPanel {
    /// Draws the panel and returns the simulation controls pressed.
    pub fn ui(&mut self, ui: &mut egui::Ui, info: &RunInfo) -> Vec<Command> {
        let Self {
            playing,
            speed,
            local,
        } = self;
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
        egui::ComboBox::from_label("local layer")
            .selected_text(local.name())
            .show_ui(ui, |ui| {
                // Every local layer, by the library's name (the `--local` values of `simulate`).
                for &mode in LocalMode::ALL {
                    ui.selectable_value(local, mode, mode.name());
                }
            })
            .response
            .on_hover_text(
                "Boids and ORCA between the field velocity and the walk; applies when a run starts",
            );
        ui.label(format!("model: {}", info.model.name()))
            .on_hover_text(info.model.purpose());
        if let Some(e) = &info.error {
            ui.colored_label(ui.visuals().error_fg_color, e);
        }
        for w in &info.warnings {
            ui.colored_label(ui.visuals().warn_fg_color, w);
        }
        if info.exists {
            ui.label(format!("t = {:.1} s, {} walking", info.time, info.walking));
            for (group, exits) in &info.exits {
                ui.label(egui::RichText::new(group).strong());
                for (exit, n) in exits {
                    ui.label(format!("  {exit}: {n} evacuated"));
                }
            }
            if !info.exit_open.is_empty() {
                ui.label(egui::RichText::new("Exits open").strong())
                    .on_hover_text(
                        "Close or open an exit while the crowd runs: the field replans in the next step",
                    );
                for (name, open) in &info.exit_open {
                    let mut now = *open;
                    if ui.checkbox(&mut now, name.as_str()).changed() {
                        commands.push(Command::Sim(SimCommand::SetExit {
                            name: name.clone(),
                            open: now,
                        }));
                    }
                }
            }
            if let Some(q) = &info.quality {
                ui.label(format!(
                    "local layer {}: {:.1} collisions/step (max {}), up to {} jammed",
                    info.local.name(),
                    q.collisions_per_step,
                    q.max_collisions,
                    q.max_jammed
                ));
            }
        }
        commands
    }
}
