//! The promise that a rewrite never changes a kernel's results, as a
//! property: on randomly assembled kernels (loops with invariant and
//! varying loads, writes, early exits, barriers, divergent branches with
//! common code), every candidate of every transform computes, on every
//! synthesized launch, exactly what the original computes. Kernels the
//! original cannot run cleanly (out-of-bounds accesses, races between
//! blocks, divergent barriers) are skipped.
//!
//! `PROPTEST_CASES=2000 cargo test --release -p copper-transforms --test
//! random_rewrites -- --nocapture` for a longer run.

mod common;

use common::try_propose;
use std::sync::atomic::{AtomicUsize, Ordering};

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

/// Statements a loop body (over `j`, with the thread's `i`) is made of.
const BODY: &[&str] = &[
    "b[i] += a[i];",
    "b[i] -= a[j];",
    "c[i] = c[i] + a[i + 1] * 2;",
    "s += a[i] + a[0];",
    "s = s + a[j + i % 3];",
    "if (a[i] > 4) { b[i] += 1; } else { b[i] += a[i]; }",
    "if (j > 3) break;",
    "if (a[j] % 2 == 0) continue;",
    "a[i] = b[i] + j;",
    "c[i] += a[i]; b[i] += a[i];",
    "__syncthreads();",
    "i = i + 0;",
];

/// Statements after the loop.
const TAIL: &[&str] = &["b[i] += s;", "c[i] = s - 1;", "b[i] = b[i] * 2 + s;", ""];

fn kernel(
    body: &[usize],
    other_body: &[usize],
    tails: (usize, usize),
    start: u8,
    guard: bool,
    divergent: bool,
) -> String {
    let lp = |stmts: &[usize]| {
        let b: Vec<&str> = stmts.iter().map(|&k| BODY[k]).collect();
        format!(
            "float s = 0.0f;\n        for (int j = {start}; j < n; j++) {{\n            {}\n        }}\n",
            b.join("\n            ")
        )
    };
    let mut inner = if divergent {
        // Both branches share the loop; they differ after it.
        format!(
            "if (threadIdx.x % 2 == 0) {{\n        {}        {}\n    }} else {{\n        {}        {}\n    }}\n",
            lp(body),
            TAIL[tails.0],
            lp(if other_body.is_empty() { body } else { other_body }),
            TAIL[tails.1]
        )
    } else {
        format!(
            "{{\n        {}        {}\n    }}\n",
            lp(body),
            TAIL[tails.0]
        )
    };
    if guard {
        inner = format!("if (i < n) {inner}");
    }
    format!(
        "__global__ void k(int *a, int *b, float *c, int n) {{\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    {inner}}}\n"
    )
}

#[test]
fn rewrites_never_change_results() {
    let cases = common::cases(48);
    let strategy = (
        prop::collection::vec(0..BODY.len(), 1..4),
        prop::collection::vec(0..BODY.len(), 0..3),
        (0..TAIL.len(), 0..TAIL.len()),
        0u8..3,
        any::<bool>(),
        any::<bool>(),
        prop::sample::select(vec![32u64, 64, 96]),
    );
    let checked = AtomicUsize::new(0);
    let skipped = AtomicUsize::new(0);
    let mut runner = TestRunner::new(Config {
        cases,
        ..Config::default()
    });
    runner
        .run(
            &strategy,
            |(body, other, tails, start, guard, divergent, block)| {
                let src = kernel(&body, &other, tails, start, guard, divergent);
                for t in copper_transforms::all() {
                    // A candidate that changes the results panics, naming it.
                    match try_propose(&*t, &src, [block, 1, 1]) {
                        Ok(p) => {
                            checked.fetch_add(p.candidates.len(), Ordering::Relaxed);
                        }
                        Err(_) => {
                            // The original itself cannot be checked.
                            skipped.fetch_add(1, Ordering::Relaxed);
                            return Ok(());
                        }
                    }
                }
                Ok(())
            },
        )
        .unwrap();
    let (checked, skipped) = (checked.into_inner(), skipped.into_inner());
    println!("{cases} random kernels: {checked} candidates checked, {skipped} kernels the original could not run cleanly");
    assert!(
        checked >= cases as usize / 2,
        "only {checked} candidates in {cases} kernels"
    );
}

/// How a loop over `i < W` indexes `B` (block of 64 threads).
const INDEX: &[&str] = &[
    "threadIdx.x * W + i",
    "threadIdx.x + i * 64",
    "blockIdx.x * 64 * W + threadIdx.x * W + i",
    "t + i",
    "i",
];

/// The condition under which the loop reads `B[s + OFF]`.
const GUARD: &[&str] = &["s < m", "s + OFF < m", "s < m && s > 2", "s <= m - 3", ""];

/// Another read of `B` after the loop.
const EXTRA: &[&str] = &[
    "",
    "if (t < n) { acc += B[t]; }",
    "acc += B[threadIdx.x % 8];",
];

fn guarded_kernel(index: usize, guard: usize, extra: usize, w: u8, off: u8) -> String {
    let s = INDEX[index].replace('W', &w.to_string());
    let read = format!("acc += B[s + {off}];");
    let body = match GUARD[guard] {
        "" => read,
        g => format!("if ({}) {{ {read} }}", g.replace("OFF", &off.to_string())),
    };
    format!(
        "__global__ void k(float *A, const float *B, int m, int n) {{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    float acc = 0.0f;
    for (int i = 0; i < {w}; i++) {{
        int s = {s};
        {body}
    }}
    {}
    if (t < n) {{ A[t] = acc; }}
}}
",
        EXTRA[extra]
    )
}

/// On kernels whose reads are guarded, with every array exactly
/// as long as the original needs (the checker's tight launch), no
/// candidate reads out of bounds (the check fails, and panics, if one
/// does).
#[test]
fn rewrites_never_read_past_what_the_original_reads() {
    let cases = common::cases(48);
    let strategy = (
        0..INDEX.len(),
        0..GUARD.len(),
        0..EXTRA.len(),
        1u8..12,
        0u8..4,
    );
    let checked = AtomicUsize::new(0);
    let mut runner = TestRunner::new(Config {
        cases,
        ..Config::default()
    });
    runner
        .run(&strategy, |(index, guard, extra, w, off)| {
            let src = guarded_kernel(index, guard, extra, w, off);
            for t in copper_transforms::all() {
                if let Ok(p) = try_propose(&*t, &src, [64, 1, 1]) {
                    checked.fetch_add(p.candidates.len(), Ordering::Relaxed);
                }
            }
            Ok(())
        })
        .unwrap();
    println!(
        "{cases} guarded kernels: {} candidates checked on tight arrays",
        checked.into_inner()
    );
}
