//! The CPU twin of the block FIM: the local update of `shaders/common.wgsl` and the tiled
//! solve, written to read like `fim_block.wgsl` and `fim_commit.wgsl`.

use super::{FIM_LANES, FIM_MAX_SWEEPS_PER_EDGE, FIM_TILE_LARGE, PHI_INF, max_passes, prepare, solutions};
use crate::eikonal::{Solution, SolveCounters};
use crate::error::{Error, Result};
use ndarray::{Array2, ArrayView3};
use std::time::Instant;

/// The first-order anisotropic update of SPEC §4 in f32, as fast marching computes it. `p*`
/// are the neighbours' potentials (`>= PHI_INF` = unreached), `c*` the step costs
/// `h * C(cell -> neighbour)` (0 = blocked). Twin of `local_update` in `shaders/common.wgsl`.
///
/// Fast marching accepts the neighbours in increasing order and recomputes the cell after each
/// acceptance, keeping the smallest value (decrease-key): its result is the minimum of
/// `update_from_neighbours` over the prefixes of the neighbours sorted by value. That is not
/// the update from all four at once: on an anisotropic field a later neighbour can win its
/// axis by a smaller `phi_M + C(cell -> M)` and yet give a larger quadratic root than the pair
/// an earlier prefix used (seen: 0.5 % above fast marching on random fields). So this takes the
/// same minimum, order-free: for each reached neighbour value `t`, the update from the
/// neighbours at or below `t`.
#[allow(clippy::too_many_arguments)]
pub fn local_update(pe: f32, pn: f32, pw: f32, ps: f32, ce: f32, cn: f32, cw: f32, cs: f32) -> f32 {
    let mut r = PHI_INF;
    for t in [pe, pn, pw, ps] {
        if t < PHI_INF {
            let upto = |p: f32| if p <= t { p } else { PHI_INF };
            r = r.min(update_from_neighbours(
                upto(pe),
                upto(pn),
                upto(pw),
                upto(ps),
                ce,
                cn,
                cw,
                cs,
            ));
        }
    }
    r
}

/// The SPEC §4 update from all four neighbours as given (no downwind filter): per axis the
/// neighbour with the smaller `phi_M + C`, then the quadratic or the one-sided value.
#[allow(clippy::too_many_arguments)]
pub(super) fn update_from_neighbours(
    pe: f32,
    pn: f32,
    pw: f32,
    ps: f32,
    ce: f32,
    cn: f32,
    cw: f32,
    cs: f32,
) -> f32 {
    let mut a = PHI_INF;
    let mut p = 0.0;
    if ce > 0.0 && pe < PHI_INF {
        a = pe;
        p = ce;
    }
    if cw > 0.0 && pw < PHI_INF && (a >= PHI_INF || pw + cw < a + p) {
        a = pw;
        p = cw;
    }
    let mut b = PHI_INF;
    let mut q = 0.0;
    if cn > 0.0 && pn < PHI_INF {
        b = pn;
        q = cn;
    }
    if cs > 0.0 && ps < PHI_INF && (b >= PHI_INF || ps + cs < b + q) {
        b = ps;
        q = cs;
    }
    if a >= PHI_INF && b >= PHI_INF {
        return PHI_INF;
    }
    if a >= PHI_INF {
        return (b + q).min(PHI_INF);
    }
    if b >= PHI_INF {
        return (a + p).min(PHI_INF);
    }
    let one_sided = (a + p).min(b + q);
    let s = p * p + q * q;
    let diff = a - b;
    let d = s - diff * diff;
    if d >= 0.0 {
        let phi = a * (q * q / s) + b * (p * p / s) + (p * q / s) * d.sqrt();
        if phi >= a.max(b) {
            return phi.min(one_sided).min(PHI_INF);
        }
    }
    one_sided.min(PHI_INF)
}

