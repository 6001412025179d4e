//! `copper optimize` end to end: exit statuses, `--diff` that `git apply`
//! accepts, `--write` (atomic, only on improvement), batches with broken
//! files, `--report`, machine formats, configuration files, and bad input
//! that gets a clear message and writes nothing.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{copper_in, text, Scratch};

fn testdata(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata")
        .join(name)
}

/// A fresh scratch directory holding copies of the named testdata files
/// (with their parameter files).
fn workspace(files: &[&str]) -> Scratch {
    let scratch = Scratch::new();
    let dir = scratch.path();
    for f in files {
        std::fs::copy(testdata(f), dir.join(f)).unwrap();
        let toml = Path::new(f).with_extension("toml");
        if testdata(toml.to_str().unwrap()).exists() {
            std::fs::copy(testdata(toml.to_str().unwrap()), dir.join(&toml)).unwrap();
        }
    }
    scratch
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap()
}

#[test]
fn exit_status_says_whether_something_improved() {
    let ws = workspace(&["addSub0.cu", "vector_add.cu"]);
    let dir = ws.path();
    let o = copper_in(dir, &["optimize", "vector_add.cu"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(text(&o).contains("no improvement found"), "{}", text(&o));
    let o = copper_in(dir, &["optimize", "addSub0.cu"]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(t.contains("branch distribution"), "{t}");
    assert!(
        t.contains("why: wsteps per warp, at w=64: 44486 → 33926 (the w term: 695 → 530)"),
        "{t}"
    );
    let o = copper_in(dir, &["optimize", "addSub0.cu", "--exit-zero"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    // The configuration file can say the same.
    std::fs::write(dir.join("copper.toml"), "exit_zero = true\n").unwrap();
    let o = copper_in(dir, &["optimize", "addSub0.cu"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
}

#[test]
fn diff_applies_with_git_apply_and_write_updates_in_place() {
    let ws = workspace(&["addSub2.cu", "vector_add.cu"]);
    let dir = ws.path();
    let before = read(&dir.join("addSub2.cu"));
    let o = copper_in(dir, &["optimize", "--diff", "addSub2.cu"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let patch = String::from_utf8(o.stdout.clone()).unwrap();
    assert!(
        patch.starts_with("--- a/addSub2.cu\n+++ b/addSub2.cu\n"),
        "{patch}"
    );
    assert!(patch.contains("+    int A_elem = 0;"), "{patch}");
    std::fs::write(dir.join("fix.patch"), &patch).unwrap();
    let g = Command::new("git")
        .args(["apply", "--check", "fix.patch"])
        .current_dir(dir)
        .output()
        .expect("git runs");
    assert!(g.status.success(), "{}", String::from_utf8_lossy(&g.stderr));
    // --write leaves the same text the patch describes, and nothing else.
    let o = copper_in(dir, &["optimize", "--write", "addSub2.cu", "vector_add.cu"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let after = read(&dir.join("addSub2.cu"));
    assert_ne!(before, after);
    assert!(after.contains("B[j * w + i] += A_elem;"), "{after}");
    assert_eq!(
        read(&dir.join("vector_add.cu")),
        read(&testdata("vector_add.cu"))
    );
    let leftovers: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
    // The rewritten file is a valid input again.
    let o = copper_in(dir, &["parse", "addSub2.cu"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
}

#[test]
fn a_batch_goes_on_past_broken_files_in_a_deterministic_order() {
    let ws = workspace(&["addSub0.cu", "vector_add.cu", "conv1d.cu"]);
    let dir = ws.path();
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    std::fs::write(
        dir.join("sub/broken.cu"),
        "__global__ void k(int *a) { a[0] = ; }\n",
    )
    .unwrap();
    std::fs::write(dir.join("sub/binary.cu"), [0x7f, b'E', b'L', b'F', 0, 1]).unwrap();
    std::fs::write(dir.join("notes.txt"), "not CUDA").unwrap();
    let report = dir.join("out.jsonl");
    let o = copper_in(
        dir,
        &["optimize", ".", "--report", report.to_str().unwrap()],
    );
    let t = text(&o);
    // Improvements (1) win over the files that cannot be read (each named).
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(t.contains("sub/broken.cu:1:36: error[syntax]"), "{t}");
    assert!(t.contains("binary file"), "{t}");
    assert!(!t.contains("panicked"), "{t}");
    // Every good kernel was still searched; the summary lists all of them.
    for k in ["addSub0", "vector_add", "conv1d"] {
        assert!(t.contains(&format!("kernel {k}:")), "{k} missing:\n{t}");
    }
    assert!(t.contains("2 improved, 0 unchecked, 2 errors"), "{t}");
    let lines: Vec<serde_json::Value> = read(&report)
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON object per line"))
        .collect();
    let names: Vec<String> = lines
        .iter()
        .map(|v| {
            format!(
                "{}:{}",
                v["file"].as_str().unwrap(),
                v["kernel"].as_str().unwrap_or("-")
            )
        })
        .collect();
    assert_eq!(
        names,
        [
            "./addSub0.cu:addSub0",
            "./conv1d.cu:conv1d",
            "./sub/binary.cu:-",
            "./sub/broken.cu:k",
            "./vector_add.cu:vector_add"
        ]
    );
    // Same order and results with one thread.
    let o1 = copper_in(dir, &["optimize", ".", "--jobs", "1", "--format", "json"]);
    let o2 = copper_in(dir, &["optimize", ".", "--jobs", "2", "--format", "json"]);
    let strip = |o: &Output| {
        let mut v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        v["seconds"] = serde_json::Value::Null;
        for k in v["kernels"].as_array_mut().unwrap() {
            k["seconds"] = serde_json::Value::Null;
        }
        v
    };
    assert_eq!(strip(&o1), strip(&o2));
}

#[test]
fn machine_formats_are_well_formed() {
    let ws = workspace(&["addSub0.cu"]);
    let dir = ws.path();
    let o = copper_in(dir, &["optimize", "addSub0.cu", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert_eq!(v["kernels"][0]["status"], "improved");
    assert_eq!(v["kernels"][0]["bounds"][0]["before"], "6 + 695·max(0, w)");
    assert_eq!(v["kernels"][0]["bounds"][0]["after"], "6 + 530·max(0, w)");
    assert!(v["diffs"][0]["diff"]
        .as_str()
        .unwrap()
        .contains("+        int A_elem = A[i];"));
    let o = copper_in(dir, &["optimize", "addSub0.cu", "--format", "sarif"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("SARIF is JSON");
    assert_eq!(v["version"], "2.1.0");
    let result = &v["runs"][0]["results"][0];
    assert_eq!(result["ruleId"], "copper/optimize");
    // The fix replaces only the lines the rewrite changed, each its own
    // region (not the whole kernel).
    let replacements = result["fixes"][0]["artifactChanges"][0]["replacements"]
        .as_array()
        .unwrap();
    let inserted: Vec<&str> = replacements
        .iter()
        .map(|r| r["insertedContent"]["text"].as_str().unwrap())
        .collect();
    assert!(
        inserted
            .iter()
            .any(|t| t.contains("int B_elem = B[j * w + i];")),
        "{inserted:?}"
    );
    assert!(
        inserted.iter().all(|t| !t.contains("__global__")),
        "{inserted:?}"
    );
    let o = copper_in(dir, &["optimize", "addSub0.cu", "--format", "github"]);
    let t = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(
        t.starts_with("::notice file=addSub0.cu,line=11,col=1,title=copper%3A faster addSub0::"),
        "{t}"
    );
    assert_eq!(t.lines().count(), 1, "{t}");
}

/// The file's text with the JSON `edits` of every improved kernel applied
/// (by byte offsets, last first).
fn apply_json_edits(original: &str, kernels: &[serde_json::Value]) -> String {
    let mut edits: Vec<(usize, usize, &str)> = kernels
        .iter()
        .flat_map(|k| k["edits"].as_array().into_iter().flatten())
        .map(|e| {
            let at = |w: &str| e[w]["byte"].as_u64().unwrap() as usize;
            (at("start"), at("end"), e["text"].as_str().unwrap())
        })
        .collect();
    edits.sort_by_key(|e| std::cmp::Reverse(e.0));
    let mut text = original.to_string();
    for (start, end, new) in edits {
        text.replace_range(start..end, new);
    }
    text
}

#[test]
fn json_edits_give_exactly_what_write_gives() {
    let files = [
        "addSub0.cu",
        "student_transpose.cu",
        "conv1d.cu",
        "elementwise.cu",
        "rank.cu",
    ];
    let ws = workspace(&files);
    let dir = ws.path();
    // By degree: the tiles of `elementwise` and `rank` win only at sizes
    // larger than their parameter files'.
    for f in files {
        let original = read(&dir.join(f));
        let o = copper_in(dir, &["optimize", f, "--format", "json", "--asymptotic"]);
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
        let kernels = v["kernels"].as_array().unwrap();
        assert!(
            kernels.iter().any(|k| k["status"] == "improved"),
            "{f}: {}",
            text(&o)
        );
        let edited = apply_json_edits(&original, kernels);
        copper_in(dir, &["optimize", f, "--write", "--asymptotic"]);
        assert_eq!(edited, read(&dir.join(f)), "{f}");
        assert_ne!(edited, original, "{f}");
    }
}

#[test]
fn ranking_options_and_transform_selection() {
    let ws = workspace(&["syn_brdis.cu"]);
    let dir = ws.path();
    // Only branch distribution.
    let o = copper_in(
        dir,
        &[
            "optimize",
            "syn_brdis.cu",
            "--transform",
            "branch-distribution",
            "--format",
            "json",
        ],
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let applied = v["kernels"][0]["applied"].as_array().unwrap();
    assert_eq!(applied.len(), 1);
    assert_eq!(applied[0]["transform"], "branch distribution");
    // Skipping it leaves the tiled move alone to act.
    let o = copper_in(
        dir,
        &[
            "optimize",
            "syn_brdis.cu",
            "--skip-transform",
            "branch-distribution",
            "--format",
            "json",
        ],
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let applied: Vec<&str> = v["kernels"][0]["applied"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["transform"].as_str().unwrap())
        .collect();
    assert!(!applied.contains(&"branch distribution"), "{applied:?}");
    // Ranking at concrete sizes explains itself in those terms.
    let o = copper_in(dir, &["optimize", "syn_brdis.cu", "--at", "M=4096,N=64"]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(t.contains("at M=4096, N=64: 12060491 → 6030279"), "{t}");
    // Another ranking metric.
    let o = copper_in(dir, &["optimize", "syn_brdis.cu", "--metric", "sectors"]);
    assert!(text(&o).contains("why: sectors per warp"), "{}", text(&o));
}

#[test]
fn bad_input_gets_a_message_an_exit_status_and_no_writes() {
    let ws = workspace(&["addSub0.cu"]);
    let dir = ws.path();
    let original = read(&dir.join("addSub0.cu"));
    let cases: &[(&[&str], &str)] = &[
        (&["optimize", "missing.cu"], "missing.cu"),
        (
            &["optimize", "--write", "addSub0.cu", "missing.cu"],
            "missing.cu",
        ),
        (&["optimize", "empty"], "no .cu or .cuh files"),
        (
            &["optimize", "addSub0.cu", "--diff", "--write"],
            "cannot be used with",
        ),
        (
            &["optimize", "addSub0.cu", "--metric", "bogus"],
            "unknown metric `bogus`",
        ),
        (
            &["optimize", "addSub0.cu", "--write", "--transform", "nope"],
            "unknown transform `nope`",
        ),
        (
            &["optimize", "addSub0.cu", "--skip-transform", "nope"],
            "unknown transform `nope`",
        ),
        (&["optimize", "addSub0.cu", "--epsilon", "2"], "--epsilon"),
        (&["optimize", "addSub0.cu", "--at", "w"], "NAME=VALUE"),
        (&["optimize", "addSub0.cu", "--block", "0"], "block"),
        (&["optimize", "addSub0.cu", "--degree", "9"], "degree"),
        (
            &["optimize", "addSub0.cu", "--write", "--kernel", "nosuch"],
            "no kernel named `nosuch`",
        ),
        (
            &["optimize", "addSub0.cu", "--config", "missing.toml"],
            "missing.toml",
        ),
        (
            &[
                "optimize",
                "addSub0.cu",
                "--write",
                "--params",
                "missing.toml",
            ],
            "missing.toml",
        ),
    ];
    std::fs::create_dir_all(dir.join("empty")).unwrap();
    for (args, needle) in cases {
        let o = copper_in(dir, args);
        let t = text(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}:\n{t}");
        assert!(t.contains(needle), "{args:?}: expected `{needle}` in:\n{t}");
        assert!(!t.contains("panicked"), "{args:?}:\n{t}");
        assert_eq!(read(&dir.join("addSub0.cu")), original, "{args:?} wrote");
    }
    // A bad configuration file names itself and the problem.
    std::fs::write(dir.join("copper.toml"), "degree = \"two\"\n").unwrap();
    let o = copper_in(dir, &["optimize", "addSub0.cu"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("copper.toml"), "{}", text(&o));
}

#[test]
fn an_analysis_over_budget_is_reported() {
    let ws = workspace(&["syn_brdis.cu"]);
    let dir = ws.path();
    let o = copper_in(dir, &["optimize", "syn_brdis.cu", "--budget", "0.000001"]);
    let t = text(&o);
    assert!(t.contains("wall-clock limit"), "{t}");
    assert!(t.contains("results may differ on a faster machine"), "{t}");
    assert!(!t.contains("panicked"), "{t}");
    assert_eq!(
        read(&dir.join("syn_brdis.cu")),
        read(&testdata("syn_brdis.cu"))
    );
}

/// The original is simulated only when a candidate beats its bound: a
/// kernel whose candidates all lose (or that has none) is never run, and
/// says so; one that improves was checked on its launches.
#[test]
fn the_original_is_simulated_only_when_a_candidate_needs_a_check() {
    let ws = workspace(&["addSub0.cu"]);
    let dir = ws.path();
    // Nothing to rewrite, and no array read that the read-only data path
    // suggestion (which needs a check) would take.
    std::fs::write(
        dir.join("fill.cu"),
        "__global__ void fill(float *a, int n) {\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) {\n        a[i] = 1.0f;\n    }\n}\n",
    )
    .unwrap();
    let o = copper_in(dir, &["optimize", "fill.cu", "--format", "json"]);
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    for k in doc["kernels"].as_array().unwrap() {
        assert_eq!(k["status"], "unchanged", "{k}");
        assert!(k["checked_launches"].is_null(), "{k}");
        assert!(k["check_error"].is_null(), "{k}");
    }
    let o = copper_in(dir, &["optimize", "fill.cu"]);
    assert!(
        text(&o).contains("no candidate beat the original's bound, so none was simulated"),
        "{}",
        text(&o)
    );
    let o = copper_in(dir, &["optimize", "addSub0.cu", "--format", "json"]);
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let k = &doc["kernels"][0];
    assert_eq!(k["status"], "improved", "{k}");
    assert!(k["checked_launches"].as_u64().unwrap() >= 3, "{k}");
}

/// A rewrite that promises two pointers do not overlap is also run, with
/// the original, with both passed one array, and its description says
/// what that showed: here hoisting `a[i]` out of a loop that adds it to
/// `c[i]` gives other results when `c` is `a`.
#[test]
fn what_a_no_overlap_promise_is_worth_is_simulated_and_said() {
    let ws = workspace(&[]);
    let dir = ws.path();
    std::fs::write(
        dir.join("grow.cu"),
        "__global__ void grow(float *a, float *c, int n) {\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    for (int j = 0; j < n; j++) {\n        c[i] += a[i];\n    }\n}\n",
    )
    .unwrap();
    let o = copper_in(
        dir,
        &["optimize", "grow.cu", "--transform", "load-hoisting"],
    );
    let t = text(&o);
    assert!(t.contains("declares `a` and `c` `__restrict__`"), "{t}");
    assert!(
        t.contains("passed one array for `a` and `c`, the rewrite's results differ from the original's on 7 of 7 test launches"),
        "{t}"
    );
}

/// A kernel whose candidates cannot be checked (no launch of the original
/// runs cleanly: here every launch reads past `a`'s end) is `unchecked`,
/// never `unchanged`, in the text, the summary, JSON, GitHub and SARIF.
#[test]
fn kernels_whose_candidates_cannot_be_checked_are_unchecked() {
    let ws = workspace(&[]);
    let dir = ws.path();
    // The loop-invariant `a[n + 100000000]` is a hoisting candidate; it
    // reads out of bounds on every synthesized launch (arrays grow to at
    // most 2^22 elements).
    std::fs::write(
        dir.join("oob.cu"),
        "__global__ void k(float *a, float *b, int n) {\n    for (int j = 0; j < n; j++) {\n        b[threadIdx.x] += a[n + 100000000];\n    }\n}\n\n__global__ void ok(float *a, int n) {\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) {\n        a[i] = 0;\n    }\n}\n",
    )
    .unwrap();
    let o = copper_in(dir, &["optimize", "oob.cu", "--explain"]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    assert!(
        t.contains("kernel k: unchecked: its candidates could not be checked"),
        "{t}"
    );
    assert!(t.contains("dropped (could not be checked)"), "{t}");
    assert!(t.contains("copper params oob.cu > oob.toml"), "{t}");
    assert!(t.contains("0 improved, 1 unchecked, 0 errors"), "{t}");
    let o = copper_in(dir, &["optimize", "oob.cu", "--format", "json"]);
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let status: Vec<&str> = doc["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["status"].as_str().unwrap())
        .collect();
    assert_eq!(status, vec!["unchecked", "unchanged"]);
    let o = copper_in(dir, &["optimize", "oob.cu", "--format", "github"]);
    assert!(
        text(&o).contains("::warning file=oob.cu,line=1,col=1"),
        "{}",
        text(&o)
    );
    let o = copper_in(dir, &["optimize", "oob.cu", "--format", "sarif"]);
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let results = doc["runs"][0]["results"].as_array().unwrap();
    assert_eq!(results.len(), 1);
    assert_eq!(results[0]["ruleId"], "copper/unchecked");
}

/// A suggestion is an edit of the user's text: on a file with tabs, CRLF
/// line endings, Allman braces and comments, padding the shared tile
/// changes one line, keeping its tab, its comment and its line ending.
#[test]
fn the_diff_changes_only_what_the_rewrite_changes() {
    let ws = workspace(&["student_transpose.cu"]);
    let dir = ws.path();
    let o = copper_in(dir, &["optimize", "student_transpose.cu", "--diff"]);
    let diff = String::from_utf8_lossy(&o.stdout).to_string();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let removed: Vec<&str> = diff
        .lines()
        .filter(|l| l.starts_with('-') && !l.starts_with("---"))
        .collect();
    let added: Vec<&str> = diff
        .lines()
        .filter(|l| l.starts_with('+') && !l.starts_with("+++"))
        .collect();
    assert_eq!(
        removed,
        vec!["-\t__shared__ float tile[TILE][TILE];   // the tile"],
        "{diff}"
    );
    assert_eq!(
        added,
        vec!["+\t__shared__ float tile[TILE][TILE + 1];   // the tile"],
        "{diff}"
    );
    let o = copper_in(dir, &["optimize", "student_transpose.cu", "--write"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let before = read(&testdata("student_transpose.cu"));
    let after = read(&dir.join("student_transpose.cu"));
    assert_eq!(
        after,
        before.replace("tile[TILE][TILE];", "tile[TILE][TILE + 1];"),
        "everything else is byte for byte the same"
    );
}

/// Runs `copper optimize PATHS --diff` in `cwd`; the patch (one header
/// per file) must pass `git apply --check` and `patch -p1 --dry-run` from
/// `from`. Returns the patch and stderr.
fn patch_applies_from(cwd: &Path, paths: &[&str], from: &Path) -> (String, String) {
    let mut args = vec!["optimize", "--diff"];
    args.extend(paths);
    let o = copper_in(cwd, &args);
    let patch = String::from_utf8_lossy(&o.stdout).to_string();
    let stderr = String::from_utf8_lossy(&o.stderr).to_string();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert_eq!(
        patch.matches("\n--- a/").count() + usize::from(patch.starts_with("--- a/")),
        paths.len(),
        "{patch}"
    );
    assert!(!patch.contains("a//") && !patch.contains("/../"), "{patch}");
    let file = tempfile::Builder::new().suffix(".diff").tempfile().unwrap();
    std::fs::write(file.path(), &patch).unwrap();
    let git = Command::new("git")
        .args(["apply", "--check"])
        .arg(file.path())
        .current_dir(from)
        .output()
        .unwrap();
    assert!(git.status.success(), "{patch}\n{}", text(&git));
    let patch_tool = Command::new("patch")
        .args(["-p1", "--dry-run", "-i"])
        .arg(file.path())
        .current_dir(from)
        .output()
        .unwrap();
    assert!(
        patch_tool.status.success(),
        "{patch}\n{}",
        text(&patch_tool)
    );
    (patch, stderr)
}

/// A batch's `--diff` is one patch that applies from one place: the current
/// directory when every file is inside it (given relative or absolute),
/// else the one git repository holding them all (files given as `../x.cu`
/// from a subdirectory, or absolute), else the directory holding them all
/// (two repositories, or a repository and a file outside it), with a note
/// saying where. Checked with `git apply --check` and `patch -p1
/// --dry-run` in temporary git repositories.
#[test]
fn a_batch_patch_applies_from_one_root() {
    let scratch = Scratch::new();
    let top = scratch.path();
    for (dir, name) in [("one/sub", "a"), ("one", "b"), ("two", "c"), ("loose", "d")] {
        let dir = top.join(dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::copy(testdata("addSub0.cu"), dir.join(format!("{name}.cu"))).unwrap();
        std::fs::copy(testdata("addSub0.toml"), dir.join(format!("{name}.toml"))).unwrap();
    }
    for repo in ["one", "two"] {
        let init = Command::new("git")
            .args(["init", "-q", "."])
            .current_dir(top.join(repo))
            .output()
            .unwrap();
        assert!(init.status.success(), "{}", text(&init));
    }
    let top = top.canonicalize().unwrap();
    let (one, sub) = (top.join("one"), top.join("one/sub"));
    let abs_b = one.join("b.cu");
    let abs_d = top.join("loose/d.cu");
    let abs_b = abs_b.to_str().unwrap();
    // Inside the current directory, relative and absolute: no note.
    let (patch, err) = patch_applies_from(&one, &["sub/a.cu", abs_b], &one);
    assert!(
        patch.contains("--- a/sub/a.cu\n") && patch.contains("--- a/b.cu\n"),
        "{patch}"
    );
    assert!(!err.contains("note: "), "{err}");
    // A repository's subdirectory: `git apply` there takes names relative
    // to it.
    let (patch, _) = patch_applies_from(&sub, &["a.cu"], &sub);
    assert!(patch.starts_with("--- a/a.cu\n"), "{patch}");
    // `../` and absolute paths out of a subdirectory: the repository's root.
    for other in ["../b.cu", abs_b] {
        let (patch, err) = patch_applies_from(&sub, &["a.cu", other], &one);
        assert!(
            patch.contains("--- a/sub/a.cu\n") && patch.contains("--- a/b.cu\n"),
            "{patch}"
        );
        assert!(
            err.contains(&format!("relative to {}", one.display())),
            "{err}"
        );
    }
    // Two repositories; a repository and a file outside it: the directory
    // holding them all.
    let (patch, err) = patch_applies_from(&one, &["b.cu", "../two/c.cu"], &top);
    assert!(
        patch.contains("--- a/one/b.cu\n") && patch.contains("--- a/two/c.cu\n"),
        "{patch}"
    );
    assert!(
        err.contains(&format!("`patch -p1 -d {}`", top.display())),
        "{err}"
    );
    let (_, err) = patch_applies_from(&top.join("two"), &["c.cu", abs_d.to_str().unwrap()], &top);
    assert!(
        err.contains(&format!("relative to {}", top.display())),
        "{err}"
    );
    // `--quiet` keeps the note: the patch cannot be applied without it.
    let o = copper_in(&sub, &["--quiet", "optimize", "--diff", "a.cu", "../b.cu"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(&format!(
            "note: paths in this patch are relative to {}",
            one.display()
        )),
        "{err}"
    );
}

/// A file with bytes that are not UTF-8 (Latin-1 in a comment) is read and
/// improved, but `--write` leaves it alone and says why: writing the text
/// back would turn those bytes into U+FFFD.
#[test]
fn write_never_reencodes_bytes_that_are_not_utf8() {
    let ws = workspace(&["addSub0.cu"]);
    let dir = ws.path();
    let path = dir.join("addSub0.cu");
    let mut bytes = b"// caf\xe9\n".to_vec();
    bytes.extend(std::fs::read(&path).unwrap());
    std::fs::write(&path, &bytes).unwrap();
    let o = copper_in(dir, &["optimize", "addSub0.cu", "--write"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains("not rewritten: it holds bytes that are not UTF-8"),
        "{}",
        text(&o)
    );
    assert_eq!(std::fs::read(&path).unwrap(), bytes);
}

/// Bad input for edits: a rewrite of code a macro produces is refused with
/// the reason (never the expansion printed over the macro's use), and a
/// kernel with an `#include` inside is not rewritten; nothing is written.
#[test]
fn code_from_a_macro_or_an_include_is_not_edited() {
    let ws = workspace(&["student_transpose.cu"]);
    let dir = ws.path();
    let path = dir.join("student_transpose.cu");
    let text_in = read(&path)
        .replace(
            "#define TILE 16",
            "#define TILE 16\r\n#define TILE_ARRAY(name) float name[TILE][TILE]",
        )
        .replace(
            "__shared__ float tile[TILE][TILE];",
            "__shared__ TILE_ARRAY(tile);",
        );
    std::fs::write(&path, &text_in).unwrap();
    let o = copper_in(
        dir,
        &["optimize", "student_transpose.cu", "--explain", "--write"],
    );
    let out = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(
        out.contains("the rewrite changes code that macro `TILE_ARRAY` produces (line 8)"),
        "{out}"
    );
    assert_eq!(read(&path), text_in);

    let ws = workspace(&["addSub0.cu"]);
    let dir = ws.path();
    let path = dir.join("addSub0.cu");
    let body = "            B[j * w + i] += A[i];\n";
    let text_in = read(&path).replace(body, "#include \"even_row.inc\"\n");
    std::fs::write(dir.join("even_row.inc"), body).unwrap();
    std::fs::write(&path, &text_in).unwrap();
    // An `#include` inside the kernel: its statements are not read, so
    // the kernel is refused (an error naming the line), never analyzed
    // without them, and the file is left as it is.
    let o = copper_in(dir, &["optimize", "addSub0.cu", "--write"]);
    let out = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out}");
    assert!(
        out.contains(
            "addSub0.cu:15:1: error[unsupported]: `#include` inside a function is not supported"
        ),
        "{out}"
    );
    assert!(out.contains(": 0 improved, 0 unchecked, 1 error"), "{out}");
    assert_eq!(read(&path), text_in);
    let o = copper_in(dir, &["optimize", "addSub0.cu", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let k = &v["kernels"][0];
    assert_eq!(k["status"], "error", "{k}");
    assert!(
        k["error"]
            .as_str()
            .is_some_and(|w| w.starts_with("15:1: `#include` inside a function")),
        "{k}"
    );
}

/// Two transforms rewriting the same code in successive rounds (branch
/// distribution moves a loop nest out of an `if`, then tiling rewrites
/// the moved loop): the final patch composes both on the original text,
/// applies with `git apply --check`, keeps the comment of the moved loop
/// once, and `--write` gives the text the patch describes.
#[test]
fn edits_of_two_transforms_on_the_same_code_compose() {
    let ws = workspace(&["syn_brdis.cu"]);
    let dir = ws.path();
    let path = dir.join("syn_brdis.cu");
    let loop_head = "        for (int i = 0; i < N; i++) {\n";
    let original = read(&path).replacen(
        loop_head,
        &format!("        // walk the rows\n{loop_head}"),
        1,
    );
    std::fs::write(&path, &original).unwrap();
    // By degree: the tiles win only at sizes larger than the parameter
    // file's.
    let o = copper_in(dir, &["optimize", "syn_brdis.cu", "--asymptotic"]);
    let out = text(&o);
    assert!(
        out.contains("branch distribution") && out.contains("global to shared (tiled)"),
        "{out}"
    );
    let o = copper_in(dir, &["optimize", "syn_brdis.cu", "--diff", "--asymptotic"]);
    let patch = String::from_utf8_lossy(&o.stdout).to_string();
    std::fs::write(dir.join("fix.patch"), &patch).unwrap();
    let applied = Command::new("git")
        .args(["apply", "--check", "fix.patch"])
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(applied.status.success(), "{patch}\n{}", text(&applied));
    copper_in(
        dir,
        &["optimize", "syn_brdis.cu", "--write", "--asymptotic"],
    );
    let written = read(&path);
    assert_eq!(written.matches("// walk the rows").count(), 1, "{written}");
    assert!(
        written.contains(
            "    // walk the rows\n    for (int i = 0; i < N; i++) {\n        for (int j_tile = 0;"
        ),
        "{written}"
    );
    let applied = Command::new("git")
        .args(["apply", "fix.patch"])
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(!applied.status.success(), "already applied by --write");
    std::fs::write(&path, &original).unwrap();
    let applied = Command::new("git")
        .args(["apply", "fix.patch"])
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(applied.status.success(), "{}", text(&applied));
    assert_eq!(read(&path), written);
}

#[test]
fn a_gpu_sized_parameter_file_is_checked_on_a_launch_scaled_down_and_says_so() {
    // A 4096×4096 image, its lengths written as numbers: the checks run
    // at 128×128 (lengths following `width * height`) and the output
    // names every change.
    let gpu = std::fs::read_to_string(common::root().join("bench/gpu/brighten_rows.toml"))
        .unwrap()
        .replace("len = \"width * height\"", "len = 16777216");
    let ws = workspace(&["brighten_rows.cu"]);
    let dir = ws.path();
    let params = dir.join("gpu.toml");
    std::fs::write(&params, gpu).unwrap();
    let o = copper_in(
        dir,
        &["optimize", "brighten_rows.cu", "--params", "gpu.toml"],
    );
    let out = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains("kernel brighten: improved"), "{out}");
    assert!(
        out.contains("test launches: tested on the parameter file's launch scaled down (grid 256×256 → 8×8, `height` 4096 → 128, `width` 4096 → 128, `img` 16777216 → 16384 elements, `out` 16777216 → 16384 elements)"),
        "{out}"
    );
}

/// A warp tail guarded by a `#define`d `WARP`, in a kernel nothing
/// launches, is rewritten under the guard of the assumed block: the fast
/// path prints its new guard as a literal, and the original's code on the
/// other side keeps `tid < WARP` as written (the edit once read the fast
/// path's literal, at the place of `WARP` in the original text, as a
/// change to the macro's expansion and refused the candidate).
#[test]
fn a_warp_tail_under_a_macro_is_rewritten_under_the_block_guard() {
    let ws = workspace(&["warp_macro_tail.cu"]);
    let dir = ws.path();
    let o = copper_in(dir, &["optimize", "--write", "warp_macro_tail.cu"]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(t.contains("warp-shuffle reduction"), "{t}");
    assert!(t.contains("block guard"), "{t}");
    let written = read(&dir.join("warp_macro_tail.cu"));
    let fast = written.find("if (blockDim.x == 256").unwrap_or(usize::MAX);
    let (shuffle, other) = (written.find("__shfl_down_sync"), written.find("} else {"));
    assert!(fast < shuffle.unwrap_or(0), "{written}");
    assert!(shuffle < other, "{written}");
    let tail = &written[other.unwrap_or(0)..];
    assert!(tail.contains("\tif (tid < WARP) {\n"), "{written}");
    assert!(tail.contains("s > WARP; s >>= 1"), "{written}");
    // The written file is what copper checked: nothing left to improve
    // for the assumed block.
    let o = copper_in(dir, &["optimize", "warp_macro_tail.cu"]);
    assert!(text(&o).contains("0 errors"), "{}", text(&o));
}
