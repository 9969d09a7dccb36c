//! What crowdfield may delete or replace: only files it wrote itself.
//!
//! Two pieces keep that promise:
//! - [`OwnedDir`]: a folder whose writer keeps a manifest (`.crowdfield-batch.json`) of the files
//!   it wrote, with their sizes (files in sub-folders as `frames/frame_00000.png`). A later run
//!   removes or replaces only files the manifest lists (at the size it recorded); a folder
//!   holding anything else is refused, naming the first foreign entries, unless the caller
//!   forces it. `batch` writes each map's folder this way, clearing the earlier run's files
//!   first ([`OwnedDir::open`]); `solve`, `simulate` and `verify` keep them until the new run has
//!   succeeded ([`OwnedDir::open_replacing`]; `verify` then writes its files as one set,
//!   [`OwnedDir::write_all`]); the top of a batch's `OUT/` is shared
//!   with the maps' folders and checks only the names the batch writes there
//!   ([`OwnedDir::open_shared`]).
//! - [`StagedDir`]: a folder filled under a temporary name beside its final place and swapped in
//!   at the end, so a killed run leaves the earlier folder whole. `simulate` writes `frames/`
//!   this way.
//!
//! Neither follows a symbolic link to delete: a linked folder is refused, a linked entry is
//! foreign.

use crate::error::{Error, Result};
use crate::text::{escape_os, show_path};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Name of the manifest an [`OwnedDir`] keeps of the files written into it.
pub const MANIFEST_FILE: &str = ".crowdfield-batch.json";

/// The manifest's contents: each file written, with its size once complete (`null` while it
/// is being written: an interrupted run's file is still known by name).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
struct Manifest {
    /// What wrote the folder (`"crowdfield batch"`).
    writer: String,
    /// File name → size in bytes (`None` until the run completed).
    files: BTreeMap<String, Option<u64>>,
}

/// Whether `path` is a symbolic link (not followed).
pub fn is_symlink(path: &Path) -> bool {
    path.symlink_metadata().is_ok_and(|m| m.file_type().is_symlink())
}

/// If `name` is the temporary file [`crate::io::AtomicFile`] writes for `target`
/// (`.<target>.<pid>.tmp`), `target`.
fn atomic_temp_target(name: &str) -> Option<&str> {
    let rest = name.strip_prefix('.')?.strip_suffix(".tmp")?;
    let (target, pid) = rest.rsplit_once('.')?;
    (!pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit())).then_some(target)
}

/// How an [`OwnedDir`] treats what an earlier run of its writer left.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// The earlier run's files are removed when the folder is opened.
    Clear,
    /// The earlier run's files stay until [`OwnedDir::finish`], which removes those the new run
    /// did not write again: a run that fails or is killed leaves the earlier one's files whole.
    Replace,
    /// The folder is shared with files the writer does not manage (a batch's `OUT/`, which
    /// holds each map's own folder and maybe the maps themselves): nothing is removed and other
    /// entries are not looked at, but a name the run claims must be absent or the writer's own.
    Shared,
}

