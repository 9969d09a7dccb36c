// Radix histogram pass: digit counts of each 256-agent chunk, stored digit-major so one scan gives every (digit, chunk) offset.
@group(0) @binding(0) var<uniform> params: BinParams;
@group(0) @binding(1) var<storage, read> xs: array<f32>;
@group(0) @binding(2) var<storage, read> ys: array<f32>;
@group(0) @binding(3) var<storage, read_write> agent_bin: array<u32>;
@group(0) @binding(4) var<storage, read_write> keys_in: array<u32>;
@group(0) @binding(5) var<storage, read_write> vals_in: array<u32>;
@group(0) @binding(6) var<storage, read_write> keys_out: array<u32>;
@group(0) @binding(7) var<storage, read_write> vals_out: array<u32>;
@group(0) @binding(8) var<storage, read_write> scan_buf: array<u32>;

var<workgroup> hist: array<atomic<u32>, 256>;

@compute @workgroup_size(256, 1, 1)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let i = wid.x * RADIX + li;
    if i < params.agents {
        atomicAdd(&hist[(keys_in[i] >> params.shift) & (RADIX - 1u)], 1u);
    }
    workgroupBarrier();
    scan_buf[params.hist_offset + li * params.chunks + wid.x] = atomicLoad(&hist[li]);
}
