// Bin count pass: each agent's clamped bin, the (bin, id) pair the radix sort starts from, and the per-bin counts.
@group(0) @binding(0) var<uniform> params: BinParams;
@group(0) @binding(1) var<storage, read> xs: array<f32>;
@group(0) @binding(2) var<storage, read> ys: array<f32>;
@group(0) @binding(3) var<storage, read_write> agent_bin: array<u32>;
@group(0) @binding(4) var<storage, read_write> keys_in: array<u32>;
@group(0) @binding(5) var<storage, read_write> vals_in: array<u32>;
@group(0) @binding(6) var<storage, read_write> keys_out: array<u32>;
@group(0) @binding(7) var<storage, read_write> vals_out: array<u32>;
@group(0) @binding(8) var<storage, read_write> scan_buf: array<atomic<u32>>;

@compute @workgroup_size(256, 1, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.y * nwg.x * 256u + gid.x;
    if i >= params.agents {
        return;
    }
    let bx = bin_coord(xs[i], params.inv_bin_size, params.bins_x);
    let by = bin_coord(ys[i], params.inv_bin_size, params.bins_y);
    let bin = by * params.bins_x + bx;
    agent_bin[i] = bin;
    keys_in[i] = bin;
    vals_in[i] = i;
    // Counts are integers: the atomics' order cannot change them.
    atomicAdd(&scan_buf[bin], 1u);
}
