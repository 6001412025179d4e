//! Untrusted trees and names (issue 31): what copper prints about the
//! files it is given, what it leaves behind when killed, and what it
//! reads and writes outside the trees it was given.

mod common;

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{root, text};

/// A fresh scratch directory for one case.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("copper-untrusted-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `copper ARGS` run in `dir`.
fn copper(dir: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_copper"));
    c.current_dir(dir);
    c
}

/// Copies `testdata/NAME.cu` and its parameter file into `dir` as `stem`.
fn copy_testdata(name: &str, dir: &Path, stem: &str) -> PathBuf {
    let cu = dir.join(format!("{stem}.cu"));
    std::fs::copy(root().join(format!("testdata/{name}.cu")), &cu).unwrap();
    std::fs::copy(
        root().join(format!("testdata/{name}.toml")),
        dir.join(format!("{stem}.toml")),
    )
    .unwrap();
    cu
}

/// The names in `dir` that look like copper's temporary files.
fn temporaries(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".copper.tmp"))
        .collect()
}

// ---- item 14: temporary files removed when a signal ends copper ----

#[test]
fn a_write_past_the_file_size_limit_leaves_no_temporary_file() {
    let dir = scratch("xfsz");
    copy_testdata("addSub0", &dir, "k");
    let mut cmd = copper(&dir);
    cmd.args(["optimize", "k.cu", "--write"]);
    // SAFETY: setrlimit is async-signal-safe; the limit (bytes) is below
    // the size of the rewritten file, so writing it raises SIGXFSZ.
    unsafe {
        cmd.pre_exec(|| {
            let lim = libc::rlimit {
                rlim_cur: 200,
                rlim_max: 200,
            };
            libc::setrlimit(libc::RLIMIT_FSIZE, &lim);
            Ok(())
        });
    }
    let out: Output = cmd.output().unwrap();
    assert!(!out.status.success(), "{}", text(&out));
    assert_eq!(temporaries(&dir), Vec::<String>::new(), "{}", text(&out));
    let original = std::fs::read(root().join("testdata/addSub0.cu")).unwrap();
    assert_eq!(std::fs::read(dir.join("k.cu")).unwrap(), original);
}
