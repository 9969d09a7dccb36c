// Density window, columns pass: the row sums summed along each column, then density (mass over open area) and density-weighted mean velocity (CPU: fields::window).
@group(0) @binding(0) var<uniform> params: WindowParams;
// Binding 1 (the obstacle mask) belongs to the rows pass.
// The rows pass's sums: mass, momentum x, momentum y, open cells; cols * rows each.
@group(0) @binding(2) var<storage, read> src: array<f32>;
// The window average: rho, then vx, then vy, cols * rows each (what the speed pass reads).
@group(0) @binding(3) var<storage, read_write> dst: array<f32>;

@compute @workgroup_size(256, 1, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let cells = params.cols * params.rows;
    let cell = gid.y * nwg.x * 256u + gid.x;
    if cell >= cells {
        return;
    }
    let r = i32(cell / params.cols);
    let c = cell % params.cols;
    let half = i32(params.half_rows);
    let lo = max(r - half, 0);
    let hi = min(r + half, i32(params.rows) - 1);
    var mass = 0.0;
    var mom_x = 0.0;
    var mom_y = 0.0;
    var open = 0.0;
    for (var i = lo; i <= hi; i++) {
        let w = select(1.0, params.edge, abs(i - r) == half);
        let k = u32(i) * params.cols + c;
        mass += w * src[k];
        mom_x += w * src[cells + k];
        mom_y += w * src[2u * cells + k];
        open += w * src[3u * cells + k];
    }
    var rho = 0.0;
    if open > 0.0 {
        rho = max(mass / open, 0.0);
    }
    var vx = 0.0;
    var vy = 0.0;
    if mass > 0.0 {
        vx = mom_x / mass;
        vy = mom_y / mass;
    }
    dst[cell] = rho;
    dst[cells + cell] = vx;
    dst[2u * cells + cell] = vy;
}
