//! One release build serves the command, the editor and the examples: every crate the library
//! shares with the editor is built with the same features whether Cargo builds the library's
//! package alone (`cargo run --release -- solve`) or the whole workspace (`cargo build
//! --workspace`, `cargo run -p crowdfield-editor`), so neither rebuilds the other's library.
//! When a dependency's update turns on a feature in one build only, this names the crate and
//! the feature to add beside "One build for every front end" in `Cargo.toml`.

use std::collections::BTreeMap;
use std::process::Command;

/// Each package of the build of `scope` (`name vX.Y.Z`) with its features, from `cargo tree`.
fn features(scope: &[&str]) -> BTreeMap<String, String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let out = Command::new(cargo)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args([
            "tree",
            "--offline",
            "-e",
            "normal",
            "--prefix",
            "none",
            "--format",
            "{p}|{f}",
        ])
        .args(scope)
        .output()
        .expect("cargo tree runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter_map(|l| l.split_once('|'))
        // A path package's `{p}` ends with its folder; the name and version name it.
        .map(|(p, f)| {
            let id: Vec<&str> = p.split_whitespace().take(2).collect();
            // A package printed again is marked `(*)`, with the same features.
            (
                id.join(" "),
                f.trim().trim_end_matches("(*)").trim_end().to_string(),
            )
        })
        .collect()
}

#[test]
fn the_library_builds_with_the_features_the_editor_needs() {
    let alone = features(&["-p", "crowdfield"]);
    let workspace = features(&["--workspace"]);
    assert!(alone.len() > 50, "{alone:?}");
    let differ: Vec<String> = alone
        .iter()
        .filter(|(p, _)| !p.starts_with("crowdfield "))
        .filter_map(|(p, f)| {
            let w = &workspace[p];
            (w != f).then(|| format!("{p}: alone [{f}], in the workspace [{w}]"))
        })
        .collect();
    assert!(differ.is_empty(), "features differ:\n{}", differ.join("\n"));
}
