"""Type stubs for crowdfield (see crowdfield/__init__.py for the documentation)."""

from os import PathLike
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

__version__: str
TRAJECTORY_DTYPE: np.dtype

_Spacing = Union[float, Sequence[float]]

def distance(
    phi: npt.ArrayLike,
    dx: _Spacing = ...,
    self_test: bool = ...,
    order: int = ...,
    narrow: float = ...,
    periodic: Union[bool, Sequence[bool]] = ...,
) -> np.ndarray: ...
def travel_time(
    phi: npt.ArrayLike,
    speed: npt.ArrayLike,
    dx: _Spacing = ...,
    self_test: bool = ...,
    order: int = ...,
    narrow: float = ...,
    periodic: Union[bool, Sequence[bool]] = ...,
) -> np.ndarray: ...
def extension_velocities(
    phi: npt.ArrayLike,
    speed: npt.ArrayLike,
    dx: _Spacing = ...,
    self_test: bool = ...,
    order: int = ...,
    ext_mask: Optional[npt.ArrayLike] = ...,
    narrow: float = ...,
    periodic: Union[bool, Sequence[bool]] = ...,
) -> Tuple[np.ndarray, np.ndarray]: ...
def eikonal(speed: npt.ArrayLike, goal: npt.ArrayLike, cell_size: float = ..., order: int = ...) -> np.ndarray:
    """phi with |grad phi| = 1 / speed, 0 on the goal cells (nonzero), inf where unreachable.
    Speeds <= 0, not finite, or positive below about 3e-39 (1 / speed overflows float32) are
    walls; speeds above 2**126 are refused."""
def eikonal_anisotropic(
    cost: npt.ArrayLike, goal: npt.ArrayLike, cell_size: float = ..., order: int = ...
) -> np.ndarray: ...

class CrowdfieldWarning(RuntimeWarning): ...

class Plan:
    solver: str
    rho: np.ndarray
    speed: np.ndarray
    cost: np.ndarray
    goals: List[np.ndarray]
    potentials: List[np.ndarray]
    gradients: List[Tuple[np.ndarray, np.ndarray]]
    group_names: List[str]

class Map:
    import_summary: Optional[Dict[str, Any]]
    @property
    def name(self) -> str: ...
    @property
    def path(self) -> str: ...
    @property
    def shape(self) -> Tuple[int, int]: ...
    @property
    def cell_size(self) -> float: ...
    @property
    def group_names(self) -> List[str]: ...
    @property
    def obstacle(self) -> np.ndarray: ...
    def walkable_area(self) -> str: ...
    def plan(self, order: int = ..., backend: str = ...) -> Plan: ...
    def simulation(
        self,
        seed: int = ...,
        local: str = ...,
        dt: Optional[float] = ...,
        max_time: float = ...,
        replan_every: int = ...,
        order: int = ...,
        backend: str = ...,
        local_backend: str = ...,
        trajectory_every: Union[int, str, None] = ...,
        model: Optional[str] = ...,
        speed_law: Optional[str] = ...,
    ) -> Simulation: ...

class StepEvents:
    time: float
    arrivals: np.ndarray
    exits: List[Tuple[float, str, bool]]
    entered: np.ndarray
    waiting_to_enter: int
    stages: List[Tuple[int, int, str, float, bool]]

class Simulation:
    def step(self) -> StepEvents: ...
    def add_walker(
        self, x: float, y: float, group: Union[int, str] = ..., speed: float = ..., radius: float = ...
    ) -> int: ...
    def remove_walker(self, handle: int) -> None: ...
    @property
    def handles(self) -> np.ndarray: ...
    def position(self, handle: int) -> Tuple[float, float]: ...
    def velocity(self, handle: int) -> Tuple[float, float]: ...
    def set_exit_open(self, name: str, open: bool = ...) -> int: ...
    def exit_open(self, group: int, goal: int) -> bool: ...
    def exit_changes(self) -> List[Tuple[float, str, bool]]: ...
    def set_walker_goal(self, handle: int, goal: Optional[str]) -> None: ...
    def set_group_goal(self, group: Union[int, str], goal: Optional[str]) -> int: ...
    def release(self, name: str) -> int: ...
    def set_region(
        self, name: str, speed_factor: Optional[float] = ..., discomfort: Optional[float] = ...
    ) -> None: ...
    def region(self, name: str) -> Optional[Tuple[float, float]]: ...
    def stages_passed(self) -> List[Tuple[int, int, str, float, bool]]: ...
    def run(self, until: Optional[float] = ...) -> int: ...
    @property
    def finished(self) -> bool: ...
    @property
    def time(self) -> float: ...
    @property
    def steps(self) -> int: ...
    @property
    def dt(self) -> float: ...
    @property
    def trajectory_every(self) -> int: ...
    @property
    def frame_rate(self) -> float: ...
    @property
    def positions(self) -> np.ndarray: ...
    @property
    def velocities(self) -> np.ndarray: ...
    @property
    def groups(self) -> np.ndarray: ...
    @property
    def ids(self) -> np.ndarray: ...
    def arrivals(self) -> np.ndarray: ...
    def report(self) -> Dict[str, Any]: ...
    def trajectories(self, as_frame: Optional[bool] = ...) -> Any: ...

def load_map(path: Union[str, PathLike], allow_outside_rasters: bool = ..., **import_options: Any) -> Map: ...
def map_from_wkt(
    wkt: str,
    exits: Optional[List[str]] = ...,
    distributions: Optional[List[str]] = ...,
    counts: Optional[List[Optional[int]]] = ...,
    density: Optional[float] = ...,
    cell_size: Optional[float] = ...,
    name: Optional[str] = ...,
) -> Map: ...
def map_from_shapely(
    walkable: Any,
    exits: Sequence[Any] = ...,
    distributions: Sequence[Any] = ...,
    counts: Optional[List[Optional[int]]] = ...,
    density: Optional[float] = ...,
    cell_size: Optional[float] = ...,
    name: Optional[str] = ...,
) -> Map: ...
def study(
    map: Union[str, PathLike],
    out: Union[str, PathLike],
    seeds: int = ...,
    discount_exits: bool = ...,
    scenarios: Any = ...,
    aset: Optional[float] = ...,
    max_time: float = ...,
    until_converged: bool = ...,
    max_seeds: int = ...,
    first_seed: int = ...,
    allow_outside_rasters: bool = ...,
) -> Any: ...
def bundled_map(name: str) -> str: ...
def bundled_maps() -> List[str]: ...
