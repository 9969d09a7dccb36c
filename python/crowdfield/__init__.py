"""crowdfield from Python: Eikonal fields, maps and crowd simulation on numpy arrays.

A drop-in for scikit-fmm on 2-D grids::

    import crowdfield as skfmm
    d = skfmm.distance(phi, dx=0.5)            # signed distance from the zero contour of phi
    t = skfmm.travel_time(phi, speed, dx=[1, 0.5], order=2)

The native solver, with the ``crowdfield eikonal`` command's meaning::

    phi = crowdfield.eikonal(speed, goal, cell_size=0.5)   # 0 on goal cells, +inf unreachable

Maps and simulation::

    m = crowdfield.load_map(crowdfield.bundled_map("hall"))   # or the path of any map JSON
    plan = m.plan()                       # fields, potentials, gradients
    sim = m.simulation(seed=0)
    sim.run()
    report = sim.report()                 # the content of report.json

Every solve and simulation step runs with the GIL released. See docs/python.md for the API and
the tolerances against scikit-fmm.
"""

from __future__ import annotations

import json
import numbers
import os
import warnings
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple, Union

import numpy as np

from . import _native
from ._simulation import TRAJECTORY_DTYPE, Simulation, StepEvents

__version__ = _native.__version__

__all__ = [
    "distance",
    "travel_time",
    "extension_velocities",
    "eikonal",
    "eikonal_anisotropic",
    "load_map",
    "map_from_wkt",
    "map_from_shapely",
    "study",
    "bundled_map",
    "bundled_maps",
    "CrowdfieldWarning",
    "Map",
    "Plan",
    "Simulation",
    "StepEvents",
]

_DIMENSIONS_MESSAGE = (
    "crowdfield solves 1-D and 2-D grids; scikit-fmm's 3-D and higher-dimensional problems are "
    "not supported (use scikit-fmm for those)"
)


def _given(value: Any) -> str:
    """What a caller passed, for messages: ``None``, ``str '1'``, ``float 3.0``, ``list [1, 2]``,
    an array by its dtype and shape; long values shortened."""
    if value is None:
        return "None"
    if isinstance(value, np.ndarray):
        return f"an array of dtype {value.dtype} and shape {value.shape}"
    text = repr(value)
    if len(text) > 60:
        text = text[:45] + "..." + text[-12:]
    return f"{type(value).__name__} {text}"


def _real_array(name: str, value: Any, dtype=np.float64) -> np.ndarray:
    """`value` as a C-contiguous array of `dtype` (no copy when it already is one), refusing
    dtypes that are not real numbers or booleans."""
    arr = np.asarray(value)
    if arr.dtype.kind not in "biuf":
        given = _given(value) if isinstance(value, np.ndarray) else f"{_given(value)} (dtype {arr.dtype})"
        raise ValueError(
            f"{name}: expected an array of real numbers (float, int or bool), got {given}"
        )
    return np.ascontiguousarray(arr, dtype=dtype)


def _as_2d(name: str, arr: np.ndarray) -> np.ndarray:
    """A 1-D array as one row; a 2-D array as it is; anything else refused."""
    if arr.ndim == 1:
        return arr.reshape(1, -1)
    if arr.ndim != 2:
        raise ValueError(f"{name}: {arr.ndim}-D array of shape {arr.shape}: {_DIMENSIONS_MESSAGE}")
    return arr


# The level-set march's bounds (`levelset::MIN_SPACING` and `levelset::MAX_SCALE` in Rust).
_MIN_SPACING = 1e-50
_MAX_SCALE = 1e50


def _spacing(dx: Any, ndim: int) -> Tuple[float, float]:
    """scikit-fmm's `dx` (a number, or one per axis) as the spacing of the two solver axes."""
    expected = f"dx: expected a positive number or one per axis ({ndim})"
    if isinstance(dx, numbers.Real) and not isinstance(dx, bool):
        values = [float(dx)] * ndim
    else:
        arr = None
        if not isinstance(dx, (str, bytes, bool)) and dx is not None:
            try:
                arr = np.asarray(dx)
            except (TypeError, ValueError):
                arr = None
        if arr is None or arr.dtype.kind not in "iuf" or arr.ndim > 1:
            raise ValueError(f"{expected}, got {_given(dx)}")
        values = [float(v) for v in arr.ravel()] * (ndim if arr.ndim == 0 else 1)
        if len(values) != ndim:
            raise ValueError(f"{expected}, got {len(values)} values: {_given(dx)}")
    for v in values:
        if not (np.isfinite(v) and _MIN_SPACING <= v <= _MAX_SCALE):
            raise ValueError(
                f"dx: expected lengths from {_MIN_SPACING:g} to {_MAX_SCALE:g} "
                f"(the march squares 1 / dx, which must stay a normal float), got {v}"
            )
    if ndim == 1:
        return (1.0, values[0])
    return (values[0], values[1])


