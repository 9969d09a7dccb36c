//! GPU-visible structs: each is the `#[repr(C)]` twin of a struct in `shaders/common.wgsl`
//! (sizes asserted in `tests/gpu_shaders.rs`; keep field order and types in sync).

use bytemuck::{Pod, Zeroable};

/// FIM dimensions. Sync: `FimParams` in `shaders/common.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct GpuFimParams {
    /// Grid columns.
    pub cols: u32,
    /// Grid rows.
    pub rows: u32,
    /// Tiles along x.
    pub tiles_x: u32,
    /// Tiles along y.
    pub tiles_y: u32,
    /// `tiles_x * tiles_y`.
    pub tiles_per_group: u32,
    /// Potentials solved in one submission.
    pub groups: u32,
    /// Cell edge, metres.
    pub cell_size: f32,
    /// Relative change below which a cell counts as settled.
    pub eps_rel: f32,
}

/// The list and count slots one FIM pass uses, one entry of the step buffer (bound with a
/// dynamic offset). Sync: `FimStep` in `shaders/common.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct GpuFimStep {
    /// Which of the two active lists the pass reads (0 or 1); it appends to the other.
    pub list_in: u32,
    /// State slot of the count of the list it reads.
    pub count_in: u32,
    /// State slot of the count of the list it appends to.
    pub count_out: u32,
    /// State slot the commit clears: the next pass appends there.
    pub count_clear: u32,
}

/// One level of a multi-level exclusive scan. Sync: `ScanParams` in `shaders/common.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct GpuScanParams {
    /// First element of this level in the scan buffer.
    pub offset: u32,
    /// Elements at this level.
    pub len: u32,
    /// Where this level's block totals (the next level) start.
    pub sums_offset: u32,
    /// Padding to 16 bytes.
    pub pad: u32,
}

/// Neighbour-grid dimensions and the current radix pass. Sync: `BinParams` in `shaders/common.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct GpuBinParams {
    /// Number of agents.
    pub agents: u32,
    /// Bins along x.
    pub bins_x: u32,
    /// Bins along y.
    pub bins_y: u32,
    /// `1 / bin edge`, 1/m: `NeighborGrid::inv_bin_size`, so bins are a multiplication.
    pub inv_bin_size: f32,
    /// Bit shift of this radix pass's digit.
    pub shift: u32,
    /// 256-agent chunks.
    pub chunks: u32,
    /// Start of the digit-major chunk histogram in the scan buffer.
    pub hist_offset: u32,
    /// Padding to 32 bytes.
    pub pad: u32,
}

/// Density splat dimensions. Sync: `SplatParams` in `shaders/common.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct GpuSplatParams {
    /// Number of agents.
    pub agents: u32,
    /// Grid columns.
    pub cols: u32,
    /// Grid rows.
    pub rows: u32,
    /// Fall-off exponent.
    pub lambda: f32,
    /// Cell edge, metres.
    pub cell_size: f32,
    /// Fixed-point scale of the integer accumulators.
    pub fixed_scale: f32,
    /// Padding.
    pub pad0: u32,
    /// Padding to 32 bytes.
    pub pad1: u32,
}

/// Dimensions of the continuum step's gradient and velocity passes. Sync: `ContinuumParams`
/// in `shaders/common.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct GpuContinuumParams {
    /// Grid columns.
    pub cols: u32,
    /// Grid rows.
    pub rows: u32,
    /// Potentials on the device (one per group).
    pub groups: u32,
    /// Agents sampled.
    pub agents: u32,
    /// Cell edge, metres.
    pub cell_size: f32,
    /// Width of the domain, metres (`cols * cell_size`).
    pub width: f32,
    /// Height of the domain, metres (`rows * cell_size`).
    pub height: f32,
    /// Padding to 32 bytes.
    pub pad0: u32,
}

/// Model parameters of the speed and cost passes, in f32. Sync: `FieldParams` in
/// `shaders/common.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct GpuFieldParams {
    /// Grid columns.
    pub cols: u32,
    /// Grid rows.
    pub rows: u32,
    /// 0: linear blend, 1: Weidmann.
    pub speed_law: u32,
    /// Whole part of the look-ahead distance in cells ([`crate::fields::lookahead_cells`]).
    pub ahead_whole: u32,
    /// Cell edge, metres.
    pub cell_size: f32,
    /// Fraction of the look-ahead distance in cells, in `[0, 1)`.
    pub ahead_frac: f32,
    /// Path-length weight of the unit cost.
    pub alpha: f32,
    /// Time weight of the unit cost.
    pub beta: f32,
    /// Discomfort weight of the unit cost.
    pub gamma: f32,
    /// Slowest speed, m/s.
    pub f_min: f32,
    /// Fastest speed, m/s.
    pub f_max: f32,
    /// Slope at or below which the terrain speed is `f_max`.
    pub s_min: f32,
    /// Slope at or above which the terrain speed is `f_min`.
    pub s_max: f32,
    /// Density up to which walkers keep the terrain speed.
    pub rho_min: f32,
    /// Density from which walkers take the flow speed.
    pub rho_max: f32,
    /// Weidmann shape constant.
    pub weidmann_gamma: f32,
    /// Weidmann jam density.
    pub weidmann_rho_jam: f32,
    /// Finite unit costs above this are clamped ([`crate::gpu::FIM_COST_MAX`]).
    pub cost_max: f32,
    /// 1: each face reads at least the density of its own cell (`params.density_at_walker`).
    pub at_walker: u32,
    /// Padding to 80 bytes.
    pub pad2: u32,
}

/// The density window of the window passes (`params.density_window`, see
/// [`crate::fields::window`]). Sync: `WindowParams` in `shaders/common.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct GpuWindowParams {
    /// Grid columns.
    pub cols: u32,
    /// Grid rows.
    pub rows: u32,
    /// Window cells on each side of the centre along a row, at most `cols`.
    pub half_cols: u32,
    /// Window cells on each side of the centre along a column, at most `rows`.
    pub half_rows: u32,
    /// Weight of the window's outer ring, in `(0, 1]` (1 when the window is one cell).
    pub edge: f32,
    /// Padding.
    pub pad0: u32,
    /// Padding.
    pub pad1: u32,
    /// Padding to 32 bytes.
    pub pad2: u32,
}
