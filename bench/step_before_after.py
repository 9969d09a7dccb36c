#!/usr/bin/env python3
"""The simulation step of two builds side by side: the same benchmarks run by a build before a
change and one after it, alternately, on one machine, so that the ratios are taken within one run.

- `bench_sim` (the example `examples/bench_sim.rs`, built with `cargo build --release --example
  bench_sim`): the 256² four-group benchmark with 10,000 walkers and 512² with 100,000, on the
  default pedestrian model;
- `crowdfield bench sim` on a venue written here: an 80 m x 60 m hall inside a 0.5 m wall with
  eight 2 m doors (three on each long side, one on each short side) and 0.5 m of floor past each,
  0.25 m cells, 10,000 people spread over the hall, the default model.

Each row gives steps/s and each stage's milliseconds per step; the summary gives, per benchmark,
the best steps/s of each build over the rounds and their ratio, and each stage's median.

Usage (from the repository root):
    cp target/release/crowdfield /tmp/before-crowdfield      # before the change
    cp target/release/examples/bench_sim /tmp/before-bench_sim
    ... change, rebuild ...
    python3 bench/step_before_after.py --before /tmp/before-crowdfield \\
        --before-example /tmp/before-bench_sim [--rounds 3]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

STAGES = ["splat", "fields", "potentials", "advection", "separation"]

HALL_W, HALL_H, CELL, PERSONS, DOOR = 80.0, 60.0, 0.25, 10_000, 2.0
WALL, OUTSIDE = 0.5, 0.5
M = WALL + OUTSIDE
TOTAL_W, TOTAL_H = HALL_W + 2 * M, HALL_H + 2 * M


def rect(x0, y0, x1, y1):
    return {"rect": {"min": [x0, y0], "max": [x1, y1]}}


def venue_map():
    """The venue as a map: walls with door gaps, a goal past each door, one spawn over the hall."""
    # Door centres along each wall (fractions of its length): three per long side, one per short.
    long_doors = [0.2, 0.5, 0.8]
    walls, goals = [], []

    def wall_with_gaps(horizontal, fixed, length, fractions, outer):
        """A wall along x (horizontal) or y at `fixed`, cut at each door; a goal strip outside."""
        cuts = sorted((M + f * length - DOOR / 2, M + f * length + DOOR / 2) for f in fractions)
        start = OUTSIDE
        for lo, hi in cuts + [(M + length + WALL, None)]:
            if horizontal:
                walls.append(rect(start, fixed, lo, fixed + WALL))
            else:
                walls.append(rect(fixed, start, fixed + WALL, lo))
            if hi is None:
                break
            start = hi
            g = (lo, outer, hi, outer + CELL) if horizontal else (outer, lo, outer + CELL, hi)
            goals.append({**rect(*g), "name": f"door {len(goals) + 1}"})

    wall_with_gaps(True, OUTSIDE, HALL_W, long_doors, 0.0)
    wall_with_gaps(True, TOTAL_H - M, HALL_W, long_doors, TOTAL_H - CELL)
    wall_with_gaps(False, OUTSIDE, HALL_H, [0.5], 0.0)
    wall_with_gaps(False, TOTAL_W - M, HALL_H, [0.5], TOTAL_W - CELL)
    return {
        "version": 1,
        "name": "Venue: 80 m x 60 m hall, eight 2 m doors, 10,000 people",
        "grid": {
            "cols": round(TOTAL_W / CELL),
            "rows": round(TOTAL_H / CELL),
            "cell_size": CELL,
        },
        "layers": {"obstacles": {"shapes": walls}},
        "groups": [
            {
                "name": "visitors",
                "color": "#d62728",
                "goals": goals,
                "spawns": [{**rect(M + 0.5, M + 0.5, M + HALL_W - 0.5, M + HALL_H - 0.5), "count": PERSONS}],
            }
        ],
    }


def cells(line):
    return [c.strip() for c in line.strip().strip("|").split("|")]


def run_example(binary, size, steps):
    """One `bench_sim STEPS SIZE pedestrian` run: (steps/s, {stage: ms})."""
    out = subprocess.run([binary, str(steps), str(size), "pedestrian"], check=True, capture_output=True, text=True)
    row = [line for line in out.stdout.splitlines() if line.startswith(f"| {size}x{size} ")][-1]
    c = cells(row)
    return float(c[2]), dict(zip(STAGES, map(float, c[4:9])))


def run_bench_sim(binary, map_path, steps):
    """One `crowdfield bench sim MAP --steps STEPS` run: (steps/s, {stage: ms})."""
    out = subprocess.run(
        [binary, "bench", "sim", map_path, "--steps", str(steps)], check=True, capture_output=True, text=True
    )
    row = [line for line in out.stdout.splitlines() if line.startswith("| ") and map_path in line][-1]
    c = cells(row)
    return float(c[3]), dict(zip(STAGES, map(float, c[4:9])))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--before", required=True, help="crowdfield binary before the change")
    ap.add_argument("--after", default="target/release/crowdfield", help="crowdfield binary after it")
    ap.add_argument("--before-example", help="bench_sim example before the change (skipped without)")
    ap.add_argument("--after-example", default="target/release/examples/bench_sim")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--steps", type=int, default=100, help="steps timed at 256² (512²: a fifth)")
    ap.add_argument("--venue-steps", type=int, default=50)
    ap.add_argument("--skip-512", action="store_true")
    args = ap.parse_args()

    benches = []
    if args.before_example:
        benches.append(("256², 10,000 walkers", lambda b: run_example(b, 256, args.steps), "example"))
        if not args.skip_512:
            benches.append(("512², 100,000 walkers", lambda b: run_example(b, 512, args.steps), "example"))
    tmp = tempfile.mkdtemp(prefix="step_before_after_")
    venue = os.path.join(tmp, "venue.json")
    with open(venue, "w") as f:
        json.dump(venue_map(), f)
    benches.append(("venue, 10,000 people", lambda b: run_bench_sim(b, venue, args.venue_steps), "crowdfield"))

    bins = {
        "crowdfield": {"before": args.before, "after": args.after},
        "example": {"before": args.before_example, "after": args.after_example},
    }
    results = {}
    print("| benchmark | build | round | steps/s | " + " | ".join(STAGES) + " |")
    print("|---|---|---|---|" + "---|" * len(STAGES))
    for r in range(args.rounds):
        for name, run, kind in benches:
            for side in ["before", "after"]:
                sps, ms = run(bins[kind][side])
                results.setdefault((name, side), []).append((sps, ms))
                stage_cells = " | ".join(f"{ms[s]:.2f}" for s in STAGES)
                print(f"| {name} | {side} | {r + 1} | {sps:.1f} | {stage_cells} |", flush=True)
    print()
    print("| benchmark | steps/s before (best) | after (best) | ratio | " + " | ".join(f"{s} ms before → after" for s in STAGES) + " |")
    print("|---|---|---|---|" + "---|" * len(STAGES))
    for name, _, _ in benches:
        before, after = results[(name, "before")], results[(name, "after")]
        b, a = max(x[0] for x in before), max(x[0] for x in after)
        med = lambda rows, s: statistics.median(x[1][s] for x in rows)  # noqa: E731
        stage_cells = " | ".join(f"{med(before, s):.2f} → {med(after, s):.2f}" for s in STAGES)
        print(f"| {name} | {b:.1f} | {a:.1f} | **{a / b:.2f}x** | {stage_cells} |")


if __name__ == "__main__":
    sys.exit(main())
