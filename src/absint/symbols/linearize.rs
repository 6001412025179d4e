//! Linear forms of IR expressions and the facts their conditions give.

use crate::absint::linear::{Constraints, LinExpr};
use crate::cuda::ast::BinOp;
use crate::ir::{Expr, ExprKind, MathFn, Scalar, Unary, Value};
use crate::poly::Rational;

use super::{int_bounds, Symbols};

impl Symbols {
    /// The linear form of an integer expression, per lane, or `None` when
    /// it has none. `ctx` (the facts holding where `e` is evaluated) lets
    /// unsigned differences and conversions be linear when they provably
    /// do not wrap.
    pub fn linearize(&self, e: &Expr, ctx: Option<&Constraints>) -> Option<LinExpr> {
        if e.ty.is_float() {
            return None;
        }
        if let Some(i) = self.atoms.iter().position(|a| a.expr == *e || a.read == *e) {
            return Some(LinExpr::var(self.atom(i)));
        }
        let nonneg = |l: &LinExpr| {
            l.is_constant() && l.constant >= Rational::ZERO || ctx.is_some_and(|c| c.entails_ge0(l))
        };
        match &e.kind {
            ExprKind::Const(Value::I(c)) => Some(LinExpr::int(*c as i128)),
            ExprKind::Const(Value::F(_)) => None,
            ExprKind::Var(v) => Some(
                self.held
                    .get(v)
                    .cloned()
                    .unwrap_or_else(|| LinExpr::var(self.var(*v))),
            ),
            ExprKind::Builtin(b) => Some(self.builtin_lin(*b)),
            ExprKind::Unary(Unary::Neg, x) => {
                let l = self.linearize(x, ctx)?.neg();
                (e.ty.is_signed() || l.is_constant() && l.constant.is_zero()).then_some(l)
            }
            ExprKind::Binary(op, l, r) => {
                let a = self.linearize(l, ctx)?;
                let b = self.linearize(r, ctx)?;
                match op {
                    BinOp::Add => Some(a.add(&b)),
                    BinOp::Sub => {
                        let d = a.sub(&b);
                        (l.ty.is_signed() || nonneg(&d)).then_some(d)
                    }
                    BinOp::Mul if a.is_constant() => Some(b.scale(a.constant)),
                    BinOp::Mul if b.is_constant() => Some(a.scale(b.constant)),
                    BinOp::Shl if b.is_constant() && (0..31).contains(&b.constant.num()) => b
                        .constant
                        .is_integer()
                        .then(|| a.scale(Rational::int(1 << b.constant.num()))),
                    _ if a.is_constant() && b.is_constant() => {
                        fold_constants(*op, a.constant, b.constant, e.ty.is_signed())
                            .map(LinExpr::int)
                    }
                    _ => None,
                }
            }
            ExprKind::Convert { value, .. } => {
                if value.ty.is_float() || e.ty == Scalar::Bool {
                    return None;
                }
                let l = self.linearize(value, ctx)?;
                // A negative value converted to an unsigned type wraps.
                (e.ty.is_signed() || !value.ty.is_signed() || nonneg(&l)).then_some(l)
            }
            // Of two constants: folded (over inputs it is an atom).
            ExprKind::Call(f @ (MathFn::Min | MathFn::Max), args) => {
                let [a, b] = &args[..] else {
                    return None;
                };
                let (a, b) = (self.linearize(a, ctx)?, self.linearize(b, ctx)?);
                if !a.is_constant() || !b.is_constant() {
                    return None;
                }
                let larger = a.constant > b.constant;
                Some(if larger == (*f == MathFn::Max) { a } else { b })
            }
            _ => None,
        }
    }

