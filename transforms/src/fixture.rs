//! Test fixtures for the transforms, in the style of rust-analyzer's
//! assists: [`check`] (a kernel before, the file after the rewrite) and
//! [`check_not_applicable`] (a kernel the transform leaves alone, and the
//! exact reason). Every candidate is checked against the original by
//! differential simulation first, so a fixture can only show a rewrite
//! that keeps results.
//!
//! The transforms' own `#[cfg(test)]` modules use this module, and the
//! crate's integration tests include the same file (`tests/common`), which
//! is why it names the crate `copper_transforms` rather than `crate`.
#![allow(dead_code)]

use copper::bound::{prepare, Config};
use copper::cuda::parse::parse_source;
use copper::cuda::print;
use copper::cuda::rewrite::edit_functions;
use copper::ir::lower::lower_kernel;
use copper::sim::params::LaunchSpec;
use copper::source::SourceFile;
use copper_transforms::check::{CheckError, Checker};
use copper_transforms::{Context, Proposals, Transform};

/// What `t` proposes for the only kernel of `src`, launched with `block`.
/// Every candidate is checked on launches synthesized from the signature;
/// a candidate that computes something else panics with its text. `Err`
/// when the original itself cannot be lowered or checked (it fails or
/// races on the synthesized launches).
pub fn try_propose(t: &dyn Transform, src: &str, block: [u64; 3]) -> Result<Proposals, CheckError> {
    try_propose_with(t, src, block, false)
}

/// [`try_propose`], with floating-point sums allowed to change their order
/// when `allow_reassociation` (`--allow-reassociation`).
pub fn try_propose_with(
    t: &dyn Transform,
    src: &str,
    block: [u64; 3],
    allow_reassociation: bool,
) -> Result<Proposals, CheckError> {
    try_propose_on(t, src, block, allow_reassociation, None)
}

/// [`try_propose_with`], every candidate checked on the variants of the
/// launch `spec` (a parameter file's) when there is one. The fixtures take
/// the block as a literal and check it here.
pub fn try_propose_on(
    t: &dyn Transform,
    src: &str,
    block: [u64; 3],
    allow_reassociation: bool,
    spec: Option<&LaunchSpec>,
) -> Result<Proposals, CheckError> {
    let block = copper::launch::block(block).expect("a block CUDA allows");
    let file = parse_source(SourceFile::new("t.cu", src));
    let f = file.kernels().next().expect("a kernel").clone();
    let kernel = lower_kernel(&file, &f.name).map_err(|d| CheckError::NotLowered(d.message))?;
    let analysis = prepare(
        &kernel,
        Config {
            block: Some(block),
            ..Config::default()
        },
    );
    let cx = Context {
        host: &file,
        file: &file,
        function: &f,
        kernel: &kernel,
        analysis: &analysis,
        block: Some(block),
        params: spec,
        allow_reassociation,
    };
    let p = t.propose(&cx);
    if p.candidates.is_empty() {
        return Ok(p);
    }
    let checker = Checker::new(&file, &f.name, spec, Some(block), None)?;
    for c in &p.candidates {
        if let Err(why) = checker.check_candidate(c) {
            panic!(
                "{}: candidate `{}` fails its check: {why}\noriginal:\n{src}\ncandidate:\n{}",
                t.name(),
                c.description,
                print::function(&c.function)
            );
        }
    }
    Ok(p)
}

/// The files `t`'s candidates make of `before` on `block` (each written as
/// an edit of the file, as `optimize --write` does), with their
/// descriptions.
pub fn rewrites(t: &dyn Transform, before: &str, block: [u64; 3]) -> Vec<(String, String)> {
    let file = parse_source(SourceFile::new("t.cu", before));
    let p = try_propose(t, before, block).expect("the original can be checked");
    p.candidates
        .iter()
        .map(|c| {
            let text = edit_functions(&file, std::slice::from_ref(&c.function)).expect("an edit");
            (c.description.clone(), text)
        })
        .collect()
}

/// `t` has one candidate for `before` on `block`, and it makes the file
/// `after`; its description is returned for further checks.
pub fn check(t: &dyn Transform, block: [u64; 3], before: &str, after: &str) -> String {
    let found = rewrites(t, before, block);
    assert_eq!(found.len(), 1, "{}: {found:#?}", t.name());
    let (desc, text) = &found[0];
    assert_eq!(text, after, "{}: {desc}", t.name());
    desc.clone()
}

/// `t` has no candidate for `src` on `block`, and one of the places it
/// left alone says exactly `reason`.
pub fn check_not_applicable(t: &dyn Transform, block: [u64; 3], src: &str, reason: &str) {
    let p = try_propose(t, src, block).expect("the original can be checked");
    assert!(
        p.candidates.is_empty(),
        "{}: {:?}",
        t.name(),
        p.candidates[0].description
    );
    let why: Vec<&str> = p.skipped.iter().map(|s| s.reason.as_str()).collect();
    assert!(why.contains(&reason), "expected `{reason}` in {why:#?}");
}

/// How many random cases a property test runs: `PROPTEST_CASES`, else
/// `default`.
pub fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}
