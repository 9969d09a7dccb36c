//! File input and output shared by every writer: atomic writes and `.npy` arrays.
//!
//! Every file the toolkit writes goes through [`write_atomic`]: the bytes go to a temporary file
//! in the same folder, which is then renamed over the target, so an interrupted run never leaves
//! a half-written file behind.

use crate::error::{Error, Result};
use ndarray::{Array2, ArrayView2};
use ndarray_npy::{ReadNpyExt, WriteNpyExt};
use std::io::{Cursor, Write};
use std::path::Path;

/// Writes a file atomically: `fill` writes into a temporary file beside `path`, which is
/// flushed, synced and renamed over `path`. Parent folders are created.
pub fn write_atomic(path: &Path, fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) -> Result<()> {
    let io_err = |source| Error::Io {
        path: path.to_path_buf(),
        source,
    };
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(dir).map_err(io_err)?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let result = (|| {
        let mut file = std::io::BufWriter::new(std::fs::File::create(&tmp)?);
        fill(&mut file)?;
        let file = file.into_inner().map_err(|e| e.into_error())?;
        file.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.map_err(io_err)
}

/// Writes `bytes` to `path` atomically.
pub fn write_bytes_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    write_atomic(path, |w| w.write_all(bytes))
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
/// (bool: 1 for true). The error names the file and the dtypes accepted.
pub fn read_npy_f64(path: &Path) -> Result<Array2<f64>> {
    let bytes = std::fs::read(path).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let file = path.display().to_string();
    macro_rules! try_as {
        ($t:ty, $conv:expr) => {
            match Array2::<$t>::read_npy(Cursor::new(&bytes)) {
                Ok(a) => return Ok(a.mapv($conv)),
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
        "expected a 2-D array of float64, float32, an integer type or bool (little-endian, C order)",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

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
