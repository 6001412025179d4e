//! Helpers the command-line tests share: the workspace root, running the
//! `copper` binary, its output as one text, scratch files.

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

/// A scratch folder of one test (`tempfile`), removed when dropped: keep
/// it alive while the test uses its files.
pub struct Scratch(tempfile::TempDir);

impl Scratch {
    /// A new, empty scratch folder under the system's temporary directory.
    pub fn new() -> Scratch {
        Scratch(tempfile::tempdir().expect("a scratch folder"))
    }

    /// The folder's path.
    pub fn path(&self) -> &Path {
        self.0.path()
    }

    /// Writes `bytes` to `name` in this folder, and returns its path.
    pub fn file(&self, name: &str, bytes: &[u8]) -> PathBuf {
        let p = self.path().join(name);
        std::fs::write(&p, bytes).expect("a scratch file");
        p
    }
}
