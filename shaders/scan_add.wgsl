// Scan pass, level down: adds each block's scanned offset (from the level above) to the block's elements.
@group(0) @binding(0) var<uniform> level: ScanParams;
@group(0) @binding(1) var<storage, read_write> scan_buf: array<u32>;

@compute @workgroup_size(256, 1, 1)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let i = wid.x * SCAN_BLOCK + li;
    if i < level.len {
        scan_buf[level.offset + i] += scan_buf[level.sums_offset + wid.x];
    }
}
