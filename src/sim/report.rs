//! The evacuation report: per group and in total, evacuation time, arrival curve, flow through
//! each exit, peak density, speeds, and the agents left at the time limit with the reason.
//!
//! The report holds no wall-clock figure, so the same scene, options and seed give the same
//! `report.json` byte for byte (timings go to `timings.json`, see [`crate::run::output`]).

use super::{STUCK_TIME, Simulation};
use crate::names::Named as _;
use crate::params::{Params, SpeedLaw};
use serde::{Deserialize, Serialize};

/// The report of one run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// Map name.
    pub map: String,
    /// Spawn seed.
    pub seed: u64,
    /// Time step, seconds.
    pub dt: f64,
    /// Time limit, seconds.
    pub max_time: f64,
    /// Potentials were recomputed every this many steps.
    pub replan_every: usize,
    /// The model that moved the walkers.
    #[serde(default)]
    pub model: crate::params::Model,
    /// Speed–density law used.
    pub speed_law: SpeedLaw,
    /// The model's density window, m² (`params.density_window`; 0: the per-cell splat).
    #[serde(default)]
    pub density_window: f64,
    /// Whether each face read at least the density of its own cell (`params.density_at_walker`).
    #[serde(default)]
    pub density_at_walker: bool,
    /// What the bodies met: the walls as drawn (`exact`, a map's `"walls": "exact"` walked by
    /// the pedestrian model) or the obstacle cells' edges (`cells`).
    #[serde(default)]
    pub walls: crate::map::Walls,
    /// Steps run.
    pub steps: usize,
    /// Simulated time at the end of the run, seconds; never more than `max_time` (runs take
    /// whole steps of `dt`).
    pub end_time: f64,
    /// True when every agent arrived before the time limit ([`evacuation_complete`]); false
    /// when a group without goals (a flock, which never leaves) has agents on the map.
    pub complete: bool,
    /// Every group together.
    pub total: GroupReport,
    /// One entry per group, in map order.
    pub groups: Vec<GroupReport>,
    /// Local-layer quality figures: collisions and jams.
    pub quality: Quality,
    /// Fruin levels of service (walkway, see [`crate::sim::levels`]) over the run, counting the
    /// walkers who have started (people still in their pre-movement time are not counted): per
    /// level A to F, the area whose worst level it is and the longest time one place spent at it.
    #[serde(default)]
    pub level_of_service: Vec<crate::sim::levels::LevelSummary>,
    /// The area the levels of service count persons over, m² (the smallest square of whole
    /// cells of at least [`crate::sim::levels::LOS_AREA_M2`], 2 m x 2 m).
    #[serde(default)]
    pub level_of_service_area_m2: f64,
    /// Figures outside what pedestrian experiments measure (see [`plausibility_warnings`]),
    /// and set-ups not meant for evacuation figures (the published model, a local layer), in
    /// words; empty when none.
    #[serde(default)]
    pub warnings: Vec<String>,
    /// What the run assumed, as an authority reading its figures needs it: the model and why,
    /// its parameters, each group's speeds, pre-movement times, bodies and spawn counts.
    #[serde(default)]
    pub inputs: Inputs,
    /// The exits that opened or closed during the run (the map's events and the API's), in
    /// order; absent when none did.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exit_changes: Vec<crate::sim::ExitChange>,
    /// The waiting areas released and the regions changed during the run, in time order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scene_changes: Vec<crate::sim::SceneChange>,
}

/// The assumptions behind a run's figures (the report's `inputs`; `report.html`'s inputs
/// table shows the same).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Inputs {
    /// The model that moved the walkers: `pedestrian` or `continuum_crowds`.
    pub model: crate::params::Model,
    /// Why that model ran, in words: the map's `params` or `"model"`, or `--model`.
    pub model_source: String,
    /// The parameters in effect, every one of them (the map's `params` over the defaults, or
    /// the model's preset; see docs/map-format.md).
    pub params: Params,
    /// Edge of a grid cell, m.
    pub cell_size: f64,
    /// Time step, s.
    pub dt: f64,
    /// Seed of the spawn positions, speeds and pre-movement times.
    pub seed: u64,
    /// The local layer (`simulate --local`): `none`, `boids`, `orca` or `boids+orca`.
    pub local: String,
    /// One entry per group, in map order.
    pub groups: Vec<GroupInputs>,
}

