"""PedPy, the Jülich pedestrian-analysis library, on a crowdfield run of maps/bottleneck.json.

Usage: python3 pedpy_check.py RUN_FOLDER. Loads trajectories.sqlite (trajectories and walkable
area) as PedPy loads JuPedSim's output, computes the classic density in a 2 m x 2 m measurement
area in front of the door and the N-t curve at a measurement line across the room before the door, and
prints the figures as one JSON object for the Rust test (tests/pedpy_client.rs) to compare with
report.json.
"""

import json
import pathlib
import sys

import pedpy

run = pathlib.Path(sys.argv[1])
db = run / "trajectories.sqlite"
traj = pedpy.load_trajectory_from_jupedsim_sqlite(trajectory_file=db)
walkable = pedpy.load_walkable_area_from_jupedsim_sqlite(trajectory_file=db)

# The door of maps/bottleneck.json spans y 7.5..8.5 m in the wall at x = 19.5 m; walkers are
# counted out, and leave the trajectories, once they stand in it (a step before any line drawn
# in its mouth). The line spans the room 1 m before the wall, which every walker crosses on the
# way to the door; the area is the 2 m x 2 m in front of the door.
line = pedpy.MeasurementLine([(18.5, 0.0), (18.5, 16.0)])
area = pedpy.MeasurementArea([(17.5, 7.0), (19.5, 7.0), (19.5, 9.0), (17.5, 9.0)])

density = pedpy.compute_classic_density(traj_data=traj, measurement_area=area)
nt, crossings = pedpy.compute_n_t(traj_data=traj, measurement_line=line)
times = sorted(crossings.frame / traj.frame_rate)
flow = (len(times) - 1) / (times[-1] - times[0]) if len(times) >= 2 else None

print(
    json.dumps(
        {
            "frame_rate": traj.frame_rate,
            "persons": int(traj.data.id.nunique()),
            "walkable_area_m2": walkable.polygon.area,
            "crossed": int(nt.cumulative_pedestrians.iloc[-1]),
            "first_crossing": times[0] if times else None,
            "last_crossing": times[-1] if times else None,
            "flow": flow,
            "max_density": float(density.density.max()),
            "mean_density": float(density.density.mean()),
        }
    )
)
