//! Divergent branches: every `if` and loop condition that may differ
//! between the lanes of a warp, with what divergence costs under `wsteps`
//! (COpPER §4.1): one step more per divergent execution, and both sides
//! run one after the other instead of one.

use std::collections::BTreeSet;

use crate::bound::Prepared;
use crate::cost::Metric;
use crate::ir::{visit_stmts, Kernel, Stmt};

use super::{Code, Finding};

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
    for (start, end) in spans {
        let span = crate::source::Span::new(start, end);
        if prep.uniform_at(span) != Some(false) {
            continue;
        }
        let (message, why, worst) = if loops.contains(&(start, end)) {
            (
                "loop condition may differ between the lanes of a warp".to_string(),
                "lanes that leave early idle until the warp's last lane leaves; each divergent test costs 1 wsteps step more".to_string(),
                Some(1.0),
            )
        } else {
            let sides = prep.branch_costs(span, &wsteps.work);
            let show = |c: Option<f64>| c.map_or("a loop".into(), |c| format!("{c}"));
            match sides {
                Some((t, e)) => {
                    let extra = t.zip(e).map(|(t, e)| 1.0 + t.min(e));
                    (
                        "branch condition may differ between the lanes of a warp".to_string(),
                        format!(
                            "a divergent warp runs both sides (then: {}, else: {} wsteps per run) and 1 step more{}",
                            show(t),
                            show(e),
                            extra.map_or(String::new(), |x| format!(": up to {x} wsteps more than a uniform warp"))
                        ),
                        extra,
                    )
                }
                None => continue,
            }
        };
        out.push(Finding {
            code: Code::DivergentBranch,
            span,
            message,
            why,
            help: Some("make the condition the same for every lane of a warp (test warp-aligned ranges, e.g. threadIdx.x / 32), or move the common work out of the branch".into()),
            worst,
            site: None,
            calls: Vec::new(),
        });
    }
    out
}
