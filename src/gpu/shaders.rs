//! The WGSL sources, embedded at compile time. Each pass is `shaders/common.wgsl` followed by
//! the pass's own file (WGSL has no includes);
//! the local layer's passes also get `shaders/local_common.wgsl` in between.

macro_rules! pass_source {
    ($file:literal) => {
        concat!(
            include_str!("../../shaders/common.wgsl"),
            "\n",
            include_str!(concat!("../../shaders/", $file))
        )
    };
}

/// A local-layer pass: `common.wgsl`, then `local_common.wgsl` (its bindings and helpers),
/// then the pass's own file.
macro_rules! local_pass_source {
    ($file:literal) => {
        concat!(
            include_str!("../../shaders/common.wgsl"),
            "\n",
            include_str!("../../shaders/local_common.wgsl"),
            "\n",
            include_str!(concat!("../../shaders/", $file))
        )
    };
}

/// A FIM pass: `common.wgsl`, then `fim_common.wgsl` (the passes' bindings and tile
/// constants), then the pass's own file. The tile is [`crate::gpu::FIM_TILE_LARGE`]; the
/// context rewrites it with [`crate::gpu::fim_pass_source`] where the adapter needs smaller tiles.
macro_rules! fim_pass_source {
    ($file:literal) => {
        concat!(
            include_str!("../../shaders/common.wgsl"),
            "\n",
            include_str!("../../shaders/fim_common.wgsl"),
            "\n",
            include_str!(concat!("../../shaders/", $file))
        )
    };
}

/// The shared structs, constants and helpers prepended to every pass.
pub const COMMON: &str = include_str!("../../shaders/common.wgsl");

/// FIM: relax the listed tiles until they settle and queue the next pass's tiles.
pub const FIM_BLOCK: &str = fim_pass_source!("fim_block.wgsl");
/// FIM: copy relaxed tiles back and size the next pass.
pub const FIM_COMMIT: &str = fim_pass_source!("fim_commit.wgsl");
/// Scan: per-block exclusive scan.
pub const SCAN_BLOCK: &str = pass_source!("scan_block.wgsl");
/// Scan: add block offsets.
pub const SCAN_ADD: &str = pass_source!("scan_add.wgsl");
/// Neighbour grid: bins and counts.
pub const BIN_COUNT: &str = pass_source!("bin_count.wgsl");
/// Neighbour grid: radix chunk histograms.
pub const RADIX_HIST: &str = pass_source!("radix_hist.wgsl");
/// Neighbour grid: stable radix scatter.
pub const RADIX_SCATTER: &str = pass_source!("radix_scatter.wgsl");
/// Density splat.
pub const SPLAT: &str = pass_source!("splat.wgsl");
/// Density splat resolve.
pub const SPLAT_RESOLVE: &str = pass_source!("splat_resolve.wgsl");

/// Density window: sums along rows of the splat's mass, momentum and open cells.
pub const DENSITY_WINDOW_ROWS: &str = pass_source!("density_window_rows.wgsl");
/// Density window: sums along columns, then density and mean velocity.
pub const DENSITY_WINDOW_COLS: &str = pass_source!("density_window_cols.wgsl");
/// Fields: anisotropic speed from the splat.
pub const FIELD_SPEED: &str = pass_source!("field_speed.wgsl");
/// Fields: anisotropic unit cost in the solver's form.
pub const FIELD_COST: &str = pass_source!("field_cost.wgsl");

/// Continuum step: every group's upwind gradient.
pub const CONTINUUM_GRADIENT: &str = pass_source!("continuum_gradient.wgsl");
/// Continuum step: every agent's walking velocity.
pub const CONTINUUM_VELOCITY: &str = pass_source!("continuum_velocity.wgsl");
/// Continuum step: every agent's potential under every group's field.
pub const CONTINUUM_POTENTIAL: &str = pass_source!("continuum_potential.wgsl");

/// Local layer: gather agents into bin order.
pub const LOCAL_PACK: &str = local_pass_source!("local_pack.wgsl");
/// Local layer: preferred velocity (jitter, boids offset).
pub const LOCAL_PREFERRED: &str = local_pass_source!("local_preferred.wgsl");
/// Local layer: ORCA (fused boids scan) and the linear program.
pub const LOCAL_ORCA: &str = local_pass_source!("local_orca.wgsl");
/// Local layer: the standalone flock's velocity (boids and wall probes).
pub const LOCAL_FLOCK: &str = local_pass_source!("local_flock.wgsl");
/// Local layer: move with the wall map, results in agent order.
pub const LOCAL_MOVE: &str = local_pass_source!("local_move.wgsl");
/// Local layer: contact pass, even sweeps.
pub const LOCAL_CONTACT_EVEN: &str = local_pass_source!("local_contact_even.wgsl");
/// Local layer: contact pass, odd sweeps.
pub const LOCAL_CONTACT_ODD: &str = local_pass_source!("local_contact_odd.wgsl");
/// Local layer: contact pass, results in agent order.
pub const LOCAL_CONTACT_OUT: &str = local_pass_source!("local_contact_out.wgsl");

/// Every pass as `(file name, full source)`, for validation.
pub const ALL: &[(&str, &str)] = &[
    ("fim_block.wgsl", FIM_BLOCK),
    ("fim_commit.wgsl", FIM_COMMIT),
    ("scan_block.wgsl", SCAN_BLOCK),
    ("scan_add.wgsl", SCAN_ADD),
    ("bin_count.wgsl", BIN_COUNT),
    ("radix_hist.wgsl", RADIX_HIST),
    ("radix_scatter.wgsl", RADIX_SCATTER),
    ("splat.wgsl", SPLAT),
    ("splat_resolve.wgsl", SPLAT_RESOLVE),
    ("density_window_rows.wgsl", DENSITY_WINDOW_ROWS),
    ("density_window_cols.wgsl", DENSITY_WINDOW_COLS),
    ("field_speed.wgsl", FIELD_SPEED),
    ("field_cost.wgsl", FIELD_COST),
    ("continuum_gradient.wgsl", CONTINUUM_GRADIENT),
    ("continuum_velocity.wgsl", CONTINUUM_VELOCITY),
    ("continuum_potential.wgsl", CONTINUUM_POTENTIAL),
    ("local_pack.wgsl", LOCAL_PACK),
    ("local_preferred.wgsl", LOCAL_PREFERRED),
    ("local_orca.wgsl", LOCAL_ORCA),
    ("local_flock.wgsl", LOCAL_FLOCK),
    ("local_move.wgsl", LOCAL_MOVE),
    ("local_contact_even.wgsl", LOCAL_CONTACT_EVEN),
    ("local_contact_odd.wgsl", LOCAL_CONTACT_ODD),
    ("local_contact_out.wgsl", LOCAL_CONTACT_OUT),
];
