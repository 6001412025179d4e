//! Atoms: the nonlinear integer expressions over inputs that are symbols
//! of their own, and the facts their definitions give.
//!
//! An atom may read a local that *holds* an expression over inputs: one
//! assigned once, before every read of it, a value fixed for the launch
//! (`int m = n; … i < m / 4`, or a device function's parameter after
//! inlining). Read through such locals, `m / 4` is the atom `n / 4`. A
//! local assigned twice, in a branch and read after it, or read before
//! its assignment holds nothing here, and an expression reading it is no
//! atom; nor does a local whose expression, read through the locals it
//! reads, would pass [`MAX_HELD_NODES`] nodes (a chain of locals each reading
//! the previous one twice doubles it at every link).

use std::collections::HashMap;

use crate::absint::defs::read_after_single_def;
use crate::absint::linear::{Constraints, LinExpr};
use crate::cuda::ast::BinOp;
use crate::ir::{Builtin, Expr, ExprKind, Kernel, MathFn, Scalar, Stmt, Unary, Value, VarId};
use crate::poly::Rational;

use super::{int_bounds, AtomShape, Symbols};

impl Symbols {
    /// The shape of `e` if it is an atom: a nonlinear integer expression
    /// over inputs whose linear operands are known.
    pub(super) fn atom_shape(&self, e: &Expr) -> Option<AtomShape> {
        if e.ty.is_float() || !self.over_inputs(e) {
            return None;
        }
        if let ExprKind::Call(f @ (MathFn::Min | MathFn::Max), args) = &e.kind {
            return self.extreme_shape(*f == MathFn::Max, args, e.ty);
        }
        let ExprKind::Binary(op, l, r) = &e.kind else {
            return None;
        };
        let a = self.linearize(l, None)?;
        let b = self.linearize(r, None)?;
        let unsigned = !l.ty.is_signed();
        let c = (b.is_constant() && b.constant.is_integer()).then(|| b.constant.num());
        match (op, c) {
            (BinOp::Div, Some(c)) if c > 0 && !a.is_constant() => Some(AtomShape::Div {
                a,
                c,
                floor: false,
                unsigned,
            }),
            (BinOp::Shr, Some(k)) if (0..31).contains(&k) && !a.is_constant() => {
                Some(AtomShape::Div {
                    a,
                    c: 1 << k,
                    floor: true,
                    unsigned,
                })
            }
            (BinOp::Rem, Some(c)) if c > 0 && !a.is_constant() => {
                Some(AtomShape::Rem { a, c, unsigned })
            }
            (BinOp::BitAnd, Some(m)) if m >= 0 && !a.is_constant() => Some(AtomShape::Mask { m }),
            (BinOp::Mul, _) if !a.is_constant() && !b.is_constant() => {
                Some(AtomShape::Product(a, b))
            }
            _ => None,
        }
    }

    /// The shape of `max(l, r)` (`max`) or `min(l, r)` of type `ty` over
    /// linear operands, not both constant (a constant folds).
    fn extreme_shape(&self, max: bool, args: &[Expr], ty: Scalar) -> Option<AtomShape> {
        let [l, r] = args else {
            return None;
        };
        if l.ty != ty || r.ty != ty {
            return None;
        }
        let a = self.linearize(l, None)?;
        let b = self.linearize(r, None)?;
        if a.is_constant() && b.is_constant() {
            return None;
        }
        // A maximum no bound can name would have no upper bound over the
        // inputs: no atom, and the loop up to it says its condition bounds
        // no counter.
        let named = self.nameable(l, ty) && self.nameable(r, ty);
        (named || !max).then_some(AtomShape::Extreme {
            max,
            a,
            b,
            unsigned: !ty.is_signed(),
            named,
        })
    }

    /// Whether operand `x` of a minimum or maximum of type `ty` prints as
    /// an expression `bound::limit` evaluates exactly: a constant, an
    /// input, a launch dimension (converted to `int` it keeps its value,
    /// at most 2^31 − 1), or, of a signed type (where C's arithmetic does
    /// not wrap: an overflow is undefined behaviour the analysis assumes
    /// away), a sum, difference, product, quotient by a positive constant
    /// or shift by a constant of such operands (`n / 4`, `2 * n`, `n * w`,
    /// `m - 1`, `n << 2`, `n >> 1`). Of an unsigned type, whose sums,
    /// differences, products and left shifts wrap around, only a quotient
    /// by a positive constant or a right shift of such an operand (`n /
    /// 4u`, `n >> 1`): it never wraps ([`Symbols::unnamed_operand`] says
    /// why another is not).
    fn nameable(&self, x: &Expr, ty: Scalar) -> bool {
        self.unnamed_operand(x, ty).is_none()
    }

