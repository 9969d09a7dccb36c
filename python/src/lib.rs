//! `crowdfield._native`: the compiled half of the `crowdfield` Python package, a thin binding
//! over the crowdfield library. The pure-Python `crowdfield/__init__.py` checks and converts the
//! arguments (dtypes, masked arrays, scikit-fmm's keywords) and calls these functions; each
//! solve and simulation step runs with the GIL released.

use crowdfield::eikonal::{self, SpeedGrid, levelset};
use crowdfield::gpu::Backend;
use crowdfield::local::{LocalBackend, LocalMode};
use crowdfield::params::{Model, SpeedLaw};
use crowdfield::run::driver::{RunDriver, RunObserver, local_layer_for};
use crowdfield::scene::Scene;
use crowdfield::sim::{SimConfig, Simulation, StepEvents};
use ndarray::{Array2, ArrayView2};
use numpy::{IntoPyArray, PyArray1, PyArray2, PyArrayMethods, PyReadonlyArray2, PyReadonlyArray3};
use pyo3::exceptions::{PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PySlice};
use std::path::PathBuf;
use std::sync::Mutex;

mod movers;
mod names;
mod routes;

use names::{choice, order_of, python_text, to_py};

/// The first cell of `a` whose value is NaN, as "(row r, column c)".
fn first_nan(a: ArrayView2<f64>) -> Option<String> {
    a.indexed_iter()
        .find(|(_, v)| v.is_nan())
        .map(|((r, c), _)| format!("(row {r}, column {c})"))
}

/// A march's result in scikit-fmm's convention: the values, and where some cells were not
/// reached (`+inf` from the solver) a mask of the infinite values, which are set to 0.
type SkfmmResult<'py> = (Bound<'py, PyArray2<f64>>, Option<Bound<'py, PyArray2<bool>>>);

/// Runs `solve` with the GIL released in a new numpy array it marches in (the grid's rows
/// between `levelset::BUFFER_MARGIN` others), and returns the grid's rows, a view of it, in
/// scikit-fmm's convention: the values are where the march left them, not copied.
fn skfmm_result<'py>(
    py: Python<'py>,
    (rows, cols): (usize, usize),
    solve: impl FnOnce(&mut [f64]) -> crowdfield::Result<usize> + Send,
) -> PyResult<SkfmmResult<'py>> {
    let margin = levelset::BUFFER_MARGIN;
    let buffer = PyArray2::<f64>::zeros(py, [rows + 2 * margin, cols], false);
    let unreached = {
        let mut buffer = buffer.readwrite();
        let buffer = buffer.as_slice_mut().expect("a new array is contiguous");
        py.detach(|| solve(buffer)).map_err(to_py)?
    };
    let grid = PySlice::new(py, margin as isize, (margin + rows) as isize, 1);
    let values = buffer.get_item(grid)?.cast_into::<PyArray2<f64>>()?;
    if unreached == 0 {
        return Ok((values, None));
    }
    let mask = PyArray2::<bool>::zeros(py, [rows, cols], false);
    {
        let mut values = values.readwrite();
        let mut mask = mask.readwrite();
        let (mut values, mut mask) = (values.as_array_mut(), mask.as_array_mut());
        py.detach(|| {
            ndarray::Zip::from(&mut values).and(&mut mask).for_each(|v, m| {
                if v.is_infinite() {
                    (*v, *m) = (0.0, true);
                }
            })
        });
    }
    Ok((values, Some(mask)))
}

/// Signed distance from the zero contour of `phi` (scikit-fmm's `distance`), and where some
/// cells are not reached, the mask of those cells (their values set to 0).
#[pyfunction]
#[pyo3(signature = (phi, mask, dx, order))]
fn levelset_distance<'py>(
    py: Python<'py>,
    phi: PyReadonlyArray2<'py, f64>,
    mask: Option<PyReadonlyArray2<'py, bool>>,
    dx: (f64, f64),
    order: u8,
) -> PyResult<SkfmmResult<'py>> {
    let order = order_of(order)?;
    let phi = phi.as_array();
    let mask = mask.as_ref().map(|m| m.as_array());
    skfmm_result(py, phi.dim(), |out| {
        levelset::distance_in(phi, mask, [dx.0, dx.1], order, out)
    })
}

