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
        t.contains("include/ops/kernels.h:7:17: kernel scale(real *x, real a, int n) (from a header)\n    launched at src/main.cu:18: grid (8192, 1, 1) block (128, 1, 1)"),
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
            // The template stays with its includer, which instantiates it;
            // the others are searched in their header, after it.
            ("include/ops/kernels.h".to_string(), 13),
            ("include/ops/kernels.h".to_string(), 7),
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
    let o = copper_in(dir, &["optimize", "--diff", "main.cu"]);
    let diff = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(
        diff.starts_with("--- a/kernels.cuh\n+++ b/kernels.cuh\n"),
        "{diff}"
    );
    assert_eq!(diff.matches("--- a/").count(), 1, "{diff}");
    assert!(
        diff.contains("+\tif (blockDim.x == 256 && blockDim.y == 1 && blockDim.z == 1) {"),
        "{diff}"
    );
    assert!(
        diff.contains("+\t// copper: the fast path is written for blocks of 256×1×1, the block copper assumed (`blockSum` is defined in a header"),
        "{diff}"
    );
    git_apply_check(dir, &o.stdout).unwrap_or_else(|e| panic!("{e}\n{diff}"));
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
