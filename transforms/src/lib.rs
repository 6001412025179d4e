//! copper's source-to-source rewrites of CUDA kernels.
//!
//! Each transform turns a kernel's AST, with the analysis facts of the
//! kernel, into candidate kernels, each with a short description of what it
//! changed; what it cannot handle it skips with a reason. Every candidate
//! must then pass [`check::Checker`] (differential simulation) before it
//! may be offered: [`propose_checked`] does both.

pub mod ast_util;
pub mod block_guard;
pub mod branch_distribution;
pub mod check;
pub mod coop_load;
#[cfg(test)]
mod fixture;
pub mod global_to_shared;
pub mod global_tree;
pub mod halo_tile;
pub mod hoist_loads;
pub mod interleave;
pub mod overlap;
pub mod pad_shared;
pub mod read_only;
pub mod refusal;
pub mod remap_split;
pub mod remap_threads;
mod shared_budget;
pub mod staged_transpose;
pub mod tiled_matmul;
pub mod tiled_shared;
pub mod unstage;
pub mod warp_atomic;
pub mod warp_per_row;
pub mod warp_shuffle;

pub use shared_budget::static_shared_bytes;

use copper::bound::Prepared;
use copper::cuda::ast::{Expr, Function};
use copper::cuda::parse::ParsedFile;
use copper::cuda::relaunch::Relaunch;
use copper::ir::{Kernel, SiteId};
use copper::launch::Dims;
use copper::sim::params::LaunchSpec;
use copper::source::Span;

pub use refusal::Refusal;

// The test fixtures name the crate as the integration tests do (they are
// one file, included by both).
#[cfg(test)]
extern crate self as copper_transforms;

/// What a transform may look at.
pub struct Context<'a> {
    /// The file the kernel is in (or the part of it the kernel needs).
    pub file: &'a ParsedFile,
    /// The whole file the kernel is in, with the host code that launches
    /// it (the same as `file` unless the search runs on an excerpt).
    pub host: &'a ParsedFile,
    /// The kernel's AST.
    pub function: &'a Function,
    /// The kernel lowered to the IR (its access sites carry AST node ids).
    pub kernel: &'a Kernel,
    /// The analysis of the kernel.
    pub analysis: &'a Prepared,
    /// The block shape the kernel is launched with, when known.
    pub block: Option<Dims>,
    /// The parameter file's launch of the kernel, when there is one.
    pub params: Option<&'a LaunchSpec>,
    /// Whether rewrites may sum floating-point values in another order
    /// (`--allow-reassociation`).
    pub allow_reassociation: bool,
}

impl Context<'_> {
    /// The line of a span in the file (0 for made-up code).
    pub fn line(&self, span: Span) -> usize {
        if span.is_synthetic() {
            0
        } else {
            self.file.source.line_col(span.start).0
        }
    }

    /// The IR access sites of an AST expression (a load and a store for a
    /// compound assignment's target).
    pub fn sites_of(&self, e: &Expr) -> Vec<SiteId> {
        self.kernel
            .sites
            .iter()
            .enumerate()
            .filter(|(_, s)| s.node == e.meta.id && !e.meta.span.is_synthetic())
            .map(|(i, _)| i)
            .collect()
    }
}

/// A rewritten kernel and what was changed.
#[derive(Clone, Debug)]
pub struct Candidate {
    /// The kernel after the rewrite.
    pub function: Function,
    /// What changed, for people: "moved `A` into shared memory".
    pub description: String,
    /// The transform that made it.
    pub transform: &'static str,
    /// Whether the rewrite is written for the analyzed block size only
    /// (a buffer or tile sized from it), where the original may not be.
    pub fixes_block_size: bool,
    /// For a rewrite that runs on another launch than the original (x and
    /// y of the grid and block exchanged, or 32 times the blocks in x):
    /// how the launch changes and the edits of the host code of
    /// [`Context::host`] that change it
    /// ([`copper::cuda::relaunch::relaunch`]), made when the rewrite is
    /// written to the file; `None` when the launch stays as it is.
    pub relaunch: Option<Relaunch>,
    /// Whether the rewrite sums floating-point values in another order
    /// (`--allow-reassociation`): its results are compared with the
    /// original's within a tolerance ([`check::reassociation_tolerance`]).
    pub reassociates: bool,
    /// For a rewrite equivalent to the original only on launches of at
    /// least this many threads in all (a length expression over the
    /// kernel's integer parameters, `h * w`: the split exchange hands the
    /// elements to the threads in another order, so a launch with fewer
    /// threads than elements would cover other ones): the checker compares
    /// it on those launches only, and its description says so.
    pub covers: Option<String>,
    /// What the rewrite assumes of its callers that the original did not
    /// (arrays that do not overlap: [`overlap`]), one sentence each.
    pub assumes: Vec<String>,
    /// A hazard the rewrite removes that the cost model does not see
    /// (hand-unrolled warp-synchronous steps, which rely on lockstep
    /// lanes): such a candidate is chosen when its bound is not worse than
    /// the incumbent's, and this says why.
    pub repairs: Option<String>,
    /// Contention on one address the cost model does not price (every
    /// thread's atomic on one counter, made one per warp): such a
    /// candidate is chosen when its bound has the degree of the
    /// incumbent's (it costs a constant per warp more at most), and this
    /// says why.
    pub contention: Option<String>,
    /// The pairs of pointer parameters (read, written) the rewrite
    /// promises do not overlap ([`overlap`]): the search also runs it and
    /// the original with each pair passed one array
    /// ([`check::Checker::aliased`]) and says what that shows.
    pub promised_apart: Vec<(String, String)>,
}

