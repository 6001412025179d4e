//! What the transforms' tests share: a transform's proposals for a small
//! kernel, every candidate checked against the original by differential
//! simulation.

use copper::bound::{prepare, Config};
use copper::cuda::parse::parse_source;
use copper::cuda::print;
use copper::ir::lower::lower_kernel;
use copper::sim::params::LaunchSpec;
use copper::source::SourceFile;
use copper_transforms::check::Checker;
use copper_transforms::{Context, Proposals, Transform};

/// What `t` proposes for the only kernel of `src`, launched with `block`.
/// Every candidate is checked on launches synthesized from the signature;
/// a candidate that computes something else panics with its text. `Err`
/// when the original itself cannot be checked (it fails or races on the
/// synthesized launches).
#[allow(dead_code)]
pub fn try_propose(t: &dyn Transform, src: &str, block: [u64; 3]) -> Result<Proposals, String> {
    try_propose_with(t, src, block, false)
}

/// [`try_propose`], with floating-point sums allowed to change their order
/// when `allow_reassociation` (`--allow-reassociation`).
#[allow(dead_code)]
pub fn try_propose_with(
    t: &dyn Transform,
    src: &str,
    block: [u64; 3],
    allow_reassociation: bool,
) -> Result<Proposals, String> {
    try_propose_on(t, src, block, allow_reassociation, None)
}

/// [`try_propose_with`], every candidate checked on the variants of the
/// launch `spec` (a parameter file's) when there is one.
#[allow(dead_code)]
pub fn try_propose_on(
    t: &dyn Transform,
    src: &str,
    block: [u64; 3],
    allow_reassociation: bool,
    spec: Option<&LaunchSpec>,
) -> Result<Proposals, String> {
    let file = parse_source(SourceFile::new("t.cu", src));
    let f = file.kernels().next().ok_or("no kernel")?.clone();
    let kernel = lower_kernel(&file, &f.name).map_err(|d| d.message)?;
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
    let checker =
        Checker::new(&file, &f.name, spec, Some(block), None).map_err(|e| e.to_string())?;
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
