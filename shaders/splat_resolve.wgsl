// Splat resolve pass: fixed-point sums to density (persons/m^2) and density-weighted average velocity per cell.
@group(0) @binding(0) var<uniform> params: SplatParams;
@group(0) @binding(1) var<storage, read> xs: array<f32>;
@group(0) @binding(2) var<storage, read> ys: array<f32>;
@group(0) @binding(3) var<storage, read> vxs: array<f32>;
@group(0) @binding(4) var<storage, read> vys: array<f32>;
@group(0) @binding(5) var<storage, read_write> accum: array<i32>;
@group(0) @binding(6) var<storage, read_write> fields: array<f32>;

@compute @workgroup_size(256, 1, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let cells = params.cols * params.rows;
    let i = gid.y * nwg.x * 256u + gid.x;
    if i >= cells {
        return;
    }
    let w = f32(accum[i]);
    var vx = 0.0;
    var vy = 0.0;
    if accum[i] > 0 {
        vx = f32(accum[cells + i]) / w;
        vy = f32(accum[2u * cells + i]) / w;
    }
    fields[i] = w / params.fixed_scale / (params.cell_size * params.cell_size);
    fields[cells + i] = vx;
    fields[2u * cells + i] = vy;
}
