// FIM commit pass: copies this pass's tiles from phi_next back to phi; its first invocation counts the pass, clears the list count two passes on and writes the next pass's dispatch sizes.
// Its CPU twin is the commit loop of solve_fim_cpu_tiled (CPU twin: gpu::fim::solve_fim_cpu_tiled).

@compute @workgroup_size(256, 1, 1)
fn main(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) li: u32,
) {
    let index = wid.y * nwg.x + wid.x;
    let count = atomicLoad(&state[step.count_in]);
    if index == 0u && li == 0u {
        // count_out is final (the block pass has ended); count_clear is neither read nor
        // appended to in this pass and is the next pass's list to fill.
        let next = atomicLoad(&state[step.count_out]);
        atomicStore(&state[step.count_clear], 0u);
        if count > 0u {
            atomicAdd(&state[STATE_PASSES], 1u);
        }
        atomicAdd(&state[STATE_EPOCH], 1u);
        let x = min(next, MAX_GROUPS_X);
        let y = select(0u, (next + x - 1u) / max(x, 1u), next > 0u);
        // The block pass: one workgroup per listed tile. The commit: at least one workgroup, so
        // that this invocation runs on every pass.
        args_out[0] = x;
        args_out[1] = y;
        args_out[2] = 1u;
        args_out[3] = max(x, 1u);
        args_out[4] = max(y, 1u);
        args_out[5] = 1u;
    }
    if index >= count {
        return;
    }
    let slots = params.tiles_per_group * params.groups;
    let entry = lists[step.list_in * slots + index];
    let group = entry / params.tiles_per_group;
    let tile = entry % params.tiles_per_group;
    let c0 = (tile % params.tiles_x) * FIM_TILE;
    let r0 = (tile / params.tiles_x) * FIM_TILE;
    let base = group * params.cols * params.rows;
    for (var k = li; k < FIM_TILE * FIM_TILE; k += 256u) {
        let col = c0 + k % FIM_TILE;
        let row = r0 + k / FIM_TILE;
        if col < params.cols && row < params.rows {
            let i = base + row * params.cols + col;
            phi[i] = phi_next[i];
        }
    }
}
