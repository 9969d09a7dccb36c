#!/usr/bin/env python3
"""The pedestrian model against the criteria on three cell sizes: the tables of docs/model.md.

`crowdfield verify` holds the model to the RiMEA tests and the bottleneck experiments on one
cell size; this script runs the scenes whose figures depend most on the cells (a room emptying
through one door, a lone walker, RiMEA 9's large room) on cells of 0.125, 0.25 and 0.5 m, seeds
0, 1 and 2, with `crowdfield simulate MAP --seed S` on maps with no `params` and no flags, and
prints the tables in Markdown. Every map is an ordinary map in `--out`.

Usage (from the repository root, after `cargo build --release`):
    python3 scripts/model_evidence.py [--bin target/release/crowdfield] [--out model-evidence]
"""

import argparse
import json
import os
import subprocess
import sys

CELLS = (0.125, 0.25, 0.5)
SEEDS = (0, 1, 2)
DOORS = (0.75, 1.0, 1.5, 2.5)


def rect(x0, y0, x1, y1):
    return {"min": [x0, y0], "max": [x1, y1]}


def grid(width, height, cell):
    return {"cols": round(width / cell), "rows": round(height / cell), "cell_size": cell}


def bottleneck(door, cell):
    """A 10 m x 10 m room, 100 people, one door in a 0.5 m wall, the goal a strip 1 m past it."""
    y0, y1 = 5.0 - door / 2, 5.0 + door / 2
    return {
        "version": 1,
        "name": f"bottleneck, {door} m door",
        "grid": grid(12.0, 10.0, cell),
        "layers": {"obstacles": {"shapes": [{"rect": rect(10.0, 0.0, 10.5, 10.0)},
                                            {"rect": rect(10.0, y0, 10.5, y1), "value": 0}]}},
        "groups": [{"name": "crowd", "goals": [{"rect": rect(11.5, 0.0, 12.0, 10.0), "name": "past the door",
                                                "width": door}],
                    "spawns": [{"rect": rect(0.5, 0.5, 9.5, 9.5), "count": 100}]}],
    }


def corridor(cell):
    """RiMEA 1: one walker of 1.33 m/s, 40 m of corridor 2 m wide."""
    return {
        "version": 1,
        "name": "RiMEA 1, corridor",
        "grid": grid(42.0, 2.0, cell),
        "groups": [{"name": "walker", "goals": [{"rect": rect(41.0, 0.0, 42.0, 2.0), "name": "end", "width": 2.0}],
                    "spawns": [{"rect": rect(0.75, 0.75, 1.25, 1.25), "count": 1}],
                    "speed": {"min": 1.33, "max": 1.33}}],
    }


def rimea9(exits, cell):
    """RiMEA 9: 1000 people in 30 m x 20 m, four 1 m exits (or the first two), goals in the doorways."""
    spots = [(6.0, 0.0), (24.0, 20.0 - cell), (24.0, 0.0), (6.0, 20.0 - cell)][:exits]
    goals = [{"rect": rect(x - 0.5, y, x + 0.5, y + cell), "name": f"exit {k + 1}", "width": 1.0}
             for k, (x, y) in enumerate(spots)]
    return {
        "version": 1,
        "name": f"RiMEA 9, {exits} exits",
        "grid": grid(30.0, 20.0, cell),
        "groups": [{"name": "crowd", "goals": goals,
                    "spawns": [{"rect": rect(0.5, 0.5, 29.5, 19.5), "count": 1000}],
                    "speed": {"min": 1.34, "max": 1.34}}],
    }


def run(binary, out, name, scene, seed):
    path = os.path.join(out, f"{name}.json")
    with open(path, "w") as f:
        json.dump(scene, f, indent=1)
    run_dir = os.path.join(out, f"{name}-seed-{seed}")
    subprocess.run([binary, "simulate", path, "--out", run_dir, "--seed", str(seed), "--quiet", "--max-time", "900"],
                   check=True, stdout=subprocess.DEVNULL)
    with open(os.path.join(run_dir, "report.json")) as f:
        report = json.load(f)
    if report["total"]["evacuation_time"] is None:
        report["total"]["evacuation_time"] = float("inf")
    return report


def span(values, digits=2):
    lo, hi = min(values), max(values)
    return f"{lo:.{digits}f}" if f"{lo:.{digits}f}" == f"{hi:.{digits}f}" else f"{lo:.{digits}f}–{hi:.{digits}f}"


def tag(cell):
    return f"{cell:g}".replace(".", "_")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default="target/release/crowdfield")
    ap.add_argument("--out", default="model-evidence")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    collisions, left = [], 0

    def check(report):
        nonlocal left
        collisions.append(report["quality"]["max_collisions"])
        left += report["total"]["agents"] - report["total"]["arrived"]
        return report

    print("**Bottleneck**: specific flow, persons/(m·s), seeds 0–2\n")
    print("| door | " + " | ".join(f"{c} m cells" for c in CELLS) + " |")
    print("|---|" + "---|" * len(CELLS))
    for door in DOORS:
        cells = []
        for cell in CELLS:
            if abs(round(door / cell) * cell - door) > 1e-9:
                cells.append(f"(the cells cannot draw {door} m)")
                continue
            flows = []
            for seed in SEEDS:
                report = check(run(args.bin, args.out, f"bottleneck-{door}-m-{tag(cell)}",
                                   bottleneck(door, cell), seed))
                flows.append(report["total"]["exits"][0]["specific_flow"])
            cells.append(span(flows))
            print(f"  {door} m door, {cell} m cells: {flows}", file=sys.stderr)
        print(f"| {door} m | " + " | ".join(cells) + " |")

    times = []
    for cell in CELLS:
        for seed in SEEDS:
            times.append(check(run(args.bin, args.out, f"rimea-1-{tag(cell)}", corridor(cell), seed))
                         ["total"]["evacuation_time"])
    print(f"\n**A lone walker** (RiMEA 1, 40 m at 1.33 m/s): {span(times, 1)} s over every cell size and seed\n")

    print("**RiMEA 9**: evacuation times, seeds 0 / 1 / 2\n")
    print("| cells | four exits | two exits | ratio |")
    print("|---|---|---|---|")
    for cell in CELLS:
        t = {}
        for exits in (4, 2):
            t[exits] = [check(run(args.bin, args.out, f"rimea-9-{exits}-exits-{tag(cell)}", rimea9(exits, cell), seed))
                        ["total"]["evacuation_time"] for seed in SEEDS]
        ratios = [b / a for a, b in zip(t[4], t[2])]
        print(f"| {cell} m | " + " / ".join(f"{v:.1f}" for v in t[4]) + " s | "
              + " / ".join(f"{v:.1f}" for v in t[2]) + " s | " + " / ".join(f"{r:.2f}" for r in ratios) + " |")
    print(f"\nPeople left at the time limit: {left}; most colliding pairs in any step: {max(collisions)}")


if __name__ == "__main__":
    main()
