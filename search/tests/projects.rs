//! A multi-file project as real code bases lay it out
//! (`testdata/projects/library/`): the kernels in a header reached as
//! `#include <ops/kernels.h>` through `-I`, a block size and an element
//! type set by `-D`, a kernel template launched from a host template.
//! Without `-I` nothing is lost silently; with it, every message about a
//! kernel points into the header that defines it.

mod common;

use std::path::PathBuf;
use std::process::Output;

use common::{copper_in, root, text};

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
            ("include/ops/kernels.h".to_string(), 7),
            ("include/ops/kernels.h".to_string(), 20),
            ("include/ops/kernels.h".to_string(), 13)
        ],
        "{}",
        text(&o)
    );
}
