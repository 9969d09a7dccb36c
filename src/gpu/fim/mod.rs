//! Eikonal on the GPU: the block fast iterative method (Jeong & Whitaker 2008) with large tiles
//! relaxed to convergence, host side, and its CPU twin [`solve_fim_cpu`], written to read like
//! the shaders `fim_block.wgsl` and `fim_commit.wgsl`.
//!
//! The grid is cut into square tiles of [`FIM_TILE_LARGE`] cells a side (or [`FIM_TILE_SMALL`]
//! where the adapter's workgroup memory cannot hold the larger tile, see [`choose_fim_tile`]),
//! one 16x16 workgroup per tile. One pass is two dispatches:
//! 1. `fim_block`: every tile of the active list loads itself and a one-cell halo from `phi`
//!    into workgroup memory and relaxes it (Jacobi sweeps of the first-order anisotropic update
//!    of SPEC §4, a barrier between sweeps; after the first sweep only the cells next to one
//!    that moved) until no cell moves, then writes it to `phi_next`.
//!    It queues each neighbour tile that one of its moved edge cells can now lower (the cell is
//!    below the one across the edge) on the next pass's list, with atomics, each tile once.
//! 2. `fim_commit`: copies the listed tiles back from `phi_next` to `phi`; one invocation counts
//!    the pass and writes the next pass's indirect dispatch sizes.
//!
//! The active lists and their counts rotate between passes (two lists, three counts, chosen by
//! a dynamic uniform offset), so no pass clears what another pass is reading. Each block pass
//! reads only `phi` (never a tile another workgroup is writing), so the result and every counter
//! depend only on the input, not on scheduling or on the order of the list. The host encodes
//! passes in batches and reads the 32-byte state back after each batch; the solve stops when the
//! next list is empty, i.e. no tile can lower any cell (see [`FIM_EPS_REL`]). A safety cap on
//! passes, if reached, is an error, never a silent success.
//!
//! All groups are solved together: the list holds `(group, tile)` entries, so a pass relaxes
//! every group's front and the pass count is the largest over the groups.
//!
//! This module holds the constants, the tile choice and the input's lay-out; [`device`] the
//! buffers and the host loop, [`twin`] the CPU twin.

mod device;
mod twin;

use crate::eikonal::{Solution, SolveCounters};
use crate::error::{Error, Result};
use crate::gpu::types::GpuFimParams;
use ndarray::{Array2, ArrayView3};

pub(crate) use device::FimBuffers;
pub use twin::{local_update, solve_fim_cpu, solve_fim_cpu_tiled};

/// Edge of a tile, cells, where the adapter's workgroup memory holds it: a front crosses a
/// whole tile per pass, so the pass count falls in proportion to the tile's edge. 64 needs
/// 19.5 kB of workgroup memory, above WebGPU's guaranteed 16 kB.
/// Sync: `FIM_TILE` in `shaders/fim_common.wgsl` (rewritten by [`fim_pass_source`]).
pub const FIM_TILE_LARGE: usize = 64;
/// Edge of a tile, cells, on adapters whose workgroup memory is below what
/// [`FIM_TILE_LARGE`] needs: 32 needs 6.7 kB, within WebGPU's guaranteed 16 kB.
pub const FIM_TILE_SMALL: usize = 32;
/// Invocations along each axis of a block workgroup (16x16 = 256, WebGPU's guaranteed limit).
/// Sync: `FIM_LANES` in `shaders/fim_common.wgsl`.
pub const FIM_LANES: usize = 16;
/// Sweeps per tile edge after which a tile that has not settled stops and queues itself for the
/// next pass. Sync: `FIM_MAX_SWEEPS` in `shaders/fim_common.wgsl`.
pub const FIM_MAX_SWEEPS_PER_EDGE: usize = 8;
/// Potential of an unreached cell on the device; read back as `+inf`.
/// Sync: `PHI_INF` in `shaders/common.wgsl`.
pub const PHI_INF: f32 = 3.0e38;

