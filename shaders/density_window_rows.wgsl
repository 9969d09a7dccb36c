// Density window, rows pass: the window's weighted sums along each row of the splat's mass, momentum and open cells (CPU: fields::window).
@group(0) @binding(0) var<uniform> params: WindowParams;
@group(0) @binding(1) var<storage, read> obstacle: array<u32>;
// The splat's output: rho, then vx, then vy, each cols * rows values.
@group(0) @binding(2) var<storage, read> src: array<f32>;
// Row sums: mass (rho), momentum x (rho vx), momentum y (rho vy), open cells; cols * rows each.
@group(0) @binding(3) var<storage, read_write> dst: array<f32>;

@compute @workgroup_size(256, 1, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let cells = params.cols * params.rows;
    let cell = gid.y * nwg.x * 256u + gid.x;
    if cell >= cells {
        return;
    }
    let r = cell / params.cols;
    let c = i32(cell % params.cols);
    let half = i32(params.half_cols);
    // Only the cells inside the grid: past the border counts as nothing.
    let lo = max(c - half, 0);
    let hi = min(c + half, i32(params.cols) - 1);
    var mass = 0.0;
    var mom_x = 0.0;
    var mom_y = 0.0;
    var open = 0.0;
    for (var j = lo; j <= hi; j++) {
        let w = select(1.0, params.edge, abs(j - c) == half);
        let k = r * params.cols + u32(j);
        let rho = src[k];
        mass += w * rho;
        mom_x += w * (rho * src[cells + k]);
        mom_y += w * (rho * src[2u * cells + k]);
        if obstacle[k] == 0u {
            open += w;
        }
    }
    dst[cell] = mass;
    dst[cells + cell] = mom_x;
    dst[2u * cells + cell] = mom_y;
    dst[3u * cells + cell] = open;
}
