"""The simulation half of the package: :class:`Simulation`, a run stepped from Python, and
:class:`StepEvents`, what one step did (re-exported by ``crowdfield``)."""

import json
import math
from typing import Any, Dict, List, Optional, Tuple, Union

import numpy as np

from . import _native as _native_module
from ._movers import ObstacleMethods

TRAJECTORY_DTYPE = np.dtype(
    [
        ("t", np.float64),
        ("id", np.uint32),
        ("group", np.uint32),
        ("x", np.float32),
        ("y", np.float32),
        ("vx", np.float32),
        ("vy", np.float32),
        ("frame", np.int64),
    ]
)


_ARRIVAL_DTYPE = np.dtype([("id", np.uint32), ("group", np.uint32), ("exit", np.int64), ("time", np.float64)])


class StepEvents:
    """What happened in one step (:meth:`Simulation.step`).

    ``time``: the time at the end of the step, seconds; ``arrivals``: structured array (id,
    group, exit, time) of the walkers that left, ``id`` being the walker's handle; ``exits``:
    ``(time, name, open)`` of the exits that opened or closed at the start of the step;
    ``entered``: uint32 handles of the walkers a source brought in; ``waiting_to_enter``: walkers
    due from a source that found no room and wait for the next step; ``stages``:
    ``(handle, group, stage, time, waited)`` of the route stages walkers passed (a waypoint
    reached, a waiting area left); ``blocked``: uint32 handles of the walkers a moving obstacle
    reached and a wall kept from getting out of its way; ``pushed``: how many walkers the moving
    obstacles pushed aside.
    """

    __slots__ = ("time", "arrivals", "exits", "entered", "waiting_to_enter", "stages", "blocked", "pushed")

    def __init__(self, time, arrivals, exits, entered, waiting_to_enter, stages=(), blocked=None, pushed=0):
        self.time = time
        self.arrivals = arrivals
        self.exits = exits
        self.entered = entered
        self.waiting_to_enter = waiting_to_enter
        self.stages = list(stages)
        self.blocked = np.zeros(0, dtype=np.uint32) if blocked is None else blocked
        self.pushed = pushed

    @classmethod
    def _from_native(cls, native) -> "StepEvents":
        time, arrivals, exits, entered, waiting, stages = native[:6]
        blocked, pushed = native[6:8]
        return cls(
            time,
            np.array(arrivals, dtype=_ARRIVAL_DTYPE),
            list(exits),
            np.array(entered, dtype=np.uint32),
            int(waiting),
            stages,
            np.array(blocked, dtype=np.uint32),
            int(pushed),
        )

    def __repr__(self) -> str:
        return (
            f"StepEvents(time={self.time}, arrivals={len(self.arrivals)}, exits={self.exits}, "
            f"entered={len(self.entered)}, waiting_to_enter={self.waiting_to_enter}, stages={len(self.stages)})"
        )


