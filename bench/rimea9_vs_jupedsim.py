#!/usr/bin/env python3
"""RiMEA test 9 (1000 people leave a 30 m x 20 m room through four 1 m exits) with crowdfield's
default model against JuPedSim's collision-free speed model, on the same geometry and machine.

Both sides are timed as a user runs them, whole process: `crowdfield simulate MAP --out DIR`
(reading the map, planning, simulating every step until the room is empty, writing report.json,
the plots and the report) against a Python process that imports JuPedSim, builds the same room,
places 1000 agents and iterates until the room is empty or 600 s have passed (no trajectory
file). Both place their agents at random in the room (0.5 m from the walls) at 1.34 m/s, each
with its own default body radius (crowdfield 0.25 m, JuPedSim 0.2 m; `--jupedsim-radius`), and
the same walls: the room inside a 0.5 m wall with four 1 m doors and 1 m of floor past each
(crowdfield's goal is the last 0.25 m of it, JuPedSim's exit stage the last 0.5 m, which a
centre can reach). crowdfield's walkers choose their exit by the potential field (the quickest
way out, counting the crowd); JuPedSim's walk to the door nearest to where they start (its
journeys name one exit per agent). The table gives each side's evacuation time, or how many were
still inside at 600 s, and the time per simulated second.

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
# The room stands inside a 0.5 m wall with four 1 m doors (two on the south wall, two on the
# north), 1 m of floor outside it; as `crowdfield verify` builds RiMEA 9.
WALL, OUTSIDE = 0.5, 1.0
M = WALL + OUTSIDE
TOTAL_W, TOTAL_H = WIDTH + 2 * M, HEIGHT + 2 * M
DOORS = [(M + 0.2 * WIDTH, True), (M + 0.8 * WIDTH, False), (M + 0.8 * WIDTH, True), (M + 0.2 * WIDTH, False)]


def door_rect(x, south):
    return (x - 0.5, OUTSIDE, x + 0.5, M) if south else (x - 0.5, TOTAL_H - M, x + 0.5, TOTAL_H - OUTSIDE)


def outside_rect(x, south, depth):
    """The floor past a door, 2 m wide and `depth` deep from the map's edge."""
    return (x - 1.0, 0.0, x + 1.0, depth) if south else (x - 1.0, TOTAL_H - depth, x + 1.0, TOTAL_H)


