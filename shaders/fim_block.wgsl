// Block FIM pass: relaxes each active 8x8 tile up to FIM_INNER_ITERS times in workgroup memory, writes it to phi_next and wakes tiles.
@group(0) @binding(0) var<uniform> params: FimParams;
@group(0) @binding(1) var<storage, read> cost: array<f32>;
@group(0) @binding(2) var<storage, read> source: array<u32>;
@group(0) @binding(3) var<storage, read_write> phi: array<f32>;
@group(0) @binding(4) var<storage, read_write> phi_next: array<f32>;
@group(0) @binding(5) var<storage, read_write> tile_flag: array<atomic<u32>>;
@group(0) @binding(6) var<storage, read_write> active_tiles: array<u32>;
@group(0) @binding(7) var<storage, read_write> state: array<atomic<u32>>;

// Relaxations per dispatch: 2 * FIM_TILE covers the tile's Manhattan diameter (14) with slack,
// so a front crossing the tile settles in one dispatch; the loop exits early once nothing moves.
const FIM_INNER_ITERS: u32 = 16u;

var<workgroup> tile_phi: array<f32, 100>;
var<workgroup> active_count: u32;
var<workgroup> iter_changed: atomic<u32>;
var<workgroup> any_changed: u32;
var<workgroup> wake_bits: atomic<u32>;

@compute @workgroup_size(8, 8, 1)
fn main(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_id) lid: vec3<u32>,
    @builtin(local_invocation_index) li: u32,
) {
    if li == 0u {
        active_count = atomicLoad(&state[STATE_ACTIVE]);
    }
    let count = workgroupUniformLoad(&active_count);
    let slot = wid.y * nwg.x + wid.x;
    if slot >= count {
        return;
    }
    let entry = active_tiles[slot];
    let group = entry / params.tiles_per_group;
    let tile = entry % params.tiles_per_group;
    let tx = tile % params.tiles_x;
    let ty = tile / params.tiles_x;
    let cells = params.cols * params.rows;
    let base = group * cells;

    // Load the tile and its halo; cells outside the grid read as unreached.
    for (var k = li; k < FIM_HALO * FIM_HALO; k += FIM_TILE * FIM_TILE) {
        let c = i32(tx * FIM_TILE + k % FIM_HALO) - 1;
        let r = i32(ty * FIM_TILE + k / FIM_HALO) - 1;
        var v = PHI_INF;
        if c >= 0 && r >= 0 && u32(c) < params.cols && u32(r) < params.rows {
            v = phi[base + u32(r) * params.cols + u32(c)];
        }
        tile_phi[k] = v;
    }
    let col = tx * FIM_TILE + lid.x;
    let row = ty * FIM_TILE + lid.y;
    let inside = col < params.cols && row < params.rows;
    let cell = row * params.cols + col;
    let me = (lid.y + 1u) * FIM_HALO + lid.x + 1u;
    var ce = 0.0;
    var cn = 0.0;
    var cw = 0.0;
    var cs = 0.0;
    var fixed = true;
    if inside {
        let h = params.cell_size;
        ce = h * cost[cell * 4u + 0u];
        cn = h * cost[cell * 4u + 1u];
        cw = h * cost[cell * 4u + 2u];
        cs = h * cost[cell * 4u + 3u];
        fixed = source[base + cell] != 0u;
    }
    workgroupBarrier();
    let start = tile_phi[me];

    var converged = false;
    for (var it = 0u; it < FIM_INNER_ITERS; it++) {
        let cur = tile_phi[me];
        var next = cur;
        if !fixed {
            let cand = local_update(
                tile_phi[me + 1u], tile_phi[me + FIM_HALO], tile_phi[me - 1u], tile_phi[me - FIM_HALO],
                ce, cn, cw, cs,
            );
            if cand < cur - params.eps_rel * cand {
                next = cand;
            }
        }
        workgroupBarrier();
        if next < cur {
            tile_phi[me] = next;
            atomicOr(&iter_changed, 1u);
        }
        workgroupBarrier();
        if li == 0u {
            any_changed = atomicLoad(&iter_changed);
            atomicStore(&iter_changed, 0u);
        }
        if workgroupUniformLoad(&any_changed) == 0u {
            converged = true;
            break;
        }
    }

    let fin = tile_phi[me];
    if inside {
        phi_next[base + cell] = fin;
        if fin < start {
            var bits = 0u;
            if lid.x == FIM_TILE - 1u { bits |= WAKE_E; }
            if lid.y == FIM_TILE - 1u { bits |= WAKE_N; }
            if lid.x == 0u { bits |= WAKE_W; }
            if lid.y == 0u { bits |= WAKE_S; }
            atomicOr(&wake_bits, bits);
        }
    }
    workgroupBarrier();
    if li == 0u {
        var bits = atomicLoad(&wake_bits);
        if !converged {
            bits |= WAKE_SELF;
        }
        let gbase = group * params.tiles_per_group;
        if (bits & WAKE_SELF) != 0u { atomicStore(&tile_flag[entry], 1u); }
        if (bits & WAKE_E) != 0u && tx + 1u < params.tiles_x { atomicStore(&tile_flag[gbase + tile + 1u], 1u); }
        if (bits & WAKE_W) != 0u && tx > 0u { atomicStore(&tile_flag[gbase + tile - 1u], 1u); }
        if (bits & WAKE_N) != 0u && ty + 1u < params.tiles_y {
            atomicStore(&tile_flag[gbase + tile + params.tiles_x], 1u);
        }
        if (bits & WAKE_S) != 0u && ty > 0u { atomicStore(&tile_flag[gbase + tile - params.tiles_x], 1u); }
    }
}
