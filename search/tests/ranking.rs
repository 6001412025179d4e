//! Ranking at the sizes the user runs: a rewrite whose bound is lower only
//! for sizes larger than the launch's is not taken (the one-warp-per-row
//! rewrite costs some 2,600 wsteps per warp more up front), the same
//! kernel launched at large sizes takes it, `--at` overrides the launch,
//! a kernel without sizes takes it only when it is no higher at its test
//! launches' sizes either, and `--asymptotic` restores the ranking by
//! degree and coefficients alone. (The `main`s of `votes_short.cu` and
//! `votes_long.cu` print `grid.x`, so their launch cannot get 32 times the
//! blocks: one warp per row keeps the launch there, each warp taking its
//! threads' 32 rows. Without that read one row per warp changes the launch
//! and runs 32 times the warps, ranked by total work: refused for short
//! rows, taken for long ones, in the last test.)

mod common;

use common::{copper_in, root, text, Scratch};
use serde_json::Value;

/// `copper optimize ARGS testdata/ranking/FILE --format json`: its one
/// kernel's object, and the exit status.
fn kernel(file: &str, args: &[&str]) -> (Value, Option<i32>) {
    let path = format!("testdata/ranking/{file}");
    let mut all = vec!["optimize", "--format", "json", path.as_str()];
    all.extend_from_slice(args);
    let o = copper_in(&root(), &all);
    let doc: Value =
        serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&o)));
    let k = doc["kernels"][0].clone();
    assert_eq!(k["kernel"], "countVotes", "{}", text(&o));
    (k, o.status.code())
}

/// The transforms applied to `k`.
fn applied(k: &Value) -> Vec<String> {
    k["applied"]
        .as_array()
        .map(|a| a.iter().map(|x| x["transform"].to_string()).collect())
        .unwrap_or_default()
}

/// `copper optimize --explain ARGS testdata/ranking/FILE`, as text.
fn explained(file: &str, args: &[&str]) -> String {
    let path = format!("testdata/ranking/{file}");
    let mut all = vec!["optimize", "--explain", path.as_str()];
    all.extend_from_slice(args);
    text(&copper_in(&root(), &all))
}

#[test]
fn short_rows_refuse_one_warp_per_row_and_say_why() {
    let (k, code) = kernel("votes_short.cu", &[]);
    assert_eq!(code, Some(0), "{k}");
    assert_eq!(k["status"], "unchanged", "{k}");
    assert_eq!(
        k["ranked"],
        "ranked at districts=3000, stations=12: the launch at line 36"
    );
    let out = explained("votes_short.cu", &[]);
    assert!(
        out.contains("  ranked at districts=3000, stations=12: the launch at line 36\n"),
        "{out}"
    );
    // 41 + 176·12 = 2153 against 2672 + 45·(12 + 31) = 4607.
    assert!(
        out.contains(
            "not better at the sizes in use (the launch at line 36): at stations=12: 2153 → 4607; it is lower only for larger sizes (the stations term: 176 → 45)"
        ),
        "{out}"
    );
}

/// A kernel left unchanged because the rewrite is lower only for larger
/// sizes says from which sizes it would win, in text and JSON.
#[test]
fn an_unchanged_kernel_names_the_rewrite_that_wins_at_larger_sizes() {
    let (k, _) = kernel("votes_short.cu", &[]);
    assert_eq!(k["wins_later"]["transform"], "one warp per row", "{k}");
    assert_eq!(k["wins_later"]["from"]["stations"], 32.0, "{k}");
    let o = copper_in(&root(), &["optimize", "testdata/ranking/votes_short.cu"]);
    assert!(
        text(&o).contains("  at larger sizes: one warp per row lowers the bound from about stations=32; rank at the sizes you run with `--at stations=…`, or by growth with `--asymptotic`\n"),
        "{}",
        text(&o)
    );
    let o = copper_in(&root(), &["optimize", "testdata/students/matmul_naive.cu"]);
    assert!(
        text(&o)
            .contains("at larger sizes: tiled matrix multiply lowers the bound from about n=131;"),
        "{}",
        text(&o)
    );
    // Improved, or ranked by growth alone: nothing to add.
    let (k, _) = kernel("votes_long.cu", &[]);
    assert!(k["wins_later"].is_null(), "{k}");
    let (k, _) = kernel("votes_short.cu", &["--asymptotic"]);
    assert!(k["wins_later"].is_null(), "{k}");
}

#[test]
fn long_rows_take_one_warp_per_row_with_the_values_as_the_reason() {
    let (k, code) = kernel("votes_long.cu", &[]);
    assert_eq!(code, Some(1), "{k}");
    assert_eq!(applied(&k), ["\"one warp per row\""], "{k}");
    assert_eq!(
        k["applied"][0]["why"],
        "at stations=2000: 352041 → 94067 (the stations term: 176 → 45)"
    );
    // The host input cut for testing (`districts`) counts as written.
    assert_eq!(
        k["ranked"],
        "ranked at districts=3000, stations=2000: the launch at line 36"
    );
}

#[test]
fn at_overrides_the_launch_either_way() {
    let (k, _) = kernel("votes_short.cu", &["--at", "districts=3000,stations=2000"]);
    assert_eq!(applied(&k), ["\"one warp per row\""], "{k}");
    assert_eq!(k["ranked"], "ranked at districts=3000, stations=2000: --at");
    let (k, _) = kernel("votes_long.cu", &["--at", "districts=3000,stations=12"]);
    assert_eq!(k["status"], "unchanged", "{k}");
}

