//! Why a kernel has no bound: the innermost loop that cannot be paid for on
//! its own, and what is wrong with its condition.

use std::collections::BTreeSet;

use super::potential::Pot;
use super::Prepared;
use crate::absint::deps::key;
use crate::cost::CostTable;
use crate::ir::{Expr, ExprKind, MathFn, Stmt, VarId};
use crate::poly::Rational;
use crate::source::Span;

/// Why a metric has no bound.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum NoBound {
    /// The analysis ran into its wall-clock safety net (in seconds).
    #[error("the analysis stopped at the wall-clock limit of {0} s (raise it with --budget); results may differ on a faster machine")]
    OverBudget(f64),
    /// The abstract interpretation stopped at its deterministic work limit
    /// (statement visits).
    #[error("the analysis stopped after {0} abstract-interpretation steps, its work limit")]
    OverSteps(usize),
    /// The LP is larger than allowed.
    #[error("the analysis needs an LP of {vars} variables and {constraints} constraints, over the limit of {limit} (raise it with --max-lp)")]
    LpTooLarge {
        /// Its variables.
        vars: usize,
        /// Its constraints.
        constraints: usize,
        /// The limit on their sum.
        limit: usize,
    },
    /// The LP solver failed.
    #[error("the LP solver failed: {0}")]
    SolverFailed(String),
    /// The solver's solution did not check out exactly.
    #[error("the LP solution could not be verified in exact arithmetic: {0}")]
    Uncertified(String),
    /// The bound's numbers do not fit exact arithmetic.
    #[error("the bound overflowed 128-bit rational arithmetic")]
    Overflow,
    /// A constant bound below what every warp certainly costs: an
    /// internal error, reported rather than printed as a bound.
    #[error("internal error: the bound {bound} is below the cost {certain} every warp certainly incurs; please report this")]
    BelowCertainCost {
        /// The bound found.
        bound: Rational,
        /// The cost every warp incurs.
        certain: f64,
    },
    /// Every loop has a potential on its own, but not all together.
    #[error("no potential satisfies the constraints (the loops are bounded on their own, but not together)")]
    NotTogether,
    /// Loops nest deeper than the degree analyzed.
    #[error("its loops nest {depth} deep, so its cost may grow like a polynomial of degree {depth}, above the degree analyzed ({degree}); try --degree {}", (*.depth).min(4))]
    TooDeep {
        /// How deep.
        depth: usize,
        /// The degree analyzed.
        degree: u32,
    },
    /// A loop without a condition.
    #[error("this loop has no condition: it only ends by `break` or `return`, which gives no bound on its iterations")]
    NoCondition,
    /// A condition that bounds no counter.
    #[error("its condition bounds no counter the loop changes: it is data-dependent (reads memory), floating-point or nonlinear")]
    NoCounter,
    /// A condition comparing with a maximum whose operand no bound can
    /// name (`max(n % 7, 8)`, over a loop counter, or an unsigned sum).
    #[error("its condition bounds no counter the loop changes: it compares with `{limit}`, a maximum of which copper knows no upper bound to name, since its operand `{operand}` is {why}")]
    UnnamedMaximum {
        /// The maximum, as a bound would name it.
        limit: String,
        /// The operand that is not evaluated.
        operand: String,
        /// What that operand is.
        why: &'static str,
    },
    /// Counters (listed) that depend on the thread in an unknown way.
    #[error("its counter {0} depends on the thread in a way copper cannot follow (not `threadIdx` plus a warp-uniform value, nor starting at a proved lower bound such as a lane index and moving by a uniform step)")]
    ThreadDependent(String),
    /// Counters (listed) that may wrap around, with their type's range
    /// when it has one.
    #[error("its counter {counters} may wrap around: copper cannot prove an update keeps it within its type's range{range}, and a counter that wraps can run the loop longer than its condition suggests, or forever")]
    MayWrap {
        /// The counters, listed.
        counters: String,
        /// ` (lo…hi)`, or empty.
        range: String,
    },
    /// Counters (listed) with no ranking potential.
    #[error("no potential pays for its iterations: {0} may not move toward the loop's bound by a constant step on every path (or is reset inside the loop)")]
    NoRanking(String),
}