def _unsupported(narrow: float, periodic: Any) -> None:
    """Refuses the scikit-fmm options crowdfield does not have, rather than ignoring them."""
    if np.any(np.asarray(periodic)):
        raise NotImplementedError(
            "periodic: periodic boundaries are not supported by crowdfield; use scikit-fmm"
        )
    if narrow != 0:
        raise NotImplementedError(
            f"narrow: {narrow}: a narrow band is not supported by crowdfield; use scikit-fmm"
        )


def _levelset_input(phi: Any, dx: Any, order: int):
    """phi's values, mask (None if unmasked), original shape and the spacing."""
    if order not in (1, 2):
        raise ValueError(f"order: {order!r}: expected 1 or 2")
    mask = None
    if isinstance(phi, np.ma.MaskedArray):
        mask = np.ma.getmaskarray(phi)
        phi = phi.data
    if np.ndim(phi) == 0:
        raise ValueError(f"phi: expected a 1-D or 2-D array of numbers, got {_given(phi)}")
    values = _real_array("phi", phi)
    shape = values.shape
    if values.ndim not in (1, 2):
        raise ValueError(f"phi: {values.ndim}-D array of shape {shape}: {_DIMENSIONS_MESSAGE}")
    spacing = _spacing(dx, values.ndim)
    values = _as_2d("phi", values)
    if mask is not None:
        mask = np.ascontiguousarray(mask, dtype=bool).reshape(values.shape)
    return values, mask, shape, spacing


def _as_skfmm_result(solved, shape) -> np.ndarray:
    """scikit-fmm's output convention: cells the march did not reach are masked (and 0, as the
    native call leaves them)."""
    values, unreached = solved
    values = values.reshape(shape)
    if unreached is not None:
        return np.ma.MaskedArray(values, unreached.reshape(shape))
    return values


def distance(phi, dx=1.0, self_test=False, order=2, narrow=0.0, periodic=False):
    """Signed distance from the zero contour of `phi`, as ``skfmm.distance``.

    Parameters
    ----------
    phi : array_like or numpy.ma.MaskedArray, 1-D or 2-D
        The front is its zero contour, interpolated linearly between cells. Masked cells are
        obstacles: the distance goes around them, and their values (NaN included, as
        ``numpy.ma.masked_invalid`` leaves them) take no part.
    dx : float or sequence of float
        Cell length, one number or one per axis, from 1e-50 to 1e50.
    self_test : bool
        Accepted for compatibility and ignored.
    order : {1, 2}
        Order of the fast-marching update (scikit-fmm's default is 2).
    narrow, periodic
        Not supported: anything but the defaults raises ``NotImplementedError``.

    Returns
    -------
    numpy.ndarray (float64) of phi's shape, signed like phi; a ``numpy.ma.MaskedArray`` when
    some cells are not reached (masked cells and cells cut off by them).

    Raises
    ------
    ValueError
        For a scalar or 3-D input, non-numeric dtypes, NaN or infinite values outside the mask,
        bad spacings, or a phi with no zero contour.
    """
    _unsupported(narrow, periodic)
    values, mask, shape, spacing = _levelset_input(phi, dx, order)
    out = _native.levelset_distance(values, mask, spacing, int(order))
    return _as_skfmm_result(out, shape)


