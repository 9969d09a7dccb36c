// Local layer (boids, ORCA, move): the structs, bindings and helpers shared by the local_*.wgsl passes.
// Every function mirrors its CPU twin in src/local/ or src/collision/ (named in its comment) operation by operation, so
// the GPU and CPU agree to f32 rounding. Structs: Sync with the #[repr(C)] twins in src/gpu/local.rs.

// Lines an agent's ORCA program holds: 4 border half-planes, MAX_OBSTACLE_POINTS wall points,
// MAX_MOVERS moving obstacles, MAX_NEIGHBORS agents. Sync: GPU_MAX_* in src/gpu/local.rs.
const MAX_OBSTACLE_POINTS: u32 = 8u;
const MAX_MOVERS: u32 = 16u;
const MAX_NEIGHBORS: u32 = 32u;
const MAX_LINES: u32 = 60u;
// Sync: local::orca::PARALLEL_EPSILON.
const PARALLEL_EPSILON: f32 = 1e-5;
// Wall probes: samples every half cell, a ring of 8 rays. Sync: obstacles::{PROBE_STEP_CELLS, AROUND_PROBES}.
const PROBE_STEP_CELLS: f32 = 0.5;
const AROUND_PROBES: u32 = 8u;
const TAU: f32 = 6.2831855;
const FRAC_PI_6: f32 = 0.5235988;
// Modes. Sync: GPU_MODE_* in src/gpu/local.rs.
const MODE_NONE: u32 = 0u;
const MODE_BOIDS: u32 = 1u;
const MODE_ORCA: u32 = 2u;
const MODE_BOIDS_ORCA: u32 = 3u;
// Bits of a wall-map cell: two flags, then the cell's span (free cells across it) from bit
// CELL_SPAN_SHIFT on. Sync: CELL_* in src/gpu/local.rs.
const CELL_BLOCKED: u32 = 1u;
const CELL_BOUNDARY: u32 = 2u;
const CELL_SPAN_SHIFT: u32 = 2u;

// One step's dimensions and constants. Sync: GpuLocalParams.
struct LocalParams {
    agents: u32,
    bins_x: u32,
    bins_y: u32,
    inv_bin_size: f32,
    cols: u32,
    rows: u32,
    cell: f32,
    width: f32,
    height: f32,
    dt: f32,
    mode: u32,
    movers: u32,
    // Configurations in `groups` before the fallback (agents of a group >= this use the last).
    groups: u32,
    step_lo: u32,
    step_hi: u32,
    // 1: the move pass bounces off walls (the flock), 0: slides along them.
    bounce: u32,
    clearance: f32,
    jitter: f32,
    k_wall: f32,
    probe_seconds: f32,
    // 1 / cell, rounded on the CPU: cells are a product, as on the CPU (WallMap::inv_cell).
    inv_cell: f32,
    // Gap (m) the contact pass leaves between bodies it separates (local::contact::CONTACT_GAP).
    contact_gap: f32,
    pad1: u32,
    pad2: u32,
}

// An agent in agent order with its preferred velocity. Sync: GpuLocalAgent.
struct AgentIn {
    p: vec2<f32>,
    v: vec2<f32>,
    pref: vec2<f32>,
    radius: f32,
    max_speed: f32,
    group: u32,
    id: u32,
    pad0: u32,
    pad1: u32,
}

// An agent in bin order (CPU twin: local::PackedAgent). Sync: GpuPackedAgent.
struct Packed {
    p: vec2<f32>,
    v: vec2<f32>,
    radius: f32,
    max_speed: f32,
    group: u32,
    agent: u32,
}

// Per-group settings (CPU twin: local::GroupCfg). Sync: GpuLocalGroup.
struct GroupCfg {
    has_boids: u32,
    r_coh: f32,
    r_sep: f32,
    r_align: f32,
    k_coh: f32,
    k_sep: f32,
    k_align: f32,
    a_max: f32,
    v_max: f32,
    time_horizon: f32,
    obstacle_time_horizon: f32,
    neighbor_dist: f32,
    max_neighbors: u32,
    pad0: u32,
    pad1: u32,
    pad2: u32,
}

