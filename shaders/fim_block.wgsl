// Block FIM pass: relaxes each tile of the active list in workgroup memory until it settles, writes it to phi_next, and queues for the next pass every neighbour tile one of its edge cells can now lower.
// Its CPU twin is the block loop of solve_fim_cpu_tiled (CPU twin: gpu::fim::solve_fim_cpu_tiled).

var<workgroup> tile_phi: array<f32, FIM_HALO * FIM_HALO>;
var<workgroup> wg_count: u32;
var<workgroup> sweep_changed: atomic<u32>;
var<workgroup> wg_changed: u32;
var<workgroup> wake_bits: atomic<u32>;
var<workgroup> relaxations: atomic<u32>;
// Which cells of the tile moved, in two banks: the sweep before (read) and this sweep
// (written). Each invocation owns one word per bank, one bit per cell it relaxes, so no two
// invocations write one word. A cell is relaxed again only when a neighbour moved in the sweep
// before: otherwise its update would give what it gave last time.
var<workgroup> moved: array<u32, 2u * FIM_LANES * FIM_LANES>;

// Whether the cell at (lx, ly) of the tile moved in the sweep whose words start at `bank`.
fn moved_at(bank: u32, lx: u32, ly: u32) -> bool {
    let owner = (ly % FIM_LANES) * FIM_LANES + lx % FIM_LANES;
    let k = (ly / FIM_LANES) * FIM_CPA + lx / FIM_LANES;
    return ((moved[bank + owner] >> k) & 1u) != 0u;
}

// Whether a neighbour inside the tile of the cell at (lx, ly) moved in the sweep at `bank`.
fn neighbour_moved(bank: u32, lx: u32, ly: u32) -> bool {
    return (lx + 1u < FIM_TILE && moved_at(bank, lx + 1u, ly))
        || (ly + 1u < FIM_TILE && moved_at(bank, lx, ly + 1u))
        || (lx > 0u && moved_at(bank, lx - 1u, ly))
        || (ly > 0u && moved_at(bank, lx, ly - 1u));
}

// Appends `slot` to the next pass's active list unless it is already there: `queued` holds the
// stamp of the last pass a tile was queued for, so each tile enters a list once.
fn queue_tile(slot: u32, stamp: u32, list_out: u32) {
    if atomicMax(&queued[slot], stamp) < stamp {
        let k = atomicAdd(&state[step.count_out], 1u);
        lists[list_out + k] = slot;
    }
}

