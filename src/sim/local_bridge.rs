//! Connects the local layer ([`crate::local::LocalLayer`]: boids offsets, ORCA) to the
//! simulation's hook ([`super::LocalHook`]).
//!
//! The local layer computes new velocities from the preferred ones (and would move the agents
//! itself); the simulation keeps its own integration, walls and separation, so the bridge runs
//! the layer on a copy of the agents and hands back only the velocities.
//!
//! Groups without goals (a fish school: `"goals": []` with `boids`) have no potential and so no
//! preferred velocity; in the boids modes they flock instead ([`LocalLayer::flock`]: velocity
//! changed by the boids steering and wall probes, bounced off walls), so `crowdfield simulate
//! maps/fish_tank.json --local boids` swims. With `--local none` or `orca` they stand still.

use super::LocalHook;
use crate::agents::Agents;
use crate::local::{LocalBackend, LocalLayer, LocalMode};
use crate::scene::Scene;

/// The local layer as a simulation hook.
pub struct LocalBridge {
    layer: LocalLayer,
    scratch: Agents,
    /// A second copy for the flocking of goal-less groups.
    flock_scratch: Agents,
    preferred: Vec<[f32; 2]>,
    /// Agents whose ORCA program was infeasible, summed over the steps.
    pub infeasible: usize,
}

impl LocalBridge {
    /// A bridge running `mode` on `backend`.
    pub fn new(mode: LocalMode, backend: LocalBackend) -> crate::Result<Self> {
        Ok(Self {
            layer: crate::gpu::open_local_layer(mode, backend)?,
            scratch: Agents::default(),
            flock_scratch: Agents::default(),
            preferred: Vec::new(),
            infeasible: 0,
        })
    }

    /// The local layer (its mode and backend).
    pub fn layer(&self) -> &LocalLayer {
        &self.layer
    }

    /// Seeds the local layer's perturbation ([`LocalLayer::set_seed`]): `simulate --seed`.
    pub fn set_seed(&mut self, seed: u64) {
        self.layer.set_seed(seed);
    }
}

impl LocalHook for LocalBridge {
    fn adjust(&mut self, scene: &Scene, agents: &Agents, dt: f64, vx: &mut [f32], vy: &mut [f32]) {
        let goal_less: Vec<bool> = scene.groups.iter().map(|g| g.goals.is_empty()).collect();
        let flocking = matches!(self.layer.mode(), LocalMode::Boids | LocalMode::BoidsOrca)
            && agents.group.iter().any(|&g| goal_less[g as usize]);
        let walking = agents.group.iter().any(|&g| !goal_less[g as usize]);
        if flocking {
            self.flock_scratch.clone_from(agents);
            if self
                .layer
                .flock(scene, &mut self.flock_scratch, dt as f32)
                .is_ok()
            {
                for (i, &g) in agents.group.iter().enumerate() {
                    if goal_less[g as usize] {
                        vx[i] = self.flock_scratch.vx[i];
                        vy[i] = self.flock_scratch.vy[i];
                    }
                }
            }
            if !walking {
                return;
            }
        }
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
            for (i, &g) in agents.group.iter().enumerate() {
                if !(flocking && goal_less[g as usize]) {
                    vx[i] = self.scratch.vx[i];
                    vy[i] = self.scratch.vy[i];
                }
            }
        }
    }
}
