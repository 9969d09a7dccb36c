#!/usr/bin/env python3
"""A study's cost against plain runs, and the import of a large floor plan, side by side.

1. `crowdfield study maps/four_exits.json --seeds S --discount-exits` (the RiMEA 9 room, 1000
   people, five scenarios) against the same number of plain `crowdfield simulate` runs of the
   same map (`--trajectories none`), one after the other on the same cores: the cost of one
   study run against one plain run (target: within 5 %), and the whole study's wall time
   (target for 20 seeds: under 10 minutes on 2 cores).
2. `crowdfield import` of a 300 m x 200 m plan (60,000 m²) with 80 holes at 0.25 m cells,
   written as WKT here (target: under 10 s), and its area against shapely's.

Usage (from the repository root, after `cargo build --release`):
    python3 bench/study_and_import.py [--bin target/release/crowdfield] [--seeds 20]
"""

import argparse
import json
import os
import resource
import subprocess
import tempfile
import time


def timed(cmd):
    """Wall seconds and CPU seconds (user + system, the process and its threads) of `cmd`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def study_vs_simulate(binary, seeds, tmp):
    study_wall, study_cpu = timed([binary, "study", "maps/four_exits.json", "--seeds", str(seeds),
                                   "--discount-exits", "--quiet", "--out", os.path.join(tmp, "study")])
    runs = 5 * seeds
    sample = min(runs, 10)
    plain_cpu = 0.0
    for k in range(sample):
        _, cpu = timed([binary, "simulate", "maps/four_exits.json", "--seed", str(k + 1), "--trajectories=none",
                        "--quiet", "--out", os.path.join(tmp, f"sim{k}")])
        plain_cpu += cpu
    data = json.load(open(os.path.join(tmp, "study", "study.json")))
    return study_wall, study_cpu / runs, plain_cpu / sample, runs, data


def import_plan(binary, tmp):
    from shapely.geometry import Polygon, box

    outer = box(0, 0, 300, 200)
    holes = []
    for i in range(10):
        for j in range(8):
            x, y = 15 + i * 28, 15 + j * 23
            holes.append(box(x, y, x + 6, y + 4).exterior.coords)
    plan = Polygon(outer.exterior.coords, holes)
    path = os.path.join(tmp, "plan.wkt")
    with open(path, "w") as f:
        f.write(plan.wkt)
    out = os.path.join(tmp, "plan.json")
    start = time.perf_counter()
    result = subprocess.run([binary, "import", path, "--cell-size", "0.25", "--json", "--out", out],
                            check=True, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    summary = json.loads(result.stdout)
    return seconds, summary["walkable_area"], plan.area


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", default="target/release/crowdfield")
    parser.add_argument("--seeds", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        wall, study_cpu, plain_cpu, runs, data = study_vs_simulate(args.bin, args.seeds, tmp)
        print(f"study: {runs} runs in {wall:.1f} s on {os.cpu_count()} cores")
        print(f"CPU per run: study {study_cpu:.2f} s, plain simulate {plain_cpu:.2f} s "
              f"(study / plain = {study_cpu / plain_cpu:.3f})")
        for s in data["scenarios"]:
            t = s["evacuation_time"]
            print(f"  {s['name']}: mean {t['mean']:.1f} s, sd {t['sd']:.1f}, p95 {t['p95']:.1f}, max {t['max']:.1f}")
        seconds, area, shapely_area = import_plan(args.bin, tmp)
        print(f"import: {seconds:.2f} s, walkable {area:.3f} m² (shapely {shapely_area:.3f} m²)")


if __name__ == "__main__":
    main()
