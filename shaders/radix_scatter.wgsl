// Radix scatter pass: stable scatter of each chunk by digit (rank = earlier agents of the chunk with the same digit).
@group(0) @binding(0) var<uniform> params: BinParams;
@group(0) @binding(1) var<storage, read> xs: array<f32>;
@group(0) @binding(2) var<storage, read> ys: array<f32>;
@group(0) @binding(3) var<storage, read_write> agent_bin: array<u32>;
@group(0) @binding(4) var<storage, read_write> keys_in: array<u32>;
@group(0) @binding(5) var<storage, read_write> vals_in: array<u32>;
@group(0) @binding(6) var<storage, read_write> keys_out: array<u32>;
@group(0) @binding(7) var<storage, read_write> vals_out: array<u32>;
@group(0) @binding(8) var<storage, read_write> scan_buf: array<u32>;

var<workgroup> digits: array<u32, 256>;

@compute @workgroup_size(256, 1, 1)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let i = wid.x * RADIX + li;
    var key = 0u;
    var digit = RADIX;
    if i < params.agents {
        key = keys_in[i];
        digit = (key >> params.shift) & (RADIX - 1u);
    }
    digits[li] = digit;
    workgroupBarrier();
    if i >= params.agents {
        return;
    }
    // Stability (ids ascending within a bin) comes from this rank: lower index, same digit.
    var rank = 0u;
    for (var j = 0u; j < li; j++) {
        rank += select(0u, 1u, digits[j] == digit);
    }
    let pos = scan_buf[params.hist_offset + digit * params.chunks + wid.x] + rank;
    keys_out[pos] = key;
    vals_out[pos] = vals_in[i];
}