/// Travel time from the zero contour of `phi` at `speed` (scikit-fmm's `travel_time`), and
/// where some cells are not reached, the mask of those cells (their values set to 0).
#[pyfunction]
#[pyo3(signature = (phi, speed, mask, dx, order))]
fn levelset_travel_time<'py>(
    py: Python<'py>,
    phi: PyReadonlyArray2<'py, f64>,
    speed: PyReadonlyArray2<'py, f64>,
    mask: Option<PyReadonlyArray2<'py, bool>>,
    dx: (f64, f64),
    order: u8,
) -> PyResult<SkfmmResult<'py>> {
    let order = order_of(order)?;
    let phi = phi.as_array();
    let speed = speed.as_array();
    let mask = mask.as_ref().map(|m| m.as_array());
    skfmm_result(py, phi.dim(), |out| {
        levelset::travel_time_in(phi, speed, mask, [dx.0, dx.1], order, out)
    })
}

/// The checks `crowdfield eikonal` makes on its cell size.
fn check_cell_size(cell_size: f64) -> PyResult<()> {
    if !(cell_size > 0.0 && cell_size.is_finite()) {
        return Err(PyValueError::new_err(format!(
            "cell_size: {cell_size} is not a positive finite length"
        )));
    }
    if cell_size > eikonal::MAX_CELL_SIZE {
        return Err(PyValueError::new_err(format!(
            "cell_size: {}: expected at most {:e} (the solver squares cell size times cost, which \
             would overflow)",
            crowdfield::error::num(cell_size),
            eikonal::MAX_CELL_SIZE
        )));
    }
    Ok(())
}

/// The goal cells of a numeric goal array (nonzero marks a source), as `crowdfield eikonal`
/// reads its `--goal`; `grid` names the array whose `(rows, cols)` the goal must have.
fn goal_cells(goal: ArrayView2<f64>, (rows, cols): (usize, usize), grid: &str) -> PyResult<Array2<bool>> {
    if goal.dim() != (rows, cols) {
        return Err(PyValueError::new_err(format!(
            "goal: shape ({}, {}) differs from the shape ({rows}, {cols}) of {grid}",
            goal.nrows(),
            goal.ncols()
        )));
    }
    if let Some(at) = first_nan(goal) {
        return Err(PyValueError::new_err(format!(
            "goal: value NaN at {at}; expected 0 or nonzero"
        )));
    }
    let goal = goal.mapv(|v| v != 0.0);
    if !goal.iter().any(|&g| g) {
        return Err(PyValueError::new_err("goal: no source cell (every value is 0)"));
    }
    Ok(goal)
}

/// `crowdfield eikonal` on arrays: phi with `|grad phi| = 1 / speed`, 0 on the goal cells,
/// `+inf` where unreachable; the same march, so the same bits.
#[pyfunction]
#[pyo3(signature = (speed, goal, cell_size, order))]
fn eikonal_speed<'py>(
    py: Python<'py>,
    speed: PyReadonlyArray2<'py, f64>,
    goal: PyReadonlyArray2<'py, f64>,
    cell_size: f64,
    order: u8,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    check_cell_size(cell_size)?;
    let order = order_of(order)?;
    let speed = speed.as_array();
    let (rows, cols) = speed.dim();
    let mut grid = SpeedGrid::new(rows, cols).ok_or_else(|| {
        PyValueError::new_err(format!(
            "speed: shape ({rows}, {cols}): expected a grid of at least one cell and, with two \
             cells of padding on every side, at most {} cells",
            SpeedGrid::MAX_CELLS
        ))
    })?;
    if let Some(((r, c), v)) = eikonal::first_unrepresentable_speed(speed) {
        return Err(PyValueError::new_err(format!(
            "speed: speed {} at (row {r}, column {c}): expected at most {:.6e} (2^126), the fastest \
             speed the solver represents (its cost 1/speed would underflow f32); scale the speeds down",
            crowdfield::error::num(v),
            eikonal::MAX_SPEED
        )));
    }
    if let Some(at) = first_nan(speed) {
        return Err(PyValueError::new_err(format!(
            "speed: NaN at {at}: expected a speed (0 or inf for a wall)"
        )));
    }
    let goal = goal_cells(goal.as_array(), (rows, cols), "the speeds")?;
    grid.speeds_mut().assign(&speed);
    let phi = py.detach(|| grid.solve_fmm(goal.view(), cell_size, order).phi().to_owned());
    Ok(phi.into_pyarray(py))
}

