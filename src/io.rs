//! File input and output shared by every writer: atomic writes and `.npy` arrays.
//!
//! Every file the toolkit writes goes through [`write_atomic`]: the bytes go to a temporary file
//! in the same folder, which is then renamed over the target, so an interrupted run never leaves
//! a half-written file behind.

use crate::error::{Error, Result};
use ndarray::{Array2, ArrayView2};
use ndarray_npy::{ReadNpyExt, ViewNpyExt, WriteNpyExt};
use std::fs::File;
use std::io::{BufWriter, Cursor, Write};
use std::path::{Path, PathBuf};

/// Writes a file atomically: `fill` writes into a temporary file beside `path`, which is
/// flushed, synced and renamed over `path`. Parent folders are created.
pub fn write_atomic(path: &Path, fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) -> Result<()> {
    let mut file = AtomicFile::create(path)?;
    fill(file.writer()).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })?;
    file.commit()
}

/// Creates `dir` and its parents; an ancestor that is a file is named in the error (where
/// `create_dir_all` would only say "File exists" or "Not a directory").
fn create_folder(dir: &Path) -> std::io::Result<()> {
    if let Some(file) = dir.ancestors().find(|a| a.is_file()) {
        return Err(std::io::Error::new(
            std::io::ErrorKind::NotADirectory,
            format!(
                "{} is a file, not a folder: expected a folder to write into",
                file.display()
            ),
        ));
    }
    std::fs::create_dir_all(dir)
}

/// Makes sure the output folder `dir` exists and can be written to, by creating it and a
/// probe file in it (removed again). Commands call this before any long work, so a mistyped
/// or read-only `--out` fails at once instead of after the run.
///
/// # Errors
/// [`Error::Io`] naming `dir` (once: "out: exists and is a file, not a folder") when it (or an
/// ancestor, then named too) is a file, cannot be created, or does not accept a new file.
pub fn prepare_output_dir(dir: &Path) -> Result<()> {
    let io_err = |source| Error::Io {
        path: dir.to_path_buf(),
        source,
    };
    if dir.is_file() {
        // The error names `dir` already: "out: out is a file" would name it twice.
        return Err(io_err(std::io::Error::new(
            std::io::ErrorKind::NotADirectory,
            "exists and is a file, not a folder: expected a folder to write into",
        )));
    }
    create_folder(dir).map_err(io_err)?;
    accepts_new_file(dir).map_err(io_err)
}

/// The start of the probe file's name ([`accepts_new_file`]); the process id follows.
const WRITE_PROBE_PREFIX: &str = ".crowdfield-write-probe.";

/// Whether `name` is a probe file [`accepts_new_file`] creates (a process killed between its
/// creation and its removal leaves one behind; it is empty).
pub fn is_write_probe(name: &str) -> bool {
    name.strip_prefix(WRITE_PROBE_PREFIX)
        .is_some_and(|pid| !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()))
}

/// Whether `dir` accepts a new file: a probe file is created in it and removed again.
fn accepts_new_file(dir: &Path) -> std::io::Result<()> {
    let probe = dir.join(format!("{WRITE_PROBE_PREFIX}{}", std::process::id()));
    File::create(&probe)?;
    std::fs::remove_file(&probe)
}

/// Most bytes read from a pipe (a FIFO, `<(command)`), whose size is not known before it ends.
pub const MAX_PIPE_INPUT_BYTES: u64 = 2 << 30;

/// The bytes of the input file at `path`: a regular file, or a pipe (a FIFO, a shell's
/// `<(command)`) read up to [`MAX_PIPE_INPUT_BYTES`]. Devices and sockets are refused before
/// anything is read: `/dev/zero` or `/dev/urandom` would otherwise fill the memory.
///
/// # Errors
/// [`Error::Io`] naming `path` when it is missing, a folder, a device or a socket, a pipe
/// longer than the limit, or cannot be read.
pub fn read_input_file(path: &Path) -> Result<Vec<u8>> {
    let io_err = |source| Error::Io {
        path: path.to_path_buf(),
        source,
    };
    let meta = std::fs::metadata(path).map_err(io_err)?;
    if meta.is_dir() {
        return Err(io_err(std::io::Error::other("is a folder, not a file")));
    }
    #[cfg(unix)]
    if std::os::unix::fs::FileTypeExt::is_fifo(&meta.file_type()) {
        use std::io::Read;
        let mut bytes = Vec::new();
        File::open(path)
            .and_then(|f| f.take(MAX_PIPE_INPUT_BYTES + 1).read_to_end(&mut bytes))
            .map_err(io_err)?;
        if bytes.len() as u64 > MAX_PIPE_INPUT_BYTES {
            return Err(io_err(std::io::Error::other(format!(
                "the pipe gave more than {} GiB: expected a map or an array",
                MAX_PIPE_INPUT_BYTES >> 30
            ))));
        }
        return Ok(bytes);
    }
    if !meta.is_file() {
        return Err(io_err(std::io::Error::other(
            "is not a regular file or a pipe (a device or a socket): expected a file to read",
        )));
    }
    std::fs::read(path).map_err(io_err)
}

