//! What a run holds in memory, estimated from its size before anything large is allocated,
//! and what the machine has to give: a map too large for the memory at hand is refused with
//! the amount it needs, never left to abort half-way through.
//!
//! The estimate counts every array of the grid's size that `simulate` holds at its peak
//! ([`SIM_BYTES_PER_CELL`], [`SIM_BYTES_PER_CELL_PER_GROUP`]), the neighbour grids, what each
//! walker takes ([`SIM_BYTES_PER_AGENT`]) and the images it draws ([`SIM_FIXED_BYTES`]).
//! `tests/memory_estimate.rs` holds it against the bytes a run allocates.

use crate::error::{Error, Result};
use crate::grid::Grid;

/// Bytes per cell a simulation holds whatever the number of groups, at its peak (a step: the
/// last step's fields are kept while the next ones are computed; at the end the report's maps
/// and the images take the place of the next step's fields, and no more):
///
/// | what | bytes |
/// |---|---|
/// | the scene: height, discomfort (`f32`), obstacles | 9 |
/// | the scene's faces: terrain speed and discomfort per face (`f64`), the density window's open area | 72 |
/// | the fields of a step: density, mean velocity, speed and cost per face (`f32`) | 44 |
/// | the next step's fields (or the report's maps and images) | 44 |
/// | the pedestrian model's floor: open share, widths across | 12 |
/// | the local layer's wall map: blocked, boundary, clearance | 6 |
/// | peak density, level of service and clear time per cell | 39 |
pub const SIM_BYTES_PER_CELL: u64 = 226;

/// Bytes per cell and group, every group's potential solved at once: the goal mask and the
/// cells the march must reach (1 + 1), the potential (`f64`), the next one while it is solved,
/// the whole-grid one asked for on demand (8 + 8 + 8), the gradient and the next one
/// (2 x `f32`, twice: 16) and the march's own arrays (values, states, an isotropic cost: 25).
pub const SIM_BYTES_PER_CELL_PER_GROUP: u64 = 67;

/// Bytes per walker: its columns, its log and arrival, its entries in the neighbour grids, the
/// local layer's and the report's per-walker values, with room to spare.
pub const SIM_BYTES_PER_AGENT: u64 = 1024;

/// Bytes whatever the size: the images of a small grid, which are drawn at least 800 pixels
/// wide (and up to 2400 tall), three at a time, RGBA.
pub const SIM_FIXED_BYTES: u64 = 36 << 20;

/// Bytes of one neighbour-grid bin (its start index), times the grids a run holds (the
/// separation's, the pedestrian model's and the local layer's).
const BIN_BYTES: u64 = 4 * 3;

/// Bytes per cell that loading a map holds at its peak: each layer as `f64` while it is built
/// (a raster's decoded pixels beside it), the compiled scene and the flood fill from the
/// goals.
pub const LOAD_BYTES_PER_CELL: u64 = 48;

/// The size of a run, what its memory depends on.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RunSize {
    /// The grid.
    pub grid: Grid,
    /// Groups of walkers (one potential each).
    pub groups: usize,
    /// Walkers.
    pub agents: usize,
    /// The largest body radius, metres (the neighbour grids' bins are twice as large).
    pub max_radius: f64,
}

impl RunSize {
    /// The size of a run of `scene` with the walkers its spawn areas ask for, its sources'
    /// (as many as they bring over the run, on average) included.
    pub fn of(scene: &crate::scene::Scene) -> Self {
        let sources = scene
            .schedule
            .sources
            .iter()
            .map(|s| s.times.expected_count().ceil() as usize);
        Self {
            grid: scene.grid,
            groups: scene.groups.len(),
            agents: scene
                .groups
                .iter()
                .map(|g| g.agent_count())
                .chain(sources)
                .fold(0, usize::saturating_add),
            max_radius: scene.groups.iter().map(|g| g.radius).fold(0.05, f64::max),
        }
    }

    /// What a run of this size is, in words, for messages: `7000 x 7000 cells, 1 group and 20
    /// walkers`.
    pub fn describe(&self) -> String {
        let plural = |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
        format!(
            "{} x {} cells, {} and {}",
            self.grid.cols,
            self.grid.rows,
            plural(self.groups, "group", "groups"),
            plural(self.agents, "walker", "walkers")
        )
    }

    /// Bytes a simulation of this size holds at its peak, `simulate`'s outputs included.
    pub fn simulation_bytes(&self) -> u64 {
        let cells = self.grid.len() as u64;
        let per_cell = SIM_BYTES_PER_CELL + SIM_BYTES_PER_CELL_PER_GROUP * self.groups as u64;
        let bin = (2.0 * self.max_radius).max(0.1);
        let along = |extent: f64| (extent / bin).ceil().max(1.0);
        let bins = (along(self.grid.width()) * along(self.grid.height()))
            .min(crate::neighbors::MAX_BINS as f64) as u64;
        cells
            .saturating_mul(per_cell)
            .saturating_add(bins * BIN_BYTES)
            .saturating_add((self.agents as u64).saturating_mul(SIM_BYTES_PER_AGENT))
            .saturating_add(SIM_FIXED_BYTES)
    }
}

