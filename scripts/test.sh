#!/usr/bin/env bash
# The test command: installs software Vulkan (Mesa lavapipe) when it is missing, so that every
# GPU test runs on a machine without a GPU, then runs the whole workspace's tests.
# CROWDFIELD_REQUIRE_GPU=1 makes a GPU test that finds no adapter fail instead of skip.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! ls /usr/share/vulkan/icd.d/lvp_icd*.json >/dev/null 2>&1; then
  echo "== installing Mesa's software Vulkan driver (lavapipe)" >&2
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq mesa-vulkan-drivers libvulkan1 >/dev/null
fi
export CROWDFIELD_REQUIRE_GPU="${CROWDFIELD_REQUIRE_GPU:-1}"
export RUST_BACKTRACE=1
# Headless machines have no XDG_RUNTIME_DIR; the Vulkan driver's Wayland library then prints a
# harmless "error: XDG_RUNTIME_DIR is invalid" per GPU context. A private folder silences it.
if [ -z "${XDG_RUNTIME_DIR:-}" ]; then
  XDG_RUNTIME_DIR="$(mktemp -d)"
  export XDG_RUNTIME_DIR
fi
cargo test --workspace --all-targets "$@"
cargo test --workspace --doc
