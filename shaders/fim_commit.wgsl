// FIM commit pass: copies each active tile from phi_next back to phi, so every block pass reads one consistent state.
@group(0) @binding(0) var<uniform> params: FimParams;
@group(0) @binding(1) var<storage, read> cost: array<f32>;
@group(0) @binding(2) var<storage, read> source: array<u32>;
@group(0) @binding(3) var<storage, read_write> phi: array<f32>;
@group(0) @binding(4) var<storage, read_write> phi_next: array<f32>;
@group(0) @binding(5) var<storage, read_write> tile_flag: array<atomic<u32>>;
@group(0) @binding(6) var<storage, read_write> active_tiles: array<u32>;
@group(0) @binding(7) var<storage, read_write> state: array<atomic<u32>>;

@compute @workgroup_size(8, 8, 1)
fn main(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_id) lid: vec3<u32>,
) {
    let slot = wid.y * nwg.x + wid.x;
    if slot >= atomicLoad(&state[STATE_ACTIVE]) {
        return;
    }
    let entry = active_tiles[slot];
    let group = entry / params.tiles_per_group;
    let tile = entry % params.tiles_per_group;
    let col = (tile % params.tiles_x) * FIM_TILE + lid.x;
    let row = (tile / params.tiles_x) * FIM_TILE + lid.y;
    if col < params.cols && row < params.rows {
        let i = group * params.cols * params.rows + row * params.cols + col;
        phi[i] = phi_next[i];
    }
}
