//! One call from a scene to what its walkers follow: the fields, then every group's potential
//! and gradient ("fields → goal masks → solve → gradient").
//!
//! [`plan`] is the static planning field of `crowdfield solve` (an empty crowd: terrain,
//! obstacles and discomfort only); [`plan_with_crowd`] lets a crowd's density shape the fields
//! (the editor's view of a running simulation). The command line's `solve` and `batch` and the
//! editor's background recompute all plan through here; writing the results to disk is
//! [`crate::export::bundle::write_solve_bundle`]'s job, which solves nothing.
//!
//! ```
//! use crowdfield::prelude::*;
//!
//! let scene = crowdfield::map::load(concat!(env!("CARGO_MANIFEST_DIR"), "/maps/corridor.json"))?;
//! let plan = plan(&scene, &PlanOptions::default())?;
//! let group = &plan.groups[0];
//! assert!(group.potential().iter().any(|phi| phi.is_finite()));
//! assert_eq!(group.gradient.gx.dim(), scene.grid.shape());
//! assert!(!plan.on_gpu(), "the default backend is the CPU");
//! # Ok::<(), crowdfield::Error>(())
//! ```

pub mod device;
mod planner;
pub mod regions;

pub use device::{
    AUTO_GPU_MIN_CELLS, auto_keeps_on_cpu, check_order, describe_cpu, solve_eikonal, solve_eikonal_speed,
};
pub use planner::{ContinuumStep, GpuReadBacks, Planner};

use crate::agents::Agents;
use crate::eikonal::{Order, Solution};
use crate::error::Result;
use crate::fields::Fields;
use crate::gpu::{Backend, GpuContext};
use crate::gradient::Gradient;
use crate::scene::Scene;
use ndarray::Array2;
use std::sync::Arc;

/// How [`plan`] solves: the order of the update and where the solve runs.
///
/// The default is first order on the CPU (what `crowdfield solve` does without options). See
/// the [module example](self).
#[derive(Clone, Default)]
pub struct PlanOptions {
    /// Order of the fast-marching update. The GPU solves first order only: `Gpu` with
    /// `Order::Second` is refused, `Auto` takes the CPU for it.
    pub order: Order,
    /// Where the Eikonal solves run ([`Backend`]; `Auto` says in [`Plan::solver`] why it kept
    /// to the CPU when it did).
    pub backend: Backend,
    /// A GPU context to reuse (pipelines and buffers are built once per context); with `None`,
    /// `Gpu` and `Auto` open one for this call.
    pub gpu: Option<Arc<GpuContext>>,
}

impl std::fmt::Debug for PlanOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PlanOptions")
            .field("order", &self.order)
            .field("backend", &self.backend)
            .field("gpu", &self.gpu.as_ref().map(|c| c.adapter()))
            .finish()
    }
}

/// One group's part of a [`Plan`]: its goal cells, potential and gradient.
#[derive(Clone, Debug)]
pub struct GroupPlan {
    /// The group's goal cells (the union of its goals): the sources of the potential.
    pub goal: Array2<bool>,
    /// The solve: the potential (seconds of walking to the nearest goal, `+inf` where none is
    /// reachable, never NaN), its unreachable count, the solver's name, passes and time.
    pub solution: Solution,
    /// The upwind gradient of the potential on the plan's cost, per metre.
    pub gradient: Gradient,
}

impl GroupPlan {
    /// The potential, seconds (rows = y, columns = x); see the [module example](self).
    pub fn potential(&self) -> &Array2<f64> {
        &self.solution.phi
    }
}

/// The fields of a scene and, per group (in the scene's group order), its potential and
/// gradient: what [`plan`] returns. See the [module example](self).
#[derive(Clone, Debug)]
pub struct Plan {
    /// Density, anisotropic speed and unit cost the potentials were solved on.
    pub fields: Fields,
    /// One entry per group of the scene, in order.
    pub groups: Vec<GroupPlan>,
    /// What ran, in words: `cpu: fast marching (first order)`, `gpu: block FIM on <adapter>`,
    /// or for [`Backend::Auto`] on the CPU the reason in parentheses.
    pub solver: String,
    /// The order of the update the CPU ran (the GPU's is always first).
    pub order: Order,
    /// Wall time of the fields, seconds.
    pub fields_seconds: f64,
    /// Wall time of the solves (every group), seconds.
    pub solve_seconds: f64,
}

impl Plan {
    /// Whether the potentials were solved on a GPU (the program says "GPU" or "CPU" from this).
    pub fn on_gpu(&self) -> bool {
        self.solver.starts_with("gpu")
    }
}

/// The static plan of `scene`: its fields for an empty crowd (terrain, obstacles and
/// discomfort only: every face walks at terrain speed), then one potential and gradient per
/// group. See the [module example](self).
///
/// # Errors
/// The scene's problems ([`Scene::check`]: masks of another shape than the grid, a goal
/// without a free cell, a grid without cells or with a cell size that is not positive and
/// finite). Then as [`solve_eikonal`]: with [`Backend::Gpu`],
/// [`crate::Error::Gpu`] when no adapter opens, and [`crate::Error::Invalid`] for second order
/// or costs beyond the GPU's range; the CPU backend does not fail.
pub fn plan(scene: &Scene, options: &PlanOptions) -> Result<Plan> {
    plan_with_crowd(scene, &Agents::default(), options)
}

/// [`plan`] with the density of `crowd` shaping the speed and cost fields.
///
/// ```
/// use crowdfield::prelude::*;
///
/// let scene = crowdfield::map::load(concat!(env!("CARGO_MANIFEST_DIR"), "/maps/bottleneck.json"))?;
/// let crowd = crowdfield::sim::spawn::spawn_agents(&scene, 7)?;
/// let busy = plan_with_crowd(&scene, &crowd, &PlanOptions::default())?;
/// let empty = plan(&scene, &PlanOptions::default())?;
/// assert!(busy.fields.density.rho.sum() > 0.0);
/// assert_eq!(empty.fields.density.rho.sum(), 0.0);
/// # Ok::<(), crowdfield::Error>(())
/// ```
///
/// # Errors
/// As [`plan`].
pub fn plan_with_crowd(scene: &Scene, crowd: &Agents, options: &PlanOptions) -> Result<Plan> {
    Planner::new(scene, options)?.plan(scene, crowd)
}