/// An entry of the folder that its writer did not write: its name (relative to the folder)
/// and why it is not the writer's.
type Foreign = (String, &'static str);

/// A folder written by one kind of run, which records every file it writes (see the module
/// documentation). File names are relative to the folder; a name with `/` is a file in a
/// sub-folder (`frames/frame_00000.png`), and a sub-folder is the writer's while every entry
/// in it is.
#[derive(Debug)]
pub struct OwnedDir {
    dir: PathBuf,
    writer: String,
    manifest: Manifest,
    /// Files an earlier run recorded that this run has not written again ([`Mode::Replace`]).
    earlier: std::collections::BTreeSet<String>,
    mode: Mode,
    force: bool,
}

impl OwnedDir {
    /// Opens `dir` for a new run by `writer`: creates it when missing, and otherwise removes
    /// the files an earlier run of the same writer recorded (and the temporary files of its
    /// atomic writes). With `force`, entries the manifest does not list are left in place (the
    /// new run's files replace those of the same name); without it they refuse the folder.
    ///
    /// # Errors
    /// [`Error::Invalid`] naming `dir` when it is a symbolic link or not a folder, or (without
    /// `force`) when it holds an entry the manifest does not list (named: the first in name
    /// order) or a listed file whose size changed since it was written; nothing is deleted
    /// then. [`Error::Io`] when it cannot be read or written.
    pub fn open(dir: &Path, writer: &str, force: bool) -> Result<OwnedDir> {
        OwnedDir::open_as(dir, writer, force, Mode::Clear)
    }

    /// As [`OwnedDir::open`], but the files an earlier run of `writer` left stay in place
    /// until [`OwnedDir::finish`], which removes those this run did not write again (and the
    /// sub-folders that leaves empty). A run that fails or is killed before then leaves the
    /// earlier run's files whole, and they stay the writer's.
    ///
    /// # Errors
    /// As [`OwnedDir::open`].
    pub fn open_replacing(dir: &Path, writer: &str, force: bool) -> Result<OwnedDir> {
        OwnedDir::open_as(dir, writer, force, Mode::Replace)
    }

    /// Opens `dir`, created when missing, as a folder `writer` shares with entries it does not
    /// manage: nothing in it is removed, and entries the run does not claim are not looked at.
    /// [`OwnedDir::claim`] refuses (without `force`) a name whose file exists and is not one
    /// this writer recorded.
    ///
    /// # Errors
    /// [`Error::Invalid`] naming `dir` when it is a symbolic link or not a folder;
    /// [`Error::Io`] when it cannot be read or written.
    pub fn open_shared(dir: &Path, writer: &str, force: bool) -> Result<OwnedDir> {
        OwnedDir::open_as(dir, writer, force, Mode::Shared)
    }

    fn open_as(dir: &Path, writer: &str, force: bool, mode: Mode) -> Result<OwnedDir> {
        let shown = show_path(dir);
        if is_symlink(dir) {
            return Err(Error::invalid(
                shown,
                "output folder",
                format!(
                    "is a symbolic link: {writer} writes and deletes only inside real folders it \
                     made, never through a link; remove the link or choose another output folder"
                ),
            ));
        }
        let fresh = |dir: &Path| OwnedDir {
            dir: dir.to_path_buf(),
            writer: writer.to_string(),
            manifest: Manifest {
                writer: writer.to_string(),
                files: BTreeMap::new(),
            },
            earlier: Default::default(),
            mode,
            force,
        };
        if dir.exists() && !dir.is_dir() && !dir.is_file() {
            return Err(Error::invalid(
                shown,
                "output folder",
                "exists and is not a folder: expected the output folder; move it or choose another output folder",
            ));
        }
        let existed = dir.is_dir();
        // Made when missing, refused when it is a file, and probed: a read-only folder fails
        // now, before any work.
        crate::io::prepare_output_dir(dir)?;
        if !existed {
            let owned = fresh(dir);
            owned.save()?;
            return Ok(owned);
        }
        let manifest = read_manifest(dir, writer)?;
        let known = manifest.clone().unwrap_or_default().files;
        if mode == Mode::Shared {
            let mut owned = fresh(dir);
            owned.manifest.files = known;
            owned.save()?;
            return Ok(owned);
        }
        let mut ours = Vec::new();
        let mut foreign = Vec::new();
        let mut folders = Vec::new();
        scan(
            dir,
            "",
            &known,
            manifest.is_some(),
            &mut ours,
            &mut foreign,
            &mut folders,
        )?;
        if !foreign.is_empty() && !force {
            return Err(refusal(dir, writer, &foreign, manifest.is_some()));
        }
        let mut owned = fresh(dir);
        match mode {
            Mode::Clear => {
                for name in &ours {
                    let path = dir.join(name);
                    std::fs::remove_file(&path).map_err(|source| Error::Io { path, source })?;
                }
                remove_empty_folders(dir, &folders);
            }
            _ => {
                // Forced past foreign entries: they are forgotten, never removed later.
                for name in ours {
                    if let Some(size) = known.get(&name) {
                        owned.manifest.files.insert(name.clone(), *size);
                        owned.earlier.insert(name);
                    } else {
                        // The temporary file of a killed run's atomic write.
                        let path = dir.join(&name);
                        std::fs::remove_file(&path).map_err(|source| Error::Io { path, source })?;
                    }
                }
            }
        }
        owned.save()?;
        Ok(owned)
    }

    /// The folder.
    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// Whether the manifest lists `name`: a file this writer wrote, in an earlier run or this
    /// one.
    pub fn lists(&self, name: &str) -> bool {
        self.manifest.files.contains_key(name)
    }

    /// Records that the run is about to write `name` (the manifest is saved before the file
    /// exists, so a run killed while writing it still owns it) and returns its path, with its
    /// sub-folder made.
    ///
    /// # Errors
    /// Without `force`, [`Error::Invalid`] naming the file when it exists and is not one this
    /// writer recorded (or changed since); [`Error::Io`] when the manifest cannot be saved.
    pub fn claim(&mut self, name: &str) -> Result<PathBuf> {
        self.claim_all(std::iter::once(name))?;
        Ok(self.dir.join(name))
    }

    /// [`OwnedDir::claim`] for many names, with one save of the manifest.
    ///
    /// # Errors
    /// As [`OwnedDir::claim`].
    pub fn claim_all<'a>(&mut self, names: impl IntoIterator<Item = &'a str>) -> Result<()> {
        let mut changed = false;
        let mut foreign: Vec<Foreign> = Vec::new();
        for name in names {
            let path = self.dir.join(name);
            let meta = path.symlink_metadata().ok();
            let theirs = match (meta, self.manifest.files.get(name)) {
                (None, _) => None,
                (Some(m), _) if !m.file_type().is_file() => Some("not a file it wrote"),
                (Some(_), None) => Some("it did not write it"),
                (Some(m), Some(Some(size))) if *size != m.len() && !self.earlier.contains(name) => {
                    Some("changed since it wrote it")
                }
                _ => None,
            };
            if let Some(why) = theirs
                && !self.force
            {
                foreign.push((name.to_string(), why));
                continue;
            }
            self.earlier.remove(name);
            if self.manifest.files.get(name) != Some(&None) {
                self.manifest.files.insert(name.to_string(), None);
                changed = true;
            }
            if let Some(parent) = path.parent()
                && name.contains('/')
            {
                std::fs::create_dir_all(parent).map_err(|source| Error::Io {
                    path: parent.to_path_buf(),
                    source,
                })?;
            }
        }
        if changed {
            self.save()?;
        }
        if !foreign.is_empty() {
            return Err(refusal(&self.dir, &self.writer, &foreign, true));
        }
        Ok(())
    }

    /// Removes `name` when the manifest lists it and it is still as this writer left it (an
    /// earlier run's file this run does not write); returns whether it was removed. A file the
    /// manifest does not list, or one changed since, is left.
    ///
    /// # Errors
    /// [`Error::Io`] when it cannot be removed or the manifest cannot be saved.
    pub fn remove(&mut self, name: &str) -> Result<bool> {
        let path = self.dir.join(name);
        let Some(meta) = path.symlink_metadata().ok().filter(|m| m.file_type().is_file()) else {
            return Ok(false);
        };
        let unchanged = match self.manifest.files.get(name) {
            None => false,
            Some(None) => true,
            Some(Some(size)) => *size == meta.len(),
        };
        if !unchanged {
            return Ok(false);
        }
        std::fs::remove_file(&path).map_err(|source| Error::Io { path, source })?;
        self.manifest.files.remove(name);
        self.earlier.remove(name);
        self.save()?;
        Ok(true)
    }

    /// Writes `files` (each a name relative to the folder and its bytes) as one set: each name
    /// is recorded in the manifest first ([`OwnedDir::claim_all`]), then every file is written
    /// beside its target and renamed over it only once all are complete
    /// ([`crate::io::write_all_atomic`]). A run that fails or is killed while writing them
    /// leaves the earlier run's files in place (and still the writer's).
    ///
    /// # Errors
    /// As [`OwnedDir::claim`]; [`Error::Io`] naming a file that cannot be written.
    pub fn write_all(&mut self, files: &[(String, Vec<u8>)]) -> Result<()> {
        self.claim_all(files.iter().map(|(name, _)| name.as_str()))?;
        let paths: Vec<(PathBuf, &[u8])> = files
            .iter()
            .map(|(name, bytes)| (self.dir.join(name), bytes.as_slice()))
            .collect();
        crate::io::write_all_atomic(&paths)
    }

    /// Records the sizes of the files written, once the run has completed them; with
    /// [`OwnedDir::open_replacing`], first removes the earlier run's files this run did not
    /// write again, and the sub-folders that leaves empty.
    pub fn finish(&mut self) -> Result<()> {
        let mut folders = Vec::new();
        for name in std::mem::take(&mut self.earlier) {
            let path = self.dir.join(&name);
            if path.symlink_metadata().is_ok_and(|m| m.file_type().is_file()) {
                std::fs::remove_file(&path).map_err(|source| Error::Io { path, source })?;
            }
            self.manifest.files.remove(&name);
            if let Some((folder, _)) = name.rsplit_once('/') {
                folders.push(folder.to_string());
            }
        }
        folders.sort();
        folders.dedup();
        remove_empty_folders(&self.dir, &folders);
        for (name, size) in self.manifest.files.iter_mut() {
            *size = std::fs::symlink_metadata(self.dir.join(name))
                .ok()
                .map(|m| m.len());
        }
        self.save()
    }

    fn save(&self) -> Result<()> {
        let mut manifest = self.manifest.clone();
        if self.mode == Mode::Shared {
            // Shards of one batch share the folder: keep what the others recorded since.
            if let Ok(Some(on_disk)) = read_manifest(&self.dir, &self.writer) {
                for (name, size) in on_disk.files {
                    manifest.files.entry(name).or_insert(size);
                }
            }
        }
        let mut text = serde_json::to_string_pretty(&manifest)
            .map_err(|e| Error::invalid(show_path(&self.dir), MANIFEST_FILE, e.to_string()))?;
        text.push('\n');
        crate::io::write_bytes_atomic(&self.dir.join(MANIFEST_FILE), text.as_bytes())
    }
}

