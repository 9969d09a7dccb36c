//! The GPU neighbour grid produces exactly the arrays of the CPU `NeighborGrid`: random
//! agents, empty bins, every agent in one bin, agents on bin edges, outside the domain and NaN,
//! and enough bins and agents for multi-pass radix sorts and multi-level scans.

mod gpu_support;

use crowdfield::gpu::{radix_passes, scan_levels};
use crowdfield::neighbors::NeighborGrid;
use gpu_support::{Rng, gpu};

fn check(width: f32, height: f32, bin: f32, xs: &[f32], ys: &[f32], what: &str) {
    let Some(ctx) = gpu() else { return };
    let mut cpu = NeighborGrid::new(width, height, bin);
    cpu.rebuild(xs, ys);
    let mut g = NeighborGrid::new(width, height, bin);
    ctx.neighbor_grid(&mut g, xs, ys).unwrap();
    same(&g.agent_bin, &cpu.agent_bin, &format!("{what}: agent_bin"));
    same(&g.bin_start, &cpu.bin_start, &format!("{what}: bin_start"));
    same(&g.sorted, &cpu.sorted, &format!("{what}: sorted"));
    // The 3x3 neighbour sets (what the local layer uses) follow; check a few explicitly.
    for i in (0..xs.len()).step_by((xs.len() / 50).max(1)) {
        let (mut a, mut b) = (Vec::new(), Vec::new());
        g.for_each_near(xs[i], ys[i], |j| a.push(j));
        cpu.for_each_near(xs[i], ys[i], |j| b.push(j));
        assert_eq!(a, b, "{what}: neighbours of {i}");
    }
}

/// Asserts two arrays are equal, reporting lengths and the first differing entries (the
/// arrays run to 90k entries: printing them whole buries the failure).
fn same(gpu: &[u32], cpu: &[u32], what: &str) {
    assert_eq!(gpu.len(), cpu.len(), "{what}: lengths (gpu vs cpu)");
    let diffs: Vec<String> = (0..gpu.len())
        .filter(|&i| gpu[i] != cpu[i])
        .take(8)
        .map(|i| format!("[{i}] gpu {} cpu {}", gpu[i], cpu[i]))
        .collect();
    let count = (0..gpu.len()).filter(|&i| gpu[i] != cpu[i]).count();
    assert!(
        diffs.is_empty(),
        "{what}: {count} entries differ, first: {}",
        diffs.join(", ")
    );
}

fn random(n: usize, seed: u64, w: f32, h: f32) -> (Vec<f32>, Vec<f32>) {
    let mut rng = Rng(seed);
    (0..n).map(|_| (rng.next_f32() * w, rng.next_f32() * h)).unzip()
}

#[test]
fn random_agents_match_cpu() {
    let (xs, ys) = random(3000, 1, 40.0, 25.0);
    check(40.0, 25.0, 1.5, &xs, &ys, "random, 459 bins (2 radix passes)");
    let (xs, ys) = random(1000, 2, 10.0, 10.0);
    check(10.0, 10.0, 2.0, &xs, &ys, "random, 25 bins (1 pass)");
}

#[test]
fn many_agents_and_bins_use_every_scan_level_and_radix_pass() {
    // 70k agents: 274 chunks, a 70k-entry histogram (3 scan levels); 300x300 bins: 3 passes.
    let (xs, ys) = random(70_000, 3, 300.0, 300.0);
    assert_eq!(radix_passes(300 * 300), 3);
    assert_eq!(scan_levels(0, 70_144, 70_144).0.len(), 3);
    check(300.0, 300.0, 1.0, &xs, &ys, "70k agents, 90k bins");
}

#[test]
fn empty_bins_and_no_agents() {
    check(50.0, 50.0, 1.0, &[], &[], "no agents");
    let xs = [1.0, 1.1, 48.0];
    let ys = [1.0, 1.2, 48.0];
    check(50.0, 50.0, 1.0, &xs, &ys, "mostly empty");
}

#[test]
fn every_agent_in_one_bin() {
    let n = 5000;
    let xs: Vec<f32> = (0..n).map(|i| 3.0 + (i % 7) as f32 * 0.01).collect();
    let ys: Vec<f32> = (0..n).map(|i| 3.5 + (i % 5) as f32 * 0.01).collect();
    check(20.0, 20.0, 2.0, &xs, &ys, "one bin");
}

#[test]
fn edges_outside_and_nan() {
    let mut xs = Vec::new();
    let mut ys = Vec::new();
    for i in 0..=20 {
        for j in 0..=10 {
            xs.push(i as f32 * 0.5);
            ys.push(j as f32 * 0.5);
        }
    }
    let odd = [
        (-3.0, 2.0),
        (10.0, 10.0),
        (1e30, -1e30),
        (f32::NAN, 1.0),
        (1.0, f32::NAN),
        (f32::INFINITY, f32::NEG_INFINITY),
        (9.999_999, 0.0),
        (-0.0, 4.5),
    ];
    for (x, y) in odd {
        xs.push(x);
        ys.push(y);
    }
    check(10.0, 5.0, 0.5, &xs, &ys, "edges and outside");
    check(10.0, 5.0, 0.1, &xs, &ys, "edges, bin 0.1");
}

/// Points within an ulp or two of every bin edge, for bin sizes whose inverse is not exact in
/// f32 (3 m: the ORCA reach; 1.7; 0.3). A bin computed by a division lands these on either side
/// depending on how the GPU rounds the quotient (an NVIDIA H200 put some in the next bin); the
/// product by `inv_bin_size` is rounded the same everywhere.
#[test]
fn points_an_ulp_from_bin_edges_land_as_on_the_cpu() {
    for (bin, side) in [(3.0f32, 600.0f32), (1.7, 300.0), (0.3, 60.0)] {
        let g = NeighborGrid::new(side, side, bin);
        let (mut xs, mut ys) = (Vec::new(), Vec::new());
        for k in 1..g.bins_x {
            let edge = k as f32 * bin;
            let mut v = f32::from_bits(edge.to_bits() - 3);
            for _ in 0..7 {
                xs.push(v);
                ys.push(side - v);
                v = f32::from_bits(v.to_bits() + 1);
            }
        }
        check(side, side, bin, &xs, &ys, &format!("edges of {bin} m bins"));
    }
}

#[test]
fn rebuild_twice_reuses_buffers() {
    let (xs, ys) = random(2000, 4, 30.0, 30.0);
    check(30.0, 30.0, 1.0, &xs, &ys, "first");
    let (xs, ys) = random(100, 5, 30.0, 30.0);
    check(30.0, 30.0, 3.0, &xs, &ys, "smaller");
    let (xs, ys) = random(9000, 6, 30.0, 30.0);
    check(30.0, 30.0, 0.7, &xs, &ys, "larger");
}

#[test]
fn mismatched_lengths_are_an_error() {
    let Some(ctx) = gpu() else { return };
    let mut g = NeighborGrid::new(10.0, 10.0, 1.0);
    assert!(ctx.neighbor_grid(&mut g, &[1.0, 2.0], &[1.0]).is_err());
}