    /// Why operand `x` of a minimum or maximum of type `ty` is not
    /// [`Symbols::nameable`]: the subexpression that is not, and what it
    /// is; `None` where it is.
    pub(crate) fn unnamed_operand<'e>(
        &self,
        x: &'e Expr,
        ty: Scalar,
    ) -> Option<(&'e Expr, &'static str)> {
        let launch_dim = |x: &Expr| {
            matches!(
                x.kind,
                ExprKind::Builtin(Builtin::BlockDim(_) | Builtin::GridDim(_))
            )
        };
        // A constant, perhaps converted (`n / 4` of an unsigned `n`
        // converts the 4): a nonnegative one keeps its value.
        let constant = |b: &Expr| match &b.kind {
            ExprKind::Const(Value::I(c)) => Some(*c),
            ExprKind::Convert { value, .. } => match value.kind {
                ExprKind::Const(Value::I(c)) if c >= 0 => Some(c),
                _ => None,
            },
            _ => None,
        };
        let count =
            |b: &Expr, bits: u32| constant(b).is_some_and(|c| (0..i64::from(bits)).contains(&c));
        let bits = ty.size() * 8;
        let same = |a: &Expr, b: &Expr| a.ty == ty && b.ty == ty;
        match &x.kind {
            ExprKind::Const(Value::I(_)) => None,
            ExprKind::Convert { .. } if constant(x).is_some() => None,
            ExprKind::Var(v) if self.param_input[*v] == Some(true) => None,
            ExprKind::Builtin(_) if launch_dim(x) => None,
            ExprKind::Convert { value, .. }
                if launch_dim(value)
                    || ty.is_signed()
                        && value.ty.widens_to(x.ty)
                        && matches!(value.kind, ExprKind::Var(_)) =>
            {
                self.unnamed_operand(value, ty)
            }
            ExprKind::Binary(op @ (BinOp::Div | BinOp::Shr), a, b)
                if a.ty == ty
                    && match op {
                        BinOp::Div => b.ty == ty && constant(b).is_some_and(|c| c > 0),
                        _ => count(b, bits),
                    } =>
            {
                self.unnamed_operand(a, ty)
            }
            ExprKind::Binary(BinOp::Add | BinOp::Sub | BinOp::Mul, a, b)
                if ty.is_signed() && same(a, b) =>
            {
                self.unnamed_operand(a, ty)
                    .or_else(|| self.unnamed_operand(b, ty))
            }
            ExprKind::Binary(BinOp::Shl, a, b) if ty.is_signed() && a.ty == ty && count(b, bits) => {
                self.unnamed_operand(a, ty)
            }
            // Unsigned: a sum, product or left shift whose operands are
            // too small for it to wrap (`n / 3 + 1`) is read as C reads
            // it; any other may wrap around.
            ExprKind::Binary(BinOp::Add | BinOp::Mul, a, b)
                if same(a, b) && unsigned_most(x, ty).is_some() =>
            {
                self.unnamed_operand(a, ty)
                    .or_else(|| self.unnamed_operand(b, ty))
            }
            ExprKind::Binary(BinOp::Shl, a, _) if unsigned_most(x, ty).is_some() => {
                self.unnamed_operand(a, ty)
            }
            ExprKind::Binary(BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Shl, ..) if !ty.is_signed() => {
                Some((x, "an unsigned sum, difference, product or left shift, which may wrap around"))
            }
            ExprKind::Var(_) => Some((x, "a local or an input the kernel assigns")),
            ExprKind::Load(_) => Some((x, "a value read from memory")),
            ExprKind::Convert { value, .. } if matches!(value.kind, ExprKind::Load(_)) => {
                Some((x, "a value read from memory"))
            }
            _ => Some((
                x,
                "an operation a limit is not evaluated through (it reads constants, inputs and launch dimensions combined by `+`, `-`, `*`, `/` by a positive constant and shifts by a constant)",
            )),
        }
    }

    /// A maximum that a loop condition `cond` of `k` compares with (read
    /// through the locals holding values) and that no bound can name: its
    /// text, the text of its operand that is not
    /// [`Symbols::nameable`], and why (`max(n%7,8)`, `n%7`, "an operation
    /// …"). `None` where there is none.
    pub fn unnamed_maximum(
        &self,
        k: &Kernel,
        cond: &Expr,
    ) -> Option<(String, String, &'static str)> {
        let read = substitute(cond, &self.held_values(k));
        let mut found = None;
        read.visit(&mut |e| match &e.kind {
            ExprKind::Call(MathFn::Max, args) if found.is_none() && !e.ty.is_float() => {
                found = args
                    .iter()
                    .find_map(|a| self.unnamed_operand(a, e.ty))
                    .map(|(x, why)| (self.expr_text(k, e), self.expr_text(k, x), why));
            }
            _ => {}
        });
        found
    }

    /// The locals of `k` that hold an expression over inputs (see the
    /// module's documentation), with that expression read through the
    /// locals it reads in turn, converted to the local's type.
    ///
    /// A held value reads only inputs and locals whose assignment runs
    /// before its own, earlier in program order: one pass in that order
    /// resolves a chain of copies of any length. A value past
    /// [`MAX_HELD_NODES`] nodes (`v1 = v0 + v0; v2 = v1 + v1; …` doubles
    /// each time) holds nothing.
    pub(super) fn held_values(&self, k: &Kernel) -> HashMap<VarId, Expr> {
        let defs = read_after_single_def(k);
        let mut held = HashMap::new();
        crate::ir::visit_stmts(&k.body, &mut |s| {
            let Stmt::Assign { var, .. } = s else {
                return;
            };
            let Some(&value) = defs.get(var) else {
                return;
            };
            if held.contains_key(var) {
                return;
            }
            let ty = k.vars[*var].ty;
            let x = substitute(value, &held);
            if ty.is_float() || !keeps_value(&x, ty) || !self.over_inputs(&x) {
                return;
            }
            if nodes(&x) > MAX_HELD_NODES {
                return;
            }
            let x = if x.ty == ty {
                x
            } else {
                Expr {
                    kind: ExprKind::Convert {
                        value: Box::new(x),
                        explicit: false,
                    },
                    ty,
                }
            };
            held.insert(*var, x);
        });
        held
    }

    /// Whether every leaf of `e` is a constant, an input parameter or a
    /// launch dimension, with no loads, calls or floating point.
    fn over_inputs(&self, e: &Expr) -> bool {
        if e.ty.is_float() {
            return false;
        }
        match &e.kind {
            ExprKind::Const(Value::I(_)) => true,
            ExprKind::Var(v) => self.param_input[*v] == Some(true),
            ExprKind::Builtin(b) => !matches!(b, Builtin::ThreadIdx(_)),
            ExprKind::Unary(_, x) | ExprKind::Convert { value: x, .. } => self.over_inputs(x),
            ExprKind::Binary(_, a, b) => self.over_inputs(a) && self.over_inputs(b),
            ExprKind::Call(MathFn::Min | MathFn::Max, args) => {
                args.iter().all(|a| self.over_inputs(a))
            }
            _ => false,
        }
    }

    pub(super) fn expr_text(&self, k: &Kernel, e: &Expr) -> String {
        let dim = |d: &u8| ["x", "y", "z"][*d as usize];
        match &e.kind {
            ExprKind::Const(v) => format!("{}", v.as_i64()),
            ExprKind::Var(v) => k.vars[*v].name.clone(),
            ExprKind::Builtin(b) => match b {
                Builtin::ThreadIdx(d) => format!("threadIdx.{}", dim(d)),
                Builtin::BlockIdx(d) => format!("blockIdx.{}", dim(d)),
                Builtin::BlockDim(d) => format!("blockDim.{}", dim(d)),
                Builtin::GridDim(d) => format!("gridDim.{}", dim(d)),
                Builtin::WarpSize => "warpSize".into(),
            },
            ExprKind::Convert { value, .. } => self.expr_text(k, value),
            ExprKind::Unary(Unary::Neg, x) => format!("-{}", self.expr_text(k, x)),
            ExprKind::Binary(op, a, b) => {
                let side = |x: &Expr| match x.kind {
                    ExprKind::Binary(..) => format!("({})", self.expr_text(k, x)),
                    _ => self.expr_text(k, x),
                };
                format!("{}{}{}", side(a), op.symbol(), side(b))
            }
            // As `bound::limit` reads a derived input: `max(n,64)`.
            ExprKind::Call(f @ (MathFn::Min | MathFn::Max), args) => {
                let args: Vec<String> = args.iter().map(|a| self.expr_text(k, a)).collect();
                let f = if *f == MathFn::Max { "max" } else { "min" };
                format!("{f}({})", args.join(","))
            }
            _ => "…".into(),
        }
    }
}

