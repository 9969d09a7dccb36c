#!/usr/bin/env python3
"""RiMEA test 9 (1000 people leave a 30 m x 20 m room through four 1 m exits) with crowdfield's
default model against JuPedSim's collision-free speed model, on the same geometry and machine.

Both sides are timed as a user runs them, whole process: `crowdfield simulate MAP --out DIR`
(reading the map, planning, simulating every step until the room is empty, writing report.json,
the plots and the report) against a Python process that imports JuPedSim, builds the same room,
places 1000 agents and iterates until the room is empty (no trajectory file). Both place their
agents at random in the room (0.5 m from the walls), with the same body radius (0.25 m) and free
speed (1.34 m/s). crowdfield's exits are goals in the doorways at the room's edge; JuPedSim's,
1 m openings into 0.5 m alcoves outside the room (its exit stages). crowdfield's walkers choose their exit by the potential field (the quickest way
out, counting the crowd); JuPedSim's walk to the exit nearest to where they start (its journeys
name one exit per agent). The table also gives each side's evacuation time, so that the speed is
compared between runs that do the same job.

Usage (from the repository root, after `cargo build --release`):
    python3 bench/rimea9_vs_jupedsim.py [--bin target/release/crowdfield] [--seeds 3]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

WIDTH, HEIGHT, PERSONS, RADIUS, SPEED = 30.0, 20.0, 1000, 0.25, 1.34
EXITS = [(0.2 * WIDTH, 0.0), (0.8 * WIDTH, HEIGHT - 0.25), (0.8 * WIDTH, 0.0), (0.2 * WIDTH, HEIGHT - 0.25)]


def exit_rect(x, y):
    return (x - 0.5, y, x + 0.5, y + 0.25)


def crowdfield_map():
    """The map `crowdfield verify` runs as RiMEA 9 with four exits."""
    goals = []
    for k, (x, y) in enumerate(EXITS):
        x0, y0, x1, y1 = exit_rect(x, y)
        goals.append({"rect": {"min": [x0, y0], "max": [x1, y1]}, "name": f"exit {k + 1}", "width": 1.0})
    return {
        "version": 1,
        "name": "rimea-9-4-exits",
        "grid": {"cols": int(WIDTH / 0.25), "rows": int(HEIGHT / 0.25), "cell_size": 0.25},
        "groups": [{
            "name": "crowd",
            "goals": goals,
            "spawns": [{"rect": {"min": [0.5, 0.5], "max": [WIDTH - 0.5, HEIGHT - 0.5]}, "name": "room",
                        "count": PERSONS}],
            "speed": {"min": SPEED, "max": SPEED},
            "radius": RADIUS,
        }],
    }


def run_crowdfield(binary, workdir, seed):
    path = os.path.join(workdir, "rimea-9-4-exits.json")
    with open(path, "w") as f:
        json.dump(crowdfield_map(), f)
    out = os.path.join(workdir, f"out-{seed}")
    t = time.perf_counter()
    subprocess.run([binary, "simulate", path, "--out", out, "--seed", str(seed), "--max-time", "600",
                    "--quiet"], check=True, stdout=subprocess.DEVNULL)
    seconds = time.perf_counter() - t
    with open(os.path.join(out, "report.json")) as f:
        report = json.load(f)
    return seconds, report["total"]["evacuation_time"]


# The JuPedSim side runs in a process of its own, so that its time includes starting Python and
# importing JuPedSim, as crowdfield's includes starting the program.
JUPEDSIM_RUN = r"""
import sys, time
start = time.perf_counter()
import jupedsim as jps
from shapely import Polygon, union_all
seed, width, height, persons, radius, speed = int(sys.argv[1]), *map(float, sys.argv[2:4]), int(sys.argv[4]), *map(float, sys.argv[5:7])
exits = [tuple(map(float, e.split(','))) for e in sys.argv[7:]]
# Each exit is a 1 m opening in the wall into a 0.5 m deep alcove outside the room, the exit
# stage: a walker leaves when it steps through the opening.
alcoves = [Polygon([(x0, y0), (x1, y0), (x1, y1), (x0, y1)])
           for (x0, y0, x1, y1) in ((x0, -0.5, x1, 0.0) if y0 < height / 2 else (x0, height, x1, height + 0.5)
                                    for (x0, y0, x1, y1) in exits)]
room = union_all([Polygon([(0, 0), (width, 0), (width, height), (0, height)]), *alcoves])
sim = jps.Simulation(model=jps.CollisionFreeSpeedModel(), geometry=room)
targets = []
for (x0, y0, x1, y1), alcove in zip(exits, alcoves):
    stage = sim.add_exit_stage(alcove)
    journey = sim.add_journey(jps.JourneyDescription([stage]))
    targets.append(((x0 + x1) / 2, (y0 + y1) / 2, stage, journey))
spawn = Polygon([(0.5, 0.5), (width - 0.5, 0.5), (width - 0.5, height - 0.5), (0.5, height - 0.5)])
positions = jps.distribute_by_number(polygon=spawn, number_of_agents=persons, distance_to_agents=2 * radius,
                                     distance_to_polygon=radius, seed=seed)
for (x, y) in positions:
    cx, cy, stage, journey = min(targets, key=lambda t: (t[0] - x) ** 2 + (t[1] - y) ** 2)
    sim.add_agent(jps.CollisionFreeSpeedModelAgentParameters(
        journey_id=journey, stage_id=stage, position=(x, y), desired_speed=speed, radius=radius))
while sim.agent_count() > 0 and sim.elapsed_time() < 600.0:
    sim.iterate()
print(time.perf_counter() - start, sim.elapsed_time() if sim.agent_count() == 0 else float("nan"))
"""


def run_jupedsim(seed):
    exits = [",".join(str(v) for v in exit_rect(x, y)) for (x, y) in EXITS]
    t = time.perf_counter()
    run = subprocess.run([sys.executable, "-c", JUPEDSIM_RUN, str(seed), str(WIDTH), str(HEIGHT), str(PERSONS),
                          str(RADIUS), str(SPEED), *exits], check=True, capture_output=True, text=True)
    seconds = time.perf_counter() - t
    _, evacuation = run.stdout.split()
    return seconds, float(evacuation)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default="target/release/crowdfield")
    ap.add_argument("--seeds", type=int, default=3)
    args = ap.parse_args()
    import jupedsim

    rows = []
    with tempfile.TemporaryDirectory() as workdir:
        for seed in range(args.seeds):
            ours, ours_t = run_crowdfield(args.bin, workdir, seed)
            theirs, theirs_t = run_jupedsim(seed + 1)
            rows.append((seed, ours, ours_t, theirs, theirs_t))
            print(f"seed {seed}: crowdfield {ours:.2f} s (evacuation {ours_t:.1f} s), "
                  f"JuPedSim {theirs:.2f} s (evacuation {theirs_t:.1f} s)", file=sys.stderr)
    print(f"| seed | crowdfield, s | JuPedSim {jupedsim.__version__} (collision-free speed model), s "
          "| speed-up | evacuation time, crowdfield / JuPedSim |")
    print("|---|---|---|---|---|")
    for seed, ours, ours_t, theirs, theirs_t in rows:
        print(f"| {seed} | {ours:.2f} | {theirs:.1f} | {theirs / ours:.0f}x | {ours_t:.1f} s / {theirs_t:.1f} s |")


if __name__ == "__main__":
    main()
