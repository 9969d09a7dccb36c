"""Scenes that change while they run, from Python: exit events, sources, and the run-time API
(walkers added and removed by handle, exits opened and closed, each step's events)."""

import json

import numpy as np
import pytest

import crowdfield

DT = 0.1


def room(tmp_path, spawns, events=(), east=None, name="room.json"):
    """A 20 m x 10 m room with a west exit (x < 1 m) and an east exit (x >= 19 m)."""
    east_exit = {"name": "east exit", "rect": {"min": [19, 0], "max": [20, 10]}, **(east or {})}
    doc = {
        "version": 1,
        "name": "room",
        "grid": {"cols": 40, "rows": 20, "cell_size": 0.5},
        "model": "pedestrian",
        "groups": [
            {
                "name": "people",
                "goals": [{"name": "west exit", "rect": {"min": [0, 0], "max": [1, 10]}}, east_exit],
                "spawns": list(spawns),
                "speed": {"min": 1.2, "max": 1.4},
                "radius": 0.2,
            }
        ],
    }
    if events:
        doc["events"] = list(events)
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return crowdfield.load_map(path)


def run_out(sim):
    events = []
    while not sim.finished:
        events.append(sim.step())
    return events


def test_an_exit_closing_at_t_takes_no_one_after_t_plus_a_step(tmp_path):
    m = room(
        tmp_path,
        [{"rect": {"min": [13, 2], "max": [18, 8]}, "count": 40}],
        [{"at": 2, "close": "east exit"}],
    )
    sim = m.simulation(seed=1, dt=DT, max_time=120, trajectory_every=None)
    events = run_out(sim)
    changes = [e.exits for e in events if e.exits]
    assert len(changes) == 1 and changes[0][0][1:] == ("east exit", False)
    arrivals = sim.arrivals()
    east = arrivals[arrivals["exit"] == 1]
    assert len(east) > 0 and east["time"].max() <= 2 + DT + 1e-9
    assert (arrivals["exit"] == 0).sum() > 0 and len(arrivals) == 40
    report = sim.report()
    assert report["complete"] and report["exit_changes"] == [{"time": 2.0, "name": "east exit", "open": False}]


def test_an_exit_opening_at_t_takes_no_one_before(tmp_path):
    m = room(
        tmp_path,
        [{"rect": {"min": [15, 2], "max": [18, 8]}, "count": 20}],
        [{"at": 6, "open": "east exit"}, {"at": 0, "close": "west exit"}],
        east={"closed": True},
    )
    sim = m.simulation(seed=2, dt=DT, max_time=120, trajectory_every=None)
    assert not sim.exit_open(0, 1) and sim.exit_open(0, 0)
    run_out(sim)
    arrivals = sim.arrivals()
    assert len(arrivals) == 20 and (arrivals["exit"] == 1).all() and (arrivals["time"] > 6).all()


def test_a_source_of_2_per_second_for_30_s_brings_60_walkers(tmp_path):
    m = room(tmp_path, [{"rect": {"min": [8, 3], "max": [12, 7]}, "rate": 2.0, "from": 0, "until": 30}])
    sim = m.simulation(seed=3, dt=DT, max_time=200, trajectory_every=None)
    entered = []
    while not sim.finished:
        began = sim.time
        e = sim.step()
        entered += [began] * len(e.entered)
    assert len(entered) == 60
    assert np.allclose(entered, np.arange(60) * 0.5)
    total = sim.report()["total"]
    assert total["agents"] == 60 and total["arrived"] == 60


def test_listed_times(tmp_path):
    m = room(tmp_path, [{"rect": {"min": [8, 3], "max": [12, 7]}, "times": [1, 2.5, 4]}])
    sim = m.simulation(seed=3, dt=DT, max_time=60, trajectory_every=None)
    entered = []
    while not sim.finished:
        began = sim.time
        if len(sim.step().entered):
            entered.append(began)
    assert np.allclose(entered, [1, 2.5, 4])


def test_handles_stay_valid_as_others_leave(tmp_path):
    m = room(tmp_path, [{"rect": {"min": [15, 3], "max": [18, 7]}, "count": 15}])
    sim = m.simulation(seed=6, dt=DT, max_time=120, trajectory_every=None)
    slow = sim.add_walker(5.0, 5.0, group="people", speed=0.3, radius=0.2)
    other = sim.add_walker(6.0, 5.0, speed=1.3, radius=0.2)
    assert (slow, other) == (15, 16)
    for _ in range(60):
        step = sim.step()
        for handle in step.arrivals["id"]:
            with pytest.raises(KeyError):
                sim.position(int(handle))
        i = int(np.searchsorted(sim.handles, slow))
        assert sim.handles[i] == slow
        assert tuple(sim.positions[i]) == sim.position(slow)
        assert np.hypot(*sim.velocity(slow)) <= 0.3 + 1e-4
    assert len(sim.arrivals()) >= 10
    sim.remove_walker(other)
    with pytest.raises(KeyError, match=str(other)):
        sim.remove_walker(other)
    two = [sim.add_walker(5.0, 5.0, radius=0.2), sim.add_walker(5.0, 7.0, radius=0.2)]
    with pytest.raises(KeyError, match=str(other)):
        sim.remove_walkers([two[0], other])
    assert set(two) <= set(sim.handles.tolist()), "a bad handle removes none"
    assert sim.remove_walkers(np.array([two[0], two[1], two[0]])) == 2
    assert not set(two) & set(sim.handles.tolist())
    with pytest.raises(ValueError, match="speed"):
        sim.add_walker(5.0, 5.0, speed=9.0, radius=0.2)
    with pytest.raises(ValueError, match="north exit"):
        sim.set_exit_open("north exit", False)
    assert sim.set_exit_open("east exit", False) == 1 and not sim.exit_open(0, 1)
    assert sim.exit_changes()[-1][1:] == ("east exit", False)
    run_out(sim)
    total = sim.report()["total"]
    assert total["removed"] == 3 and total["agents"] == 19


def test_the_same_seed_gives_the_same_report_with_events(tmp_path):
    m = room(
        tmp_path,
        [
            {"rect": {"min": [8, 3], "max": [12, 7]}, "rate": 1.5, "until": 20, "arrivals": "poisson"},
            {"rect": {"min": [14, 3], "max": [17, 7]}, "count": 20},
        ],
        [{"at": 5, "close": "east exit"}, {"at": 12, "open": "east exit"}],
    )

    def report(seed):
        sim = m.simulation(seed=seed, dt=DT, max_time=90, trajectory_every=None)
        run_out(sim)
        return sim.report()

    a = report(5)
    assert a == report(5) and a != report(6)
    assert [c["open"] for c in a["exit_changes"]] == [False, True]


def test_an_unknown_exit_in_events_names_the_path(tmp_path):
    with pytest.raises(ValueError, match=r"events\[0\]\.close: \"north exit\""):
        room(
            tmp_path,
            [{"rect": {"min": [8, 3], "max": [12, 7]}, "count": 5}],
            [{"at": 3, "close": "north exit"}],
        )


def test_the_guide_example_runs(root, capsys):
    guide = (root / "docs" / "python.md").read_text()
    section = guide[guide.index("### Changing the scene while it runs"):]
    start = section.index("```python\n") + len("```python\n")
    example = section[start:section.index("```", start)]
    exec(compile(example, "python.md", "exec"), {})
    printed = capsys.readouterr().out
    assert "east stairs" in printed and "61" in printed