def travel_time(phi, speed, dx=1.0, self_test=False, order=2, narrow=0.0, periodic=False):
    """Travel time from the zero contour of `phi` at `speed`, as ``skfmm.travel_time``.

    Parameters
    ----------
    phi : array_like or numpy.ma.MaskedArray, 1-D or 2-D
        The front is its zero contour (a point source: phi = 1 everywhere and 0 at the source).
        Masked cells are obstacles.
    speed : array_like of phi's shape, or a number
        Speed of the front at each cell (a number: everywhere); speeds below machine epsilon are
        obstacles. NaN, infinite or larger than 1e50 speeds raise ``ValueError``, except under
        phi's mask. As in scikit-fmm, a mask on `speed` is ignored: mask `phi` to make obstacles.
    dx, self_test, order, narrow, periodic
        As in :func:`distance`.

    Returns
    -------
    numpy.ndarray (float64), never negative; a ``numpy.ma.MaskedArray`` when some cells are not
    reached.
    """
    _unsupported(narrow, periodic)
    values, mask, shape, spacing = _levelset_input(phi, dx, order)
    if isinstance(speed, np.ma.MaskedArray):
        # scikit-fmm reads a masked speed's values and ignores its mask.
        speed = speed.data
    if np.ndim(speed) == 0:
        # One speed for every cell.
        if speed is None or isinstance(speed, (str, bytes)):
            raise ValueError(f"speed: expected an array of phi's shape or a number, got {_given(speed)}")
        speed = np.full(shape, _real_array("speed", speed)[0])
    s = _real_array("speed", speed)
    if s.shape != shape:
        raise ValueError(f"speed: shape {s.shape}: expected phi's shape {shape}")
    s = s.reshape(values.shape)
    out = _native.levelset_travel_time(values, s, mask, spacing, int(order))
    return _as_skfmm_result(out, shape)


def extension_velocities(phi, speed, dx=1.0, self_test=False, order=2, ext_mask=None, narrow=0.0, periodic=False):
    """Not supported: raises ``NotImplementedError`` (scikit-fmm's extension velocities have no
    crowdfield counterpart; use scikit-fmm for them)."""
    raise NotImplementedError(
        "extension_velocities: extension velocities are not supported by crowdfield; use scikit-fmm"
    )


def _goal_array(goal: Any) -> np.ndarray:
    return _real_array("goal", goal)


def eikonal(speed, goal, cell_size=1.0, order=1):
    """Solves ``|grad phi| = 1 / speed`` with phi = 0 on the goal cells, as ``crowdfield eikonal``.

    Parameters
    ----------
    speed : 2-D array_like (float64, float32, uint8, ...)
        Speed per cell (row index = y, column index = x). Cells whose speed is <= 0 or not finite
        are impassable, and so are speeds so small that their inverse (the cell's cost, in
        float32) overflows: positive speeds below about 3e-39. Speeds above 2**126 (about
        8.5e37), whose cost underflows float32, are refused: scale the speeds down.
    goal : 2-D array_like of speed's shape
        Nonzero marks a source cell (bool or numeric; NaN is refused).
    cell_size : float
        Edge length of one cell.
    order : {1, 2}
        Order of the fast-marching update.

    Returns
    -------
    numpy.ndarray float64: 0 on goal cells, ``inf`` where no goal is reachable. The same bits as
    the command's output on the same arrays.
    """
    s = _real_array("speed", speed)
    if s.ndim != 2:
        raise ValueError(f"speed: {s.ndim}-D array of shape {s.shape}: expected a 2-D grid")
    g = _goal_array(goal)
    if g.ndim != 2:
        raise ValueError(f"goal: {g.ndim}-D array of shape {g.shape}: expected a 2-D grid")
    return _native.eikonal_speed(s, g, float(cell_size), int(order))


def eikonal_anisotropic(cost, goal, cell_size=1.0, order=1):
    """Solves with four costs per cell, one per face.

    Parameters
    ----------
    cost : array_like of shape (rows, cols, 4)
        Cost per metre of leaving a cell by +x (column + 1), +y (row + 1), -x, -y: a step to the
        neighbour that way costs ``cell_size * cost``. ``inf`` (or any value that is not finite
        and positive) marks a face that cannot be crossed. Converted to float32, as the library
        stores costs.
    goal, cell_size, order
        As in :func:`eikonal`.

    Returns
    -------
    numpy.ndarray float64 of shape (rows, cols): 0 on goal cells, ``inf`` where unreachable.
    """
    c = _real_array("cost", cost, dtype=np.float32)
    if c.ndim != 3 or c.shape[2] != 4:
        raise ValueError(f"cost: shape {c.shape}: expected (rows, cols, 4)")
    g = _goal_array(goal)
    if g.ndim != 2:
        raise ValueError(f"goal: {g.ndim}-D array of shape {g.shape}: expected a 2-D grid")
    return _native.eikonal_cost(c, g, float(cell_size), int(order))


