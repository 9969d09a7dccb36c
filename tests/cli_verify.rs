//! `crowdfield verify` and its folder: an earlier run's files stay whole until the new run is
//! complete (a refused option, a killed run), and `--params` reads only a small regular file.

use crowdfield::ownership::{MANIFEST_FILE, OwnedDir};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The files of an earlier `verify` run that the tests plant: name and content.
const EARLIER: &[(&str, &str)] = &[
    ("verify.json", "{\"earlier\": true}\n"),
    ("verify.md", "# the earlier run\n"),
    ("rimea-1-corridor.json", "{}\n"),
    ("fundamental_diagram.png", "not really a PNG"),
];

/// Makes `dir` the folder of an earlier `verify` run holding [`EARLIER`].
fn earlier_run(dir: &Path) {
    let mut owned = OwnedDir::open_replacing(dir, "crowdfield verify", false).unwrap();
    for (name, text) in EARLIER {
        std::fs::write(owned.claim(name).unwrap(), text).unwrap();
    }
    owned.finish().unwrap();
}

/// Asserts that `dir` still holds the earlier run: its files as they were, listed in its
/// manifest, and nothing else.
#[track_caller]
fn assert_earlier_run_whole(dir: &Path) {
    for (name, text) in EARLIER {
        assert_eq!(
            std::fs::read_to_string(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}")),
            *text,
            "{name}"
        );
    }
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join(MANIFEST_FILE)).unwrap()).unwrap();
    for (name, text) in EARLIER {
        assert_eq!(manifest["files"][name], text.len(), "{name} in {manifest}");
    }
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    let mut want: Vec<String> = EARLIER.iter().map(|(n, _)| n.to_string()).collect();
    want.push(MANIFEST_FILE.to_string());
    want.sort();
    assert_eq!(names, want);
}

/// Runs `crowdfield verify ARGS`, killed (and the test failed) if it takes over `limit`.
fn verify(args: &[&str], limit: Duration) -> Output {
    let child = Command::new(env!("CARGO_BIN_EXE_crowdfield"))
        .arg("verify")
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let (done, waited) = std::sync::mpsc::channel();
    std::thread::spawn(move || done.send(child.wait_with_output().unwrap()));
    match waited.recv_timeout(limit) {
        Ok(o) => o,
        Err(_) => {
            // The child is stuck (a FIFO opened for reading blocks until a writer comes).
            let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
            panic!("verify {args:?} still ran after {limit:?}");
        }
    }
}

#[test]
fn a_params_block_out_of_range_is_refused_before_the_earlier_run_is_touched() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("v");
    earlier_run(&out);
    let o = verify(
        &[
            "--quick",
            "--quiet",
            "--params",
            r#"{"gamma": -1}"#,
            "--out",
            out.to_str().unwrap(),
        ],
        Duration::from_secs(60),
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains(r#"--params {"gamma": -1}: "#)
            && err.contains("params.gamma: -1")
            && err.contains(">= 0"),
        "{err}"
    );
    assert_earlier_run_whole(&out);
}

#[test]
fn a_killed_run_leaves_the_earlier_run_whole() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("v");
    earlier_run(&out);
    // Three seeds of the quick suite take seconds: the kill comes while the suite runs.
    let mut child = Command::new(env!("CARGO_BIN_EXE_crowdfield"))
        .args(["verify", "--quick", "--seeds", "3", "--quiet", "--out"])
        .arg(&out)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    std::thread::sleep(Duration::from_millis(1500));
    let running = child.try_wait().unwrap().is_none();
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        running,
        "the suite ended within {:?}: no kill mid-run",
        start.elapsed()
    );
    assert_earlier_run_whole(&out);
}

#[test]
fn a_params_file_is_read_only_when_it_is_a_small_regular_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("v");
    let big = dir.path().join("big.json");
    std::fs::File::create(&big)
        .unwrap()
        .set_len(crowdfield::params::MAX_PARAMS_FILE_BYTES + 1)
        .unwrap();
    let fifo = dir.path().join("params.fifo");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let big_text = big.to_str().unwrap().to_string();
    let fifo_text = fifo.to_str().unwrap().to_string();
    let folder_text = dir.path().to_str().unwrap().to_string();
    let cases: [(&str, String); 5] = [
        (
            "/dev/zero",
            "--params /dev/zero: is a character device".to_string(),
        ),
        (
            "/dev/urandom",
            "--params /dev/urandom: is a character device".to_string(),
        ),
        (
            &fifo_text,
            format!("--params {fifo_text}: is a FIFO (a named pipe)"),
        ),
        (
            &big_text,
            format!(
                "--params {big_text}: {} bytes: expected a file of at most {} bytes",
                crowdfield::params::MAX_PARAMS_FILE_BYTES + 1,
                crowdfield::params::MAX_PARAMS_FILE_BYTES
            ),
        ),
        (&folder_text, format!("--params {folder_text}: is a folder")),
    ];
    for (params, want) in &cases {
        let o = verify(
            &[
                "--quick",
                "--quiet",
                "--params",
                params,
                "--out",
                out.to_str().unwrap(),
            ],
            Duration::from_secs(20),
        );
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{params}: {err}");
        assert!(err.contains(want.as_str()), "{params}: {err}");
        assert!(
            !out.exists(),
            "{params}: the folder is made only after the options pass"
        );
    }
}
