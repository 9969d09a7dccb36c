"""crowdfield's scikit-fmm drop-in against scikit-fmm itself, on random arrays, masks and
contours, in both orders and with unequal spacings.

The stated tolerance (docs/python.md): the same cells reached (the same mask) and every value
within 1e-9 of scikit-fmm's, relative to max(1, |value|). Both run the same updates in the same
order, so the values are usually the same bits.
"""

import numpy as np
import pytest

import crowdfield

skfmm = pytest.importorskip("skfmm")

RTOL = 1e-9
SPACINGS = [1.0, 0.37, (1.0, 2.5), (0.3, 0.11)]


def assert_agrees(ours, theirs):
    assert np.ma.isMaskedArray(ours) == np.ma.isMaskedArray(theirs)
    mask_ours = np.ma.getmaskarray(ours)
    mask_theirs = np.ma.getmaskarray(theirs)
    np.testing.assert_array_equal(mask_ours, mask_theirs)
    a = np.ma.getdata(ours)[~mask_ours]
    b = np.ma.getdata(theirs)[~mask_theirs]
    worst = np.max(np.abs(a - b) / np.maximum(1.0, np.abs(b)), initial=0.0)
    assert worst <= RTOL, f"largest relative difference {worst:.3e}"


def random_phi(rng, shape):
    """Smooth random level sets: sums of a few bumps minus a level, so contours are closed
    curves of several shapes, some touching the border."""
    rows, cols = shape
    y, x = np.mgrid[0:rows, 0:cols].astype(float)
    phi = np.zeros(shape)
    for _ in range(4):
        cy, cx = rng.uniform(0, rows), rng.uniform(0, cols)
        w = rng.uniform(3, max(4, min(rows, cols) / 3))
        phi += rng.uniform(-1, 1) * np.exp(-((x - cx) ** 2 + (y - cy) ** 2) / (2 * w * w))
    return phi - rng.uniform(-0.2, 0.2)


@pytest.mark.parametrize("order", [1, 2])
@pytest.mark.parametrize("dx", SPACINGS)
@pytest.mark.parametrize("seed", range(4))
def test_distance_of_random_contours(order, dx, seed):
    rng = np.random.default_rng(seed)
    shape = (int(rng.integers(20, 60)), int(rng.integers(20, 60)))
    phi = random_phi(rng, shape)
    if not ((phi > 0).any() and (phi < 0).any()):
        phi[0, 0] = -abs(phi[0, 0]) - 1
    assert_agrees(crowdfield.distance(phi, dx=dx, order=order), skfmm.distance(phi, dx=dx, order=order))


@pytest.mark.parametrize("order", [1, 2])
@pytest.mark.parametrize("dx", SPACINGS)
def test_distance_of_white_noise(order, dx):
    # Every cell on or beside a contour: the initialisation alone, and many ties.
    rng = np.random.default_rng(7)
    phi = rng.standard_normal((33, 41))
    phi[rng.random(phi.shape) < 0.05] = 0.0
    assert_agrees(crowdfield.distance(phi, dx=dx, order=order), skfmm.distance(phi, dx=dx, order=order))


@pytest.mark.parametrize("order", [1, 2])
@pytest.mark.parametrize("dx", SPACINGS)
@pytest.mark.parametrize("seed", range(3))
def test_distance_with_masked_obstacles(order, dx, seed):
    rng = np.random.default_rng(100 + seed)
    phi = random_phi(rng, (48, 37))
    phi[24, 10] = 0.0
    mask = rng.random(phi.shape) < 0.15
    mask[24, 10] = False
    masked = np.ma.MaskedArray(phi, mask)
    assert_agrees(crowdfield.distance(masked, dx=dx, order=order), skfmm.distance(masked, dx=dx, order=order))


@pytest.mark.parametrize("order", [1, 2])
@pytest.mark.parametrize("dx", SPACINGS)
@pytest.mark.parametrize("seed", range(3))
def test_travel_time_from_contours_at_random_speeds(order, dx, seed):
    rng = np.random.default_rng(200 + seed)
    phi = random_phi(rng, (45, 52))
    phi[3, 3] = 0.0
    speed = rng.uniform(0.2, 3.0, phi.shape)
    assert_agrees(
        crowdfield.travel_time(phi, speed, dx=dx, order=order),
        skfmm.travel_time(phi, speed, dx=dx, order=order),
    )


@pytest.mark.parametrize("order", [1, 2])
@pytest.mark.parametrize("dx", SPACINGS)
def test_travel_time_from_a_point_around_walls_and_zero_speeds(order, dx):
    rng = np.random.default_rng(300)
    phi = np.ones((64, 64))
    phi[10, 50] = 0.0
    walls = np.zeros(phi.shape, dtype=bool)
    walls[20, :56] = True
    walls[40, 8:] = True
    walls |= rng.random(phi.shape) < 0.05
    walls[10, 50] = False
    speed = rng.uniform(0.5, 2.0, phi.shape)
    speed[rng.random(phi.shape) < 0.03] = 0.0  # obstacles by speed, as scikit-fmm reads them
    masked = np.ma.MaskedArray(phi, walls)
    assert_agrees(
        crowdfield.travel_time(masked, speed, dx=dx, order=order),
        skfmm.travel_time(masked, speed, dx=dx, order=order),
    )


@pytest.mark.parametrize("order", [1, 2])
def test_one_dimensional_input(order):
    phi = np.linspace(-1.3, 2.1, 50)
    assert_agrees(crowdfield.distance(phi, dx=0.2, order=order), skfmm.distance(phi, dx=0.2, order=order))
    speed = np.linspace(0.5, 2.0, 50)
    assert_agrees(
        crowdfield.travel_time(phi, speed, dx=[0.2], order=order),
        skfmm.travel_time(phi, speed, dx=[0.2], order=order),
    )