/// The largest value an unsigned expression `x` of type `ty` takes, over
/// constants, inputs and launch dimensions (at most 2^31 − 1) combined by
/// `+`, `*`, `<<` by a constant, `/` by a positive constant and `>>`, when
/// no operation in it wraps around past `ty`'s largest value; `None`
/// where one may (`n + 3`, `2 * n`), or for a signed `ty` or another
/// operation (`n - 1` of `n = 0` wraps).
fn unsigned_most(x: &Expr, ty: Scalar) -> Option<i128> {
    let (_, top) = ty.range().filter(|_| !ty.is_signed() && x.ty == ty)?;
    let constant = |e: &Expr| match &e.kind {
        ExprKind::Const(Value::I(c)) => Some(i128::from(*c)),
        ExprKind::Convert { value, .. } => match value.kind {
            ExprKind::Const(Value::I(c)) => Some(i128::from(c)),
            _ => None,
        },
        _ => None,
    };
    let most = match &x.kind {
        _ if constant(x).is_some() => constant(x).filter(|c| *c >= 0)?,
        ExprKind::Var(_) => top,
        ExprKind::Builtin(Builtin::BlockDim(_) | Builtin::GridDim(_)) => i128::from(i32::MAX),
        ExprKind::Convert { value, .. }
            if matches!(
                value.kind,
                ExprKind::Builtin(Builtin::BlockDim(_) | Builtin::GridDim(_))
            ) =>
        {
            i128::from(i32::MAX)
        }
        ExprKind::Binary(op, a, b) => {
            let k = constant(b).filter(|k| (0..i128::from(ty.size() * 8)).contains(k));
            match op {
                BinOp::Add => unsigned_most(a, ty)?.checked_add(unsigned_most(b, ty)?)?,
                BinOp::Mul => unsigned_most(a, ty)?.checked_mul(unsigned_most(b, ty)?)?,
                BinOp::Div => unsigned_most(a, ty)? / k.filter(|k| *k > 0)?,
                BinOp::Shr => unsigned_most(a, ty)? >> k?,
                BinOp::Shl => unsigned_most(a, ty)?.checked_mul(1i128.checked_shl(k? as u32)?)?,
                _ => return None,
            }
        }
        _ => return None,
    };
    (most <= top).then_some(most)
}

