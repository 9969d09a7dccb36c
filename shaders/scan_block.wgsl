// Scan pass, level up: exclusive prefix sum of each 256-element block of scan_buf in place, block totals to the next level.
@group(0) @binding(0) var<uniform> level: ScanParams;
@group(0) @binding(1) var<storage, read_write> scan_buf: array<u32>;

var<workgroup> partial: array<u32, 256>;

@compute @workgroup_size(256, 1, 1)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let i = wid.x * SCAN_BLOCK + li;
    var v = 0u;
    if i < level.len {
        v = scan_buf[level.offset + i];
    }
    partial[li] = v;
    workgroupBarrier();
    // Hillis-Steele inclusive scan: integer sums, so the result is exact and order-free.
    for (var step = 1u; step < SCAN_BLOCK; step <<= 1u) {
        var add = 0u;
        if li >= step {
            add = partial[li - step];
        }
        workgroupBarrier();
        partial[li] += add;
        workgroupBarrier();
    }
    if i < level.len {
        scan_buf[level.offset + i] = partial[li] - v;
    }
    if li == SCAN_BLOCK - 1u {
        scan_buf[level.sums_offset + wid.x] = partial[li];
    }
}
