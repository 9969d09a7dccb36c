// Velocity pass: every agent's walking velocity from its group's gradient and the speed field, as gradient::velocity_at samples it (CPU twin: velocity_twin).
@group(0) @binding(0) var<uniform> params: ContinuumParams;
@group(0) @binding(1) var<storage, read> xs: array<f32>;
@group(0) @binding(2) var<storage, read> ys: array<f32>;
// The agent's group: which potential's gradient it follows.
@group(0) @binding(3) var<storage, read> groups: array<u32>;
// (group * cells + cell) * 2: the gradient pass's d phi / d x and d phi / d y.
@group(0) @binding(4) var<storage, read> grad: array<f32>;
// (cell * 4 + dir): the speed field.
@group(0) @binding(5) var<storage, read> speed: array<f32>;
// agent * 2: the velocity, x then y.
@group(0) @binding(6) var<storage, read_write> velocity: array<f32>;

// The unit walking direction -grad / |grad| of cell (r, c) of the potential starting at
// `base`, in xy, with z 1 where the cell has one and 0 where its gradient is zero (a source, an
// unreached cell, an obstacle).
fn direction(base: u32, r: u32, c: u32) -> vec3<f32> {
    let k = base + r * params.cols + c;
    let gx = grad[2u * k];
    let gy = grad[2u * k + 1u];
    let norm = sqrt(gx * gx + gy * gy);
    if !(norm > 0.0 && is_finite(norm)) {
        return vec3<f32>(0.0, 0.0, 0.0);
    }
    return vec3<f32>(-gx / norm, -gy / norm, 1.0);
}

// The velocity of an agent at (x, y) following the potential starting at `base`; zero outside
// the domain and in a cell without a direction.
fn sample(base: u32, x: f32, y: f32) -> vec2<f32> {
    if !(x >= 0.0 && y >= 0.0 && x <= params.width && y <= params.height) {
        return vec2<f32>(0.0, 0.0);
    }
    let h = params.cell_size;
    // The containing cell (the far edges belong to the last cell).
    let cr = min(u32(y / h), params.rows - 1u);
    let cc = min(u32(x / h), params.cols - 1u);
    let own = direction(base, cr, cc);
    if own.z == 0.0 {
        return vec2<f32>(0.0, 0.0);
    }
    // Bilinear weights over the four cell centres around the point (clamped at the border),
    // over the cells with a direction.
    let b = bilinear(x / h, y / h, params.rows, params.cols);
    let tu = b.tu;
    let tv = b.tv;
    var dir = vec2<f32>(0.0, 0.0);
    let d00 = direction(base, b.r0, b.c0);
    dir += ((1.0 - tu) * (1.0 - tv)) * d00.z * d00.xy;
    let d01 = direction(base, b.r0, b.c1);
    dir += (tu * (1.0 - tv)) * d01.z * d01.xy;
    let d11 = direction(base, b.r1, b.c1);
    dir += (tu * tv) * d11.z * d11.xy;
    let d10 = direction(base, b.r1, b.c0);
    dir += ((1.0 - tu) * tv) * d10.z * d10.xy;
    let norm = sqrt(dir.x * dir.x + dir.y * dir.y);
    // Opposite directions can cancel (on a ridge between two exits): keep the cell's own.
    var d = own.xy;
    if norm > 1.0e-6 {
        d = dir / norm;
    }
    let face = (cr * params.cols + cc) * 4u;
    let face_x = select(DIR_W, DIR_E, d.x >= 0.0);
    let face_y = select(DIR_S, DIR_N, d.y >= 0.0);
    let f = d.x * d.x * speed[face + face_x] + d.y * d.y * speed[face + face_y];
    return vec2<f32>(f * d.x, f * d.y);
}

@compute @workgroup_size(256, 1, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.y * nwg.x * 256u + gid.x;
    if i >= params.agents {
        return;
    }
    var out = vec2<f32>(0.0, 0.0);
    let g = groups[i];
    if g < params.groups {
        out = sample(g * params.cols * params.rows, xs[i], ys[i]);
    }
    velocity[2u * i] = out.x;
    velocity[2u * i + 1u] = out.y;
}