/// The anisotropic solve: `cost` of shape `(rows, cols, 4)` (cost per metre of leaving a cell
/// by +x, +y, -x, -y), sources where `goal` is nonzero.
#[pyfunction]
#[pyo3(signature = (cost, goal, cell_size, order))]
fn eikonal_cost<'py>(
    py: Python<'py>,
    cost: PyReadonlyArray3<'py, f32>,
    goal: PyReadonlyArray2<'py, f64>,
    cell_size: f64,
    order: u8,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    check_cell_size(cell_size)?;
    let order = order_of(order)?;
    let cost = cost.as_array();
    let (rows, cols, dirs) = cost.dim();
    if dirs != 4 || rows == 0 || cols == 0 || rows.saturating_mul(cols) >= SpeedGrid::MAX_CELLS {
        return Err(PyValueError::new_err(format!(
            "cost: shape ({rows}, {cols}, {dirs}): expected (rows, cols, 4) with at least one cell"
        )));
    }
    if let Some(((r, c, d), v)) = cost.indexed_iter().find(|(_, v)| v.is_nan()) {
        return Err(PyValueError::new_err(format!(
            "cost: {v} at (row {r}, column {c}, direction {d}): expected a cost per metre (+inf for \
             a face that cannot be crossed)"
        )));
    }
    let goal = goal_cells(goal.as_array(), (rows, cols), "the costs (rows, cols)")?;
    let solved = py.detach(|| eikonal::solve_fmm(cost, goal.view(), cell_size, order));
    Ok(solved.phi.into_pyarray(py))
}

/// A compiled map.
#[pyclass(module = "crowdfield._native", frozen)]
struct Map {
    scene: Scene,
    /// The map as written, for what the scene does not keep (why its model runs).
    file: crowdfield::map::MapFile,
    path: String,
}

#[pymethods]
impl Map {
    /// The map's name.
    #[getter]
    fn name(&self) -> &str {
        &self.scene.name
    }

    /// The path it was loaded from.
    #[getter]
    fn path(&self) -> &str {
        &self.path
    }

    /// `(rows, cols)` of the grid.
    #[getter]
    fn shape(&self) -> (usize, usize) {
        self.scene.grid.shape()
    }

    /// Edge of one cell, metres.
    #[getter]
    fn cell_size(&self) -> f64 {
        self.scene.grid.cell_size
    }

    /// The groups' names, in order.
    #[getter]
    fn group_names(&self) -> Vec<String> {
        self.scene.groups.iter().map(|g| g.name.clone()).collect()
    }

    /// The obstacle cells, bool `(rows, cols)`.
    #[getter]
    fn obstacle<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray2<bool>> {
        self.scene.obstacle.clone().into_pyarray(py)
    }

    /// The walkable area as WKT: the outline as drawn on a map with exact walls, else the open
    /// cells merged into polygons; the geometry the command writes into trajectories.sqlite
    /// (see `crowdfield.Map.walkable_area`).
    fn walkable_area_wkt(&self) -> String {
        crowdfield::export::jupedsim::scene_walkable_wkt(&self.scene)
    }

    /// The warnings the command prints about this map (`warning: MAP: ...`), without the
    /// `warning: ` prefix.
    fn warnings(&self) -> Vec<String> {
        crowdfield::map::warnings(&self.scene)
            .into_iter()
            .map(|w| format!("{}: {w}", self.path))
            .collect()
    }