/// One group's assumptions.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GroupInputs {
    /// Group name.
    pub name: String,
    /// Slowest preferred walking speed, m/s.
    pub speed_min: f64,
    /// Fastest preferred walking speed, m/s.
    pub speed_max: f64,
    /// How the speeds are spread between them, in words (`uniform`, `normal, mean 1.34 m/s,
    /// sd 0.26 m/s`, `RiMEA population adults`).
    pub speed_distribution: String,
    /// Body radius, m.
    pub radius: f64,
    /// The spawn areas, in map order.
    pub spawns: Vec<SpawnInputs>,
}

/// One spawn area's assumptions.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SpawnInputs {
    /// Area name.
    pub name: String,
    /// Persons placed in it.
    pub count: usize,
    /// Pre-movement time range `[min, max]`, s (each person waits a time drawn uniformly in it).
    pub premovement: [f64; 2],
}

/// Why a map runs the model it runs, in words, for [`Inputs::model_source`]: `asked` is the
/// model a command was told to use (`--model`), else the map's `"model"`, else its `params`
/// (a map with `params` and no `"model"` runs `continuum_crowds`, one with neither runs
/// `pedestrian`; [`Params::for_map`]).
pub fn model_source(map: &crate::map::MapFile, asked: Option<crate::params::Model>) -> String {
    let own = Params::for_map(map.model, map.params.as_ref()).model;
    match (asked, map.model, map.params.is_some()) {
        (Some(m), _, _) if m == own => format!("--model {} (the map's own model too)", m.name()),
        (Some(m), _, _) => format!("--model {} (the map alone runs {})", m.name(), own.name()),
        (None, Some(m), _) => format!("the map's \"model\": \"{}\"", m.name()),
        (None, None, true) => "the map sets \"params\" and names no \"model\": such a map runs \
                               continuum_crowds, the published model"
            .to_string(),
        (None, None, false) => "the map has neither \"params\" nor \"model\": the default, \
                                pedestrian"
            .to_string(),
    }
}

/// A speed distribution in words, for [`GroupInputs::speed_distribution`].
fn distribution_text(d: &crate::speeds::SpeedDistribution) -> String {
    use crate::speeds::SpeedDistribution as D;
    match d {
        D::Uniform => "uniform".to_string(),
        D::Normal { mean, sd } => format!("normal, mean {mean} m/s, sd {sd} m/s (truncated to the range)"),
        D::Rimea(p) => format!("RiMEA population {}", p.name()),
    }
}

/// The inputs of `sim` for its report.
fn inputs(sim: &Simulation) -> Inputs {
    let scene = &sim.scene;
    Inputs {
        model: scene.params.model,
        model_source: sim
            .model_source
            .clone()
            .unwrap_or_else(|| "set by the program that ran it".to_string()),
        params: scene.params.clone(),
        cell_size: scene.grid.cell_size,
        dt: sim.dt,
        seed: sim.config.seed,
        local: if sim.walk.local.is_some() && sim.local_mode == crate::local::LocalMode::None {
            "a caller's local hook".to_string()
        } else {
            sim.local_mode.name().to_string()
        },
        groups: scene
            .groups
            .iter()
            .map(|g| GroupInputs {
                name: g.name.clone(),
                speed_min: g.speed_min,
                speed_max: g.speed_max,
                speed_distribution: distribution_text(&g.speed_distribution),
                radius: g.radius,
                spawns: g
                    .spawns
                    .iter()
                    .map(|sp| SpawnInputs {
                        name: sp.area.name.clone(),
                        count: sp.count,
                        premovement: sp.premovement,
                    })
                    .collect(),
            })
            .collect(),
    }
}

/// Whether a run is a complete evacuation: every agent spawned got out before the run stopped.
/// Agents of a group without goals (a flock such as the fish tank) never get out, so a run with
/// any of them left is not complete either (`remaining.no_goal` says how many). The report's
/// `complete` and a batch summary's `complete` column both come from here.
pub fn evacuation_complete(total: &GroupReport) -> bool {
    total.remaining.total == 0
}