class CrowdfieldWarning(RuntimeWarning):
    """A warning the ``crowdfield`` command prints (``warning: ...``), in the same words: about
    a map (at :func:`load_map`), a run's options (at :meth:`Map.simulation`) or its outcome
    (when the run finishes). Each is given once, through :func:`warnings.warn`."""


def _warn_all(messages: List[str], stacklevel: int) -> None:
    """Gives each message as a CrowdfieldWarning attributed `stacklevel` frames above the caller."""
    for message in messages:
        warnings.warn(message, CrowdfieldWarning, stacklevel=stacklevel + 1)


@dataclass
class Plan:
    """A map's static plan (what ``crowdfield solve`` writes), as numpy arrays.

    Attributes
    ----------
    solver : str
        What ran, in words.
    rho : float32 (rows, cols)
        Density of the (empty) crowd the fields were computed for, persons/m².
    speed, cost : float32 (rows, cols, 4)
        Speed (m/s) and unit cost (s/m) per cell and direction (+x, +y, -x, -y).
    goals : list of bool (rows, cols), one per group
    potentials : list of float64 (rows, cols), one per group
        Seconds of walking to the nearest goal; ``inf`` where none is reachable.
    gradients : list of (gx, gy) float32 pairs, one per group
        The upwind gradient of the potential, per metre.
    group_names : list of str
    """

    solver: str
    rho: np.ndarray
    speed: np.ndarray
    cost: np.ndarray
    goals: List[np.ndarray]
    potentials: List[np.ndarray]
    gradients: List[Tuple[np.ndarray, np.ndarray]]
    group_names: List[str]


_U64_MAX = 2**64 - 1
_USIZE_MAX = np.iinfo(np.uintp).max


