//! The Python arguments' names for the library's: errors and notes reworded for Python, and
//! the library's choices read from the arguments that give them.

use crowdfield::eikonal::Order;
use crowdfield::gpu::Backend;
use crowdfield::local::LocalMode;
use crowdfield::names::Named;
use crowdfield::params::Model;
use pyo3::exceptions::{PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;

/// The library's names for what the Python arguments set, and the arguments that set them, in
/// the order [`python_text`] replaces them (longer phrases first), before the choices'
/// ([`choice_names`]). The library names its own fields (`SimConfig.dt`, `Backend::Gpu`) and the
/// command's flags where only the command can help; Python speaks of its arguments.
const PYTHON_NAMES: &[(&str, &str)] = &[
    ("order: Order::Second:", "order: 2:"),
    ("backend: Backend::Gpu:", "backend: \"gpu\":"),
    ("leave SimConfig.dt unset", "leave dt=None"),
    ("SimConfig.dt", "dt"),
    ("SimConfig.max_time", "max_time"),
    ("SimConfig.replan_every", "replan_every"),
    ("StudyOptions.max_seeds", "max_seeds"),
    ("StudyOptions.seeds", "seeds"),
    ("StudyOptions.max_time", "max_time"),
    ("StudyOptions.aset", "aset"),
    ("Order::First", "order=1"),
    (
        "pass --allow-outside-rasters to the command to read it",
        "pass allow_outside_rasters=True to load_map to read it",
    ),
    (
        "see `remaining` in report.json; raise --max-time",
        "see `remaining` in report(); raise max_time",
    ),
];

/// The library's and the command's names of the choices' values and the Python arguments that
/// give them: `Backend::Gpu` and `backend="gpu"`, `--model pedestrian` and
/// `model="pedestrian"`, `--local orca` and `local="orca"`; longer names first, so that
/// `--local boids+orca` is not read as `--local boids`.
pub(crate) fn choice_names() -> Vec<(String, String)> {
    let mut pairs: Vec<(String, String)> = Vec::new();
    for &b in Backend::ALL {
        pairs.push((format!("Backend::{b:?}"), format!("backend={:?}", b.name())));
    }
    for &m in Model::ALL {
        pairs.push((format!("--model {}", m.name()), format!("model={:?}", m.name())));
    }
    for &l in LocalMode::ALL {
        pairs.push((format!("--local {}", l.name()), format!("local={:?}", l.name())));
    }
    pairs.sort_by_key(|(library, _)| std::cmp::Reverse(library.len()));
    pairs
}

/// `text` (an error, a note from the library) with the library's names of settings replaced by
/// the Python arguments that set them ([`PYTHON_NAMES`], then [`choice_names`]).
pub(crate) fn python_text(text: &str) -> String {
    let text = PYTHON_NAMES
        .iter()
        .fold(text.to_string(), |t, (library, python)| {
            t.replace(library, python)
        });
    choice_names()
        .iter()
        .fold(text, |t, (library, python)| t.replace(library, python))
}

/// A library error as the Python exception of its kind, with the command's message in the
/// Python arguments' names.
pub(crate) fn to_py(e: crowdfield::Error) -> PyErr {
    let text = python_text(&e.to_string());
    match e {
        crowdfield::Error::Io { .. } => PyOSError::new_err(text),
        crowdfield::Error::Gpu(_) => PyRuntimeError::new_err(text),
        _ => PyValueError::new_err(text),
    }
}

/// The value of the library choice `N` named `text`, given as the Python argument `arg`: a
/// `ValueError` naming the argument, the value and the names accepted otherwise.
pub(crate) fn choice<N: Named>(arg: &str, text: &str) -> PyResult<N> {
    N::parse(text).map_err(|e| match e {
        crowdfield::Error::Invalid { message, .. } => PyValueError::new_err(format!("{arg}: {message}")),
        other => to_py(other),
    })
}

/// The order of the update from its number.
pub(crate) fn order_of(order: u8) -> PyResult<Order> {
    choice("order", &order.to_string())
}
