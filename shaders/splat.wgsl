// Density splat pass: adds each agent's four bilinear-like weights (and weight * velocity) to its cells in fixed point.
@group(0) @binding(0) var<uniform> params: SplatParams;
@group(0) @binding(1) var<storage, read> xs: array<f32>;
@group(0) @binding(2) var<storage, read> ys: array<f32>;
@group(0) @binding(3) var<storage, read> vxs: array<f32>;
@group(0) @binding(4) var<storage, read> vys: array<f32>;
@group(0) @binding(5) var<storage, read_write> accum: array<atomic<i32>>;
@group(0) @binding(6) var<storage, read_write> fields: array<f32>;

fn deposit(col: i32, row: i32, w: f32, vx: f32, vy: f32) {
    if col < 0 || row < 0 || col >= i32(params.cols) || row >= i32(params.rows) {
        return;
    }
    let cells = params.cols * params.rows;
    let cell = u32(row) * params.cols + u32(col);
    // Fixed point: integer sums do not depend on the order the atomics run in.
    atomicAdd(&accum[cell], i32(round(w * params.fixed_scale)));
    atomicAdd(&accum[cells + cell], i32(round(w * vx * params.fixed_scale)));
    atomicAdd(&accum[2u * cells + cell], i32(round(w * vy * params.fixed_scale)));
}

@compute @workgroup_size(256, 1, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.y * nwg.x * 256u + gid.x;
    if i >= params.agents {
        return;
    }
    let x = xs[i];
    let y = ys[i];
    let vx = vxs[i];
    let vy = vys[i];
    // Cell A: the centre nearest to the lower-left of the agent; (dx, dy) the offset in cells.
    let gx = x / params.cell_size - 0.5;
    let gy = y / params.cell_size - 0.5;
    if !(abs(gx) < 1.0e9 && abs(gy) < 1.0e9) {
        return;
    }
    let fx = floor(gx);
    let fy = floor(gy);
    let dx = gx - fx;
    let dy = gy - fy;
    let c = i32(fx);
    let r = i32(fy);
    let l = params.lambda;
    deposit(c, r, pow(min(1.0 - dx, 1.0 - dy), l), vx, vy);
    deposit(c + 1, r, pow(min(dx, 1.0 - dy), l), vx, vy);
    deposit(c + 1, r + 1, pow(min(dx, dy), l), vx, vy);
    deposit(c, r + 1, pow(min(1.0 - dx, dy), l), vx, vy);
}
