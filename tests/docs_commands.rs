//! The documents' commands and examples run as written. Every line of a ```sh block in README.md
//! and docs/*.md that starts with `crowdfield ` (or `cargo run --release -- `, the same binary)
//! runs against the debug binary, in order, in one temporary folder per document that holds a
//! copy of the bundled `maps/` and the `speed.npy` / `goal.npy` that docs/guide.md makes with
//! numpy. Each must exit 0 and write the files docs/outputs.md lists for its command. Commands
//! too slow for a test are shown in ```text blocks instead. Also: every option of every command's
//! `--help` appears in docs/guide.md, every output file in docs/outputs.md, and the README's
//! library example runs.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Lines of ```sh blocks that start with `crowdfield` but are not run, each with the reason.
/// Empty: a command that cannot run in a test goes in a ```text block.
const SKIP: &[(&str, &str)] = &[];

/// The files every `--out` folder of a command holds, whatever its options.
const SOLVE_FILES: &[&str] = &["summary.json", "map.png", "density.png", "speed.png", "cost.png"];
/// The files of each group's folder of `solve`.
const SOLVE_GROUP_FILES: &[&str] = &[
    "potential.npy",
    "gradient_x.npy",
    "gradient_y.npy",
    "potential.png",
    "gradient.png",
];
/// The files of `simulate`'s `--out` folder.
const SIMULATE_FILES: &[&str] = &["report.json", "timings.json", "arrivals.png", "peak_density.png"];
/// The files of each map's folder of `batch`.
const BATCH_MAP_FILES: &[&str] = &["solve.json", "done.json", "potential_0.npy"];

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// README.md and every Markdown file under docs/, sorted.
fn documents() -> Vec<PathBuf> {
    let mut docs: Vec<PathBuf> = std::fs::read_dir(repo().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    docs.insert(0, repo().join("README.md"));
    docs
}

/// The fenced blocks of `text` whose info string is `lang`, each as its lines.
fn blocks(text: &str, lang: &str) -> Vec<Vec<String>> {
    let mut found = Vec::new();
    let mut current: Option<(bool, Vec<String>)> = None;
    for line in text.lines() {
        let trimmed = line.trim();
        match (&mut current, trimmed.strip_prefix("```")) {
            (None, Some(info)) => current = Some((info.trim() == lang, Vec::new())),
            (Some(_), Some(_)) => {
                let (wanted, lines) = current.take().unwrap();
                if wanted {
                    found.push(lines);
                }
            }
            (Some((_, lines)), None) => lines.push(line.to_string()),
            (None, None) => {}
        }
    }
    found
}

/// The `crowdfield` commands of a document's ```sh blocks, in order, with `cargo run --release
/// -- ` spelled `crowdfield `.
fn commands(text: &str) -> Vec<String> {
    blocks(text, "sh")
        .into_iter()
        .flatten()
        .map(|line| {
            let line = line.trim();
            match line.strip_prefix("cargo run --release -- ") {
                Some(rest) => format!("crowdfield {rest}"),
                None => line.to_string(),
            }
        })
        .filter(|line| line.starts_with("crowdfield "))
        .collect()
}

/// The words of a command line before any `#` comment (the documents quote no spaces that
/// matter for the files checked here).
fn words(line: &str) -> Vec<&str> {
    line.split_whitespace()
        .take_while(|w| !w.starts_with('#'))
        .collect()
}

/// The value after `flag` in `words`.
fn value_of<'a>(words: &[&'a str], flag: &str) -> Option<&'a str> {
    words
        .iter()
        .position(|w| *w == flag)
        .and_then(|i| words.get(i + 1).copied())
}

