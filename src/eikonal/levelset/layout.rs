//! The lay-out of the level-set march: one pass over the input writes each cell's word,
//! checks `phi`, the mask and the speeds, and finds the contour's cells and their first values.

use super::*;

/// Writes every cell's word and freezes the contour (scikit-fmm's `initializeFrozen`): a cell
/// where phi is 0 at 0, a cell where phi changes sign towards a neighbour at its interpolated
/// distance, divided by the speed for the travel time. Returns the frozen cells in memory
/// order, whether phi has values of both signs, and the speed of every cell that is not an
/// obstacle if they are all the same; `None` if phi or the speeds have a NaN or infinite value.
/// One pass, row by row, in loops the compiler vectorises.
#[inline(always)]
pub(super) fn lay_out(
    words: &mut [u64],
    phi: &[f64],
    mask: Option<&[bool]>,
    speed: Option<&[f64]>,
    (rows, cols): (usize, usize),
    spacing: [f64; 2],
) -> Option<Result<(Vec<usize>, bool, Option<f64>)>> {
    let base = MARGIN * cols;
    words[..base].fill(OPEN | MASK);
    words[base + rows * cols..].fill(OPEN | MASK);
    // The cells that take no part: masked, or (travel time) too slow for the quadratic, which
    // scikit-fmm makes obstacles.
    let masked = |k: usize| mask.is_some_and(|m| m[k]) || speed.is_some_and(|s| s[k] < f64::EPSILON);
    let (mut negative, mut positive, mut finite) = (false, false, true);
    let (mut uniform, mut first_speed) = (true, None);
    let mut frozen = Vec::new();
    for r in 0..rows {
        let row = r * cols..(r + 1) * cols;
        let p = &phi[row.clone()];
        let out = &mut words[base + row.start..base + row.end];
        // The values under the mask take no part, whatever they are (NaN included).
        let row_mask = mask.map(|m| &m[row.clone()]);
        let row_speed = speed.map(|s| &s[row.clone()]);
        if let Some(s) = row_speed
            && uniform
            && first_speed.is_none()
        {
            first_speed = match row_mask {
                None => s.iter().copied().find(|&v| v >= f64::EPSILON),
                Some(m) => s
                    .iter()
                    .zip(m)
                    .find(|&(&v, &m)| v >= f64::EPSILON && !m)
                    .map(|(&v, _)| v),
            };
        }
        // A row with no speed yet is all obstacles or masked: no cell compares with it.
        let s0 = first_speed.unwrap_or(f64::NAN);
        let facts = match (row_mask, row_speed) {
            (None, None) => lay_out_row::<false, false>(out, p, &[], &[], s0),
            (Some(m), None) => lay_out_row::<true, false>(out, p, m, &[], s0),
            (None, Some(s)) => lay_out_row::<false, true>(out, p, &[], s, s0),
            (Some(m), Some(s)) => lay_out_row::<true, true>(out, p, m, s, s0),
        };
        negative |= facts.negative;
        positive |= facts.positive;
        finite &= facts.finite;
        uniform &= facts.uniform;
        for c in (0..cols.min(EDGE_COLUMNS)).chain(cols.saturating_sub(EDGE_COLUMNS)..cols) {
            out[c] |= EDGE;
        }
        // The contour: cells at 0 or whose phi changes sign towards a neighbour. The test
        // ignores the mask, so it finds every cell the full test can freeze; the full test
        // runs on the blocks of cells where it finds one.
        let up = if r > 0 {
            &phi[row.start - cols..row.start]
        } else {
            p
        };
        let down = if r + 1 < rows {
            &phi[row.end..row.end + cols]
        } else {
            p
        };
        let crosses = |c: usize| {
            let v = p[c];
            (v == 0.0)
                | (v * up[c] < 0.0)
                | (v * down[c] < 0.0)
                | (c > 0 && v * p[c - 1] < 0.0)
                | (c + 1 < cols && v * p[c + 1] < 0.0)
        };
        const BLOCK: usize = 64;
        for start in (0..cols).step_by(BLOCK) {
            let end = (start + BLOCK).min(cols);
            // The block's cells with both row neighbours, then its first and last cells.
            let (lo, hi) = (start.max(1), end.min(cols - 1));
            let mut crossing = crosses(start) | crosses(end - 1);
            if lo < hi {
                crossing |= p[lo..hi]
                    .iter()
                    .zip(&p[lo - 1..hi - 1])
                    .zip(&p[lo + 1..hi + 1])
                    .zip(up[lo..hi].iter().zip(&down[lo..hi]))
                    .fold(false, |x, (((&v, &l), &r), (&u, &d))| {
                        x | (v == 0.0) | (v * l < 0.0) | (v * r < 0.0) | (v * u < 0.0) | (v * d < 0.0)
                    });
            }
            if !crossing {
                continue;
            }
            for c in start..end {
                let k = row.start + c;
                if masked(k) {
                    continue;
                }
                let v = phi[k];
                let start = if v == 0.0 {
                    Some(0.0)
                } else {
                    contour_distance(phi, masked, (rows, cols), (r, c), spacing).map(|d| {
                        let d = if v < 0.0 { -d } else { d };
                        match speed {
                            Some(s) => (d / s[k]).abs(),
                            None => d,
                        }
                    })
                };
                if let Some(value) = start {
                    words[base + k] = value.to_bits();
                    frozen.push(base + k);
                }
            }
        }
    }
    if !finite {
        return None;
    }
    if frozen.is_empty() {
        // Where the contour is there but every cell on it is too slow, the speeds are to blame.
        let user_masked = |k: usize| mask.is_some_and(|m| m[k]);
        let slow_contour = speed.is_some()
            && (0..rows * cols).any(|k| {
                let (r, c) = (k / cols, k % cols);
                !user_masked(k)
                    && (phi[k] == 0.0
                        || contour_distance(phi, user_masked, (rows, cols), (r, c), spacing).is_some())
            });
        if slow_contour {
            return Some(Err(Error::invalid(
                OPTIONS,
                "speed",
                format!(
                    "below {:e} (machine epsilon, an obstacle) in every cell on phi's zero contour: expected a speed above it somewhere on the contour",
                    f64::EPSILON
                ),
            )));
        }
        return Some(Err(Error::invalid(
            OPTIONS,
            "phi",
            "has no zero contour (no zero level set) outside the mask: expected a value of 0 or a change of sign between neighbours",
        )));
    }
    Some(Ok((
        frozen,
        negative && positive,
        first_speed.filter(|_| uniform),
    )))
}

