//! The every-caller promise for kernels defined in the headers of
//! `testdata/projects/`: `copper optimize` searches such a kernel in its
//! header, read as a file of its own, with no launch licensing a block
//! (every file that includes the header may launch it). Each header is
//! searched so here, and every rewrite offered is checked on every block;
//! so is a template defined in a header, through each instantiation its
//! includer makes. Searched at its includer's launch (its test launch, the
//! sizes it is ranked at), a header's kernel gets one of the rewrites
//! checked.

use std::path::{Path, PathBuf};

use copper::cuda::include::Preprocess;
use copper::cuda::parse::{parse_path_with, parse_source, ParsedFile};
use copper::source::SourceFile;
use copper_search::driver::optimize::{optimize_files, Caller, Request};
use copper_search::launch::Params;
use copper_search::pipeline::Cache;
use copper_search::rank::{Ranking, DEFAULT_EPSILON};

use super::{check_file, check_files, check_named, report, settings, Found, SHAPES};

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

fn projects() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/projects")
}

/// Every header kernel's rewrite is right on every block; the student
/// project's reduction (`projects/reduction/kernels.cuh`) gets one.
#[test]
fn rewrites_of_header_kernels_are_right_for_every_block() {
    let files = headers(&projects());
    assert!(files.iter().any(|f| f.ends_with("reduction/kernels.cuh")));
    let rewrites = check_files(&files, "headers");
    assert!(rewrites >= 1, "no header kernel was rewritten");
}

/// A caller of the driver that writes nothing.
struct Nothing;

impl Caller for Nothing {
    fn searched(&self, _: usize, _: usize, _: &Path, _: &str) {}

    fn finished(&self, _: &Path, _: &ParsedFile, _: &str) -> bool {
        false
    }
}

/// `copper optimize main.cu` of the student project searches its header's
/// kernel at main.cu's launch and ranks at its sizes: the rewrite it
/// offers is one the every-block check proves right (the launch steers
/// the search, it does not decide what the code assumes).
#[test]
fn a_header_kernel_searched_at_its_includers_launch_gets_a_checked_rewrite() {
    let dir = projects().join("reduction");
    let found = check_file(&dir.join("kernels.cuh"), &settings(), &Cache::default());
    report(&found, "the reduction header");
    driver_rewrite_is_checked(&dir, "kernels.cuh", &found, [16, 1, 1]);
}

/// A template defined in a header (`projects/templated/reduce.cuh`),
/// instantiated by its includer: searched in the header alone through
/// each instantiation, every rewrite is right on every block for it; and
/// the one `copper optimize main.cu` offers is one of them.
#[test]
fn rewrites_of_a_header_template_are_right_for_every_block() {
    let dir = projects().join("templated");
    let instances = ["blockSumT<int>", "blockSumT<unsigned int>"];
    let preprocess = Preprocess {
        instantiate: instances.iter().map(|n| n.to_string()).collect(),
        ..Preprocess::default()
    };
    let file = parse_path_with(&dir.join("reduce.cuh"), &preprocess).expect("the header reads");
    let names: Vec<(String, Vec<[u64; 3]>)> = instances
        .iter()
        .map(|n| (n.to_string(), SHAPES.to_vec()))
        .collect();
    let found = check_named(&file, &settings(), &Cache::default(), &names, &|_| {
        Vec::new()
    });
    assert_eq!(report(&found, "the header template"), 2);
    driver_rewrite_is_checked(&dir, "reduce.cuh", &found, [16, 1, 1]);
}

/// Searches `dir`'s main.cu as `copper optimize` does (ranked at the
/// sizes in use) and checks that the rewrite of the first kernel of its
/// `header` is at main.cu's launch (its `grid` reported, the block only
/// assumed), still under the block guard, and one of those `found` right
/// on every block.
fn driver_rewrite_is_checked(dir: &Path, header: &str, found: &[Found], grid: [u64; 3]) {
    let mut pipeline = settings();
    pipeline.ranking = Ranking::InUse {
        epsilon: DEFAULT_EPSILON,
    };
    let files = [dir.join("main.cu")];
    let request = Request {
        files: &files,
        kernel: None,
        preprocess: &Preprocess::default(),
        params: &Params::new(None),
        block: None,
        grid: None,
        pipeline: &pipeline,
        simulate: false,
    };
    let runs = optimize_files(&request, &Nothing).expect("no --at");
    let run = runs
        .iter()
        .find(|r| r.path.ends_with(header))
        .expect("the header is searched as a file");
    let k = &run.kernels[0];
    assert!(
        k.shape.source.contains("from the launch at line")
            && k.shape.source.contains("main.cu")
            && k.shape.grid.map(|g| g.to_array()) == Some(grid)
            && k.shape.assumed,
        "{:?}",
        k.shape
    );
    let result = k.result.as_ref().expect("searched");
    assert!(result.improved());
    assert!(
        result
            .sizes
            .as_ref()
            .is_some_and(|s| s.values.get("n") == Some(&4096.0)),
        "{:?}",
        result.sizes
    );
    // The driver searches the kernel's excerpt of the header: the kernel's
    // text is what is compared.
    let best = kernel_text(&result.best.file.source.text, &k.name);
    assert!(
        found.iter().any(|f| kernel_text(&f.text, &k.name) == best),
        "the rewrite at main.cu's launch is none of those checked:\n{best}"
    );
    assert!(
        best.contains("if (blockDim.x == 256 && blockDim.y == 1 && blockDim.z == 1)"),
        "{best}"
    );
}

/// The text of the kernel `name` (of its template, for an instantiation)
/// in the file `text`.
fn kernel_text(text: &str, name: &str) -> String {
    let file = parse_source(SourceFile::new("k.cu", text.to_string()));
    let base = name.split('<').next().unwrap_or(name);
    let span = file.item(base).expect("the kernel").span;
    text[span.start..span.end].to_string()
}
