//! Undo and redo: every edit records the part of the [`Document`] it is about to change.
//!
//! An entry holds a copy of one part (a raster, the groups, or the whole document). Undo swaps
//! that copy with the document's current part and moves the entry to the redo stack, so the
//! same entry, swapped again, redoes the edit. Consecutive edits with the same coalescing key
//! (typing a group's name, dragging a slider) collapse into one entry.

use crate::doc::{Document, GroupDoc};
use ndarray::Array2;

/// Most undo steps kept.
pub const MAX_UNDO: usize = 200;

/// Most memory the undo steps take together (the newest step is always kept): on a 256x256
/// map a step is at most 256 KiB and all 200 fit; on a 4096x4096 map a height stroke copies
/// 64 MiB, and 200 of them (12.5 GiB) would exhaust the memory.
pub const MAX_UNDO_BYTES: usize = 1 << 30;

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
    /// Bytes this copy holds (the rasters' cells; a group's areas are small next to them).
    pub fn bytes(&self) -> usize {
        fn rasters(d: &Document) -> usize {
            d.height.len() * 4 + d.obstacle.len() + d.discomfort.len() * 4
        }
        match self {
            Part::Height(a) | Part::Discomfort(a) => a.len() * std::mem::size_of::<f32>(),
            Part::Obstacle(a) => a.len(),
            Part::Groups(g) => g.len() * std::mem::size_of::<GroupDoc>(),
            Part::Document(d) => rasters(d),
        }
    }

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
        let mut bytes: usize = self.undo.iter().map(|e| e.part.bytes()).sum();
        let mut oldest = 0;
        while bytes > MAX_UNDO_BYTES && oldest + 1 < self.undo.len() {
            bytes -= self.undo[oldest].part.bytes();
            oldest += 1;
        }
        self.undo.drain(..oldest);
    }

    /// Undo steps kept.
    pub fn undo_len(&self) -> usize {
        self.undo.len()
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
    fn the_history_keeps_to_its_memory_budget_and_always_the_newest_step() {
        let mut h = History::default();
        // 48 MiB per step (a 3456x3456 height raster would be: stand-ins of the same size).
        let step = || Part::Height(Array2::zeros((3 << 10, 4 << 10)));
        assert_eq!(step().bytes(), 48 << 20);
        for i in 0..40 {
            h.record(&format!("stroke {i}"), step(), None);
        }
        assert_eq!(
            h.undo_len(),
            (MAX_UNDO_BYTES / (48 << 20)),
            "the oldest steps dropped"
        );
        assert_eq!(h.undo_label(), Some("stroke 39"));
        // One step over the whole budget is still kept: its edit can be undone.
        h.record("huge", Part::Height(Array2::zeros((1 << 14, 1 << 14))), None);
        assert_eq!(h.undo_len(), 1);
        assert_eq!(h.undo_label(), Some("huge"));
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