def _check_whole(name: str, value: Any, largest: int) -> None:
    """Refuses anything but a whole number from 0 to `largest`, naming the argument."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or not 0 <= value <= largest:
        raise ValueError(f"{name}: {value!r}: expected a whole number from 0 to {largest}")


def _trajectory_every(value: Any) -> Optional[str]:
    """``trajectory_every`` as the text the library reads (``"5"``, ``"0.5s"``), or None for no
    trajectories; the library applies the command's rule to it (at least one step, at most the
    whole run)."""
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return str(int(value))
    raise ValueError(
        "trajectory_every: expected a whole number of steps (5), of seconds as a string (\"0.5s\") "
        f"or None (no trajectories), got {_given(value)}"
    )


class Map:
    """A loaded, validated map (see :func:`load_map`)."""

    def __init__(self, native: Any):
        self._native = native
        #: What the import found, for a map made from a floor plan (:func:`load_map` of a
        #: ``.dxf``, ``.wkt``, ``.geojson``, :func:`map_from_wkt`, :func:`map_from_shapely`): the
        #: summary ``crowdfield import --json`` prints (``walkable_area`` m², ``exits``,
        #: ``distributions``, ``persons``, ...); ``None`` for a map read from JSON.
        self.import_summary: Optional[Dict[str, Any]] = None

    @property
    def name(self) -> str:
        """The map's name."""
        return self._native.name

    @property
    def path(self) -> str:
        """The path it was loaded from."""
        return self._native.path

    @property
    def shape(self) -> Tuple[int, int]:
        """(rows, cols) of the grid."""
        return self._native.shape

    @property
    def cell_size(self) -> float:
        """Edge length of one cell, metres."""
        return self._native.cell_size

    @property
    def group_names(self) -> List[str]:
        """The groups' names, in order."""
        return self._native.group_names

    @property
    def obstacle(self) -> np.ndarray:
        """Obstacle cells, bool (rows, cols)."""
        return self._native.obstacle

    def plan(self, order: int = 1, backend: str = "cpu") -> Plan:
        """The static plan: fields, and each group's potential and gradient.

        ``order`` is 1 or 2; ``backend`` is "cpu", "gpu" or "auto" (``crowdfield solve``'s
        ``--order`` and ``--backend``).
        """
        p = self._native.plan(int(order), str(backend))
        return Plan(
            solver=p["solver"],
            rho=p["rho"],
            speed=p["speed"],
            cost=p["cost"],
            goals=p["goals"],
            potentials=p["potentials"],
            gradients=list(zip(p["gx"], p["gy"])),
            group_names=self.group_names,
        )

    def walkable_area(self) -> str:
        """The walkable area as WKT: the cells that are not obstacles, merged into one
        ``POLYGON`` with holes where obstacles lie inside (a ``MULTIPOLYGON`` when the open cells
        fall apart), in metres, the geometry ``crowdfield simulate`` writes into
        trajectories.sqlite. ``pedpy.WalkableArea(m.walkable_area())`` reads it, and so does
        ``shapely.from_wkt``."""
        return self._native.walkable_area_wkt()

    def simulation(
        self,
        seed: int = 0,
        local: str = "none",
        dt: Optional[float] = None,
        max_time: float = 600.0,
        replan_every: int = 1,
        order: int = 1,
        backend: str = "cpu",
        local_backend: str = "cpu-multi",
        trajectory_every: Union[int, str, None] = 1,
        model: Optional[str] = None,
        speed_law: Optional[str] = None,
    ) -> "Simulation":
        """A simulation of this map, with ``crowdfield simulate``'s options and defaults.

        Parameters
        ----------
        seed : int
            Seeds the spawning and the local layer (``--seed``), 0 to 2**64 - 1.
        local : {"none", "boids", "orca", "boids+orca"}
            The local layer (``--local``); a boids mode with no group to steer runs without
            boids, with a :class:`CrowdfieldWarning`, as the command does.
        dt : float or None
            Time step, seconds; None picks it from the map (``--dt``).
        max_time : float
            Stop at this simulated time, seconds (``--max-time``): the run takes whole steps and
            its ``end_time`` is never later.
        replan_every, order, backend, local_backend
            ``--replan-every``, ``--order`` (1 or 2), ``--backend`` ("cpu", "gpu", "auto"),
            ``--local-backend`` ("cpu-single", "cpu-multi", "gpu").
        trajectory_every : int, str or None
            Record trajectories every this many steps (at least 1), or every so many seconds of
            simulated time as a string such as ``"0.5s"`` (rounded to a whole number of steps,
            at least one), as ``--trajectory-every`` and by the same rule: at most the whole run
            (``max_time``); a string of digits is a count of steps. None records no
            trajectories (``--trajectories=none``).
        model : {"pedestrian", "continuum_crowds"} or None
            The model that moves the walkers (``--model``); None: the map's (pedestrian for a
            map without ``params``, continuum_crowds for one with them).
        speed_law : {"linear", "weidmann"} or None
            Speed–density law (``--speed-law``); None: the map's ``params.speed_law``, linear
            when the map does not set it.

        The warning the command prints when it starts a run (a boids mode with no group to
        steer) is given here as a :class:`CrowdfieldWarning`; the others come when the run
        finishes (see :meth:`Simulation.run`).
        """
        for name, value in (("seed", seed), ("replan_every", replan_every)):
            _check_whole(name, value, _U64_MAX if name == "seed" else _USIZE_MAX)
        every = _trajectory_every(trajectory_every)
        native = self._native.simulation(
            int(seed),
            str(local),
            None if dt is None else float(dt),
            float(max_time),
            int(replan_every),
            int(order),
            str(backend),
            str(local_backend),
            every,
            None if model is None else str(model),
            None if speed_law is None else str(speed_law),
        )
        sim = Simulation(native)
        sim._give_warnings(stacklevel=2)
        return sim

    def __repr__(self) -> str:
        rows, cols = self.shape
        return f"<crowdfield.Map {self.name!r}: {rows} x {cols} cells of {self.cell_size} m, groups {self.group_names}>"


#: Extensions :func:`load_map` imports as floor plans rather than reading as map JSON.
_PLAN_EXTENSIONS = (".dxf", ".wkt", ".geojson")


