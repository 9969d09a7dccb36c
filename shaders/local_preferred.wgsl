// Local preferred pass: preferred velocity plus jitter (ORCA modes) and boids offset (boids mode), clamped (CPU twin: pass 2 of LocalLayer::step).
@compute @workgroup_size(256, 1, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let k = slot(gid, nwg);
    if k >= params.agents {
        return;
    }
    let a = packed[k];
    let input = agents_in[a.agent];
    let orca = params.mode == MODE_ORCA || params.mode == MODE_BOIDS_ORCA;
    var v = input.pref;
    if orca && (v.x != 0.0 || v.y != 0.0) {
        v = v + perturbation(input.id, params.jitter);
    }
    // In boids+ORCA the offset is added inside the fused ORCA scan.
    if params.mode == MODE_BOIDS {
        let g = group_of(a.group);
        if g.has_boids != 0u {
            v = v + clamp_len(boids_steer(k, g), g.a_max);
        }
    }
    if params.mode != MODE_BOIDS_ORCA {
        v = clamp_len(v, a.max_speed);
    }
    // Without ORCA the preferred velocity is the new one.
    work[k] = Work(v, v, 0u, 0u, 0u, 0u);
}
