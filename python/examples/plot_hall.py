"""Loads the bundled hall map, runs its evacuation and plots the potential and the arrival
curve with matplotlib.

    python python/examples/plot_hall.py [--out hall.png] [--seed 0] [--local orca]

Run from the repository root (the map is maps/hall.json).
"""

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # no display needed
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import crowdfield  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--map", default=str(ROOT / "maps" / "hall.json"))
    parser.add_argument("--out", default="hall.png")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--local", default="orca")
    args = parser.parse_args()

    m = crowdfield.load_map(args.map)
    plan = m.plan()
    sim = m.simulation(seed=args.seed, local=args.local, trajectory_every=0)
    sim.run()
    arrivals = np.sort(sim.arrivals()["time"])
    report = sim.report()

    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.5))
    rows, cols = m.shape
    extent = (0, cols * m.cell_size, 0, rows * m.cell_size)
    phi = np.ma.masked_invalid(plan.potentials[0])
    image = left.imshow(phi, origin="lower", extent=extent, cmap="viridis")
    left.contour(phi.filled(np.nan), levels=15, origin="lower", extent=extent, colors="white", linewidths=0.5)
    fig.colorbar(image, ax=left, label="walking time to the exit, s")
    left.set(title=f"{m.name}: potential of {plan.group_names[0]!r}", xlabel="x, m", ylabel="y, m")
    right.step(arrivals, np.arange(1, len(arrivals) + 1), where="post")
    right.set(title=f"arrivals ({len(arrivals)} walkers, seed {args.seed}, local {args.local})",
              xlabel="time, s", ylabel="walkers out")
    right.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(args.out, dpi=100)
    print(f"wrote {args.out}: {len(arrivals)} out by {report['end_time']:.1f} s")


if __name__ == "__main__":
    main()
