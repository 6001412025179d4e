//! The every-caller promise for kernels defined in the headers of
//! `testdata/projects/`: `copper optimize` searches such a kernel in its
//! header, read as a file of its own, with no launch licensing a block
//! (every file that includes the header may launch it). Each header is
//! searched so here, and every rewrite offered is checked on every block.

use std::path::{Path, PathBuf};

use super::check_files;

/// The headers (`.h`, `.cuh`) below `dir`, sorted.
fn headers(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for path in entries.filter_map(|e| e.ok().map(|e| e.path())) {
        if path.is_dir() {
            out.extend(headers(&path));
        } else if path.extension().is_some_and(|e| e == "h" || e == "cuh") {
            out.push(path);
        }
    }
    out.sort();
    out
}

/// Every header kernel's rewrite is right on every block; the student
/// project's reduction (`projects/reduction/kernels.cuh`) gets one.
#[test]
fn rewrites_of_header_kernels_are_right_for_every_block() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/projects");
    let files = headers(&root);
    assert!(files.iter().any(|f| f.ends_with("reduction/kernels.cuh")));
    let rewrites = check_files(&files, "headers");
    assert!(rewrites >= 1, "no header kernel was rewritten");
}
