//! Variables a loop accumulates into (`acc += 100000` in every iteration):
//! the linear facts widen their range away at the loop's head, so inside
//! the loop it comes from the loop's trip count instead.
//!
//! The trip count: a signed counter of at least 32 bits (its overflow is
//! undefined, so it never wraps) that the loop changes once per iteration,
//! at the top level of its body or step, by a constant `c`, takes a
//! different value at the start of each iteration, all within its range
//! there `[lo, hi]`: at most `T = (hi − lo) / |c| + 1` iterations.
//!
//! An accumulator: a variable the loop assigns only as `v = v ± e` (not in
//! an inner loop, `e` of `v`'s type not reading `v`), `m` times per
//! iteration with `e` in `[a, b]`, and in `[lo, hi]` before the loop. With
//! one update at the top level of the body or step, `v` starts each
//! iteration after at most `T − 1` updates, in `[lo + (T − 1)·min(a, 0), hi
//! + (T − 1)·max(b, 0)]`, which holds up to that update (the statements
//! after it are judged without a range for `v`); otherwise anywhere in the
//! loop after at most `T·m` updates.

use std::collections::HashMap;

use super::{Known, Range};
use crate::absint::deps::key;
use crate::absint::linear::Constraints;
use crate::bound::Prepared;
use crate::cuda::ast::BinOp;
use crate::ir::value::Scalar;
use crate::ir::{visit_stmts, Expr, ExprKind, Stmt, VarId};

/// One assignment of a loop: its variable and value, and whether it is at
/// the top level of the loop's body or step, or inside an inner loop.
struct Update<'k> {
    stmt: &'k Stmt,
    var: VarId,
    value: &'k Expr,
    top: bool,
    inner: bool,
}

/// The assignments in `stmts` (`top`: the loop's own list; `inner`: inside
/// an inner loop), and the variables atomics write.
fn updates<'k>(stmts: &'k [Stmt], top: bool, inner: bool, out: &mut Vec<Update<'k>>) {
    for s in stmts {
        match s {
            Stmt::Assign { var, value, .. } => out.push(Update {
                stmt: s,
                var: *var,
                value,
                top,
                inner,
            }),
            Stmt::If { then, els, .. } => {
                updates(then, false, inner, out);
                updates(els, false, inner, out);
            }
            Stmt::Loop { body, step, .. } => {
                updates(body, false, true, out);
                updates(step, false, true, out);
            }
            Stmt::Scope { body, .. } => updates(body, false, inner, out),
            _ => {}
        }
    }
}

/// `v ± e` as `(e, sign)`, where `value` is that for `v`.
fn step_of(v: VarId, value: &Expr) -> Option<(&Expr, i128)> {
    let is_v = |x: &Expr| matches!(x.kind, ExprKind::Var(w) if w == v);
    match &value.kind {
        ExprKind::Binary(BinOp::Add, a, b) if is_v(a) => Some((b, 1)),
        ExprKind::Binary(BinOp::Add, a, b) if is_v(b) => Some((a, 1)),
        ExprKind::Binary(BinOp::Sub, a, b) if is_v(a) => Some((b, -1)),
        _ => None,
    }
}

/// `[lo, hi]` after at most `n` changes in `[down, up]` (`down ≤ 0 ≤ up`).
fn grown((lo, hi): Range, n: i128, (down, up): Range) -> Option<Range> {
    Some((
        lo.checked_add(n.checked_mul(down)?)?,
        hi.checked_add(n.checked_mul(up)?)?,
    ))
}

/// Whether `e` reads `v`.
fn reads(e: &Expr, v: VarId) -> bool {
    let mut found = false;
    e.visit(&mut |x| found |= matches!(x.kind, ExprKind::Var(w) if w == v));
    found
}

