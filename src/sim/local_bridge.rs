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
//!
//! A failing layer is never ignored: when a step of the layer on its device (the GPU) fails,
//! the bridge records why ([`LocalBridge::fallback`], which the report and `simulate` give) and
//! runs that step and the rest of the run on the CPU layer, which computes the same velocities
//! (the GPU passes' twins); should the CPU layer fail too, the walkers keep their preferred
//! velocities for that step and the failure is recorded the same way.

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
    /// Why the layer's device failed and the CPU layer took over, when it did.
    fallback: Option<String>,
    /// Steps adjusted so far (for the step a failure names).
    steps: u64,
}

impl LocalBridge {
    /// A bridge running `mode` on `backend`.
    pub fn new(mode: LocalMode, backend: LocalBackend) -> crate::Result<Self> {
        Ok(Self::with_layer(crate::gpu::open_local_layer(mode, backend)?))
    }

    /// A bridge running `layer` as it is.
    fn with_layer(layer: LocalLayer) -> Self {
        Self {
            layer,
            scratch: Agents::default(),
            flock_scratch: Agents::default(),
            preferred: Vec::new(),
            infeasible: 0,
            fallback: None,
            steps: 0,
        }
    }

    /// Records the failure `e` of the layer and, when it ran on a device, puts the CPU layer
    /// (same mode and seed) in its place. Returns whether the step is worth running again (on
    /// the CPU layer).
    fn fall_back(&mut self, e: &crate::Error) -> bool {
        let step = self.steps;
        if self.layer.backend() != LocalBackend::Gpu {
            self.fallback.get_or_insert_with(|| {
                format!("the local layer failed at step {step} ({e}); walkers kept their preferred velocities that step")
            });
            return false;
        }
        self.fallback.get_or_insert_with(|| {
            format!(
                "the local layer on {} failed at step {step} ({e}); the run went on with the CPU layer",
                self.layer.backend_description()
            )
        });
        match LocalLayer::new(self.layer.mode(), LocalBackend::CpuMulti) {
            Ok(mut cpu) => {
                cpu.set_seed(self.layer.seed());
                self.layer = cpu;
                true
            }
            Err(_) => false,
        }
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
    fn fallback(&self) -> Option<String> {
        self.fallback.clone()
    }

    fn adjust(&mut self, scene: &Scene, agents: &Agents, dt: f64, vx: &mut [f32], vy: &mut [f32]) {
        self.steps += 1;
        let goal_less: Vec<bool> = scene.groups.iter().map(|g| g.goals.is_empty()).collect();
        let flocking = matches!(self.layer.mode(), LocalMode::Boids | LocalMode::BoidsOrca)
            && agents.group.iter().any(|&g| goal_less[g as usize]);
        let walking = agents.group.iter().any(|&g| !goal_less[g as usize]);
        if flocking {
            self.flock_scratch.clone_from(agents);
            let mut flocked = self.layer.flock(scene, &mut self.flock_scratch, dt as f32);
            if let Err(e) = &flocked
                && self.fall_back(e)
            {
                self.flock_scratch.clone_from(agents);
                flocked = self.layer.flock(scene, &mut self.flock_scratch, dt as f32);
                if let Err(e) = &flocked {
                    self.fall_back(e);
                }
            }
            if flocked.is_ok() {
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
        // dt > 0 checked by the simulation): an error is the device's, and the CPU layer runs
        // the step again.
        let mut stepped = self
            .layer
            .step(scene, &mut self.scratch, &self.preferred, dt as f32);
        if let Err(e) = &stepped
            && self.fall_back(e)
        {
            self.scratch.clone_from(agents);
            stepped = self
                .layer
                .step(scene, &mut self.scratch, &self.preferred, dt as f32);
            if let Err(e) = &stepped {
                self.fall_back(e);
            }
        }
        if let Ok(stats) = stepped {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::local::{DeviceStep, LocalDevice, LocalStats};
    use crate::neighbors::NeighborGrid;
    use crate::sim::Simulation;

    /// A device that fails every step, as a lost GPU does.
    #[derive(Debug)]
    struct LostDevice;

    impl LocalDevice for LostDevice {
        fn step(
            &mut self,
            _: &mut Agents,
            _: &mut NeighborGrid,
            _: &DeviceStep<'_>,
        ) -> crate::Result<LocalStats> {
            Err(crate::Error::Gpu("device lost".into()))
        }
        fn description(&self) -> String {
            "gpu on a lost device".into()
        }
    }

    fn crossing() -> Scene {
        crate::map::load(std::path::Path::new("maps/crossing.json")).unwrap()
    }

    #[test]
    fn a_failing_device_hands_the_step_to_the_cpu_layer_and_says_so() {
        let scene = crossing();
        let agents = crate::sim::spawn::spawn_agents(&scene, 0).unwrap();
        let n = agents.len();
        let preferred: Vec<f32> = (0..n).map(|i| (i % 7) as f32 * 0.2 - 0.6).collect();
        let run = |bridge: &mut LocalBridge| {
            let (mut vx, mut vy) = (
                preferred.clone(),
                preferred.iter().map(|v| -v).collect::<Vec<_>>(),
            );
            bridge.adjust(&scene, &agents, 0.1, &mut vx, &mut vy);
            (vx, vy)
        };
        let mut lost =
            LocalBridge::with_layer(LocalLayer::with_device(LocalMode::Orca, Box::new(LostDevice)));
        let mut cpu = LocalBridge::new(LocalMode::Orca, LocalBackend::CpuMulti).unwrap();
        let (from_lost, from_cpu) = (run(&mut lost), run(&mut cpu));
        assert_eq!(from_lost, from_cpu, "the CPU layer's velocities");
        assert_ne!(from_cpu.0, preferred, "ORCA changed some velocity");
        let why = lost.fallback().expect("the failure is recorded");
        assert!(
            why.contains("gpu on a lost device") && why.contains("device lost") && why.contains("step 1"),
            "{why}"
        );
        assert_eq!(cpu.fallback(), None);
        assert_eq!(lost.layer().backend(), LocalBackend::CpuMulti);
    }

    #[test]
    fn the_report_gives_the_local_layers_fallback() {
        let lost = LocalBridge::with_layer(LocalLayer::with_device(LocalMode::Orca, Box::new(LostDevice)));
        let mut sim = Simulation::builder(crossing())
            .local_hook(Box::new(lost))
            .max_time(0.5)
            .build()
            .unwrap();
        while !sim.finished() {
            sim.step();
        }
        assert!(sim.local_fallback().is_some());
        let warnings = sim.report().warnings;
        assert!(
            warnings
                .iter()
                .any(|w| w.contains("the run went on with the CPU layer")),
            "{warnings:?}"
        );
    }
}
