//! The layer panel: which layers are shown and which field colours the map.

use crate::layers::{FieldLayer, LayerVisibility};

/// The layer panel's state.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LayersPanel {
    /// The switches.
    pub vis: LayerVisibility,
}

impl LayersPanel {
    /// Draws the panel; returns true when a switch changed (the image must be recomposed).
    pub fn ui(&mut self, ui: &mut egui::Ui) -> bool {
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
        *vis != before
    }
}