impl Prepared {
    /// `known` with the ranges inside loop `lp` of the variables it
    /// accumulates into (see the module documentation), and for each
    /// range that holds only up to an update, that update's key.
    pub(super) fn accumulators(
        &self,
        lp: &Stmt,
        fixed: &Constraints,
        known: &Known,
    ) -> (Known, Vec<(VarId, usize)>) {
        let mut out = known.clone();
        let mut until = Vec::new();
        let Stmt::Loop { body, step, .. } = lp else {
            return (out, until);
        };
        let mut all = Vec::new();
        updates(body, true, false, &mut all);
        updates(step, true, false, &mut all);
        let mut atomic = Vec::new();
        let mut results = |s: &Stmt| {
            if let Stmt::Atomic {
                result: Some(r), ..
            } = s
            {
                atomic.push(*r);
            }
        };
        visit_stmts(body, &mut results);
        visit_stmts(step, &mut results);
        let mut by_var: HashMap<VarId, Vec<&Update>> = HashMap::new();
        for u in &all {
            by_var.entry(u.var).or_default().push(u);
        }
        let Some(trips) = self.trips(lp, fixed, known, &by_var) else {
            return (out, until);
        };
        let Some(entry) = self.lin.before.get(&key(lp)).map(|c| c.meet(fixed)) else {
            return (out, until);
        };
        for (&v, us) in &by_var {
            if atomic.contains(&v) || us.iter().any(|u| u.inner) {
                continue;
            }
            let ty = self.kernel.vars[v].ty;
            let mut steps = Vec::new();
            for u in us {
                let Some((e, sign)) =
                    step_of(v, u.value).filter(|(e, _)| e.ty == ty && !reads(e, v))
                else {
                    break;
                };
                let Some(at) = self.lin.before.get(&key(u.stmt)).map(|c| c.meet(fixed)) else {
                    break;
                };
                let Some((a, b)) = self
                    .judge(
                        e,
                        &at,
                        known,
                        crate::source::Span::new(0, 0),
                        &mut Vec::new(),
                    )
                    .0
                else {
                    break;
                };
                steps.push(if sign > 0 { (a, b) } else { (-b, -a) });
            }
            if steps.len() != us.len() {
                continue;
            }
            let var = Expr {
                kind: ExprKind::Var(v),
                ty,
            };
            let Some((lo, hi)) = self.range(&var, &entry, known, &[]) else {
                continue;
            };
            let once = us.len() == 1 && us[0].top;
            let n = if once {
                trips - 1
            } else {
                trips * us.len() as i128
            };
            let down = steps.iter().map(|s| s.0.min(0)).min().unwrap_or(0);
            let up = steps.iter().map(|s| s.1.max(0)).max().unwrap_or(0);
            let Some(range) = grown((lo, hi), n, (down, up)) else {
                continue;
            };
            out.insert(v, range);
            if once {
                until.push((v, key(us[0].stmt)));
            }
        }
        (out, until)
    }

    /// The most iterations loop `lp` makes, from a counter (see the module
    /// documentation) among its assigned variables `by_var`.
    fn trips(
        &self,
        lp: &Stmt,
        fixed: &Constraints,
        known: &Known,
        by_var: &HashMap<VarId, Vec<&Update>>,
    ) -> Option<i128> {
        let start = self.lin.body.get(&key(lp))?.meet(fixed);
        by_var
            .iter()
            .filter_map(|(&v, us)| {
                let ty = self.kernel.vars[v].ty;
                let [u] = us.as_slice() else {
                    return None;
                };
                if !u.top || !matches!(ty, Scalar::I32 | Scalar::I64) {
                    return None;
                }
                let (e, _) = step_of(v, u.value)?;
                let ExprKind::Const(c) = &e.kind else {
                    return None;
                };
                let c = (c.as_i64() as i128).abs();
                let var = Expr {
                    kind: ExprKind::Var(v),
                    ty,
                };
                let (lo, hi) = self.range(&var, &start, known, &[])?;
                (c > 0 && hi >= lo).then(|| (hi - lo) / c + 1)
            })
            .min()
    }
}