#[test]
fn asymptotic_ranks_by_degree_and_coefficients_whatever_the_sizes() {
    for file in ["votes_short.cu", "votes_kernel_only.cu"] {
        let (k, code) = kernel(file, &["--asymptotic"]);
        assert_eq!(code, Some(1), "{file}: {k}");
        assert_eq!(applied(&k), ["\"one warp per row\""], "{file}: {k}");
        assert_eq!(k["applied"][0]["why"], "the stations term: 176 → 45");
        assert!(k["ranked"].is_null(), "{file}: {k}");
    }
    let o = copper_in(
        &root(),
        &[
            "optimize",
            "--asymptotic",
            "--at",
            "stations=12",
            "testdata/ranking/votes_short.cu",
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
}

/// Without sizes in use, a rewrite the heuristic prefers is taken when it
/// is no higher at the test launches' largest sizes (one warp per row on
/// rows of 257), and refused when it is (a tiled 48×48 matrix product,
/// which wins only from about 131).
#[test]
fn without_sizes_a_rewrite_higher_at_the_largest_test_sizes_is_not_taken() {
    let (k, code) = kernel("votes_kernel_only.cu", &[]);
    assert_eq!(code, Some(1), "{k}");
    assert_eq!(applied(&k), ["\"one warp per row\""], "{k}");
    assert_eq!(
        k["applied"][0]["why"],
        "the stations term: 176 → 45, and no higher at the test launches' largest sizes, stations=257: 45273 → 15632"
    );
    assert!(k["ranked"].is_null(), "{k}");
    let o = copper_in(
        &root(),
        &["optimize", "--explain", "testdata/students/matmul_naive.cu"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let out = text(&o);
    assert!(
        out.contains(
            "its bound is lower only for large sizes (the n term: 47 → 41.32) and higher at the test launches' largest sizes, n=48: 2321 → 2667.69; without sizes in use"
        ),
        "{out}"
    );
}

#[test]
fn copper_toml_can_ask_for_the_asymptotic_ranking_and_at_still_wins() {
    let scratch = Scratch::new();
    let dir = scratch.path();
    std::fs::copy(
        root().join("testdata/ranking/votes_short.cu"),
        dir.join("votes.cu"),
    )
    .unwrap();
    std::fs::write(dir.join("copper.toml"), "asymptotic = true\n").unwrap();
    let o = copper_in(dir, &["optimize", "votes.cu"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("why: wsteps per warp, the stations term: 176 → 45"));
    let o = copper_in(
        dir,
        &["optimize", "votes.cu", "--at", "districts=3000,stations=12"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(text(&o).contains("ranked at districts=3000, stations=12: --at"));
}

/// `file` of `testdata/ranking` without its `main` reading `grid.x`, so
/// that one warp per row may give the launch 32 times the blocks, in a
/// scratch directory as `votes.cu`.
fn editable(file: &str) -> Scratch {
    let scratch = Scratch::new();
    let src = std::fs::read_to_string(root().join("testdata/ranking").join(file)).unwrap();
    let editable = src.replace(
        " (%d blocks)\\n\", h_total[0], grid.x);",
        "\\n\", h_total[0]);",
    );
    assert_ne!(editable, src);
    std::fs::write(scratch.path().join("votes.cu"), &editable).unwrap();
    scratch
}

/// Where the launch can change, one row per warp runs 32 times the warps,
/// so it is ranked by total work: with rows of 12 stations it is 15 times
/// cheaper per warp yet twice the work in all, and is refused, saying
/// both totals (the threads' rows on the same launch lose too); with rows
/// of 2000 it wins, the launch's grid scaled by 32 in the same diff, the
/// factor said in text and JSON. A file that reads `grid.x` keeps the
/// launch, saying why.
#[test]
fn one_row_per_warp_where_the_launch_can_change_and_the_threads_rows_otherwise() {
    let short = editable("votes_short.cu");
    let o = copper_in(short.path(), &["optimize", "--explain", "votes.cu"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let out = text(&o);
    for part in [
        "kernel countVotes: no improvement found",
        // 41 + 176·12 = 2153 per warp on the launch as written.
        "it runs 32× the warps: at stations=12, 143.47 × 32 = 4591 > 2153 per original warp",
        "not better at the sizes in use (the launch at line 36): at stations=12: 2153 → 4607",
    ] {
        assert!(out.contains(part), "`{part}` not in\n{out}");
    }
    let long = editable("votes_long.cu");
    let o = copper_in(long.path(), &["optimize", "votes.cu"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let diff = copper_in(long.path(), &["optimize", "--diff", "votes.cu"]);
    let out = text(&o) + &text(&diff);
    for part in [
        "why: wsteps per warp, by total work, at stations=2000: 352041 → 94051 (the stations term: 176 → 45); per warp 352041 → 2939.09, ×32 warps",
        "the launch at line 36 changes: 32 times the blocks in x",
        "lanes now read consecutive `votes` elements: 32 → 5 sectors per warp",
        "+\tdim3 grid(((districts + 127) / 128) * 32);",
        "int d = (blockIdx.x * blockDim.x + threadIdx.x) / 32;",
    ] {
        assert!(out.contains(part), "`{part}` not in\n{out}");
    }
    let o = copper_in(long.path(), &["optimize", "--format", "json", "votes.cu"]);
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    let why = doc["kernels"][0]["applied"][0]["why"]
        .as_str()
        .unwrap_or_default();
    assert!(
        why.ends_with("; per warp 352041 → 2939.09, ×32 warps"),
        "{doc}"
    );
    // Reading `grid.x`: the threads' rows on the same launch, not taken at
    // stations=12 (short_rows_refuse_one_warp_per_row_and_say_why).
    let out = explained("votes_short.cu", &[]);
    assert!(
        out.contains("left alone: 9:1: each warp keeps the rows of its threads: `grid.x` is read at line 39, which would see the scaled grid"),
        "{out}"
    );
}
