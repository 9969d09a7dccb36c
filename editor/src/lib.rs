//! # crowdfield-editor
//!
//! The desktop map editor of crowdfield (eframe/egui): paint terrain, obstacles and discomfort,
//! draw goal and spawn areas per group, watch the potential, gradient, density and speed fields
//! recompute in a background thread, run the simulation, and save maps in the JSON map format.
//!
//! The code follows one rule for state: [`doc::Document`] is what is saved; the panels
//! (`panels/*.rs`, one per file) hold interface state and return [`command::Command`]s; the
//! app ([`app::EditorApp::apply`]) applies them after drawing, records undo
//! ([`history::History`]) and schedules the background recompute ([`recompute::Recompute`]).

pub mod app;
pub mod command;
pub mod doc;
pub mod history;
pub mod layers;
pub mod mapio;
pub mod panels;
pub mod recompute;
pub mod simrun;
pub mod tools;
pub mod viewport;

pub use app::EditorApp;
pub use doc::Document;
