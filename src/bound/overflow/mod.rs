//! 32-bit integer arithmetic that can leave its type's range for given
//! sizes (what `copper lint`'s `index-overflow` reports): the exact range of
//! each operation, from the linear facts where the value has a linear
//! form, else by interval arithmetic over its operands, with the launch
//! shape and the values of the kernel's inputs the caller knows. A
//! variable a loop accumulates into has no linear range there (the facts
//! widen it away); [`loops`] bounds it by the loop's trip count.

mod loops;

use std::collections::{BTreeMap, HashMap};

use super::Prepared;
use crate::absint::deps::key;
use crate::absint::linear::{Constraints, LinExpr};
use crate::absint::symbols::int_bounds;
use crate::cuda::ast::BinOp;
use crate::ir::value::Scalar;
use crate::ir::{Expr, ExprKind, Stmt, VarId, VarKind};
use crate::source::Span;

/// An exact integer range `[lo, hi]`.
pub type Range = (i128, i128);

/// A 32-bit operation whose exact result can leave its type's range.
#[derive(Clone, Debug, PartialEq)]
pub struct Overflow {
    /// The statement (or loop) holding the operation.
    pub span: Span,
    /// The operator: `*`, `+`, `-`, `<<`, or `conversion` (a 32-bit
    /// unsigned value converted to `int`).
    pub op: &'static str,
    /// The type it computes in (for a conversion: the target, `int`).
    pub ty: Scalar,
    /// The exact result's range.
    pub range: Range,
    /// The operands' ranges (one for a conversion).
    pub operands: Vec<Range>,
}

/// Ranges of variables the linear facts do not bound (loop accumulators),
/// where they hold.
type Known = HashMap<VarId, Range>;

/// The largest and smallest values of a 32-bit integer type.
fn limits(ty: Scalar) -> Option<Range> {
    match ty {
        Scalar::I32 => Some((i32::MIN as i128, i32::MAX as i128)),
        Scalar::U32 => Some((0, u32::MAX as i128)),
        _ => None,
    }
}

impl Prepared {
    /// Every 32-bit `+`, `-`, `*` or `<<` whose exact result can leave its
    /// type's range, and every conversion of a 32-bit unsigned value to
    /// `int` that can exceed `INT_MAX`, with the launch shape analyzed and
    /// the inputs (scalar parameters and symbols, by name) fixed to
    /// `values`. Only operations whose range is known are judged, and of
    /// nested ones only the innermost that leaves its range is reported.
    /// An unsigned difference that can go below 0 is taken as deliberate
    /// (it wraps by design) and not reported.
    pub fn overflows(&self, values: &BTreeMap<String, i128>) -> Vec<Overflow> {
        let mut fixed = Constraints::top();
        for (v, var) in self.kernel.vars.iter().enumerate() {
            let input = matches!(var.kind, VarKind::Param(_) | VarKind::Symbol);
            if let Some(&x) = values.get(&var.name).filter(|_| input) {
                let s = self.syms.var(v);
                fixed.add_eq0(LinExpr::var(s).sub(&LinExpr::int(x)));
            }
        }
        let mut found = Vec::new();
        self.judge_stmts(&self.kernel.body, &fixed, &Known::new(), &mut found);
        found.dedup();
        found
    }

    /// Judges the operations of `stmts` and the statements inside them,
    /// with the inputs `fixed` and the ranges `known` of the variables of
    /// the loops around them.
    fn judge_stmts(
        &self,
        stmts: &[Stmt],
        fixed: &Constraints,
        known: &Known,
        found: &mut Vec<Overflow>,
    ) {
        for s in stmts {
            self.judge_stmt(s, fixed, known, found);
            match s {
                Stmt::If { then, els, .. } => {
                    self.judge_stmts(then, fixed, known, found);
                    self.judge_stmts(els, fixed, known, found);
                }
                Stmt::Loop { body, step, .. } => {
                    let (mut known, until) = self.accumulators(s, fixed, known);
                    for b in body.iter().chain(step) {
                        self.judge_stmts(std::slice::from_ref(b), fixed, &known, found);
                        for (v, _) in until.iter().filter(|(_, k)| *k == key(b)) {
                            known.remove(v);
                        }
                    }
                }
                Stmt::Scope { body, .. } => self.judge_stmts(body, fixed, known, found),
                _ => {}
            }
        }
    }