// A moving obstacle (CPU twin: local::MovingObstacle). Sync: GpuMover.
struct Mover {
    pos: vec2<f32>,
    vel: vec2<f32>,
    radius: f32,
    pad0: u32,
    pad1: u32,
    pad2: u32,
}

// Per packed slot: preferred and new velocity; after the move pass, the contact pass's
// positions (`pref` and `vel`, read and written by turns). Sync: GpuLocalWork.
struct Work {
    pref: vec2<f32>,
    vel: vec2<f32>,
    infeasible: u32,
    // 1 when the agent lacks ORCA's guarantee (infeasible program or a move changed by a
    // wall): the contact pass's agents. Set by the move pass.
    unguaranteed: u32,
    pad1: u32,
    pad2: u32,
}

// Per agent (agent order): the step's result. Sync: GpuLocalOut.
struct Out {
    p: vec2<f32>,
    v: vec2<f32>,
    infeasible: u32,
    hit: u32,
    // 1 when the contact pass pushed the agent.
    pushed: u32,
    pad1: u32,
}

@group(0) @binding(0) var<uniform> params: LocalParams;
@group(0) @binding(1) var<storage, read> agents_in: array<AgentIn>;
// bin_start (bins + 1 entries), then the sorted agent indices.
@group(0) @binding(2) var<storage, read> grid_idx: array<u32>;
@group(0) @binding(3) var<storage, read_write> packed: array<Packed>;
@group(0) @binding(4) var<storage, read> group_cfg: array<GroupCfg>;
@group(0) @binding(5) var<storage, read> walls: array<u32>;
@group(0) @binding(6) var<storage, read> movers: array<Mover>;
@group(0) @binding(7) var<storage, read_write> work: array<Work>;
@group(0) @binding(8) var<storage, read_write> out: array<Out>;

// The agent slot of a linear dispatch (context::dispatch_linear).
fn slot(gid: vec3<u32>, nwg: vec3<u32>) -> u32 {
    return gid.y * nwg.x * 256u + gid.x;
}

fn group_of(g: u32) -> GroupCfg {
    return group_cfg[min(g, params.groups)];
}

// ---- vectors (CPU twin: vec2::V2) ----

fn len_sq(v: vec2<f32>) -> f32 {
    return v.x * v.x + v.y * v.y;
}

fn dot2(a: vec2<f32>, b: vec2<f32>) -> f32 {
    return a.x * b.x + a.y * b.y;
}

fn det2(a: vec2<f32>, b: vec2<f32>) -> f32 {
    return a.x * b.y - a.y * b.x;
}

fn normalize_or_zero(v: vec2<f32>) -> vec2<f32> {
    let l = sqrt(len_sq(v));
    if l > 0.0 && is_finite(l) {
        return v * (1.0 / l);
    }
    return vec2<f32>(0.0, 0.0);
}

fn clamp_len(v: vec2<f32>, max_len: f32) -> vec2<f32> {
    let l2 = len_sq(v);
    if l2 > max_len * max_len {
        return v * (max_len / sqrt(l2));
    }
    return v;
}

fn perp(v: vec2<f32>) -> vec2<f32> {
    return vec2<f32>(-v.y, v.x);
}

// ---- 64-bit integers as (lo, hi) for the perturbation hash ----

fn mulhi32(a: u32, b: u32) -> u32 {
    let a0 = a & 0xffffu;
    let a1 = a >> 16u;
    let b0 = b & 0xffffu;
    let b1 = b >> 16u;
    let p00 = a0 * b0;
    let p01 = a0 * b1;
    let p10 = a1 * b0;
    let p11 = a1 * b1;
    let mid = (p00 >> 16u) + (p01 & 0xffffu) + (p10 & 0xffffu);
    return p11 + (p01 >> 16u) + (p10 >> 16u) + (mid >> 16u);
}

fn mul64(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    return vec2<u32>(a.x * b.x, mulhi32(a.x, b.x) + a.x * b.y + a.y * b.x);
}

fn add64(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    let lo = a.x + b.x;
    return vec2<u32>(lo, a.y + b.y + select(0u, 1u, lo < a.x));
}

