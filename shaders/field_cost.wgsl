// Cost pass: anisotropic unit cost (alpha f + beta + gamma g) / f per cell and direction, in the solver's form (0 = blocked; CPU: fields::unit_cost then fim::sanitize_cost).
@group(0) @binding(0) var<uniform> params: FieldParams;
@group(0) @binding(1) var<storage, read> height: array<f32>;
@group(0) @binding(2) var<storage, read> obstacle: array<u32>;
@group(0) @binding(3) var<storage, read> discomfort: array<f32>;
@group(0) @binding(4) var<storage, read> density: array<f32>;
@group(0) @binding(5) var<storage, read_write> speed: array<f32>;
@group(0) @binding(6) var<storage, read_write> cost: array<f32>;

fn face_cost(cell: u32, r: u32, c: u32, d: u32) -> f32 {
    let nb = face_neighbour(r, c, d, params.cols, params.rows);
    if nb < 0 || obstacle[cell] != 0u || obstacle[u32(nb)] != 0u {
        return 0.0;
    }
    let s = ahead_cells(r, c, d, params.cols, params.rows, params.ahead_whole, params.ahead_frac);
    var g = lerp_ahead(discomfort[s.a], discomfort[s.b], s.t);
    if !is_finite(g) {
        g = 0.0;
    }
    let f = speed[cell * 4u + d];
    if !(f > 0.0 && is_finite(f)) {
        return 0.0;
    }
    let unit = (params.alpha * f + params.beta + params.gamma * g) / f;
    if !(unit > 0.0 && is_finite(unit)) {
        return 0.0;
    }
    return min(unit, params.cost_max);
}

@compute @workgroup_size(256, 1, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let cell = gid.y * nwg.x * 256u + gid.x;
    if cell >= params.cols * params.rows {
        return;
    }
    let r = cell / params.cols;
    let c = cell % params.cols;
    for (var d = 0u; d < 4u; d++) {
        cost[cell * 4u + d] = face_cost(cell, r, c, d);
    }
}