    /// Judges the expressions of one statement (not those inside it).
    fn judge_stmt(&self, s: &Stmt, fixed: &Constraints, known: &Known, found: &mut Vec<Overflow>) {
        let key = key(s);
        let (exprs, at, span): (Vec<&Expr>, _, Span) = match s {
            Stmt::Assign { value, span, .. } => (vec![value], self.lin.before.get(&key), *span),
            Stmt::Store {
                access,
                value,
                span,
            } => (vec![&access.index, value], self.lin.before.get(&key), *span),
            Stmt::Atomic {
                access,
                value,
                compare,
                span,
                ..
            } => {
                let mut es = vec![&*access.index, value];
                es.extend(compare);
                (es, self.lin.before.get(&key), *span)
            }
            Stmt::If { cond, span, .. } => (vec![cond], self.lin.before.get(&key), *span),
            Stmt::Loop {
                cond: Some(c),
                span,
                ..
            } => (vec![c], self.lin.head.get(&key), *span),
            _ => return,
        };
        let Some(ctx) = at.filter(|c| !c.is_bottom()) else {
            return;
        };
        if span.is_synthetic() {
            return;
        }
        let ctx = ctx.meet(fixed);
        for e in exprs {
            self.judge(e, &ctx, known, span, found);
        }
    }

