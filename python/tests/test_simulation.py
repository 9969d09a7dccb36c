"""Maps, plans and simulations from Python against the `crowdfield` command on the same map
and seed."""

import json
import subprocess
import threading

import numpy as np
import pytest

import crowdfield


def test_plan_matches_the_solve_command(root, crowdfield_bin, tmp_path):
    m = crowdfield.load_map(root / "maps" / "hall.json")
    assert m.shape == (80, 120) and m.cell_size == 0.5 and m.group_names == ["audience"]
    plan = m.plan()
    assert plan.rho.shape == (80, 120)
    assert plan.speed.shape == (80, 120, 4) and plan.cost.shape == (80, 120, 4)
    (phi,) = plan.potentials
    (gx, gy) = plan.gradients[0]
    assert phi.dtype == np.float64 and gx.dtype == np.float32 and gy.shape == (80, 120)
    assert (phi[plan.goals[0]] == 0).all()
    assert np.isinf(phi[m.obstacle]).all()
    subprocess.run([crowdfield_bin, "solve", str(root / "maps" / "hall.json"), "--out", str(tmp_path)],
                   check=True, capture_output=True)
    np.testing.assert_array_equal(phi, np.load(tmp_path / "audience" / "potential.npy"))
    np.testing.assert_array_equal(gx, np.load(tmp_path / "audience" / "gradient_x.npy"))
    np.testing.assert_array_equal(gy, np.load(tmp_path / "audience" / "gradient_y.npy"))
    second = m.plan(order=2)
    assert not np.array_equal(second.potentials[0], phi)


@pytest.mark.parametrize("local, seed", [("orca", 3), ("none", 0)])
def test_report_matches_the_simulate_command(root, crowdfield_bin, tmp_path, local, seed):
    map_path = root / "maps" / "hall.json"
    subprocess.run(
        [crowdfield_bin, "simulate", str(map_path), "--out", str(tmp_path), "--seed", str(seed),
         "--local", local, "--max-time", "40", "--trajectories=none", "--quiet"],
        check=True, capture_output=True,
    )
    with open(tmp_path / "report.json") as f:
        expected = json.load(f)
    sim = crowdfield.load_map(map_path).simulation(seed=seed, local=local, max_time=40.0, trajectory_every=0)
    sim.run()
    assert sim.finished
    report = sim.report()
    assert report == expected
    assert report["seed"] == seed and report["steps"] == sim.steps


def test_stepping_positions_and_trajectories(root):
    m = crowdfield.load_map(root / "maps" / "bottleneck.json")
    sim = m.simulation(seed=1, local="orca", max_time=5.0, trajectory_every=2)
    n0 = len(sim.ids)
    assert sim.positions.shape == (n0, 2) and sim.positions.dtype == np.float32
    assert sim.velocities.shape == (n0, 2) and sim.groups.dtype == np.uint32
    start = sim.positions.copy()
    sim.step()
    assert sim.steps == 1 and sim.time == pytest.approx(sim.dt)
    assert not np.array_equal(start, sim.positions), "the walkers move"
    steps = sim.run(until=2.0)
    assert 1.9 <= sim.time < 2.0 + sim.dt and steps > 0 and not sim.finished
    sim.run()
    assert sim.finished and sim.time == pytest.approx(5.0, abs=sim.dt)
    rows = sim.trajectories(as_frame=False)
    assert rows.dtype.names == ("t", "id", "group", "x", "y", "vx", "vy")
    times = np.unique(rows["t"])
    assert times[0] == 0.0 and len(rows[rows["t"] == 0.0]) == n0
    np.testing.assert_allclose(np.diff(times), 2 * sim.dt, rtol=1e-9)
    first = rows[rows["t"] == 0.0]
    np.testing.assert_array_equal(np.stack([first["x"], first["y"]], axis=1), start)
    pd = pytest.importorskip("pandas")
    frame = sim.trajectories()
    assert isinstance(frame, pd.DataFrame) and list(frame.columns) == list(rows.dtype.names)
    assert len(frame) == len(rows)


def test_steps_release_the_gil(root):
    # Another Python thread keeps running while a simulation steps.
    sim = crowdfield.load_map(root / "maps" / "hall.json").simulation(seed=0, trajectory_every=0, max_time=30.0)
    ticks = []
    stop = threading.Event()

    def count():
        while not stop.is_set():
            ticks.append(1)

    t = threading.Thread(target=count)
    t.start()
    try:
        sim.run()
    finally:
        stop.set()
        t.join()
    assert sim.finished and len(ticks) > 100


def test_errors_carry_the_command_messages(root, crowdfield_bin, tmp_path):
    bad = tmp_path / "bad.json"
    source = json.loads((root / "maps" / "hall.json").read_text())
    source["grid"]["cell_size"] = -1.0
    bad.write_text(json.dumps(source))
    result = subprocess.run([crowdfield_bin, "simulate", str(bad), "--out", str(tmp_path / "out")],
                            capture_output=True, text=True)
    assert result.returncode != 0
    with pytest.raises(ValueError) as raised:
        crowdfield.load_map(bad)
    message = str(raised.value)
    assert "cell_size" in message and f"error: {message}" in result.stderr
    with pytest.raises(OSError, match="missing.json"):
        crowdfield.load_map(tmp_path / "missing.json")
    m = crowdfield.load_map(root / "maps" / "hall.json")
    with pytest.raises(ValueError, match="local"):
        m.simulation(local="rvo")
    with pytest.raises(ValueError, match="dt"):
        m.simulation(dt=-1.0)
    with pytest.raises(ValueError, match="order"):
        m.plan(order=3)
    with pytest.raises(ValueError, match="seed"):
        m.simulation(seed=-1)


def test_help_shows_the_docstrings():
    for fn in (crowdfield.distance, crowdfield.travel_time, crowdfield.eikonal, crowdfield.load_map,
               crowdfield.Map.simulation, crowdfield.Simulation.report):
        assert fn.__doc__ and len(fn.__doc__) > 40
    import pydoc

    text = pydoc.render_doc(crowdfield, renderer=pydoc.plaintext)
    assert "scikit-fmm" in text and "travel_time" in text