/// The manifest of `writer` in `dir`, if there is one (a manifest of another writer, or one
/// that is a link or cannot be parsed, is none).
fn read_manifest(dir: &Path, writer: &str) -> Result<Option<Manifest>> {
    let manifest_path = dir.join(MANIFEST_FILE);
    match std::fs::read(&manifest_path) {
        Ok(bytes) => Ok(match serde_json::from_slice::<Manifest>(&bytes) {
            Ok(m) if m.writer == writer && !is_symlink(&manifest_path) => Some(m),
            _ => None,
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::Io {
            path: manifest_path,
            source: e,
        }),
    }
}

/// Sorts the entries of `dir/prefix` into the writer's files (`ours`, names relative to `dir`)
/// and `foreign` ones, going into each real sub-folder the manifest (`known`) lists files in
/// (those sub-folders, deepest last, into `folders`).
fn scan(
    dir: &Path,
    prefix: &str,
    known: &BTreeMap<String, Option<u64>>,
    has_manifest: bool,
    ours: &mut Vec<String>,
    foreign: &mut Vec<Foreign>,
    folders: &mut Vec<String>,
) -> Result<()> {
    let here = dir.join(prefix);
    let io_err = |source| Error::Io {
        path: here.clone(),
        source,
    };
    let mut names: Vec<_> = std::fs::read_dir(&here)
        .map_err(io_err)?
        .map(|e| e.map(|e| e.file_name()))
        .collect::<std::io::Result<_>>()
        .map_err(io_err)?;
    names.sort();
    for os_name in names {
        let meta = here.join(&os_name).symlink_metadata().map_err(io_err)?;
        let Some(name) = os_name.to_str() else {
            foreign.push((format!("{prefix}{}", escape_os(&os_name)), "it did not write it"));
            continue;
        };
        let rel = format!("{prefix}{name}");
        if prefix.is_empty() && name == MANIFEST_FILE && has_manifest {
            continue;
        }
        if meta.file_type().is_symlink() {
            foreign.push((rel, "a symbolic link, never followed"));
            continue;
        }
        if meta.is_dir() {
            let inside = format!("{rel}/");
            if known.keys().any(|k| k.starts_with(&inside)) {
                folders.push(rel);
                scan(dir, &inside, known, has_manifest, ours, foreign, folders)?;
            } else {
                foreign.push((rel, "not a file it wrote"));
            }
            continue;
        }
        if !meta.file_type().is_file() {
            foreign.push((rel, "not a file it wrote"));
            continue;
        }
        match known.get(&rel) {
            Some(Some(size)) if *size != meta.len() => {
                foreign.push((rel, "changed since it wrote it"));
            }
            Some(_) => ours.push(rel),
            None if atomic_temp_target(name).is_some_and(|t| {
                (prefix.is_empty() && t == MANIFEST_FILE) || known.contains_key(&format!("{prefix}{t}"))
            }) =>
            {
                ours.push(rel)
            }
            // The empty probe a killed run of a command left while checking the folder takes
            // new files.
            None if crate::io::is_write_probe(name) && meta.len() == 0 => ours.push(rel),
            None => foreign.push((rel, "it did not write it")),
        }
    }
    Ok(())
}

/// Removes the sub-folders `folders` of `dir` (names relative to it) that are empty, deepest
/// first; one that still holds something stays.
fn remove_empty_folders(dir: &Path, folders: &[String]) {
    let mut folders = folders.to_vec();
    folders.sort_by_key(|f| std::cmp::Reverse(f.matches('/').count()));
    for folder in folders {
        let _ = std::fs::remove_dir(dir.join(folder));
    }
}

/// The refusal of `dir` by `writer` for its `foreign` entries (the first few named).
fn refusal(dir: &Path, writer: &str, foreign: &[Foreign], has_manifest: bool) -> Error {
    const NAMED: usize = 3;
    let (first, why) = &foreign[0];
    let mut named = format!("{} ({why})", crate::text::quoted(first));
    for (name, why) in foreign.iter().skip(1).take(NAMED - 1) {
        named.push_str(&format!(", {} ({why})", crate::text::quoted(name)));
    }
    if foreign.len() > NAMED {
        named.push_str(&format!(" and {} more", foreign.len() - NAMED));
    }
    let listed = if has_manifest {
        format!("its manifest {MANIFEST_FILE} does not list them")
    } else {
        format!("the folder has no manifest {MANIFEST_FILE} of what {writer} wrote")
    };
    Error::invalid(
        show_path(dir),
        "output folder",
        format!(
            "holds {named}; {listed}. {writer} deletes or replaces only files it wrote \
             itself, so nothing was deleted: move them, choose another output folder, or open it with `force` \
             to write over them"
        ),
    )
}

/// A folder filled under a temporary name (`.<name>.<pid>.tmp` beside it) and put in place by
/// [`StagedDir::commit`]; dropped without a commit, the temporary folder's files are removed and
/// the folder in place is left as it was.
#[derive(Debug)]
pub struct StagedDir {
    target: PathBuf,
    staging: PathBuf,
    committed: bool,
}

impl StagedDir {
    /// Starts a staged folder for `target`.
    ///
    /// # Errors
    /// [`Error::Invalid`] when `target` is a symbolic link (its files are never replaced through
    /// it) or exists and is not a folder; [`Error::Io`] when the temporary folder cannot be
    /// made.
    pub fn create(target: &Path) -> Result<StagedDir> {
        let shown = show_path(target);
        if is_symlink(target) {
            return Err(Error::invalid(
                shown,
                "output folder",
                "is a symbolic link: its files are never replaced or deleted through the link; \
                 remove the link or choose another output folder",
            ));
        }
        if target.exists() && !target.is_dir() {
            return Err(Error::invalid(
                shown,
                "output folder",
                "exists and is not a folder: move it or choose another output folder",
            ));
        }
        let staging = staging_path(target, std::process::id());
        if staging.exists() && !is_symlink(&staging) {
            // A killed run of a process that had this same id left it.
            remove_files_then_dir(&staging)?;
        }
        std::fs::create_dir_all(&staging).map_err(|source| Error::Io {
            path: staging.clone(),
            source,
        })?;
        Ok(StagedDir {
            target: target.to_path_buf(),
            staging,
            committed: false,
        })
    }

    /// Where the new files go until the commit.
    pub fn path(&self) -> &Path {
        &self.staging
    }

    /// Puts the staged folder in place of the target. An earlier target folder is renamed aside
    /// first; entries of it for which `is_replaced` is false (files the run did not write) are
    /// moved into the new folder, then the rest of it is removed.
    pub fn commit(mut self, is_replaced: impl Fn(&str) -> bool) -> Result<()> {
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| Error::Io { path, source }
        };
        if self.target.is_dir() {
            let old = self.target.with_file_name(format!(
                ".{}.{}.old",
                self.target.file_name().map(escape_os).unwrap_or_default(),
                std::process::id()
            ));
            std::fs::rename(&self.target, &old).map_err(io(&self.target))?;
            std::fs::rename(&self.staging, &self.target).map_err(io(&self.target))?;
            self.committed = true;
            for entry in std::fs::read_dir(&old).map_err(io(&old))? {
                let entry = entry.map_err(io(&old))?;
                let name = entry.file_name();
                let replaced =
                    name.to_str().is_some_and(&is_replaced) && entry.file_type().map_err(io(&old))?.is_file();
                if replaced {
                    std::fs::remove_file(entry.path()).map_err(io(&entry.path()))?;
                } else {
                    let to = self.target.join(&name);
                    if !to.exists() {
                        std::fs::rename(entry.path(), &to).map_err(io(&entry.path()))?;
                    }
                }
            }
            // Left in place (and harmless) if something could not be moved back.
            let _ = std::fs::remove_dir(&old);
        } else {
            std::fs::rename(&self.staging, &self.target).map_err(io(&self.target))?;
            self.committed = true;
        }
        Ok(())
    }
}

