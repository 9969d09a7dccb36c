//! Connects the local layer ([`crate::local::LocalLayer`]: boids offsets, ORCA) to the
//! simulation's hook ([`super::LocalLayer`]).
//!
//! The local layer computes new velocities from the preferred ones (and would move the agents
//! itself); the simulation keeps its own integration, walls and separation, so the bridge runs
//! the layer on a copy of the agents and hands back only the velocities.

use super::LocalLayer as SimHook;
use crate::agents::Agents;
use crate::local::{LocalBackend, LocalLayer, LocalMode};
use crate::scene::Scene;

/// The local layer as a simulation hook.
pub struct LocalBridge {
    layer: LocalLayer,
    scratch: Agents,
    preferred: Vec<[f32; 2]>,
    /// Agents whose ORCA program was infeasible, summed over the steps.
    pub infeasible: usize,
}

impl LocalBridge {
    /// A bridge running `mode` on `backend`.
    pub fn new(mode: LocalMode, backend: LocalBackend) -> crate::Result<Self> {
        Ok(Self {
            layer: LocalLayer::new(mode, backend)?,
            scratch: Agents::default(),
            preferred: Vec::new(),
            infeasible: 0,
        })
    }
}

impl SimHook for LocalBridge {
    fn adjust(&mut self, scene: &Scene, agents: &Agents, dt: f64, vx: &mut [f32], vy: &mut [f32]) {
        self.scratch.clone_from(agents);
        self.preferred.clear();
        self.preferred
            .extend(vx.iter().zip(vy.iter()).map(|(&x, &y)| [x, y]));
        // The inputs are consistent by construction (same agents, one preferred velocity each,
        // dt > 0 checked by the simulation); on an error the preferred velocities stand.
        if let Ok(stats) = self
            .layer
            .step(scene, &mut self.scratch, &self.preferred, dt as f32)
        {
            self.infeasible += stats.infeasible;
            vx.copy_from_slice(&self.scratch.vx);
            vy.copy_from_slice(&self.scratch.vy);
        }
    }
}