impl Candidate {
    /// `function`, made by `transform` as `description` says, for any
    /// block size, on the same launch, summing in the same order, on every
    /// launch; the other fields are set where a rewrite differs.
    pub fn new(transform: &'static str, function: Function, description: String) -> Self {
        Candidate {
            function,
            description,
            transform,
            fixes_block_size: false,
            relaunch: None,
            reassociates: false,
            covers: None,
            repairs: None,
            contention: None,
            assumes: Vec::new(),
            promised_apart: Vec::new(),
        }
    }
}

/// A place a transform did not rewrite, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skip {
    /// Where.
    pub span: Span,
    /// Why.
    pub reason: String,
}

/// What a transform proposes for one kernel.
#[derive(Clone, Debug, Default)]
pub struct Proposals {
    /// Candidate kernels.
    pub candidates: Vec<Candidate>,
    /// Places left alone, with reasons.
    pub skipped: Vec<Skip>,
}

impl Proposals {
    /// No candidate: the whole kernel at `span` is left alone, for `reason`.
    pub fn refused(span: Span, reason: impl ToString) -> Self {
        Proposals {
            candidates: Vec::new(),
            skipped: vec![Skip {
                span,
                reason: reason.to_string(),
            }],
        }
    }
}

impl Proposals {
    /// The one candidate a transform makes of the whole kernel at `span`,
    /// or the reason it makes none, after what stays (`left_alone`: "threads
    /// keep their mapping").
    pub fn one(span: Span, left_alone: &str, made: Result<Candidate, Refusal>) -> Self {
        match made {
            Ok(c) => Proposals {
                candidates: vec![c],
                skipped: Vec::new(),
            },
            Err(why) => Proposals::refused(span, format!("{left_alone}: {why}")),
        }
    }
}

/// A source-to-source rewrite.
pub trait Transform: Send + Sync {
    /// Its name.
    fn name(&self) -> &'static str;
    /// The candidates for one kernel (unchecked).
    fn propose(&self, cx: &Context) -> Proposals;
}

/// Every transform. The search tries all of them each round (best first);
/// on an exact tie between rounds' candidates the one listed first wins.
pub fn all() -> Vec<Box<dyn Transform>> {
    vec![
        Box::new(branch_distribution::BranchDistribution),
        Box::new(global_to_shared::GlobalToShared),
        // Before the tiled staging: on a tie (within the ranking's
        // epsilon) one copy with one barrier, right on every block shape,
        // wins over tiles written for the block copper assumed.
        Box::new(coop_load::CooperativeLoad),
        Box::new(halo_tile::HaloTile),
        Box::new(tiled_shared::TiledGlobalToShared),
        Box::new(pad_shared::PadShared),
        Box::new(hoist_loads::HoistLoads),
        Box::new(global_tree::GlobalTreeToShared),
        Box::new(warp_shuffle::WarpShuffle),
        Box::new(remap_threads::RemapThreads),
        Box::new(remap_split::RemapSplit),
        Box::new(interleave::Interleave),
        Box::new(staged_transpose::StagedTranspose),
        Box::new(tiled_matmul::TiledMatmul),
        Box::new(unstage::Unstage),
        Box::new(warp_atomic::WarpAtomic),
        Box::new(warp_per_row::WarpPerRow),
    ]
}

/// A candidate that failed its check, and why.
#[derive(Clone, Debug)]
pub struct Rejected {
    /// The candidate.
    pub candidate: Candidate,
    /// Why it was dropped.
    pub reason: String,
}

/// A transform's candidates, each checked by differential simulation.
pub fn propose_checked(
    t: &dyn Transform,
    cx: &Context,
    checker: &check::Checker,
) -> (Vec<Candidate>, Vec<Rejected>, Vec<Skip>) {
    let p = t.propose(cx);
    let (mut ok, mut bad) = (Vec::new(), Vec::new());
    for c in p.candidates {
        match checker.check_candidate(&c) {
            Ok(()) => ok.push(c),
            Err(why) => bad.push(Rejected {
                candidate: c,
                reason: why.to_string(),
            }),
        }
    }
    (ok, bad, p.skipped)
}