/// What [`lay_out_row`] finds in a row.
pub(super) struct RowFacts {
    /// Some phi is below 0.
    pub(super) negative: bool,
    /// Some phi is above 0.
    pub(super) positive: bool,
    /// Every phi and speed outside the mask is finite (and the speeds at most [`MAX_SCALE`]).
    pub(super) finite: bool,
    /// Every speed outside the mask that is not an obstacle is the given one.
    pub(super) uniform: bool,
}

/// Writes a row's words (open, flagged [`ABOVE_EPSILON`] where `phi > f64::EPSILON`, and
/// [`MASK`] where masked or, with `SPEED`, slower than `f64::EPSILON`) and checks its values,
/// in one loop the compiler vectorises: no branch depends on a value. `mask` and `speed` are
/// read only with `MASKED` and `SPEED`; `s0` is the speed a uniform grid has.
#[inline(always)]
pub(super) fn lay_out_row<const MASKED: bool, const SPEED: bool>(
    out: &mut [u64],
    phi: &[f64],
    mask: &[bool],
    speed: &[f64],
    s0: f64,
) -> RowFacts {
    let n = out.len();
    let (phi, mask, speed) = (
        &phi[..n],
        if MASKED { &mask[..n] } else { mask },
        if SPEED { &speed[..n] } else { speed },
    );
    let (mut negative, mut positive, mut finite, mut uniform) = (false, false, true, true);
    for k in 0..n {
        let v = phi[k];
        let masked = MASKED && mask[k];
        let mut word = OPEN | (u64::from(v > f64::EPSILON) * ABOVE_EPSILON) | (u64::from(masked) * MASK);
        if SPEED {
            let s = speed[k];
            let slow = s < f64::EPSILON;
            word |= u64::from(slow) * MASK;
            finite &= (s.is_finite() & (s <= MAX_SCALE)) | masked;
            uniform &= (s == s0) | slow | masked;
        }
        finite &= v.is_finite() | masked;
        negative |= v < 0.0;
        positive |= v > 0.0;
        out[k] = word;
    }
    RowFacts {
        negative,
        positive,
        finite,
        uniform,
    }
}

/// The distance from cell `(r, c)` to the zero contour where phi changes sign towards an
/// unmasked neighbour (scikit-fmm's interpolation: per axis the nearer crossing
/// `h phi / (phi - phi_neighbour)`, combined as `1 / sqrt(sum 1 / d^2)`); `None` where it
/// changes sign towards none. A crossing so near that its quotient underflows to 0 puts the
/// cell on the contour, at 0 (scikit-fmm skips it as no crossing, starts the cell at `+inf`
/// where it is the only one, and its neighbours at NaN).
#[inline]
pub(super) fn contour_distance(
    phi: &[f64],
    masked: impl Fn(usize) -> bool,
    (rows, cols): (usize, usize),
    (r, c): (usize, usize),
    spacing: [f64; 2],
) -> Option<f64> {
    let k = r * cols + c;
    let p = phi[k];
    let mut nearest = [0.0f64; 2];
    let mut borders = false;
    let neighbours = [
        (0, r > 0, k.wrapping_sub(cols)),
        (0, r + 1 < rows, k + cols),
        (1, c > 0, k.wrapping_sub(1)),
        (1, c + 1 < cols, k + 1),
    ];
    for (axis, inside, n) in neighbours {
        if !inside || p * phi[n] >= 0.0 || masked(n) {
            continue;
        }
        borders = true;
        let d = spacing[axis] * p / (p - phi[n]);
        if d == 0.0 {
            return Some(0.0);
        }
        if nearest[axis] == 0.0 || nearest[axis] > d {
            nearest[axis] = d;
        }
    }
    if !borders {
        return None;
    }
    let mut dsum = 0.0;
    for d in nearest {
        if d > 0.0 {
            dsum += 1.0 / d / d;
        }
    }
    Some((1.0 / dsum).sqrt())
}
