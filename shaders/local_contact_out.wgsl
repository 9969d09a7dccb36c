// Local contact pass, last: an agent the sweeps moved gets its new position, and its displacement over the step as its velocity, in agent order (CPU twin: LocalLayer::resolve_contacts).
@compute @workgroup_size(256, 1, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let k = slot(gid, nwg);
    if k >= params.agents {
        return;
    }
    let a = packed[k];
    let q = work[k].pref;
    if any(q != out[a.agent].p) {
        out[a.agent].p = q;
        out[a.agent].v = (q - a.p) * (1.0 / params.dt);
        out[a.agent].pushed = 1u;
    }
}