// z ^ (z >> s) for 0 < s < 32.
fn xorshr64(z: vec2<u32>, s: u32) -> vec2<u32> {
    let lo = (z.x >> s) | (z.y << (32u - s));
    return vec2<u32>(z.x ^ lo, z.y ^ (z.y >> s));
}

fn unit24(bits: u32) -> f32 {
    return f32(bits & 0xffffffu) / 16777216.0;
}

// CPU twin: local::perturbation (SplitMix64 of (id << 32) ^ step).
fn perturbation(id: u32, max_len: f32) -> vec2<f32> {
    var z = vec2<u32>(params.step_lo, id ^ params.step_hi);
    z = add64(z, vec2<u32>(0x7F4A7C15u, 0x9E3779B9u));
    z = mul64(xorshr64(z, 30u), vec2<u32>(0x1CE4E5B9u, 0xBF58476Du));
    z = mul64(xorshr64(z, 27u), vec2<u32>(0x133111EBu, 0x94D049BBu));
    z = xorshr64(z, 31u);
    let half = max_len * 0.70710677;
    return vec2<f32>((unit24(z.x) * 2.0 - 1.0) * half, (unit24(z.y) * 2.0 - 1.0) * half);
}

// ---- neighbour grid (CPU twin: local::for_each_near) ----

// The 3x3 bins around p: rows y0..=y1, columns x0..=x1 (contiguous in packed order per row).
struct Near {
    x0: u32,
    x1: u32,
    y0: u32,
    y1: u32,
}

fn near_bins(p: vec2<f32>) -> Near {
    let bx = bin_coord(p.x, params.inv_bin_size, params.bins_x);
    let by = bin_coord(p.y, params.inv_bin_size, params.bins_y);
    return Near(
        select(bx - 1u, 0u, bx == 0u),
        min(bx + 1u, params.bins_x - 1u),
        select(by - 1u, 0u, by == 0u),
        min(by + 1u, params.bins_y - 1u),
    );
}

// The packed slots `start..end` of bin row `ny` of `nb` (the bins of a row are contiguous).
fn bin_run(nb: Near, ny: u32) -> vec2<u32> {
    let row = ny * params.bins_x;
    return vec2<u32>(grid_idx[row + nb.x0], grid_idx[row + nb.x1 + 1u]);
}

// ---- boids (CPU twin: boids::Accum) ----

struct Accum {
    sum_pos: vec2<f32>,
    sum_off: vec2<f32>,
    sum_vel: vec2<f32>,
    n_coh: u32,
    n_sep: u32,
    n_align: u32,
}

fn accum_add(acc: ptr<function, Accum>, g: GroupCfg, me: Packed, o: Packed, d2: f32) {
    let same = o.group == me.group;
    if same && d2 < g.r_coh * g.r_coh {
        (*acc).sum_pos = (*acc).sum_pos + o.p;
        (*acc).n_coh += 1u;
    }
    if d2 < g.r_sep * g.r_sep {
        (*acc).sum_off = (*acc).sum_off + (o.p - me.p);
        (*acc).n_sep += 1u;
    }
    if same && d2 < g.r_align * g.r_align {
        (*acc).sum_vel = (*acc).sum_vel + o.v;
        (*acc).n_align += 1u;
    }
}

fn accum_steer(acc: Accum, g: GroupCfg, me: Packed) -> vec2<f32> {
    var s = vec2<f32>(0.0, 0.0);
    if acc.n_coh > 0u {
        s = s + normalize_or_zero(acc.sum_pos * (1.0 / f32(acc.n_coh)) - me.p) * g.k_coh;
    }
    if acc.n_sep > 0u {
        s = s - normalize_or_zero(acc.sum_off * (1.0 / f32(acc.n_sep))) * g.k_sep;
    }
    if acc.n_align > 0u {
        s = s + normalize_or_zero(acc.sum_vel * (1.0 / f32(acc.n_align)) - me.v) * g.k_align;
    }
    return s;
}

