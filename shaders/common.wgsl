// Shared structs and constants of every crowdfield compute pass (prepended to each pass's source).
// Keep every struct in sync with its #[repr(C)] twin in src/gpu/types.rs (sizes asserted in tests).

// Potential of a cell no source reaches yet; the host maps values >= PHI_INF to +inf.
const PHI_INF: f32 = 3.0e38;
// Largest workgroup count along x of an indirect dispatch (WebGPU's guaranteed 65535).
const MAX_GROUPS_X: u32 = 65535u;
// Slots of the FIM's state buffer: three list counts (0..3, rotating, see FimStep), passes
// that relaxed a tile, passes encoded, and a 64-bit count of local updates. Sync: STATE_* in
// src/gpu/fim.rs.
const STATE_PASSES: u32 = 3u;
const STATE_EPOCH: u32 = 4u;
const STATE_RELAX_LO: u32 = 5u;
const STATE_RELAX_HI: u32 = 6u;
// Wake bits of a tile after a block pass: one per neighbour tile, one for itself.
const WAKE_E: u32 = 1u;
const WAKE_N: u32 = 2u;
const WAKE_W: u32 = 4u;
const WAKE_S: u32 = 8u;
const WAKE_SELF: u32 = 16u;
// Elements per workgroup of the prefix-sum passes.
const SCAN_BLOCK: u32 = 256u;
// Radix digits per pass of the neighbour-grid sort (8 bits).
const RADIX: u32 = 256u;

// FIM dimensions. Sync: GpuFimParams.
struct FimParams {
    cols: u32,
    rows: u32,
    tiles_x: u32,
    tiles_y: u32,
    tiles_per_group: u32,
    groups: u32,
    cell_size: f32,
    eps_rel: f32,
}

// The list and count slots of one FIM pass. Sync: GpuFimStep.
struct FimStep {
    list_in: u32,
    count_in: u32,
    count_out: u32,
    count_clear: u32,
}

// One level of a multi-level exclusive scan over scan_buf. Sync: GpuScanParams.
struct ScanParams {
    offset: u32,
    len: u32,
    sums_offset: u32,
    pad: u32,
}

// Neighbour-grid dimensions and the current radix pass. Sync: GpuBinParams.
struct BinParams {
    agents: u32,
    bins_x: u32,
    bins_y: u32,
    inv_bin_size: f32,
    shift: u32,
    chunks: u32,
    hist_offset: u32,
    pad: u32,
}

// Density splat dimensions. Sync: GpuSplatParams.
struct SplatParams {
    agents: u32,
    cols: u32,
    rows: u32,
    lambda: f32,
    cell_size: f32,
    fixed_scale: f32,
    pad0: u32,
    pad1: u32,
}

// Dimensions of the gradient and velocity passes of the continuum step. Sync:
// GpuContinuumParams.
struct ContinuumParams {
    cols: u32,
    rows: u32,
    groups: u32,
    agents: u32,
    cell_size: f32,
    // The domain's extent, metres: cols and rows times cell_size.
    width: f32,
    height: f32,
    pad0: u32,
}

// Field dimensions and model parameters of the speed and cost passes. Sync: GpuFieldParams.
struct FieldParams {
    cols: u32,
    rows: u32,
    // 0: linear blend (continuum crowds), 1: Weidmann. Sync: SpeedLaw.
    speed_law: u32,
    // Look-ahead distance in cells (at least 1), split on the host into its whole part and its
    // fraction so the sample position carries no f32 rounding of `row + ahead`.
    ahead_whole: u32,
    cell_size: f32,
    ahead_frac: f32,
    alpha: f32,
    beta: f32,
    gamma: f32,
    f_min: f32,
    f_max: f32,
    s_min: f32,
    s_max: f32,
    rho_min: f32,
    rho_max: f32,
    weidmann_gamma: f32,
    weidmann_rho_jam: f32,
    // Finite unit costs above this are clamped to it (FIM_COST_MAX on the host).
    cost_max: f32,
    // 1: each face reads at least the density of its own cell (params.density_at_walker).
    at_walker: u32,
    pad2: u32,
}