def test_defaults_and_integer_input_match():
    phi = np.ones((30, 30), dtype=np.int64)
    phi[15, 15] = 0
    assert_agrees(crowdfield.distance(phi), skfmm.distance(phi))
    assert_agrees(crowdfield.travel_time(phi, np.ones((30, 30))), skfmm.travel_time(phi, np.ones((30, 30))))


def test_import_as_skfmm_replaces_the_module_for_2d_calls():
    import crowdfield as skfmm_dropin

    phi = np.ones((20, 20))
    phi[5, 5] = 0
    out = skfmm_dropin.travel_time(phi, np.full((20, 20), 2.0), dx=0.5, order=2, self_test=False)
    assert out.shape == (20, 20) and out[5, 5] == 0.0


def test_unsupported_features_fail_clearly():
    phi = np.ones((4, 4, 4))
    phi[1, 1, 1] = 0
    with pytest.raises(ValueError, match="2-D"):
        crowdfield.distance(phi)
    flat = np.ones((5, 5))
    flat[2, 2] = 0
    with pytest.raises(NotImplementedError, match="periodic"):
        crowdfield.distance(flat, periodic=True)
    with pytest.raises(NotImplementedError, match="periodic"):
        crowdfield.travel_time(flat, np.ones((5, 5)), periodic=(False, True))
    with pytest.raises(NotImplementedError, match="narrow"):
        crowdfield.distance(flat, narrow=2.0)
    with pytest.raises(NotImplementedError, match="extension velocities"):
        crowdfield.extension_velocities(flat, np.ones((5, 5)))


def test_bad_input_raises_value_error():
    flat = np.ones((5, 5))
    flat[2, 2] = 0
    with pytest.raises(ValueError, match="no zero contour"):
        crowdfield.distance(np.ones((5, 5)))
    with pytest.raises(ValueError, match="NaN"):
        crowdfield.travel_time(flat, np.where(flat > 0, np.nan, 1.0))
    with pytest.raises(ValueError, match="shape"):
        crowdfield.travel_time(flat, np.ones((5, 4)))
    with pytest.raises(ValueError, match="dtype"):
        crowdfield.distance(np.array([["a", "b"], ["c", "d"]]))
    with pytest.raises(ValueError, match="dtype"):
        crowdfield.distance(flat.astype(complex))
    with pytest.raises(ValueError, match="dx"):
        crowdfield.distance(flat, dx=0.0)
    with pytest.raises(ValueError, match="dx"):
        crowdfield.distance(flat, dx=[1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="order"):
        crowdfield.distance(flat, order=3)
    with pytest.raises(ValueError, match="NaN"):
        crowdfield.distance(np.where(flat > 0, np.nan, 0.0))


def test_invalid_values_under_the_mask_are_ignored_as_in_scikit_fmm():
    phi = np.ones((20, 30))
    phi[10, 10] = 0
    phi[0, 0] = np.nan
    phi[19, 29] = np.inf
    masked = np.ma.masked_invalid(phi)
    assert_agrees(crowdfield.distance(masked), skfmm.distance(masked))
    speed = np.ones((20, 30))
    speed[0, 0] = np.nan
    assert_agrees(crowdfield.travel_time(masked, speed), skfmm.travel_time(masked, speed))
    # Outside the mask they are still refused.
    with pytest.raises(ValueError, match=r"phi: NaN at \(0, 0\)"):
        crowdfield.distance(phi)


def test_a_masked_speed_reads_its_values_and_ignores_its_mask_as_in_scikit_fmm():
    x, y = np.meshgrid(np.linspace(-1, 1, 60), np.linspace(-1, 1, 50))
    phi = x**2 + y**2 - 0.1
    speed = np.ma.MaskedArray(1 + x**2, (x > 0.5) & (abs(y) < 0.5))
    ours = crowdfield.travel_time(phi, speed, dx=1e-2)
    theirs = skfmm.travel_time(phi, speed, dx=1e-2)
    assert not np.ma.is_masked(ours)
    assert_agrees(ours, theirs)


def test_a_number_as_speed_is_that_speed_everywhere():
    phi = np.ones((20, 30))
    phi[10, 10] = 0
    np.testing.assert_array_equal(
        crowdfield.travel_time(phi, 2.0), crowdfield.travel_time(phi, np.full((20, 30), 2.0))
    )


def test_scales_beyond_the_march_and_scalars_are_refused_clearly():
    x, y = np.meshgrid(np.linspace(-1, 1, 41), np.linspace(-1, 1, 41))
    phi = x**2 + y**2 - 0.25
    unit = crowdfield.distance(phi)
    for dx in (1e50, 1e-50):
        np.testing.assert_allclose(crowdfield.distance(phi, dx=dx) / dx, unit, rtol=1e-12)
    for dx in (1e160, 1e-160):
        with pytest.raises(ValueError, match="dx: .*expected lengths from 1e-50 to 1e[+]?50"):
            crowdfield.distance(phi, dx=dx)
    with pytest.raises(ValueError, match=r"speed: 1e\+?60 at \(3, 4\)"):
        speed = np.ones(phi.shape)
        speed[3, 4] = 1e60
        crowdfield.travel_time(phi, speed)
    with pytest.raises(ValueError, match="speed: below"):
        crowdfield.travel_time(phi, -np.ones(phi.shape))
    with pytest.raises(ValueError, match="phi: expected a 1-D or 2-D array of numbers, got float64 "):
        crowdfield.distance(np.float64(0.0))

