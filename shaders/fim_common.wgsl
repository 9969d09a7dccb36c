// Bindings, constants and helpers shared by the two FIM passes (fim_block and fim_commit).
@group(0) @binding(0) var<uniform> params: FimParams;
@group(0) @binding(1) var<uniform> step: FimStep;
@group(0) @binding(2) var<storage, read> cost: array<f32>;
@group(0) @binding(3) var<storage, read> source: array<u32>;
@group(0) @binding(4) var<storage, read_write> phi: array<f32>;
@group(0) @binding(5) var<storage, read_write> phi_next: array<f32>;
@group(0) @binding(6) var<storage, read_write> queued: array<atomic<u32>>;
@group(0) @binding(7) var<storage, read_write> lists: array<u32>;
@group(0) @binding(8) var<storage, read_write> state: array<atomic<u32>>;
@group(0) @binding(9) var<storage, read_write> args_out: array<u32>;

// Edge of a square tile, cells: FIM_TILE_LARGE where the adapter's workgroup memory holds the
// tile and its halo, else FIM_TILE_SMALL. The host rewrites this line when it builds the
// pipelines (sync: FIM_TILE_LARGE, FIM_TILE_SMALL and fim_pass_source in src/gpu/fim.rs).
const FIM_TILE: u32 = 64u;
// Invocations of a workgroup along each axis; each one relaxes FIM_CPA x FIM_CPA cells, strided
// by FIM_LANES so neighbouring invocations touch neighbouring cells.
const FIM_LANES: u32 = 16u;
const FIM_CPA: u32 = FIM_TILE / FIM_LANES;
const FIM_CPI: u32 = FIM_CPA * FIM_CPA;
// Tile plus a one-cell halo on each side.
const FIM_HALO: u32 = FIM_TILE + 2u;
// Sweeps after which a tile that has not settled stops and queues itself for the next pass
// (sync: FIM_MAX_SWEEPS_PER_EDGE in src/gpu/fim.rs): four Manhattan diameters, far above what
// a front crossing the tile needs, so only a maze inside one tile ever reaches it.
const FIM_MAX_SWEEPS: u32 = 8u * FIM_TILE;
