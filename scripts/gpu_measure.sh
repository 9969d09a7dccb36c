#!/usr/bin/env bash
# On a machine with a real GPU: the GPU correctness tests (CPU-vs-GPU agreement, with
# CROWDFIELD_REQUIRE_GPU=1 so that none skips) and the GPU figures of BENCHMARKS.md, from the
# bundle of `scripts/gpu_bundle.sh`. Needs no Rust toolchain; logs go to $OUT (default out/gpu).
# Eight files at most land in $OUT. QUICK=1 runs the small sizes only (a dry run on a software adapter).
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-out/gpu}
mkdir -p "$OUT"
if command -v nvidia-smi >/dev/null; then
  # A bare image may lack the Vulkan loader: unpack the carried one (see the device notes).
  if [ -d .gl ]; then for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig; fi
  icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
  [ -f "$icd" ] && export VK_DRIVER_FILES=$icd
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv > "$OUT/machine.txt" 2>&1
fi
{ uname -a; nproc; grep -m1 "model name" /proc/cpuinfo; } >> "$OUT/machine.txt"
B=$(mktemp -d)
tar xzf .devbin/devbin.tgz -C "$B" && B=$B/.devbin
# The test binaries find maps/ through the path they were built at.
src=$(cat "$B/built_at")
if [ -n "$src" ] && [ ! -e "$src" ]; then mkdir -p "$(dirname "$src")"; ln -s "$PWD" "$src"; fi
export CROWDFIELD_REQUIRE_GPU=1 RUST_BACKTRACE=1
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-$(mktemp -d)}
quick=(); maxn=1000000; [ "${QUICK:-0}" = 1 ] && { quick=(--quick --max-side 256); maxn=10000; }

echo "== tests" | tee -a "$OUT/log"
for t in gpu_shaders gpu_bins gpu_splat gpu_fields gpu_fim gpu_local gpu_sim gpu_maps; do
  echo "### $t" >> "$OUT/tests.log"
  timeout 240 "$B/$t" > "$B/$t.log" 2>&1; rc=$?; cat "$B/$t.log" >> "$OUT/tests.log"
  echo "$t exit $rc: $(grep '^test result' "$B/$t.log")" | tee -a "$OUT/log"
done
# bench_gpu: the Eikonal solve on 256²..2048² walls and maze, one group and four (targets:
# 1024² walls under 5 ms, four groups under 1.5x that, 2048² under 20 ms), the neighbour grid
# and the continuum step against the CPU backend at 256², 512², 1024² (10⁴ agents, 4 groups).
echo "== bench_gpu" | tee -a "$OUT/log"
timeout 240 "$B/bench_gpu" "${quick[@]}" > "$OUT/bench_gpu.md" 2>&1; echo "exit $?" >> "$OUT/log"
echo "== bench eikonal: the block FIM on 1024² and 2048² walls and maze, with its counters" | tee -a "$OUT/log"
sides=(1024 2048); [ "${QUICK:-0}" = 1 ] && sides=(256)
for g in walls maze; do
  timeout 120 "$B/crowdfield" bench eikonal --grid $g --sizes "${sides[@]}" --repeats 5 --backend gpu \
    >> "$OUT/bench_gpu.md" 2>> "$OUT/log"; echo "exit $?" >> "$OUT/log"
done
echo "== bench_local --gpu-only" | tee -a "$OUT/log"
timeout 200 "$B/bench_local" --max $maxn --gpu-only --png "$OUT/local_gpu.png" > "$OUT/bench_local_gpu.md" 2>&1; echo "exit $?" >> "$OUT/log"
echo "== simulate, GPU potentials and GPU local layer" | tee -a "$OUT/log"
timeout 120 "$B/crowdfield" simulate maps/bottleneck.json --backend gpu --local orca --local-backend gpu \
  --out "$(mktemp -d)" > "$OUT/simulate.log" 2>&1; echo "exit $?" >> "$OUT/log"
timeout 120 "$B/crowdfield" simulate maps/bottleneck.json --backend cpu --local orca --local-backend cpu-multi \
  --out "$(mktemp -d)" >> "$OUT/simulate.log" 2>&1; echo "exit $?" >> "$OUT/log"
echo "== boids+ORCA at 10^6 agents, ms per pass: GPU backend, then CPU multi on this machine's cores" | tee -a "$OUT/log"
timeout 60 "$B/bench_local" --profile $maxn --gpu > "$OUT/profile.log" 2>&1; echo "exit $?" >> "$OUT/log"
timeout 60 "$B/bench_local" --profile $maxn >> "$OUT/profile.log" 2>&1; echo "exit $?" >> "$OUT/log"
cat "$OUT/log"
