// Local ORCA pass: half-planes of walls, moving obstacles and the nearest agents, then RVO2's 2-D linear program with its fallback (CPU twin: local::orca_pass::orca_chunk, orca::solve).
struct Line {
    point: vec2<f32>,
    dir: vec2<f32>,
}

// Function-scope working memory of one agent's program.
var<private> lines: array<Line, MAX_LINES>;
var<private> scratch: array<Line, MAX_LINES>;
var<private> near_d2: array<f32, MAX_NEIGHBORS>;
var<private> near_k: array<u32, MAX_NEIGHBORS>;

// CPU twin: Line::at_least.
fn at_least(normal: vec2<f32>, offset: f32) -> Line {
    return Line(normal * offset, vec2<f32>(normal.y, -normal.x));
}

// CPU twin: Line::violation.
fn violation(l: Line, v: vec2<f32>) -> f32 {
    return det2(l.dir, l.point - v);
}

// CPU twin: orca::agent_line, with the share as (inside, outside).
fn agent_line(
    pos: vec2<f32>, vel: vec2<f32>, radius: f32, other_pos: vec2<f32>, other_vel: vec2<f32>,
    other_radius: f32, time_horizon: f32, dt: f32, share_inside: f32, share_outside: f32,
) -> Line {
    let rel_pos = other_pos - pos;
    let rel_vel = vel - other_vel;
    let dist_sq = len_sq(rel_pos);
    let r = radius + other_radius;
    let r_sq = r * r;
    var direction: vec2<f32>;
    var u: vec2<f32>;
    var inside: bool;
    if dist_sq > r_sq {
        let inv_tau = 1.0 / time_horizon;
        let w = rel_vel - rel_pos * inv_tau;
        let w_len_sq = len_sq(w);
        let dot1 = dot2(w, rel_pos);
        if dot1 < 0.0 && dot1 * dot1 > r_sq * w_len_sq {
            let w_len = sqrt(w_len_sq);
            let unit_w = w * (1.0 / w_len);
            direction = vec2<f32>(unit_w.y, -unit_w.x);
            u = unit_w * (r * inv_tau - w_len);
            inside = w_len < r * inv_tau;
        } else {
            let leg = sqrt(dist_sq - r_sq);
            if det2(rel_pos, w) > 0.0 {
                direction = vec2<f32>(rel_pos.x * leg - rel_pos.y * r, rel_pos.x * r + rel_pos.y * leg)
                    * (1.0 / dist_sq);
            } else {
                direction = -vec2<f32>(rel_pos.x * leg + rel_pos.y * r, -rel_pos.x * r + rel_pos.y * leg)
                    * (1.0 / dist_sq);
            }
            let dot2v = dot2(rel_vel, direction);
            u = direction * dot2v - rel_vel;
            inside = det2(rel_vel, direction) >= 0.0;
        }
    } else {
        let inv_dt = 1.0 / dt;
        let w = rel_vel - rel_pos * inv_dt;
        let w_len = sqrt(len_sq(w));
        let unit_w = normalize_or_zero(w);
        direction = vec2<f32>(unit_w.y, -unit_w.x);
        u = unit_w * (r * inv_dt - w_len);
        inside = true;
    }
    let f = select(share_outside, share_inside, inside);
    return Line(vel + u * f, direction);
}

// CPU twin: orca::static_point_line.
fn static_point_line(pos: vec2<f32>, vel: vec2<f32>, radius: f32, point: vec2<f32>, tau: f32, dt: f32) -> Line {
    let rel = point - pos;
    if len_sq(rel) <= radius * radius {
        return at_least(normalize_or_zero(-rel), 0.0);
    }
    return agent_line(pos, vel, radius, point, vec2<f32>(0.0), 0.0, tau, dt, 1.0, 1.0);
}