/// The files the command `line` must have written, relative to `dir`, as docs/outputs.md lists
/// them for its command and options.
fn expected_files(dir: &Path, line: &str) -> Vec<PathBuf> {
    let words = words(line);
    let Some(out) = value_of(&words, "--out") else {
        return Vec::new();
    };
    let out = dir.join(out);
    let mut files = Vec::new();
    match words[1] {
        "solve" => {
            files.extend(SOLVE_FILES.iter().map(|f| out.join(f)));
            let summary: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
            for group in summary["groups"].as_array().unwrap() {
                let group_dir = out.join(group["dir"].as_str().unwrap());
                files.extend(SOLVE_GROUP_FILES.iter().map(|f| group_dir.join(f)));
            }
        }
        "simulate" => {
            files.extend(SIMULATE_FILES.iter().map(|f| out.join(f)));
            if words.contains(&"--trajectories") {
                files.push(out.join("trajectories.csv"));
            }
            if words.contains(&"--frames") {
                files.push(out.join("frames/frame_00000.png"));
            }
        }
        "batch" => {
            match value_of(&words, "--shard") {
                Some(shard) => {
                    let (i, n) = shard.split_once('/').unwrap();
                    files.push(out.join(format!("summary-shard-{i}-of-{n}.json")));
                    files.push(out.join(format!("summary-shard-{i}-of-{n}.csv")));
                }
                None => {
                    files.push(out.join("summary.json"));
                    files.push(out.join("summary.csv"));
                }
            }
            for map in words.iter().filter(|w| w.ends_with(".json")) {
                let stem = Path::new(map).file_stem().unwrap();
                files.extend(BATCH_MAP_FILES.iter().map(|f| out.join(stem).join(f)));
                if words.contains(&"--simulate") {
                    files.extend(SIMULATE_FILES.iter().map(|f| out.join(stem).join(f)));
                }
            }
        }
        "study" => {
            if value_of(&words, "--shard").is_none() {
                files.push(out.join("study.json"));
                files.push(out.join("study.html"));
            }
        }
        // eikonal and image: `--out` is the file itself.
        _ => files.push(out),
    }
    files
}

/// A temporary folder holding the bundled maps, the arrays docs/guide.md makes with numpy, and
/// a `bin/crowdfield` that is the binary under test.
fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let maps = dir.path().join("maps");
    std::fs::create_dir(&maps).unwrap();
    for entry in std::fs::read_dir(repo().join("maps")).unwrap() {
        let path = entry.unwrap().path();
        std::fs::copy(&path, maps.join(path.file_name().unwrap())).unwrap();
    }
    // np.save("speed.npy", np.ones((64, 64))); goal: one cell at (32, 32).
    ndarray_npy::write_npy(
        dir.path().join("speed.npy"),
        &ndarray::Array2::<f64>::ones((64, 64)),
    )
    .unwrap();
    let mut goal = ndarray::Array2::<bool>::from_elem((64, 64), false);
    goal[[32, 32]] = true;
    ndarray_npy::write_npy(dir.path().join("goal.npy"), &goal).unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_crowdfield"), bin.join("crowdfield")).unwrap();
    dir
}

#[test]
fn every_command_in_the_documents_runs_and_writes_its_files() {
    let mut ran = 0;
    for doc in documents() {
        let text = std::fs::read_to_string(&doc).unwrap();
        let dir = workspace();
        let path = format!(
            "{}:{}",
            dir.path().join("bin").display(),
            std::env::var("PATH").unwrap_or_default()
        );
        for line in commands(&text) {
            if SKIP.iter().any(|(skipped, _)| *skipped == line) {
                continue;
            }
            let output = Command::new("bash")
                .arg("-c")
                .arg(&line)
                .current_dir(dir.path())
                .env("PATH", &path)
                .output()
                .unwrap();
            assert!(
                output.status.success(),
                "{}: `{line}` failed ({}):\n{}",
                doc.display(),
                output.status,
                String::from_utf8_lossy(&output.stderr)
            );
            for file in expected_files(dir.path(), &line) {
                assert!(
                    file.is_file(),
                    "{}: `{line}` did not write {}",
                    doc.display(),
                    file.display()
                );
            }
            ran += 1;
        }
    }
    // The README's first command and at least one example of every command.
    assert!(ran >= 15, "only {ran} commands found in the documents");
}

#[test]
fn every_skipped_command_is_still_in_a_document() {
    let all: Vec<String> = documents()
        .iter()
        .flat_map(|d| commands(&std::fs::read_to_string(d).unwrap()))
        .collect();
    for (line, why) in SKIP {
        assert!(
            all.iter().any(|l| l == line),
            "skip list names `{line}` ({why}), which no document shows"
        );
    }
}

