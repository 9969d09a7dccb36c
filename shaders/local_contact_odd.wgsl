// Local contact pass, odd sweeps: positions from `work.vel` to `work.pref` (CPU twin: LocalLayer::resolve_contacts).
@compute @workgroup_size(256, 1, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let k = slot(gid, nwg);
    if k >= params.agents {
        return;
    }
    contact_sweep(k, false);
}
