//! The 2-D `f32` vector of agents' positions and velocities ([`V2`]), shared by the wall and
//! overlap handling ([`crate::collision`]) and the local layer ([`crate::local`]).

use std::ops::{Add, Mul, Neg, Sub};

/// A 2-D vector of `f32` (velocities in m/s, positions in m).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct V2 {
    /// x component.
    pub x: f32,
    /// y component.
    pub y: f32,
}

impl V2 {
    /// The zero vector.
    pub const ZERO: V2 = V2 { x: 0.0, y: 0.0 };

    /// A vector from its components.
    #[inline]
    pub const fn new(x: f32, y: f32) -> Self {
        Self { x, y }
    }

    /// Dot product.
    #[inline]
    pub fn dot(self, o: V2) -> f32 {
        self.x * o.x + self.y * o.y
    }

    /// 2-D cross product (determinant of the matrix with columns `self`, `o`).
    #[inline]
    pub fn det(self, o: V2) -> f32 {
        self.x * o.y - self.y * o.x
    }

    /// Squared length.
    #[inline]
    pub fn len_sq(self) -> f32 {
        self.dot(self)
    }

    /// Length.
    #[inline]
    pub fn len(self) -> f32 {
        self.len_sq().sqrt()
    }

    /// Unit vector in the same direction, or zero for a zero (or non-finite-length) vector.
    #[inline]
    pub fn normalize_or_zero(self) -> V2 {
        let l = self.len();
        if l > 0.0 && l.is_finite() {
            self * (1.0 / l)
        } else {
            V2::ZERO
        }
    }

    /// [`V2::normalize_or_zero`] without a branch: the quotient is always computed and the
    /// zero vector selected when it does not apply; the same bits.
    #[inline(always)]
    pub fn normalize_or_zero_select(self) -> V2 {
        let l = self.len();
        let unit = self * (1.0 / l);
        if (l > 0.0) & l.is_finite() { unit } else { V2::ZERO }
    }

    /// [`V2::clamp_len`] without a branch (both results computed, one selected); the same
    /// bits.
    #[inline(always)]
    pub fn clamp_len_select(self, max: f32) -> V2 {
        let l2 = self.len_sq();
        let short = self * (max / l2.sqrt());
        if l2 > max * max { short } else { self }
    }

    /// The vector shortened to at most `max` long (unchanged when shorter).
    #[inline]
    pub fn clamp_len(self, max: f32) -> V2 {
        let l2 = self.len_sq();
        if l2 > max * max {
            self * (max / l2.sqrt())
        } else {
            self
        }
    }

    /// The vector turned a quarter turn counter-clockwise, `(-y, x)`.
    #[inline]
    pub fn perp(self) -> V2 {
        V2::new(-self.y, self.x)
    }
}

impl Add for V2 {
    type Output = V2;
    #[inline]
    fn add(self, o: V2) -> V2 {
        V2::new(self.x + o.x, self.y + o.y)
    }
}

impl Sub for V2 {
    type Output = V2;
    #[inline]
    fn sub(self, o: V2) -> V2 {
        V2::new(self.x - o.x, self.y - o.y)
    }
}

impl Mul<f32> for V2 {
    type Output = V2;
    #[inline]
    fn mul(self, s: f32) -> V2 {
        V2::new(self.x * s, self.y * s)
    }
}

impl Neg for V2 {
    type Output = V2;
    #[inline]
    fn neg(self) -> V2 {
        V2::new(-self.x, -self.y)
    }
}