/// What a path that is not a regular file is, in words ("a folder", "a FIFO (a named pipe)",
/// "a character device", ...), from its metadata (links followed).
fn kind_of(meta: &std::fs::Metadata) -> &'static str {
    let kind = meta.file_type();
    if kind.is_dir() {
        return "a folder";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return "a FIFO (a named pipe)";
        }
        if kind.is_char_device() {
            return "a character device";
        }
        if kind.is_block_device() {
            return "a block device";
        }
        if kind.is_socket() {
            return "a socket";
        }
    }
    "not a regular file"
}

/// The bytes of the small input file at `path`, which must be a regular file of at most
/// `max_bytes` bytes. Its metadata is read before it is opened, so a FIFO (whose opening blocks
/// until a writer comes), a device such as `/dev/zero` or `/dev/urandom` (which never ends) or a
/// folder is refused without being opened, and a larger file without being read; at most
/// `max_bytes + 1` bytes are ever read (a file that grows after the check is still refused).
///
/// # Errors
/// [`Error::Io`] naming `path` when it is missing or unreadable, not a regular file (saying what
/// it is), or larger than `max_bytes` (saying its size and the limit).
pub fn read_small_file(path: &Path, max_bytes: u64) -> Result<Vec<u8>> {
    use std::io::Read;
    let io_err = |source| Error::Io {
        path: path.to_path_buf(),
        source,
    };
    let refuse = |why: String| io_err(std::io::Error::other(why));
    let meta = std::fs::metadata(path).map_err(io_err)?;
    if !meta.is_file() {
        return Err(refuse(format!(
            "is {}: expected a regular file (read at most {max_bytes} bytes)",
            kind_of(&meta)
        )));
    }
    let too_big = |size: String| {
        refuse(format!(
            "{size} bytes: expected a file of at most {max_bytes} bytes"
        ))
    };
    if meta.len() > max_bytes {
        return Err(too_big(meta.len().to_string()));
    }
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    // Swapped for a FIFO after the check, the file still opens at once (and is refused below).
    #[cfg(target_os = "linux")]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NONBLOCK);
    let file = options.open(path).map_err(io_err)?;
    let opened = file.metadata().map_err(io_err)?;
    if !opened.is_file() {
        return Err(refuse(format!(
            "is {}: expected a regular file",
            kind_of(&opened)
        )));
    }
    let mut bytes = Vec::with_capacity(opened.len().min(max_bytes) as usize);
    file.take(max_bytes + 1).read_to_end(&mut bytes).map_err(io_err)?;
    if bytes.len() as u64 > max_bytes {
        return Err(too_big(format!("more than {max_bytes}")));
    }
    Ok(bytes)
}

/// Makes sure `path` can take a new file before any work: it names a file, not a folder (an
/// existing one or a path ending in `/`) and not a device, FIFO or socket, and its folder
/// exists (it is not created: a mistyped path would otherwise become a folder after the work)
/// and accepts a new file (a probe file, removed again).
///
/// # Errors
/// [`Error::Io`] naming `path`, saying which of these failed.
pub fn check_output_file(path: &Path) -> Result<()> {
    let fail = |message: String| Error::Io {
        path: path.to_path_buf(),
        source: std::io::Error::other(message),
    };
    let ends_in_separator = path
        .as_os_str()
        .to_string_lossy()
        .ends_with(std::path::is_separator);
    if path.is_dir() || ends_in_separator {
        return Err(fail("is a folder: expected the path of the file to write".into()));
    }
    if let Some(problem) = not_a_regular_file(path) {
        return Err(fail(problem));
    }
    let folder = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if folder.exists() && !folder.is_dir() {
        return Err(fail(format!("{} is a file, not a folder", folder.display())));
    }
    if !folder.is_dir() {
        return Err(fail(format!(
            "the folder {} does not exist: create it first",
            folder.display()
        )));
    }
    accepts_new_file(folder).map_err(|e| {
        fail(format!(
            "the folder {} does not accept a new file: {e}",
            folder.display()
        ))
    })
}