    /// The static plan as a dict of arrays (see `crowdfield.Map.plan`).
    fn plan<'py>(&self, py: Python<'py>, order: u8, backend: &str) -> PyResult<Bound<'py, PyDict>> {
        let options = crowdfield::PlanOptions {
            order: order_of(order)?,
            backend: choice("backend", backend)?,
            gpu: None,
        };
        let scene = &self.scene;
        let plan = py
            .detach(|| crowdfield::plan(scene, &options))
            .map_err(|e| to_py(e.relabel(&scene.name, &self.path)))?;
        let out = PyDict::new(py);
        out.set_item("solver", python_text(&plan.solver))?;
        out.set_item("rho", plan.fields.density.rho.into_pyarray(py))?;
        out.set_item("speed", plan.fields.speed.into_pyarray(py))?;
        out.set_item("cost", plan.fields.cost.into_pyarray(py))?;
        let mut goals = Vec::new();
        let mut potentials = Vec::new();
        let mut gx = Vec::new();
        let mut gy = Vec::new();
        for g in plan.groups {
            goals.push(g.goal.into_pyarray(py));
            potentials.push(g.solution.phi.into_pyarray(py));
            gx.push(g.gradient.gx.into_pyarray(py));
            gy.push(g.gradient.gy.into_pyarray(py));
        }
        out.set_item("goals", goals)?;
        out.set_item("potentials", potentials)?;
        out.set_item("gx", gx)?;
        out.set_item("gy", gy)?;
        Ok(out)
    }

    /// A simulation of this map (see `crowdfield.Map.simulation`): `trajectory_every` records
    /// every so many steps (`"5"`) or seconds (`"0.5s"`) by the command's rule
    /// ([`crowdfield::run::output::trajectory_every_steps`]); `None` never.
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (seed, local, dt, max_time, replan_every, order, backend, local_backend,
                        trajectory_every, model, speed_law))]
    fn simulation(
        &self,
        py: Python<'_>,
        seed: u64,
        local: &str,
        dt: Option<f64>,
        max_time: f64,
        replan_every: usize,
        order: u8,
        backend: &str,
        local_backend: &str,
        trajectory_every: Option<&str>,
        model: Option<&str>,
        speed_law: Option<&str>,
    ) -> PyResult<SimulationHandle> {
        let mut scene = self.scene.clone();
        let asked_model = model.map(|m| choice::<Model>("model", m)).transpose()?;
        if let Some(m) = asked_model {
            scene.params = scene.params.clone().with_model(m);
        }
        // Why the model runs, as `simulate` says it, in the Python argument's name.
        let model_source = python_text(&crowdfield::sim::report::model_source(&self.file, asked_model));
        if let Some(law) = speed_law {
            scene.params.speed_law = choice::<SpeedLaw>("speed_law", law)?;
        }
        let asked = choice::<LocalMode>("local", local)?;
        let (local, local_warning) = local_layer_for(&scene, asked, &self.path);
        let local_backend = choice::<LocalBackend>("local_backend", local_backend)?;
        let config = SimConfig {
            dt,
            max_time,
            seed,
            replan_every,
            order: order_of(order)?,
            full_potentials: false,
        };
        let backend = choice::<Backend>("backend", backend)?;
        let name = scene.name.clone();
        let sim = py
            .detach(|| {
                Simulation::builder(scene)
                    .config(config)
                    .backend(backend)
                    .local(local)
                    .local_backend(local_backend)
                    .model_source(model_source)
                    .build()
            })
            .map_err(|e| to_py(e.relabel(&name, &self.path)))?;
        let every = match trajectory_every {
            Some(every) => {
                crowdfield::run::output::trajectory_every_steps(every, sim.dt(), max_time).map_err(to_py)?
            }
            None => 0,
        };
        let mut driver = RunDriver::new(sim, (every != 0).then_some(every));
        if let Some(w) = local_warning {
            driver.warn(w);
        }
        let mut rows = TrajectoryRows(Vec::new());
        driver.start(&mut rows).map_err(to_py)?;
        Ok(SimulationHandle {
            inner: Mutex::new(Recording { driver, rows }),
        })
    }
}

/// One trajectory row: time, id, group, x, y, vx, vy, frame.
type TrajectoryRow = (f64, u32, u32, f32, f32, f32, f32, u64);