/// Highest specific flow through a bottleneck that pedestrian experiments report, persons/(m·s):
/// laboratory bottleneck and door experiments measure about 1.3 to 1.9 (Seyfried et al. 2009,
/// "New insights into pedestrian flow through bottlenecks"; Kretz et al. 2006; Weidmann's
/// fundamental diagram peaks at about 1.2 in corridors), the band `crowdfield verify` holds
/// door flows to. A model exit above the band's upper end is faster than people have been seen
/// to leave.
pub const MAX_PLAUSIBLE_SPECIFIC_FLOW: f64 = 1.9;

/// An exit's flow is judged only once this many agents used it: two arrivals a step apart give
/// a meaningless rate.
const MIN_ARRIVALS_FOR_FLOW_CHECK: usize = 10;

/// The calibrated door-flow settings of the README's Calibration section, as map params:
/// `(name, the value to write, whether `params` already has it)`. A `density_window` of 1 m² or
/// more counts as set (a larger window averages at least as much).
fn calibration_settings(params: &Params) -> [(&'static str, &'static str, bool); 3] {
    [
        (
            "speed_law",
            "\"weidmann\"",
            params.speed_law == SpeedLaw::Weidmann,
        ),
        ("density_window", "1", params.density_window >= 1.0),
        ("density_at_walker", "true", params.density_at_walker),
    ]
}

/// Warnings, in words, for figures of `total` a planner should not take at face value: exits
/// whose specific flow exceeds [`MAX_PLAUSIBLE_SPECIFIC_FLOW`] (the continuum model moves
/// people through a door at the speed the field allows, so its door capacity depends on its
/// calibration). The warning names only the calibration parameters of `params` (the map's,
/// after the command's options) not already at their calibrated values
/// ([`crate::params::Params::density_window`], `density_at_walker`, Weidmann's law: see the
/// README's section on calibration); with all of them set it says so and points at what is
/// left (the exit's `width`, the other params) instead of suggesting what the map already has.
pub fn plausibility_warnings(total: &GroupReport, params: &Params) -> Vec<String> {
    let settings = calibration_settings(params);
    let list = |set: bool| -> String {
        let items: Vec<String> = settings
            .iter()
            .filter(|s| s.2 == set)
            .map(|(name, value, _)| format!("\"{name}\": {value}"))
            .collect();
        match items.len() {
            0 | 1 => items.concat(),
            n => format!("{} and {}", items[..n - 1].join(", "), items[n - 1]),
        }
    };
    let (missing, present) = (list(false), list(true));
    // In parentheses, without `;` (a batch's summary.csv joins warnings with "; ").
    let advice = if params.model == crate::params::Model::Pedestrian {
        "the pedestrian model passes 1.3 to 1.9 through a door when the goal lies past it, but a \
         goal drawn in the doorway removes each walker as it steps into the door and reads higher: \
         draw the goal a metre past the door, and check that its \"width\" is the door's real \
         width: see docs/model.md"
            .to_string()
    } else if missing.is_empty() {
        "the map already has the calibrated params \"speed_law\": \"weidmann\", a \"density_window\" \
         of at least 1 and \"density_at_walker\": true, so check that the goal's \"width\" is the \
         door's real width, by default the longer side of the goal's shape, then calibrate rho_max, \
         f_max and lookahead against a bottleneck experiment of your setting: see Calibration in \
         the README"
            .to_string()
    } else if present.is_empty() {
        format!(
            "the model's defaults let a packed crowd leave a door at the free speed beyond it, and \
             the map params {missing} bring door flows near the experiments: see Calibration in the \
             README"
        )
    } else {
        format!(
            "the map already has {present}, and adding {missing} to its params brings door flows \
             near the experiments: see Calibration in the README"
        )
    };
    total
        .exits
        .iter()
        .filter(|e| e.arrivals >= MIN_ARRIVALS_FOR_FLOW_CHECK)
        .filter_map(|e| {
            let q = e.specific_flow?;
            (q > MAX_PLAUSIBLE_SPECIFIC_FLOW).then(|| {
                format!(
                    "exit {} ({:.2} m wide) passed {q:.2} persons/(m·s), above the {MAX_PLAUSIBLE_SPECIFIC_FLOW} \
                     measured in bottleneck experiments: the evacuation time is likely too short ({advice})",
                    e.name, e.width
                )
            })
        })
        .collect()
}