/// Why `path` (existing, links followed) is no regular file to replace: a device, a FIFO, a
/// socket. `None` when it is a regular file or does not exist.
fn not_a_regular_file(path: &Path) -> Option<String> {
    let meta = std::fs::metadata(path).ok()?;
    (!meta.is_file() && !meta.is_dir()).then(|| {
        "exists and is not a regular file (a device, a FIFO or a socket): refusing to replace it".into()
    })
}

/// A file written in pieces and put in place atomically: the bytes go to a temporary file
/// beside `path` as they come (nothing is held in memory), and [`AtomicFile::commit`] flushes,
/// syncs and renames it over `path`. Dropped without a commit (after an error), the temporary
/// file is removed and `path` is left as it was.
#[derive(Debug)]
pub struct AtomicFile {
    path: PathBuf,
    tmp: PathBuf,
    file: Option<BufWriter<File>>,
}

impl AtomicFile {
    /// Opens the temporary file for `path`, creating the parent folders. A `path` that is a
    /// symbolic link is written through: the file it points to is replaced and the link kept.
    ///
    /// # Errors
    /// [`Error::Io`] naming `path` when it is a folder or a device, FIFO or socket, or the
    /// temporary file cannot be created.
    pub fn create(path: &Path) -> Result<Self> {
        let io_err = |source| Error::Io {
            path: path.to_path_buf(),
            source,
        };
        if path.is_dir() {
            return Err(io_err(std::io::Error::other(
                "is a folder: expected the path of the file to write",
            )));
        }
        if let Some(problem) = not_a_regular_file(path) {
            return Err(io_err(std::io::Error::other(problem)));
        }
        let resolved;
        let path = match path.symlink_metadata() {
            Ok(m) if m.file_type().is_symlink() => {
                resolved = std::fs::canonicalize(path).map_err(io_err)?;
                resolved.as_path()
            }
            _ => path,
        };
        let dir = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        create_folder(dir).map_err(io_err)?;
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
        let file = File::create(&tmp).map_err(io_err)?;
        Ok(Self {
            path: path.to_path_buf(),
            tmp,
            file: Some(BufWriter::new(file)),
        })
    }

    /// Where the bytes go (buffered).
    pub fn writer(&mut self) -> &mut BufWriter<File> {
        self.file.as_mut().expect("an AtomicFile is open until committed")
    }

    /// The error of a write through [`AtomicFile::writer`], naming the target file.
    pub fn error(&self, source: std::io::Error) -> Error {
        Error::Io {
            path: self.path.clone(),
            source,
        }
    }

