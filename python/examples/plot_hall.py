"""Loads the bundled hall map, runs its evacuation and plots the potential and the arrival
curve with matplotlib.

    python python/examples/plot_hall.py [--out out/hall.png] [--seed 0] [--local none]

The figure goes to out/hall.png under the working directory by default (the folder is made if
missing; the repository's .gitignore leaves its out/ alone). The map is the package's bundled
hall map (crowdfield.bundled_map("hall")), or --map PATH. The run takes the evacuation model
(model="pedestrian", as the README's `simulate maps/hall.json --model pedestrian`), whatever
the map's params choose. --local defaults to none, as `crowdfield simulate` does: the
pedestrian model's evacuation times need no local layer.
"""

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # no display needed
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import crowdfield  # noqa: E402


def plot(map_path: str, seed: int, local: str):
    """The figure (potential left, arrivals right) and the line that says what it shows."""
    m = crowdfield.load_map(map_path)
    plan = m.plan()
    sim = m.simulation(seed=seed, local=local, trajectory_every=None, model="pedestrian")
    sim.run()
    arrivals = np.sort(sim.arrivals()["time"])
    report = sim.report()

    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.5), layout="constrained")
    rows, cols = m.shape
    extent = (0, cols * m.cell_size, 0, rows * m.cell_size)
    phi = np.ma.masked_invalid(plan.potentials[0])
    image = left.imshow(phi, origin="lower", extent=extent, cmap="viridis")
    left.contour(phi.filled(np.nan), levels=15, origin="lower", extent=extent, colors="white", linewidths=0.5)
    fig.colorbar(image, ax=left, label="walking time to the exit, s")
    fig.suptitle(m.name)
    left.set(title=f"potential of {plan.group_names[0]!r}", xlabel="x, m", ylabel="y, m")
    right.step(arrivals, np.arange(1, len(arrivals) + 1), where="post")
    right.set(title=f"arrivals (seed {seed}, local {local})", xlabel="time, s", ylabel="walkers out")
    right.grid(alpha=0.3)
    return fig, f"{len(arrivals)} out by {report['end_time']:.1f} s (local {local})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--map", default=crowdfield.bundled_map("hall"))
    parser.add_argument("--out", default=str(Path("out") / "hall.png"))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--local", default="none")
    args = parser.parse_args()

    fig, summary = plot(args.map, args.seed, args.local)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=100)
    print(f"wrote {out}: {summary}")


if __name__ == "__main__":
    main()