/// Largest expression a local holds (see [`Symbols::held_values`]).
const MAX_HELD_NODES: usize = 64;

/// Number of nodes of `e`.
fn nodes(e: &Expr) -> usize {
    let mut n = 0;
    e.visit(&mut |_| n += 1);
    n
}

/// `e` with every local of `held` replaced by the expression it holds.
pub(crate) fn substitute(e: &Expr, held: &HashMap<VarId, Expr>) -> Expr {
    let kind = match &e.kind {
        ExprKind::Var(v) => match held.get(v) {
            Some(x) => return x.clone(),
            None => e.kind.clone(),
        },
        ExprKind::Unary(op, x) => ExprKind::Unary(*op, Box::new(substitute(x, held))),
        ExprKind::Convert { value, explicit } => ExprKind::Convert {
            value: Box::new(substitute(value, held)),
            explicit: *explicit,
        },
        ExprKind::Binary(op, a, b) => ExprKind::Binary(
            *op,
            Box::new(substitute(a, held)),
            Box::new(substitute(b, held)),
        ),
        // A loop's limit may be `min`/`max` of held values.
        ExprKind::Call(f, args) => {
            ExprKind::Call(*f, args.iter().map(|a| substitute(a, held)).collect())
        }
        // Atoms are binary operations over conversions, unary operations
        // and leaves: nothing else needs reading through.
        _ => e.kind.clone(),
    };
    Expr { kind, ty: e.ty }
}

/// Whether assigning `e` to a variable of type `ty` keeps its value: every
/// value of `e`'s type is one of `ty`, and a conversion on top of `e`
/// keeps the value it converts likewise.
fn keeps_value(e: &Expr, ty: Scalar) -> bool {
    let inner = match &e.kind {
        ExprKind::Convert { value, .. } => value.ty.widens_to(e.ty),
        _ => true,
    };
    inner && e.ty.widens_to(ty)
}

