//! The status bar: cursor readout (metres and cells), recompute indicator, last message.

use crate::recompute::Recompute;
use crowdfield::grid::Grid;

/// The status bar (stateless: everything it shows is passed in).
#[derive(Clone, Copy, Debug, Default)]
pub struct StatusBar;

impl StatusBar {
    /// Draws the bar.
    pub fn ui(
        &mut self,
        ui: &mut egui::Ui,
        grid: &Grid,
        cursor: Option<[f64; 2]>,
        recompute: &Recompute,
        message: &str,
        timings: bool,
    ) {
        ui.horizontal(|ui| {
            ui.label(cursor_readout(grid, cursor));
            ui.separator();
            if recompute.is_running() {
                ui.spinner();
                let ms = recompute.running_for().map(|d| d.as_millis()).unwrap_or(0);
                ui.label(format!("Recomputing fields… {ms} ms"));
            } else if recompute.error.is_some() {
                ui.label("Fields not updated");
            } else if let Some(s) = recompute.last_seconds.filter(|_| timings) {
                ui.label(format!("Fields up to date (last recompute {:.0} ms)", s * 1000.0));
            } else if recompute.last_seconds.is_some() {
                ui.label("Fields up to date");
            } else {
                ui.label("Fields not computed");
            }
            if let Some(e) = &recompute.error {
                ui.separator();
                ui.colored_label(ui.visuals().error_fg_color, e);
            }
            if !message.is_empty() {
                ui.separator();
                ui.label(message);
            }
        });
    }
}

/// "x 12.30 m  y 4.05 m  cell (row 8, col 24)", or the grid size when the pointer is outside.
pub fn cursor_readout(grid: &Grid, cursor: Option<[f64; 2]>) -> String {
    match cursor {
        Some([x, y]) => {
            let cell = match grid.cell_of(x, y) {
                Some((r, c)) => format!("cell (row {r}, col {c})"),
                None => "outside the map".to_string(),
            };
            format!("x {x:.2} m  y {y:.2} m  {cell}")
        }
        None => format!(
            "{} x {} cells of {} m ({:.1} x {:.1} m)",
            grid.cols,
            grid.rows,
            grid.cell_size,
            grid.width(),
            grid.height()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readout_names_metres_and_cells() {
        let g = Grid::new(10, 8, 0.5);
        assert_eq!(
            cursor_readout(&g, Some([1.26, 0.74])),
            "x 1.26 m  y 0.74 m  cell (row 1, col 2)"
        );
        assert!(cursor_readout(&g, Some([-1.0, 0.0])).ends_with("outside the map"));
        assert_eq!(cursor_readout(&g, None), "10 x 8 cells of 0.5 m (5.0 x 4.0 m)");
    }
}
