//! Helpers the command-line tests share: the workspace root, running the
//! `copper` binary, its output as one text.

// Each test crate uses only some of these.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The workspace root (where `testdata/` is).
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Runs `copper ARGS` in `dir`.
pub fn copper_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_copper"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("copper runs")
}

/// Stdout, then stderr.
pub fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}
