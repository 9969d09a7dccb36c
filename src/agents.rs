//! Agents as structure-of-arrays: one `Vec` per quantity, index `i` is agent `i`.
//!
//! Positions are world metres (see [`crate::grid`] for the frame). The layout is what the GPU
//! buffers mirror, so keep the fields plain `f32`/`u32`.

use crate::error::{Error, Result};
use crate::scene::Scene;

/// All agents of a simulation. Every `Vec` has the same length.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Agents {
    /// Stable agent id (never reused within a run).
    pub id: Vec<u32>,
    /// Position x, m.
    pub x: Vec<f32>,
    /// Position y, m.
    pub y: Vec<f32>,
    /// Velocity x, m/s.
    pub vx: Vec<f32>,
    /// Velocity y, m/s.
    pub vy: Vec<f32>,
    /// Index of the agent's group in `Scene::groups`.
    pub group: Vec<u32>,
    /// Body radius, m.
    pub radius: Vec<f32>,
    /// Preferred (maximum) walking speed, m/s.
    pub max_speed: Vec<f32>,
    /// Simulated time, s, before which the agent stands still (its pre-movement time); 0 for
    /// agents that walk from the start.
    pub start_time: Vec<f32>,
}

impl Agents {
    /// Number of agents.
    pub fn len(&self) -> usize {
        self.x.len()
    }

    /// True when there are no agents.
    pub fn is_empty(&self) -> bool {
        self.x.is_empty()
    }

    /// Checks that every column has one entry per agent (as many as `x`).
    ///
    /// # Errors
    /// [`Error::Invalid`] naming the first column of another length, such as
    /// `<agents>: radius: 1 entries, expected 2 (one per agent)`.
    pub fn check_columns(&self) -> Result<()> {
        let n = self.len();
        let cols = [
            ("id", self.id.len()),
            ("y", self.y.len()),
            ("vx", self.vx.len()),
            ("vy", self.vy.len()),
            ("group", self.group.len()),
            ("radius", self.radius.len()),
            ("max_speed", self.max_speed.len()),
            ("start_time", self.start_time.len()),
        ];
        for (name, len) in cols {
            if len != n {
                return Err(Error::invalid(
                    "<agents>",
                    name,
                    format!("{len} entries, expected {n} (one per agent)"),
                ));
            }
        }
        Ok(())
    }

    /// Checks the agents against `scene`: [`Agents::check_columns`], every group index below
    /// the scene's number of groups, finite velocities, and every centre finite and inside the
    /// domain ([`Scene::position_problem`]) and, with `walls`, in a free cell.
    ///
    /// # Errors
    /// [`Error::Invalid`] naming the first bad agent's column, index and value, such as
    /// `<agents>: group[0]: 3: expected a group index below 1 (the scene's groups)`.
    pub fn check_on(&self, scene: &Scene, walls: bool) -> Result<()> {
        self.check_columns()?;
        let groups = scene.groups.len();
        for (i, &g) in self.group.iter().enumerate() {
            if g as usize >= groups {
                return Err(Error::invalid(
                    "<agents>",
                    format!("group[{i}]"),
                    format!("{g}: expected a group index below {groups} (the scene's groups)"),
                ));
            }
        }
        for i in 0..self.len() {
            if let Some(problem) = scene.position_problem(self.x[i], self.y[i], walls) {
                return Err(Error::invalid("<agents>", format!("x[{i}], y[{i}]"), problem));
            }
            let (vx, vy) = (self.vx[i], self.vy[i]);
            if !(vx.is_finite() && vy.is_finite()) {
                return Err(Error::invalid(
                    "<agents>",
                    format!("vx[{i}], vy[{i}]"),
                    format!("({vx:?}, {vy:?}): expected a finite velocity in m/s"),
                ));
            }
        }
        Ok(())
    }

    /// Appends one agent at rest.
    #[allow(clippy::too_many_arguments)]
    pub fn push(&mut self, id: u32, x: f32, y: f32, group: u32, radius: f32, max_speed: f32) {
        self.id.push(id);
        self.x.push(x);
        self.y.push(y);
        self.vx.push(0.0);
        self.vy.push(0.0);
        self.group.push(group);
        self.radius.push(radius);
        self.max_speed.push(max_speed);
        self.start_time.push(0.0);
    }

    /// Keeps the agents for which `keep(i)` is true, preserving order.
    pub fn retain(&mut self, mut keep: impl FnMut(usize) -> bool) {
        let flags: Vec<bool> = (0..self.len()).map(&mut keep).collect();
        fn filter<T: Copy>(v: &mut Vec<T>, flags: &[bool]) {
            let mut i = 0;
            v.retain(|_| {
                let k = flags[i];
                i += 1;
                k
            });
        }
        filter(&mut self.id, &flags);
        filter(&mut self.x, &flags);
        filter(&mut self.y, &flags);
        filter(&mut self.vx, &flags);
        filter(&mut self.vy, &flags);
        filter(&mut self.group, &flags);
        filter(&mut self.radius, &flags);
        filter(&mut self.max_speed, &flags);
        filter(&mut self.start_time, &flags);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retain_keeps_columns_aligned() {
        let mut a = Agents::default();
        for i in 0..5 {
            a.push(i, i as f32, 10.0 + i as f32, i % 2, 0.25, 1.34);
        }
        a.retain(|i| i % 2 == 0);
        assert_eq!(a.id, vec![0, 2, 4]);
        assert_eq!(a.x, vec![0.0, 2.0, 4.0]);
        assert_eq!(a.y, vec![10.0, 12.0, 14.0]);
        assert_eq!(a.group, vec![0, 0, 0]);
        assert_eq!(a.start_time, vec![0.0; 3]);
        assert_eq!(a.len(), 3);
    }
}
