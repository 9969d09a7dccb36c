#!/usr/bin/env python3
"""crowdfield.travel_time and .distance against scikit-fmm's, from Python, in one process.

Both are called the same way (`travel_time(phi, speed, dx=..., order=...)`, or
`distance(phi, dx=..., order=...)`), single thread, and timed around the call, so the times
include the Python call overhead and the conversion of the result (scikit-fmm's and
crowdfield's masked arrays). Cases: `point`, the travel time from a point source at the centre
of a uniform unit speed (errors against the exact distance, over every cell but the source);
`maze`, the travel time through a maze of 1-cell walls and 7-cell corridors from a corner (no
exact solution: the table gives how far the two tools agree); `circle`, the signed distance
from a circle of radius 0.15 n off the grid's centre (errors against the exact signed
distance). Each figure is the best of --repeats calls.

Usage (from the repository root, with the package built in release mode, e.g.
`pip install ./python`):

    python3 bench/python_vs_skfmm.py [--sizes 512 2048 4096] [--repeats 3] [--markdown]
"""

import argparse
import os
import platform
import subprocess
import time

os.environ.setdefault("RAYON_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import skfmm  # noqa: E402

import crowdfield  # noqa: E402


def maze(n, corridor=8, seed=1):
    """A perfect maze (depth-first, random) of corridors `corridor - 1` cells wide between
    1-cell walls, covering an n x n grid; True marks a wall."""
    rng = np.random.default_rng(seed)
    m = n // corridor
    walls = np.ones((n, n), dtype=bool)
    seen = np.zeros((m, m), dtype=bool)
    stack = [(0, 0)]
    seen[0, 0] = True

    def open_cell(i, j):
        walls[i * corridor + 1:(i + 1) * corridor, j * corridor + 1:(j + 1) * corridor] = False

    open_cell(0, 0)
    while stack:
        i, j = stack[-1]
        nbrs = [(i + di, j + dj) for di, dj in ((1, 0), (-1, 0), (0, 1), (0, -1))
                if 0 <= i + di < m and 0 <= j + dj < m and not seen[i + di, j + dj]]
        if not nbrs:
            stack.pop()
            continue
        a, b = nbrs[rng.integers(len(nbrs))]
        seen[a, b] = True
        open_cell(a, b)
        # Knock down the wall between (i, j) and (a, b).
        r0, r1 = sorted((i, a))
        c0, c1 = sorted((j, b))
        walls[r0 * corridor + 1:(r1 + 1) * corridor, c0 * corridor + 1:(c1 + 1) * corridor] = False
        stack.append((a, b))
    return walls


def best_of(repeats, fn):
    """The smallest wall time and the smallest CPU time of this thread over `repeats` calls (on
    a machine shared with other work the CPU time is the steadier figure; on a quiet one the
    two agree), and the last result."""
    best, best_cpu, out = float("inf"), float("inf"), None
    for _ in range(repeats):
        t, c = time.perf_counter(), time.thread_time()
        out = fn()
        best_cpu = min(best_cpu, time.thread_time() - c)
        best = min(best, time.perf_counter() - t)
    return (best, best_cpu), out


def filled(a):
    return np.ma.filled(a.astype(np.float64), np.inf) if np.ma.isMaskedArray(a) else a


def inputs(name, n):
    """A case's call, made on a module (`skfmm` or `crowdfield`) in a given order, and its exact
    values with the cells to compare them on (`None` where there is no exact solution)."""
    r, c = np.indices((n, n))
    if name == "circle":
        # The signed distance from a circle whose centre is off the cells' grid.
        exact = np.hypot(r - (n / 2 + 0.3), c - (n / 2 - 0.2)) - 0.15 * n
        return (lambda m, order: m.distance(exact, dx=1.0, order=order)), exact, exact == exact
    speed = np.ones((n, n))
    phi = np.ones((n, n))
    if name == "point":
        src = (n // 2, n // 2)
        phi[src] = 0.0
        exact = np.hypot(r - src[0], c - src[1])
        keep = exact > 0
    else:
        phi[1, 1] = 0.0
        phi = np.ma.MaskedArray(phi, maze(n))
        exact = keep = None
    return (lambda m, order: m.travel_time(phi, speed, dx=1.0, order=order)), exact, keep


def case(name, n, order, repeats):
    call, exact, keep = inputs(name, n)
    (t_sk, c_sk), sk = best_of(repeats, lambda: call(skfmm, order))
    (t_cf, c_cf), cf = best_of(repeats, lambda: call(crowdfield, order))
    sk, cf = filled(sk), filled(cf)
    both = np.isfinite(sk) & np.isfinite(cf)
    agree = float(np.max(np.abs(sk[both] - cf[both]))) if both.any() else 0.0
    same_cells = bool(np.array_equal(np.isfinite(sk), np.isfinite(cf)))
    row = dict(case=name, n=n, order=order, skfmm_s=t_sk, crowdfield_s=t_cf, speedup=t_sk / t_cf,
               skfmm_cpu_s=c_sk, crowdfield_cpu_s=c_cf, cpu_speedup=c_sk / c_cf,
               agree=agree, same_cells=same_cells)
    if exact is not None:
        row["err_skfmm"] = float(np.max(np.abs(sk - exact)[keep]))
        row["err_crowdfield"] = float(np.max(np.abs(cf - exact)[keep]))
    return row


def cpu_model():
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        for line in out.splitlines():
            if line.startswith("Model name:"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[512, 2048, 4096])
    ap.add_argument("--orders", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--cases", nargs="+", default=["point", "maze", "circle"],
                    choices=["point", "maze", "circle"])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--markdown", action="store_true", help="print a Markdown table")
    args = ap.parse_args()
    rows = []
    for n in args.sizes:
        for name in args.cases:
            for order in args.orders:
                row = case(name, n, order, args.repeats)
                rows.append(row)
                if not args.markdown:
                    print(row, flush=True)
    if args.markdown:
        print(f"Machine: {cpu_model()}, one thread; "
              f"scikit-fmm {getattr(skfmm, '__version__', '?')}, crowdfield {crowdfield.__version__}.\n")
        print("| grid | case | order | crowdfield | scikit-fmm | ratio | "
              "CPU time ratio | max error crowdfield / skfmm | max difference between them |")
        print("|---|---|---|---|---|---|---|---|---|")
        for r in rows:
            err = (f"{r['err_crowdfield']:.3g} / {r['err_skfmm']:.3g}" if "err_skfmm" in r else "no exact solution")
            print(f"| {r['n']}² | {r['case']} | {r['order']} | {r['crowdfield_s']:.3f} s | {r['skfmm_s']:.3f} s | "
                  f"**{r['speedup']:.2f}x** | {r['cpu_speedup']:.2f}x | {err} | {r['agree']:.2g}{'' if r['same_cells'] else ' (cells differ)'} |")


if __name__ == "__main__":
    main()