def load_map(path, allow_outside_rasters: bool = False, **import_options) -> Map:
    """Loads, validates and compiles the map at ``path``: a map JSON file, or a floor plan
    (``.dxf``, ``.wkt``, ``.geojson``) imported as ``crowdfield import`` does (docs/import.md),
    with ``import_options`` among ``density`` (persons/m² for distributions without a count),
    ``counts`` (one per distribution, ``None`` keeps the plan's), ``cell_size``, ``layers``
    (``"walkable=FLOOR,exits=OUT"``) and ``name``.

    Raises ``OSError`` when the file cannot be read, and ``ValueError`` with the command's
    message for an invalid map or plan, a raster it names included (missing, unreadable, or
    outside the map's folder without ``allow_outside_rasters=True``). The warnings the command
    prints about the map (``warning: MAP: ...``) are given as :class:`CrowdfieldWarning`.
    """
    if os.fspath(path).lower().endswith(_PLAN_EXTENSIONS):
        return _imported(_native.import_plan([os.fspath(path)], **_import_args(import_options)))
    if import_options:
        raise TypeError(f"load_map: {', '.join(import_options)}: only for floor plans ({', '.join(_PLAN_EXTENSIONS)})")
    m = Map(_native.load_map(os.fspath(path), bool(allow_outside_rasters)))
    _warn_all(m._native.warnings(), stacklevel=2)
    return m


def map_from_wkt(
    wkt: str,
    exits: Optional[List[str]] = None,
    distributions: Optional[List[str]] = None,
    counts: Optional[List[Optional[int]]] = None,
    density: Optional[float] = None,
    cell_size: Optional[float] = None,
    name: Optional[str] = None,
) -> Map:
    """A map from WKT as JuPedSim takes it: ``wkt`` is the walkable area (a polygon with holes,
    a multipolygon or a collection of polygons) or ``dxf2wkt``'s nested collection; ``exits``
    and ``distributions`` add polygons as WKT strings, ``counts`` the walkers of each
    distribution (or ``density`` persons/m² for all without one)::

        m = crowdfield.map_from_wkt(area_wkt, exits=[exit_wkt], distributions=[start_wkt], counts=[50])
    """
    if exits or distributions:
        text = "GEOMETRYCOLLECTION ({}, {}, {})".format(
            f"GEOMETRYCOLLECTION ({wkt})",
            "GEOMETRYCOLLECTION ({})".format(", ".join(exits)) if exits else "GEOMETRYCOLLECTION EMPTY",
            "GEOMETRYCOLLECTION ({})".format(", ".join(distributions))
            if distributions
            else "GEOMETRYCOLLECTION EMPTY",
        )
    else:
        text = wkt
    args = _import_args({"counts": counts, "density": density, "cell_size": cell_size, "name": name})
    return _imported(_native.import_plan([], wkt=text, **args))


def map_from_shapely(walkable, exits=(), distributions=(), counts=None, density=None, cell_size=None, name=None) -> Map:
    """A map from shapely geometries, so a JuPedSim script brings its geometry over in one
    line: ``walkable`` is the walkable area (a ``Polygon`` with holes, a ``MultiPolygon`` or a
    ``GeometryCollection``), ``exits`` and ``distributions`` lists of polygons, ``counts`` the
    walkers of each distribution::

        m = crowdfield.map_from_shapely(area, exits=[exit_polygon], distributions=[start], counts=[50])
    """

    def wkt_of(g):
        text = getattr(g, "wkt", None)
        if text is None:
            raise TypeError(f"map_from_shapely: {g!r}: expected a shapely geometry")
        return text

    return map_from_wkt(
        wkt_of(walkable),
        exits=[wkt_of(g) for g in exits],
        distributions=[wkt_of(g) for g in distributions],
        counts=counts,
        density=density,
        cell_size=cell_size,
        name=name,
    )


def _import_args(options: Dict[str, Any]) -> Dict[str, Any]:
    known = {"counts", "density", "cell_size", "layers", "name"}
    unknown = sorted(set(options) - known)
    if unknown:
        raise TypeError(f"import options: {', '.join(unknown)}: expected among {', '.join(sorted(known))}")
    return {k: v for k, v in options.items() if v is not None}


def _imported(result) -> Map:
    """The map of ``_native.import_plan``'s JSON, loaded as :func:`load_map` loads a file."""
    import tempfile

    map_json, summary = result
    with tempfile.TemporaryDirectory(prefix="crowdfield-import-") as folder:
        path = os.path.join(folder, "map.json")
        with open(path, "w", encoding="utf-8") as f:
            f.write(map_json)
        m = Map(_native.load_map(path, False))
    m.import_summary = json.loads(summary)
    _warn_all(m._native.warnings(), stacklevel=3)
    return m