#[test]
fn the_readme_opens_with_the_two_commands() {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let first = &blocks(&readme, "sh")[0];
    assert!(first[0].starts_with("cargo run --release -- solve maps/hall.json --out out/hall "));
    assert!(first[1].starts_with("bash scripts/test.sh "));
}

/// Every `--option` that `crowdfield COMMAND --help` prints is named in docs/guide.md.
#[test]
fn the_guide_names_every_option_of_every_command() {
    let guide = std::fs::read_to_string(repo().join("docs/guide.md")).unwrap();
    let commands: &[&[&str]] = &[
        &["solve"],
        &["simulate"],
        &["batch"],
        &["study"],
        &["validate"],
        &["eikonal"],
        &["image"],
        &["import"],
        &["bench", "eikonal"],
        &["bench", "sim"],
        &["bench", "local"],
    ];
    let mut checked = 0;
    for command in commands {
        let help = Command::new(env!("CARGO_BIN_EXE_crowdfield"))
            .args(*command)
            .arg("--help")
            .output()
            .unwrap();
        assert!(help.status.success());
        let help = String::from_utf8(help.stdout).unwrap();
        let options: Vec<&str> = help
            .split(|c: char| c.is_whitespace() || c == ',' || c == '[' || c == ']' || c == '=')
            .filter(|w| w.starts_with("--") && w.len() > 2)
            .filter(|w| !matches!(*w, "--help" | "--version"))
            .collect();
        checked += options.len();
        for option in options {
            let option = option.trim_end_matches(|c: char| !c.is_ascii_alphanumeric());
            assert!(
                guide.contains(&format!("`{option}")),
                "docs/guide.md does not name `{option}` of crowdfield {}",
                command.join(" ")
            );
        }
    }
    // `--out`, `--order`, `--max-time`, ...: the help text was read.
    assert!(checked > 40, "only {checked} options in the commands' --help");
}

/// Every file name the documents' commands are checked for is explained in docs/outputs.md.
#[test]
fn the_outputs_document_lists_every_file_checked() {
    let outputs = std::fs::read_to_string(repo().join("docs/outputs.md")).unwrap();
    let names = SOLVE_FILES
        .iter()
        .chain(SOLVE_GROUP_FILES)
        .chain(SIMULATE_FILES)
        .chain(&[
            "solve.json",
            "done.json",
            "potential_<g>.npy",
            "summary.csv",
            "trajectories.csv",
            "result.json",
            "study.json",
            "study.html",
        ])
        .chain(&["frames/frame_NNNNN.png", "summary-shard-I-of-N.json"]);
    for name in names {
        assert!(
            outputs.contains(&format!("`{name}")) || outputs.contains(&format!("/{name}`")),
            "docs/outputs.md does not list {name}"
        );
    }
}

/// The README's library example, as a test: the ```rust block of README.md must be exactly the
/// body between the markers below.
#[test]
fn the_readme_library_example_runs() -> crowdfield::Result<()> {
    // Integration tests run in the package's root, where the README's paths lead.
    // README example begins
    use crowdfield::prelude::*;
    use std::path::Path;

    let scene = crowdfield::map::load(Path::new("maps/bottleneck.json"))?;
    let plan = plan(&scene, &PlanOptions::default())?;
    println!("{} group(s) planned on {}", plan.groups.len(), plan.solver);
    let mut sim = Simulation::builder(scene).seed(7).max_time(60.0).build()?;
    sim.run(|_| Ok(()))?;
    let report = sim.report();
    println!("{} of {} out", report.total.arrived, report.total.agents);
    // README example ends
    assert_eq!(report.total.agents, 200);
    assert!(report.total.arrived > 0);

    let source = std::fs::read_to_string(repo().join("tests/docs_commands.rs")).unwrap();
    let start = source.find("// README example begins\n").unwrap() + "// README example begins\n".len();
    let end = source.find("    // README example ends").unwrap();
    let example: Vec<&str> = source[start..end]
        .lines()
        .map(|l| l.strip_prefix("    ").unwrap_or(l))
        .collect();
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    assert_eq!(
        blocks(&readme, "rust"),
        vec![example.iter().map(|l| l.to_string()).collect::<Vec<_>>()]
    );
    Ok(())
}
