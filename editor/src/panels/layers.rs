//! The layer panel: which layers are shown and which field colours the map.

use crate::layers::{FieldLayer, LayerVisibility, NOT_CLEAR_RGB};
use crate::simrun::PlaceMaps;
use crowdfield::run::planner::{LOS_COLORS, level_label};

/// The layer panel's state.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LayersPanel {
    /// The switches.
    pub vis: LayerVisibility,
}

impl LayersPanel {
    /// Draws the panel; returns true when a switch changed (the image must be recomposed).
    /// `places` are the run's maps, for the legend of the run layers.
    pub fn ui(&mut self, ui: &mut egui::Ui, places: Option<&PlaceMaps>) -> bool {
        let Self { vis } = self;
        let before = vis.clone();
        ui.heading("Layers");
        ui.checkbox(&mut vis.terrain, "Terrain");
        ui.checkbox(&mut vis.obstacles, "Obstacles");
        ui.checkbox(&mut vis.discomfort, "Discomfort layer");
        ui.checkbox(&mut vis.areas, "Areas");
        ui.checkbox(&mut vis.isolines, "Isolines");
        ui.checkbox(&mut vis.arrows, "Gradient");
        ui.label("Field (selected group)");
        for f in FieldLayer::ALL {
            ui.radio_value(&mut vis.field, f, f.label());
        }
        if vis.field.from_run() {
            run_layer_legend(ui, vis.field, places);
        }
        *vis != before
    }
}

/// A small filled square in `rgb` followed by `text`.
fn swatch(ui: &mut egui::Ui, rgb: [u8; 3], text: &str) {
    ui.horizontal(|ui| {
        let (rect, _) = ui.allocate_exact_size(egui::vec2(12.0, 12.0), egui::Sense::hover());
        ui.painter()
            .rect_filled(rect, 0.0, egui::Color32::from_rgb(rgb[0], rgb[1], rgb[2]));
        ui.label(text);
    });
}

/// The legend of a run layer: the levels of service with their densities (Fruin, walkways),
/// or the clear-time range; a hint when there is no run yet.
fn run_layer_legend(ui: &mut egui::Ui, field: FieldLayer, places: Option<&PlaceMaps>) {
    let Some(places) = places else {
        ui.weak("Run the map (Run panel) to see this layer.");
        return;
    };
    match field {
        FieldLayer::LevelOfService => {
            ui.label("Worst level reached (Fruin, walkways)");
            for (i, rgb) in LOS_COLORS.iter().enumerate() {
                swatch(ui, *rgb, &level_label(i));
            }
        }
        _ => {
            let last = places
                .clear_time
                .iter()
                .filter(|v| v.is_finite())
                .fold(0.0f64, |m, &v| m.max(v));
            ui.label(format!("Clear at 0 to {last:.1} s (viridis)"));
            if places.clear_time.iter().any(|v| v.is_infinite()) {
                swatch(ui, NOT_CLEAR_RGB, "still occupied");
            }
            ui.weak("Grey: nobody stood here.");
        }
    }
}