// CPU twin: WallMap::push_lines (into lines[0..]); returns the number of lines.
fn push_wall_lines(pos: vec2<f32>, vel: vec2<f32>, radius: f32, max_speed: f32, tau: f32, dt: f32) -> u32 {
    var count = 0u;
    let range = tau * max_speed + radius;
    let inv_tau = 1.0 / tau;
    var clearances = array<f32, 4>(pos.x, params.width - pos.x, pos.y, params.height - pos.y);
    var inwards = array<vec2<f32>, 4>(vec2<f32>(1.0, 0.0), vec2<f32>(-1.0, 0.0), vec2<f32>(0.0, 1.0), vec2<f32>(0.0, -1.0));
    for (var i = 0u; i < 4u; i++) {
        if clearances[i] < range {
            let slack = max(clearances[i] - radius, 0.0) * inv_tau;
            lines[count] = at_least(inwards[i], -slack);
            count += 1u;
        }
    }
    var nd2: array<f32, MAX_OBSTACLE_POINTS>;
    var nq: array<vec2<f32>, MAX_OBSTACLE_POINTS>;
    var found = 0u;
    let cell = params.cell;
    let c0 = u32(max(floor((pos.x - range) * params.inv_cell), 0.0));
    let r0 = u32(max(floor((pos.y - range) * params.inv_cell), 0.0));
    let c1 = min(u32(max(floor((pos.x + range) * params.inv_cell), 0.0)), params.cols - 1u);
    let r1 = min(u32(max(floor((pos.y + range) * params.inv_cell), 0.0)), params.rows - 1u);
    let range_sq = range * range;
    let cells = params.cols * params.rows;
    for (var r = r0; r <= r1; r++) {
        for (var c = c0; c <= c1; c++) {
            let idx = r * params.cols + c;
            if idx >= cells || (walls[idx] & CELL_BOUNDARY) == 0u {
                continue;
            }
            let lo = vec2<f32>(f32(c) * cell, f32(r) * cell);
            let q = vec2<f32>(clamp(pos.x, lo.x, lo.x + cell), clamp(pos.y, lo.y, lo.y + cell));
            let d2 = len_sq(q - pos);
            if d2 >= range_sq {
                continue;
            }
            if found < MAX_OBSTACLE_POINTS || d2 < nd2[found - 1u] {
                var i = min(found, MAX_OBSTACLE_POINTS - 1u);
                while i > 0u && nd2[i - 1u] > d2 {
                    nd2[i] = nd2[i - 1u];
                    nq[i] = nq[i - 1u];
                    i -= 1u;
                }
                nd2[i] = d2;
                nq[i] = q;
                found = min(found + 1u, MAX_OBSTACLE_POINTS);
            }
        }
    }
    for (var p = 0u; p < found; p++) {
        let q = nq[p];
        let centre = (q - pos) * inv_tau;
        let disc_radius = radius * inv_tau;
        var covered = false;
        for (var l = 0u; l < count; l++) {
            if violation(lines[l], centre) >= disc_radius {
                covered = true;
                break;
            }
        }
        if !covered {
            lines[count] = static_point_line(pos, vel, radius, q, tau, dt);
            count += 1u;
        }
    }
    return count;
}

struct OnLine {
    ok: bool,
    v: vec2<f32>,
}

// RVO2's linearProgram1 on lines (which = 0) or scratch (which = 1). CPU twin: orca::program_on_line.
fn line_at(which: u32, i: u32) -> Line {
    if which == 0u {
        return lines[i];
    }
    return scratch[i];
}

fn program_on_line(which: u32, k: u32, radius: f32, opt: vec2<f32>, opt_is_direction: bool) -> OnLine {
    let line = line_at(which, k);
    let dot = dot2(line.point, line.dir);
    let disc = dot * dot + radius * radius - len_sq(line.point);
    if disc < 0.0 {
        return OnLine(false, vec2<f32>(0.0));
    }
    let s = sqrt(disc);
    var t_left = -dot - s;
    var t_right = -dot + s;
    for (var i = 0u; i < k; i++) {
        let other = line_at(which, i);
        let denom = det2(line.dir, other.dir);
        let numer = det2(other.dir, line.point - other.point);
        if abs(denom) <= PARALLEL_EPSILON {
            if numer < 0.0 {
                return OnLine(false, vec2<f32>(0.0));
            }
            continue;
        }
        let t = numer / denom;
        if denom >= 0.0 {
            t_right = min(t_right, t);
        } else {
            t_left = max(t_left, t);
        }
        if t_left > t_right {
            return OnLine(false, vec2<f32>(0.0));
        }
    }
    var t: f32;
    if opt_is_direction {
        t = select(t_left, t_right, dot2(opt, line.dir) > 0.0);
    } else {
        t = clamp(dot2(line.dir, opt - line.point), t_left, t_right);
    }
    return OnLine(true, line.point + line.dir * t);
}

struct Program {
    failed: u32,
    result: vec2<f32>,
}

// RVO2's linearProgram2. CPU twin: orca::program_2d.
fn program_2d(which: u32, count: u32, radius: f32, opt: vec2<f32>, opt_is_direction: bool) -> Program {
    var result: vec2<f32>;
    if opt_is_direction {
        result = opt * radius;
    } else {
        result = clamp_len(opt, radius);
    }
    for (var k = 0u; k < count; k++) {
        if violation(line_at(which, k), result) > 0.0 {
            let r = program_on_line(which, k, radius, opt, opt_is_direction);
            if !r.ok {
                return Program(k, result);
            }
            result = r.v;
        }
    }
    return Program(count, result);
}

