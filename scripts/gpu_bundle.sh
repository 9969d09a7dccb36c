#!/usr/bin/env bash
# Packs what `scripts/gpu_measure.sh` runs on a machine with a real GPU and no Rust toolchain:
# the release `crowdfield` command, the GPU benchmarks and the GPU test binaries, stripped and
# tarred into .devbin/devbin.tgz (about 32 MB). Run from the repository root.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --bin crowdfield --example bench_gpu --example bench_local --example bench_sim
tests=(gpu_shaders gpu_bins gpu_splat gpu_fields gpu_fim gpu_local gpu_sim gpu_maps)
args=(); for t in "${tests[@]}"; do args+=(--test "$t"); done
stage=$(mktemp -d)/.devbin
mkdir -p "$stage"
cargo test --release --no-run "${args[@]}" --message-format=json 2>/dev/null |
  grep -o '"executable":"[^"]*"' | cut -d'"' -f4 |
  while read -r exe; do
    name=$(basename "$exe"); cp "$exe" "$stage/${name%%-*}"
  done
cp target/release/crowdfield target/release/examples/bench_{gpu,local,sim} "$stage/"
strip "$stage"/*
pwd > "$stage/built_at" # the test binaries find maps/ and shaders/ there
mkdir -p .devbin
tar czf .devbin/devbin.tgz -C "$(dirname "$stage")" .devbin
ls -la .devbin/devbin.tgz
