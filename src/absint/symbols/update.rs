//! What an assignment tells about the new value of its variable.

use std::collections::BTreeSet;

use crate::absint::linear::{Constraints, LinExpr, Sym, MAX_MAGNITUDE};
use crate::cuda::ast::BinOp;
use crate::ir::{Expr, ExprKind, MathFn, Scalar, VarId};
use crate::poly::Rational;

use super::{SymKind, Symbols};

/// The symbol standing for an assigned variable's new value in an
/// [`Update::Relation`].
pub const NEW: Sym = u32::MAX - 1;

/// What an assignment `x := e` tells about the new value of `x`, over the
/// state before it.
#[derive(Clone, Debug, PartialEq)]
pub enum Update {
    /// The new value is this linear form.
    Linear(LinExpr),
    /// Facts `f ≥ 0` relating the new value ([`NEW`]) to the state before:
    /// `2·NEW ≤ s ≤ 2·NEW + 1` for `s >>= 1`, the hull of both sides for
    /// `c ? a : b`, at least the range of the variable's type.
    Relation(Vec<LinExpr>),
}

impl Symbols {
    /// What `var := value` tells about the new value, given the facts `ctx`
    /// before it.
    ///
    /// The variable's type is modelled: a value that may not fit an
    /// unsigned type or one narrower than `int` (where it would wrap
    /// around, as `unsigned char c = c + 100` does past 255) tells only
    /// the type's range. Signed `int` and wider are assumed not to
    /// overflow (undefined behaviour, which the simulator reports).
    pub fn update(&self, var: VarId, value: &Expr, ctx: &Constraints) -> Update {
        if !self.is_int_var(var) {
            return Update::Relation(Vec::new());
        }
        let new = LinExpr::var(NEW);
        let typed: Vec<LinExpr> = self
            .type_facts(var)
            .into_iter()
            .map(|f| f.substitute(self.var(var), &new))
            .collect();
        let ty = self.types[var];
        match self.unwrapped_update(value, ctx) {
            Update::Linear(l) if self.fits(ty, &l, ctx, &[]) => Update::Linear(l),
            Update::Linear(_) => Update::Relation(typed),
            Update::Relation(derived) => {
                // A quotient, remainder or mask of a value of a type the
                // variable's holds stays in its range.
                let within = matches!(value.kind, ExprKind::Binary(..))
                    && matches!((value.ty.range(), ty.range()),
                        (Some((a, b)), Some((lo, hi))) if lo <= a && b <= hi);
                if derived.is_empty() || within || self.fits(ty, &new, ctx, &derived) {
                    Update::Relation(typed.into_iter().chain(derived).collect())
                } else {
                    Update::Relation(typed)
                }
            }
        }
    }

    /// Whether `l` (over the state before an assignment, or [`NEW`] with
    /// the facts `about_new`) provably lies in the range of `ty` under
    /// `ctx`, the hardware's launch limits and the ranges of the variables'
    /// types; always for a type that cannot wrap (signed `int` and wider:
    /// overflow is undefined) or is not an integer.
    pub fn fits(&self, ty: Scalar, l: &LinExpr, ctx: &Constraints, about_new: &[LinExpr]) -> bool {
        let Some((lo, hi)) = ty.range() else {
            return true;
        };
        if ty.is_signed() && ty.size() >= 4 {
            return true;
        }
        let mut cx = ctx.clone();
        for f in about_new {
            cx.add_ge0(f.clone());
        }
        let syms: BTreeSet<Sym> = l
            .vars()
            .chain(about_new.iter().flat_map(|f| f.vars()))
            .chain(ctx.vars())
            .filter(|&s| s < self.len())
            .collect();
        for s in syms {
            for f in self.range_facts(s) {
                cx.add_ge0(f);
            }
        }
        let (low, high) = (
            LinExpr::constant(Rational::int(lo)),
            LinExpr::constant(Rational::int(hi)),
        );
        cx.entails_ge0(&l.sub(&low))
            && (cx.entails_ge0(&high.sub(l)) || self.below_a_large_max(l, &cx, hi))
    }

    /// Whether `l ≤ hi` follows for a maximum `hi` beyond the linear
    /// domain's magnitudes ([`MAX_MAGNITUDE`], 2^40: the maxima of 64-bit
    /// types), where `hi − l ≥ 0` itself cannot be stated: from
    /// `l ≤ 2^40`, or from `l = s + d` with `0 ≤ d ≤ 2^40` and `s ≤ p` for
    /// an input `p` whose largest value (its type's, or an assumed one) is
    /// at most `hi − 2^40`.
    fn below_a_large_max(&self, l: &LinExpr, cx: &Constraints, hi: i128) -> bool {
        let slack = LinExpr::constant(Rational::int(MAX_MAGNITUDE));
        if hi <= MAX_MAGNITUDE {
            return false;
        }
        if cx.entails_ge0(&slack.sub(l)) {
            return true;
        }
        let room = hi - MAX_MAGNITUDE;
        let inputs: Vec<Sym> = cx
            .vars()
            .into_iter()
            .filter(|&p| p < self.len() && self.is_input(p))
            .filter(|&p| self.largest(p).is_some_and(|m| m <= room))
            .collect();
        l.coeffs
            .iter()
            .filter(|(_, c)| **c == Rational::ONE)
            .any(|(&s, _)| {
                let d = l.sub(&LinExpr::var(s));
                cx.entails_ge0(&d)
                    && cx.entails_ge0(&slack.sub(&d))
                    && inputs
                        .iter()
                        .any(|&p| cx.entails_ge0(&LinExpr::var(p).sub(&LinExpr::var(s))))
            })
    }

