// Speed pass: anisotropic walking speed per cell and direction from terrain slope, the splatted density and mean velocity ahead (CPU: fields::speed).
@group(0) @binding(0) var<uniform> params: FieldParams;
@group(0) @binding(1) var<storage, read> height: array<f32>;
@group(0) @binding(2) var<storage, read> obstacle: array<u32>;
@group(0) @binding(3) var<storage, read> discomfort: array<f32>;
// The splat's output, or its window average with a density window: rho, then vx, then vy,
// each cols * rows values.
@group(0) @binding(4) var<storage, read> density: array<f32>;
@group(0) @binding(5) var<storage, read_write> speed: array<f32>;
@group(0) @binding(6) var<storage, read_write> cost: array<f32>;

// f_max at or below s_min, f_min at or above s_max, linear between (CPU: speed::terrain_speed).
fn terrain_speed(s: f32) -> f32 {
    if s <= params.s_min {
        return params.f_max;
    }
    if s >= params.s_max {
        return params.f_min;
    }
    let t = (s - params.s_min) / (params.s_max - params.s_min);
    return params.f_max + t * (params.f_min - params.f_max);
}

// Terrain speed ft, flow speed fv and density rho to walking speed (CPU: speed::blend_speed).
fn blend_speed(ft: f32, fv: f32, rho: f32) -> f32 {
    if params.speed_law == SPEED_LAW_WEIDMANN {
        if rho <= 0.0 {
            return ft;
        }
        let factor = 1.0 - exp(-params.weidmann_gamma * (1.0 / rho - 1.0 / params.weidmann_rho_jam));
        return max(ft * factor, params.f_min);
    }
    if rho <= params.rho_min {
        return ft;
    }
    if rho >= params.rho_max {
        return fv;
    }
    return ft + (rho - params.rho_min) / (params.rho_max - params.rho_min) * (fv - ft);
}

fn face_speed(cell: u32, r: u32, c: u32, d: u32) -> f32 {
    let nb = face_neighbour(r, c, d, params.cols, params.rows);
    if nb < 0 || obstacle[cell] != 0u || obstacle[u32(nb)] != 0u {
        return 0.0;
    }
    var slope = (height[u32(nb)] - height[cell]) / params.cell_size;
    if !is_finite(slope) {
        slope = 0.0;
    }
    let ft = terrain_speed(slope);
    let cells = params.cols * params.rows;
    let s = ahead_cells(r, c, d, params.cols, params.rows, params.ahead_whole, params.ahead_frac);
    var rho = lerp_ahead(density[s.a], density[s.b], s.t);
    if params.at_walker != 0u {
        rho = max(rho, density[cell]);
    }
    let vx = lerp_ahead(density[cells + s.a], density[cells + s.b], s.t);
    let vy = lerp_ahead(density[2u * cells + s.a], density[2u * cells + s.b], s.t);
    let v_along = vx * f32(dir_dc(d)) + vy * f32(dir_dr(d));
    var fv = params.f_min;
    if is_finite(v_along) {
        fv = max(v_along, params.f_min);
    }
    let f = blend_speed(ft, fv, rho);
    if !is_finite(f) {
        return 0.0;
    }
    return max(f, 0.0);
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
        speed[cell * 4u + d] = face_speed(cell, r, c, d);
    }
}
