//! Every bundled map's run, step by step, held to the bits it had when the hashes were written
//! (`tests/data/state_hashes.txt`): a change of structure (the step's stages, the planner, the
//! run driver) must leave every position, velocity and arrival as it was. A deliberate change
//! of the model rewrites the file with `UPDATE_STATE_HASHES=1 cargo test --test state_hashes`
//! and says why in its commit.

use crowdfield::local::LocalMode;
use crowdfield::sim::{SimConfig, Simulation};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Steps hashed per run: enough for walkers to meet walls, each other and (on small maps)
/// their exits, short enough for a debug build.
const STEPS: usize = 300;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// FNV-1a over the bits fed to it.
struct Fnv(u64);

impl Fnv {
    fn eat(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }
}

/// The hash of `STEPS` steps of `sim`: after each step every walker's id, position and
/// velocity, and the arrivals so far.
fn run_hash(mut sim: Simulation) -> String {
    let mut h = Fnv(0xcbf2_9ce4_8422_2325);
    for _ in 0..STEPS {
        if sim.finished() {
            break;
        }
        sim.step();
        let a = sim.agents();
        for i in 0..a.len() {
            h.eat(&a.id[i].to_le_bytes());
            for v in [a.x[i], a.y[i], a.vx[i], a.vy[i]] {
                h.eat(&v.to_bits().to_le_bytes());
            }
        }
        for arrival in sim.arrivals() {
            h.eat(&arrival.id.to_le_bytes());
            h.eat(&(arrival.exit as u64).to_le_bytes());
        }
        h.eat(&sim.time().to_bits().to_le_bytes());
    }
    format!("{:016x} after {} steps", h.0, sim.steps())
}

fn load(name: &str) -> crowdfield::Scene {
    crowdfield::map::load(root().join("maps").join(name)).unwrap()
}

/// The runs held: every bundled map as `simulate` runs it (seed 1), and the variants that take
/// other paths through a step (a local layer, replanning every few steps, whole marches).
fn runs() -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut maps: Vec<String> = std::fs::read_dir(root().join("maps"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".json") && n != "map.schema.json")
        .collect();
    maps.sort();
    let config = SimConfig {
        seed: 1,
        ..SimConfig::default()
    };
    for name in &maps {
        let sim = Simulation::builder(load(name))
            .config(config.clone())
            .build()
            .unwrap();
        out.insert(name.clone(), run_hash(sim));
    }
    let variants: [(&str, &str, SimConfig, LocalMode); 4] = [
        ("bottleneck.json", "orca", config.clone(), LocalMode::Orca),
        ("crossing.json", "boids", config.clone(), LocalMode::Boids),
        (
            "four_exits.json",
            "replan_every_3",
            SimConfig {
                replan_every: 3,
                ..config.clone()
            },
            LocalMode::None,
        ),
        (
            "bottleneck.json",
            "full_potentials",
            SimConfig {
                full_potentials: true,
                ..config.clone()
            },
            LocalMode::None,
        ),
    ];
    for (map, what, config, local) in variants {
        let sim = Simulation::builder(load(map))
            .config(config)
            .local(local)
            .build()
            .unwrap();
        out.insert(format!("{map} {what}"), run_hash(sim));
    }
    out
}

fn golden_path() -> PathBuf {
    root().join("tests/data/state_hashes.txt")
}

fn read_golden(path: &Path) -> BTreeMap<String, String> {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e} (write it with UPDATE_STATE_HASHES=1)", path.display()));
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let (k, v) = l.split_once(" = ").expect("`run = hash` lines");
            (k.to_string(), v.to_string())
        })
        .collect()
}

#[test]
fn every_run_keeps_its_bits() {
    let got = runs();
    let path = golden_path();
    if std::env::var_os("UPDATE_STATE_HASHES").is_some() {
        let mut text = String::from("# Per-step state hashes of the bundled maps (tests/state_hashes.rs).\n");
        for (k, v) in &got {
            text.push_str(&format!("{k} = {v}\n"));
        }
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        return;
    }
    let want = read_golden(&path);
    let mut differ = Vec::new();
    for (k, v) in &want {
        match got.get(k) {
            Some(g) if g == v => {}
            Some(g) => differ.push(format!("{k}: {g}, expected {v}")),
            None => differ.push(format!("{k}: not run")),
        }
    }
    for k in got.keys().filter(|k| !want.contains_key(*k)) {
        differ.push(format!(
            "{k}: no hash held (write them with UPDATE_STATE_HASHES=1)"
        ));
    }
    assert!(differ.is_empty(), "runs changed:\n{}", differ.join("\n"));
}
