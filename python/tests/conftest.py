"""Shared fixtures: the repository root and the `crowdfield` command the tests compare with."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


@pytest.fixture(scope="session")
def crowdfield_bin() -> str:
    """The command line: $CROWDFIELD_BIN, else the workspace's debug or release build, else one
    built now with cargo."""
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