    /// Facts `f ≥ 0` holding in every lane where `cond` is true (`negate`:
    /// false): the linear comparisons among its conjuncts.
    pub fn cond_facts(&self, cond: &Expr, ctx: Option<&Constraints>, negate: bool) -> Vec<LinExpr> {
        match (&cond.kind, negate) {
            (ExprKind::And(a, b), false) | (ExprKind::Or(a, b), true) => {
                let mut f = self.cond_facts(a, ctx, negate);
                f.extend(self.cond_facts(b, ctx, negate));
                f
            }
            (ExprKind::Unary(Unary::Not, x), n) => self.cond_facts(x, ctx, !n),
            (ExprKind::Convert { value, .. }, n) if !value.ty.is_float() => {
                self.cond_facts(value, ctx, n)
            }
            (ExprKind::Binary(op, l, r), n) if op.is_comparison() => {
                if l.ty.is_float() {
                    return Vec::new();
                }
                let op = if n { negated(*op) } else { *op };
                let (Some(a), Some(b)) = (self.linearize(l, ctx), self.linearize(r, ctx)) else {
                    return self.split_extreme(op, l, r, ctx);
                };
                // Two constants (a condition on the launch's known
                // dimensions, `blockDim.x % 32 == 0`): decided here, so
                // that the side it rules out is unreachable, `≠` too.
                if let (true, true) = (a.is_constant(), b.is_constant()) {
                    return match holds(op, a.constant, b.constant) {
                        Some(false) => vec![LinExpr::int(-1)],
                        _ => Vec::new(),
                    };
                }
                let one = LinExpr::int(1);
                match op {
                    BinOp::Lt => vec![b.sub(&a).sub(&one)],
                    BinOp::Le => vec![b.sub(&a)],
                    BinOp::Gt => vec![a.sub(&b).sub(&one)],
                    BinOp::Ge => vec![a.sub(&b)],
                    BinOp::Eq => vec![a.sub(&b), b.sub(&a)],
                    _ => Vec::new(),
                }
            }
            // `if (x)` / `if (!x)` on an integer: x ≠ 0 / x = 0.
            (_, true) if !cond.ty.is_float() => match self.linearize(cond, ctx) {
                Some(l) => vec![l.clone(), l.neg()],
                None => Vec::new(),
            },
            _ => Vec::new(),
        }
    }
}

impl Symbols {
    /// Facts of `l op r` (`op` a comparison) where a side has no linear
    /// form but is a minimum or a maximum of linear operands. On the
    /// larger side a minimum, or on the smaller one a maximum, splits:
    /// `x < min(a, b)` is `x < a && x < b`, and `max(a, b) <= x` is `a <= x
    /// && b <= x` (a loop `j < min(i, 64)` over a counter). The other
    /// orientations are disjunctions; they still give what the operands'
    /// bounds under `ctx` imply ([`Symbols::extreme_envelope`]).
    fn split_extreme(
        &self,
        op: BinOp,
        l: &Expr,
        r: &Expr,
        ctx: Option<&Constraints>,
    ) -> Vec<LinExpr> {
        // `l > r` is `r < l`: the smaller side first.
        let (op, l, r) = match op {
            BinOp::Lt | BinOp::Le => (op, l, r),
            BinOp::Gt => (BinOp::Lt, r, l),
            BinOp::Ge => (BinOp::Le, r, l),
            _ => return Vec::new(),
        };
        fn operands(e: &Expr, want: MathFn) -> Option<&[Expr]> {
            match &e.kind {
                ExprKind::Call(f, args) if *f == want && args.len() == 2 => {
                    args.iter().all(|x| x.ty == e.ty).then_some(&args[..])
                }
                _ => None,
            }
        }
        // The side to split, and whether it stands on the left.
        let (args, left) = match (operands(r, MathFn::Min), operands(l, MathFn::Max)) {
            (Some(args), _) => (args, false),
            (None, Some(args)) => (args, true),
            (None, None) => return self.extreme_envelope(op, l, r, ctx).unwrap_or_default(),
        };
        let mut f = Vec::new();
        for x in args {
            let (l, r) = if left { (x, r) } else { (l, x) };
            let c = Expr {
                kind: ExprKind::Binary(op, Box::new(l.clone()), Box::new(r.clone())),
                ty: Scalar::Bool,
            };
            f.extend(self.cond_facts(&c, ctx, false));
        }
        f
    }