/// The CPU twin of the GPU block FIM with [`FIM_TILE_LARGE`] tiles: [`solve_fim_cpu_tiled`].
///
/// # Errors
/// As [`solve_fim_cpu_tiled`].
pub fn solve_fim_cpu(cost: ArrayView3<f32>, goals: &[Array2<bool>], cell_size: f64) -> Result<Vec<Solution>> {
    solve_fim_cpu_tiled(cost, goals, cell_size, FIM_TILE_LARGE)
}

/// The CPU twin of the GPU block FIM: the same tiles of `tile` cells a side (a multiple of
/// [`FIM_LANES`]), passes, sweeps, queueing rules and f32 arithmetic, one tile after another.
/// Returns solutions named `"fim-cpu"` whose counters hold the passes and relaxations (no
/// dispatches, no read-backs); on the same input it matches [`GpuContext::solve_fim`] to f32
/// rounding, and exactly in the counters where no rounding tips a comparison.
///
/// # Errors
/// [`Error::Invalid`] for mismatched shapes, a tile that is not a positive multiple of
/// [`FIM_LANES`], or (naming the cost) a solve that reaches the safety cap.
pub fn solve_fim_cpu_tiled(
    cost: ArrayView3<f32>,
    goals: &[Array2<bool>],
    cell_size: f64,
    tile: usize,
) -> Result<Vec<Solution>> {
    if tile == 0 || !tile.is_multiple_of(FIM_LANES) {
        return Err(Error::invalid(
            "<memory>",
            "tile",
            format!("{tile}, expected a positive multiple of {FIM_LANES}"),
        ));
    }
    let start = Instant::now();
    let input = prepare(cost, goals, cell_size, tile)?;
    let pr = input.params;
    let (cols, rows) = (pr.cols as usize, pr.rows as usize);
    let (tiles_x, tiles_y, tpg) = (
        pr.tiles_x as usize,
        pr.tiles_y as usize,
        pr.tiles_per_group as usize,
    );
    let cells = cols * rows;
    let h = pr.cell_size;
    let halo = tile + 2;
    let max_sweeps = FIM_MAX_SWEEPS_PER_EDGE * tile;
    let mut phi = input.phi.clone();
    let mut phi_next = phi.clone();
    let slots = tpg * pr.groups as usize;
    // The stamp of the last pass each tile was queued for (pass e: stamp e + 1).
    let mut queued = vec![1usize; slots];
    let mut active: Vec<usize> = (0..slots).collect();
    let mut counters = SolveCounters {
        tile,
        ..SolveCounters::default()
    };
    let cap = max_passes(tpg, cells, tile);
    let mut epoch = 0usize;
    let mut tile_phi = vec![PHI_INF; halo * halo];
    while !active.is_empty() {
        counters.passes += 1;
        if counters.passes > cap {
            return Err(Error::invalid(
                "<memory>",
                "cost",
                format!("FIM did not converge within the safety cap of {cap} passes"),
            ));
        }
        let stamp = epoch + 2;
        let mut next_list = Vec::new();
        let mut queue = |slot: usize, list: &mut Vec<usize>| {
            if queued[slot] < stamp {
                queued[slot] = stamp;
                list.push(slot);
            }
        };
        // fim_block
        for &entry in &active {
            let (group, t) = (entry / tpg, entry % tpg);
            let (tx, ty) = (t % tiles_x, t / tiles_x);
            let base = group * cells;
            for (k, v) in tile_phi.iter_mut().enumerate() {
                let c = (tx * tile + k % halo) as isize - 1;
                let r = (ty * tile + k / halo) as isize - 1;
                *v = if c >= 0 && r >= 0 && (c as usize) < cols && (r as usize) < rows {
                    phi[base + r as usize * cols + c as usize]
                } else {
                    PHI_INF
                };
            }
            let start_phi = tile_phi.clone();
            let inside = |lx: usize, ly: usize| tx * tile + lx < cols && ty * tile + ly < rows;
            // Which cells moved in the sweep before (one flag per cell of the tile).
            let mut moved_before = vec![false; tile * tile];
            let neighbour_moved = |moved: &[bool], lx: usize, ly: usize| {
                (lx + 1 < tile && moved[ly * tile + lx + 1])
                    || (ly + 1 < tile && moved[(ly + 1) * tile + lx])
                    || (lx > 0 && moved[ly * tile + lx - 1])
                    || (ly > 0 && moved[(ly - 1) * tile + lx])
            };
            let mut settled = false;
            let mut sweeps = 0;
            while sweeps < max_sweeps {
                let mut next = tile_phi.clone();
                let mut moved_now = vec![false; tile * tile];
                let mut changed = false;
                for ly in 0..tile {
                    for lx in 0..tile {
                        let (col, row) = (tx * tile + lx, ty * tile + ly);
                        if !inside(lx, ly) || input.source[base + row * cols + col] != 0 {
                            continue;
                        }
                        if sweeps > 0 && !neighbour_moved(&moved_before, lx, ly) {
                            continue;
                        }
                        counters.relaxations += 1;
                        let cell = row * cols + col;
                        let me = (ly + 1) * halo + lx + 1;
                        let cur = tile_phi[me];
                        let cand = local_update(
                            tile_phi[me + 1],
                            tile_phi[me + halo],
                            tile_phi[me - 1],
                            tile_phi[me - halo],
                            h * input.cost[cell * 4],
                            h * input.cost[cell * 4 + 1],
                            h * input.cost[cell * 4 + 2],
                            h * input.cost[cell * 4 + 3],
                        );
                        if cand < cur - pr.eps_rel * cand {
                            next[me] = cand;
                            moved_now[ly * tile + lx] = true;
                            changed = true;
                        }
                    }
                }
                tile_phi = next;
                moved_before = moved_now;
                sweeps += 1;
                if !changed {
                    settled = true;
                    break;
                }
            }
            let (mut wake_e, mut wake_n, mut wake_w, mut wake_s) = (false, false, false, false);
            for ly in 0..tile {
                for lx in 0..tile {
                    if !inside(lx, ly) {
                        continue;
                    }
                    let (col, row) = (tx * tile + lx, ty * tile + ly);
                    let me = (ly + 1) * halo + lx + 1;
                    let fin = tile_phi[me];
                    phi_next[base + row * cols + col] = fin;
                    if fin < start_phi[me] {
                        wake_e |= lx == tile - 1 && fin < tile_phi[me + 1];
                        wake_n |= ly == tile - 1 && fin < tile_phi[me + halo];
                        wake_w |= lx == 0 && fin < tile_phi[me - 1];
                        wake_s |= ly == 0 && fin < tile_phi[me - halo];
                    }
                }
            }
            let gbase = group * tpg;
            if !settled {
                queue(entry, &mut next_list);
            }
            if wake_e && tx + 1 < tiles_x {
                queue(gbase + t + 1, &mut next_list);
            }
            if wake_w && tx > 0 {
                queue(gbase + t - 1, &mut next_list);
            }
            if wake_n && ty + 1 < tiles_y {
                queue(gbase + t + tiles_x, &mut next_list);
            }
            if wake_s && ty > 0 {
                queue(gbase + t - tiles_x, &mut next_list);
            }
        }
        // fim_commit
        for &entry in &active {
            let (group, t) = (entry / tpg, entry % tpg);
            let (tx, ty) = (t % tiles_x, t / tiles_x);
            for row in ty * tile..((ty + 1) * tile).min(rows) {
                for col in tx * tile..((tx + 1) * tile).min(cols) {
                    let i = group * cells + row * cols + col;
                    phi[i] = phi_next[i];
                }
            }
        }
        active = next_list;
        epoch += 1;
    }
    Ok(solutions(
        &phi,
        &input,
        "fim-cpu",
        counters,
        start.elapsed().as_secs_f64(),
    ))
}
