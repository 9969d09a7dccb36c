//! `crowdfield-editor [MAP.json]`: opens the map editor on a map file (a new map when the file
//! does not exist yet, a demonstration map when no file is given).

use crowdfield_editor::{Document, EditorApp};
use std::path::PathBuf;

/// Initial window size, points: room for both side panels and a square map view.
const WINDOW_SIZE: [f32; 2] = [1280.0, 800.0];
/// Size of the demonstration map opened without a file, cells.
const DEMO_SIZE: (usize, usize) = (96, 64);

fn main() -> eframe::Result {
    let path = std::env::args_os().nth(1).map(PathBuf::from);
    let options = eframe::NativeOptions {
        viewport: egui::ViewportBuilder::default()
            .with_inner_size(WINDOW_SIZE)
            .with_title("crowdfield editor"),
        ..Default::default()
    };
    eframe::run_native(
        "crowdfield editor",
        options,
        Box::new(move |cc| {
            let ctx = Some(cc.egui_ctx.clone());
            let app = match path {
                Some(p) => EditorApp::open_path(&p, ctx),
                None => EditorApp::new(Document::demo(DEMO_SIZE.0, DEMO_SIZE.1), None, ctx),
            };
            Ok(Box::new(app))
        }),
    )
}
