//! Overlaps: how a body steps out of the bodies it overlaps, for the simulation's separation
//! (`sim`) and the local layer's contact pass (`local::contact`, and `contact_sweep` in
//! `shaders/local_common.wgsl`) alike.
//!
//! Both run Jacobi sweeps (every push of a sweep computed from the positions before it, so the
//! result depends neither on the order nor on the thread count) and move each pushed body with
//! their wall rule ([`super::walls`]); both build the push of one body with [`Push`]: over the
//! bodies it overlaps, a share of each overlap plus a gap, along the line from the other
//! centre (a direction fixed by a key when the centres coincide, [`coincident_direction`]),
//! summed and shortened to the body's radius. What differs between them is a [`PushRule`] and
//! the sweeps around it (which agents, when to stop).

use crate::vec2::V2;

/// Centres closer than this (m) count as coincident: their difference is too short to give a
/// direction, and [`coincident_direction`] gives one instead.
pub const COINCIDENT: f32 = 1e-6;

/// The golden angle (radians): keys `k` spread round the circle at angles `k * GOLDEN_ANGLE`
/// with no two neighbouring keys close.
const GOLDEN_ANGLE: f32 = 2.399_963;

/// How the direction between two centres is made a unit vector. The two forms differ in the
/// last bit of some results; each user keeps its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// `d / |d|`: the simulation's separation.
    Quotient,
    /// `d * (1 / |d|)`: the local layer's contact pass, as its shader computes it.
    Reciprocal,
}

/// How a push is computed: what it leaves between two bodies and how it finds their direction.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PushRule {
    /// Distance (m) beyond touching that a push aims for.
    pub gap: f32,
    /// How the direction between the centres is normalised.
    pub unit: Unit,
}

/// The unit vector a body steps along out of another standing on the same point: the angle
/// `key` times the golden angle for the body with `first` set, the opposite direction for the
/// other. The key is the caller's, built from the pair (the same for both bodies).
#[inline]
pub fn coincident_direction(key: u64, first: bool) -> V2 {
    let angle = key as f32 * GOLDEN_ANGLE;
    let sign = if first { 1.0 } else { -1.0 };
    V2::new(sign * angle.cos(), sign * angle.sin())
}

/// The step a body takes out of the bodies it overlaps, summed one other body at a time
/// ([`Push::add`]) and read shortened to the body's radius ([`Push::total`]).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Push {
    /// The sum of the steps so far, m.
    pub sum: V2,
    /// The largest overlap so far, as a fraction of the two bodies' touching distance (0 with
    /// none).
    pub worst: f32,
}

impl Push {
    /// Adds the step out of one other body: `d` from its centre to this body's, `touch` the
    /// sum of the two radii, `share` the part of the overlap this body takes (one half when the
    /// other steps out the other half), `coincident` the direction when the centres coincide.
    /// Nothing when the bodies do not overlap. The step is `share * (touch + gap - |d|)` along
    /// `d`.
    #[inline]
    pub fn add(&mut self, rule: PushRule, d: V2, touch: f32, share: f32, coincident: impl FnOnce() -> V2) {
        let d2 = d.len_sq();
        if d2 >= touch * touch {
            return;
        }
        let dist = d2.sqrt();
        self.worst = self.worst.max((touch - dist) / touch);
        let dir = if dist > COINCIDENT {
            match rule.unit {
                Unit::Quotient => V2::new(d.x / dist, d.y / dist),
                Unit::Reciprocal => d * (1.0 / dist),
            }
        } else {
            coincident()
        };
        self.sum = self.sum + dir * (share * (touch + rule.gap - dist));
    }

    /// The push: the sum, shortened to `radius` when longer (no body is pushed further than
    /// its radius in one sweep).
    #[inline]
    pub fn total(&self, radius: f32) -> V2 {
        self.sum.clamp_len(radius)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RULES: [PushRule; 2] = [
        PushRule {
            gap: 0.0,
            unit: Unit::Quotient,
        },
        PushRule {
            gap: 1e-3,
            unit: Unit::Reciprocal,
        },
    ];

    #[test]
    fn two_bodies_step_apart_to_the_gap_and_no_further_than_a_radius() {
        for rule in RULES {
            // Radii 0.25 and 0.25, centres 0.3 m apart along x: 0.2 m of overlap, half each.
            let (a, b) = (V2::new(5.0, 5.0), V2::new(5.3, 5.0));
            let (mut pa, mut pb) = (Push::default(), Push::default());
            let key = || unreachable!("the centres do not coincide");
            pa.add(rule, a - b, 0.5, 0.5, key);
            pb.add(rule, b - a, 0.5, 0.5, key);
            let (qa, qb) = (a + pa.total(0.25), b + pb.total(0.25));
            assert!(((qb - qa).len() - (0.5 + rule.gap)).abs() < 1e-5, "{qa:?} {qb:?}");
            assert_eq!((qa.y, qb.y), (5.0, 5.0));
            assert!((pa.worst - 0.4).abs() < 1e-5, "{}", pa.worst);
            // Taking the whole overlap (the other body keeps its place).
            let mut whole = Push::default();
            whole.add(rule, a - b, 0.5, 1.0, key);
            assert!(((b - (a + whole.total(0.25))).len() - (0.5 + rule.gap)).abs() < 1e-5);
            // Apart: nothing.
            let mut none = Push::default();
            none.add(rule, V2::new(0.6, 0.0), 0.5, 0.5, key);
            assert_eq!(none, Push::default());
            // Squeezed between two bodies on one side: at most a radius.
            let mut deep = Push::default();
            deep.add(rule, V2::new(0.05, 0.0), 0.5, 1.0, key);
            deep.add(rule, V2::new(0.02, 0.01), 0.5, 1.0, key);
            assert!((deep.total(0.25).len() - 0.25).abs() < 1e-6);
        }
    }

    #[test]
    fn coincident_bodies_step_apart_in_opposite_unit_directions() {
        for key in [0u64, 1, 7919, 65_535, 1 << 33] {
            let (a, b) = (coincident_direction(key, true), coincident_direction(key, false));
            assert!((a.len() - 1.0).abs() < 1e-6 && a == -b, "{key}: {a:?} {b:?}");
            let mut p = Push::default();
            p.add(RULES[1], V2::ZERO, 0.5, 0.5, || a);
            assert!((p.total(1.0) - a * (0.5 * 0.501)).len() < 1e-6);
        }
        // Neighbouring keys point different ways.
        let (a, b) = (coincident_direction(3, true), coincident_direction(4, true));
        assert!(a.dot(b) < 0.9);
    }
}
