//! The side panels, one per file, each a struct with a `ui` method that returns commands.

pub mod file;
pub mod groups;
pub mod layers;
pub mod run;
pub mod status;
pub mod tools;
