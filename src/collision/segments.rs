//! Walls as line segments: the exact edges a walker's body meets.
//!
//! [`WallSegments`] holds the boundary of the walkable floor, each segment directed with the
//! floor on its left: the edges of a map's [`crate::scene::Outline`] (the walls as drawn), or
//! the edges between free and obstacle cells of a scene without one. Where a goal reaches the
//! map's edge, that stretch of the edge is an *opening*: the way out for the groups whose goal
//! it is (they leave the map by crossing it), a wall for everyone else.
//!
//! The segments are filed in square buckets by every bucket they pass through, so a question
//! about a small neighbourhood (a body's disc, a step) reads a few buckets.

use crate::grid::Grid;
use crate::scene::Scene;
use crate::vec2::V2;
use geo::orient::{Direction, Orient};

/// A directed segment `[ax, ay, bx, by]`, metres, with the walkable floor on its left.
pub type Segment = [f64; 4];

/// Relative tolerance (of the domain's size) within which a point lies on the map's edge.
const EDGE_EPSILON: f64 = 1e-9;

/// The walls of a scene as segments, and its openings through the map's edge.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WallSegments {
    segments: Vec<Segment>,
    /// Per segment: `None` for a wall, or the index in `openings` of the opening it is.
    opening: Vec<Option<u32>>,
    /// Per opening: the `(group, goal)` pairs whose walkers leave through it.
    openings: Vec<Vec<(u32, u32)>>,
    /// Per opening: its segment's index.
    opening_segment: Vec<u32>,
    /// The `(group, goal)` pairs that are closed: their openings are wall.
    closed: Vec<(u32, u32)>,
    /// Bucket edge, metres.
    bucket: f64,
    cols: usize,
    rows: usize,
    /// Per bucket (row-major), where its segment indices start in `items`; one more entry.
    start: Vec<u32>,
    items: Vec<u32>,
}

#[inline]
fn orient(s: &Segment, x: f64, y: f64) -> f64 {
    (s[2] - s[0]) * (y - s[1]) - (s[3] - s[1]) * (x - s[0])
}

