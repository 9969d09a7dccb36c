// Local pack pass: gathers the agents into bin order (packed[k] = agent sorted[k]; CPU twin: LocalLayer::bins).
@compute @workgroup_size(256, 1, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let k = slot(gid, nwg);
    if k >= params.agents {
        return;
    }
    let bins = params.bins_x * params.bins_y;
    let i = grid_idx[bins + 1u + k];
    let a = agents_in[i];
    packed[k] = Packed(a.p, a.v, a.radius, a.max_speed, a.group, i);
}
