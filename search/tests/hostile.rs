//! Hostile input for every command: names that try to run
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

use tempfile::TempDir;

use common::{root, text};

/// A fresh scratch directory for one case, removed when dropped.
fn scratch(name: &str) -> TempDir {
    tempfile::Builder::new()
        .prefix(&format!("copper-hostile-{name}-"))
        .tempdir()
        .unwrap()
}

/// What one run of `copper` took.
struct Measured {
    out: Output,
    wall: Duration,
    /// Peak resident memory of the process, KiB.
    peak_kib: i64,
}

/// Runs `copper ARGS` in `dir` with `env`, recording its wall time and
/// peak memory (from `wait4`), and prints one row of the table; killed
/// (exit -1) after a minute.
// The child is reaped by `wait4` (which also gives its peak memory).
#[allow(clippy::zombie_processes)]
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
    // A hang is a failure, not a stuck test run: the child is killed after
    // a minute (it is still our unreaped child then, so the pid is its).
    let finished = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let watchdog = {
        let (finished, pid) = (finished.clone(), child.id() as i32);
        std::thread::spawn(move || {
            let until = Instant::now() + Duration::from_secs(60);
            while Instant::now() < until {
                if finished.load(std::sync::atomic::Ordering::SeqCst) {
                    return;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            // SAFETY: signalling our own child.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        })
    };
    let mut status = 0;
    // SAFETY: an all-zero rusage is valid; wait4 fills it.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: waiting for our own child, with valid pointers.
    let pid = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut usage) };
    assert_eq!(pid, child.id() as i32, "wait4");
    let wall = start.elapsed();
    finished.store(true, std::sync::atomic::Ordering::SeqCst);
    watchdog.join().unwrap();
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

/// A kernel that keeps the analysis busy until its budget runs out (a
/// loop nest deeper than the degree).
fn slow_kernel(depth: usize) -> String {
    let mut body = "a[threadIdx.x] += 1;".to_string();
    for k in 0..depth {
        body = format!("for (int i{k} = 0; i{k} < n; i{k}++) {{ {body} }}");
    }
    format!("\n__global__ void slow(float *a, int n) {{ {body} }}\n")
}

#[path = "hostile/writes.rs"]
mod writes;

#[path = "hostile/inputs.rs"]
mod inputs;

#[path = "hostile/scale.rs"]
mod scale;

#[path = "hostile/untrusted.rs"]
mod untrusted;
