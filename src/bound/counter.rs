//! Updates of loop counters: the assignments an iteration makes to a
//! counter, how often a loop writes it, and conversions that keep a bound's
//! value; shared by the ghost counters (`ghost`, `stride`, `floor`).

use std::collections::BTreeSet;

use crate::ir::structured::FlagKind;
use crate::ir::{Expr, ExprKind, Stmt, VarId};

/// The assignments to `tracked` variables every iteration that goes on
/// makes: those at the top level, and inside the guards `if (!flags)` jump
/// elimination wraps the rest of an iteration in, where every flag is one
/// of a `break` or `return` (a lane that sets it leaves the loop). A
/// `continue` flag's guard is skipped by an iteration that goes on: what
/// it wraps is not made every iteration. Each with its variable, value
/// and statement.
pub(super) fn top_level_updates<'k>(
    stmts: &'k [Stmt],
    tracked: &BTreeSet<VarId>,
    flags: &[(VarId, FlagKind)],
    out: &mut Vec<(VarId, &'k Expr, &'k Stmt)>,
) {
    let is_flag = |v: VarId| {
        flags
            .iter()
            .any(|(f, kind)| *f == v && !matches!(kind, FlagKind::Continue(_)))
    };
    for s in stmts {
        match s {
            Stmt::Assign { var, value, .. } if tracked.contains(var) => out.push((*var, value, s)),
            Stmt::If {
                cond, then, els, ..
            } if els.is_empty() => {
                let mut only_flags = true;
                cond.visit(&mut |e| {
                    if let ExprKind::Var(v) = e.kind {
                        only_flags &= is_flag(v);
                    }
                });
                if only_flags {
                    top_level_updates(then, tracked, flags, out);
                }
            }
            _ => {}
        }
    }
}

/// The value `counter` is set to once per iteration of a loop with
/// `body` and `step`: its only assignment there, at the top level.
pub(super) fn single_update<'k>(
    body: &'k [Stmt],
    step: &'k [Stmt],
    counter: VarId,
) -> Option<&'k Expr> {
    let tracked = BTreeSet::from([counter]);
    let mut updates = Vec::new();
    top_level_updates(body, &tracked, &[], &mut updates);
    top_level_updates(step, &tracked, &[], &mut updates);
    let [(_, update, _)] = updates[..] else {
        return None;
    };
    (count_writes(body, counter) + count_writes(step, counter) == 1).then_some(update)
}

/// How many assignments to `v` a statement list has, at any depth.
pub(super) fn count_writes(stmts: &[Stmt], v: VarId) -> usize {
    let mut n = 0;
    crate::ir::visit_stmts(stmts, &mut |s| match s {
        Stmt::Assign { var, .. } if *var == v => n += 1,
        Stmt::Atomic {
            result: Some(r), ..
        } if *r == v => n += 1,
        _ => {}
    });
    n
}