// The density window of the window passes (CPU: fields::window). Sync: GpuWindowParams.
struct WindowParams {
    cols: u32,
    rows: u32,
    // Window cells on each side of the centre along a row / a column, capped at the grid.
    half_cols: u32,
    half_rows: u32,
    // Weight of the window's outer ring (1 when the window is one cell).
    edge: f32,
    pad0: u32,
    pad1: u32,
    pad2: u32,
}

// Speed laws. Sync: GPU_SPEED_LAW_* in src/gpu/fields.rs.
const SPEED_LAW_LINEAR: u32 = 0u;
const SPEED_LAW_WEIDMANN: u32 = 1u;

// True when x is neither infinite nor NaN (tested on the bits: compilers may assume no NaN).
fn is_finite(x: f32) -> bool {
    return (bitcast<u32>(x) & 0x7f800000u) != 0x7f800000u;
}

// The four faces of a cell, as the last index of an anisotropic field. Sync: grid::Dir.
const DIR_E: u32 = 0u;
const DIR_N: u32 = 1u;
const DIR_W: u32 = 2u;
const DIR_S: u32 = 3u;

// Column and row steps of direction d (0 E, 1 N, 2 W, 3 S; Sync: grid::Dir).
fn dir_dc(d: u32) -> i32 {
    return select(select(0, -1, d == 2u), 1, d == 0u);
}
fn dir_dr(d: u32) -> i32 {
    return select(select(0, -1, d == 3u), 1, d == 1u);
}

// The neighbour cell of (r, c) in direction d, or -1 past the border.
fn face_neighbour(r: u32, c: u32, d: u32, cols: u32, rows: u32) -> i32 {
    let nr = i32(r) + dir_dr(d);
    let nc = i32(c) + dir_dc(d);
    if nr < 0 || nc < 0 || nr >= i32(rows) || nc >= i32(cols) {
        return -1;
    }
    return nr * i32(cols) + nc;
}

// The two cells around the point `ahead` cells from the centre of (r, c) along direction d,
// and the weight of the second (CPU twin: fields::sample_ahead).
struct AheadCells {
    a: u32,
    b: u32,
    t: f32,
}

fn ahead_cells(r: u32, c: u32, d: u32, cols: u32, rows: u32, whole: u32, frac: f32) -> AheadCells {
    let horizontal = dir_dc(d) != 0;
    let start = i32(select(r, c, horizontal));
    let last = i32(select(rows, cols, horizontal)) - 1;
    // The point start + sign * (whole + frac) as a cell index lo and a weight t in [0, 1).
    var lo = start + i32(whole);
    var t = frac;
    if dir_dr(d) + dir_dc(d) < 0 {
        lo = start - i32(whole);
        if frac > 0.0 {
            lo -= 1;
            t = 1.0 - frac;
        }
    }
    // Clamped to the line: past either end reads the last cell.
    if lo < 0 {
        lo = 0;
        t = 0.0;
    }
    if lo >= last {
        lo = last;
        t = 0.0;
    }
    let hi = u32(min(lo + 1, last));
    let l = u32(lo);
    if horizontal {
        return AheadCells(r * cols + l, r * cols + hi, t);
    }
    return AheadCells(l * cols + c, hi * cols + c, t);
}

// Linear interpolation of the two samples ahead (the first alone when t is 0, as on the CPU).
fn lerp_ahead(a: f32, b: f32, t: f32) -> f32 {
    if t == 0.0 {
        return a;
    }
    return a + t * (b - a);
}

// Neighbour value p if it is at or below the threshold t, else unreached.
fn upto(p: f32, t: f32) -> f32 {
    return select(PHI_INF, p, p <= t);
}

