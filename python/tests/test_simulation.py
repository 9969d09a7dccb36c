"""Maps, plans and simulations from Python against the `crowdfield` command on the same map
and seed."""

import json
import math
import os
import shutil
import subprocess
import sys
import threading
import warnings

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


@pytest.mark.filterwarnings("ignore::crowdfield.CrowdfieldWarning")
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
    sim = crowdfield.load_map(map_path).simulation(seed=seed, local=local, max_time=40.0, trajectory_every=None)
    sim.run()
    assert sim.finished
    report = sim.report()
    assert report == expected
    assert report["seed"] == seed and report["steps"] == sim.steps


@pytest.mark.filterwarnings("ignore::crowdfield.CrowdfieldWarning")
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
    assert rows.dtype.names == ("t", "id", "group", "x", "y", "vx", "vy", "frame")
    times = np.unique(rows["t"])
    assert times[0] == 0.0 and len(rows[rows["t"] == 0.0]) == n0
    np.testing.assert_allclose(np.diff(times), 2 * sim.dt, rtol=1e-9)
    first = rows[rows["t"] == 0.0]
    np.testing.assert_array_equal(np.stack([first["x"], first["y"]], axis=1), start)
    pd = pytest.importorskip("pandas")
    frame = sim.trajectories()
    assert isinstance(frame, pd.DataFrame) and list(frame.columns) == list(rows.dtype.names)
    assert len(frame) == len(rows)


@pytest.mark.filterwarnings("ignore::crowdfield.CrowdfieldWarning")
def test_steps_release_the_gil(root):
    # Another Python thread keeps running while a simulation steps.
    sim = crowdfield.load_map(root / "maps" / "hall.json").simulation(seed=0, trajectory_every=None, max_time=30.0)
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


def test_unknown_names_are_refused_with_the_argument_and_the_names(root):
    m = crowdfield.load_map(root / "maps" / "hall.json")
    cases = [
        (dict(local="rvo"), 'local: "rvo": expected one of "none", "boids", "orca", "boids+orca"'),
        (dict(local_backend="cuda"), 'local_backend: "cuda": expected one of "cpu-single", "cpu-multi", "gpu"'),
        (dict(backend="tpu"), 'backend: "tpu": expected one of "cpu", "gpu", "auto"'),
        (dict(model="social_force"), 'model: "social_force": expected one of "pedestrian", "continuum_crowds"'),
        (dict(speed_law="cubic"), 'speed_law: "cubic": expected one of "linear", "weidmann"'),
    ]
    for kwargs, message in cases:
        with pytest.raises(ValueError) as raised:
            m.simulation(**kwargs)
        assert str(raised.value) == message, (kwargs, str(raised.value))
    with pytest.raises(ValueError) as raised:
        m.plan(backend="tpu")
    assert str(raised.value) == 'backend: "tpu": expected one of "cpu", "gpu", "auto"'


def test_error_messages_name_the_python_arguments(root, tmp_path):
    m = crowdfield.load_map(root / "maps" / "hall.json")
    cases = [
        (dict(dt=10.0), "dt: 10"),
        (dict(dt=-1.0), "dt: -1"),
        (dict(max_time=-1.0), "max_time: -1"),
        (dict(max_time=0.001), "max_time: 0.001"),
        (dict(replan_every=0), "replan_every: 0"),
        (dict(seed=2**64), "seed: 18446744073709551616"),
        (dict(seed=1.5), "seed: 1.5"),
        (dict(backend="gpu", order=2), "order: 2"),
    ]
    for kwargs, start in cases:
        with pytest.raises(ValueError) as raised:
            m.simulation(**kwargs)
        message = str(raised.value)
        assert message.startswith(start), (kwargs, message)
        assert "SimConfig" not in message and "::" not in message and "--" not in message, message
    with pytest.raises(ValueError, match=r"leave dt=None"):
        m.simulation(dt=10.0)
    # A raster outside the map's folder: the remedy is load_map's argument.
    source = json.loads((root / "maps" / "office.json").read_text())
    text = json.dumps(source)
    assert "office_walls.png" in text
    outside = tmp_path / "map"
    outside.mkdir()
    (outside / "office.json").write_text(text.replace("office_walls.png", str(root / "maps" / "office_walls.png")))
    with pytest.raises(ValueError, match=r"allow_outside_rasters=True") as raised:
        crowdfield.load_map(outside / "office.json")
    assert "--allow" not in str(raised.value)
    crowdfield.load_map(outside / "office.json", allow_outside_rasters=True)
    # A raster that is not there is a problem of the map, as the command says: ValueError.
    (outside / "missing.json").write_text(text.replace("office_walls.png", "missing_walls.png"))
    with pytest.raises(ValueError, match="missing_walls.png"):
        crowdfield.load_map(outside / "missing.json")
    solver = m.plan(backend="auto").solver
    assert solver.startswith("cpu") and "Backend" not in solver and 'backend="gpu"' in solver, solver
    with pytest.raises(ValueError, match=r"goal: shape \(5, 4\) differs from the shape \(5, 5\) of the costs"):
        crowdfield.eikonal_anisotropic(np.ones((5, 5, 4)), np.ones((5, 4)))