/// The trajectory rows recorded so far: at each sample of the [`RunDriver`], one row per
/// walking agent, as `trajectories.csv` has them, with the sample's number as the frame.
struct TrajectoryRows(Vec<TrajectoryRow>);

impl RunObserver for TrajectoryRows {
    fn sample(&mut self, sim: &Simulation, index: u64) -> crowdfield::Result<()> {
        let a = sim.agents();
        let t = sim.time();
        for i in 0..a.len() {
            self.0
                .push((t, a.id[i], a.group[i], a.x[i], a.y[i], a.vx[i], a.vy[i], index));
        }
        Ok(())
    }
}

/// A run and the trajectory rows recorded so far.
struct Recording {
    driver: RunDriver,
    rows: TrajectoryRows,
}

impl Recording {
    /// One step, recording as the command does; once the run is finished, nothing (no event).
    fn step(&mut self) -> crowdfield::Result<StepEvents> {
        self.driver.step(&mut self.rows)
    }

    /// The simulation.
    fn sim(&self) -> &Simulation {
        self.driver.simulation()
    }
}

/// A running simulation (see `crowdfield.Simulation`).
#[pyclass(module = "crowdfield._native", name = "Simulation", frozen)]
struct SimulationHandle {
    inner: Mutex<Recording>,
}

impl SimulationHandle {
    fn lock(&self) -> std::sync::MutexGuard<'_, Recording> {
        self.inner.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// `(n, 2)` float32 array of two coordinate slices.
fn pairs<'py>(py: Python<'py>, (x, y): (&[f32], &[f32])) -> Bound<'py, PyArray2<f32>> {
    Array2::from_shape_fn((x.len(), 2), |(i, k)| if k == 0 { x[i] } else { y[i] }).into_pyarray(py)
}

/// A step's events as Python takes them: `(time, arrivals as (handle, group, exit, time),
/// exits as (time, name, open), handles that came in, walkers waiting to come in, stages
/// passed as (handle, group, stage, time, waited), handles blocked by a moving obstacle,
/// walkers the moving obstacles pushed)`.
type PyStepEvents = (
    f64,
    Vec<(u32, u32, usize, f64)>,
    Vec<(f64, String, bool)>,
    Vec<u32>,
    usize,
    Vec<routes::PyStagePassed>,
    Vec<u32>,
    usize,
);

/// A step's events in the tuple Python takes.
fn step_events(e: StepEvents) -> PyStepEvents {
    (
        e.time,
        e.arrivals
            .iter()
            .map(|a| (a.id, a.group, a.exit, a.time))
            .collect(),
        e.exits.into_iter().map(|c| (c.time, c.name, c.open)).collect(),
        e.entered,
        e.waiting_to_enter,
        e.stages.iter().map(routes::stage_passed).collect(),
        e.blocked,
        e.pushed,
    )
}

/// The error for a handle that is not a walker on the map.
fn no_walker(handle: u32) -> PyErr {
    pyo3::exceptions::PyKeyError::new_err(format!(
        "handle {handle}: not a walker on the map (it left, was removed, or was never given)"
    ))
}

#[pymethods]
impl SimulationHandle {
    /// Advances one step; returns its events (see [`step_events`]). Once the run is finished,
    /// does nothing and returns no event.
    fn step(&self, py: Python<'_>) -> PyResult<PyStepEvents> {
        py.detach(|| self.lock().step().map(step_events)).map_err(to_py)
    }

    /// Adds a walker; returns its handle.
    fn add_walker(&self, x: f32, y: f32, group: usize, speed: f32, radius: f32) -> PyResult<u32> {
        let mut rec = self.lock();
        rec.driver
            .simulation_mut()
            .add_walker(x, y, group, speed, radius)
            .map_err(to_py)
    }

    /// Takes the walker `handle` off the map.
    fn remove_walker(&self, handle: u32) -> PyResult<()> {
        let mut rec = self.lock();
        let sim = rec.driver.simulation_mut();
        if sim.index_of(handle).is_none() {
            return Err(no_walker(handle));
        }
        sim.remove_walker(handle).map_err(to_py)
    }

