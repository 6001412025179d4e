//! Divergent branches: `if` and loop conditions that may differ between
//! the lanes of a warp where that costs something material, with what
//! divergence costs under `wsteps` (COpPER §4.1): one step more per
//! divergent execution, and both sides run one after the other instead of
//! one.
//!
//! Not reported ([`copper explain divergent-branch`](super::explain)):
//! - conditions that only test ranges of the thread index (`i < n`, a
//!   bounds guard; [`Prepared::range_test_at`]): only the warps where an
//!   edge of the range falls, the partial last warp, diverge; and loops
//!   that step a thread-affine counter to a uniform bound (grid-stride,
//!   lane-strided), where only the last rounds diverge;
//! - branches whose divergence adds less than [`MIN_SHARE`] of the dearer
//!   side's cost or fewer than [`MIN_EXTRA`] `wsteps` (a branch with an
//!   empty side: a divergent warp pays 1 step more than a warp where any
//!   lane takes it).

use std::collections::BTreeSet;

use crate::bound::Prepared;
use crate::cost::Metric;
use crate::ir::{visit_stmts, Kernel, Stmt};

use super::{Code, Finding};

/// The least share of the dearer side's cost that divergence must add to
/// a warp for a branch to be reported: 25 %.
pub const MIN_SHARE: f64 = 0.25;

/// The least number of `wsteps` divergence must add to a warp for a
/// branch to be reported.
pub const MIN_EXTRA: f64 = 5.0;

/// Whether a branch whose sides cost `then` and `els` wsteps per run
/// (`None`: a loop) costs a divergent warp enough to report: both sides do
/// work, and the extra `1 + min` is at least [`MIN_EXTRA`] wsteps and
/// [`MIN_SHARE`] of the dearer side.
pub fn material(then: Option<f64>, els: Option<f64>) -> bool {
    match (then, els) {
        (Some(t), Some(e)) => {
            let extra = 1.0 + t.min(e);
            t.min(e) > 0.0 && extra >= MIN_EXTRA && extra >= MIN_SHARE * t.max(e)
        }
        // A loop on a side: material when the other side does work.
        (None, Some(x)) | (Some(x), None) => x > 0.0,
        (None, None) => true,
    }
}

/// The findings of every possibly divergent condition of `kernel`.
pub fn findings(kernel: &Kernel, prep: &Prepared) -> Vec<Finding> {
    let mut spans = BTreeSet::new();
    let mut loops = BTreeSet::new();
    visit_stmts(&kernel.body, &mut |s| match s {
        Stmt::If { span, .. } if !span.is_synthetic() => {
            spans.insert((span.start, span.end));
        }
        Stmt::Loop {
            span,
            cond: Some(_),
            ..
        } if !span.is_synthetic() => {
            spans.insert((span.start, span.end));
            loops.insert((span.start, span.end));
        }
        _ => {}
    });
    let Some(wsteps) = Metric::builtin("wsteps") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut block = None;
    for (start, end) in spans {
        let span = crate::source::Span::new(start, end);
        if prep.uniform_at(span) != Some(false) {
            continue;
        }
        let block = block.get_or_insert_with(|| prep.block_wide_deps());
        if prep.range_test_at(span, block) {
            continue;
        }
        let (message, why, worst) = if loops.contains(&(start, end)) {
            (
                "loop condition may differ between the lanes of a warp".to_string(),
                "the trip count depends on the lane through more than a counter affine in the thread index stepping to a uniform bound (data, a non-linear index, a bound that depends on the lane): lanes that leave early idle until the warp's last lane leaves, and each divergent test costs 1 wsteps step more".to_string(),
                Some(1.0),
            )
        } else {
            let sides = prep.branch_costs(span, &wsteps.work);
            let show = |c: Option<f64>| c.map_or("a loop".into(), |c| format!("{c}"));
            match sides {
                Some((t, e)) if material(t, e) => {
                    let extra = t.zip(e).map(|(t, e)| 1.0 + t.min(e));
                    (
                        "branch condition may differ between the lanes of a warp".to_string(),
                        format!(
                            "a divergent warp runs both sides (then: {}, else: {} wsteps per run) and 1 step more{}; reported because the condition is more than a range test of the thread index and divergence adds at least {} wsteps and {}% of the dearer side",
                            show(t),
                            show(e),
                            extra.map_or(String::new(), |x| format!(": up to {x} wsteps more than a uniform warp")),
                            MIN_EXTRA,
                            MIN_SHARE * 100.0
                        ),
                        extra,
                    )
                }
                _ => continue,
            }
        };
        out.push(Finding {
            code: Code::DivergentBranch,
            span,
            message,
            why,
            help: Some(if loops.contains(&(start, end)) {
                "give the lanes of a warp similar trip counts (sort or bin the work by its length, or split long items over several lanes)".into()
            } else {
                "compute both values without branching and select one (`c ? a : b`), move the work both sides share out of the branch, or arrange the data so the condition is the same for all 32 lanes of a warp (test warp-aligned ranges such as threadIdx.x / 32)".into()
            }),
            worst,
            site: None,
            calls: Vec::new(),
        });
    }
    out
}