/// A device potential as the CPU solvers give it: `+inf` where no source reaches
/// ([`PHI_INF`] and above, or not finite).
pub(crate) fn potential_value(v: f32) -> f64 {
    if v >= PHI_INF || !v.is_finite() {
        f64::INFINITY
    } else {
        f64::from(v)
    }
}
/// A cell's update counts only when it lowers phi by more than this fraction of the new value.
/// 0: every decrease counts. Values only ever decrease and f32 has finitely many, so the solve
/// still ends. A positive threshold biases the result: each cell may stop up to `eps * phi`
/// high and the next cell inherits that lag, so the error adds up along a path to about
/// `eps * n / 2` relative after n cells.
pub const FIM_EPS_REL: f32 = 0.0;
/// Finite unit costs above this (s/m) are clamped to it, so squared step costs stay finite
/// in f32 (a walker that slow is blocked in practice).
pub const FIM_COST_MAX: f32 = 1.0e12;
/// Passes encoded in the first submission before the host reads the state back. An empty pass
/// (after convergence) is two dispatches of at most one workgroup, so a solve of a few passes
/// loses little by encoding 32.
pub const FIRST_PASSES_PER_SUBMIT: usize = 32;
/// Passes encoded in each later submission: the host reads the state back once per 64 passes.
pub const PASSES_PER_SUBMIT: usize = 64;
/// Dispatches per encoded pass (`fim_block`, `fim_commit`).
pub const DISPATCHES_PER_PASS: usize = 2;
/// Slots of the `state` buffer. Sync: `STATE_*` in `shaders/common.wgsl`.
const STATE_COUNT: usize = 0; // three list counts, slots 0..3
const STATE_PASSES: usize = 3;
const STATE_RELAX_LO: usize = 5;
const STATE_RELAX_HI: usize = 6;
pub(crate) const STATE_SLOTS: usize = 8;
/// Workgroup memory of a block workgroup beside the tile and its bits: five u32 variables,
/// rounded up.
const FIM_WORKGROUP_EXTRA_BYTES: u32 = 32;

/// Bytes of workgroup memory `fim_block` needs for tiles of `tile` cells a side: the tile and
/// its one-cell halo as f32, two banks of one u32 per invocation (which of its cells moved),
/// and a few flags.
pub fn fim_workgroup_bytes(tile: usize) -> u32 {
    ((tile + 2) * (tile + 2) * 4 + 2 * FIM_LANES * FIM_LANES * 4) as u32 + FIM_WORKGROUP_EXTRA_BYTES
}

/// The tile edge for an adapter offering `limit` bytes of workgroup memory per workgroup, and
/// the note to print when that is less than [`FIM_TILE_LARGE`]: the larger tile where it fits,
/// else [`FIM_TILE_SMALL`] (which every WebGPU adapter holds).
///
/// # Errors
/// [`Error::Gpu`] when even the small tile does not fit (an adapter below WebGPU's limits).
pub fn choose_fim_tile(limit: u32) -> Result<(usize, Option<String>)> {
    if fim_workgroup_bytes(FIM_TILE_LARGE) <= limit {
        return Ok((FIM_TILE_LARGE, None));
    }
    if fim_workgroup_bytes(FIM_TILE_SMALL) <= limit {
        return Ok((
            FIM_TILE_SMALL,
            Some(format!(
                "the adapter offers {limit} bytes of workgroup memory, fewer than the {} that \
                 {FIM_TILE_LARGE}x{FIM_TILE_LARGE} FIM tiles need: using \
                 {FIM_TILE_SMALL}x{FIM_TILE_SMALL} tiles (about twice the passes)",
                fim_workgroup_bytes(FIM_TILE_LARGE)
            )),
        ));
    }
    Err(Error::Gpu(format!(
        "the adapter offers {limit} bytes of workgroup memory, fewer than the {} that even \
         {FIM_TILE_SMALL}x{FIM_TILE_SMALL} FIM tiles need",
        fim_workgroup_bytes(FIM_TILE_SMALL)
    )))
}