    /// Takes the walkers `handles` off the map in one pass; all or none.
    fn remove_walkers(&self, handles: Vec<u32>) -> PyResult<usize> {
        let mut rec = self.lock();
        let sim = rec.driver.simulation_mut();
        if let Some(&h) = handles.iter().find(|&&h| sim.index_of(h).is_none()) {
            return Err(no_walker(h));
        }
        sim.remove_walkers(&handles).map_err(to_py)
    }

    /// The walker's position, `(x, y)` in metres.
    fn position_of(&self, handle: u32) -> PyResult<(f32, f32)> {
        self.lock()
            .sim()
            .position_of(handle)
            .ok_or_else(|| no_walker(handle))
    }

    /// The walker's velocity in the last step, `(vx, vy)` in m/s.
    fn velocity_of(&self, handle: u32) -> PyResult<(f32, f32)> {
        self.lock()
            .sim()
            .velocity_of(handle)
            .ok_or_else(|| no_walker(handle))
    }

    /// Opens or closes every goal named `name`; returns how many bear the name.
    fn set_exit_open(&self, name: &str, open: bool) -> PyResult<usize> {
        self.lock()
            .driver
            .simulation_mut()
            .set_exit_open(name, open)
            .map_err(to_py)
    }

    /// Whether goal `goal` of group `group` is open.
    fn exit_open(&self, group: usize, goal: usize) -> bool {
        self.lock().sim().exit_open(group, goal)
    }

    /// Every exit change so far as `(time, name, open)`.
    fn exit_changes(&self) -> Vec<(f64, String, bool)> {
        self.lock()
            .sim()
            .exit_changes()
            .iter()
            .map(|c| (c.time, c.name.clone(), c.open))
            .collect()
    }

    /// The scene's group names, in index order.
    #[getter]
    fn group_names(&self) -> Vec<String> {
        self.lock()
            .sim()
            .scene()
            .groups
            .iter()
            .map(|g| g.name.clone())
            .collect()
    }

    /// The handle of each walker on the map, uint32, in the order of `positions`.
    #[getter]
    fn handles<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<u32>> {
        self.lock().sim().handles().to_vec().into_pyarray(py)
    }

    /// Steps until the run is finished or its time reaches `until` (None: to the end); returns
    /// the number of steps taken.
    #[pyo3(signature = (until=None))]
    fn run(&self, py: Python<'_>, until: Option<f64>) -> PyResult<usize> {
        if until.is_some_and(f64::is_nan) {
            return Err(PyValueError::new_err(
                "until: NaN: expected a time in seconds or None",
            ));
        }
        py.detach(|| {
            let mut rec = self.lock();
            let mut steps = 0;
            while !rec.sim().finished() && until.is_none_or(|t| rec.sim().time() < t) {
                rec.step()?;
                steps += 1;
            }
            Ok(steps)
        })
        .map_err(to_py)
    }

    /// The warnings that arose since the last call (at the build, at the end of the run), each
    /// once, in the command's words.
    fn take_warnings(&self) -> Vec<String> {
        let warnings = self.lock().driver.take_warnings();
        warnings.iter().map(|w| python_text(w)).collect()
    }

    /// Steps between trajectory recordings (0: none).
    #[getter]
    fn trajectory_every(&self) -> usize {
        self.lock().driver.sample_every()
    }

    /// Whether every agent has arrived or the time limit is reached.
    #[getter]
    fn finished(&self) -> bool {
        self.lock().sim().finished()
    }

    /// Simulated time, seconds.
    #[getter]
    fn time(&self) -> f64 {
        self.lock().sim().time()
    }

    /// Steps taken.
    #[getter]
    fn steps(&self) -> usize {
        self.lock().sim().steps()
    }

    /// The time step, seconds.
    #[getter]
    fn dt(&self) -> f64 {
        self.lock().sim().dt()
    }

    /// Positions of the walking agents, float32 `(n, 2)`: x, y in metres.
    #[getter]
    fn positions<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray2<f32>> {
        pairs(py, self.lock().sim().positions())
    }

    /// Velocities of the walking agents, float32 `(n, 2)`, m/s.
    #[getter]
    fn velocities<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray2<f32>> {
        pairs(py, self.lock().sim().velocities())
    }