def study(
    map,
    out,
    seeds: int = 10,
    discount_exits: bool = False,
    scenarios=(),
    aset: Optional[float] = None,
    max_time: float = 600.0,
    until_converged: bool = False,
    max_seeds: int = 100,
    first_seed: int = 1,
    allow_outside_rasters: bool = False,
):
    """Runs many seeds of the map at ``map`` as drawn, with ``discount_exits=True`` each exit
    blocked in turn, and each scenario file in ``scenarios``, into the folder ``out`` (as
    ``crowdfield study``: every run's report, ``study.json``, ``study.html``), and returns the
    statistics as a pandas DataFrame, one row per scenario (the map as drawn first), indexed
    by the scenario's name: ``runs``, ``complete_runs``, the evacuation time's ``mean``,
    ``sd`` (n - 1), ``min``, ``p50``, ``p95``, ``max``, ``premovement_p95``,
    ``movement_mean``, ``converged_after``, ``aset``, ``margin``, ``blocked`` and
    ``cannot_run``. The whole ``study.json`` is in ``frame.attrs["study"]``.

    Raises ``ValueError`` for options no study runs with and for scenario files that do not
    fit the map (naming the file and the key), ``OSError`` when a file cannot be read or
    written, and ``ImportError`` without pandas.
    """
    try:
        import pandas as pd
    except ImportError:
        raise ImportError("study() returns a pandas DataFrame: pip install pandas")
    _check_whole("seeds", seeds, _USIZE_MAX)
    _check_whole("max_seeds", max_seeds, _USIZE_MAX)
    _check_whole("first_seed", first_seed, _U64_MAX)
    if isinstance(scenarios, (str, os.PathLike)):
        scenarios = [scenarios]
    if aset is not None and (isinstance(aset, bool) or not isinstance(aset, numbers.Real)):
        raise ValueError(f"aset: expected a number of seconds or None, got {_given(aset)}")
    if isinstance(max_time, bool) or not isinstance(max_time, numbers.Real):
        raise ValueError(f"max_time: expected a number of seconds, got {_given(max_time)}")
    text = _native.study(
        os.fspath(map),
        os.fspath(out),
        int(seeds),
        int(first_seed),
        bool(discount_exits),
        [os.fspath(p) for p in scenarios],
        None if aset is None else float(aset),
        float(max_time),
        bool(until_converged),
        int(max_seeds),
        bool(allow_outside_rasters),
    )
    data = json.loads(text)
    rows = []
    for sc in data["scenarios"]:
        t = sc["evacuation_time"] or {}
        rows.append(
            {
                "scenario": sc["name"],
                "runs": sc["runs"],
                "complete_runs": sc["complete_runs"],
                "mean": t.get("mean"),
                "sd": t.get("sd"),
                "min": t.get("min"),
                "p50": t.get("p50"),
                "p95": t.get("p95"),
                "max": t.get("max"),
                "premovement_p95": (sc["premovement"] or {}).get("p95"),
                "movement_mean": (sc["movement"] or {}).get("mean"),
                "converged_after": sc["converged_after"],
                "aset": sc["aset"],
                "margin": sc["margin"],
                "blocked": ", ".join(sc["blocked"]),
                "cannot_run": sc["cannot_run"],
            }
        )
    frame = pd.DataFrame(rows).set_index("scenario")
    frame.attrs["study"] = data
    return frame


_MAPS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "maps")


def bundled_map(name: str) -> str:
    """The path of one of the example maps shipped in the package (the repository's
    ``maps/``): ``load_map(bundled_map("bottleneck"))`` works wherever the package is
    installed. ``name`` is the file's name with or without ``.json``; an unknown name raises
    ``ValueError`` listing the bundled maps."""
    stem = str(name)
    if stem.endswith(".json"):
        stem = stem[: -len(".json")]
    names = bundled_maps()
    if stem not in names:
        raise ValueError(f"bundled_map: {name!r}: expected one of {', '.join(names)}")
    return os.path.join(_MAPS, stem + ".json")


def bundled_maps() -> List[str]:
    """The names of the maps :func:`bundled_map` knows, sorted."""
    try:
        files = os.listdir(_MAPS)
    except OSError:
        return []
    return sorted(f[: -len(".json")] for f in files if f.endswith(".json") and f != "map.schema.json")
