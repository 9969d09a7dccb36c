"""crowdfield.eikonal and eikonal_anisotropic: against the `crowdfield eikonal` command on the
same arrays (bit for bit), against exact solutions, and on bad input."""

import subprocess

import numpy as np
import pytest

import crowdfield


def run_command(bin_path, tmp_path, speed, goal, cell_size, order):
    np.save(tmp_path / "speed.npy", speed)
    np.save(tmp_path / "goal.npy", goal)
    out = tmp_path / "phi.npy"
    subprocess.run(
        [bin_path, "eikonal", "--speed", str(tmp_path / "speed.npy"), "--goal", str(tmp_path / "goal.npy"),
         "--out", str(out), "--cell-size", repr(cell_size), "--order", str(order)],
        check=True, capture_output=True,
    )
    return np.load(out)


@pytest.mark.parametrize("order", [1, 2])
@pytest.mark.parametrize("seed", range(3))
def test_bit_for_bit_with_the_command(crowdfield_bin, tmp_path, order, seed):
    rng = np.random.default_rng(seed)
    shape = (int(rng.integers(30, 90)), int(rng.integers(30, 90)))
    speed = rng.uniform(0.3, 2.5, shape)
    speed[rng.random(shape) < 0.2] = 0.0  # walls
    goal = np.zeros(shape, dtype=bool)
    goal[tuple(rng.integers(0, s) for s in shape)] = True
    goal[tuple(rng.integers(0, s) for s in shape)] = True
    cell_size = float(rng.uniform(0.1, 2.0))
    ours = crowdfield.eikonal(speed, goal, cell_size=cell_size, order=order)
    theirs = run_command(crowdfield_bin, tmp_path, speed, goal, cell_size, order)
    assert ours.dtype == np.float64 and ours.shape == shape
    assert np.isinf(ours).any(), "the walls leave some cells unreachable"
    # Bit for bit, +inf included.
    np.testing.assert_array_equal(ours.view(np.uint64), theirs.view(np.uint64))


def test_float32_and_uint8_speeds_read_as_the_command_reads_them(crowdfield_bin, tmp_path):
    rng = np.random.default_rng(5)
    speed = rng.integers(0, 4, (40, 50)).astype(np.uint8)
    goal = np.zeros((40, 50), dtype=np.uint8)
    goal[0, 0] = 1
    np.testing.assert_array_equal(
        crowdfield.eikonal(speed, goal), run_command(crowdfield_bin, tmp_path, speed, goal, 1.0, 1)
    )
    s32 = rng.uniform(0.5, 1.5, (40, 50)).astype(np.float32)
    np.testing.assert_array_equal(
        crowdfield.eikonal(s32, goal, cell_size=0.25, order=2),
        run_command(crowdfield_bin, tmp_path, s32, goal, 0.25, 2),
    )


def test_straight_front_is_exact():
    speed = np.full((5, 9), 2.0)
    goal = np.zeros((5, 9), dtype=bool)
    goal[:, 0] = True
    phi = crowdfield.eikonal(speed, goal, cell_size=0.5)
    np.testing.assert_allclose(phi, np.tile(np.arange(9) * 0.25, (5, 1)), rtol=0, atol=1e-12)


def test_anisotropic_costs_per_face():
    # Leaving a cell by +x costs 1 s/m, by -x 3 s/m (a step costs cell_size times the cost of
    # the face it leaves by).
    rows, cols = 1, 7
    cost = np.ones((rows, cols, 4), dtype=np.float32)
    cost[..., 2] = 3.0  # -x
    goal = np.zeros((rows, cols), dtype=bool)
    goal[0, 3] = True
    phi = crowdfield.eikonal_anisotropic(cost, goal, cell_size=0.5)
    # A cell left of the goal walks +x (cost 1); right of it walks -x (cost 3).
    np.testing.assert_allclose(phi[0], [1.5, 1.0, 0.5, 0.0, 1.5, 3.0, 4.5], atol=1e-12)
    iso = np.ones((rows, cols, 4), dtype=np.float32) / 2.0
    np.testing.assert_array_equal(
        crowdfield.eikonal_anisotropic(iso, goal), crowdfield.eikonal(np.full((rows, cols), 2.0), goal)
    )
    blocked = cost.copy()
    blocked[0, 5, :] = np.inf
    assert np.isinf(crowdfield.eikonal_anisotropic(blocked, goal)[0, 6])