class Simulation(ObstacleMethods):
    """A crowd run on a map (made by :meth:`Map.simulation`).

    Besides stepping, a program drives it at run time: :meth:`add_walker` and
    :meth:`remove_walker` with handles that stay valid until the walker leaves,
    :meth:`position` and :meth:`velocity` by handle (or :attr:`positions` with :attr:`handles`),
    :meth:`set_exit_open`, moving obstacles (:meth:`add_obstacle`, :meth:`move_obstacle`,
    :meth:`remove_obstacle`, :meth:`obstacles`), and each :meth:`step`'s :class:`StepEvents`."""

    def __init__(self, native: Any):
        self._native = native

    def _give_warnings(self, stacklevel: int) -> None:
        from . import _warn_all  # the package's, defined before it imports this module

        _warn_all(self._native.take_warnings(), stacklevel + 1)

    def step(self) -> "StepEvents":
        """Advances one step; returns its :class:`StepEvents`: the arrivals with their exits,
        the exits that opened or closed, the walkers a source brought in.

        Once the run is finished (:attr:`finished`: everyone arrived and no source has walkers
        to bring, or one more step would pass ``max_time``) it does nothing and returns no
        event: the time never passes ``max_time``. The step that finishes the run gives the
        command's closing warnings (agents still inside, the report's ``warnings``, a GPU run
        that finished on the CPU) as :class:`CrowdfieldWarning`.
        """
        events = StepEvents._from_native(self._native.step())
        self._give_warnings(stacklevel=2)
        return events

    def add_walker(
        self, x: float, y: float, group: Union[int, str] = 0, speed: float = 1.34, radius: float = 0.25
    ) -> int:
        """Adds a walker at ``(x, y)`` metres of ``group`` (an index or a name) with a preferred
        ``speed`` (m/s) and a body of ``radius`` (m), walking from the next step; returns its
        handle, valid until it leaves. ``ValueError`` names the argument the run cannot take
        (a position in a wall, a speed above what the time step was chosen for, a radius above
        the scene's largest body)."""
        if isinstance(group, str):
            names = self._native.group_names
            if group not in names:
                raise ValueError(f"group: {group!r}: expected one of {names}")
            group = names.index(group)
        return self._native.add_walker(float(x), float(y), int(group), float(speed), float(radius))

    def remove_walker(self, handle: int) -> None:
        """Takes the walker ``handle`` off the map (the report counts it as removed). ``KeyError``
        when it is not on the map."""
        self._native.remove_walker(int(handle))

    def remove_walkers(self, handles) -> int:
        """Takes the walkers ``handles`` (a sequence or array of handles) off the map in one pass
        over the crowd, all or none; returns how many left. ``KeyError`` naming the first handle
        that is not on the map (then none is removed)."""
        return self._native.remove_walkers([int(h) for h in np.asarray(handles).ravel()])

    @property
    def handles(self) -> np.ndarray:
        """uint32 (n,): the handle of each walker on the map, in :attr:`positions`' order
        (ascending; the same numbers as :attr:`ids`)."""
        return self._native.handles

    def position(self, handle: int) -> Tuple[float, float]:
        """``(x, y)`` of the walker ``handle``, metres; ``KeyError`` when it is not on the map."""
        return self._native.position_of(int(handle))

    def velocity(self, handle: int) -> Tuple[float, float]:
        """``(vx, vy)`` of the walker ``handle`` in the last step, m/s; ``KeyError`` when it is
        not on the map."""
        return self._native.velocity_of(int(handle))

    def set_exit_open(self, name: str, open: bool = True) -> int:
        """Opens (or with ``open=False`` closes) every exit named ``name``, in every group; the
        potentials see it in the next step and no one leaves through a closed exit. Returns how
        many goals bear the name; ``ValueError`` for an unknown name."""
        return self._native.set_exit_open(str(name), bool(open))

    def exit_open(self, group: int, goal: int) -> bool:
        """Whether goal ``goal`` (its index in the group's goals) of group ``group`` is open."""
        return self._native.exit_open(int(group), int(goal))

    def exit_changes(self) -> List[Tuple[float, str, bool]]:
        """Every exit change so far, the map's events and :meth:`set_exit_open`'s, as
        ``(time, name, open)``."""
        return self._native.exit_changes()

    def set_walker_goal(self, handle: int, goal: Optional[str]) -> None:
        """Sends the walker ``handle`` to ``goal`` once its route is walked: the name of one of
        its group's exits (it leaves by that one, or by the quickest while it is closed), the
        name of a stage (it walks there and stands in it), or ``None`` for the quickest exit.
        ``KeyError`` when it is not on the map, ``ValueError`` for an unknown name."""
        _native_module.sim_set_walker_goal(self._native, int(handle), None if goal is None else str(goal))

    def set_group_goal(self, group: Union[int, str], goal: Optional[str]) -> int:
        """Sends every walker of ``group`` (an index or a name), on the map and to come, to
        ``goal`` as :meth:`set_walker_goal` does (``None``: its exit shares or the quickest exit
        again); returns how many walkers on the map it sent."""
        if isinstance(group, str):
            names = self._native.group_names
            if group not in names:
                raise ValueError(f"group: {group!r}: expected one of {names}")
            group = names.index(group)
        return _native_module.sim_set_group_goal(self._native, int(group), None if goal is None else str(goal))

    def release(self, name: str) -> int:
        """Releases every waiting area named ``name``: its walkers leave once their seconds are
        over, and later ones wait their seconds only. Returns how many stages bear the name;
        ``ValueError`` for an unknown name."""
        return _native_module.sim_release(self._native, str(name))

    def set_region(self, name: str, speed_factor: Optional[float] = None, discomfort: Optional[float] = None) -> None:
        """Sets the speed factor and/or the discomfort (``None`` keeps one) of the region named
        ``name``: walkers inside walk at their speed times the factor, and the potentials see
        it, from the next step on. ``ValueError`` for an unknown region or a bad value."""
        _native_module.sim_set_region(
            self._native,
            str(name),
            None if speed_factor is None else float(speed_factor),
            None if discomfort is None else float(discomfort),
        )

    def region(self, name: str) -> Optional[Tuple[float, float]]:
        """``(speed_factor, discomfort)`` of the region named ``name`` now, ``None`` when the map
        has no region of that name."""
        return _native_module.sim_region(self._native, str(name))

    def stages_passed(self) -> List[Tuple[int, int, str, float, bool]]:
        """Every route stage passed so far as ``(handle, group, stage, time, waited)``."""
        return _native_module.sim_stages_passed(self._native)

    def run(self, until: Optional[float] = None) -> int:
        """Steps until every agent has arrived or the time limit is reached, or until the
        simulated time reaches ``until`` seconds; returns the number of steps taken (0 when the
        run is already finished). ``until`` NaN raises ``ValueError``. When the run finishes,
        the command's closing warnings (agents still inside, the report's ``warnings``, a GPU
        run that finished on the CPU) are given as :class:`CrowdfieldWarning`, once."""
        if until is not None:
            until = float(until)
            if math.isnan(until):
                raise ValueError("until: nan: expected a time in seconds or None")
        steps = self._native.run(until)
        self._give_warnings(stacklevel=2)
        return steps

    @property
    def finished(self) -> bool:
        """Whether the run is over (everyone arrived, or the time limit)."""
        return self._native.finished

    @property
    def time(self) -> float:
        """Simulated time, seconds."""
        return self._native.time

    @property
    def steps(self) -> int:
        """Steps taken so far."""
        return self._native.steps

    @property
    def dt(self) -> float:
        """Time step, seconds."""
        return self._native.dt

    @property
    def trajectory_every(self) -> int:
        """Steps between two trajectory recordings (0: none are recorded, ``trajectory_every=None``)."""
        return self._native.trajectory_every

    @property
    def frame_rate(self) -> float:
        """Trajectory recordings per simulated second, ``1 / (trajectory_every * dt)``: the
        ``frame_rate`` for ``pedpy.TrajectoryData`` (the ``fps`` of the command's
        trajectories.sqlite). NaN when no trajectories are recorded."""
        every = self.trajectory_every
        return 1.0 / (every * self.dt) if every else math.nan

    @property
    def positions(self) -> np.ndarray:
        """float32 (n, 2): x, y of each walking agent, metres."""
        return self._native.positions

    @property
    def velocities(self) -> np.ndarray:
        """float32 (n, 2): vx, vy of each walking agent, m/s."""
        return self._native.velocities

    @property
    def groups(self) -> np.ndarray:
        """uint32 (n,): the group index of each walking agent."""
        return self._native.groups

    @property
    def ids(self) -> np.ndarray:
        """uint32 (n,): the id of each walking agent."""
        return self._native.ids

    def arrivals(self) -> np.ndarray:
        """Structured array of arrivals so far: id, group, exit, time."""
        return np.array(self._native.arrivals(), dtype=_ARRIVAL_DTYPE)

    def report(self) -> Dict[str, Any]:
        """The run's report as a dict: the content ``crowdfield simulate`` writes to report.json."""
        return json.loads(self._native.report_json())

    def trajectories(self, as_frame: Optional[bool] = None):
        """The recorded trajectories: one row per walking agent per recorded step, with columns
        t, id, group, x, y, vx, vy (``trajectories.csv``'s) and frame: the index of the
        recording, ``t / (trajectory_every * dt)`` (0, 1, 2, ...), as trajectories.sqlite
        numbers its frames. With pandas, ``pedpy.TrajectoryData(data=sim.trajectories(),
        frame_rate=sim.frame_rate)`` reads it as it is.

        Returns a pandas DataFrame when pandas is installed (or ``as_frame=True``, which raises
        ImportError without it), otherwise (or with ``as_frame=False``) a numpy structured array.
        """
        cols = self._native.trajectory_columns()
        out = np.empty(len(cols[0]), dtype=TRAJECTORY_DTYPE)
        for name, col in zip(TRAJECTORY_DTYPE.names, cols):
            out[name] = col
        if as_frame is False:
            return out
        try:
            import pandas as pd
        except ImportError:
            if as_frame:
                raise ImportError("trajectories(as_frame=True) needs pandas: pip install pandas")
            return out
        return pd.DataFrame(out)

    def __repr__(self) -> str:
        return f"<crowdfield.Simulation t={self.time:.2f} s, {len(self.ids)} walking, {self.steps} steps>"
