// Potential pass: every agent's potential under every group's field, as pedestrian::potential_at samples it (CPU twin: potential_twin).
@group(0) @binding(0) var<uniform> params: ContinuumParams;
@group(0) @binding(1) var<storage, read> xs: array<f32>;
@group(0) @binding(2) var<storage, read> ys: array<f32>;
// (group * cells + cell): the FIM's potentials, PHI_INF where no source reaches.
@group(0) @binding(3) var<storage, read> phi: array<f32>;
// The velocity pass's output (agent * 2), then from 2 * agents on, (group * agents + agent):
// the agent's potential under that group's field, PHI_INF outside the domain or unreached.
@group(0) @binding(4) var<storage, read_write> sampled: array<f32>;

// The potential of the field starting at `base` at (x, y): bilinear between the four cell
// centres around the point over those of them that a source reaches (the cell's own value
// where none does); PHI_INF outside the domain.
fn potential_at(base: u32, x: f32, y: f32) -> f32 {
    let h = params.cell_size;
    let fx = x / h;
    let fy = y / h;
    if !(x >= 0.0 && y >= 0.0 && fx < f32(params.cols) && fy < f32(params.rows)) {
        return PHI_INF;
    }
    let r = u32(fy);
    let c = u32(fx);
    let b = bilinear(fx, fy, params.rows, params.cols);
    let tu = b.tu;
    let tv = b.tv;
    var sum = 0.0;
    var weight = 0.0;
    let corners = array<vec2<u32>, 4>(vec2<u32>(b.r0, b.c0), vec2<u32>(b.r0, b.c1), vec2<u32>(b.r1, b.c1), vec2<u32>(b.r1, b.c0));
    let weights = array<f32, 4>((1.0 - tu) * (1.0 - tv), tu * (1.0 - tv), tu * tv, (1.0 - tu) * tv);
    for (var k = 0u; k < 4u; k++) {
        let p = phi[base + corners[k].x * params.cols + corners[k].y];
        let w = weights[k];
        if p < PHI_INF && w > 0.0 {
            sum += w * p;
            weight += w;
        }
    }
    if weight > 0.0 {
        return sum / weight;
    }
    return phi[base + r * params.cols + c];
}

@compute @workgroup_size(256, 1, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let k = gid.y * nwg.x * 256u + gid.x;
    if k >= params.agents * params.groups {
        return;
    }
    let g = k / params.agents;
    let i = k % params.agents;
    sampled[2u * params.agents + k] = potential_at(g * params.cols * params.rows, xs[i], ys[i]);
}