/// The source of a FIM pass (`shaders::FIM_BLOCK` or `shaders::FIM_COMMIT`) for tiles of
/// `tile` cells a side: the embedded source with its `FIM_TILE` line rewritten.
pub fn fim_pass_source(source: &str, tile: usize) -> String {
    let default = format!("const FIM_TILE: u32 = {FIM_TILE_LARGE}u;");
    assert!(source.contains(&default), "a FIM pass declares {default}");
    source.replace(&default, &format!("const FIM_TILE: u32 = {tile}u;"))
}

/// The safety cap on passes for a grid of `cells` cells and `tiles` tiles of `tile` cells a
/// side per group: a tile is relaxed again only when a neighbour lowered its edge below its own
/// cells. On open and walled grids a tile is woken a handful of times (four wakes per tile plus
/// slack); a path that winds through narrow corridors can cross a tile edge once per `tile`
/// cells of its length, and no path is longer than the grid's cells, so `2 * cells / tile`
/// more covers those.
pub fn max_passes(tiles: usize, cells: usize, tile: usize) -> usize {
    4 * tiles + 64 + 2 * cells / tile.max(1)
}

/// Unit cost as the solvers use it: the step cost factor, 0 where the face is blocked
/// (`+inf`, NaN, or `<= 0`), finite costs clamped to [`FIM_COST_MAX`].
pub fn sanitize_cost(c: f32) -> f32 {
    if c.is_finite() && c > 0.0 {
        c.min(FIM_COST_MAX)
    } else {
        0.0
    }
}

/// Checked inputs of one multi-group solve, laid out as the device buffers.
pub(crate) struct FimInput {
    pub(crate) params: GpuFimParams,
    /// Tile edge, cells.
    pub(crate) tile: usize,
    /// `(cell * 4 + dir)`: sanitized unit cost.
    pub(crate) cost: Vec<f32>,
    /// `(group * cells + cell)`: 1 on sources.
    pub(crate) source: Vec<u32>,
    /// `(group * cells + cell)`: 0 on sources, `PHI_INF` elsewhere.
    pub(crate) phi: Vec<f32>,
}

fn prepare(cost: ArrayView3<f32>, goals: &[Array2<bool>], cell_size: f64, tile: usize) -> Result<FimInput> {
    let (rows, cols, dirs) = cost.dim();
    if dirs != 4 {
        return Err(Error::invalid(
            "<memory>",
            "cost",
            format!("shape {:?}, expected (rows, cols, 4)", cost.dim()),
        ));
    }
    let mut input = prepare_goals(rows, cols, goals, cell_size, tile)?;
    input.cost = cost.iter().map(|&c| sanitize_cost(c)).collect();
    Ok(input)
}

/// Checks the goals and the cell size and lays out everything but the cost (left empty), for
/// tiles of `tile` cells a side.
pub(crate) fn prepare_goals(
    rows: usize,
    cols: usize,
    goals: &[Array2<bool>],
    cell_size: f64,
    tile: usize,
) -> Result<FimInput> {
    if !(cell_size.is_finite() && cell_size > 0.0) {
        return Err(Error::invalid(
            "<memory>",
            "cell_size",
            format!("{cell_size}, expected a positive number"),
        ));
    }
    for (k, g) in goals.iter().enumerate() {
        if g.dim() != (rows, cols) {
            return Err(Error::invalid(
                "<memory>",
                format!("goals[{k}]"),
                format!("shape {:?}, expected ({rows}, {cols}) like the cost", g.dim()),
            ));
        }
    }
    let cells = rows * cols;
    let tiles_x = cols.div_ceil(tile);
    let tiles_y = rows.div_ceil(tile);
    let mut source = vec![0u32; goals.len() * cells];
    let mut phi = vec![PHI_INF; goals.len() * cells];
    for (k, g) in goals.iter().enumerate() {
        for (i, &s) in g.iter().enumerate() {
            if s {
                source[k * cells + i] = 1;
                phi[k * cells + i] = 0.0;
            }
        }
    }
    Ok(FimInput {
        params: GpuFimParams {
            cols: cols as u32,
            rows: rows as u32,
            tiles_x: tiles_x as u32,
            tiles_y: tiles_y as u32,
            tiles_per_group: (tiles_x * tiles_y) as u32,
            groups: goals.len() as u32,
            cell_size: cell_size as f32,
            eps_rel: FIM_EPS_REL,
        },
        tile,
        cost: Vec::new(),
        source,
        phi,
    })
}