// CPU twin: boids::steer.
fn boids_steer(k: u32, g: GroupCfg) -> vec2<f32> {
    let me = packed[k];
    var acc = Accum(vec2<f32>(0.0), vec2<f32>(0.0), vec2<f32>(0.0), 0u, 0u, 0u);
    let nb = near_bins(me.p);
    for (var ny = nb.y0; ny <= nb.y1; ny++) {
        let run = bin_run(nb, ny);
        for (var j = run.x; j < run.y; j++) {
            if j != k {
                let o = packed[j];
                let d = o.p - me.p;
                accum_add(&acc, g, me, o, len_sq(d));
            }
        }
    }
    return accum_steer(acc, g, me);
}

// ---- walls (CPU twin: collision::WallMap) ----

fn cell_flags(r: u32, c: u32) -> u32 {
    return walls[r * params.cols + c];
}

fn is_free(p: vec2<f32>) -> bool {
    if !(p.x >= 0.0 && p.y >= 0.0 && p.x < params.width && p.y < params.height) {
        return false;
    }
    let c = min(u32(p.x * params.inv_cell), params.cols - 1u);
    let r = min(u32(p.y * params.inv_cell), params.rows - 1u);
    return (cell_flags(r, c) & CELL_BLOCKED) == 0u;
}

fn step_ok(a: vec2<f32>, b: vec2<f32>) -> bool {
    if !is_free(b) {
        return false;
    }
    let same_col = floor(a.x * params.inv_cell) == floor(b.x * params.inv_cell);
    let same_row = floor(a.y * params.inv_cell) == floor(b.y * params.inv_cell);
    return same_col || same_row || is_free(vec2<f32>(b.x, a.y)) || is_free(vec2<f32>(a.x, b.y));
}

// CPU twin: collision::walls::body_cells.
fn body_cells(radius: f32) -> u32 {
    let width = 2.0 * radius * params.inv_cell;
    if width > 0.0 {
        return u32(ceil(width));
    }
    return 0u;
}

// CPU twin: WallMap::lacks.
fn lacks(p: vec2<f32>, need: u32) -> u32 {
    if !(p.x >= 0.0 && p.y >= 0.0 && p.x < params.width && p.y < params.height) {
        return need;
    }
    let c = min(u32(p.x * params.inv_cell), params.cols - 1u);
    let r = min(u32(p.y * params.inv_cell), params.rows - 1u);
    let span = cell_flags(r, c) >> CELL_SPAN_SHIFT;
    return need - min(span, need);
}

// A sub-step of move_agent: step_ok, and no cell where the body lacks more than where it was.
fn body_step_ok(a: vec2<f32>, b: vec2<f32>, need: u32) -> bool {
    return step_ok(a, b) && lacks(b, need) <= lacks(a, need);
}

struct Moved {
    p: vec2<f32>,
    v: vec2<f32>,
    hit: bool,
}

fn blocked_component(c: f32, bounce: bool) -> f32 {
    return select(0.0, -c, bounce);
}

// CPU twin: WallMap::move_agent.
fn move_agent(pos: vec2<f32>, vel: vec2<f32>, dt: f32, radius: f32, bounce: bool) -> Moved {
    if !is_free(pos) {
        return Moved(pos + vel * dt, vel, false);
    }
    let travel = sqrt(len_sq(vel)) * dt;
    let max_sub = 0.5 * params.cell;
    var n = 1u;
    if is_finite(travel) {
        n = clamp(u32(ceil(travel / max_sub)), 1u, 64u);
    }
    let h = dt / f32(n);
    let need = body_cells(radius);
    var p = pos;
    var v = vel;
    var hit = false;
    for (var s = 0u; s < n; s++) {
        let t = p + v * h;
        if body_step_ok(p, t, need) {
            p = t;
            continue;
        }
        hit = true;
        let tx = vec2<f32>(t.x, p.y);
        let ty = vec2<f32>(p.x, t.y);
        if v.x != 0.0 && body_step_ok(p, tx, need) {
            p = tx;
            v.y = blocked_component(v.y, bounce);
        } else if v.y != 0.0 && body_step_ok(p, ty, need) {
            p = ty;
            v.x = blocked_component(v.x, bounce);
        } else {
            v = vec2<f32>(blocked_component(v.x, bounce), blocked_component(v.y, bounce));
        }
    }
    return Moved(p, v, hit);
}