    /// Group index of each walking agent, uint32.
    #[getter]
    fn groups<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<u32>> {
        self.lock().sim().groups().to_vec().into_pyarray(py)
    }

    /// Id of each walking agent, uint32.
    #[getter]
    fn ids<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<u32>> {
        self.lock().sim().ids().to_vec().into_pyarray(py)
    }

    /// Arrivals so far as `(id, group, exit, time)` tuples.
    fn arrivals(&self) -> Vec<(u32, u32, usize, f64)> {
        self.lock()
            .sim()
            .arrivals()
            .iter()
            .map(|a| (a.id, a.group, a.exit, a.time))
            .collect()
    }

    /// The report as JSON text, the content of `report.json`.
    fn report_json(&self) -> PyResult<String> {
        serde_json::to_string(&self.lock().sim().report()).map_err(|e| PyRuntimeError::new_err(e.to_string()))
    }

    /// The recorded trajectory rows as `(t, id, group, x, y, vx, vy, frame)` columns.
    #[allow(clippy::type_complexity)]
    fn trajectory_columns<'py>(
        &self,
        py: Python<'py>,
    ) -> (
        Bound<'py, PyArray1<f64>>,
        Bound<'py, PyArray1<u32>>,
        Bound<'py, PyArray1<u32>>,
        Bound<'py, PyArray1<f32>>,
        Bound<'py, PyArray1<f32>>,
        Bound<'py, PyArray1<f32>>,
        Bound<'py, PyArray1<f32>>,
        Bound<'py, PyArray1<u64>>,
    ) {
        let rec = self.lock();
        let col =
            |f: fn(&TrajectoryRow) -> f32| rec.rows.0.iter().map(f).collect::<Vec<f32>>().into_pyarray(py);
        (
            rec.rows
                .0
                .iter()
                .map(|r| r.0)
                .collect::<Vec<_>>()
                .into_pyarray(py),
            rec.rows
                .0
                .iter()
                .map(|r| r.1)
                .collect::<Vec<_>>()
                .into_pyarray(py),
            rec.rows
                .0
                .iter()
                .map(|r| r.2)
                .collect::<Vec<_>>()
                .into_pyarray(py),
            col(|r| r.3),
            col(|r| r.4),
            col(|r| r.5),
            col(|r| r.6),
            rec.rows
                .0
                .iter()
                .map(|r| r.7)
                .collect::<Vec<_>>()
                .into_pyarray(py),
        )
    }
}

/// Loads, validates and compiles the map at `path`.
#[pyfunction]
#[pyo3(signature = (path, allow_outside_rasters=false))]
fn load_map(py: Python<'_>, path: PathBuf, allow_outside_rasters: bool) -> PyResult<Map> {
    let options = crowdfield::map::LoadOptions {
        allow_outside_rasters,
    };
    let (scene, file) = py
        .detach(|| {
            let scene = crowdfield::sim::load_map(&path, &options)?;
            Ok((scene, crowdfield::map::MapFile::from_path(&path)?))
        })
        .map_err(to_py)?;
    Ok(Map {
        scene,
        file,
        path: path.display().to_string(),
    })
}

