// FIM compaction pass: gathers every woken tile (flag set by fim_block) into the active list and clears its flag.
@group(0) @binding(0) var<uniform> params: FimParams;
@group(0) @binding(1) var<storage, read> cost: array<f32>;
@group(0) @binding(2) var<storage, read> source: array<u32>;
@group(0) @binding(3) var<storage, read_write> phi: array<f32>;
@group(0) @binding(4) var<storage, read_write> phi_next: array<f32>;
@group(0) @binding(5) var<storage, read_write> tile_flag: array<atomic<u32>>;
@group(0) @binding(6) var<storage, read_write> active_tiles: array<u32>;
@group(0) @binding(7) var<storage, read_write> state: array<atomic<u32>>;

@compute @workgroup_size(256, 1, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.y * nwg.x * 256u + gid.x;
    if i >= params.tiles_per_group * params.groups {
        return;
    }
    if atomicLoad(&tile_flag[i]) != 0u {
        atomicStore(&tile_flag[i], 0u);
        // The list order depends on scheduling; results do not, since a block pass reads only phi.
        let k = atomicAdd(&state[STATE_COUNTER], 1u);
        active_tiles[k] = i;
    }
}
