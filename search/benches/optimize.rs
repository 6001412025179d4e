//! `copper optimize` end to end (the built binary: reading, analysis,
//! candidates, checks, output), on
//!
//! - the evaluation set of COpPER Table 1 as reproduced in `testdata/`:
//!   each kernel alone (what was found, the bound before and after, wall
//!   time), then all eight in one run;
//! - all of `testdata/` as a batch, with 1 and 2 worker threads: kernels/s.
//!
//! Every figure is the median of several runs. Run: `cargo bench --bench
//! optimize`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use serde_json::Value;

const RUNS: usize = 5;

/// COpPER Table 1, as `testdata/` reproduces it.
const TABLE_1: [(&str, &str); 8] = [
    ("addSub0", "addSub0.cu"),
    ("addSub2", "addSub2.cu"),
    ("SYN-BRDIS", "syn_brdis.cu"),
    ("DMVM", "dmvm.cu"),
    ("DVMM", "dvmm.cu"),
    ("ElementWise", "elementwise.cu"),
    ("1D convolution", "conv1d.cu"),
    ("Rank", "rank.cu"),
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Runs `copper optimize ARGS`; the JSON document and the wall time.
fn optimize(args: &[String]) -> (Value, f64) {
    let start = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_copper"))
        .arg("optimize")
        .args(["--format", "json"])
        .args(args)
        .current_dir(root())
        .output()
        .expect("copper runs");
    let seconds = start.elapsed().as_secs_f64();
    let doc = serde_json::from_slice(&out.stdout).expect("JSON output");
    (doc, seconds)
}

/// The median wall time of `RUNS` runs, and the last run's output.
fn median_run(args: &[String]) -> (Value, f64) {
    let mut times = Vec::new();
    let mut doc = Value::Null;
    for _ in 0..RUNS {
        let (d, t) = optimize(args);
        doc = d;
        times.push(t);
    }
    times.sort_by(f64::total_cmp);
    (doc, times[RUNS / 2])
}

fn main() {
    println!(
        "copper optimize, Table 1 of 002 (median of {RUNS} runs, wall time of the whole command):"
    );
    println!(
        "{:<16} {:<46} {:<22} {:<32} {:>8}",
        "benchmark", "applied", "wsteps before", "after", "time"
    );
    let mut all = Vec::new();
    for (name, file) in TABLE_1 {
        let path = format!("testdata/{file}");
        let (doc, t) = median_run(std::slice::from_ref(&path));
        all.push(path);
        let k = &doc["kernels"][0];
        let applied: Vec<&str> = k["applied"]
            .as_array()
            .map(|a| a.iter().filter_map(|x| x["transform"].as_str()).collect())
            .unwrap_or_default();
        let wsteps = &k["bounds"][0];
        let after = if applied.is_empty() {
            "-"
        } else {
            wsteps["after"].as_str().unwrap_or("?")
        };
        println!(
            "{:<16} {:<46} {:<22} {:<32} {:>6.0} ms",
            name,
            if applied.is_empty() {
                "none".to_string()
            } else {
                applied.join(", ")
            },
            wsteps["before"].as_str().unwrap_or("?"),
            after,
            t * 1e3
        );
    }
    let (_, t) = median_run(&all);
    println!("all eight in one run: {:.2} s", t);
    println!();
    println!("batch: all of testdata/ (median of {RUNS} runs):");
    for jobs in [1, 2] {
        let args = vec!["testdata".to_string(), "--jobs".into(), jobs.to_string()];
        let (doc, t) = median_run(&args);
        let kernels = doc["kernels"].as_array().cloned().unwrap_or_default();
        let searched = kernels.iter().filter(|k| k["status"] != "error").count();
        println!(
            "  {jobs} thread(s): {} kernels ({searched} searched, {} unreadable) in {:.2} s, {:.1} kernels/s",
            kernels.len(),
            kernels.len() - searched,
            t,
            kernels.len() as f64 / t
        );
    }
}