/// Imports floor plans (`paths`: DXF, WKT, GeoJSON, images) or a WKT text (`wkt`) as a map
/// ([`crowdfield::import`]); `counts` gives the distributions' walkers in order (`None` keeps
/// the plan's). Returns the map's JSON and the summary's JSON.
#[pyfunction]
#[pyo3(signature = (paths, wkt=None, counts=None, density=None, cell_size=None, layers=None, pixel_size=None, name=None))]
#[allow(clippy::too_many_arguments)]
fn import_plan(
    py: Python<'_>,
    paths: Vec<PathBuf>,
    wkt: Option<String>,
    counts: Option<Vec<Option<usize>>>,
    density: Option<f64>,
    cell_size: Option<f64>,
    layers: Option<String>,
    pixel_size: Option<f64>,
    name: Option<String>,
) -> PyResult<(String, String)> {
    use crowdfield::import::{ImportOptions, Plan, from_dxf::LayerNames, from_wkt, import, read_plan};
    // The library's names of the options, as this function's arguments.
    let named = |e: crowdfield::Error| {
        let text = e
            .to_string()
            .replace("ImportOptions.density", "density")
            .replace("ImportOptions.cell_size", "cell_size")
            .replace("LayerNames", "layers");
        match e {
            crowdfield::Error::Io { .. } => PyOSError::new_err(text),
            _ => PyValueError::new_err(text),
        }
    };
    py.detach(|| {
        let layers = match &layers {
            Some(spec) => LayerNames::parse(spec).map_err(named)?,
            None => LayerNames::default(),
        };
        let mut plan: Option<Plan> = match &wkt {
            Some(text) => Some(from_wkt::parse(text, "<wkt>").map_err(named)?),
            None => None,
        };
        for path in &paths {
            let next = read_plan(path, &layers, pixel_size, None).map_err(named)?;
            match &mut plan {
                Some(p) => p.merge(next),
                None => plan = Some(next),
            }
        }
        let mut plan = plan.ok_or_else(|| PyValueError::new_err("no plan: give a path or a WKT text"))?;
        if let Some(counts) = counts {
            if counts.len() != plan.distributions.len() {
                return Err(PyValueError::new_err(format!(
                    "counts: {} numbers for {} distributions: give one per distribution (None keeps the plan's)",
                    counts.len(),
                    plan.distributions.len()
                )));
            }
            for (d, n) in plan.distributions.iter_mut().zip(counts) {
                d.count = n.or(d.count);
            }
        }
        let options = ImportOptions {
            cell_size,
            density,
            name,
        };
        let imported = import(&plan, &options).map_err(named)?;
        let summary = serde_json::to_string(&imported.summary).map_err(|e| PyValueError::new_err(e.to_string()))?;
        if imported.walls.is_some() {
            return Err(PyValueError::new_err(
                "an image plan's walls are a raster file: import it with `crowdfield import` and load the map it writes",
            ));
        }
        Ok((imported.map.to_json(), summary))
    })
}

/// Runs a study of the map at `path` into `out` (as `crowdfield study`) and returns its
/// `study.json` as text.
#[pyfunction]
#[pyo3(signature = (path, out, seeds, first_seed, discount_exits, scenarios, aset, max_time, until_converged, max_seeds, allow_outside_rasters=false))]
#[allow(clippy::too_many_arguments)]
fn study(
    py: Python<'_>,
    path: PathBuf,
    out: PathBuf,
    seeds: usize,
    first_seed: u64,
    discount_exits: bool,
    scenarios: Vec<PathBuf>,
    aset: Option<f64>,
    max_time: f64,
    until_converged: bool,
    max_seeds: usize,
    allow_outside_rasters: bool,
) -> PyResult<String> {
    use crowdfield::run::study as st;
    let options = st::StudyOptions {
        seeds,
        first_seed,
        max_time,
        until_converged,
        max_seeds,
        shard: None,
    };
    py.detach(|| {
        options.check()?;
        let load = crowdfield::map::LoadOptions {
            allow_outside_rasters,
        };
        let scenarios = st::load_scenarios(&path, &load, discount_exits, &scenarios, aset)?;
        let study = st::run_study(&path, &scenarios, &options, &out, &|_, _| {})?
            .expect("a study without a shard writes its summary");
        serde_json::to_string(&study)
            .map_err(|e| crowdfield::Error::invalid("study.json", "(root)", e.to_string()))
    })
    .map_err(to_py)
}

/// The compiled half of the `crowdfield` package; use `crowdfield` itself.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(levelset_distance, m)?)?;
    m.add_function(wrap_pyfunction!(levelset_travel_time, m)?)?;
    m.add_function(wrap_pyfunction!(eikonal_speed, m)?)?;
    m.add_function(wrap_pyfunction!(eikonal_cost, m)?)?;
    m.add_function(wrap_pyfunction!(load_map, m)?)?;
    m.add_function(wrap_pyfunction!(import_plan, m)?)?;
    m.add_function(wrap_pyfunction!(study, m)?)?;
    m.add_class::<Map>()?;
    m.add_class::<SimulationHandle>()?;
    routes::register(m)?;
    movers::register(m)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