    /// Facts of `l op r` (`op` is `<` or `<=`) where `r` is a maximum or
    /// `l` a minimum of linear operands `a`, `b` whose bounds under `ctx`
    /// are known, the other side linear. As `max(a, b) = a + b − min(a,
    /// b)`, a maximum is at most `a + b − min(la, lb)` and at most `max(ua,
    /// ub)`; a minimum is at least `a + b − max(ua, ub)` and `min(la, lb)`
    /// (`la`, `ua` the least and largest value of `a`). So `j <= max(16,
    /// c)` with `c ≥ 0` gives `j <= 16 + c`.
    fn extreme_envelope(
        &self,
        op: BinOp,
        l: &Expr,
        r: &Expr,
        ctx: Option<&Constraints>,
    ) -> Option<Vec<LinExpr>> {
        let ctx = ctx?;
        let (max, args, other) = match (&r.kind, &l.kind) {
            (ExprKind::Call(MathFn::Max, args), _) => (true, args, l),
            (_, ExprKind::Call(MathFn::Min, args)) => (false, args, r),
            _ => return None,
        };
        let [a, b] = &args[..] else {
            return None;
        };
        let x = self.linearize(other, Some(ctx))?;
        let (a, b) = (self.linearize(a, Some(ctx))?, self.linearize(b, Some(ctx))?);
        // Each envelope as `(smaller side, larger side)`.
        let mut sides = Vec::new();
        let ((la, ua), (lb, ub)) = (int_bounds(ctx, &a), int_bounds(ctx, &b));
        let sum = a.add(&b);
        if max {
            if let (Some(la), Some(lb)) = (la, lb) {
                let least = if la < lb { la } else { lb };
                sides.push((x.clone(), sum.sub(&LinExpr::constant(least))));
            }
            if let (Some(ua), Some(ub)) = (ua, ub) {
                sides.push((x, LinExpr::constant(if ua > ub { ua } else { ub })));
            }
        } else {
            if let (Some(ua), Some(ub)) = (ua, ub) {
                let most = if ua > ub { ua } else { ub };
                sides.push((sum.sub(&LinExpr::constant(most)), x.clone()));
            }
            if let (Some(la), Some(lb)) = (la, lb) {
                sides.push((LinExpr::constant(if la < lb { la } else { lb }), x));
            }
        }
        let strict = LinExpr::int(i128::from(op == BinOp::Lt));
        Some(
            sides
                .into_iter()
                .map(|(lo, hi)| hi.sub(&lo).sub(&strict))
                .collect(),
        )
    }
}

/// Whether the comparison `a op b` of two constants holds (`None` for an
/// operator that is no comparison).
fn holds(op: BinOp, a: Rational, b: Rational) -> Option<bool> {
    Some(match op {
        BinOp::Lt => a < b,
        BinOp::Le => a <= b,
        BinOp::Gt => a > b,
        BinOp::Ge => a >= b,
        BinOp::Eq => a == b,
        BinOp::Ne => a != b,
        _ => return None,
    })
}

/// The negation of a comparison.
fn negated(op: BinOp) -> BinOp {
    match op {
        BinOp::Lt => BinOp::Ge,
        BinOp::Le => BinOp::Gt,
        BinOp::Gt => BinOp::Le,
        BinOp::Ge => BinOp::Lt,
        BinOp::Eq => BinOp::Ne,
        BinOp::Ne => BinOp::Eq,
        other => other,
    }
}

/// `a op b` for integer constants with C semantics (division and `%`
/// toward zero), where the operator is not linear; `None` when undefined,
/// or for negative operands of an unsigned or bitwise operation.
fn fold_constants(op: BinOp, a: Rational, b: Rational, signed: bool) -> Option<i128> {
    if !a.is_integer() || !b.is_integer() {
        return None;
    }
    let (x, y) = (a.num(), b.num());
    let both_nonneg = x >= 0 && y >= 0;
    if !signed && !both_nonneg {
        return None;
    }
    match op {
        BinOp::Div if y != 0 => Some(x / y),
        BinOp::Rem if y != 0 => Some(x % y),
        BinOp::Shr if (0..31).contains(&y) && x >= 0 => Some(x >> y),
        BinOp::BitAnd if both_nonneg => Some(x & y),
        BinOp::BitOr if both_nonneg => Some(x | y),
        BinOp::BitXor if both_nonneg => Some(x ^ y),
        _ => None,
    }
}