/// Bytes as messages show them: `512 KiB`, `37 MiB`, `2.4 GiB`.
pub fn show_bytes(bytes: u64) -> String {
    const KIB: f64 = 1024.0;
    let b = bytes as f64;
    if b >= KIB * KIB * KIB {
        format!("{:.1} GiB", b / (KIB * KIB * KIB))
    } else if b >= KIB * KIB {
        format!("{:.0} MiB", (b / (KIB * KIB)).ceil())
    } else {
        format!("{:.0} KiB", (b / KIB).ceil())
    }
}

/// The memory this process may still take, and what limits it.
#[derive(Clone, Debug, PartialEq)]
pub struct Available {
    /// Bytes.
    pub bytes: u64,
    /// What sets the limit, in words (`the address-space limit (ulimit -v)`).
    pub limit: &'static str,
}

/// The memory this process may still take: the least of the memory the system has free
/// (`MemAvailable` and free swap in `/proc/meminfo`) and what the process limits on its address
/// space and data (`ulimit -v`, `ulimit -d`) leave above what it holds. `None` where none of
/// these can be read (other systems than Linux).
pub fn available() -> Option<Available> {
    #[cfg(target_os = "linux")]
    {
        linux::available()
    }
    #[cfg(not(target_os = "linux"))]
    {
        None
    }
}

#[cfg(target_os = "linux")]
mod linux {
    use super::Available;

    /// The value of `key` (in kB) in a `/proc` file of `key: value kB` lines, in bytes.
    fn kb(text: &str, key: &str) -> Option<u64> {
        text.lines()
            .find_map(|l| l.strip_prefix(key)?.strip_prefix(':'))
            .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
            .map(|k| k.saturating_mul(1024))
    }

    /// The soft limit `resource`, or `None` when unlimited.
    fn limit(resource: libc::__rlimit_resource_t) -> Option<u64> {
        let mut r = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: `getrlimit` writes the limit into `r`, a valid `rlimit`.
        let ok = unsafe { libc::getrlimit(resource, &mut r) } == 0;
        (ok && r.rlim_cur != libc::RLIM_INFINITY).then_some(r.rlim_cur)
    }

    pub(super) fn available() -> Option<Available> {
        let mut best: Option<Available> = None;
        let mut offer = |bytes: u64, limit: &'static str| {
            if best.as_ref().is_none_or(|b| bytes < b.bytes) {
                best = Some(Available { bytes, limit });
            }
        };
        if let Ok(info) = std::fs::read_to_string("/proc/meminfo")
            && let Some(free) = kb(&info, "MemAvailable")
        {
            offer(
                free.saturating_add(kb(&info, "SwapFree").unwrap_or(0)),
                "the memory the system has free",
            );
        }
        let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
        if let Some(cap) = limit(libc::RLIMIT_AS) {
            let held = kb(&status, "VmSize").unwrap_or(0);
            offer(cap.saturating_sub(held), "the address-space limit (ulimit -v)");
        }
        if let Some(cap) = limit(libc::RLIMIT_DATA) {
            let held = kb(&status, "VmData").unwrap_or(0);
            offer(cap.saturating_sub(held), "the data-size limit (ulimit -d)");
        }
        best
    }
}

/// What is short when `what` needs `needed` bytes and [`available`] gives less: `"{what}
/// needs about 9.1 GiB of memory, but the address-space limit (ulimit -v) leaves 5.2 GiB"`;
/// `None` when it fits (or nothing can be read).
pub fn shortfall(needed: u64, what: &str) -> Option<String> {
    let free = available()?;
    (needed > free.bytes).then(|| {
        format!(
            "{what} needs about {} of memory, but {} leaves {}",
            show_bytes(needed),
            free.limit,
            show_bytes(free.bytes)
        )
    })
}

/// Checks that `needed` bytes fit in the memory [`available`] now; the error, labelled with
/// `file` and the JSON path `at`, is the [`shortfall`] of `what` and what to do.
pub fn ensure_available(needed: u64, file: &str, at: &str, what: &str) -> Result<()> {
    match shortfall(needed, what) {
        Some(short) => Err(Error::invalid(
            file,
            at,
            format!("{short}: use fewer or larger cells, or run where more memory is free"),
        )),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_are_shown_in_binary_units_rounded_up() {
        assert_eq!(show_bytes(1), "1 KiB");
        assert_eq!(show_bytes(5 << 20), "5 MiB");
        assert_eq!(show_bytes((5 << 20) + 1), "6 MiB");
        assert_eq!(show_bytes(3 << 29), "1.5 GiB");
    }

    #[test]
    fn the_estimate_grows_with_cells_groups_and_walkers() {
        let size = RunSize {
            grid: Grid::new(1000, 1000, 0.5),
            groups: 1,
            agents: 0,
            max_radius: 0.25,
        };
        let base = size.simulation_bytes();
        let more = |s: RunSize| s.simulation_bytes() - base;
        assert_eq!(
            more(RunSize { groups: 3, ..size }),
            2 * 1_000_000 * SIM_BYTES_PER_CELL_PER_GROUP
        );
        assert_eq!(more(RunSize { agents: 10, ..size }), 10 * SIM_BYTES_PER_AGENT);
        assert!(
            more(RunSize {
                grid: Grid::new(2000, 1000, 0.5),
                ..size
            }) > 1_000_000 * SIM_BYTES_PER_CELL
        );
    }
}