impl Drop for StagedDir {
    fn drop(&mut self) {
        if !self.committed {
            let _ = remove_files_then_dir(&self.staging);
        }
    }
}

/// Whether the process whose id ends the staging folder name `.<name>.<pid>.tmp` still runs
/// (known on Linux through `/proc`; elsewhere taken as not running).
fn owner_is_running(staging_name: &std::ffi::OsStr) -> bool {
    let pid = staging_name
        .to_str()
        .and_then(|n| n.strip_suffix(".tmp"))
        .and_then(|n| n.rsplit_once('.'))
        .map(|(_, pid)| pid);
    pid.is_some_and(|pid| Path::new("/proc").join(pid).exists())
}

/// The temporary folder of a [`StagedDir`] for `target`, made by process `pid`.
fn staging_path(target: &Path, pid: u32) -> PathBuf {
    let name = target.file_name().map(escape_os).unwrap_or_default();
    target.with_file_name(format!(".{name}.{pid}.tmp"))
}

/// Removes the plain files directly inside `dir` (a staging folder, which holds nothing else),
/// then `dir` when that left it empty. Links are removed as links, never followed.
fn remove_files_then_dir(dir: &Path) -> Result<()> {
    let io_err = |source| Error::Io {
        path: dir.to_path_buf(),
        source,
    };
    for entry in std::fs::read_dir(dir).map_err(io_err)? {
        let entry = entry.map_err(io_err)?;
        let kind = entry.file_type().map_err(io_err)?;
        if kind.is_file() || kind.is_symlink() {
            std::fs::remove_file(entry.path()).map_err(io_err)?;
        }
    }
    let _ = std::fs::remove_dir(dir);
    Ok(())
}

