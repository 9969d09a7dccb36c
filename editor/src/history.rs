//! Undo and redo: every edit records the part of the [`Document`] it is about to change.
//!
//! An entry holds a copy of one part (a raster, the groups, or the whole document). Undo swaps
//! that copy with the document's current part and moves the entry to the redo stack, so the
//! same entry, swapped again, redoes the edit. Consecutive edits with the same coalescing key
//! (typing a group's name, dragging a slider) collapse into one entry.

use crate::doc::{Document, GroupDoc};
use ndarray::Array2;

/// Most undo steps kept: a 256x256 map's largest entry (a height raster) is 256 KiB, so the
/// history stays under about 50 MiB.
pub const MAX_UNDO: usize = 200;

/// The part of the document an entry restores.
#[derive(Clone, Debug, PartialEq)]
pub enum Part {
    /// Terrain height.
    Height(Array2<f32>),
    /// Obstacles.
    Obstacle(Array2<bool>),
    /// Discomfort.
    Discomfort(Array2<f32>),
    /// Groups with their areas.
    Groups(Vec<GroupDoc>),
    /// Everything (new map, resize).
    Document(Box<Document>),
}

impl Part {
    /// Swaps this copy with the document's corresponding part.
    fn swap_with(&mut self, doc: &mut Document) {
        match self {
            Part::Height(a) => std::mem::swap(a, &mut doc.height),
            Part::Obstacle(a) => std::mem::swap(a, &mut doc.obstacle),
            Part::Discomfort(a) => std::mem::swap(a, &mut doc.discomfort),
            Part::Groups(g) => std::mem::swap(g, &mut doc.groups),
            Part::Document(d) => std::mem::swap(d.as_mut(), doc),
        }
    }
}

/// One undoable edit.
#[derive(Clone, Debug)]
pub struct Entry {
    /// What the edit was ("Raise", "Wall rectangle"), shown on the Undo button's tooltip.
    pub label: String,
    /// The part as it was before the edit (after an undo: as it was after the edit).
    pub part: Part,
    /// Edits with the same key, one after another, merge into one entry.
    pub coalesce: Option<String>,
}

/// The undo and redo stacks.
#[derive(Clone, Debug, Default)]
pub struct History {
    undo: Vec<Entry>,
    redo: Vec<Entry>,
}

impl History {
    /// Records an edit about to be made (or just made), given the part as it was before.
    /// Clears the redo stack. An edit whose coalescing key equals the last entry's is merged
    /// into it (the older "before" is kept).
    pub fn record(&mut self, label: &str, before: Part, coalesce: Option<String>) {
        self.redo.clear();
        if let (Some(key), Some(last)) = (&coalesce, self.undo.last())
            && last.coalesce.as_ref() == Some(key)
            && std::mem::discriminant(&last.part) == std::mem::discriminant(&before)
        {
            return;
        }
        self.undo.push(Entry {
            label: label.to_string(),
            part: before,
            coalesce,
        });
        if self.undo.len() > MAX_UNDO {
            self.undo.remove(0);
        }
    }

    /// Ends coalescing: the next edit starts a new entry even with the same key.
    pub fn seal(&mut self) {
        if let Some(last) = self.undo.last_mut() {
            last.coalesce = None;
        }
    }

    /// Undoes the last edit; returns its label, or `None` when there is nothing to undo.
    pub fn undo(&mut self, doc: &mut Document) -> Option<String> {
        let mut e = self.undo.pop()?;
        e.part.swap_with(doc);
        e.coalesce = None;
        let label = e.label.clone();
        self.redo.push(e);
        Some(label)
    }

    /// Redoes the last undone edit; returns its label, or `None` when there is nothing to redo.
    pub fn redo(&mut self, doc: &mut Document) -> Option<String> {
        let mut e = self.redo.pop()?;
        e.part.swap_with(doc);
        let label = e.label.clone();
        self.undo.push(e);
        Some(label)
    }

    /// Label of the edit Undo would undo.
    pub fn undo_label(&self) -> Option<&str> {
        self.undo.last().map(|e| e.label.as_str())
    }

    /// Label of the edit Redo would redo.
    pub fn redo_label(&self) -> Option<&str> {
        self.redo.last().map(|e| e.label.as_str())
    }

    /// Forgets everything (after opening another map).
    pub fn clear(&mut self) {
        self.undo.clear();
        self.redo.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn undo_redo_swap_round_trip() {
        let mut doc = Document::new("t", 4, 3, 1.0);
        let mut h = History::default();
        let original = doc.clone();
        h.record("Raise", Part::Height(doc.height.clone()), None);
        doc.height[(1, 1)] = 2.0;
        let edited = doc.clone();
        assert_eq!(h.undo(&mut doc).as_deref(), Some("Raise"));
        assert_eq!(doc, original);
        assert_eq!(h.undo(&mut doc), None);
        assert_eq!(h.redo(&mut doc).as_deref(), Some("Raise"));
        assert_eq!(doc, edited);
        assert_eq!(h.redo(&mut doc), None);
    }

    #[test]
    fn coalescing_merges_until_sealed_and_new_edit_clears_redo() {
        let mut doc = Document::new("t", 2, 2, 1.0);
        doc.groups.push(GroupDoc::new("a", 0));
        let mut h = History::default();
        let original = doc.clone();
        for name in ["ab", "abc"] {
            h.record("Rename", Part::Groups(doc.groups.clone()), Some("g0".into()));
            doc.groups[0].name = name.into();
        }
        h.seal();
        h.record("Rename", Part::Groups(doc.groups.clone()), Some("g0".into()));
        doc.groups[0].name = "abcd".into();
        h.undo(&mut doc);
        assert_eq!(doc.groups[0].name, "abc");
        h.undo(&mut doc);
        assert_eq!(doc, original);
        h.redo(&mut doc);
        h.record("Raise", Part::Height(doc.height.clone()), None);
        assert_eq!(h.redo_label(), None);
    }
}