/// The point of `s` nearest `(x, y)` and its distance.
#[inline]
fn nearest_on(s: &Segment, x: f64, y: f64) -> (f64, f64, f64) {
    let (dx, dy) = (s[2] - s[0], s[3] - s[1]);
    let len2 = dx * dx + dy * dy;
    let t = if len2 > 0.0 {
        (((x - s[0]) * dx + (y - s[1]) * dy) / len2).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let (nx, ny) = (s[0] + t * dx, s[1] + t * dy);
    (nx, ny, (x - nx).hypot(y - ny))
}

/// Whether the step from `p` to `q` passes from the left of `s` (or on it) to its right.
#[inline]
fn leaves_through(s: &Segment, p: (f64, f64), q: (f64, f64)) -> bool {
    let sp = orient(s, p.0, p.1);
    let sq = orient(s, q.0, q.1);
    if !(sp >= 0.0 && sq < 0.0) {
        return false;
    }
    // Where the step meets the segment's line, as a fraction along the segment.
    let t = sp / (sp - sq);
    let (x, y) = (p.0 + t * (q.0 - p.0), p.1 + t * (q.1 - p.1));
    let (dx, dy) = (s[2] - s[0], s[3] - s[1]);
    let len2 = dx * dx + dy * dy;
    if len2 == 0.0 {
        return false;
    }
    let u = ((x - s[0]) * dx + (y - s[1]) * dy) / len2;
    (-1e-12..=1.0 + 1e-12).contains(&u)
}

impl WallSegments {
    /// The walls of `scene`: its outline's edges, or its obstacle cells' edges without one,
    /// with the openings of its goals through the map's edge.
    pub fn from_scene(scene: &Scene) -> Self {
        let grid = scene.grid;
        let walls = match &scene.outline {
            Some(outline) => outline_segments(&outline.walkable),
            None => cell_segments(scene),
        };
        let mut reaches = Vec::new();
        for (g, group) in scene.groups.iter().enumerate() {
            for (j, goal) in group.goals.iter().enumerate() {
                let spans = match &scene.outline {
                    Some(outline) => outline
                        .goals
                        .get(g)
                        .and_then(|goals| goals.get(j))
                        .map(|area| area_edge_spans(area, &grid))
                        .unwrap_or_default(),
                    None => mask_edge_spans(&goal.mask, &grid),
                };
                for (edge, lo, hi) in spans {
                    reaches.push((edge, lo, hi, g as u32, j as u32));
                }
            }
        }
        Self::build(&grid, walls, &reaches)
    }

    /// Cuts the openings (`(edge, from, to, group, goal)`, along the edges of [`edge_of`])
    /// out of the walls on the map's edge and files everything in buckets.
    fn build(grid: &Grid, walls: Vec<Segment>, reaches: &[(u8, f64, f64, u32, u32)]) -> Self {
        let mut segments = Vec::with_capacity(walls.len());
        let mut opening = Vec::with_capacity(walls.len());
        let mut openings: Vec<Vec<(u32, u32)>> = Vec::new();
        let mut opening_segment = Vec::new();
        for s in walls {
            let Some(edge) = edge_of(&s, grid) else {
                segments.push(s);
                opening.push(None);
                continue;
            };
            let along = |x: f64, y: f64| if edge % 2 == 0 { x } else { y };
            let (a, b) = (along(s[0], s[1]), along(s[2], s[3]));
            let mut cuts = vec![0.0, 1.0];
            for &(_, lo, hi, _, _) in reaches.iter().filter(|r| r.0 == edge) {
                for v in [lo, hi] {
                    let t = (v - a) / (b - a);
                    if t > 0.0 && t < 1.0 {
                        cuts.push(t);
                    }
                }
            }
            cuts.sort_by(f64::total_cmp);
            cuts.dedup();
            for w in cuts.windows(2) {
                let (t0, t1) = (w[0], w[1]);
                let mid = a + 0.5 * (t0 + t1) * (b - a);
                let owners: Vec<(u32, u32)> = reaches
                    .iter()
                    .filter(|r| r.0 == edge && r.1 <= mid && mid <= r.2)
                    .map(|r| (r.3, r.4))
                    .collect();
                let piece = [
                    s[0] + t0 * (s[2] - s[0]),
                    s[1] + t0 * (s[3] - s[1]),
                    s[0] + t1 * (s[2] - s[0]),
                    s[1] + t1 * (s[3] - s[1]),
                ];
                segments.push(piece);
                if owners.is_empty() {
                    opening.push(None);
                } else {
                    opening.push(Some(openings.len() as u32));
                    opening_segment.push((segments.len() - 1) as u32);
                    openings.push(owners);
                }
            }
        }
        let bucket = (2.0 * grid.cell_size).max(0.5);
        let cols = ((grid.width() / bucket).ceil() as usize).max(1);
        let rows = ((grid.height() / bucket).ceil() as usize).max(1);
        let mut lists: Vec<Vec<u32>> = vec![Vec::new(); cols * rows];
        for (k, s) in segments.iter().enumerate() {
            for_each_bucket(s, bucket, cols, rows, |b| lists[b].push(k as u32));
        }
        let mut start = Vec::with_capacity(lists.len() + 1);
        let mut items = Vec::new();
        for list in lists {
            start.push(items.len() as u32);
            items.extend(list);
        }
        start.push(items.len() as u32);
        Self {
            segments,
            opening,
            openings,
            opening_segment,
            closed: Vec::new(),
            bucket,
            cols,
            rows,
            start,
            items,
        }
    }

    /// Every segment, walls and openings.
    pub fn segments(&self) -> &[Segment] {
        &self.segments
    }

    /// Opens or closes the openings of goal `goal` of `group`: a closed goal's opening is wall.
    pub fn set_open(&mut self, group: u32, goal: u32, open: bool) {
        self.closed.retain(|&c| c != (group, goal));
        if !open {
            self.closed.push((group, goal));
        }
    }

    /// The goal of `group` that opening `o` is a way out for, if it is one and open.
    #[inline]
    fn way_out(&self, o: u32, group: u32) -> Option<u32> {
        self.openings[o as usize]
            .iter()
            .find(|&&(g, e)| g == group && !self.closed.contains(&(g, e)))
            .map(|&(_, e)| e)
    }

    /// Whether segment `k` stops walkers of `group`: a wall, or an opening that is not an open
    /// way out of theirs.
    #[inline]
    fn stops(&self, k: usize, group: u32) -> bool {
        match self.opening[k] {
            None => true,
            Some(o) => self.way_out(o, group).is_none(),
        }
    }

    /// Calls `visit` with the index of every segment filed in a bucket that meets the box
    /// `[x0, x1] x [y0, y1]` (a segment may come more than once).
    #[inline]
    fn for_each_in(&self, x0: f64, y0: f64, x1: f64, y1: f64, mut visit: impl FnMut(usize)) {
        let clamp_c = |x: f64| ((x / self.bucket).floor().max(0.0) as usize).min(self.cols - 1);
        let clamp_r = |y: f64| ((y / self.bucket).floor().max(0.0) as usize).min(self.rows - 1);
        let (c0, c1, r0, r1) = (clamp_c(x0), clamp_c(x1), clamp_r(y0), clamp_r(y1));
        for r in r0..=r1 {
            for c in c0..=c1 {
                let b = r * self.cols + c;
                for &k in &self.items[self.start[b] as usize..self.start[b + 1] as usize] {
                    visit(k as usize);
                }
            }
        }
    }

    /// How deep a disc of radius `r` at `p` reaches into the walls that stop `group` (0 when
    /// it is clear of them), and the unit direction that pushes it out of the deepest.
    pub fn penetration(&self, p: V2, r: f32, group: u32) -> (f64, [f64; 2]) {
        let (x, y, r) = (p.x as f64, p.y as f64, r as f64);
        let mut deepest = (0.0, [0.0, 0.0]);
        self.for_each_in(x - r, y - r, x + r, y + r, |k| {
            if !self.stops(k, group) {
                return;
            }
            let s = &self.segments[k];
            let (nx, ny, d) = nearest_on(s, x, y);
            let depth = r - d;
            if depth > deepest.0 {
                let dir = if d > 1e-12 {
                    [(x - nx) / d, (y - ny) / d]
                } else {
                    // On the segment: out to the floor's side, its left.
                    let (dx, dy) = (s[2] - s[0], s[3] - s[1]);
                    let len = dx.hypot(dy).max(1e-300);
                    [-dy / len, dx / len]
                };
                deepest = (depth, dir);
            }
        });
        deepest
    }

    /// Pushes a disc of radius `r` at `p` out of the walls that stop `group`, deepest first,
    /// up to four times, leaving it `clear` metres off them. Returns where it ends.
    pub fn push_out(&self, p: V2, r: f32, group: u32, clear: f32) -> V2 {
        let mut q = p;
        for _ in 0..4 {
            let (depth, dir) = self.penetration(q, r, group);
            if depth <= 0.0 {
                break;
            }
            let by = depth + clear as f64;
            q = V2::new(
                (q.x as f64 + dir[0] * by) as f32,
                (q.y as f64 + dir[1] * by) as f32,
            );
        }
        q
    }

    /// Whether the straight step from `p` to `q` passes through a wall that stops `group`
    /// from the floor's side (a step out of a wall, back onto the floor, passes).
    pub fn blocks(&self, p: V2, q: V2, group: u32) -> bool {
        let (a, b) = ((p.x as f64, p.y as f64), (q.x as f64, q.y as f64));
        let mut hit = false;
        self.for_each_in(a.0.min(b.0), a.1.min(b.1), a.0.max(b.0), a.1.max(b.1), |k| {
            if !hit && self.stops(k, group) && leaves_through(&self.segments[k], a, b) {
                hit = true;
            }
        });
        hit
    }

    /// The goal of `group` (its index in the group) whose open opening the step from `p` to `q`
    /// passes out through, if any.
    pub fn crossed_opening(&self, p: V2, q: V2, group: u32) -> Option<u32> {
        if self.openings.is_empty() {
            return None;
        }
        let (a, b) = ((p.x as f64, p.y as f64), (q.x as f64, q.y as f64));
        let mut found = None;
        self.for_each_in(a.0.min(b.0), a.1.min(b.1), a.0.max(b.0), a.1.max(b.1), |k| {
            if found.is_some() {
                return;
            }
            let Some(o) = self.opening[k] else { return };
            let Some(goal) = self.way_out(o, group) else {
                return;
            };
            if leaves_through(&self.segments[k], a, b) {
                found = Some(goal);
            }
        });
        found
    }

    /// Whether goal `goal` of `group` has an opening in the map's edge.
    pub fn has_opening(&self, group: u32, goal: u32) -> bool {
        self.openings.iter().any(|o| o.contains(&(group, goal)))
    }

    /// The point of an opening of goal `goal` of `group` nearest `p` that a body of radius
    /// `radius` can pass through (at least `radius` from the opening's ends, its middle when it
    /// is narrower than the body), and the outward unit normal there, if the goal has openings.
    pub fn nearest_opening(&self, p: V2, radius: f32, group: u32, goal: u32) -> Option<([f64; 2], [f64; 2])> {
        let (x, y) = (p.x as f64, p.y as f64);
        let mut best: Option<(f64, [f64; 2], [f64; 2])> = None;
        for (owners, &k) in self.openings.iter().zip(&self.opening_segment) {
            if !owners.contains(&(group, goal)) {
                continue;
            }
            let s = &self.segments[k as usize];
            let (dx, dy) = (s[2] - s[0], s[3] - s[1]);
            let len = dx.hypot(dy);
            if len <= 0.0 {
                continue;
            }
            let margin = (radius as f64 / len).min(0.5);
            let t = (((x - s[0]) * dx + (y - s[1]) * dy) / (len * len)).clamp(margin, 1.0 - margin);
            let (nx, ny) = (s[0] + t * dx, s[1] + t * dy);
            let d = (x - nx).hypot(y - ny);
            if best.is_none_or(|b| d < b.0) {
                best = Some((d, [nx, ny], [dy / len, -dx / len]));
            }
        }
        best.map(|b| (b.1, b.2))
    }
}

/// Which edge of the grid's domain segment `s` lies on: 0 bottom, 1 right, 2 top, 3 left
/// (even edges run along x), or `None`.
fn edge_of(s: &Segment, grid: &Grid) -> Option<u8> {
    let eps = EDGE_EPSILON * grid.width().max(grid.height()).max(1.0);
    let (w, h) = (grid.width(), grid.height());
    let on = |v: f64, line: f64| (v - line).abs() <= eps;
    if on(s[1], 0.0) && on(s[3], 0.0) {
        Some(0)
    } else if on(s[0], w) && on(s[2], w) {
        Some(1)
    } else if on(s[1], h) && on(s[3], h) {
        Some(2)
    } else if on(s[0], 0.0) && on(s[2], 0.0) {
        Some(3)
    } else {
        None
    }
}

/// The stretches of the domain's edges an area reaches: `(edge, from, to)` along the edge's
/// axis (x for the bottom and top edges, y for the sides).
fn area_edge_spans(area: &geo::MultiPolygon<f64>, grid: &Grid) -> Vec<(u8, f64, f64)> {
    let mut spans = Vec::new();
    for polygon in &area.0 {
        for ring in std::iter::once(polygon.exterior()).chain(polygon.interiors()) {
            for line in ring.lines() {
                let s = [line.start.x, line.start.y, line.end.x, line.end.y];
                if let Some(edge) = edge_of(&s, grid) {
                    let (a, b) = if edge % 2 == 0 { (s[0], s[2]) } else { (s[1], s[3]) };
                    if a != b {
                        spans.push((edge, a.min(b), a.max(b)));
                    }
                }
            }
        }
    }
    spans
}

/// The stretches of the domain's edges the cells of `mask` on the grid's border cover.
fn mask_edge_spans(mask: &crate::scene::CellMask, grid: &Grid) -> Vec<(u8, f64, f64)> {
    let h = grid.cell_size;
    let (rows, cols) = (grid.rows, grid.cols);
    let mut spans = Vec::new();
    for (r, c) in mask.cells() {
        let (x0, y0) = (c as f64 * h, r as f64 * h);
        if r == 0 {
            spans.push((0, x0, x0 + h));
        }
        if r + 1 == rows {
            spans.push((2, x0, x0 + h));
        }
        if c == 0 {
            spans.push((3, y0, y0 + h));
        }
        if c + 1 == cols {
            spans.push((1, y0, y0 + h));
        }
    }
    spans
}

/// The edges of a walkable region, each directed with the region on its left.
fn outline_segments(walkable: &geo::MultiPolygon<f64>) -> Vec<Segment> {
    let oriented = walkable.orient(Direction::Default);
    let mut segments = Vec::new();
    for polygon in &oriented.0 {
        for ring in std::iter::once(polygon.exterior()).chain(polygon.interiors()) {
            for line in ring.lines() {
                if line.start != line.end {
                    segments.push([line.start.x, line.start.y, line.end.x, line.end.y]);
                }
            }
        }
    }
    segments
}

/// The edges between free cells and obstacle cells (or the domain's outside), merged along
/// runs, each directed with the free cell on its left.
fn cell_segments(scene: &Scene) -> Vec<Segment> {
    let g = scene.grid;
    let (rows, cols, h) = (g.rows, g.cols, g.cell_size);
    let free = |r: isize, c: isize| {
        r >= 0
            && c >= 0
            && (r as usize) < rows
            && (c as usize) < cols
            && !scene.obstacle[(r as usize, c as usize)]
    };
    // The side of the floor across a face between cells `before` and `after` along a line:
    // +1 floor before (the wall after it), -1 floor after, 0 no wall.
    let side = |before: bool, after: bool| match (before, after) {
        (true, false) => 1,
        (false, true) => -1,
        _ => 0,
    };
    let mut segments = Vec::new();
    // Horizontal lines y = r h: a face is a wall with the floor below (+1) or above (-1).
    for r in 0..=rows as isize {
        let y = r as f64 * h;
        face_runs(
            cols,
            |c| side(free(r - 1, c), free(r, c)),
            |c0, c1, k| {
                let (xa, xb) = (c0 as f64 * h, c1 as f64 * h);
                segments.push(if k == 1 { [xb, y, xa, y] } else { [xa, y, xb, y] });
            },
        );
    }
    // Vertical lines x = c h: the floor left (+1) or right (-1).
    for c in 0..=cols as isize {
        let x = c as f64 * h;
        face_runs(
            rows,
            |r| side(free(r, c - 1), free(r, c)),
            |r0, r1, k| {
                let (ya, yb) = (r0 as f64 * h, r1 as f64 * h);
                segments.push(if k == 1 { [x, ya, x, yb] } else { [x, yb, x, ya] });
            },
        );
    }
    segments
}

/// The runs of faces of one kind along a line of `n` faces (`kind(i)`: +1, -1, or 0 for no
/// wall): `emit(from, to, kind)` for each run of nonzero kind, faces `from..to`.
fn face_runs(n: usize, kind: impl Fn(isize) -> i8, mut emit: impl FnMut(isize, isize, i8)) {
    let mut run: Option<(isize, i8)> = None;
    for i in 0..=n as isize {
        let k = if i == n as isize { 0 } else { kind(i) };
        if let Some((start, rk)) = run
            && rk != k
        {
            emit(start, i, rk);
            run = None;
        }
        if k != 0 && run.is_none() {
            run = Some((i, k));
        }
    }
}

/// Calls `visit` with every bucket (row-major index) the segment passes through.
fn for_each_bucket(s: &Segment, bucket: f64, cols: usize, rows: usize, mut visit: impl FnMut(usize)) {
    let col = |x: f64| ((x / bucket).floor().max(0.0) as usize).min(cols - 1);
    let row = |y: f64| ((y / bucket).floor().max(0.0) as usize).min(rows - 1);
    let (ylo, yhi) = (s[1].min(s[3]), s[1].max(s[3]));
    for r in row(ylo)..=row(yhi) {
        // The part of the segment inside this row's band.
        let (b0, b1) = (r as f64 * bucket, (r + 1) as f64 * bucket);
        let (lo, hi) = (ylo.max(b0), yhi.min(b1));
        let x_at = |y: f64| {
            if s[3] == s[1] {
                None
            } else {
                Some(s[0] + (y - s[1]) / (s[3] - s[1]) * (s[2] - s[0]))
            }
        };
        let (xa, xb) = match (x_at(lo), x_at(hi)) {
            (Some(a), Some(b)) => (a.min(b), a.max(b)),
            _ => (s[0].min(s[2]), s[0].max(s[2])),
        };
        // A little slack either way for rounding at the band's edges.
        let slack = 1e-9 * bucket;
        for c in col(xa - slack)..=col(xb + slack) {
            visit(r * cols + c);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_out_of_the_floor_is_blocked_and_one_back_onto_it_is_not() {
        // A wall along x = 1 with the floor on its left (x < 1): directed upwards.
        let s: Segment = [1.0, 0.0, 1.0, 2.0];
        assert!(leaves_through(&s, (0.5, 1.0), (1.5, 1.0)));
        assert!(!leaves_through(&s, (1.5, 1.0), (0.5, 1.0)));
        assert!(!leaves_through(&s, (0.5, 3.0), (1.5, 3.0)));
    }

    #[test]
    fn cell_edges_bound_the_free_cells() {
        let grid = Grid::new(3, 2, 1.0);
        let mut scene = Scene::empty("t", grid);
        scene.obstacle[(0, 1)] = true;
        let walls = WallSegments::from_scene(&scene);
        // The free cells' boundary: 3 + 3 + 2 + 2 (domain) edges minus the blocked cell's
        // bottom face, plus its three faces towards free cells.
        let length: f64 = walls
            .segments()
            .iter()
            .map(|s| (s[2] - s[0]).hypot(s[3] - s[1]))
            .sum();
        assert!((length - (10.0 - 1.0 + 3.0)).abs() < 1e-12, "{length}");
        // Every segment has a free cell on its left.
        for s in walls.segments() {
            let (mx, my) = (0.5 * (s[0] + s[2]), 0.5 * (s[1] + s[3]));
            let (dx, dy) = (s[2] - s[0], s[3] - s[1]);
            let len = dx.hypot(dy);
            let (lx, ly) = (mx - dy / len * 0.1, my + dx / len * 0.1);
            let rc = grid.cell_of(lx, ly).expect("left of a wall is on the grid");
            assert!(!scene.obstacle[rc], "{s:?}");
        }
        // A disc against the blocked cell's left face is pushed out to its radius.
        let q = walls.push_out(V2::new(0.9, 0.5), 0.25, 0, 0.0);
        assert!((q.x - 0.75).abs() < 1e-6 && (q.y - 0.5).abs() < 1e-6, "{q:?}");
        assert!(walls.blocks(V2::new(0.5, 0.5), V2::new(1.5, 0.5), 0));
        assert!(!walls.blocks(V2::new(0.5, 1.5), V2::new(1.5, 1.5), 0));
    }
}
