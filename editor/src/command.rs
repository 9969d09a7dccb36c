//! What the user asked for: the panels return commands and the app applies them after
//! drawing, in one place ([`crate::app::EditorApp::apply`]), which is where undo is recorded.

use crate::doc::{AreaShape, GroupDoc};
use crate::tools::Tool;
use std::path::PathBuf;

/// One request from the interface.
#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    /// Undo the last edit.
    Undo,
    /// Redo the last undone edit.
    Redo,
    /// One brush dab of `tool` at world point `at`; `first` starts a new stroke.
    Dab {
        /// The brush.
        tool: Tool,
        /// Centre of the dab, metres.
        at: [f64; 2],
        /// True on the first dab of a stroke.
        first: bool,
    },
    /// The end of a brush stroke (the pointer was released): triggers the recompute.
    EndStroke,
    /// Blocks the cells of a rectangle given by two opposite corners, metres.
    WallRect {
        /// One corner.
        a: [f64; 2],
        /// The opposite corner.
        b: [f64; 2],
    },
    /// Blocks the cells inside a polygon, metres.
    WallPolygon {
        /// Vertices.
        points: Vec<[f64; 2]>,
    },
    /// Adds a goal area to a group.
    AddGoal {
        /// Group index.
        group: usize,
        /// The area.
        shape: AreaShape,
    },
    /// Adds a spawn area to a group.
    AddSpawn {
        /// Group index.
        group: usize,
        /// The area.
        shape: AreaShape,
        /// Number of walkers.
        count: usize,
    },
    /// Removes a goal area.
    RemoveGoal {
        /// Group index.
        group: usize,
        /// Goal index.
        index: usize,
    },
    /// Removes a spawn area.
    RemoveSpawn {
        /// Group index.
        group: usize,
        /// Spawn index.
        index: usize,
    },
    /// Adds a new group.
    AddGroup,
    /// Removes a group.
    RemoveGroup(usize),
    /// Replaces a group's settings (name, colour, speeds, spawn counts); edits with the same
    /// `coalesce` key in a row are one undo step (typing a name).
    SetGroup {
        /// Group index.
        index: usize,
        /// The new settings (boxed: a group is far larger than the other commands).
        group: Box<GroupDoc>,
        /// Coalescing key, e.g. "group 0 name".
        coalesce: String,
    },
    /// Replaces the map by a new flat one.
    New {
        /// Columns.
        cols: usize,
        /// Rows.
        rows: usize,
        /// Cell edge, metres.
        cell_size: f64,
        /// Where it will be saved.
        path: PathBuf,
    },
    /// Opens a map file.
    Open(PathBuf),
    /// Saves to the current path.
    Save,
    /// Saves to a new path, which becomes the current one.
    SaveAs(PathBuf),
    /// Save over the existing file the held-back Save as named.
    ReplaceFile,
    /// Keep that file: drop the Save as.
    CancelReplace,
    /// Loads the offered recovery file.
    Recover,
    /// Deletes the offered recovery file.
    DiscardRecovery,
    /// Writes the map view as a PNG.
    ExportView(PathBuf),
    /// Writes every field as PNGs into a folder.
    ExportFields(PathBuf),
    /// Answer to the unsaved-changes question on quit: save first (`true`) or discard.
    Quit {
        /// Save before quitting.
        save: bool,
    },
    /// Keep the editor open after all.
    CancelQuit,
    /// Go on with the Open or New that was held back for unsaved changes, discarding them.
    DiscardAndContinue,
    /// Save the map, then go on with the Open or New that was held back.
    SaveAndContinue,
    /// Keep the map: drop the Open or New that was held back.
    CancelDiscard,
    /// Simulation controls.
    Sim(SimCommand),
}

/// Simulation controls of the Run panel.
#[derive(Clone, Debug, PartialEq)]
pub enum SimCommand {
    /// Start (from the map if no run exists) or resume.
    Play,
    /// Pause.
    Pause,
    /// One step.
    Step,
    /// Drop the run.
    Reset,
    /// Open (`open`) or close every exit named `name` in the running simulation: the
    /// potentials see it in the next step (the map's own `closed` flags stay as they are).
    SetExit {
        /// The exit's (goal's) name.
        name: String,
        /// Open or closed.
        open: bool,
    },
    /// Put the running simulation's moving obstacle `handle` at `to` (metres), standing still
    /// there: the potentials plan around it from the next step.
    MoveObstacle {
        /// The obstacle's handle (the map's movers are 0, 1, ... in the map's order).
        handle: u32,
        /// Where it goes, metres.
        to: [f64; 2],
    },
}