/// The first loop (innermost first) whose iterations no potential pays
/// for, with a reason.
pub(super) fn explain(p: &Prepared, cost: &CostTable) -> (NoBound, Option<Span>) {
    let mut loops = Vec::new();
    post_order(&p.kernel.body, &mut loops);
    for &s in &loops {
        let mut a = p.aara(cost);
        a.stmt(s, Pot::default());
        if a.lp.solve(&super::Lin::default(), &[], 0.0).is_err() {
            let Stmt::Loop {
                cond, body, span, ..
            } = s
            else {
                continue;
            };
            return (describe(p, s, cond.as_ref(), body), Some(*span));
        }
    }
    // Each loop is bounded by a local it compares with (`unsigned m =
    // max(n - 1, 7); … c < m`), but the value the local holds is a
    // maximum no bound can name. (A maximum in the condition itself,
    // `j <= max(16, c)`, bounded the loop on its own.)
    for s in loops {
        if let Stmt::Loop {
            cond: Some(cond),
            span,
            ..
        } = s
        {
            let mut direct = false;
            cond.visit(&mut |e| direct |= matches!(e.kind, ExprKind::Call(MathFn::Max, _)));
            if direct {
                continue;
            }
            if let Some((limit, operand, why)) = p.syms.unnamed_maximum(&p.kernel, cond) {
                let why = NoBound::UnnamedMaximum {
                    limit,
                    operand,
                    why,
                };
                return (why, Some(*span));
            }
        }
    }
    (NoBound::NotTogether, None)
}

fn post_order<'k>(stmts: &'k [Stmt], out: &mut Vec<&'k Stmt>) {
    for s in stmts {
        match s {
            Stmt::Loop { body, step, .. } => {
                post_order(body, out);
                post_order(step, out);
                out.push(s);
            }
            Stmt::If { then, els, .. } => {
                post_order(then, out);
                post_order(els, out);
            }
            Stmt::Scope { body, .. } => post_order(body, out),
            _ => {}
        }
    }
}

/// How deeply loops nest in `stmts`.
fn nest_depth(stmts: &[Stmt]) -> usize {
    stmts
        .iter()
        .map(|s| match s {
            Stmt::Loop { body, step, .. } => 1 + nest_depth(body).max(nest_depth(step)),
            Stmt::If { then, els, .. } => nest_depth(then).max(nest_depth(els)),
            Stmt::Scope { body, .. } => nest_depth(body),
            _ => 0,
        })
        .max()
        .unwrap_or(0)
}

/// What keeps loop `s` (with its condition and body) from having a
/// ranking potential.
fn describe(p: &Prepared, s: &Stmt, cond: Option<&Expr>, body: &[Stmt]) -> NoBound {
    let depth = nest_depth(body) + 1;
    if depth > p.config.degree as usize {
        return NoBound::TooDeep {
            depth,
            degree: p.config.degree,
        };
    }
    if cond.is_none() {
        return NoBound::NoCondition;
    }
    let guards = p.lin.guards.get(&key(s)).cloned().unwrap_or_default();
    let counters = super::wrap::counters(&p.lin, &p.syms, &super::variables(&p.flags), s);
    let names = |vs: &BTreeSet<VarId>| {
        vs.iter()
            .map(|v| format!("`{}`", p.kernel.vars[*v].name))
            .collect::<Vec<_>>()
            .join(", ")
    };
    if counters.is_empty() {
        return match cond.and_then(|c| p.syms.unnamed_maximum(&p.kernel, c)) {
            Some((limit, operand, why)) => NoBound::UnnamedMaximum {
                limit,
                operand,
                why,
            },
            None => NoBound::NoCounter,
        };
    }
    // A counter that may wrap has no bound whatever its lanes do (and a
    // lane-strided counter gets no floor ghost then).
    let wrapping = super::wrap::wrapping(&p.kernel, &p.lin, &p.syms, &counters, s);
    if let Some(&v) = wrapping.iter().next() {
        let range = p.kernel.vars[v]
            .ty
            .range()
            .map_or(String::new(), |(lo, hi)| format!(" ({lo}…{hi})"));
        return NoBound::MayWrap {
            counters: names(&wrapping),
            range,
        };
    }
    let head = p.deps.head.get(&key(s));
    let uniform = guards
        .iter()
        .any(|g| head.is_some_and(|st| p.syms.uniform_part(g, st).is_some()));
    if !uniform {
        return NoBound::ThreadDependent(names(&counters));
    }
    NoBound::NoRanking(names(&counters))
}