/// Collisions (pairs closer than the sum of their radii beyond the separation's slack, counted
/// after each step), contacts (within the slack) and jams
/// (agents that want to move but stood still for longer than the jam time).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Quality {
    /// Mean colliding pairs per step: pairs closer than the sum of their radii by more than
    /// `contact_slack` of it.
    pub collisions_per_step: f64,
    /// Mean pairs per step in contact: closer than the sum of their radii by at most
    /// `contact_slack` of it (the tolerance of the minimum-distance step; not collisions).
    #[serde(default)]
    pub contacts_per_step: f64,
    /// The fraction of a pair's minimum distance (sum of radii) an overlap may reach and still
    /// count as a contact.
    #[serde(default)]
    pub contact_slack: f64,
    /// Most colliding pairs in one step.
    pub max_collisions: usize,
    /// Mean penetration depth of the colliding pairs, m (0 when none).
    pub mean_collision_depth: f64,
    /// Most agents jammed at once.
    pub max_jammed: usize,
    /// Longest stand-still of an agent that wanted to move, s.
    pub longest_jam: f64,
}

/// Figures of one group (or of every group together).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GroupReport {
    /// Group name (`"total"` for the total).
    pub name: String,
    /// Agents spawned.
    pub agents: usize,
    /// Agents that reached a goal.
    pub arrived: usize,
    /// Time of the last arrival when every agent arrived, seconds; `null` otherwise.
    pub evacuation_time: Option<f64>,
    /// Time of the last arrival so far, seconds; `null` when nobody arrived.
    pub last_arrival: Option<f64>,
    /// Arrival curve: `(time s, agents out)` at every step where someone arrived; in JSON a
    /// pair `[time, count]` whose count is a whole number (`[12.3, 4]`, not `[12.3, 4.0]`).
    pub arrival_curve: Vec<(f64, usize)>,
    /// Flow through each exit.
    pub exits: Vec<ExitReport>,
    /// Highest density met: for a group, in the cell of one of its agents; for the total,
    /// anywhere on the map.
    pub peak_density: PeakDensity,
    /// Mean walking speed over every agent and step once its pre-movement time is over, m/s.
    pub mean_speed: f64,
    /// Lowest per-agent mean speed (distance walked / time since its pre-movement time ended),
    /// m/s.
    pub min_speed: f64,
    /// Agents left when the run stopped.
    pub remaining: Remaining,
    /// Walkers taken off by the program running the simulation (not arrivals); absent when
    /// none were.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub removed: usize,
    /// Walkers of a source that found no room when due and came in later; absent when none.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub late_entries: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// Flow through one exit.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExitReport {
    /// Exit name (for the total: `"group/exit"`).
    pub name: String,
    /// Width of the opening, metres.
    pub width: f64,
    /// Agents that left through it.
    pub arrivals: usize,
    /// First and last arrival times, seconds.
    pub first_arrival: Option<f64>,
    /// See `first_arrival`.
    pub last_arrival: Option<f64>,
    /// Mean flow `(arrivals - 1) / (last - first)`, persons/s; `null` with fewer than two
    /// arrivals or all in one step.
    pub flow: Option<f64>,
    /// `flow / width`, persons/(m·s); `null` when the flow or the width is not known.
    pub specific_flow: Option<f64>,
}

/// Where and when the density peaked.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PeakDensity {
    /// Peak density, persons/m², measured over a window of at least 1 m² around the cell
    /// (`measurement_area_m2`; see [`crate::sim::measure`]), not over one grid cell.
    pub persons_per_m2: f64,
    /// The area the density is averaged over, m².
    #[serde(default)]
    pub measurement_area_m2: f64,
    /// Centre of the cell, metres.
    pub x: f64,
    /// See `x`.
    pub y: f64,
    /// Simulated time, seconds.
    pub time: f64,
}

