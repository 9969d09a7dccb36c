//! Headless Chromium for the page tests: finding the browser (a test fails, not skips, when
//! the test command asked for one and none is there) and running it on a page with a fresh
//! profile, its console going to stderr.

#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Output};

/// Whether the browser tests must run (the test command installs Chromium and sets this).
pub fn required() -> bool {
    std::env::var("CROWDFIELD_REQUIRE_BROWSER").is_ok_and(|v| v == "1")
}

/// The Chromium on this machine; `None` (after saying so) when there is none and none is
/// required, a failed test when one is.
pub fn chromium() -> Option<&'static str> {
    let browser = ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|b| {
            Command::new(b)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        });
    if browser.is_none() {
        assert!(!required(), "no Chromium, and CROWDFIELD_REQUIRE_BROWSER=1");
        eprintln!("skipped: no Chromium (scripts/test.sh installs it)");
    }
    browser
}

/// Runs `browser` headless on the page at `page` with the profile folder `profile` and the
/// further arguments `extra` (`--dump-dom`, `--screenshot=...`); fails the test when it fails.
pub fn run(browser: &str, page: &Path, profile: &Path, extra: &[&str]) -> Output {
    std::fs::create_dir_all(profile).unwrap();
    let o = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--hide-scrollbars",
            "--window-size=1200,900",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(extra)
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    o
}

/// The page's console messages in the browser's log (stderr).
pub fn console(o: &Output) -> Vec<String> {
    String::from_utf8_lossy(&o.stderr)
        .lines()
        .filter(|l| l.contains("CONSOLE"))
        .map(str::to_string)
        .collect()
}