    /// The exact range of integer expression `e` under `ctx` and `known`
    /// (`None` when unknown), recording in `found` the operations that leave their
    /// type's range; whether one inside `e` did is the second result.
    fn judge(
        &self,
        e: &Expr,
        ctx: &Constraints,
        known: &Known,
        span: Span,
        found: &mut Vec<Overflow>,
    ) -> (Option<Range>, bool) {
        if e.ty.is_float() {
            self.judge_children(e, ctx, known, span, found);
            return (None, false);
        }
        let (operands, inner, op): (Vec<Option<Range>>, bool, Option<&'static str>) = match &e.kind
        {
            ExprKind::Binary(op, a, b) => {
                let (ra, oa) = self.judge(a, ctx, known, span, found);
                let (rb, ob) = self.judge(b, ctx, known, span, found);
                let name = match op {
                    BinOp::Add => Some("+"),
                    BinOp::Sub => Some("-"),
                    BinOp::Mul => Some("*"),
                    BinOp::Shl => Some("<<"),
                    _ => None,
                };
                (vec![ra, rb], oa || ob, name)
            }
            ExprKind::Convert { value, .. } => {
                let (r, o) = self.judge(value, ctx, known, span, found);
                let converts = e.ty == Scalar::I32 && value.ty == Scalar::U32;
                (vec![r], o, converts.then_some("conversion"))
            }
            _ => {
                self.judge_children(e, ctx, known, span, found);
                (Vec::new(), false, None)
            }
        };
        let range = self.range(e, ctx, known, &operands);
        if let (Some(op), Some(r), Some((lo, hi)), false) = (op, range, limits(e.ty), inner) {
            let wraps_by_design = op == "-" && e.ty == Scalar::U32 && r.1 <= hi;
            if (r.0 < lo || r.1 > hi) && !wraps_by_design {
                found.push(Overflow {
                    span,
                    op,
                    ty: e.ty,
                    range: r,
                    operands: operands.iter().flatten().copied().collect(),
                });
                return (range, true);
            }
        }
        // An unsigned value that may have wrapped below 0 has no exact
        // range to build on.
        let range = range.filter(|r| e.ty.is_signed() || r.0 >= 0);
        (range, inner)
    }

    /// Judges the integer expressions inside `e` (loads' indices, calls'
    /// arguments, conditions) that [`Prepared::judge`] does not reach.
    fn judge_children(
        &self,
        e: &Expr,
        ctx: &Constraints,
        known: &Known,
        span: Span,
        found: &mut Vec<Overflow>,
    ) {
        let mut go = |x: &Expr| {
            self.judge(x, ctx, known, span, found);
        };
        match &e.kind {
            ExprKind::Load(a) => go(&a.index),
            ExprKind::Unary(_, x) | ExprKind::Convert { value: x, .. } => go(x),
            ExprKind::Binary(_, a, b) | ExprKind::And(a, b) | ExprKind::Or(a, b) => {
                go(a);
                go(b);
            }
            ExprKind::Select(c, a, b) => {
                go(c);
                go(a);
                go(b);
            }
            ExprKind::Call(_, args) => args.iter().for_each(go),
            ExprKind::Const(_) | ExprKind::Var(_) | ExprKind::Builtin(_) => {}
        }
    }

    /// The exact range of integer expression `e` under `ctx`: from its
    /// linear form where the facts bound it on both sides, else from its
    /// operands' ranges `operands` by interval arithmetic, or for a
    /// variable from `known`.
    fn range(
        &self,
        e: &Expr,
        ctx: &Constraints,
        known: &Known,
        operands: &[Option<Range>],
    ) -> Option<Range> {
        if let Some(l) = self.syms.linearize(e, Some(ctx)) {
            if let (Some(lo), Some(hi)) = int_bounds(ctx, &l) {
                if lo.is_integer() && hi.is_integer() {
                    return Some((lo.num(), hi.num()));
                }
            }
        }
        match (&e.kind, operands) {
            (ExprKind::Binary(op, ..), [Some(a), Some(b)]) => interval(*op, *a, *b),
            (ExprKind::Convert { value, .. }, [Some(r)]) if !value.ty.is_float() => Some(*r),
            (ExprKind::Var(v), _) => known.get(v).copied(),
            _ => None,
        }
    }
}

/// `a op b` over ranges, for the operators whose result range follows
/// from the operands' ends; `None` for the others or on `i128` overflow.
fn interval(op: BinOp, a: Range, b: Range) -> Option<Range> {
    let span = |xs: [Option<i128>; 4]| -> Option<Range> {
        let xs: Option<Vec<i128>> = xs.into_iter().collect();
        let xs = xs?;
        Some((*xs.iter().min()?, *xs.iter().max()?))
    };
    match op {
        BinOp::Add => Some((a.0.checked_add(b.0)?, a.1.checked_add(b.1)?)),
        BinOp::Sub => Some((a.0.checked_sub(b.1)?, a.1.checked_sub(b.0)?)),
        BinOp::Mul => span([
            a.0.checked_mul(b.0),
            a.0.checked_mul(b.1),
            a.1.checked_mul(b.0),
            a.1.checked_mul(b.1),
        ]),
        BinOp::Shl if b.0 >= 0 && b.1 < 64 => {
            let k = |s: i128| 1i128.checked_shl(s as u32);
            span([
                a.0.checked_mul(k(b.0)?),
                a.0.checked_mul(k(b.1)?),
                a.1.checked_mul(k(b.0)?),
                a.1.checked_mul(k(b.1)?),
            ])
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bound::{prepare, Config};
    use crate::cuda::parse::parse_source;
    use crate::ir::lower::lower_kernel;
    use crate::source::SourceFile;

    fn overflows(src: &str, block: u64, grid: u64, values: &[(&str, i128)]) -> Vec<Overflow> {
        let parsed = parse_source(SourceFile::new("t.cu", src));
        let k = lower_kernel(&parsed, "k").expect("lowers");
        let p = prepare(
            &k,
            Config {
                block: crate::launch::block([block, 1, 1]).ok(),
                grid: crate::launch::grid([grid, 1, 1]).ok(),
                ..Config::default()
            },
        );
        let values = values.iter().map(|(n, x)| (n.to_string(), *x)).collect();
        p.overflows(&values)
    }

    const ROWS: &str = "__global__ void k(float *a, int n) {\n  int i = blockIdx.x * blockDim.x * n + threadIdx.x;\n  a[i] = 0;\n}\n";

    #[test]
    fn a_product_past_int_max_is_found_at_large_sizes_only() {
        let found = overflows(ROWS, 256, 4096, &[("n", 4096)]);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].op, "conversion");
        assert_eq!(found[0].range, (0, 4095 * 256 * 4096 + 255));
        // Past UINT_MAX, the unsigned product itself wraps.
        let found = overflows(ROWS, 256, 65535, &[("n", 4096)]);
        assert_eq!(found[0].op, "*");
        assert_eq!(found[0].range, (0, 65534 * 256 * 4096));
        assert!(overflows(ROWS, 256, 16, &[("n", 4096)]).is_empty());
        // Without the value of n, nothing is known.
        assert!(overflows(ROWS, 256, 4096, &[]).is_empty());
    }

    #[test]
    fn the_usual_global_index_does_not_overflow() {
        let src = "__global__ void k(float *a, int n) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) a[i] = a[i] * 2;\n}\n";
        assert!(overflows(src, 1024, 65535, &[("n", 1 << 30)]).is_empty());
        let signed = "__global__ void k(float *a, int n) {\n  int i = (int)blockIdx.x * n + (int)threadIdx.x;\n  a[i] = 0;\n}\n";
        let found = overflows(signed, 256, 70000, &[("n", 40000)]);
        assert_eq!(found[0].op, "*");
        assert_eq!(found[0].ty, Scalar::I32);
    }
}
