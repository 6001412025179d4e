//! A multi-file project as real code bases lay it out
//! (`testdata/projects/library/`): the kernels in a header reached as
//! `#include <ops/kernels.h>` through `-I`, a block size and an element
//! type set by `-D`, a kernel template launched from a host template.
//! Without `-I` nothing is lost silently; with it, every message about a
//! kernel points into the header that defines it.

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use common::{copper_in, root, text, Scratch};

fn project() -> PathBuf {
    root().join("testdata/projects/library")
}

fn copper(args: &[&str]) -> Output {
    copper_in(&project(), args)
}

#[test]
fn without_dash_i_each_launched_kernel_names_the_header_not_found() {
    let o = copper(&["parse", "src/main.cu"]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    for (line, kernel) in [(8, "axpy"), (18, "scale"), (20, "rowsum")] {
        assert!(
            t.contains(&format!("src/main.cu:{line}:")) && t.contains(&format!("`{kernel}` is launched here but not defined in what copper read; `<ops/kernels.h>` (src/main.cu:4) was not found in the -I directories: pass -I DIR")),
            "{kernel}: {t}"
        );
    }
    // A library header copper knows is not blamed.
    assert!(!t.contains("cstdio"), "{t}");
    // lint says the same instead of "0 findings in 0 kernels" alone.
    let o = copper(&["lint", "src/main.cu"]);
    assert!(
        text(&o).contains("warning[undefined-kernel]"),
        "{}",
        text(&o)
    );
}

#[test]
fn with_dash_i_and_dash_d_the_header_kernels_are_read_where_they_are() {
    let o = copper(&["parse", "-I", "include", "src/main.cu"]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    assert!(
        t.contains("include/ops/kernels.h:7:1: kernel scale(real *x, real a, int n) (from a header)\n    launched at src/main.cu:18: grid (8192, 1, 1) block (128, 1, 1)"),
        "{t}"
    );
    assert!(t.contains("kernel axpy<real>("), "{t}");
    assert!(!t.contains("undefined-kernel"), "{t}");
    // -DBLOCK=256 is the block of every launch.
    let o = copper(&["analyze", "-I", "include", "-DBLOCK=256", "src/main.cu"]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    assert_eq!(t.matches("block 256×1×1").count(), 3, "{t}");
    assert!(
        t.contains("include/ops/kernels.h:20:1: kernel rowsum"),
        "{t}"
    );
}

#[test]
fn optimize_places_each_header_kernel_in_its_header() {
    let o = copper(&["optimize", "-I", "include", "src/main.cu"]);
    let t = text(&o);
    assert!(!t.contains("panicked"), "{t}");
    for at in [
        "include/ops/kernels.h:7:1: kernel scale:",
        "include/ops/kernels.h:20:1: kernel rowsum:",
        "include/ops/kernels.h:13:1: kernel axpy<real>:",
    ] {
        assert!(t.contains(at), "{at}: {t}");
    }
    assert!(!t.contains("src/main.cu:4:1: kernel"), "{t}");
    let o = copper(&[
        "optimize",
        "-I",
        "include",
        "src/main.cu",
        "--format",
        "json",
    ]);
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    let places: Vec<(String, u64)> = doc["kernels"]
        .as_array()
        .expect("kernels")
        .iter()
        .map(|k| {
            (
                k["file"].as_str().unwrap_or("").to_string(),
                k["line"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    assert_eq!(
        places,
        [
            // Every kernel, the template instantiated by its includer
            // too, is searched in its header, in the header's order.
            ("include/ops/kernels.h".to_string(), 7),
            ("include/ops/kernels.h".to_string(), 13),
            ("include/ops/kernels.h".to_string(), 20)
        ],
        "{}",
        text(&o)
    );
}

/// A student project whose only kernel is in `kernels.cuh`
/// (`testdata/projects/reduction/`), copied into a scratch folder.
fn reduction_copy() -> Scratch {
    let scratch = Scratch::new();
    let from = root().join("testdata/projects/reduction");
    for name in ["main.cu", "kernels.cuh"] {
        let text = std::fs::read(from.join(name)).expect("the fixture");
        scratch.file(name, &text);
    }
    scratch
}

/// `git apply --check` of `patch` in `dir`: what it says, when it refuses.
fn git_apply_check(dir: &Path, patch: &[u8]) -> Result<(), String> {
    let mut child = Command::new("git")
        .args(["apply", "--check", "-"])
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("git runs");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(patch)
        .expect("the patch is written");
    let o = child.wait_with_output().expect("git ends");
    match o.status.success() {
        true => Ok(()),
        false => Err(text(&o)),
    }
}

#[test]
fn a_header_kernel_is_rewritten_in_the_header_under_a_block_guard() {
    let scratch = reduction_copy();
    let dir = scratch.path();
    let o = copper_in(dir, &["optimize", "main.cu"]);
    let t = text(&o);
    assert!(
        t.contains("kernels.cuh:10:1: kernel blockSum: improved"),
        "{t}"
    );
    assert!(
        t.contains("defined in a header shared by every file that includes it"),
        "{t}"
    );
    // main.cu launches it once, with 256 threads: that licenses nothing
    // in a header, so the rewrite for 256 runs under the block guard.
    guarded_header_diff(
        dir,
        "kernels.cuh",
        "+\t// copper: the fast path is written for blocks of 256×1×1, the block copper assumed (`blockSum` is defined in a header",
    );
    // The header given too (a directory walked): searched once, one diff.
    let o = copper_in(dir, &["optimize", "--diff", "."]);
    let both = String::from_utf8_lossy(&o.stdout).to_string();
    assert_eq!(both.matches("--- a/").count(), 1, "{both}");
    git_apply_check(dir, &o.stdout).unwrap_or_else(|e| panic!("{e}\n{both}"));
    // A block the user names licenses the rewrite for it, and says so.
    let o = copper_in(dir, &["optimize", "main.cu", "--block", "256"]);
    let t = text(&o);
    assert!(
        t.contains("the block named licenses a rewrite for it"),
        "{t}"
    );
    assert!(!t.contains("block guard"), "{t}");
}

#[test]
fn write_changes_the_header_and_nothing_else() {
    let scratch = reduction_copy();
    let dir = scratch.path();
    let main = std::fs::read(dir.join("main.cu")).expect("main.cu");
    let header = std::fs::read(dir.join("kernels.cuh")).expect("kernels.cuh");
    let o = copper_in(dir, &["optimize", "--write", "main.cu"]);
    let t = text(&o);
    assert!(t.contains("updated kernels.cuh"), "{t}");
    assert_eq!(std::fs::read(dir.join("main.cu")).expect("main.cu"), main);
    let written = std::fs::read_to_string(dir.join("kernels.cuh")).expect("kernels.cuh");
    assert_ne!(written.as_bytes(), &header[..]);
    assert!(written.contains("__shfl_down_sync"), "{written}");
    let mut names: Vec<_> = std::fs::read_dir(dir)
        .expect("the folder")
        .map(|e| e.expect("an entry").file_name())
        .collect();
    names.sort();
    assert_eq!(names, ["kernels.cuh", "main.cu"]);
    // Written, the header is what a second run finds nothing left in.
    let o = copper_in(dir, &["optimize", "--diff", "main.cu"]);
    assert!(o.stdout.is_empty(), "{}", text(&o));
}

#[cfg(unix)]
#[test]
fn a_header_through_a_link_or_outside_the_tree_is_not_rewritten() {
    let scratch = Scratch::new();
    let from = root().join("testdata/projects/reduction");
    let project = scratch.path().join("project");
    let lib = scratch.path().join("lib");
    for d in [&project, &lib] {
        std::fs::create_dir(d).expect("a folder");
    }
    let header = std::fs::read(from.join("kernels.cuh")).expect("the fixture");
    let main = std::fs::read(from.join("main.cu")).expect("the fixture");
    std::fs::write(lib.join("kernels.cuh"), &header).expect("the header");
    std::fs::write(project.join("main.cu"), &main).expect("main.cu");
    // Outside the tree, through -I.
    let o = copper_in(
        &project,
        &["optimize", "--write", "-I", "../lib", "main.cu"],
    );
    let t = text(&o);
    assert!(
        t.contains(
            "is outside the current directory's tree: copper rewrites only headers of the project"
        ),
        "{t}"
    );
    assert_eq!(
        std::fs::read(lib.join("kernels.cuh")).expect("header"),
        header
    );
    // In the tree, but a link to the one outside.
    std::os::unix::fs::symlink("../lib/kernels.cuh", project.join("kernels.cuh")).expect("a link");
    let o = copper_in(&project, &["optimize", "--write", "main.cu"]);
    let t = text(&o);
    assert!(
        t.contains("is a symbolic link (copper does not write through links)"),
        "{t}"
    );
    assert!(!t.contains("updated"), "{t}");
    assert_eq!(
        std::fs::read(lib.join("kernels.cuh")).expect("header"),
        header
    );
    assert_eq!(
        std::fs::read(project.join("main.cu")).expect("main.cu"),
        main
    );
    let o = copper_in(&project, &["optimize", "--diff", "main.cu"]);
    assert!(o.stdout.is_empty(), "{}", text(&o));
}

/// The `kernels` entry of `copper`'s JSON output for `kernel`.
fn json_kernel(o: &Output, kernel: &str) -> serde_json::Value {
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    doc["kernels"]
        .as_array()
        .expect("kernels")
        .iter()
        .find(|k| k["kernel"] == kernel)
        .cloned()
        .unwrap_or_else(|| panic!("no `{kernel}` in {}", text(o)))
}

#[test]
fn a_header_kernel_is_bounded_and_ranked_at_its_includers_launch() {
    let o = copper(&["optimize", "-I", "include", "src/main.cu"]);
    let t = text(&o);
    for said in [
        // The grid and block of main.cu's launch, the block still only
        // assumed (the header is shared) and the grid only reported.
        "include/ops/kernels.h:7:1: kernel scale: no improvement found; block 128×1×1, grid 8192×1×1 from the launch at line 18 of src/main.cu;",
        "so the block is only assumed (and the grid only reported: the bounds hold for any grid)",
        // The test launch main.cu's host code gives, and its sizes.
        "tested on the launch at line 18 of src/main.cu (grid 3×1×1, block 128×1×1) and variants of it; `n` = 1048576 cut to 321 for testing",
        "ranked at n=1048576: the launch at line 18 of src/main.cu",
        "include/ops/kernels.h:20:1: kernel rowsum: no improvement found; block 128×1×1, grid 8×1×1 from the launch at line 20 of src/main.cu;",
        "ranked at cols=512, rows=1024: the launch at line 20 of src/main.cu",
    ] {
        assert!(t.contains(said), "{said}\n{t}");
    }
    let o = copper(&[
        "optimize",
        "-I",
        "include",
        "src/main.cu",
        "--format",
        "json",
    ]);
    let rowsum = json_kernel(&o, "rowsum");
    assert_eq!(rowsum["file"], "include/ops/kernels.h");
    assert_eq!(rowsum["grid"], serde_json::json!([8, 1, 1]));
    assert_eq!(rowsum["block_assumed"], true);
    assert_eq!(rowsum["sizes"]["values"]["cols"], 512.0);
    // 48 + 176·max(0, cols) at cols = 512.
    assert_eq!(rowsum["bounds"][0]["before_value"], 90160.0);
    let scale = json_kernel(&o, "scale");
    assert_eq!(scale["grid"], serde_json::json!([8192, 1, 1]));
    assert_eq!(scale["sizes"]["values"]["n"], 1048576.0);
    // The report simulates the includer's test launch and says its sizes.
    let scratch = Scratch::new();
    let report = scratch.path().join("report.csv");
    let report_arg = report.to_string_lossy().to_string();
    let o = copper(&[
        "optimize",
        "-I",
        "include",
        "src/main.cu",
        "--report",
        &report_arg,
    ]);
    let csv = std::fs::read_to_string(&report).unwrap_or_else(|e| panic!("{e}: {}", text(&o)));
    assert!(
        csv.contains("include/ops/kernels.h,scale,7,unchanged,wsteps,55,55,55.0,55.0,1.0,54.0,54.0,1.0,n=1048576 (the launch at line 18 of src/main.cu)"),
        "{csv}"
    );
}

#[test]
fn the_reduction_header_kernel_is_ranked_at_main_cu_sizes_and_stays_guarded() {
    let scratch = reduction_copy();
    let dir = scratch.path();
    optimize_says(
        dir,
        &[
            "kernels.cuh:10:1: kernel blockSum: improved; block 256×1×1, grid 16×1×1 from the launch at line 18 of main.cu;",
            "tested on the launch at line 18 of main.cu (grid 16×1×1, block 256×1×1) and variants of it",
            "ranked at n=4096: the launch at line 18 of main.cu",
            "block guard: the rewritten code runs only on blocks of 256×1×1, the block copper assumed",
            // The header searched for main.cu's kernels is no file given
            // (was "1 kernel in 2 files").
            "\n1 kernel in 1 file (+1 header): 1 improved,",
        ],
    );
    let o = copper_in(dir, &["optimize", "main.cu", "--format", "json"]);
    let k = json_kernel(&o, "blockSum");
    assert_eq!(k["grid"], serde_json::json!([16, 1, 1]));
    assert_eq!(k["sizes"]["values"]["n"], 4096.0);
    let o = copper_in(dir, &["optimize", "--diff", "main.cu"]);
    let diff = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(
        diff.contains("+\tif (blockDim.x == 256 && blockDim.y == 1 && blockDim.z == 1) {"),
        "{diff}"
    );
}

/// A parameter file for `main.cu` of the reduction project: `blockSum` on
/// `grid` blocks of `block` threads over `n` elements.
fn reduction_params(block: u64, grid: u64) -> String {
    let n = block * grid;
    format!(
        "[kernel.blockSum]\ngrid = [{grid}, 1, 1]\nblock = [{block}, 1, 1]\n\n[kernel.blockSum.args]\nn = {n}\n\n[kernel.blockSum.arrays.in]\nlen = {n}\ninit = \"random\"\nseed = 3\nmin = 0\nmax = 100\n\n[kernel.blockSum.arrays.out]\nlen = {grid}\ninit = \"zero\"\n"
    )
}

#[test]
fn a_parameter_file_licenses_a_header_kernels_block_for_every_includer() {
    let scratch = reduction_copy();
    let dir = scratch.path();
    scratch.file("main.toml", reduction_params(256, 4).as_bytes());
    let t = optimize_says(
        dir,
        &[
            "kernel blockSum: improved; block 256×1×1, grid 4×1×1 (from the parameter file;",
            "the block named licenses a rewrite for it, so every includer must launch `blockSum` with that block",
            "ranked at n=1024: the parameter file's launch",
        ],
    );
    assert!(!t.contains("block guard"), "{t}");
    let o = copper_in(dir, &["optimize", "--diff", "main.cu"]);
    let diff = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(diff.contains("+\t\twarp_sum += __shfl_down_sync"), "{diff}");
    assert!(!diff.contains("blockDim.x == 256"), "{diff}");
    git_apply_check(dir, &o.stdout).unwrap_or_else(|e| panic!("{e}\n{diff}"));
    // The parameter file's block is the one licensed, not the one main.cu
    // launches with.
    scratch.file("main.toml", reduction_params(128, 8).as_bytes());
    let t = text(&copper_in(dir, &["optimize", "main.cu"]));
    assert!(
        t.contains(
            "kernel blockSum: improved; block 128×1×1, grid 8×1×1 (from the parameter file;"
        ),
        "{t}"
    );
    assert!(!t.contains("blocks of 256×1×1"), "{t}");
}

#[test]
fn files_that_launch_a_shared_header_kernel_differently_are_named() {
    let scratch = reduction_copy();
    let dir = scratch.path();
    let main = std::fs::read_to_string(dir.join("main.cu")).expect("main.cu");
    // Another file like main.cu: alike, then with another block.
    scratch.file("other.cu", main.as_bytes());
    let t = text(&copper_in(dir, &["optimize", "other.cu", "main.cu"]));
    assert!(
        t.contains("from the launch at line 18 of main.cu;")
            && t.contains("; other.cu launches `blockSum` alike"),
        "{t}"
    );
    // Two files given, their header searched once.
    assert!(t.contains(" kernels in 2 files (+1 header): "), "{t}");
    let other = main.replace("dim3 block(BLOCK_SIZE);", "dim3 block(128);");
    assert_ne!(other, main);
    scratch.file("other.cu", other.as_bytes());
    // Files are read in path order: main.cu's launch is used, whatever
    // the order given, and other.cu is named.
    for files in [["main.cu", "other.cu"], ["other.cu", "main.cu"]] {
        let o = copper_in(dir, &["optimize", files[0], files[1]]);
        let t = text(&o);
        assert!(
            t.contains("the files given that include the header launch `blockSum` differently (other.cu launches it otherwise than main.cu): the launches of main.cu, the first of them in path order, are used for the test launch and sizes"),
            "{t}"
        );
        assert!(
            t.contains("kernel blockSum: not rewritten; block 128×1×1")
                && t.contains("which is searched once, with main.cu"),
            "{t}"
        );
    }
    // The rewrite still runs only under the block guard.
    let o = copper_in(dir, &["optimize", "--diff", "main.cu", "other.cu"]);
    let diff = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(
        diff.contains("+\tif (blockDim.x == 256 && blockDim.y == 1 && blockDim.z == 1) {"),
        "{diff}"
    );
}

#[test]
fn a_header_template_is_rewritten_in_the_header_for_each_instantiation() {
    let scratch = Scratch::new();
    let from = root().join("testdata/projects/templated");
    for name in ["main.cu", "reduce.cuh"] {
        let text = std::fs::read(from.join(name)).expect("the fixture");
        scratch.file(name, &text);
    }
    let dir = scratch.path();
    optimize_says(
        dir,
        &[
            "reduce.cuh:9:1: kernel blockSumT<int>: improved; block 256×1×1, grid 16×1×1 from the launch at line 15 of main.cu;",
            "the template's rewrite checked for every instantiation: `blockSumT<int>` (7 launches), `blockSumT<unsigned int>` (7 launches)",
            "reduce.cuh:9:1: kernel blockSumT<unsigned int>: improved through `blockSumT<int>`",
            "ranked at n=4096: the launch at line 15 of main.cu",
        ],
    );
    // Every includer may launch it with any block: the rewrite runs under
    // the block guard, in the header, and main.cu is left alone.
    guarded_header_diff(
        dir,
        "reduce.cuh",
        "the block copper assumed for each instantiation of the template (`blockSumT` is defined in a header, which every file that includes it may launch it from, with any block)",
    );
}

/// The text of `copper optimize main.cu` in `dir`, checked to say each
/// of `said`.
fn optimize_says(dir: &Path, said: &[&str]) -> String {
    let t = text(&copper_in(dir, &["optimize", "main.cu"]));
    for s in said {
        assert!(t.contains(s), "{s}\n{t}");
    }
    t
}

/// Checks the `--diff` of `optimize main.cu` in `dir`: one diff, of
/// `header`, whose rewrite runs only on blocks of 256×1×1 under a comment
/// saying `why`, and which `git apply` accepts.
fn guarded_header_diff(dir: &Path, header: &str, why: &str) {
    let o = copper_in(dir, &["optimize", "--diff", "main.cu"]);
    let diff = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(
        diff.starts_with(&format!("--- a/{header}\n+++ b/{header}\n")),
        "{diff}"
    );
    assert_eq!(diff.matches("--- a/").count(), 1, "{diff}");
    assert!(
        diff.contains("+\tif (blockDim.x == 256 && blockDim.y == 1 && blockDim.z == 1) {"),
        "{diff}"
    );
    assert!(diff.contains(why), "{diff}");
    git_apply_check(dir, &o.stdout).unwrap_or_else(|e| panic!("{e}\n{diff}"));
}