/// Agents left when the run stopped, by reason.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Remaining {
    /// All agents left.
    pub total: usize,
    /// In a group without goals (a standalone flock such as the fish tank): nothing to reach,
    /// so never "unreachable" or "stuck".
    #[serde(default)]
    pub no_goal: usize,
    /// On a cell from which no goal of their group can be reached (potential `+inf`).
    pub unreachable: usize,
    /// With a finite potential, but within `STUCK_DISTANCE` of one point for `STUCK_TIME`.
    pub stuck: usize,
    /// Not walking yet: the run stopped within their pre-movement time.
    #[serde(default)]
    pub waiting: usize,
    /// Still making progress.
    pub walking: usize,
    /// Due from a source but not in yet: its area had no room (counted in `total`); absent
    /// when none.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub not_entered: usize,
}

/// Builds the report of `sim` as it stands.
pub(crate) fn build(sim: &Simulation) -> Report {
    let scene = &sim.scene;
    let groups: Vec<GroupReport> = (0..scene.groups.len())
        .map(|g| group_report(sim, Some(g)))
        .collect();
    let total = group_report(sim, None);
    Report {
        map: scene.name.clone(),
        seed: sim.config.seed,
        dt: sim.dt,
        max_time: sim.config.max_time,
        replan_every: sim.config.replan_every,
        model: scene.params.model,
        speed_law: scene.params.speed_law,
        density_window: scene.params.density_window,
        density_at_walker: scene.params.density_at_walker,
        walls: sim.walls(),
        steps: sim.steps,
        end_time: sim.time,
        complete: evacuation_complete(&total),
        groups,
        quality: sim.quality(),
        level_of_service: sim.places().summary(&scene.grid, scene.obstacle.view()),
        level_of_service_area_m2: crate::sim::measure::window_area_over(
            crate::sim::levels::LOS_AREA_M2,
            scene.grid.cell_size,
        ),
        warnings: sim
            .model_warnings
            .iter()
            .cloned()
            .chain(sim.local_fallback())
            .chain(plausibility_warnings(&total, &scene.params))
            .collect(),
        inputs: inputs(sim),
        total,
        exit_changes: sim.exit_changes().to_vec(),
        scene_changes: sim.scene_changes().to_vec(),
    }
}

impl Simulation {
    /// The collision and jam figures of the run so far (the report's `quality`), cheap enough
    /// to read after every step.
    pub fn quality(&self) -> Quality {
        let q = &self.logs.quality;
        Quality {
            collisions_per_step: if q.steps > 0 {
                q.pairs as f64 / q.steps as f64
            } else {
                0.0
            },
            contacts_per_step: if q.steps > 0 {
                q.contacts as f64 / q.steps as f64
            } else {
                0.0
            },
            contact_slack: crate::sim::SEPARATION_SLACK,
            max_collisions: q.max_pairs,
            mean_collision_depth: if q.pairs > 0 {
                q.depth_sum / q.pairs as f64
            } else {
                0.0
            },
            max_jammed: q.max_jammed,
            // Summed in f32 over steps: to the millisecond, not 5.099997520446777.
            longest_jam: (q.longest_jam_s as f64 * 1e3).round() / 1e3,
        }
    }
}

