//! The tool panel: picks the active tool and sets the brush radius, strength, discomfort value
//! and spawn count.

use crate::tools::{BrushSettings, Tool};

/// Largest brush radius offered by the slider, metres.
pub const MAX_BRUSH_RADIUS: f64 = 20.0;
/// Largest discomfort value offered by the slider.
pub const MAX_DISCOMFORT: f32 = 10.0;

/// The tool panel's state.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolsPanel {
    /// The active tool.
    pub tool: Tool,
    /// Brush settings.
    pub brush: BrushSettings,
}

impl Default for ToolsPanel {
    fn default() -> Self {
        Self {
            tool: Tool::WallBrush,
            brush: BrushSettings::default(),
        }
    }
}

impl ToolsPanel {
    /// Draws the panel (tool choice is view state, not an edit: nothing to return).
    pub fn ui(&mut self, ui: &mut egui::Ui, cell_size: f64) {
        let Self { tool, brush } = self;
        ui.heading("Tools");
        ui.label("Terrain");
        ui.horizontal_wrapped(|ui| {
            for t in [Tool::Raise, Tool::Lower, Tool::Smooth, Tool::Flatten] {
                ui.selectable_value(tool, t, t.label());
            }
        });
        ui.label("Obstacles");
        ui.horizontal_wrapped(|ui| {
            for t in [Tool::WallRect, Tool::WallPolygon, Tool::WallBrush, Tool::Eraser] {
                ui.selectable_value(tool, t, t.label());
            }
        });
        ui.label("Areas and view");
        ui.horizontal_wrapped(|ui| {
            for t in [Tool::Discomfort, Tool::Goal, Tool::Spawn, Tool::Pan] {
                ui.selectable_value(tool, t, t.label());
            }
        });
        ui.separator();
        ui.add(
            egui::Slider::new(
                &mut brush.radius,
                (0.5 * cell_size)..=MAX_BRUSH_RADIUS.max(cell_size),
            )
            .suffix(" m")
            .logarithmic(true)
            .text("Radius"),
        );
        ui.add(egui::Slider::new(&mut brush.strength, 0.0..=1.0).text("Strength"));
        ui.add(egui::Slider::new(&mut brush.discomfort_value, 0.0..=MAX_DISCOMFORT).text("Discomfort value"));
        ui.horizontal(|ui| {
            let label = ui.label("Spawn count");
            ui.add(egui::DragValue::new(&mut brush.spawn_count).range(1..=100_000))
                .labelled_by(label.id);
        });
        let hint = match tool {
            Tool::WallPolygon => "Click the corners; click the first one or double-click to close.",
            Tool::Goal | Tool::Spawn => "Drag a rectangle for the selected group.",
            Tool::WallRect => "Drag a rectangle.",
            Tool::Pan => "Drag to pan; scroll to zoom. While a run plays, drag a moving obstacle to move it.",
            _ => "Drag to paint. Middle or right drag pans; scroll zooms.",
        };
        ui.weak(hint);
    }
}
