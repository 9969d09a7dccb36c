// Gradient pass: every group's upwind gradient of its potential at every cell centre, per metre (CPU twin: gradient_twin).
@group(0) @binding(0) var<uniform> params: ContinuumParams;
// (group * cells + cell): the FIM's potentials, PHI_INF where no source reaches.
@group(0) @binding(1) var<storage, read> phi: array<f32>;
// (cell * 4 + dir): the unit cost in the solver's form (0 on a blocked face).
@group(0) @binding(2) var<storage, read> cost: array<f32>;
// (group * cells + cell) * 2: d phi / d x, then d phi / d y.
@group(0) @binding(3) var<storage, read_write> grad: array<f32>;

// One axis of the upwind gradient of a cell whose potential is `here`: the neighbour on the
// +axis side (`plus`, potential and face cost) and on the -axis side (`minus`); PHI_INF stands
// for a neighbour past the border. A neighbour is upwind when its potential is below `here`
// and its face open; of two, the one with the smaller phi_M + h C (the +axis one on a tie).
fn upwind_axis(here: f32, plus: vec2<f32>, minus: vec2<f32>, h: f32) -> f32 {
    let plus_ok = plus.x < here && plus.y > 0.0;
    let minus_ok = minus.x < here && minus.y > 0.0;
    if plus_ok && minus_ok && minus.x + h * minus.y < plus.x + h * plus.y {
        return (here - minus.x) / h;
    }
    if plus_ok {
        return (plus.x - here) / h;
    }
    if minus_ok {
        return (here - minus.x) / h;
    }
    return 0.0;
}

@compute @workgroup_size(256, 1, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let k = gid.y * nwg.x * 256u + gid.x;
    let cells = params.cols * params.rows;
    if k >= cells * params.groups {
        return;
    }
    let cell = k % cells;
    let r = cell / params.cols;
    let c = cell % params.cols;
    let here = phi[k];
    var gx = 0.0;
    var gy = 0.0;
    // Sources, unreached cells: no gradient.
    if here > 0.0 && here < PHI_INF {
        let h = params.cell_size;
        var east = PHI_INF;
        if c + 1u < params.cols {
            east = phi[k + 1u];
        }
        var west = PHI_INF;
        if c > 0u {
            west = phi[k - 1u];
        }
        var north = PHI_INF;
        if r + 1u < params.rows {
            north = phi[k + params.cols];
        }
        var south = PHI_INF;
        if r > 0u {
            south = phi[k - params.cols];
        }
        let f = cell * 4u;
        gx = upwind_axis(here, vec2<f32>(east, cost[f + DIR_E]), vec2<f32>(west, cost[f + DIR_W]), h);
        gy = upwind_axis(here, vec2<f32>(north, cost[f + DIR_N]), vec2<f32>(south, cost[f + DIR_S]), h);
    }
    grad[2u * k] = gx;
    grad[2u * k + 1u] = gy;
}
