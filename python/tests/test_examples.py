"""The example script and the README's Python section run as written."""

import re
import subprocess
import sys

import pytest


def test_plot_hall_writes_a_png(root, tmp_path):
    pytest.importorskip("matplotlib")
    out = tmp_path / "hall.png"
    result = subprocess.run(
        [sys.executable, str(root / "python" / "examples" / "plot_hall.py"), "--out", str(out), "--local", "none"],
        cwd=root, capture_output=True, text=True, check=True,
    )
    assert "wrote" in result.stdout
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and out.stat().st_size > 20_000


def python_blocks(text):
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def test_readme_python_section_runs(root, tmp_path):
    readme = (root / "README.md").read_text()
    section = readme.split("## Use it from Python", 1)
    assert len(section) == 2, "README.md has a 'Use it from Python' section"
    blocks = python_blocks(section[1].split("\n## ", 1)[0])
    assert blocks, "the section shows Python code"
    for block in blocks:
        subprocess.run([sys.executable, "-c", block], cwd=root, check=True, timeout=300)


def test_docs_python_examples_run(root):
    blocks = python_blocks((root / "docs" / "python.md").read_text())
    assert blocks
    for block in blocks:
        subprocess.run([sys.executable, "-c", block], cwd=root, check=True, timeout=300)
