"""The example script and the README's Python section run as written."""

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest


def test_plot_hall_writes_a_png(root, tmp_path):
    pytest.importorskip("matplotlib")
    # By default: out/hall.png under the working directory (ignored by the repository's
    # .gitignore when that is the repository's root), the command's default local layer.
    result = subprocess.run(
        [sys.executable, str(root / "python" / "examples" / "plot_hall.py")],
        cwd=tmp_path, capture_output=True, text=True, check=True,
    )
    out = tmp_path / "out" / "hall.png"
    assert f"wrote {Path('out') / 'hall.png'}" in result.stdout and "(local none)" in result.stdout
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and out.stat().st_size > 20_000
    assert "/out" in (root / ".gitignore").read_text().split()
    assert "out/hall.png" in (root / "python" / "examples" / "plot_hall.py").read_text().split('"""')[1]


def test_plot_hall_titles_stay_inside_the_figure(root):
    pytest.importorskip("matplotlib")
    spec = importlib.util.spec_from_file_location("plot_hall", root / "python" / "examples" / "plot_hall.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    fig, summary = module.plot(str(root / "maps" / "hall.json"), seed=0, local="none")
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    figure_box = fig.bbox
    boxes = [ax.get_window_extent(renderer) for ax in fig.axes]
    titles = [(ax.get_title(), ax.title) for ax in fig.axes[:2]] + [(fig.get_suptitle(), fig._suptitle)]
    for text, title in titles:
        box = title.get_window_extent(renderer)
        assert text
        assert figure_box.x0 <= box.x0 and box.x1 <= figure_box.x1, text
        assert figure_box.y0 <= box.y0 and box.y1 <= figure_box.y1, text
        for other in boxes:
            assert not box.overlaps(other), f"{text!r} runs over an axes or the colour bar"


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


# Any RuntimeWarning but crowdfield's own (the run's warnings, which the examples show) fails.
STRICT_WARNINGS = (
    "import warnings, crowdfield\n"
    "warnings.simplefilter('error', RuntimeWarning)\n"
    "warnings.simplefilter('default', crowdfield.CrowdfieldWarning)\n"
)


def test_docs_python_examples_run(tmp_path):
    # Outside the repository: the examples use the maps the package ships.
    blocks = python_blocks((Path(__file__).resolve().parents[2] / "docs" / "python.md").read_text())
    assert blocks
    for block in blocks:
        if "pedpy" in block:
            pytest.importorskip("pedpy")
        subprocess.run([sys.executable, "-c", STRICT_WARNINGS + block], cwd=tmp_path, check=True, timeout=300)
