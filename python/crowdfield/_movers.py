"""Moving obstacles of a :class:`~crowdfield.Simulation`: added, moved and removed by handle,
their positions read back. A shape is given in the map's words (docs/map-format.md,
"Moving obstacles"): ``{"rect": {"min": [-2, -1], "max": [2, 1]}}`` or
``{"circle": {"center": [0, 0], "radius": 1}}``, around the obstacle's position, with an
optional ``"angle"`` in degrees."""

import json
from typing import Any, Dict, List, Optional, Sequence, Tuple

from . import _native


def _shape_json(shape: Dict[str, Any]) -> str:
    if not isinstance(shape, dict):
        raise TypeError(f"shape: {shape!r}: expected a dict such as {{'circle': {{'center': [0, 0], 'radius': 1}}}}")
    return json.dumps(shape)


class ObstacleMethods:
    """The obstacle half of :class:`~crowdfield.Simulation`'s run-time API."""

    _native: Any

    def add_obstacle(
        self,
        shape: Dict[str, Any],
        position: Sequence[float],
        velocity: Sequence[float] = (0.0, 0.0),
    ) -> int:
        """Adds an obstacle of ``shape`` standing at ``position`` ``(x, y)`` metres and moving
        at ``velocity`` ``(vx, vy)`` m/s; returns its handle. The potentials plan around it from
        the next step (where it stands and where it will stand within a second), and bodies it
        reaches are pushed aside, never through a wall. ``ValueError`` names what is wrong with
        the shape or the numbers."""
        x, y = position
        vx, vy = velocity
        return _native.add_obstacle(self._native, _shape_json(shape), [float(x), float(y)], [float(vx), float(vy)])

    def add_obstacle_on_path(
        self,
        shape: Dict[str, Any],
        path: Sequence[Sequence[float]],
        speed: float,
        loop: bool = False,
    ) -> int:
        """Adds an obstacle of ``shape`` travelling the points ``path`` at ``speed`` m/s from
        now on (round again from the last point to the first with ``loop``); returns its
        handle."""
        points = [[float(x), float(y)] for x, y in path]
        return _native.add_obstacle(self._native, _shape_json(shape), [0.0, 0.0], [0.0, 0.0], points, float(speed), bool(loop))

    def move_obstacle(
        self, handle: int, position: Sequence[float], velocity: Optional[Sequence[float]] = None
    ) -> None:
        """Puts the obstacle ``handle`` at ``position`` at once, moving on at ``velocity`` when
        given (else at its velocity so far; one on a path leaves it). ``KeyError`` for an
        unknown handle."""
        x, y = position
        v = None if velocity is None else [float(velocity[0]), float(velocity[1])]
        _native.move_obstacle(self._native, int(handle), [float(x), float(y)], v)

    def remove_obstacle(self, handle: int) -> None:
        """Takes the obstacle ``handle`` off the map; ``KeyError`` for an unknown handle."""
        _native.remove_obstacle(self._native, int(handle))

    def obstacles(self) -> List[Tuple[int, str, Tuple[float, float], Tuple[float, float]]]:
        """Every obstacle on the map as ``(handle, name, (x, y), (vx, vy))``, handles ascending
        (the map's ``movers`` first)."""
        return [(h, name, (x, y), (vx, vy)) for h, name, x, y, vx, vy in _native.obstacles(self._native)]

    def obstacle_position(self, handle: int) -> Tuple[float, float]:
        """``(x, y)`` of the obstacle ``handle``, metres; ``KeyError`` for an unknown handle."""
        for h, _, position, _ in self.obstacles():
            if h == int(handle):
                return position
        raise KeyError(f"handle {handle}: not an obstacle on the map (removed, or never given)")

    def obstacle_distance(self, handle: int, x: float, y: float) -> float:
        """The signed distance from ``(x, y)`` to the outline of obstacle ``handle``, metres
        (negative inside): a body of radius ``r`` there overlaps it when this is below ``r``."""
        return _native.obstacle_distance(self._native, int(handle), float(x), float(y))