def test_bad_input_raises_value_error():
    goal = np.zeros((4, 4), dtype=bool)
    goal[0, 0] = True
    ok = np.ones((4, 4))
    cases = [
        (lambda: crowdfield.eikonal(np.ones((4, 4, 2)), goal), "2-D"),
        (lambda: crowdfield.eikonal(ok, np.zeros((3, 4))), "shape"),
        (lambda: crowdfield.eikonal(ok, np.zeros((4, 4))), "no source"),
        (lambda: crowdfield.eikonal(ok, np.full((4, 4), np.nan)), "NaN"),
        (lambda: crowdfield.eikonal(np.array([["x"] * 4] * 4), goal), "dtype"),
        (lambda: crowdfield.eikonal(ok, goal, cell_size=-1.0), "cell_size"),
        (lambda: crowdfield.eikonal(ok, goal, cell_size=float("nan")), "cell_size"),
        (lambda: crowdfield.eikonal(ok, goal, order=3), "order"),
        (lambda: crowdfield.eikonal(np.full((4, 4), 1e39), goal), "2\\^126"),
        (lambda: crowdfield.eikonal(np.zeros((0, 4)), np.zeros((0, 4))), "shape"),
        (lambda: crowdfield.eikonal_anisotropic(np.ones((4, 4, 3)), goal), "rows, cols, 4"),
        (lambda: crowdfield.eikonal_anisotropic(np.full((4, 4, 4), np.nan), goal), "NaN"),
    ]
    for call, message in cases:
        with pytest.raises(ValueError, match=message):
            call()


def test_nan_speeds_are_refused_where_the_command_reads_walls():
    # The command reads a NaN speed as a wall; from Python a NaN is more likely a bug, so it is
    # refused with a message that says how to mark walls.
    speed = np.ones((6, 6))
    speed[2, 3] = np.nan
    goal = np.zeros((6, 6), dtype=bool)
    goal[0, 0] = True
    with pytest.raises(ValueError, match=r"speed: NaN at \(row 2, column 3\).*0 or inf"):
        crowdfield.eikonal(speed, goal)
    with pytest.raises(ValueError, match="NaN"):
        crowdfield.eikonal_anisotropic(np.full((6, 6, 4), np.nan, dtype=np.float32), goal)


def test_speeds_below_the_smallest_float32_cost_are_walls(crowdfield_bin, tmp_path):
    # 1 / 1e-39 overflows float32: a wall, as the command reads it and as the docstring says.
    speed = np.ones((5, 7))
    speed[:, 3] = 1e-39
    speed[2, 5] = 1e-37  # slow, but its cost fits: passable
    goal = np.zeros(speed.shape)
    goal[2, 0] = 1
    phi = crowdfield.eikonal(speed, goal)
    assert np.isinf(phi[:, 3:]).all()
    np.testing.assert_array_equal(phi, run_command(crowdfield_bin, tmp_path, speed, goal, 1.0, 1))
    barrier = np.ones((5, 7))
    barrier[:, 3] = 1e-37
    assert np.isfinite(crowdfield.eikonal(barrier, goal)).all()
    for text in (crowdfield.eikonal.__doc__, crowdfield.eikonal_anisotropic.__doc__):
        assert text
    assert "3e-39" in crowdfield.eikonal.__doc__


def test_bad_arguments_are_named_with_what_was_expected_and_what_was_given():
    flat = np.ones((5, 5))
    flat[2, 2] = 0
    cases = [
        (lambda: crowdfield.distance(None), "phi: expected a 1-D or 2-D array of numbers, got None"),
        (lambda: crowdfield.distance(flat, dx="1"),
         "dx: expected a positive number or one per axis (2), got str '1'"),
        (lambda: crowdfield.distance(flat, dx=None), "dx: expected a positive number or one per axis (2), got None"),
        (lambda: crowdfield.distance(flat, dx=[1.0, 2.0, 3.0]),
         "dx: expected a positive number or one per axis (2), got 3 values: list [1.0, 2.0, 3.0]"),
        (lambda: crowdfield.distance(flat, dx=-1.0), "dx: expected lengths from 1e-50 to 1e+50"),
        (lambda: crowdfield.distance([["a", "b"], ["c", "d"]]),
         "phi: expected an array of real numbers (float, int or bool), got list [['a', 'b'], ['c', 'd']] (dtype <U1)"),
        (lambda: crowdfield.travel_time(flat, None), "speed: expected an array of phi's shape or a number, got None"),
    ]
    for call, words in cases:
        with pytest.raises(ValueError) as raised:
            call()
        assert words in str(raised.value)
    # An axis spacing as a 0-d array still means every axis.
    np.testing.assert_array_equal(crowdfield.distance(flat, dx=np.array(0.5)), crowdfield.distance(flat, dx=0.5))
