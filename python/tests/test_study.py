"""crowdfield.study: the statistics as a DataFrame, the same numbers as the command's
study.json (numpy recomputes them from the runs), and its argument errors."""

import json
import subprocess

import numpy as np
import pandas as pd
import pytest

import crowdfield


def _room(tmp_path):
    """A 12 m x 8 m room with a 1 m exit on each side ("west", "east") and 30 people."""
    walls = [
        {"rect": {"min": [0, 0], "max": [12, 0.25]}},
        {"rect": {"min": [0, 7.75], "max": [12, 8]}},
        {"rect": {"min": [0, 0], "max": [0.25, 8]}},
        {"rect": {"min": [11.75, 0], "max": [12, 8]}},
        {"rect": {"min": [0, 3.5], "max": [0.25, 4.5]}, "value": 0},
        {"rect": {"min": [11.75, 3.5], "max": [12, 4.5]}, "value": 0},
    ]
    m = {
        "version": 1,
        "name": "two exits",
        "model": "pedestrian",
        "grid": {"cols": 48, "rows": 32, "cell_size": 0.25},
        "layers": {"obstacles": {"shapes": walls}},
        "groups": [
            {
                "name": "occupants",
                "goals": [
                    {"rect": {"min": [0, 3.5], "max": [0.25, 4.5]}, "name": "west", "width": 1},
                    {"rect": {"min": [11.75, 3.5], "max": [12, 4.5]}, "name": "east", "width": 1},
                ],
                "spawns": [{"rect": {"min": [2, 1], "max": [6, 7]}, "count": 30, "name": "hall"}],
            }
        ],
    }
    path = tmp_path / "room.json"
    path.write_text(json.dumps(m))
    return path


def test_study_returns_the_scenarios_as_a_frame(tmp_path):
    room = _room(tmp_path)
    frame = crowdfield.study(room, tmp_path / "study", seeds=3, discount_exits=True, aset=60)
    assert isinstance(frame, pd.DataFrame)
    assert list(frame.index) == ["as drawn", 'exit "west" blocked', 'exit "east" blocked']
    assert (frame["runs"] == 3).all() and (frame["complete_runs"] == 3).all()
    # The frame holds study.json's numbers, and numpy finds them in the runs' results.
    written = json.loads((tmp_path / "study" / "study.json").read_text())
    assert frame.attrs["study"] == written
    for name, row in frame.iterrows():
        sc = next(s for s in written["scenarios"] if s["name"] == name)
        times = np.array([e["evacuation_time"] for e in sc["seeds"]], dtype=float)
        assert row["mean"] == pytest.approx(times.mean(), rel=1e-12)
        assert row["sd"] == pytest.approx(times.std(ddof=1), rel=1e-12)
        assert row["p95"] == pytest.approx(np.percentile(times, 95), rel=1e-12)
        assert row["margin"] == pytest.approx(60 - row["p95"], rel=1e-12)
    # One exit left is never faster than two.
    assert frame.loc['exit "west" blocked', "min"] >= frame.loc["as drawn", "min"]
    assert frame.loc['exit "east" blocked', "min"] >= frame.loc["as drawn", "min"]


def test_the_command_writes_the_same_study(tmp_path, crowdfield_bin):
    room = _room(tmp_path)
    crowdfield.study(room, tmp_path / "py", seeds=2)
    subprocess.run(
        [crowdfield_bin, "study", str(room), "--seeds", "2", "--quiet", "--out", str(tmp_path / "cli")], check=True
    )
    assert (tmp_path / "py" / "study.json").read_bytes() == (tmp_path / "cli" / "study.json").read_bytes()


def test_study_arguments_are_checked(tmp_path):
    room = _room(tmp_path)
    with pytest.raises(ValueError, match="seeds: 0: expected 1 to"):
        crowdfield.study(room, tmp_path / "s", seeds=0)
    with pytest.raises(ValueError, match="aset"):
        crowdfield.study(room, tmp_path / "s", seeds=1, aset="soon")
    bad = tmp_path / "bad.json"
    bad.write_text('{"name": "x", "closed_exits": ["north"]}')
    with pytest.raises(ValueError, match=r"bad\.json.*closed_exits\[0\].*north"):
        crowdfield.study(room, tmp_path / "s", seeds=1, scenarios=[bad])
