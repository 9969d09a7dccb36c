"""Routes, goals and speed regions from Python: waiting areas released by the API, goals set
for a walker and a group, exit shares, regions changed at run time, and the stages passed in
each step's events."""

import json

import pytest

import crowdfield

DT = 0.1


def room(tmp_path, group_keys, regions=(), events=()):
    """A 20 m x 10 m room with a west exit (x < 1 m) and an east exit (x >= 19 m)."""
    doc = {
        "version": 1,
        "name": "room",
        "grid": {"cols": 40, "rows": 20, "cell_size": 0.5},
        "model": "pedestrian",
        "groups": [
            {
                "name": "people",
                "goals": [
                    {"name": "west exit", "rect": {"min": [0, 0], "max": [1, 10]}},
                    {"name": "east exit", "rect": {"min": [19, 0], "max": [20, 10]}},
                ],
                "speed": {"min": 1.2, "max": 1.4},
                "radius": 0.2,
                **group_keys,
            }
        ],
    }
    if regions:
        doc["regions"] = list(regions)
    if events:
        doc["events"] = list(events)
    path = tmp_path / "room.json"
    path.write_text(json.dumps(doc))
    return crowdfield.load_map(path)


PLATFORM = {
    "spawns": [{"rect": {"min": [2, 3], "max": [5, 7]}, "count": 10}],
    "route": [
        {"wait": {"name": "platform", "rect": {"min": [9, 2], "max": [11, 8]}, "seconds": 2, "until": "released"}}
    ],
    "exit_shares": {"east exit": 1.0},
}


def test_a_waiting_area_holds_its_walkers_until_released(tmp_path):
    sim = room(tmp_path, PLATFORM).simulation(seed=3, dt=DT, max_time=200, trajectory_every=None)
    sim.run(until=40)
    assert len(sim.arrivals()) == 0 and len(sim.handles) == 10
    assert sim.stages_passed() == []
    with pytest.raises(ValueError, match="platform"):
        sim.release("nowhere")
    assert sim.release("platform") == 1
    events = sim.step()
    assert len(events.stages) == 10
    handle, group, stage, time, waited = events.stages[0]
    assert (group, stage, waited) == (0, "platform", True) and time == pytest.approx(40.0)
    sim.run()
    arrivals = sim.arrivals()
    assert len(arrivals) == 10 and (arrivals["exit"] == 1).all()
    assert len(sim.stages_passed()) == 10


def test_a_walker_and_a_group_sent_to_an_exit_leave_by_it(tmp_path):
    m = room(tmp_path, {"spawns": [{"rect": {"min": [2, 2], "max": [4, 8]}, "count": 8}]})
    sim = m.simulation(seed=6, dt=DT, max_time=200, trajectory_every=None)
    sent = int(sim.handles[2])
    sim.set_walker_goal(sent, "east exit")
    with pytest.raises(ValueError, match="north exit"):
        sim.set_walker_goal(sent, "north exit")
    with pytest.raises(KeyError):
        sim.set_walker_goal(9999, None)
    sim.run()
    arrivals = sim.arrivals()
    assert len(arrivals) == 8
    for a in arrivals:
        assert a["exit"] == (1 if a["id"] == sent else 0)

    sim = m.simulation(seed=6, dt=DT, max_time=200, trajectory_every=None)
    assert sim.set_group_goal("people", "east exit") == 8
    with pytest.raises(ValueError):
        sim.set_group_goal("crowd", None)
    sim.run()
    assert (sim.arrivals()["exit"] == 1).all()


def test_exit_shares_split_the_group_within_a_binomial_bound(tmp_path):
    m = room(
        tmp_path,
        {
            "spawns": [{"rect": {"min": [5, 0.5], "max": [13, 9.5]}, "count": 200}],
            "exit_shares": {"west exit": 0.3, "east exit": 0.7},
        },
    )
    sim = m.simulation(seed=4, dt=DT, max_time=300, trajectory_every=None)
    sim.run()
    arrivals = sim.arrivals()
    west = int((arrivals["exit"] == 0).sum())
    # Binomial(200, 0.3): mean 60, standard deviation 6.5.
    assert len(arrivals) == 200 and abs(west - 60) <= 26


def test_set_region_changes_a_region_and_refuses_bad_values(tmp_path):
    m = room(
        tmp_path,
        {"spawns": [{"rect": {"min": [2, 2], "max": [4, 8]}, "count": 4}]},
        regions=[{"name": "smoke", "rect": {"min": [6, 0], "max": [14, 10]}, "speed_factor": 0.5}],
        events=[{"at": 1, "region": "smoke", "speed_factor": 0.3}],
    )
    sim = m.simulation(seed=9, dt=DT, max_time=60, trajectory_every=None)
    assert sim.region("smoke") == (0.5, 0.0)
    assert sim.region("fog") is None
    sim.run(until=1.05)
    assert sim.region("smoke") == (0.3, 0.0)
    sim.set_region("smoke", discomfort=2.0)
    assert sim.region("smoke") == (0.3, 2.0)
    with pytest.raises(ValueError, match="speed_factor"):
        sim.set_region("smoke", speed_factor=0.0)
    with pytest.raises(ValueError, match="smoke"):
        sim.set_region("fog", speed_factor=0.5)