def crowdfield_map():
    """The map `crowdfield verify` runs as RiMEA 9 with four exits: goals 1 m past the doors."""
    def rect(r):
        return {"rect": {"min": [r[0], r[1]], "max": [r[2], r[3]]}}
    walls = [(OUTSIDE, OUTSIDE, TOTAL_W - OUTSIDE, M), (OUTSIDE, TOTAL_H - M, TOTAL_W - OUTSIDE, TOTAL_H - OUTSIDE),
             (OUTSIDE, OUTSIDE, M, TOTAL_H - OUTSIDE), (TOTAL_W - M, OUTSIDE, TOTAL_W - OUTSIDE, TOTAL_H - OUTSIDE)]
    shapes = [rect(w) for w in walls] + [dict(rect(door_rect(x, s)), value=0) for x, s in DOORS]
    goals = [dict(rect(outside_rect(x, s, 0.25)), name=f"exit {k + 1}", width=1.0) for k, (x, s) in enumerate(DOORS)]
    return {
        "version": 1,
        "name": "rimea-9-4-exits",
        "grid": {"cols": round(TOTAL_W / 0.25), "rows": round(TOTAL_H / 0.25), "cell_size": 0.25},
        "layers": {"obstacles": {"shapes": shapes}},
        "groups": [{
            "name": "crowd",
            "goals": goals,
            "spawns": [dict(rect((M + 0.5, M + 0.5, M + WIDTH - 0.5, M + HEIGHT - 0.5)), name="room", count=PERSONS)],
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
import json, sys, time
start = time.perf_counter()
import jupedsim as jps
from shapely import Polygon, union_all
seed, setup = int(sys.argv[1]), json.loads(sys.argv[2])
box = lambda r: Polygon([(r[0], r[1]), (r[2], r[1]), (r[2], r[3]), (r[0], r[3])])
# The room, its doors and the floor past each door; a walker leaves in the last 0.5 m of that
# floor (its centre cannot come nearer the edge than its radius).
room = union_all([box(setup["room"]), *map(box, setup["doors"]), *map(box, setup["outside"])])
sim = jps.Simulation(model=jps.CollisionFreeSpeedModel(), geometry=room)
targets = []
for door, exit_rect in zip(setup["doors"], setup["exits"]):
    stage = sim.add_exit_stage(box(exit_rect))
    journey = sim.add_journey(jps.JourneyDescription([stage]))
    targets.append(((door[0] + door[2]) / 2, (door[1] + door[3]) / 2, stage, journey))
radius, speed = setup["radius"], setup["speed"]
positions = jps.distribute_by_number(polygon=box(setup["spawn"]), number_of_agents=setup["persons"],
                                     distance_to_agents=2 * radius, distance_to_polygon=radius, seed=seed)
for (x, y) in positions:
    cx, cy, stage, journey = min(targets, key=lambda t: (t[0] - x) ** 2 + (t[1] - y) ** 2)
    sim.add_agent(jps.CollisionFreeSpeedModelAgentParameters(
        journey_id=journey, stage_id=stage, position=(x, y), desired_speed=speed, radius=radius))
while sim.agent_count() > 0 and sim.elapsed_time() < 600.0:
    sim.iterate()
print(time.perf_counter() - start, sim.elapsed_time(), sim.agent_count())
"""


def run_jupedsim(seed, radius):
    setup = {
        "room": (M, M, M + WIDTH, M + HEIGHT),
        "doors": [door_rect(x, s) for x, s in DOORS],
        "outside": [outside_rect(x, s, OUTSIDE) for x, s in DOORS],
        "exits": [outside_rect(x, s, 0.5) for x, s in DOORS],
        "spawn": (M + 0.5, M + 0.5, M + WIDTH - 0.5, M + HEIGHT - 0.5),
        "persons": PERSONS, "radius": radius, "speed": SPEED,
    }
    t = time.perf_counter()
    run = subprocess.run([sys.executable, "-c", JUPEDSIM_RUN, str(seed), json.dumps(setup)], check=True,
                         capture_output=True, text=True)
    seconds = time.perf_counter() - t
    _, simulated, left = run.stdout.split()
    return seconds, float(simulated), int(left)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default="target/release/crowdfield")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--jupedsim-radius", type=float, default=0.2,
                    help="JuPedSim's agent radius (default 0.2 m, its own default: with 0.25 m its agents lock "
                         "in the 1 m doors and the room does not empty in 600 s)")
    args = ap.parse_args()
    import jupedsim

    rows = []
    with tempfile.TemporaryDirectory() as workdir:
        for seed in range(args.seeds):
            ours, ours_t = run_crowdfield(args.bin, workdir, seed)
            theirs, simulated, left = run_jupedsim(seed + 1, args.jupedsim_radius)
            theirs_t = f"{simulated:.1f} s" if left == 0 else f"{left} of {PERSONS} left at {simulated:.0f} s"
            rows.append((seed, ours, ours_t, theirs, theirs_t, simulated))
            print(f"seed {seed}: crowdfield {ours:.2f} s (evacuation {ours_t:.1f} s), "
                  f"JuPedSim {theirs:.2f} s (evacuation {theirs_t})", file=sys.stderr)
    # A run that did not empty the room is compared per simulated second.
    print(f"| seed | crowdfield, s | JuPedSim {jupedsim.__version__} (collision-free speed model), s "
          "| speed-up | per simulated second | evacuation time, crowdfield / JuPedSim |")
    print("|---|---|---|---|---|---|")
    for seed, ours, ours_t, theirs, theirs_t, simulated in rows:
        per_second = (theirs / simulated) / (ours / ours_t)
        print(f"| {seed} | {ours:.2f} | {theirs:.1f} | {theirs / ours:.0f}x | {per_second:.0f}x "
              f"| {ours_t:.1f} s / {theirs_t} |")


if __name__ == "__main__":
    main()
