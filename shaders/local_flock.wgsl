// Local flock pass: boids steering plus wall probes integrated as an acceleration, clamped to v_max (CPU twin: LocalLayer::flock).
@compute @workgroup_size(256, 1, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let k = slot(gid, nwg);
    if k >= params.agents {
        return;
    }
    let a = packed[k];
    let g = group_of(a.group);
    var v = a.v;
    if g.has_boids != 0u {
        let keep = max(g.v_max * params.probe_seconds, params.cell);
        let s = boids_steer(k, g) + probe_steer(a.p, a.v, keep) * params.k_wall;
        v = clamp_len(a.v + clamp_len(s, g.a_max) * params.dt, g.v_max);
    }
    work[k] = Work(v, v, 0u, 0u, 0u, 0u);
}
