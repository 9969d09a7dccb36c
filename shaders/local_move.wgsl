// Local move pass: integrates each agent's new velocity, stopping at (or bouncing off) walls, and writes the result in agent order (CPU twin: WallMap::move_agent); it leaves each slot's position in `work.pref` for the contact pass.
@compute @workgroup_size(256, 1, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let k = slot(gid, nwg);
    if k >= params.agents {
        return;
    }
    let a = packed[k];
    let w = work[k];
    let m = move_agent(a.p, w.vel, params.dt, a.radius, params.bounce != 0u);
    out[a.agent] = Out(m.p, m.v, w.infeasible, select(0u, 1u, m.hit), 0u, 0u);
    // For the contact pass: the position it starts from, and whether the agent is one of its.
    work[k].pref = m.p;
    work[k].unguaranteed = select(0u, 1u, w.infeasible != 0u || m.hit);
}