def test_step_after_the_end_does_nothing(root):
    sim = crowdfield.load_map(root / "maps" / "bottleneck.json").simulation(max_time=1.0, trajectory_every=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", crowdfield.CrowdfieldWarning)
        sim.run()
    assert sim.finished
    time, steps, rows = sim.time, sim.steps, len(sim.trajectories(as_frame=False))
    assert [len(sim.step().arrivals) for _ in range(20)] == [0] * 20
    assert sim.run() == 0
    assert (sim.time, sim.steps, len(sim.trajectories(as_frame=False))) == (time, steps, rows)
    report = sim.report()
    assert report["end_time"] <= 1.0 and report["end_time"] == time and report["steps"] == steps
    with pytest.raises(ValueError, match="until"):
        sim.run(until=float("nan"))


def test_everyone_out_then_steps_do_nothing(root):
    # The corridor empties before its time limit; stepping on adds no time.
    sim = crowdfield.load_map(root / "maps" / "corridor.json").simulation(trajectory_every=None)
    sim.run()
    assert sim.finished and len(sim.ids) == 0
    time = sim.time
    assert len(sim.step().arrivals) == 0 and sim.time == time and sim.report()["end_time"] == time


def test_model_and_speed_law_match_the_simulate_command(root, crowdfield_bin, tmp_path):
    # The bottleneck has no `params`: by default the pedestrian model (with Weidmann's law);
    # --model continuum_crowds alone takes the linear law.
    map_path = root / "maps" / "bottleneck.json"
    subprocess.run(
        [crowdfield_bin, "simulate", str(map_path), "--out", str(tmp_path), "--seed", "2",
         "--model", "continuum_crowds", "--speed-law", "weidmann", "--max-time", "20",
         "--trajectory-every", "0.5s", "--quiet"],
        check=True, capture_output=True,
    )
    expected = json.loads((tmp_path / "report.json").read_text())
    m = crowdfield.load_map(map_path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", crowdfield.CrowdfieldWarning)
        sim = m.simulation(seed=2, model="continuum_crowds", speed_law="weidmann", max_time=20.0,
                           trajectory_every="0.5s")
        sim.run()
    report = sim.report()
    # Why the model ran, in the Python argument's name instead of the command's option.
    assert report["inputs"].pop("model_source") == 'model="continuum_crowds" (the map alone runs pedestrian)'
    assert expected["inputs"].pop("model_source") == "--model continuum_crowds (the map alone runs pedestrian)"
    assert report == expected
    assert (expected["model"], expected["speed_law"]) == ("continuum_crowds", "weidmann")
    for kwargs, expected_pair in [({}, ("pedestrian", "weidmann")),
                                  (dict(model="continuum_crowds"), ("continuum_crowds", "linear")),
                                  (dict(speed_law="linear"), ("pedestrian", "linear"))]:
        report = m.simulation(max_time=1.0, trajectory_every=None, **kwargs).report()
        assert (report["model"], report["speed_law"]) == expected_pair
    # The seconds form samples as the command's trajectories.sqlite does.
    import sqlite3

    with sqlite3.connect(tmp_path / "trajectories.sqlite") as db:
        fps = float(db.execute("SELECT value FROM metadata WHERE key = 'fps'").fetchone()[0])
        frames = db.execute("SELECT COUNT(DISTINCT frame) FROM trajectory_data").fetchone()[0]
    assert sim.trajectory_every == round(0.5 / sim.dt) and sim.frame_rate == pytest.approx(fps)
    rows = sim.trajectories(as_frame=False)
    assert len(np.unique(rows["frame"])) == frames
    np.testing.assert_array_equal(rows["frame"], np.rint(rows["t"] * sim.frame_rate))
    assert m.simulation(trajectory_every="3", max_time=1.0).trajectory_every == 3
    for bad, name in [(dict(model="social_force"), "model"), (dict(speed_law="greenshields"), "speed_law"),
                      (dict(trajectory_every="0s"), "trajectory_every"),
                      (dict(trajectory_every="half a second"), "trajectory_every"),
                      (dict(trajectory_every=-1), "trajectory_every")]:
        with pytest.raises(ValueError, match=name):
            m.simulation(**bad)


def test_trajectory_every_follows_the_commands_rule(root, crowdfield_bin, tmp_path):
    m = crowdfield.load_map(root / "maps" / "corridor.json")
    # The command refuses 0 steps and an interval longer than the run; so does Python, in the
    # same words with the argument's name.
    for every, words in [(0, 'trajectory_every: "0": expected at least 1 step'),
                         ("1e300s", 'trajectory_every: "1e300s": '),
                         (1000, "expected at most 10 steps, the whole run (max_time 1.0 s)")]:
        with pytest.raises(ValueError) as raised:
            m.simulation(max_time=1.0, dt=0.1, trajectory_every=every)
        assert words in str(raised.value)
        run = subprocess.run(
            [crowdfield_bin, "simulate", str(root / "maps" / "corridor.json"), "--out", str(tmp_path / "out"),
             "--max-time", "1", "--dt", "0.1", "--quiet", "--trajectory-every", str(every)],
            capture_output=True, text=True,
        )
        assert run.returncode == 1 and "--trajectory-every" in run.stderr, run.stderr
    with pytest.raises(ValueError, match=r"trajectory_every: expected .* or None \(no trajectories\), got float 0.5"):
        m.simulation(trajectory_every=0.5)
    assert m.simulation(max_time=1.0, trajectory_every=None).trajectory_every == 0


def command_warnings(stderr):
    """The `warning: ` lines of the command's stderr, without the prefix."""
    return [line[len("warning: "):] for line in stderr.splitlines() if line.startswith("warning: ")]


def python_spelling(text):
    """The command's warning with its flags as the Python arguments."""
    for flag, arg in (("--local none", 'local="none"'), ("report.json", "report()"), ("--max-time", "max_time")):
        text = text.replace(flag, arg)
    return text


@pytest.mark.parametrize("local", ["boids", "orca"])
def test_warnings_reach_python_as_the_command_prints_them(root, crowdfield_bin, tmp_path, local):
    map_path = root / "maps" / "bottleneck.json"
    result = subprocess.run(
        [crowdfield_bin, "simulate", str(map_path), "--out", str(tmp_path), "--local", local,
         "--max-time", "5", "--trajectories=none", "--quiet"],
        check=True, capture_output=True, text=True,
    )
    expected = command_warnings(result.stderr)
    report_json = json.loads((tmp_path / "report.json").read_text())
    assert any("still inside" in w for w in expected)
    m = crowdfield.load_map(map_path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sim = m.simulation(local=local, max_time=5.0, trajectory_every=None)
        at_build = [str(w.message) for w in caught]
        sim.run(until=2.0)
        assert len(caught) == len(at_build), "nothing more until the run is over"
        sim.run()
        sim.step()
        sim.run()
    assert all(issubclass(w.category, crowdfield.CrowdfieldWarning) for w in caught)
    assert all(issubclass(w.category, RuntimeWarning) for w in caught)
    assert all(w.filename == __file__ for w in caught), "the warnings point at the caller"
    given = [str(w.message) for w in caught]
    assert given == [python_spelling(w) for w in expected]
    assert sim.report()["warnings"] == report_json["warnings"]
    for w in report_json["warnings"]:
        assert w in given
    if local == "boids":
        assert len(at_build) == 1 and "boids would steer no one" in at_build[0]
        assert 'so the run uses local="none"' in at_build[0]
    else:
        assert at_build == [] and report_json["warnings"], "orca notes the model in the report"


def test_map_warnings_come_at_load(root, crowdfield_bin, tmp_path):
    source = json.loads((root / "maps" / "hall.json").read_text())
    source.pop("model")  # the published model, which caps walkers at params.f_max
    source["groups"][0]["speed"]["max"] = 2.0  # above the map's params.f_max, 1.5 m/s
    path = tmp_path / "fast.json"
    path.write_text(json.dumps(source))
    result = subprocess.run([crowdfield_bin, "simulate", str(path), "--out", str(tmp_path / "out"), "--max-time",
                             "0.5", "--trajectories=none", "--quiet"], capture_output=True, text=True, check=True)
    expected = [w for w in command_warnings(result.stderr) if w.startswith(f"{path}: ")]
    assert len(expected) == 1 and "params.f_max" in expected[0], result.stderr
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        crowdfield.load_map(path)
    assert [str(w.message) for w in caught] == expected


def test_trajectories_go_into_pedpy(root):
    pedpy = pytest.importorskip("pedpy")
    m = crowdfield.load_map(root / "maps" / "bottleneck.json")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", crowdfield.CrowdfieldWarning)
        sim = m.simulation(seed=4, max_time=40.0, trajectory_every=2)
        sim.run()
    frame = sim.trajectories()
    np.testing.assert_array_equal(frame["frame"], np.rint(frame["t"] * sim.frame_rate))
    traj = pedpy.TrajectoryData(data=frame, frame_rate=sim.frame_rate)
    area = pedpy.WalkableArea(m.walkable_area())
    assert area.polygon.area == pytest.approx((~m.obstacle).sum() * m.cell_size**2)
    # A line across the room 0.5 m before the door: at most 0.9 cell (0.225 m) a step, so every
    # walker is recorded past it before it reaches the door and leaves.
    line = pedpy.MeasurementLine([(19.0, 0.0), (19.0, 16.0)])
    nt, crossing = pedpy.compute_n_t(traj_data=traj, measurement_line=line)
    arrivals = sim.arrivals()
    assert 0 < len(arrivals) < 200
    crossed = dict(zip(crossing["id"], crossing["frame"]))
    for a in arrivals:
        assert a["id"] in crossed
        assert crossed[a["id"]] / sim.frame_rate <= a["time"]
    walking = dict(zip(sim.ids, sim.positions[:, 0]))
    for pid in crossed:
        assert pid in set(arrivals["id"]) or walking[pid] > 19.0
    # N-t counts at every time at least the walkers out by then.
    counted = np.interp(arrivals["time"], nt["time"], nt["cumulative_pedestrians"])
    assert (counted >= np.arange(1, len(arrivals) + 1)).all()
    assert nt["cumulative_pedestrians"].iloc[-1] == len(crossed)


def test_bundled_maps_load_outside_the_repository(root, tmp_path):
    names = crowdfield.bundled_maps()
    assert names == sorted(p.stem for p in (root / "maps").glob("*.json") if p.name != "map.schema.json")
    for name in names:
        assert open(crowdfield.bundled_map(name), "rb").read() == (root / "maps" / f"{name}.json").read_bytes()
    assert crowdfield.bundled_map("hall.json") == crowdfield.bundled_map("hall")
    with pytest.raises(ValueError, match="bottleneck"):
        crowdfield.bundled_map("no_such_map")
    code = ("import crowdfield; m = crowdfield.load_map(crowdfield.bundled_map('office')); "
            "print(m.shape, crowdfield.load_map(crowdfield.bundled_map('bottleneck')).shape)")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                         check=True)
    assert "(64, 80)" in out.stdout


def test_help_shows_the_docstrings():
    for fn in (crowdfield.distance, crowdfield.travel_time, crowdfield.eikonal, crowdfield.load_map,
               crowdfield.Map.simulation, crowdfield.Simulation.report):
        assert fn.__doc__ and len(fn.__doc__) > 40
    import pydoc

    text = pydoc.render_doc(crowdfield, renderer=pydoc.plaintext)
    assert "scikit-fmm" in text and "travel_time" in text
