//! Every "CPU twin" a shader's comment names (`// ... (CPU twin: WallMap::move_agent)`) is a
//! Rust item that exists: a renamed or removed function fails here instead of leaving the
//! shader pointing at nothing.
//!
//! A name is checked as written: `a::b::c` needs every segment defined in `src/` (a module as
//! a file or `mod`, a type, a function, a constant), and where a segment is a module or a type,
//! the next one defined in that module's files or in a file with an `impl` of that type.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir`, with its text.
fn sources(dir: &Path, out: &mut BTreeMap<PathBuf, String>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.insert(path.clone(), std::fs::read_to_string(&path).unwrap());
        }
    }
}

/// Whether `text` defines an item called `name` (a function, type, trait, constant, static,
/// module or enum variant-free item), at any indentation and visibility.
fn defines(text: &str, name: &str) -> bool {
    const KINDS: [&str; 8] = ["fn", "struct", "enum", "trait", "const", "static", "type", "mod"];
    text.lines().any(|line| {
        let words: Vec<&str> = line
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .filter(|w| !w.is_empty())
            .collect();
        words.windows(2).any(|w| KINDS.contains(&w[0]) && w[1] == name)
    })
}

/// Whether `text` holds an `impl` block for the type `name` (inherent or of a trait).
fn implements(text: &str, name: &str) -> bool {
    text.lines().any(|line| {
        let line = line.trim_start();
        line.starts_with("impl")
            && line
                .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .any(|w| w == name)
    })
}

/// The files of module `name`: `name.rs` and everything under a `name/` folder.
fn module_files<'a>(files: &'a BTreeMap<PathBuf, String>, name: &str) -> Vec<&'a String> {
    files
        .iter()
        .filter(|(p, _)| {
            p.file_stem().is_some_and(|s| s == name) || p.components().any(|c| c.as_os_str() == name)
        })
        .map(|(_, t)| t)
        .collect()
}

/// Why the path `name` (`a::b::c`, `crate::` left out) names no item, or `None` when it does.
fn missing(files: &BTreeMap<PathBuf, String>, name: &str) -> Option<String> {
    let segments: Vec<&str> = name.split("::").filter(|s| *s != "crate").collect();
    let all: Vec<&String> = files.values().collect();
    let mut scope: Vec<&String> = all.clone();
    for (i, seg) in segments.iter().enumerate() {
        let is_module = !module_files(files, seg).is_empty()
            || all
                .iter()
                .any(|t| defines(t, seg) && t.contains(&format!("mod {seg}")));
        let defined_here = scope.iter().any(|t| defines(t, seg));
        if !(defined_here || (i == 0 && is_module)) {
            return Some(format!("`{seg}` is not defined where `{name}` says"));
        }
        // The next segment is looked for in this module's files, or where this type has impls.
        let module = module_files(files, seg);
        scope = if module.is_empty() {
            all.iter().copied().filter(|t| implements(t, seg)).collect()
        } else {
            module
        };
        if scope.is_empty() && i + 1 < segments.len() {
            return Some(format!("`{seg}` has no impl or module for `{name}`"));
        }
    }
    None
}

/// The names given after each "CPU twin:" in `text`: every `a::b` path up to the closing
/// parenthesis or the end of the sentence (the comment may go on to the next line), and a lone
/// identifier given as the whole twin.
fn twin_names(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("CPU twin:") {
        rest = &rest[at + "CPU twin:".len()..];
        // The reference: up to `)` or a full stop, across one comment line break.
        let end = rest
            .char_indices()
            .find(|&(i, c)| {
                c == ')' || (c == '.' && !rest[i + 1..].starts_with(|n: char| n.is_alphanumeric()))
            })
            .map_or(rest.len(), |(i, _)| i);
        let reference = rest[..end].replace("//", " ");
        let tokens: Vec<&str> = reference
            .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
            .filter(|t| !t.is_empty())
            .collect();
        for t in &tokens {
            if t.contains("::") {
                names.push(t.trim_matches(':').to_string());
            }
        }
        if let [only] = tokens.as_slice()
            && !only.contains("::")
        {
            names.push(only.to_string());
        }
    }
    names
}

#[test]
fn every_cpu_twin_named_in_a_shader_exists() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = BTreeMap::new();
    sources(&root.join("src"), &mut files);
    let mut checked = 0;
    let mut problems = Vec::new();
    let mut shaders: Vec<PathBuf> = std::fs::read_dir(root.join("shaders"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "wgsl"))
        .collect();
    shaders.sort();
    for shader in shaders {
        let text = std::fs::read_to_string(&shader).unwrap();
        for name in twin_names(&text) {
            checked += 1;
            if let Some(why) = missing(&files, &name) {
                problems.push(format!(
                    "{}: {why}",
                    shader.file_name().unwrap().to_string_lossy()
                ));
            }
        }
    }
    assert!(
        checked >= 30,
        "only {checked} twins found: is the pattern still \"CPU twin:\"?"
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The check itself tells an existing item from a missing one.
#[test]
fn the_twin_check_finds_a_missing_item() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = BTreeMap::new();
    sources(&root.join("src"), &mut files);
    assert_eq!(missing(&files, "crate::neighbors::NeighborGrid"), None);
    assert_eq!(missing(&files, "NeighborGrid::bin_of"), None);
    assert!(missing(&files, "NeighborGrid::no_such_method").is_some());
    assert!(missing(&files, "no_such_module::bin_of").is_some());
    assert!(missing(&files, "no_such_function").is_some());
    assert_eq!(
        twin_names(
            "// a (CPU twin: WallMap::move_agent); b (CPU twin:\n// gpu::fim::local_update, why). c (CPU twin: scan_neighbors)"
        ),
        vec!["WallMap::move_agent", "gpu::fim::local_update", "scan_neighbors"]
    );
}
