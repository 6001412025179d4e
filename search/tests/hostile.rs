//! Hostile input for every command (issue 14): names that try to run
//! commands, planted symlinks, files edited during a run, FIFOs, symlink
//! loops, odd files. Each case runs the release binary and records its
//! wall time and peak memory (printed with `--nocapture`:
//! `cargo test --release -p copper-search --test hostile -- --nocapture`).
//! The slow cases run only with `COPPER_HOSTILE_SLOW=1`.

mod common;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::{root, text};

/// A fresh scratch directory for one case.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("copper-hostile-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// What one run of `copper` took.
struct Measured {
    out: Output,
    wall: Duration,
    /// Peak resident memory of the process, KiB.
    peak_kib: i64,
}

/// Runs `copper ARGS` in `dir` with `env`, recording its wall time and
/// peak memory (from `wait4`), and prints one row of the table.
fn run(case: &str, dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Measured {
    let start = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_copper"))
        .args(args)
        .current_dir(dir)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("copper runs");
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let out_reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        stdout.read_to_end(&mut v).unwrap();
        v
    });
    let err_reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        stderr.read_to_end(&mut v).unwrap();
        v
    });
    let mut status = 0;
    // SAFETY: an all-zero rusage is valid; wait4 fills it.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: waiting for our own child, with valid pointers.
    let pid = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut usage) };
    assert_eq!(pid, child.id() as i32, "wait4");
    let wall = start.elapsed();
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        -1
    };
    use std::os::unix::process::ExitStatusExt;
    let out = Output {
        status: std::process::ExitStatus::from_raw(if code >= 0 { code << 8 } else { status }),
        stdout: out_reader.join().unwrap(),
        stderr: err_reader.join().unwrap(),
    };
    let peak_kib = usage.ru_maxrss;
    println!(
        "| {case} | {:.2} s | {:.1} MiB | exit {} |",
        wall.as_secs_f64(),
        peak_kib as f64 / 1024.0,
        code
    );
    Measured {
        out,
        wall,
        peak_kib,
    }
}

fn code(m: &Measured) -> i32 {
    m.out.status.code().unwrap_or(-1)
}

fn stdout(m: &Measured) -> String {
    String::from_utf8_lossy(&m.out.stdout).to_string()
}

fn stderr(m: &Measured) -> String {
    String::from_utf8_lossy(&m.out.stderr).to_string()
}

/// Copies `testdata/NAME.cu` (and its parameter file) into `dir` as `as_stem`.
fn copy_testdata(name: &str, dir: &Path, as_stem: &str) -> PathBuf {
    let cu = dir.join(format!("{as_stem}.cu"));
    std::fs::copy(root().join(format!("testdata/{name}.cu")), &cu).unwrap();
    let toml = root().join(format!("testdata/{name}.toml"));
    if toml.exists() {
        std::fs::copy(toml, dir.join(format!("{as_stem}.toml"))).unwrap();
    }
    cu
}

/// Every file below `dir`, recursively (without following links).
fn files_below(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() && !p.is_symlink() {
            out.extend(files_below(&p));
        } else {
            out.push(p);
        }
    }
    out
}

// ---- issue 14 item 2: command injection in `copper bench` ----

#[test]
fn bench_build_script_does_not_run_a_file_name() {
    let dir = scratch("bench-inject");
    copy_testdata("saxpy", &dir, "$(touch PWNED)");
    let m = run(
        "bench on `$(touch PWNED).cu`",
        &dir,
        &["bench", "$(touch PWNED).cu", "--out", "out"],
        &[],
    );
    assert_eq!(code(&m), 0, "{}", text(&m.out));
    let script = dir.join("out/build-$(touch PWNED).sh");
    assert!(script.exists(), "{}", text(&m.out));
    // A stand-in compiler: the script must run to its end without running
    // anything the name says.
    let built = Command::new("sh")
        .arg(&script)
        .env("NVCC", "true")
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(built.status.success(), "{}", text(&built));
    let planted: Vec<PathBuf> = files_below(&dir)
        .into_iter()
        .filter(|p| p.file_name().is_some_and(|n| n == "PWNED"))
        .collect();
    assert!(planted.is_empty(), "the script ran the name: {planted:?}");
    assert!(
        String::from_utf8_lossy(&built.stdout).contains("$(touch PWNED)_bench"),
        "{}",
        text(&built)
    );
}

#[test]
fn bench_refuses_a_newline_in_a_file_name() {
    let dir = scratch("bench-newline");
    copy_testdata("saxpy", &dir, "a\n#include <evil>\nb");
    let m = run(
        "bench on a name with a newline",
        &dir,
        &["bench", "a\n#include <evil>\nb.cu", "--out", "out"],
        &[],
    );
    assert_eq!(code(&m), 2, "{}", text(&m.out));
    assert!(stderr(&m).contains("control character"), "{}", stderr(&m));
    assert!(!dir.join("out").exists(), "nothing is written");
}
