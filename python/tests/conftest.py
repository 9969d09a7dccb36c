"""Shared fixtures: the repository root and the `crowdfield` command the tests compare with."""

import functools
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def root() -> Path:
    return ROOT


@pytest.fixture
def crowdfield_bin() -> str:
    return find_crowdfield_bin()


@functools.cache
def find_crowdfield_bin() -> str:
    """The command line: $CROWDFIELD_BIN, else the workspace's debug or release build, else one
    built now with cargo (once per test run)."""
    given = os.environ.get("CROWDFIELD_BIN")
    if given:
        return given
    for profile in ("debug", "release"):
        candidate = ROOT / "target" / profile / "crowdfield"
        if candidate.is_file():
            return str(candidate)
    if shutil.which("cargo") is None:
        pytest.fail("no crowdfield command: set CROWDFIELD_BIN or install cargo")
    subprocess.run(["cargo", "build", "--quiet", "--bin", "crowdfield"], cwd=ROOT, check=True)
    return str(ROOT / "target" / "debug" / "crowdfield")