    /// Flushes, syncs and renames the temporary file over the target.
    pub fn commit(mut self) -> Result<()> {
        let writer = self.file.take().expect("an AtomicFile is open until committed");
        let result = (|| {
            let file = writer.into_inner().map_err(|e| e.into_error())?;
            file.sync_all()?;
            std::fs::rename(&self.tmp, &self.path)
        })();
        if result.is_err() {
            let _ = std::fs::remove_file(&self.tmp);
        }
        result.map_err(|source| self.error(source))
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if self.file.take().is_some() {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

/// Writes `bytes` to `path` atomically.
pub fn write_bytes_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    write_atomic(path, |w| w.write_all(bytes))
}

/// Writes every `(path, bytes)` of `files` as one set: first each into its temporary file
/// beside its target (written and synced), and only once all of them are complete, each renamed
/// over its target. A failure while writing (a full disk) leaves every target as it was and no
/// temporary file; a process killed then leaves temporary files (`.NAME.PID.tmp`), never a
/// target half replaced. Only the renames, the last and shortest stage, can be cut between two
/// files, and each file is then whole, old or new.
///
/// # Errors
/// [`Error::Io`] naming the file that could not be written or renamed.
pub fn write_all_atomic(files: &[(PathBuf, &[u8])]) -> Result<()> {
    let mut staged = Vec::with_capacity(files.len());
    for (path, bytes) in files {
        let mut file = AtomicFile::create(path)?;
        let written = (|| {
            let w = file.writer();
            w.write_all(bytes)?;
            w.flush()?;
            w.get_ref().sync_all()
        })();
        written.map_err(|e| file.error(e))?;
        staged.push(file);
    }
    staged.into_iter().try_for_each(AtomicFile::commit)
}

/// Writes a 2-D array as `.npy` (C order, row index = y) atomically.
pub fn write_npy<T: ndarray_npy::WritableElement>(path: &Path, array: ArrayView2<T>) -> Result<()> {
    let mut buf = Vec::new();
    array
        .write_npy(&mut buf)
        .map_err(|e| Error::invalid(path.display().to_string(), "array", e.to_string()))?;
    write_bytes_atomic(path, &buf)
}

/// Reads a 2-D `.npy` array of float64, float32, any integer width or bool, as `f64`
/// (bool: 1 for true), C or Fortran order; the array returned is always in standard
/// (row-major) layout. The error names the file and the dtypes accepted.
pub fn read_npy_f64(path: &Path) -> Result<Array2<f64>> {
    read_npy_f64_with(path, |values| values.as_standard_layout().into_owned())
}

/// [`read_npy_f64`] handing the values to `take` as a view (of any layout) instead of an array
/// of their own, for a caller that puts them in memory of its own (a float64 file in this
/// machine's byte order is viewed where it was read, not copied first).
///
/// # Errors
/// As [`read_npy_f64`].
pub fn read_npy_f64_with<R>(path: &Path, take: impl FnOnce(ArrayView2<f64>) -> R) -> Result<R> {
    let bytes = read_input_file(path)?;
    let file = path.display().to_string();
    if let Err(message) = check_npy_data_length(&bytes) {
        return Err(Error::invalid(file, "npy", message));
    }
    if let Ok(values) = ArrayView2::<f64>::view_npy(&bytes) {
        return Ok(take(values));
    }
    // Other dtypes, and float64 that cannot be viewed in place (the other byte order, data
    // not aligned for f64): read and converted. Errors are reported from here.
    let mut take = Some(take);
    macro_rules! try_as {
        ($t:ty, $conv:expr) => {
            match Array2::<$t>::read_npy(Cursor::new(&bytes)) {
                Ok(a) => {
                    let take = take.take().expect("values are taken once");
                    return Ok(take(a.mapv($conv).view()));
                }
                Err(ndarray_npy::ReadNpyError::WrongDescriptor(_)) => {}
                Err(ndarray_npy::ReadNpyError::WrongNdim(expected, found)) => {
                    return Err(Error::invalid(
                        file,
                        "shape",
                        format!(
                            "expected a {}-D array, found {found:?} dimensions",
                            expected.unwrap_or(2)
                        ),
                    ));
                }
                Err(ndarray_npy::ReadNpyError::MissingData) => {
                    return Err(Error::invalid(
                        file,
                        "npy",
                        "the file ends early: expected all the data its header announces (truncated?)",
                    ));
                }
                Err(ndarray_npy::ReadNpyError::Io(e)) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
                    return Err(Error::invalid(
                        file,
                        "npy",
                        "the file ends early: expected a complete .npy array (truncated or not an .npy file?)",
                    ));
                }
                Err(e) => return Err(Error::invalid(file, "npy", e.to_string())),
            }
        };
    }
    try_as!(f64, |v| v);
    try_as!(f32, |v| v as f64);
    try_as!(u8, |v| v as f64);
    try_as!(bool, |v| if v { 1.0 } else { 0.0 });
    try_as!(i8, |v| v as f64);
    try_as!(u16, |v| v as f64);
    try_as!(i16, |v| v as f64);
    try_as!(u32, |v| v as f64);
    try_as!(i32, |v| v as f64);
    try_as!(u64, |v| v as f64);
    try_as!(i64, |v| v as f64);
    Err(Error::invalid(
        file,
        "dtype",
        "expected a 2-D array of float64, float32, an integer type or bool (C or Fortran order)",
    ))
}

/// Checks that an `.npy` file holds as many data bytes as its header's shape and dtype announce,
/// before anything is allocated for it: the reader sizes its buffer from the header, so a
/// corrupt or hostile header claiming a huge shape would abort the process on allocation.
///
/// The header is read with the reader's own parser (`ndarray_npy`'s), so the two cannot
/// disagree on the shape (numbers written `1_000_000` or `0x100000`, double-quoted keys). Each
/// element counts at least one byte (its dtype's size when the descriptor is a plain one such as
/// `'<f8'`; a size of 0 or an unreadable one counts 1), which keeps the bound a lower one. A
/// header the parser rejects is left to the reader to report.
fn check_npy_data_length(bytes: &[u8]) -> std::result::Result<(), String> {
    let mut cursor = Cursor::new(bytes);
    let Ok(header) = ndarray_npy::npy::header::Header::from_reader(&mut cursor) else {
        return Ok(());
    };
    // The descriptor as a Python literal ('<f8', '|b1'): its size is the number ending it.
    let descr = header.type_descriptor.to_string();
    let item_size = descr
        .trim_matches(|c| c == '\'' || c == '"')
        .trim_start_matches(|c: char| !c.is_ascii_digit())
        .parse::<u128>()
        .unwrap_or(1)
        .max(1);
    let needed = header
        .shape
        .iter()
        .try_fold(item_size, |n, &d| n.checked_mul(d as u128))
        .unwrap_or(u128::MAX);
    let available = (bytes.len() as u64).saturating_sub(cursor.position()) as u128;
    if needed > available {
        return Err(format!(
            "the file ends early: its header announces shape {:?} ({needed} bytes of data) but it \
             holds {available} (truncated or corrupt?)",
            header.shape
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    /// The names in `dir`, sorted.
    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn a_set_of_files_replaces_its_targets_only_once_every_file_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a.json"), dir.path().join("b.json"));
        std::fs::write(&a, "old a").unwrap();
        std::fs::write(&b, "old b").unwrap();
        // The second file cannot be written (its target is a folder): the first is not
        // replaced either, and no temporary file is left.
        let blocked = dir.path().join("sub");
        std::fs::create_dir(&blocked).unwrap();
        let e = write_all_atomic(&[(a.clone(), b"new a"), (blocked.clone(), b"x")]).unwrap_err();
        assert!(e.to_string().contains("sub"), "{e}");
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "old a");
        assert_eq!(names(dir.path()), ["a.json", "b.json", "sub"]);
        write_all_atomic(&[(a.clone(), b"new a"), (b.clone(), b"new b")]).unwrap();
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "new a");
        assert_eq!(std::fs::read_to_string(&b).unwrap(), "new b");
        assert_eq!(names(dir.path()), ["a.json", "b.json", "sub"]);
    }

    #[test]
    fn a_small_file_is_read_whole_and_anything_else_refused_before_reading() {
        let dir = tempfile::tempdir().unwrap();
        let small = dir.path().join("p.json");
        std::fs::write(&small, "{}").unwrap();
        assert_eq!(read_small_file(&small, 2).unwrap(), b"{}");
        let e = read_small_file(&small, 1).unwrap_err().to_string();
        assert!(
            e.contains("p.json") && e.contains("2 bytes") && e.contains("at most 1 bytes"),
            "{e}"
        );
        let e = read_small_file(dir.path(), 10).unwrap_err().to_string();
        assert!(e.contains("is a folder"), "{e}");
        let e = read_small_file(&dir.path().join("missing"), 10)
            .unwrap_err()
            .to_string();
        assert!(e.contains("missing"), "{e}");
        #[cfg(unix)]
        {
            // A device that never ends and a FIFO that no one writes: refused at once.
            let e = read_small_file(Path::new("/dev/zero"), 10)
                .unwrap_err()
                .to_string();
            assert!(e.contains("/dev/zero: is a character device"), "{e}");
            let fifo = dir.path().join("fifo");
            let made = std::process::Command::new("mkfifo").arg(&fifo).status();
            if made.is_ok_and(|s| s.success()) {
                let e = read_small_file(&fifo, 10).unwrap_err().to_string();
                assert!(e.contains("is a FIFO (a named pipe)"), "{e}");
            }
        }
    }

    #[test]
    fn an_atomic_file_appears_only_when_committed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/out.csv");
        std::fs::create_dir_all(dir.path().join("sub")).unwrap();
        std::fs::write(&path, "old").unwrap();
        // Dropped without a commit: the old file stays, no temporary file is left.
        {
            let mut f = AtomicFile::create(&path).unwrap();
            writeln!(f.writer(), "half").unwrap();
            assert_eq!(
                names(&dir.path().join("sub")).len(),
                2,
                "the temporary file is beside it"
            );
        }
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "old");
        assert_eq!(names(&dir.path().join("sub")), ["out.csv"]);
        // Written in pieces and committed: the new content, nothing else.
        let mut f = AtomicFile::create(&path).unwrap();
        for i in 0..3 {
            writeln!(f.writer(), "row {i}").unwrap();
        }
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "old",
            "not before the commit"
        );
        f.commit().unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "row 0\nrow 1\nrow 2\n");
        assert_eq!(names(&dir.path().join("sub")), ["out.csv"]);
    }

    /// A float64 file in the other byte order, or with its data not 8-byte aligned in the
    /// file, cannot be viewed in place: it is read and converted, to the same values.
    #[test]
    fn float64_that_cannot_be_viewed_in_place_reads_the_same() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.npy");
        let values = [1.5f64, -2.25, 1e300, 0.0, 7.0, f64::INFINITY];
        // Version 1.0 header: magic, version, u16 length, a dict padded with spaces to make
        // the data start at `data_at`.
        let npy = |descr: &str, data_at: usize, bytes: &dyn Fn(f64) -> [u8; 8]| {
            let mut dict = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': (2, 3), }}");
            while 10 + dict.len() + 1 < data_at {
                dict.push(' ');
            }
            dict.push('\n');
            let mut file = b"\x93NUMPY\x01\x00".to_vec();
            file.extend_from_slice(&(dict.len() as u16).to_le_bytes());
            file.extend_from_slice(dict.as_bytes());
            assert_eq!(file.len(), data_at);
            for v in values {
                file.extend_from_slice(&bytes(v));
            }
            file
        };
        let expected = Array2::from_shape_vec((2, 3), values.to_vec()).unwrap();
        for (descr, data_at, bytes) in [
            ("<f8", 128, &f64::to_le_bytes as &dyn Fn(f64) -> [u8; 8]),
            (">f8", 128, &f64::to_be_bytes),
            ("<f8", 131, &f64::to_le_bytes),
        ] {
            std::fs::write(&p, npy(descr, data_at, bytes)).unwrap();
            assert_eq!(read_npy_f64(&p).unwrap(), expected, "{descr} at {data_at}");
            let sum = read_npy_f64_with(&p, |v| v.iter().filter(|x| x.is_finite()).sum::<f64>()).unwrap();
            assert_eq!(sum, 1.5 - 2.25 + 1e300 + 7.0);
        }
    }

    #[test]
    fn npy_round_trip_through_every_accepted_dtype() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.npy");
        write_npy(&p, array![[1.5f64, 2.0], [3.0, -4.0]].view()).unwrap();
        assert_eq!(read_npy_f64(&p).unwrap(), array![[1.5, 2.0], [3.0, -4.0]]);
        write_npy(&p, array![[1u8, 0], [255, 7]].view()).unwrap();
        assert_eq!(read_npy_f64(&p).unwrap(), array![[1.0, 0.0], [255.0, 7.0]]);
        write_npy(&p, array![[true, false]].view()).unwrap();
        assert_eq!(read_npy_f64(&p).unwrap(), array![[1.0, 0.0]]);
        write_npy(&p, array![[0.25f32]].view()).unwrap();
        assert_eq!(read_npy_f64(&p).unwrap(), array![[0.25]]);
    }

    #[test]
    fn fortran_order_npy_reads_in_standard_layout() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f.npy");
        let a = array![[1.0f64, 2.0, 3.0], [4.0, 5.0, 6.0]];
        let fortran = a.t().as_standard_layout().into_owned().reversed_axes();
        assert!(!fortran.is_standard_layout());
        std::fs::write(&p, {
            let mut buf = Vec::new();
            fortran.write_npy(&mut buf).unwrap();
            buf
        })
        .unwrap();
        let back = read_npy_f64(&p).unwrap();
        assert_eq!(back, a);
        assert!(back.is_standard_layout(), "solvers take row-major memory");
    }

    #[test]
    fn truncated_npy_says_it_ends_early() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.npy");
        write_npy(&p, array![[1.0f64, 2.0], [3.0, 4.0]].view()).unwrap();
        let bytes = std::fs::read(&p).unwrap();
        for cut in [0, 20, bytes.len() - 3] {
            std::fs::write(&p, &bytes[..cut]).unwrap();
            let e = read_npy_f64(&p).unwrap_err().to_string();
            assert!(e.contains("t.npy") && e.contains("ends early"), "cut {cut}: {e}");
        }
    }

    #[test]
    fn a_header_announcing_more_data_than_the_file_holds_is_refused_before_allocating() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("lie.npy");
        // A version 1.0 header claiming 10^10 float64 cells, followed by 16 bytes of data.
        let dict = "{'descr': '<f8', 'fortran_order': False, 'shape': (100000, 100000), }";
        std::fs::write(&p, forged_npy(dict, &[0u8; 16])).unwrap();
        // This used to abort the process trying to allocate 80 GB.
        let e = read_npy_f64(&p).unwrap_err().to_string();
        assert!(e.contains("lie.npy") && e.contains("[100000, 100000]"), "{e}");
        // A valid file passes the check.
        write_npy(&p, Array2::<u8>::zeros((3, 4)).view()).unwrap();
        assert_eq!(read_npy_f64(&p).unwrap().dim(), (3, 4));
    }

    /// A version 1.0 `.npy` file with header dictionary `dict` and `data` after it.
    fn forged_npy(dict: &str, data: &[u8]) -> Vec<u8> {
        let mut header = dict.to_string();
        while !(10 + header.len() + 1).is_multiple_of(64) {
            header.push(' ');
        }
        header.push('\n');
        let mut forged = b"\x93NUMPY\x01\x00".to_vec();
        forged.extend_from_slice(&(header.len() as u16).to_le_bytes());
        forged.extend_from_slice(header.as_bytes());
        forged.extend_from_slice(data);
        forged
    }

    #[test]
    fn headers_the_reader_accepts_in_any_spelling_are_checked_before_allocating() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("odd.npy");
        // Headers that a string search for `'shape': (...)` misread: each announces 10^12
        // cells (or, for the zero-sized dtypes, 10^12 elements) over 32 bytes of data: a naive
        // reader panics (a ')' before the '(') or aborts the process allocating terabytes.
        for dict in [
            "{'descr': '<f8', 'fortran_order': False, 'shape': ), (2, 2)}",
            "{'descr': '<f8', 'fortran_order': False, 'shape': (1_000_000, 1_000_000), }",
            "{'descr': '<f8', 'fortran_order': False, 'shape': (0x100000, 0x100000), }",
            "{\"descr\": \"<f8\", \"fortran_order\": False, \"shape\": (1000000, 1000000)}",
            "{'descr': '<f0', 'fortran_order': False, 'shape': (1000000, 1000000), }",
            "{'descr': '|V0', 'fortran_order': False, 'shape': (1000000, 1000000), }",
        ] {
            std::fs::write(&p, forged_npy(dict, &[0u8; 32])).unwrap();
            let e = read_npy_f64(&p).unwrap_err().to_string();
            assert!(e.contains("odd.npy"), "{dict}: {e}");
        }
        // Spelled oddly but honest: read.
        let data: Vec<u8> = [1.0f64, 2.0, 3.0, 4.0]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        for dict in [
            "{'descr': '<f8', 'fortran_order': False, 'shape': (0x2, 2), }",
            "{\"descr\": \"<f8\", \"fortran_order\": False, \"shape\": (2, 2)}",
        ] {
            std::fs::write(&p, forged_npy(dict, &data)).unwrap();
            assert_eq!(
                read_npy_f64(&p).unwrap(),
                array![[1.0, 2.0], [3.0, 4.0]],
                "{dict}"
            );
        }
    }

    #[test]
    fn output_files_are_checked_before_any_work() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        assert!(check_output_file(&d.join("phi.npy")).is_ok());
        let err = |p: &Path| check_output_file(p).unwrap_err().to_string();
        assert!(err(d).contains("is a folder"), "{}", err(d));
        let slash = PathBuf::from(format!("{}/", d.join("new").display()));
        assert!(err(&slash).contains("is a folder"), "{}", err(&slash));
        let missing = d.join("nope").join("phi.npy");
        assert!(err(&missing).contains("does not exist"), "{}", err(&missing));
        std::fs::write(d.join("f"), b"x").unwrap();
        let under_file = d.join("f").join("phi.npy");
        assert!(
            err(&under_file).contains("is a file, not a folder"),
            "{}",
            err(&under_file)
        );
        #[cfg(unix)]
        {
            let dev = Path::new("/dev/null");
            assert!(err(dev).contains("not a regular file"), "{}", err(dev));
            let e = write_bytes_atomic(dev, b"x").unwrap_err().to_string();
            assert!(e.contains("not a regular file"), "{e}");
            assert!(std::os::unix::fs::FileTypeExt::is_char_device(
                &std::fs::metadata(dev).unwrap().file_type()
            ));
        }
    }

    #[test]
    fn only_regular_files_are_read_as_inputs() {
        let dir = tempfile::tempdir().unwrap();
        let e = read_input_file(dir.path()).unwrap_err().to_string();
        assert!(e.contains("is a folder"), "{e}");
        let e = read_input_file(&dir.path().join("nope.json"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("nope.json"), "{e}");
        #[cfg(unix)]
        {
            // Reading /dev/zero would never end.
            let e = read_input_file(Path::new("/dev/zero")).unwrap_err().to_string();
            assert!(e.contains("/dev/zero") && e.contains("not a regular file"), "{e}");
            // A pipe is read to its end.
            let fifo = dir.path().join("pipe.json");
            let made = std::process::Command::new("mkfifo").arg(&fifo).status().unwrap();
            assert!(made.success());
            let writer = {
                let fifo = fifo.clone();
                std::thread::spawn(move || std::fs::write(fifo, b"{\"piped\": true}").unwrap())
            };
            assert_eq!(read_input_file(&fifo).unwrap(), b"{\"piped\": true}");
            writer.join().unwrap();
        }
        std::fs::write(dir.path().join("ok"), b"fine").unwrap();
        assert_eq!(read_input_file(&dir.path().join("ok")).unwrap(), b"fine");
    }

    #[cfg(unix)]
    #[test]
    fn an_atomic_write_through_a_symbolic_link_replaces_its_target_and_keeps_the_link() {
        let dir = tempfile::tempdir().unwrap();
        let (target, link) = (dir.path().join("real.png"), dir.path().join("link.png"));
        std::fs::write(&target, b"old").unwrap();
        std::os::unix::fs::symlink(&target, &link).unwrap();
        write_bytes_atomic(&link, b"new").unwrap();
        assert!(
            link.symlink_metadata().unwrap().file_type().is_symlink(),
            "the link is kept"
        );
        assert_eq!(std::fs::read(&target).unwrap(), b"new");
        let e = write_bytes_atomic(dir.path(), b"x").unwrap_err().to_string();
        assert!(e.contains("is a folder"), "{e}");
    }

    #[test]
    fn bad_npy_names_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("bad.npy");
        std::fs::write(&p, b"not an npy file").unwrap();
        let e = read_npy_f64(&p).unwrap_err().to_string();
        assert!(e.contains("bad.npy"), "{e}");
        let e = read_npy_f64(&dir.path().join("missing.npy"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("missing.npy"), "{e}");
    }

    #[test]
    fn writing_under_a_file_names_that_file() {
        let dir = tempfile::tempdir().unwrap();
        let blocker = dir.path().join("out");
        std::fs::write(&blocker, b"mine").unwrap();
        for target in [blocker.join("x.json"), blocker.join("sub/x.json")] {
            let e = write_bytes_atomic(&target, b"{}").unwrap_err().to_string();
            assert!(e.contains("x.json"), "{e}");
            assert!(
                e.contains(&format!("{} is a file, not a folder", blocker.display())),
                "{e}"
            );
        }
        assert_eq!(std::fs::read(&blocker).unwrap(), b"mine");
    }

    #[test]
    fn output_folders_are_checked_before_any_work() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("a/b");
        prepare_output_dir(&out).unwrap();
        assert!(out.is_dir());
        assert_eq!(
            std::fs::read_dir(&out).unwrap().count(),
            0,
            "the probe is removed"
        );
        prepare_output_dir(&out).unwrap();
        let blocker = dir.path().join("map.json");
        std::fs::write(&blocker, b"mine").unwrap();
        let name = blocker.display().to_string();
        let e = prepare_output_dir(&blocker).unwrap_err().to_string();
        assert!(
            e.starts_with(&format!("{name}: exists and is a file, not a folder")),
            "{e}"
        );
        assert_eq!(e.matches(&name).count(), 1, "named once: {e}");
        let e = prepare_output_dir(&blocker.join("sub")).unwrap_err().to_string();
        assert!(e.contains(&format!("{name} is a file, not a folder")), "{e}");
        assert_eq!(std::fs::read(&blocker).unwrap(), b"mine");
    }

    #[test]
    fn atomic_write_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("sub/x.txt");
        write_bytes_atomic(&p, b"hello").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"hello");
        let failed = write_atomic(&p, |_| Err(std::io::Error::other("boom")));
        assert!(failed.is_err());
        assert_eq!(
            std::fs::read(&p).unwrap(),
            b"hello",
            "a failed write keeps the old file"
        );
        let names: Vec<_> = std::fs::read_dir(p.parent().unwrap()).unwrap().collect();
        assert_eq!(names.len(), 1);
    }
}
