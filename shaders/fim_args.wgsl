// FIM dispatch-size pass: publishes the compacted list's length and writes the indirect arguments of the next block pass.
@group(0) @binding(0) var<storage, read_write> state: array<atomic<u32>>;
@group(0) @binding(1) var<storage, read_write> dispatch_args: array<u32>;

@compute @workgroup_size(1, 1, 1)
fn main() {
    let count = atomicLoad(&state[STATE_COUNTER]);
    atomicStore(&state[STATE_COUNTER], 0u);
    atomicStore(&state[STATE_ACTIVE], count);
    if count > 0u {
        atomicAdd(&state[STATE_PASSES], 1u);
    }
    let x = min(count, MAX_GROUPS_X);
    dispatch_args[0] = x;
    dispatch_args[1] = select(0u, (count + x - 1u) / max(x, 1u), count > 0u);
    dispatch_args[2] = 1u;
}