/// Removes the staging folders of `target` that killed runs left beside it (`.<name>.<pid>.tmp`
/// of a process no longer running): their files only, then the folder when empty. Returns how
/// many were found.
pub fn remove_stale_staging(target: &Path) -> Result<usize> {
    let parent = match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let Some(name) = target.file_name().and_then(|n| n.to_str()) else {
        return Ok(0);
    };
    let Ok(entries) = std::fs::read_dir(parent) else {
        return Ok(0);
    };
    let own = staging_path(target, std::process::id());
    let mut found = 0;
    for entry in entries.flatten() {
        let entry_name = entry.file_name();
        let is_staging = entry_name
            .to_str()
            .and_then(atomic_temp_target)
            .is_some_and(|t| t == name);
        let real_dir = entry.file_type().is_ok_and(|k| k.is_dir());
        if is_staging && real_dir && entry.path() != own && !owner_is_running(&entry_name) {
            remove_files_then_dir(&entry.path())?;
            found += 1;
        }
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_replacing_folder_keeps_the_earlier_files_until_the_run_finishes() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("run");
        let w = "crowdfield simulate";
        let mut owned = OwnedDir::open_replacing(&dir, w, false).unwrap();
        for name in ["report.json", "frames/frame_00000.png", "frames/frame_00001.png"] {
            std::fs::write(owned.claim(name).unwrap(), name).unwrap();
        }
        owned.finish().unwrap();
        // A shorter run: its earlier frame 1 stays while it runs, and goes when it finishes.
        let mut owned = OwnedDir::open_replacing(&dir, w, false).unwrap();
        std::fs::write(owned.claim("report.json").unwrap(), "again").unwrap();
        assert!(dir.join("frames/frame_00001.png").is_file());
        owned.finish().unwrap();
        assert!(!dir.join("frames").exists(), "the emptied folder goes too");
        assert_eq!(std::fs::read_to_string(dir.join("report.json")).unwrap(), "again");
        // A user's file in a sub-folder it made is foreign, and named with its folder.
        std::fs::create_dir(dir.join("frames")).unwrap();
        std::fs::write(dir.join("frames/mine.png"), "user").unwrap();
        let e = OwnedDir::open_replacing(&dir, w, false).unwrap_err().to_string();
        assert!(e.contains("\"frames\"") && e.contains("`force`"), "{e}");
        // Another writer's folder is not its own.
        std::fs::remove_dir_all(dir.join("frames")).unwrap();
        let e = OwnedDir::open_replacing(&dir, "crowdfield solve", false)
            .unwrap_err()
            .to_string();
        assert!(e.contains("\"report.json\""), "{e}");
    }

    #[test]
    fn a_set_of_files_replaces_the_earlier_runs_only_when_all_are_written() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("v");
        let w = "crowdfield verify";
        let files = |a: &str, b: &str| vec![("a.json".to_string(), a.into()), ("b.md".to_string(), b.into())];
        let mut owned = OwnedDir::open_replacing(&dir, w, false).unwrap();
        owned.write_all(&files("1", "one")).unwrap();
        owned.finish().unwrap();
        // The second file cannot be written (a folder stands in its way): the first is not
        // replaced either, and the folder stays the writer's.
        std::fs::remove_file(dir.join("b.md")).unwrap();
        std::fs::create_dir(dir.join("b.md")).unwrap();
        let mut owned = OwnedDir::open_replacing(&dir, w, true).unwrap();
        assert!(owned.write_all(&files("2", "two")).is_err());
        assert_eq!(std::fs::read_to_string(dir.join("a.json")).unwrap(), "1");
        std::fs::remove_dir(dir.join("b.md")).unwrap();
        let mut owned = OwnedDir::open_replacing(&dir, w, false).unwrap();
        owned.write_all(&files("3", "three")).unwrap();
        owned.finish().unwrap();
        assert_eq!(std::fs::read_to_string(dir.join("a.json")).unwrap(), "3");
        assert_eq!(std::fs::read_to_string(dir.join("b.md")).unwrap(), "three");
    }

    #[test]
    fn a_shared_folder_refuses_only_a_claimed_name_it_did_not_write() {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path();
        std::fs::write(out.join("maps.txt"), "user").unwrap();
        std::fs::write(out.join("summary.csv"), "user").unwrap();
        let mut top = OwnedDir::open_shared(out, "crowdfield batch", false).unwrap();
        std::fs::write(top.claim("summary.json").unwrap(), "[]").unwrap();
        let e = top.claim("summary.csv").unwrap_err().to_string();
        assert!(e.contains("\"summary.csv\"") && e.contains("`force`"), "{e}");
        top.finish().unwrap();
        let mut top = OwnedDir::open_shared(out, "crowdfield batch", false).unwrap();
        top.claim("summary.json").unwrap();
        let mut forced = OwnedDir::open_shared(out, "crowdfield batch", true).unwrap();
        forced.claim("summary.csv").unwrap();
        assert_eq!(std::fs::read_to_string(out.join("maps.txt")).unwrap(), "user");
    }

    #[test]
    fn temporary_names_are_recognised() {
        assert_eq!(atomic_temp_target(".report.json.123.tmp"), Some("report.json"));
        assert_eq!(atomic_temp_target(".frames.9.tmp"), Some("frames"));
        assert_eq!(atomic_temp_target("report.json"), None);
        assert_eq!(atomic_temp_target(".x.tmp"), None);
        assert!(crate::io::is_write_probe(".crowdfield-write-probe.4242"));
        assert!(!crate::io::is_write_probe(".crowdfield-write-probe."));
        assert!(!crate::io::is_write_probe(".crowdfield-write-probe.42x"));
    }

    #[test]
    fn an_owned_folder_removes_its_own_files_and_refuses_foreign_ones() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("m");
        let mut owned = OwnedDir::open(&dir, "crowdfield batch", false).unwrap();
        std::fs::write(owned.claim("a.json").unwrap(), "a").unwrap();
        owned.finish().unwrap();
        OwnedDir::open(&dir, "crowdfield batch", false).unwrap();
        assert!(!dir.join("a.json").exists(), "its own file is removed");
        std::fs::write(dir.join("mine.txt"), "user").unwrap();
        let e = OwnedDir::open(&dir, "crowdfield batch", false)
            .unwrap_err()
            .to_string();
        assert!(e.contains("\"mine.txt\"") && e.contains("`force`"), "{e}");
        assert!(dir.join("mine.txt").exists());
        // A file it wrote but someone changed since is not its own any more.
        std::fs::remove_file(dir.join("mine.txt")).unwrap();
        let mut owned = OwnedDir::open(&dir, "crowdfield batch", false).unwrap();
        std::fs::write(owned.claim("b.json").unwrap(), "b").unwrap();
        owned.finish().unwrap();
        std::fs::write(dir.join("b.json"), "edited by hand").unwrap();
        let e = OwnedDir::open(&dir, "crowdfield batch", false)
            .unwrap_err()
            .to_string();
        assert!(e.contains("\"b.json\"") && e.contains("changed"), "{e}");
        OwnedDir::open(&dir, "crowdfield batch", true).unwrap();
        assert!(
            dir.join("b.json").exists(),
            "`force` leaves it for the run to write over"
        );
    }

    #[test]
    fn the_write_probe_of_a_killed_run_is_not_foreign() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("m");
        // A run killed while it probed an empty folder: no manifest, only the probe.
        std::fs::create_dir_all(&dir).unwrap();
        let probe = dir.join(".crowdfield-write-probe.31337");
        std::fs::write(&probe, "").unwrap();
        OwnedDir::open(&dir, "crowdfield batch", false).unwrap();
        assert!(!probe.exists(), "the leftover probe is removed");
        // A file of that name with something in it is not a probe.
        std::fs::write(&probe, "data").unwrap();
        let e = OwnedDir::open(&dir, "crowdfield batch", false)
            .unwrap_err()
            .to_string();
        assert!(e.contains("write-probe"), "{e}");
    }
}