/// One solution per group from the potentials `phi` of every group, each carrying the solve's
/// `counters` (with the relaxations per reachable cell filled in).
pub(crate) fn solutions(
    phi: &[f32],
    input: &FimInput,
    solver: &'static str,
    mut counters: SolveCounters,
    seconds: f64,
) -> Vec<Solution> {
    let (rows, cols) = (input.params.rows as usize, input.params.cols as usize);
    let cells = rows * cols;
    let reachable = phi.iter().filter(|&&v| v < PHI_INF && v.is_finite()).count();
    counters.relaxations_per_reachable_cell = if reachable > 0 {
        counters.relaxations as f64 / reachable as f64
    } else {
        0.0
    };
    (0..input.params.groups as usize)
        .map(|k| {
            let slice = &phi[k * cells..(k + 1) * cells];
            let values: Vec<f64> = slice.iter().map(|&v| potential_value(v)).collect();
            let unreachable = values.iter().filter(|v| v.is_infinite()).count();
            Solution {
                phi: Array2::from_shape_vec((rows, cols), values).expect("phi has rows * cols values"),
                unreachable,
                solver,
                passes: counters.passes,
                seconds,
                counters: Some(counters),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::device::{STEP_ENTRIES, fim_step};
    use super::twin::update_from_neighbours;
    use super::*;

    #[test]
    fn gpu_update_isotropic_cases() {
        // One neighbour: one step. Two equal diagonal neighbours: 2 (phi - 0)^2 = 1.
        assert_eq!(
            local_update(PHI_INF, PHI_INF, 0.0, PHI_INF, 1.0, 1.0, 1.0, 1.0),
            1.0
        );
        let diag = local_update(PHI_INF, 0.0, 0.0, PHI_INF, 1.0, 1.0, 1.0, 1.0);
        assert!((diag - 0.5f32.sqrt()).abs() < 1e-6, "{diag}");
        // Blocked faces (cost 0) are never used; nothing reachable stays unreached.
        assert_eq!(local_update(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0), PHI_INF);
        assert_eq!(
            local_update(PHI_INF, PHI_INF, PHI_INF, PHI_INF, 1.0, 1.0, 1.0, 1.0),
            PHI_INF
        );
    }

    #[test]
    fn gpu_update_is_fast_marchings_prefix_minimum() {
        // A cell seen on a random anisotropic field: E blocked; W (3.493) and N (4.266) give
        // 4.35094 when fast marching has accepted them; S (4.323, cheaper to reach: 4.747 <
        // 5.351) then wins the y axis but its quadratic with W is 4.35165, higher. Fast
        // marching keeps 4.35094 (decrease-key), so must the iterative update.
        let (pn, pw, ps) = (4.265_882_f32, 3.492_999, 4.323_148);
        let (cn, cw, cs) = (0.5 * 2.169_980_5, 0.5 * 1.721_181_4, 0.5 * 0.848_434_45);
        let all_four = update_from_neighbours(PHI_INF, pn, pw, ps, 0.0, cn, cw, cs);
        let w_and_n = update_from_neighbours(PHI_INF, pn, pw, PHI_INF, 0.0, cn, cw, cs);
        assert!(all_four > w_and_n + 5e-4, "{all_four} vs {w_and_n}");
        let u = local_update(PHI_INF, pn, pw, ps, 0.0, cn, cw, cs);
        assert_eq!(u, w_and_n);
        assert!((f64::from(u) - 4.350_940_9).abs() < 2e-5, "{u}");
    }

    #[test]
    fn gpu_update_matches_the_f64_quadratic() {
        use crate::eikonal::quadratic::{Upwind, solve_two_axes};
        for (a, p, b, q) in [
            (0.0, 1.0, 0.0, 1.0),
            (3.0, 0.7, 3.4, 1.3),
            (1.0, 2.0, 0.2, 0.5),
            (5.0, 0.1, 0.0, 0.3),
        ] {
            let f32_value = local_update(PHI_INF, b as f32, a as f32, PHI_INF, 0.0, q as f32, p as f32, 0.0);
            let f64_value = solve_two_axes(Upwind { m: a, s: p }, Upwind { m: b, s: q });
            assert!(
                (f64::from(f32_value) - f64_value).abs() < 1e-5 * f64_value.max(1.0),
                "{f32_value} vs {f64_value}"
            );
        }
    }

    #[test]
    fn the_tile_follows_the_workgroup_memory() {
        // WebGPU's guaranteed 16 kB holds the small tile only; lavapipe's and the discrete
        // GPUs' 32 kB and more hold the large one.
        let (tile, note) = choose_fim_tile(16384).unwrap();
        assert_eq!(tile, FIM_TILE_SMALL);
        assert!(note.unwrap().contains("16384 bytes"));
        assert_eq!(choose_fim_tile(32768).unwrap(), (FIM_TILE_LARGE, None));
        let exact = fim_workgroup_bytes(FIM_TILE_LARGE);
        assert_eq!(choose_fim_tile(exact).unwrap().0, FIM_TILE_LARGE);
        assert_eq!(choose_fim_tile(exact - 1).unwrap().0, FIM_TILE_SMALL);
        assert!(choose_fim_tile(fim_workgroup_bytes(FIM_TILE_SMALL) - 1).is_err());
        assert_eq!(fim_workgroup_bytes(64), 66 * 66 * 4 + 2048 + 32);
    }

    #[test]
    fn the_pass_source_sets_the_tile() {
        let src = fim_pass_source(crate::gpu::shaders::FIM_BLOCK, 32);
        assert!(src.contains("const FIM_TILE: u32 = 32u;"));
        assert!(!src.contains("const FIM_TILE: u32 = 64u;"));
    }

    #[test]
    fn the_lists_and_counts_rotate_without_overlap() {
        for e in 0..12 {
            let (now, next) = (fim_step(e), fim_step(e + 1));
            // A pass appends to the other list and count; the count it clears is the next
            // pass's append target, read by neither of its own dispatches.
            assert_eq!(next.list_in, 1 - now.list_in);
            assert_eq!(next.count_in, now.count_out);
            assert_eq!(next.count_out, now.count_clear);
            let mut slots = [now.count_in, now.count_out, now.count_clear];
            slots.sort();
            assert_eq!(slots, [0, 1, 2]);
            assert_eq!(fim_step(e + STEP_ENTRIES), now);
        }
    }

    #[test]
    fn gpu_sanitize_cost_blocks_bad_faces_and_clamps() {
        assert_eq!(sanitize_cost(f32::INFINITY), 0.0);
        assert_eq!(sanitize_cost(f32::NAN), 0.0);
        assert_eq!(sanitize_cost(-1.0), 0.0);
        assert_eq!(sanitize_cost(0.0), 0.0);
        assert_eq!(sanitize_cost(2.5), 2.5);
        assert_eq!(sanitize_cost(1e30), FIM_COST_MAX);
    }
}
