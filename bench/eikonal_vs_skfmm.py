#!/usr/bin/env python3
"""crowdfield's CPU fast marching against scikit-fmm (skfmm.travel_time), side by side.

Single thread on both sides. For each grid: a uniform unit speed with a point source at the
centre cell (phi = 0 there, the same point source for both tools: skfmm treats a zero of its
level-set input as a frozen point at distance 0), solved in order 1 and 2. skfmm is timed
in-process around `travel_time` only; crowdfield's time is the `solve_seconds` it reports with
`--timing` (speed -> cost conversion and the march, no file I/O). Errors are against the exact
distance from the source centre, over the reachable cells other than the source. The walls grid
has no exact solution: the table reports how far the two tools agree.

Usage (from the repository root, after `cargo build --release`):
    python3 bench/eikonal_vs_skfmm.py [--bin target/release/crowdfield] [--sizes 512 2048 4096]
"""

import argparse
import json
import os
import subprocess
import tempfile
import time

import numpy as np
import skfmm


def best_of(repeats, fn):
    best, result = float("inf"), None
    for _ in range(repeats):
        seconds, result = fn()
        best = min(best, seconds)
    return best, result


def run_skfmm(speed, source, order, repeats):
    phi0 = np.ones(speed.shape)
    phi0[source] = 0.0
    walls = ~(speed > 0)
    if walls.any():
        phi0 = np.ma.MaskedArray(phi0, walls)
        speed = np.where(walls, 1.0, speed)

    def once():
        t = time.perf_counter()
        tt = skfmm.travel_time(phi0, speed, dx=1.0, order=order)
        seconds = time.perf_counter() - t
        if np.ma.isMaskedArray(tt):
            tt = tt.filled(np.inf)
        return seconds, np.asarray(tt, dtype=np.float64)

    return best_of(repeats, once)


def run_ours(binary, speed_path, goal_path, order, repeats, workdir):
    out = os.path.join(workdir, f"phi{order}.npy")
    env = dict(os.environ, RAYON_NUM_THREADS="1")

    def once():
        cmd = [binary, "eikonal", "--speed", speed_path, "--goal", goal_path, "--out", out,
               "--order", str(order), "--timing"]
        res = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True)
        timing = json.loads(res.stdout.strip().splitlines()[-1])
        return timing["solve_seconds"], np.load(out)

    return best_of(repeats, once)


def errors(phi, exact, mask):
    e = np.abs(phi[mask] - exact[mask])
    return float(e.mean()), float(e.max())


def walls_speed(n):
    """Vertical walls every n/8 columns, each with two gaps, offset so paths zig-zag."""
    speed = np.ones((n, n))
    step = n // 8
    gap = max(n // 64, 2)
    for k, c in enumerate(range(step, n - step + 1, step)):
        speed[:, c:c + max(n // 256, 1)] = 0.0
        for g in ((0.2, 0.7) if k % 2 == 0 else (0.45, 0.9)):
            r = int(g * n)
            speed[r:r + gap, c:c + max(n // 256, 1)] = 1.0
    return speed


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default="target/release/crowdfield")
    ap.add_argument("--sizes", type=int, nargs="+", default=[512, 2048, 4096])
    ap.add_argument("--walls", type=int, default=2048, help="size of the walls grid (0: skip)")
    ap.add_argument("--repeats", type=int, default=3, help="best of this many runs (1 above 2048)")
    args = ap.parse_args()

    rows = []
    with tempfile.TemporaryDirectory() as work:
        cases = [(n, "uniform") for n in args.sizes] + ([(args.walls, "walls")] if args.walls else [])
        for n, kind in cases:
            speed = np.ones((n, n)) if kind == "uniform" else walls_speed(n)
            mid = n // 2
            source = (mid, n // 16) if kind == "walls" else (mid, mid)
            goal = np.zeros((n, n), dtype=np.uint8)
            goal[source] = 1
            sp, gp = os.path.join(work, "speed.npy"), os.path.join(work, "goal.npy")
            np.save(sp, speed)
            np.save(gp, goal)
            rr, cc = np.mgrid[0:n, 0:n]
            exact = np.hypot(rr - source[0], cc - source[1])
            repeats = args.repeats if n <= 2048 else 1
            for order in (1, 2):
                t_sk, phi_sk = run_skfmm(speed, source, order, repeats)
                t_us, phi_us = run_ours(args.bin, sp, gp, order, repeats, work)
                reach = np.isfinite(phi_us) & np.isfinite(phi_sk)
                reach[source] = False
                if kind == "uniform":
                    e_sk, e_us = errors(phi_sk, exact, reach), errors(phi_us, exact, reach)
                    rows.append((f"{n}² uniform", order, t_sk, t_us, e_sk, e_us, None))
                else:
                    agree = errors(phi_us, phi_sk, reach)
                    same_reach = bool((np.isfinite(phi_us) == np.isfinite(phi_sk)).all())
                    rows.append((f"{n}² walls", order, t_sk, t_us, None, None, (agree, same_reach)))
                print(f"done {n} {kind} order {order}: skfmm {t_sk:.3f}s ours {t_us:.3f}s", flush=True)

    print()
    print("| grid | order | skfmm s | crowdfield s | speed-up | skfmm err mean / max | crowdfield err mean / max |")
    print("|---|---|---|---|---|---|---|")
    for name, order, t_sk, t_us, e_sk, e_us, agree in rows:
        if agree is None:
            errs = f"{e_sk[0]:.4f} / {e_sk[1]:.4f} | {e_us[0]:.4f} / {e_us[1]:.4f}"
        else:
            (mean, mx), same = agree
            errs = (f"(no exact solution) | difference to skfmm {mean:.4f} / {mx:.4f}"
                    f"{', same reachable set' if same else ', REACHABLE SETS DIFFER'}")
        print(f"| {name} | {order} | {t_sk:.3f} | {t_us:.3f} | {t_sk / t_us:.1f}x | {errs} |")


if __name__ == "__main__":
    main()
