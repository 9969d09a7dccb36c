"""Moving obstacles from Python: added, moved and removed by handle, their positions, the map's
``movers``, and no body ever overlapping one."""

import json

import pytest

import crowdfield

DT = 0.1
RADIUS = 0.2


def corridor(tmp_path, count=40, movers=()):
    """A 30 m x 8 m corridor with an exit along its east end and a crowd in its west end."""
    doc = {
        "version": 1,
        "name": "corridor",
        "grid": {"cols": 60, "rows": 16, "cell_size": 0.5},
        "model": "pedestrian",
        "groups": [
            {
                "name": "people",
                "goals": [{"name": "east exit", "rect": {"min": [29.5, 0], "max": [30, 8]}}],
                "spawns": [{"rect": {"min": [1, 1], "max": [9, 7]}, "count": count}],
                "speed": {"min": 1.2, "max": 1.4},
                "radius": RADIUS,
            }
        ],
    }
    if movers:
        doc["movers"] = list(movers)
    path = tmp_path / "corridor.json"
    path.write_text(json.dumps(doc))
    return crowdfield.load_map(path)


def least_clearance(sim):
    """The smallest distance from a walker's centre to an obstacle's outline, less its radius."""
    least = float("inf")
    for handle, _, _, _ in sim.obstacles():
        for x, y in sim.positions:
            least = min(least, sim.obstacle_distance(handle, x, y) - RADIUS)
    return least


def test_an_obstacle_added_moved_and_removed_never_overlaps_a_body(tmp_path):
    sim = corridor(tmp_path).simulation(seed=2, dt=DT, max_time=200, trajectory_every=None)
    cart = sim.add_obstacle({"rect": {"min": [-1, -1.5], "max": [1, 1.5]}}, (24, 4), (-1.0, 0.0))
    assert sim.obstacles() == [(cart, "", (24.0, 4.0), (-1.0, 0.0))]
    pushed = 0
    for _ in range(60):
        events = sim.step()
        assert len(events.blocked) == 0
        pushed += events.pushed
        assert least_clearance(sim) >= -1e-3
    x, y = sim.obstacle_position(cart)
    assert x == pytest.approx(24 - 6.0) and y == 4.0
    sim.move_obstacle(cart, (12, 4), velocity=(0.0, 0.0))
    for _ in range(20):
        sim.step()
        assert least_clearance(sim) >= -1e-3
    assert sim.obstacle_position(cart) == (12.0, 4.0)
    sim.remove_obstacle(cart)
    assert sim.obstacles() == []
    with pytest.raises(KeyError):
        sim.remove_obstacle(cart)
    while not sim.finished:
        sim.step()
    assert len(sim.arrivals()) == 40


def test_a_map_mover_and_a_path_obstacle_move_at_their_speed(tmp_path):
    tram = {"name": "tram", "circle": {"center": [0, 0], "radius": 1}, "path": [[28, 2], [2, 2]], "speed": 2, "from": 1}
    sim = corridor(tmp_path, count=10, movers=[tram]).simulation(seed=0, dt=DT, max_time=60, trajectory_every=None)
    lift = sim.add_obstacle_on_path({"circle": {"center": [0, 0], "radius": 0.5}}, [(5, 7), (5, 5)], 0.5, loop=True)
    for _ in range(30):
        sim.step()
        assert least_clearance(sim) >= -1e-3
    (h0, name, (x, y), (vx, vy)), (h1, _, (lx, ly), _) = sim.obstacles()
    assert (h0, name, h1) == (0, "tram", lift)
    # t = 3 s: two seconds at 2 m/s from x = 28; the lift 1.5 m along its 2 m leg.
    assert (x, y, vx, vy) == pytest.approx((24, 2, -2, 0))
    assert (lx, ly) == pytest.approx((5, 5.5))


def test_bad_shapes_name_the_key_and_the_value(tmp_path):
    sim = corridor(tmp_path, count=1).simulation(seed=0, dt=DT, trajectory_every=None)
    with pytest.raises(ValueError, match="radius -1"):
        sim.add_obstacle({"circle": {"center": [0, 0], "radius": -1}}, (5, 5))
    with pytest.raises(ValueError, match="polygon"):
        sim.add_obstacle({"polygon": {"points": [[0, 0], [1, 0], [0, 1]]}}, (5, 5))
    with pytest.raises(KeyError):
        sim.move_obstacle(9, (1, 1))


def test_the_guide_example_runs(root, capsys):
    guide = (root / "docs" / "python.md").read_text()
    section = guide[guide.index("### Moving obstacles"):]
    start = section.index("```python\n") + len("```python\n")
    example = section[start:section.index("```", start)]
    exec(compile(example, "python.md", "exec"), {})
    assert "[(0, '', (10.0, 10.0), (0.0, -0.5))]" in capsys.readouterr().out