// RVO2's linearProgram3. CPU twin: orca::program_fallback.
fn program_fallback(count: u32, obstacle_lines: u32, begin: u32, radius: f32, start: vec2<f32>) -> vec2<f32> {
    var result = start;
    var distance = 0.0;
    for (var i = begin; i < count; i++) {
        let li = lines[i];
        if violation(li, result) > distance {
            var sc = 0u;
            for (var j = 0u; j < obstacle_lines; j++) {
                scratch[sc] = lines[j];
                sc += 1u;
            }
            for (var j = obstacle_lines; j < i; j++) {
                let lj = lines[j];
                let det = det2(li.dir, lj.dir);
                var point: vec2<f32>;
                if abs(det) <= PARALLEL_EPSILON {
                    if dot2(li.dir, lj.dir) > 0.0 {
                        continue;
                    }
                    point = (li.point + lj.point) * 0.5;
                } else {
                    point = li.point + li.dir * (det2(lj.dir, li.point - lj.point) / det);
                }
                scratch[sc] = Line(point, normalize_or_zero(lj.dir - li.dir));
                sc += 1u;
            }
            let previous = result;
            let opt = perp(li.dir);
            let r = program_2d(1u, sc, radius, opt, true);
            result = r.result;
            if r.failed < sc {
                // Round-off only: the previous result is feasible by construction.
                result = previous;
            }
            distance = violation(li, result);
        }
    }
    return result;
}

@compute @workgroup_size(256, 1, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let k = slot(gid, nwg);
    if k >= params.agents {
        return;
    }
    let me = packed[k];
    let g = group_of(me.group);
    let boids = params.mode == MODE_BOIDS_ORCA && g.has_boids != 0u;
    let dt = params.dt;

    // Neighbour scan (CPU twin: scan::scan): the max_neighbors nearest within
    // neighbor_dist, nearest first, ties in visiting order; boids sums over the whole 3x3.
    var acc = Accum(vec2<f32>(0.0), vec2<f32>(0.0), vec2<f32>(0.0), 0u, 0u, 0u);
    let max_n = g.max_neighbors;
    var near_len = 0u;
    var range_sq = select(g.neighbor_dist * g.neighbor_dist, 0.0, max_n == 0u);
    let nb = near_bins(me.p);
    for (var ny = nb.y0; ny <= nb.y1; ny++) {
        let run = bin_run(nb, ny);
        for (var j = run.x; j < run.y; j++) {
            if j == k {
                continue;
            }
            let o = packed[j];
            let d2 = len_sq(o.p - me.p);
            if boids {
                accum_add(&acc, g, me, o, d2);
            }
            if d2 >= range_sq {
                continue;
            }
            var len = near_len;
            if len == max_n {
                len -= 1u;
            }
            var at = len;
            while at > 0u && near_d2[at - 1u] > d2 {
                near_d2[at] = near_d2[at - 1u];
                near_k[at] = near_k[at - 1u];
                at -= 1u;
            }
            near_d2[at] = d2;
            near_k[at] = j;
            near_len = len + 1u;
            if near_len == max_n {
                range_sq = near_d2[max_n - 1u];
            }
        }
    }
    var preferred = work[k].pref;
    if boids {
        preferred = clamp_len(preferred + clamp_len(accum_steer(acc, g, me), g.a_max), me.max_speed);
    } else {
        preferred = clamp_len(preferred, me.max_speed);
    }

    let n_obst = push_wall_lines(me.p, me.v, me.radius, me.max_speed, g.obstacle_time_horizon, dt);
    var count = n_obst;
    for (var m = 0u; m < params.movers; m++) {
        let mo = movers[m];
        let reach = g.neighbor_dist + mo.radius;
        if len_sq(mo.pos - me.p) < reach * reach {
            lines[count] = agent_line(me.p, me.v, me.radius, mo.pos, mo.vel, mo.radius, g.time_horizon, dt, 1.0, 1.0);
            count += 1u;
        }
    }
    let half = 0.5 * params.clearance;
    for (var i = 0u; i < near_len; i++) {
        let o = packed[near_k[i]];
        lines[count] = agent_line(
            me.p, me.v, me.radius + half, o.p, o.v, o.radius + half, g.time_horizon, dt, 0.5, 0.5,
        );
        count += 1u;
    }

    // CPU twin: orca::solve.
    let first = program_2d(0u, count, me.max_speed, preferred, false);
    var v = first.result;
    let infeasible = first.failed < count;
    if infeasible {
        v = program_fallback(count, n_obst, first.failed, me.max_speed, v);
    }
    work[k] = Work(preferred, v, select(0u, 1u, infeasible), 0u, 0u, 0u);
}
