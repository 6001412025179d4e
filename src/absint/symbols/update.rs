//! What an assignment tells about the new value of its variable.

use std::collections::BTreeSet;

use crate::absint::linear::{Constraints, LinExpr, Sym, MAX_MAGNITUDE};
use crate::cuda::ast::BinOp;
use crate::ir::{Expr, ExprKind, MathFn, Scalar, VarId};
use crate::launch::{MAX_BLOCK_THREADS, MAX_GRID_DIM};
use crate::poly::Rational;

use super::{AtomShape, SymKind, Symbols};

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
            && (cx.entails_ge0(&high.sub(l))
                || self.extreme(l, true).is_some_and(|m| m <= hi)
                || self.below_a_large_max(l, &cx, hi))
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
        let inputs: Vec<(Sym, i128)> = cx
            .vars()
            .into_iter()
            .filter(|&p| p < self.len() && self.is_input(p))
            .filter_map(|p| Some((p, self.largest(p)?)))
            .collect();
        l.coeffs
            .iter()
            .filter(|(_, c)| **c == Rational::ONE)
            .any(|(&s, _)| {
                let d = l.sub(&LinExpr::var(s));
                if !cx.entails_ge0(&d) {
                    return false;
                }
                // From the form itself, or from an atom above it (a local
                // `stride` holding `blockDim.x * gridDim.x`).
                let atoms = cx
                    .vars()
                    .into_iter()
                    .filter(|&a| a < self.len() && matches!(self.kind(a), SymKind::Atom(_)))
                    .filter(|&a| cx.entails_ge0(&LinExpr::var(a).sub(&d)))
                    .filter_map(|a| self.extreme(&LinExpr::var(a), true));
                let Some(d_max) = cx
                    .entails_ge0(&slack.sub(&d))
                    .then_some(MAX_MAGNITUDE)
                    .into_iter()
                    .chain(self.extreme(&d, true))
                    .chain(atoms)
                    .min()
                else {
                    return false;
                };
                inputs.iter().any(|&(p, m)| {
                    m <= hi - d_max && cx.entails_ge0(&LinExpr::var(p).sub(&LinExpr::var(s)))
                })
            })
    }

    /// The largest (`upper`) or least value linear form `l` can take
    /// whatever the program does, from the ranges of its symbols
    /// ([`Symbols::range_facts`]) and, for a product of such symbols that
    /// cannot wrap around, their products (a product of launch dimensions
    /// is at most `1024 · (2^31 − 1)`, beyond the linear domain's
    /// magnitudes). `None` when some symbol's range is not known.
    fn extreme(&self, l: &LinExpr, upper: bool) -> Option<i128> {
        if !l.constant.is_integer() {
            return None;
        }
        let mut total = l.constant.num();
        for (&s, &c) in &l.coeffs {
            if !c.is_integer() || s >= self.len() {
                return None;
            }
            let (lo, hi) = self.sym_range(s)?;
            let at = if (c > Rational::ZERO) == upper {
                hi
            } else {
                lo
            };
            total = total.checked_add(c.num().checked_mul(at)?)?;
        }
        Some(total)
    }

    /// The least and largest value of symbol `s` (see [`Symbols::extreme`]).
    fn sym_range(&self, s: Sym) -> Option<(i128, i128)> {
        if let SymKind::Atom(i) = self.kind(s) {
            let atom = &self.atoms[i];
            let AtomShape::Product(a, b) = &atom.shape else {
                return None;
            };
            let (la, lb) = (self.extreme(a, false)?, self.extreme(b, false)?);
            let top = self.extreme(a, true)?.checked_mul(self.extreme(b, true)?)?;
            let (_, type_max) = atom.expr.ty.range()?;
            return (la >= 0 && lb >= 0 && top <= type_max).then_some((la * lb, top));
        }
        let facts = self.range_facts(s);
        let [low, high] = facts.as_slice() else {
            return None;
        };
        Some((-low.constant.num(), high.constant.num()))
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

    /// The largest `gridDim.d`: the hardware's `2^31 − 1`, or the maximum
    /// assumed of it when lower.
    fn largest_grid(&self, d: u8) -> i128 {
        let hw = i128::from(MAX_GRID_DIM[0]);
        self.grid_max[d as usize].map_or(hw, |m| m.min(hw))
    }

    /// The values symbol `s` can take whatever the program does: its
    /// type's range (within an assumed range, if any), or the hardware's
    /// launch limits (a block of at most [`MAX_BLOCK_THREADS`] threads a
    /// side, a grid of at most `2^31 − 1` blocks a side, or an assumed
    /// smaller one: the x limits, which also hold of y and z).
    pub(super) fn range_facts(&self, s: Sym) -> Vec<LinExpr> {
        let x = LinExpr::var(s);
        let between = |lo: i128, hi: i128| {
            vec![
                x.sub(&LinExpr::constant(Rational::int(lo))),
                LinExpr::constant(Rational::int(hi)).sub(&x),
            ]
        };
        match self.kind(s) {
            SymKind::Var(v) => match self.types[v].range() {
                Some((lo, _)) => {
                    let least = self.assumed_min(v).map_or(lo, |m| m.max(lo));
                    between(least, self.largest(s).unwrap_or(lo))
                }
                None => Vec::new(),
            },
            SymKind::BlockDim(_) => between(1, i128::from(MAX_BLOCK_THREADS)),
            SymKind::ThreadIdx(_) => between(0, i128::from(MAX_BLOCK_THREADS) - 1),
            SymKind::GridDim(d) => between(1, self.largest_grid(d)),
            SymKind::BlockIdx(d) => between(0, self.largest_grid(d) - 1),
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
