//! The library's error type.

use std::path::PathBuf;

/// Everything the library can fail with. Messages name the file, the place in it (a JSON path
/// such as `groups[1].goals[0].rect.min`), the offending value and what was expected.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// Input that does not describe a valid map or array.
    #[error("{file}: {at}: {message}")]
    Invalid {
        /// The file (or a description such as "`<memory>`").
        file: String,
        /// Where in the file: a JSON path, an array name.
        at: String,
        /// What is wrong: the value found and what was expected.
        message: String,
    },
    /// Several problems found at once (validation reports all of them).
    #[error("{}", .0.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("\n"))]
    Many(Vec<Error>),
    /// A GPU could not be used.
    #[error("GPU: {0}")]
    Gpu(String),
}

impl Error {
    /// Shorthand for [`Error::Invalid`].
    pub fn invalid(file: impl Into<String>, at: impl Into<String>, message: impl Into<String>) -> Self {
        Error::Invalid {
            file: file.into(),
            at: at.into(),
            message: message.into(),
        }
    }
}

impl Error {
    /// The same error with `file` put in place of `from` where an [`Error::Invalid`] (or one
    /// inside [`Error::Many`]) names `from`: code that sees only a compiled scene labels its
    /// errors with the scene's name, and the caller that knows the map's path swaps it in.
    pub fn relabel(self, from: &str, file: &str) -> Self {
        match self {
            Error::Invalid { file: f, at, message } if f == from => Error::Invalid {
                file: file.to_string(),
                at,
                message,
            },
            Error::Many(errors) => Error::Many(errors.into_iter().map(|e| e.relabel(from, file)).collect()),
            other => other,
        }
    }
}

/// `Result` with the library's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
