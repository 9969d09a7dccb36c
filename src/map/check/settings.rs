//! The checks of a map's grid (its size, cell and memory estimate) and of its `params` block,
//! with the boids and ORCA settings.

use super::{Checker, num};
use crate::grid::Grid;
use crate::map::format::GridSpec;
use crate::map::{
    MAX_CELL_SIZE, MAX_CELLS, MAX_GRID_EXTENT, MAX_GRID_SIDE, MAX_ORCA_NEIGHBORS, MAX_WALK_SPEED,
    MEMORY_LIMIT_BYTES, MIN_CELL_SIZE, MIN_FLOW_SPEED, MIN_RADIUS,
};
use crate::params::{BoidsParams, MAX_DENSITY_WINDOW_M2, OrcaParams, Params};

impl Checker<'_> {
    pub(super) fn grid(&mut self, g: &GridSpec, groups: usize) -> Option<Grid> {
        let mut ok = self.ensure(g.cols > 0, "grid.cols", || {
            format!("{}: expected at least 1", g.cols)
        });
        ok &= self.ensure(g.rows > 0, "grid.rows", || {
            format!("{}: expected at least 1", g.rows)
        });
        ok &= self.ensure(
            g.cell_size.is_finite() && (MIN_CELL_SIZE..=MAX_CELL_SIZE).contains(&g.cell_size),
            "grid.cell_size",
            || {
                format!(
                    "{}: expected a cell edge in metres between {} and {}",
                    num(g.cell_size),
                    num(MIN_CELL_SIZE),
                    num(MAX_CELL_SIZE)
                )
            },
        );
        if !ok {
            return None;
        }
        let cells = g.cols.checked_mul(g.rows).filter(|&n| n <= MAX_CELLS);
        let Some(cells) = cells else {
            self.push(
                "grid",
                format!(
                    "{} x {} cells is too large: expected at most {MAX_CELLS} cells (2^28)",
                    g.cols, g.rows
                ),
            );
            return None;
        };
        let size = crate::memory::RunSize {
            grid: Grid::new(g.cols, g.rows, g.cell_size),
            groups: groups.max(1),
            agents: 0,
            max_radius: MIN_RADIUS,
        };
        let estimate = size.simulation_bytes();
        if estimate > MEMORY_LIMIT_BYTES {
            let per_cell = crate::memory::SIM_BYTES_PER_CELL
                + crate::memory::SIM_BYTES_PER_CELL_PER_GROUP * groups.max(1) as u64;
            self.push(
                "grid",
                format!(
                    "{} x {} cells with {groups} group(s) needs about {:.1} GiB for a run ({per_cell} bytes \
                     per cell): expected at most {:.1} GiB; use fewer or larger cells",
                    g.cols,
                    g.rows,
                    estimate as f64 / (1u64 << 30) as f64,
                    MEMORY_LIMIT_BYTES as f64 / (1u64 << 30) as f64
                ),
            );
            return None;
        }
        // Loading fails with the amount it needs, not an abort, where memory is short.
        let loading = (cells as u64).saturating_mul(crate::memory::LOAD_BYTES_PER_CELL);
        if let Err(e) = crate::memory::ensure_available(
            loading,
            self.file,
            "grid",
            &format!("loading {} x {} cells", g.cols, g.rows),
        ) {
            self.errors.push(e);
            return None;
        }
        if g.cols.max(g.rows) > MAX_GRID_SIDE {
            self.push(
                "grid",
                format!(
                    "{} x {} cells: expected at most {MAX_GRID_SIDE} cells a side (every image draws a \
                     pixel per cell); use larger cells",
                    g.cols, g.rows
                ),
            );
            return None;
        }
        let extent = g.cols.max(g.rows) as f64 * g.cell_size;
        if extent > MAX_GRID_EXTENT {
            self.push(
                "grid",
                format!(
                    "{} x {} cells of {} m is {} m across: expected at most {} m (positions are f32, \
                     which resolve about 1 mm up to 16 km; farther, walking steps lose precision)",
                    g.cols,
                    g.rows,
                    num(g.cell_size),
                    num(extent),
                    num(MAX_GRID_EXTENT)
                ),
            );
            return None;
        }
        Some(Grid::new(g.cols, g.rows, g.cell_size))
    }

    pub(super) fn params(&mut self, p: &Params) {
        let nonneg = |v: f64| v >= 0.0;
        let pos = |v: f64| v > 0.0;
        self.number(p.alpha, "params.alpha", nonneg, ">= 0");
        self.number(p.beta, "params.beta", nonneg, ">= 0");
        self.number(p.gamma, "params.gamma", nonneg, ">= 0");
        self.ensure(!(p.alpha == 0.0 && p.beta == 0.0), "params.beta", || {
            "0 with alpha 0: expected alpha + beta > 0 (the unit cost must be positive)".into()
        });
        self.number(p.lambda, "params.lambda", pos, "> 0");
        if self.number(p.rho_min, "params.rho_min", nonneg, ">= 0")
            & self.number(p.rho_max, "params.rho_max", pos, "> 0")
        {
            self.ensure(p.rho_min < p.rho_max, "params.rho_max", || {
                format!(
                    "{}: expected more than rho_min ({})",
                    num(p.rho_max),
                    num(p.rho_min)
                )
            });
        }
        // f_min floors every speed (SPEC: a crowd slows walkers, never walls them in): at
        // 5e-324 m/s its unit cost 1/f_min overflowed to infinity and made crowded faces walls.
        let f_min_ok = |v: f64| v >= MIN_FLOW_SPEED;
        let f_min_rule = format!(">= {MIN_FLOW_SPEED} m/s");
        if self.number(p.f_min, "params.f_min", f_min_ok, &f_min_rule)
            & self.number(p.f_max, "params.f_max", pos, "> 0")
        {
            self.ensure(p.f_min <= p.f_max, "params.f_max", || {
                format!("{}: expected at least f_min ({})", num(p.f_max), num(p.f_min))
            });
            // f_max bounds every walker's speed and so sets the automatic time step: a huge one
            // would make the step tiny and a run endless.
            self.ensure(p.f_max <= MAX_WALK_SPEED, "params.f_max", || {
                format!(
                    "{} m/s: expected a walking speed of at most {} m/s",
                    num(p.f_max),
                    num(MAX_WALK_SPEED)
                )
            });
        }
        if self.number(p.s_min, "params.s_min", |_| true, "")
            & self.number(p.s_max, "params.s_max", |_| true, "")
        {
            self.ensure(p.s_min < p.s_max, "params.s_max", || {
                format!("{}: expected more than s_min ({})", num(p.s_max), num(p.s_min))
            });
        }
        self.number(p.lookahead, "params.lookahead", nonneg, ">= 0");
        self.number(p.weidmann_rho_jam, "params.weidmann_rho_jam", pos, "> 0");
        self.number(p.weidmann_gamma, "params.weidmann_gamma", pos, "> 0");
        if self.number(p.density_window, "params.density_window", nonneg, ">= 0") {
            // A window larger than the grid is fine (it is clamped to the grid); one larger
            // than any local crowd is a unit mistake.
            self.ensure(
                p.density_window <= MAX_DENSITY_WINDOW_M2,
                "params.density_window",
                || {
                    format!(
                        "{} m²: expected an area of at most {MAX_DENSITY_WINDOW_M2} m² (a 10 m \
                         square; 1 m² is the usual measurement area), or 0 for the per-cell density",
                        num(p.density_window)
                    )
                },
            );
        }
    }

    pub(super) fn boids(&mut self, b: &BoidsParams, at: &str) {
        let nonneg = |v: f64| v >= 0.0;
        for (name, v) in [
            ("r_coh", b.r_coh),
            ("r_sep", b.r_sep),
            ("r_align", b.r_align),
            ("k_coh", b.k_coh),
            ("k_sep", b.k_sep),
            ("k_align", b.k_align),
            ("a_max", b.a_max),
            ("v_max", b.v_max),
        ] {
            self.number(v, &format!("{at}.{name}"), nonneg, ">= 0");
        }
    }

    pub(super) fn orca(&mut self, o: &OrcaParams, at: &str) {
        let pos = |v: f64| v > 0.0;
        self.number(o.time_horizon, &format!("{at}.time_horizon"), pos, "> 0");
        self.number(
            o.obstacle_time_horizon,
            &format!("{at}.obstacle_time_horizon"),
            pos,
            "> 0",
        );
        self.number(
            o.neighbor_dist,
            &format!("{at}.neighbor_dist"),
            |v| v >= 0.0,
            ">= 0",
        );
        self.ensure(
            o.max_neighbors <= MAX_ORCA_NEIGHBORS,
            &format!("{at}.max_neighbors"),
            || format!("{}: expected at most {MAX_ORCA_NEIGHBORS}", o.max_neighbors),
        );
    }
}