// The anisotropic first-order update of SPEC §4 as fast marching computes it (CPU twin:
// gpu::fim::local_update, which explains why): the minimum, over each reached neighbour value
// t, of the update from the neighbours at or below t.
fn local_update(pe: f32, pn: f32, pw: f32, ps: f32, ce: f32, cn: f32, cw: f32, cs: f32) -> f32 {
    var r = PHI_INF;
    if pe < PHI_INF {
        r = min(r, update_from_neighbours(upto(pe, pe), upto(pn, pe), upto(pw, pe), upto(ps, pe), ce, cn, cw, cs));
    }
    if pn < PHI_INF {
        r = min(r, update_from_neighbours(upto(pe, pn), upto(pn, pn), upto(pw, pn), upto(ps, pn), ce, cn, cw, cs));
    }
    if pw < PHI_INF {
        r = min(r, update_from_neighbours(upto(pe, pw), upto(pn, pw), upto(pw, pw), upto(ps, pw), ce, cn, cw, cs));
    }
    if ps < PHI_INF {
        r = min(r, update_from_neighbours(upto(pe, ps), upto(pn, ps), upto(pw, ps), upto(ps, ps), ce, cn, cw, cs));
    }
    return r;
}

// The SPEC §4 update from the four neighbours as given: per axis the neighbour with the smaller
// phi_M + C, then the quadratic or the one-sided value. p* are the neighbours' potentials, c*
// the step costs h*C(cell -> neighbour), 0 = blocked.
fn update_from_neighbours(pe: f32, pn: f32, pw: f32, ps: f32, ce: f32, cn: f32, cw: f32, cs: f32) -> f32 {
    var a = PHI_INF;
    var p = 0.0;
    if ce > 0.0 && pe < PHI_INF {
        a = pe;
        p = ce;
    }
    if cw > 0.0 && pw < PHI_INF && (a >= PHI_INF || pw + cw < a + p) {
        a = pw;
        p = cw;
    }
    var b = PHI_INF;
    var q = 0.0;
    if cn > 0.0 && pn < PHI_INF {
        b = pn;
        q = cn;
    }
    if cs > 0.0 && ps < PHI_INF && (b >= PHI_INF || ps + cs < b + q) {
        b = ps;
        q = cs;
    }
    if a >= PHI_INF && b >= PHI_INF {
        return PHI_INF;
    }
    if a >= PHI_INF {
        return min(b + q, PHI_INF);
    }
    if b >= PHI_INF {
        return min(a + p, PHI_INF);
    }
    let one_sided = min(a + p, b + q);
    let s = p * p + q * q;
    let diff = a - b;
    let d = s - diff * diff;
    if d >= 0.0 {
        let phi = a * (q * q / s) + b * (p * p / s) + (p * q / s) * sqrt(d);
        if phi >= max(a, b) {
            return min(min(phi, one_sided), PHI_INF);
        }
    }
    return min(one_sided, PHI_INF);
}

// Bin of a point, clamped to the grid; NaN goes to 0 (CPU twin: NeighborGrid::bin_of). A
// multiplication by 1 / bin size (rounded on the CPU), not a division: Vulkan rounds a product
// exactly as the CPU does, a quotient only to 2.5 ulp.
fn bin_coord(v: f32, inv_bin_size: f32, bins: u32) -> u32 {
    let bits = bitcast<u32>(v);
    let is_nan = (bits & 0x7f800000u) == 0x7f800000u && (bits & 0x007fffffu) != 0u;
    if is_nan {
        return 0u;
    }
    let f = floor(v * inv_bin_size);
    if f <= 0.0 {
        return 0u;
    }
    if f >= f32(bins - 1u) {
        return bins - 1u;
    }
    return u32(f);
}

// The four cell centres around a point at (fx, fy) in cell units, on a grid of rows x cols
// (clamped at the border), and the point's offsets from the first of them: the bilinear
// interpolation of the continuum passes (CPU twins: gradient::velocity_at and
// pedestrian::potential_at).
struct Bilinear {
    r0: u32,
    c0: u32,
    r1: u32,
    c1: u32,
    tu: f32,
    tv: f32,
}

fn bilinear(fx: f32, fy: f32, rows: u32, cols: u32) -> Bilinear {
    let u = clamp(fx - 0.5, 0.0, f32(cols - 1u));
    let v = clamp(fy - 0.5, 0.0, f32(rows - 1u));
    let c0 = u32(floor(u));
    let r0 = u32(floor(v));
    return Bilinear(r0, c0, min(r0 + 1u, rows - 1u), min(c0 + 1u, cols - 1u), u - f32(c0), v - f32(r0));
}
