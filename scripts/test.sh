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
# == Report clients: PedPy (PyPI) reads the SQLite trajectories, headless Chromium renders
# report.html (tests/pedpy_client.rs, tests/planner_outputs.rs); PedPy brings shapely, which
# tests/import.rs and python/tests/test_import.py hold the imported areas to. Installed only when missing;
# pip keeps its wheel cache (~/.cache/pip), so a cached CI machine skips the downloads.
if ! python3 -c "import pedpy" >/dev/null 2>&1; then
  echo "== installing PedPy (PyPI)" >&2
  # A Debian-managed Python refuses a plain install (PEP 668); then the flag that allows it.
  python3 -m pip install -q --disable-pip-version-check pedpy >/dev/null 2>&1 \
    || python3 -m pip install -q --disable-pip-version-check --break-system-packages pedpy >/dev/null
fi
if ! command -v chromium >/dev/null 2>&1; then
  echo "== installing Chromium (Debian)" >&2
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends chromium >/dev/null
fi
export CROWDFIELD_REQUIRE_PEDPY="${CROWDFIELD_REQUIRE_PEDPY:-1}"
export CROWDFIELD_REQUIRE_BROWSER="${CROWDFIELD_REQUIRE_BROWSER:-1}"
# == end of report clients

# == Cluster: a one-node Slurm (Debian's slurm-wlm with munge) for the study run as a Slurm job
# array (tests/study.rs); scripts/slurm_local.sh installs and starts it when none answers.
bash scripts/slurm_local.sh
export CROWDFIELD_REQUIRE_SLURM="${CROWDFIELD_REQUIRE_SLURM:-1}"

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

# == Python package (python/): pip builds it from this checkout, then pytest runs its tests
# (scikit-fmm agreement, the native solver and simulation against the command built above, the
# README's Python section, the example). The build uses the `ci` profile (the dev profile's
# optimisation: a release build of the library does not fit the test budget on 2 cores);
# `pip install ./python` and `maturin build --release` build optimised. CROWDFIELD_SKIP_PYTHON=1
# leaves the Python part out.
if [ "${CROWDFIELD_SKIP_PYTHON:-0}" != 1 ]; then
  pip_install() {
    # A Debian-managed Python refuses a plain install (PEP 668); then the flag that allows it.
    python3 -m pip install -q --disable-pip-version-check "$@" >/dev/null 2>&1 \
      || python3 -m pip install -q --disable-pip-version-check --break-system-packages "$@" >/dev/null
  }
  missing=()
  for pair in maturin:maturin numpy:numpy skfmm:scikit-fmm pytest:pytest; do
    python3 -c "import ${pair%%:*}" >/dev/null 2>&1 || missing+=("${pair#*:}")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "== installing ${missing[*]} (PyPI)" >&2
    pip_install "${missing[@]}"
  fi
  echo "== building the Python package (pip install ./python, profile ci)" >&2
  MATURIN_PEP517_ARGS="--profile ci" pip_install --no-build-isolation --no-deps --force-reinstall ./python
  CROWDFIELD_BIN="$PWD/target/debug/crowdfield" python3 -m pytest -q python/tests
fi