/// Facts `f ≥ 0` bounding atom `q` by its definition, given the facts
/// `c` known about its operands. `wraps_past`: the largest value of the
/// atom's type where it is unsigned, past which a product wraps around (a
/// product that may exceed it is then only known to lie in its range).
pub(super) fn atom_facts(
    shape: &AtomShape,
    q: &LinExpr,
    c: &Constraints,
    wraps_past: Option<i128>,
) -> Vec<LinExpr> {
    match shape {
        AtomShape::Div {
            a,
            c,
            floor,
            unsigned,
        } => {
            let cq = q.scale(Rational::int(*c));
            let slack = LinExpr::int(c - 1);
            let mut f = vec![
                // a − c·q ≤ c − 1 and c·q − a ≤ c − 1
                slack.add(&cq).sub(a),
                slack.add(a).sub(&cq),
            ];
            if *floor || *unsigned {
                // Rounded down (or a nonnegative dividend): c·q ≤ a.
                f.push(a.sub(&cq));
            }
            if *unsigned {
                f.push(q.clone());
            }
            f
        }
        AtomShape::Rem { c, unsigned, .. } => {
            let top = LinExpr::int(c - 1).sub(q);
            let bottom = if *unsigned {
                q.clone()
            } else {
                q.add(&LinExpr::int(c - 1))
            };
            vec![top, bottom]
        }
        AtomShape::Mask { m } => vec![q.clone(), LinExpr::int(*m).sub(q)],
        AtomShape::Product(a, b) => product_facts(a, b, q, c, wraps_past),
        AtomShape::Extreme {
            max,
            a,
            b,
            unsigned,
            ..
        } => extreme_facts(*max, a, b, q, c, *unsigned),
    }
}

/// The facts of atom `q = max(a, b)` (`max`) or `q = min(a, b)` (see
/// [`atom_facts`]): `q` lies on its side of both operands; from the
/// operands' bounds under `c`, the maximum is at most `a + b − min(la,
/// lb)` and `max(ua, ub)`, the minimum at least `a + b − max(ua, ub)`
/// and `min(la, lb)` (as `max(a, b) + min(a, b) = a + b`). An unsigned
/// one is never negative.
fn extreme_facts(
    max: bool,
    a: &LinExpr,
    b: &LinExpr,
    q: &LinExpr,
    c: &Constraints,
    unsigned: bool,
) -> Vec<LinExpr> {
    // `above.sub(below) ≥ 0`, oriented for the maximum; the minimum is
    // the maximum of the negated operands.
    let toward = |x: &LinExpr| if max { x.clone() } else { x.neg() };
    let (qq, aa, bb) = (toward(q), toward(a), toward(b));
    let mut f = vec![qq.sub(&aa), qq.sub(&bb)];
    let ((la, ua), (lb, ub)) = (int_bounds(c, &aa), int_bounds(c, &bb));
    if let (Some(la), Some(lb)) = (la, lb) {
        let least = if la < lb { la } else { lb };
        f.push(aa.add(&bb).sub(&LinExpr::constant(least)).sub(&qq));
    }
    if let (Some(ua), Some(ub)) = (ua, ub) {
        let most = if ua > ub { ua } else { ub };
        f.push(LinExpr::constant(most).sub(&qq));
    }
    if unsigned {
        f.push(q.clone());
    }
    f
}

/// The facts of atom `q = a·b` (see [`atom_facts`]): McCormick's envelope
/// where both factors are nonnegative, from their bounds under `c`.
fn product_facts(
    a: &LinExpr,
    b: &LinExpr,
    q: &LinExpr,
    c: &Constraints,
    wraps_past: Option<i128>,
) -> Vec<LinExpr> {
    let ((la, ua), (lb, ub)) = (int_bounds(c, a), int_bounds(c, b));
    let nonneg = |x: Option<Rational>| x.filter(|x| *x >= Rational::ZERO);
    let (la, lb) = (nonneg(la), nonneg(lb));
    if let Some(hi) = wraps_past {
        let highest = la.and(lb).and(ua.zip(ub)).map(|(ua, ub)| ua * ub);
        if highest.is_none_or(|h| h > Rational::int(hi)) {
            // The product may wrap around: only its type's range is known.
            return vec![q.clone(), LinExpr::int(hi).sub(q)];
        }
    }
    let (Some(la), Some(lb)) = (la, lb) else {
        return Vec::new();
    };
    let corner = |x: Rational, y: Rational| {
        // x·b + y·a − x·y: equal to q at the corner (a, b) = (y, x).
        b.scale(x).add(&a.scale(y)).sub(&LinExpr::constant(x * y))
    };
    // a ≥ la and b ≥ lb give q = a·b ≥ la·b + lb·a − la·lb.
    let mut f = vec![q.sub(&corner(la, lb))];
    if let (Some(ua), Some(ub)) = (ua, ub) {
        // a ≤ ua, b ≥ lb give q ≤ ua·b + lb·a − ua·lb; a ≥ la, b ≤ ub give
        // q ≤ la·b + ub·a − la·ub.
        f.push(corner(ua, lb).sub(q));
        f.push(corner(la, ub).sub(q));
    }
    f
}
