//! The library's error type.

use std::path::PathBuf;

/// The `file` of an [`Error::Invalid`] about a command-line option rather than a file.
pub const OPTIONS: &str = "<options>";

/// `"FILE: "`, or nothing for [`OPTIONS`].
fn source_prefix(file: &str) -> String {
    if file == OPTIONS {
        String::new()
    } else {
        format!("{file}: ")
    }
}

/// Everything the library can fail with. Messages name the file, the place in it (a JSON path
/// such as `groups[1].goals[0].rect.min`), the offending value and what was expected. The
/// [crate example](crate) passes them on with `?`.
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
    #[error("{}{at}: {message}", source_prefix(file))]
    Invalid {
        /// The file (or a description such as "`<memory>`"; [`OPTIONS`] for a command-line
        /// option, which is not shown: the option's name in `at` says it all).
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

/// `Result` with the library's [`Error`] (see the [crate example](crate)).
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A number as messages show it: `0.5`, `2.0`, `1e300` (not three hundred digits), `NaN`.
pub fn num(v: f64) -> String {
    if v.is_finite() && v != 0.0 && !(1e-4..1e6).contains(&v.abs()) {
        format!("{v:e}")
    } else {
        format!("{v:?}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn option_errors_name_the_option_not_a_file() {
        let e = Error::invalid(OPTIONS, "--dt", "-1: expected a positive time step");
        assert_eq!(e.to_string(), "--dt: -1: expected a positive time step");
        let e = Error::invalid("maps/a.json", "grid.cols", "0: expected at least 1");
        assert_eq!(e.to_string(), "maps/a.json: grid.cols: 0: expected at least 1");
    }
}