@compute @workgroup_size(16, 16, 1)
fn main(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_id) lid: vec3<u32>,
    @builtin(local_invocation_index) li: u32,
) {
    if li == 0u {
        wg_count = atomicLoad(&state[step.count_in]);
    }
    let count = workgroupUniformLoad(&wg_count);
    let index = wid.y * nwg.x + wid.x;
    if index >= count {
        return;
    }
    let slots = params.tiles_per_group * params.groups;
    let entry = lists[step.list_in * slots + index];
    let group = entry / params.tiles_per_group;
    let tile = entry % params.tiles_per_group;
    let tx = tile % params.tiles_x;
    let ty = tile / params.tiles_x;
    let base = group * params.cols * params.rows;

    // The tile and its halo as they were when the pass began; cells outside the grid read as
    // unreached. Only this pass's commit changes phi, so every workgroup sees the same state.
    for (var k = li; k < FIM_HALO * FIM_HALO; k += FIM_LANES * FIM_LANES) {
        let c = i32(tx * FIM_TILE + k % FIM_HALO) - 1;
        let r = i32(ty * FIM_TILE + k / FIM_HALO) - 1;
        var v = PHI_INF;
        if c >= 0 && r >= 0 && u32(c) < params.cols && u32(r) < params.rows {
            v = phi[base + u32(r) * params.cols + u32(c)];
        }
        tile_phi[k] = v;
    }
    // This invocation's cells: where they sit in tile_phi, their step costs, and whether they
    // are relaxed at all (inside the grid and not a source).
    var me: array<u32, FIM_CPI>;
    var cell: array<u32, FIM_CPI>;
    var steps: array<vec4<f32>, FIM_CPI>;
    var inside: array<bool, FIM_CPI>;
    var free: array<bool, FIM_CPI>;
    for (var k = 0u; k < FIM_CPI; k++) {
        let lx = lid.x + FIM_LANES * (k % FIM_CPA);
        let ly = lid.y + FIM_LANES * (k / FIM_CPA);
        let col = tx * FIM_TILE + lx;
        let row = ty * FIM_TILE + ly;
        me[k] = (ly + 1u) * FIM_HALO + lx + 1u;
        cell[k] = row * params.cols + col;
        inside[k] = col < params.cols && row < params.rows;
        free[k] = false;
        steps[k] = vec4<f32>(0.0);
        if inside[k] {
            let i = cell[k] * 4u;
            let h = params.cell_size;
            steps[k] = h * vec4<f32>(cost[i], cost[i + 1u], cost[i + 2u], cost[i + 3u]);
            free[k] = source[base + cell[k]] == 0u;
        }
    }
    workgroupBarrier();
    var start: array<f32, FIM_CPI>;
    for (var k = 0u; k < FIM_CPI; k++) {
        start[k] = tile_phi[me[k]];
    }

    // Jacobi sweeps until no cell of the tile moves (or FIM_MAX_SWEEPS): the first relaxes
    // every free cell, each later one those next to a cell that moved in the sweep before.
    var settled = false;
    var sweeps = 0u;
    var evaluated = 0u;
    for (; sweeps < FIM_MAX_SWEEPS;) {
        let before = (sweeps % 2u) * FIM_LANES * FIM_LANES;
        let now = FIM_LANES * FIM_LANES - before;
        var next: array<f32, FIM_CPI>;
        for (var k = 0u; k < FIM_CPI; k++) {
            let m = me[k];
            let cur = tile_phi[m];
            next[k] = cur;
            let lx = lid.x + FIM_LANES * (k % FIM_CPA);
            let ly = lid.y + FIM_LANES * (k / FIM_CPA);
            if free[k] && (sweeps == 0u || neighbour_moved(before, lx, ly)) {
                evaluated += 1u;
                let s = steps[k];
                let cand = local_update(
                    tile_phi[m + 1u], tile_phi[m + FIM_HALO], tile_phi[m - 1u], tile_phi[m - FIM_HALO],
                    s.x, s.y, s.z, s.w,
                );
                if cand < cur - params.eps_rel * cand {
                    next[k] = cand;
                }
            }
        }
        workgroupBarrier();
        var word = 0u;
        for (var k = 0u; k < FIM_CPI; k++) {
            if next[k] < tile_phi[me[k]] {
                tile_phi[me[k]] = next[k];
                word |= 1u << k;
            }
        }
        moved[now + li] = word;
        let changed = word != 0u;
        if changed {
            atomicOr(&sweep_changed, 1u);
        }
        sweeps += 1u;
        workgroupBarrier();
        if li == 0u {
            wg_changed = atomicLoad(&sweep_changed);
            atomicStore(&sweep_changed, 0u);
        }
        if workgroupUniformLoad(&wg_changed) == 0u {
            settled = true;
            break;
        }
    }

    // Write back; an edge cell that moved and is now below the cell across the edge wakes the
    // tile there (a cell at or above its neighbour cannot lower it).
    var bits = 0u;
    for (var k = 0u; k < FIM_CPI; k++) {
        if !inside[k] {
            continue;
        }
        let m = me[k];
        let fin = tile_phi[m];
        phi_next[base + cell[k]] = fin;
        if fin < start[k] {
            let lx = lid.x + FIM_LANES * (k % FIM_CPA);
            let ly = lid.y + FIM_LANES * (k / FIM_CPA);
            if lx == FIM_TILE - 1u && fin < tile_phi[m + 1u] { bits |= WAKE_E; }
            if ly == FIM_TILE - 1u && fin < tile_phi[m + FIM_HALO] { bits |= WAKE_N; }
            if lx == 0u && fin < tile_phi[m - 1u] { bits |= WAKE_W; }
            if ly == 0u && fin < tile_phi[m - FIM_HALO] { bits |= WAKE_S; }
        }
    }
    if bits != 0u {
        atomicOr(&wake_bits, bits);
    }
    atomicAdd(&relaxations, evaluated);
    workgroupBarrier();
    if li == 0u {
        var b = atomicLoad(&wake_bits);
        if !settled {
            b |= WAKE_SELF;
        }
        let stamp = atomicLoad(&state[STATE_EPOCH]) + 2u;
        let list_out = (1u - step.list_in) * slots;
        let gbase = group * params.tiles_per_group;
        if (b & WAKE_SELF) != 0u { queue_tile(entry, stamp, list_out); }
        if (b & WAKE_E) != 0u && tx + 1u < params.tiles_x { queue_tile(gbase + tile + 1u, stamp, list_out); }
        if (b & WAKE_W) != 0u && tx > 0u { queue_tile(gbase + tile - 1u, stamp, list_out); }
        if (b & WAKE_N) != 0u && ty + 1u < params.tiles_y {
            queue_tile(gbase + tile + params.tiles_x, stamp, list_out);
        }
        if (b & WAKE_S) != 0u && ty > 0u { queue_tile(gbase + tile - params.tiles_x, stamp, list_out); }
        // Relaxations (local updates evaluated), a 64-bit count in two slots.
        let r = atomicLoad(&relaxations);
        let old = atomicAdd(&state[STATE_RELAX_LO], r);
        if old > 0xffffffffu - r {
            atomicAdd(&state[STATE_RELAX_HI], 1u);
        }
    }
}