/// The report of group `g`, or of every group when `g` is `None`.
fn group_report(sim: &Simulation, g: Option<usize>) -> GroupReport {
    let scene = &sim.scene;
    let in_group = |group: u32| g.is_none_or(|g| group as usize == g);
    let agents: usize = match g {
        Some(g) => sim.spawned[g],
        None => sim.spawned.iter().sum(),
    };
    let arrivals: Vec<_> = sim.arrivals.iter().filter(|a| in_group(a.group)).collect();
    let mut arrival_curve: Vec<(f64, usize)> = Vec::new();
    for (k, a) in arrivals.iter().enumerate() {
        match arrival_curve.last_mut() {
            Some(last) if last.0 == a.time => last.1 = k + 1,
            _ => arrival_curve.push((a.time, k + 1)),
        }
    }
    let last_arrival = arrivals.last().map(|a| a.time);
    let per_group = |counts: &[usize]| -> usize {
        match g {
            Some(g) => counts[g],
            None => counts.iter().sum(),
        }
    };
    let dynamics = &sim.dynamics;
    let removed = per_group(&dynamics.removed);
    let evacuation_time = if arrivals.len() + removed == agents && per_group(&dynamics.waiting) == 0 {
        last_arrival
    } else {
        None
    };

    // Exits.
    let mut exits = Vec::new();
    for (gi, group) in scene.groups.iter().enumerate() {
        if g.is_some_and(|g| g != gi) {
            continue;
        }
        for (ei, area) in group.goals.iter().enumerate() {
            let times: Vec<f64> = arrivals
                .iter()
                .filter(|a| a.group as usize == gi && a.exit == ei)
                .map(|a| a.time)
                .collect();
            let first = times.first().copied();
            let last = times.last().copied();
            let flow = match (first, last) {
                (Some(f), Some(l)) if times.len() >= 2 && l > f => Some((times.len() - 1) as f64 / (l - f)),
                _ => None,
            };
            let specific_flow = flow.filter(|_| area.width > 0.0).map(|f| f / area.width);
            exits.push(ExitReport {
                name: if g.is_some() {
                    area.name.clone()
                } else {
                    format!("{}/{}", group.name, area.name)
                },
                width: area.width,
                arrivals: times.len(),
                first_arrival: first,
                last_arrival: last,
                flow,
                specific_flow,
            });
        }
    }

    // Density.
    let dl = &sim.logs.density;
    let (rho, (r, c), t) = match g {
        Some(g) => dl.group_peak[g],
        None => dl.peak,
    };
    let (x, y) = scene.grid.cell_center(r, c);
    let peak_density = PeakDensity {
        persons_per_m2: rho as f64,
        measurement_area_m2: crate::sim::measure::window_area_m2(scene.grid.cell_size),
        x,
        y,
        time: t,
    };

    // Speeds.
    let (sum, count) = match g {
        Some(g) => dl.speed_sum[g],
        None => dl
            .speed_sum
            .iter()
            .fold((0.0, 0), |(s, n), &(s2, n2)| (s + s2, n + n2)),
    };
    let mean_speed = if count > 0 { sum / count as f64 } else { 0.0 };
    let log = &sim.logs.agents;
    let mut min_speed = log
        .left_min_speed
        .iter()
        .enumerate()
        .filter(|&(group, _)| in_group(group as u32))
        .fold(f64::INFINITY, |m, (_, &v)| m.min(v));
    for (row, &walked) in log.walked.iter().enumerate() {
        if !in_group(log.group[row]) {
            continue;
        }
        // Time on the move: from the end of its pre-movement time to the current time.
        let moving = sim.time - log.start_at[row];
        if moving > 0.0 {
            min_speed = min_speed.min(walked / moving);
        }
    }
    if !min_speed.is_finite() {
        min_speed = 0.0;
    }

    // Remaining agents.
    let mut remaining = Remaining::default();
    let a = &sim.agents;
    for i in 0..a.len() {
        if !in_group(a.group[i]) {
            continue;
        }
        remaining.total += 1;
        if scene.groups[a.group[i] as usize].goals.is_empty() {
            remaining.no_goal += 1;
            continue;
        }
        let phi = scene
            .grid
            .cell_of(a.x[i] as f64, a.y[i] as f64)
            .map_or(f64::INFINITY, |rc| {
                sim.whole_potential_at(a.group[i] as usize, rc)
            });
        if !phi.is_finite() {
            remaining.unreachable += 1;
        } else if sim.is_waiting(i) {
            remaining.waiting += 1;
        } else if sim.time - sim.logs.agents.anchor[i].2 >= STUCK_TIME {
            remaining.stuck += 1;
        } else {
            remaining.walking += 1;
        }
    }

    remaining.not_entered = per_group(&dynamics.waiting);
    remaining.total += remaining.not_entered;
    GroupReport {
        removed,
        late_entries: per_group(&dynamics.late),
        name: g.map_or_else(|| "total".to_string(), |g| scene.groups[g].name.clone()),
        agents,
        arrived: arrivals.len(),
        evacuation_time,
        last_arrival,
        arrival_curve,
        exits,
        peak_density,
        mean_speed,
        min_speed,
        remaining,
    }
}