    /// The largest value variable symbol `s` can have: its type's maximum,
    /// or the maximum assumed of it when lower.
    fn largest(&self, s: Sym) -> Option<i128> {
        let SymKind::Var(v) = self.kind(s) else {
            return None;
        };
        let (_, hi) = self.types[v].range()?;
        Some(self.assumed_max(v).map_or(hi, |m| m.min(hi)))
    }

    /// The values symbol `s` can take whatever the program does: its
    /// type's range (below an assumed maximum, if any), or the hardware's launch limits (a block of at most
    /// 1024 threads, a grid of at most `2^31 − 1` blocks a side).
    fn range_facts(&self, s: Sym) -> Vec<LinExpr> {
        let x = LinExpr::var(s);
        let between = |lo: i128, hi: i128| {
            vec![
                x.sub(&LinExpr::constant(Rational::int(lo))),
                LinExpr::constant(Rational::int(hi)).sub(&x),
            ]
        };
        match self.kind(s) {
            SymKind::Var(v) => match self.types[v].range() {
                Some((lo, _)) => between(lo, self.largest(s).unwrap_or(lo)),
                None => Vec::new(),
            },
            SymKind::BlockDim(_) => between(1, 1024),
            SymKind::ThreadIdx(_) => between(0, 1023),
            SymKind::GridDim(_) => between(1, i32::MAX as i128),
            SymKind::BlockIdx(_) => between(0, i32::MAX as i128 - 1),
            SymKind::Atom(_) => Vec::new(),
        }
    }

    /// What `var := value` tells about the new value in unbounded integer
    /// arithmetic: a linear form when there is one, else facts about
    /// [`NEW`].
    pub fn unwrapped_update(&self, value: &Expr, ctx: &Constraints) -> Update {
        let new = LinExpr::var(NEW);
        let mut facts: Vec<LinExpr> = Vec::new();
        if let Some(l) = self.linearize(value, Some(ctx)) {
            return Update::Linear(l);
        }
        let lin = |e: &Expr| self.linearize(e, Some(ctx));
        match &value.kind {
            // A conversion keeps the value when it provably fits the new
            // type (`int lane = threadIdx.x % 32`).
            ExprKind::Convert { value: inner, .. }
                if !inner.ty.is_float() && !value.ty.is_float() && value.ty != Scalar::Bool =>
            {
                if let Update::Relation(derived) = self.unwrapped_update(inner, ctx) {
                    let within = matches!((inner.ty.range(), value.ty.range()),
                        (Some((a, b)), Some((lo, hi))) if lo <= a && b <= hi);
                    if within || self.fits(value.ty, &new, ctx, &derived) {
                        facts = derived;
                    }
                }
            }
            ExprKind::Select(c, a, b) => {
                if let (Some(la), Some(lb)) = (lin(a), lin(b)) {
                    // Each side under its outcome of the condition.
                    let side = |l: &LinExpr, taken: bool| {
                        let mut cx = ctx.clone();
                        for f in self.cond_facts(c, Some(ctx), !taken) {
                            cx.add_ge0(f);
                        }
                        cx.add_eq0(new.sub(l));
                        cx
                    };
                    let (ca, cb) = (side(&la, true), side(&lb, false));
                    facts.extend(ca.join(&cb).facts().iter().cloned());
                }
            }
            ExprKind::Call(f @ (MathFn::Min | MathFn::Max), args) if args.len() == 2 => {
                if let (Some(la), Some(lb)) = (lin(&args[0]), lin(&args[1])) {
                    let (x, y) = if *f == MathFn::Min {
                        (la.sub(&new), lb.sub(&new))
                    } else {
                        (new.sub(&la), new.sub(&lb))
                    };
                    facts.push(x);
                    facts.push(y);
                }
            }
            ExprKind::Binary(op, a, b) => {
                let (Some(la), Some(m)) = (
                    lin(a),
                    lin(b).filter(|l| l.is_constant() && l.constant.is_integer()),
                ) else {
                    return Update::Relation(facts);
                };
                let m = m.constant;
                let nonneg = !a.ty.is_signed() || ctx.entails_ge0(&la);
                let one = Rational::ONE;
                match op {
                    // c·NEW ≤ a ≤ c·NEW + c − 1 (a ≥ 0 or rounding down);
                    // |a − c·NEW| ≤ c − 1 otherwise.
                    BinOp::Div | BinOp::Shr if m > Rational::ZERO || *op == BinOp::Shr => {
                        let c = if *op == BinOp::Shr {
                            if !(0..31).contains(&m.num()) {
                                return Update::Relation(facts);
                            }
                            Rational::int(1 << m.num())
                        } else {
                            m
                        };
                        let cq = new.scale(c);
                        let slack = LinExpr::constant(c - one);
                        facts.push(slack.add(&cq).sub(&la));
                        if nonneg || *op == BinOp::Shr {
                            facts.push(la.sub(&cq));
                        } else {
                            facts.push(slack.add(&la).sub(&cq));
                        }
                    }
                    BinOp::Rem if m > Rational::ZERO => {
                        facts.push(LinExpr::constant(m - one).sub(&new));
                        if nonneg {
                            facts.push(new.clone());
                            facts.push(la.sub(&new));
                        } else {
                            facts.push(new.add(&LinExpr::constant(m - one)));
                        }
                    }
                    BinOp::BitAnd if m >= Rational::ZERO => {
                        facts.push(new.clone());
                        facts.push(LinExpr::constant(m).sub(&new));
                        if nonneg {
                            facts.push(la.sub(&new));
                        }
                    }
                    _ => {}
                }
            }
            _ => {}
        }
        Update::Relation(facts)
    }
}