fn rotate(v: vec2<f32>, angle: f32) -> vec2<f32> {
    let s = sin(angle);
    let c = cos(angle);
    return vec2<f32>(c * v.x - s * v.y, s * v.x + c * v.y);
}

// Distance to the first non-free sample along the ray, or -1 when none lies within max_dist.
fn ray_hit(pos: vec2<f32>, dir: vec2<f32>, max_dist: f32) -> f32 {
    let step = PROBE_STEP_CELLS * params.cell;
    var d = step;
    while d <= max_dist {
        if !is_free(pos + dir * d) {
            return d;
        }
        d += step;
    }
    return -1.0;
}

// CPU twin: WallMap::probe_steer.
fn probe_steer(pos: vec2<f32>, vel: vec2<f32>, keep_dist: f32) -> vec2<f32> {
    var heading = normalize_or_zero(vel);
    if heading.x == 0.0 && heading.y == 0.0 {
        heading = vec2<f32>(1.0, 0.0);
    }
    var push = vec2<f32>(0.0, 0.0);
    for (var k = 0u; k < AROUND_PROBES; k++) {
        let a = f32(k) * TAU / f32(AROUND_PROBES);
        let dir = rotate(heading, a);
        let d = ray_hit(pos, dir, keep_dist);
        if d >= 0.0 {
            push = push - dir * (1.0 / d);
        }
    }
    var steer = normalize_or_zero(push);
    if ray_hit(pos, heading, keep_dist) >= 0.0 {
        for (var step = 1u; step <= 6u; step++) {
            let a = f32(step) * FRAC_PI_6;
            let left = rotate(heading, a);
            if ray_hit(pos, left, keep_dist) < 0.0 {
                steer = steer + left;
                break;
            }
            let right = rotate(heading, -a);
            if ray_hit(pos, right, keep_dist) < 0.0 {
                steer = steer + right;
                break;
            }
        }
    }
    return normalize_or_zero(steer);
}


// ---- contact pass (CPU twin: local::contact) ----

// The position of slot j before a contact sweep: `pref` on even sweeps, `vel` on odd ones.
fn contact_position(j: u32, even: bool) -> vec2<f32> {
    if even {
        return work[j].pref;
    }
    return work[j].vel;
}

// CPU twin: contact::coincident_direction.
fn coincident_direction(a: u32, b: u32) -> vec2<f32> {
    let lo = min(a, b);
    let hi = max(a, b);
    let angle = f32((lo * 7919u + hi) % 65536u) * 2.399963;
    let sign = select(-1.0, 1.0, a < b);
    return vec2<f32>(sign * cos(angle), sign * sin(angle));
}

// One sweep of the contact pass for slot k (CPU twin: LocalLayer::resolve_contacts with
// contact::push, overlap::Push::add): reads every slot's position from one field of `work`, writes its own to
// the other (unchanged unless it lacks ORCA's guarantee and overlaps someone).
fn contact_sweep(k: u32, even: bool) {
    let a = packed[k];
    let p = contact_position(k, even);
    var q = p;
    if work[k].unguaranteed != 0u {
        var push = vec2<f32>(0.0);
        let nb = near_bins(a.p);
        for (var ny = nb.y0; ny <= nb.y1; ny++) {
            let run = bin_run(nb, ny);
            for (var j = run.x; j < run.y; j++) {
                if j == k {
                    continue;
                }
                let o = packed[j];
                let d = p - contact_position(j, even);
                let touch = a.radius + o.radius;
                let d2 = len_sq(d);
                if d2 >= touch * touch {
                    continue;
                }
                let dist = sqrt(d2);
                var dir = coincident_direction(a.agent, o.agent);
                if dist > 1e-6 {
                    dir = d * (1.0 / dist);
                }
                let share = select(1.0, 0.5, work[j].unguaranteed != 0u);
                push = push + dir * (share * (touch + params.contact_gap - dist));
            }
        }
        push = clamp_len(push, a.radius);
        if push.x != 0.0 || push.y != 0.0 {
            q = move_agent(p, push * (1.0 / params.dt), params.dt, a.radius, false).p;
        }
    }
    if even {
        work[k].vel = q;
    } else {
        work[k].pref = q;
    }
}
