//! The encoder: a lane's values as integer linear terms, with the
//! constraints and auxiliary variables that make integer arithmetic,
//! comparisons, logic and selection exact.

use std::collections::HashMap;

use crate::cuda::ast::BinOp;
use crate::ir::{ArrayId, Builtin, Expr, ExprKind, Kernel, Scalar, Unary, Value, VarId, VarKind};
use crate::sim::params::{InitKind, LaunchSpec};
use good_lp::{Constraint, Expression, ProblemVariables, Variable};

use super::term::{div_floor, Term, LARGEST};

/// One lane's state along the path.
#[derive(Clone, Default)]
pub(super) struct Lane {
    pub(super) env: HashMap<VarId, Term>,
    pub(super) guards: Vec<Term>,
}

/// The encoder: variables, constraints, and the launch it reads.
pub(super) struct Enc<'a> {
    pub(super) kernel: &'a Kernel,
    pub(super) spec: &'a LaunchSpec,
    pub(super) pv: ProblemVariables,
    pub(super) cons: Vec<Constraint>,
    /// Values the same in every lane (block index, unknown parameters).
    pub(super) uniform: HashMap<String, Term>,
    /// The first load of each input array in each lane.
    pub(super) loads: Vec<(ArrayId, usize, Variable)>,
    /// `warpSize`.
    pub(super) warp: i128,
    /// Whether a thread index was read.
    pub(super) read_tid: bool,
}

impl<'a> Enc<'a> {
    pub(super) fn fresh(&mut self, lo: i128, hi: i128) -> (Variable, Term) {
        let v = self
            .pv
            .add(good_lp::variable().integer().min(lo as f64).max(hi as f64));
        (
            v,
            Term {
                e: Expression::from(v),
                lo,
                hi,
            },
        )
    }

    /// A free value of type `ty` (0..=1 for floats compared, never used as
    /// an index).
    pub(super) fn free(&mut self, ty: Scalar) -> Term {
        let (lo, hi) = ty.range().unwrap_or((0, 1));
        self.fresh(lo.max(-LARGEST), hi.min(LARGEST)).1
    }

    pub(super) fn binary(&mut self) -> Term {
        self.fresh(0, 1).1
    }

    pub(super) fn push(&mut self, c: Constraint) {
        self.cons.push(c);
    }

    /// `t = c·q + r` with `0 ≤ r < c` (`c > 0`): the floor quotient and
    /// the remainder.
    pub(super) fn floor_div(&mut self, t: &Term, c: i128) -> (Term, Term) {
        if c == 1 {
            return (t.clone(), Term::constant(0));
        }
        if let Some(v) = t.as_const() {
            return (
                Term::constant(div_floor(v, c)),
                Term::constant(v.rem_euclid(c)),
            );
        }
        let (_, q) = self.fresh(div_floor(t.lo, c), div_floor(t.hi, c));
        let r = t.add(&q.scale(c), -1);
        self.push(r.e.clone().geq(0.0));
        self.push(r.e.clone().leq((c - 1) as f64));
        let r = Term {
            lo: 0,
            hi: (c - 1).min(t.hi - c * q.lo),
            ..r
        };
        (q, r)
    }

    /// C's `/` and `%` by a nonzero constant: truncation toward zero.
    pub(super) fn trunc_div(&mut self, t: &Term, c: i128) -> (Term, Term) {
        let (q, r) = if t.lo >= 0 {
            self.floor_div(t, c.abs())
        } else if t.hi <= 0 {
            let (q, r) = self.floor_div(&t.scale(-1), c.abs());
            (q.scale(-1), r.scale(-1))
        } else {
            // s = 1 when t ≥ 0: then 0 ≤ r < |c|, else −|c| < r ≤ 0.
            // t + s·lo ≥ lo: s = 1 gives t ≥ 0 (lo < 0), s = 0 nothing.
            let a = c.abs();
            let s = self.binary();
            self.push((t.e.clone() + s.e.clone() * t.lo as f64).geq(t.lo as f64));
            self.push((t.e.clone() - s.e.clone() * (t.hi + 1) as f64).leq(-1.0));
            // The remainder has the sign of t and is smaller than both |t|
            // and |c|: s = 1 gives 0 ≤ r ≤ hi, s = 0 gives lo ≤ r ≤ 0 (the
            // tight ends keep the relaxation close to the integers).
            let (lo, hi) = ((-(a - 1)).max(t.lo), (a - 1).min(t.hi));
            let (_, q) = self.fresh(-(t.lo.abs() / a), t.hi / a);
            let r = t.add(&q.scale(a), -1);
            self.push((r.e.clone() - s.e.clone() * hi as f64).leq(0.0));
            self.push((r.e.clone() + s.e.clone() * lo as f64).geq(lo as f64));
            let r = Term { lo, hi, ..r };
            (q, r)
        };
        if c < 0 {
            (q.scale(-1), r)
        } else {
            (q, r)
        }
    }

    /// `t` as a value of `ty`: unsigned and narrowing conversions wrap;
    /// a signed result out of range is undefined behaviour (the simulator
    /// stops on it), so it is constrained into range.
    pub(super) fn wrap(&mut self, t: Term, ty: Scalar) -> Term {
        let Some((lo, hi)) = ty.range() else {
            return t;
        };
        if t.lo >= lo && t.hi <= hi {
            return t;
        }
        if ty.is_signed() && ty.size() >= 4 {
            self.push(t.e.clone().geq(lo as f64));
            self.push(t.e.clone().leq(hi as f64));
            return Term {
                lo: t.lo.max(lo),
                hi: t.hi.min(hi),
                ..t
            };
        }
        let m = hi - lo + 1;
        if m > LARGEST {
            return self.free(ty);
        }
        let (_, r) = self.floor_div(&t.add(&Term::constant(lo), -1), m);
        r.add(&Term::constant(lo), 1)
    }

    /// `t & mask` for a constant `mask ≥ 0`: one remainder per run of ones.
    pub(super) fn mask(&mut self, t: &Term, mask: i128) -> Term {
        let mut out = Term::constant(0);
        let mut bit = 0;
        while bit < 64 && (mask >> bit) != 0 {
            if (mask >> bit) & 1 == 0 {
                bit += 1;
                continue;
            }
            let len = (0..).take_while(|k| (mask >> (bit + k)) & 1 == 1).count() as u32;
            let (q, _) = self.floor_div(t, 1 << bit);
            let (_, r) = self.floor_div(&q, 1i128 << len);
            out = out.add(&r.scale(1 << bit), 1);
            bit += len;
        }
        out
    }

    /// 1 when `d < 0`, else 0.
    pub(super) fn negative(&mut self, d: &Term) -> Term {
        if d.hi < 0 {
            return Term::constant(1);
        }
        if d.lo >= 0 {
            return Term::constant(0);
        }
        let z = self.binary();
        // z = 1 → d ≤ −1;  z = 0 → d ≥ 0.
        self.push((d.e.clone() + z.e.clone() * (d.hi + 1) as f64).leq(d.hi as f64));
        self.push((d.e.clone() - z.e.clone() * d.lo as f64).geq(0.0));
        z
    }

    pub(super) fn not(b: &Term) -> Term {
        Term::constant(1).add(b, -1)
    }

    /// `t != 0` as 0/1.
    pub(super) fn truth(&mut self, t: &Term) -> Term {
        if t.lo >= 0 && t.hi <= 1 {
            return t.clone();
        }
        let neg = self.negative(t);
        let pos = self.negative(&t.scale(-1));
        neg.add(&pos, 1)
    }

    pub(super) fn compare(&mut self, op: BinOp, a: &Term, b: &Term) -> Term {
        let lt = |s: &mut Self, x: &Term, y: &Term| s.negative(&x.add(y, -1));
        match op {
            BinOp::Lt => lt(self, a, b),
            BinOp::Gt => lt(self, b, a),
            BinOp::Le => Self::not(&lt(self, b, a)),
            BinOp::Ge => Self::not(&lt(self, a, b)),
            BinOp::Eq | BinOp::Ne => {
                let d = a.add(b, -1);
                let ne = self.truth(&d);
                if op == BinOp::Ne {
                    ne
                } else {
                    Self::not(&ne)
                }
            }
            _ => self.binary(),
        }
    }

    pub(super) fn and(&mut self, a: &Term, b: &Term) -> Term {
        let z = self.binary();
        self.push((z.e.clone() - a.e.clone()).leq(0.0));
        self.push((z.e.clone() - b.e.clone()).leq(0.0));
        self.push((z.e.clone() - a.e.clone() - b.e.clone()).geq(-1.0));
        z
    }

    /// `c ? a : b` for a 0/1 term `c`.
    pub(super) fn select(&mut self, c: &Term, a: &Term, b: &Term) -> Term {
        if let Some(v) = c.as_const() {
            return if v != 0 { a.clone() } else { b.clone() };
        }
        let (lo, hi) = (a.lo.min(b.lo), a.hi.max(b.hi));
        let (_, r) = self.fresh(lo, hi);
        let m = (hi - lo) as f64;
        for (x, on) in [(a, c.clone()), (b, Self::not(c))] {
            // on = 1 → r = x.
            let d = r.add(x, -1);
            self.push((d.e.clone() + on.e.clone() * m).leq(m));
            self.push((d.e.clone() - on.e.clone() * m).geq(-m));
        }
        r
    }

    /// `z·x` for a 0/1 term `z`.
    pub(super) fn gate(&mut self, z: &Term, x: &Term) -> Term {
        let zero = Term::constant(0);
        self.select(z, x, &zero)
    }

    pub(super) fn input_range(&self, array: ArrayId, slot: usize) -> Option<(i128, i128)> {
        let a = &self.kernel.arrays[array];
        let (lo, hi) = a.slot_type(slot).range()?;
        let declared = a.param.and_then(|_| self.spec.arrays.get(&a.name));
        Some(match declared {
            Some(s) if s.init == InitKind::Random => {
                (lo.max(s.min.ceil() as i128), hi.min(s.max.floor() as i128))
            }
            _ => (lo, hi),
        })
    }

    pub(super) fn builtin(&mut self, b: Builtin, tid: &[Term; 3]) -> Term {
        let dim = |v: &[u64], d: u8| v.get(d as usize).copied().unwrap_or(1) as i128;
        match b {
            Builtin::ThreadIdx(d) => {
                self.read_tid = true;
                tid[d as usize % 3].clone()
            }
            Builtin::BlockDim(d) => Term::constant(dim(&self.spec.block, d)),
            Builtin::GridDim(d) => Term::constant(dim(&self.spec.grid, d)),
            Builtin::WarpSize => Term::constant(self.warp),
            Builtin::BlockIdx(d) => {
                let key = format!("blockIdx.{d}");
                if let Some(t) = self.uniform.get(&key) {
                    return t.clone();
                }
                let (_, t) = self.fresh(0, dim(&self.spec.grid, d) - 1);
                self.uniform.insert(key, t.clone());
                t
            }
        }
    }

    pub(super) fn var(&mut self, v: VarId, lane: &Lane) -> Term {
        if let Some(t) = lane.env.get(&v) {
            return t.clone();
        }
        let var = &self.kernel.vars[v];
        let given = match var.kind {
            VarKind::Param(_) => self.spec.args.get(&var.name),
            VarKind::Symbol => self.spec.defines.get(&var.name),
            VarKind::Local => None,
        };
        match (given, var.kind) {
            (Some(x), _) if x.fract() == 0.0 => Term::constant(*x as i128),
            (_, VarKind::Local) => self.free(var.ty),
            _ => {
                let key = var.name.clone();
                if let Some(t) = self.uniform.get(&key) {
                    return t.clone();
                }
                let t = self.free(var.ty);
                self.uniform.insert(key, t.clone());
                t
            }
        }
    }

    /// The value of `e` in lane `l` (`tid`: its thread index).
    pub(super) fn expr(&mut self, e: &Expr, lane: &Lane, l: usize, tid: &[Term; 3]) -> Term {
        let t = self.expr_unwrapped(e, lane, l, tid);
        if t.hi - t.lo > 2 * LARGEST {
            return self.free(e.ty);
        }
        t
    }

    pub(super) fn expr_unwrapped(
        &mut self,
        e: &Expr,
        lane: &Lane,
        l: usize,
        tid: &[Term; 3],
    ) -> Term {
        let ty = e.ty;
        if ty.is_float() {
            return self.free(ty);
        }
        match &e.kind {
            ExprKind::Const(Value::I(v)) => Term::constant(*v as i128),
            ExprKind::Const(Value::F(_)) => self.free(ty),
            ExprKind::Var(v) => self.var(*v, lane),
            ExprKind::Builtin(b) => self.builtin(*b, tid),
            ExprKind::Load(a) => {
                let Some((lo, hi)) = self.input_range(a.array, a.slot) else {
                    return self.free(ty);
                };
                let (v, t) = self.fresh(lo.max(-LARGEST), hi.min(LARGEST));
                let input = self.kernel.arrays[a.array].param.is_some();
                if input && !self.loads.iter().any(|x| x.0 == a.array && x.1 == l) {
                    self.loads.push((a.array, l, v));
                }
                t
            }
            ExprKind::Convert { value, .. } if value.ty.is_float() => self.free(ty),
            ExprKind::Convert { value, .. } => {
                let t = self.expr(value, lane, l, tid);
                if ty == Scalar::Bool {
                    return self.truth(&t);
                }
                self.wrap(t, ty)
            }
            ExprKind::Unary(op, x) => {
                let t = self.expr(x, lane, l, tid);
                match op {
                    Unary::Neg => self.wrap(t.scale(-1), ty),
                    Unary::BitNot => self.wrap(t.scale(-1).add(&Term::constant(1), -1), ty),
                    Unary::Not => {
                        let b = self.truth(&t);
                        Self::not(&b)
                    }
                }
            }
            ExprKind::And(a, b) | ExprKind::Or(a, b) => {
                let x = self.expr(a, lane, l, tid);
                let y = self.expr(b, lane, l, tid);
                let (x, y) = (self.truth(&x), self.truth(&y));
                if matches!(e.kind, ExprKind::And(..)) {
                    self.and(&x, &y)
                } else {
                    let z = self.and(&Self::not(&x), &Self::not(&y));
                    Self::not(&z)
                }
            }
            ExprKind::Select(c, a, b) => {
                let c = self.expr(c, lane, l, tid);
                let c = self.truth(&c);
                let a = self.expr(a, lane, l, tid);
                let b = self.expr(b, lane, l, tid);
                self.select(&c, &a, &b)
            }
            ExprKind::Binary(op, a, b) => {
                if a.ty.is_float() || b.ty.is_float() {
                    return self.free(ty);
                }
                let x = self.expr(a, lane, l, tid);
                let y = self.expr(b, lane, l, tid);
                self.binary_op(*op, &x, &y, ty)
            }
            ExprKind::Call(..) => self.free(ty),
        }
    }

    pub(super) fn binary_op(&mut self, op: BinOp, x: &Term, y: &Term, ty: Scalar) -> Term {
        let (cx, cy) = (x.as_const(), y.as_const());
        match op {
            BinOp::Add => self.wrap(x.add(y, 1), ty),
            BinOp::Sub => self.wrap(x.add(y, -1), ty),
            BinOp::Mul => match (cx, cy) {
                (_, Some(c)) => self.wrap(x.scale(c), ty),
                (Some(c), _) => self.wrap(y.scale(c), ty),
                _ if x.lo >= 0 && x.hi <= 1 => self.gate(x, y),
                _ if y.lo >= 0 && y.hi <= 1 => self.gate(y, x),
                _ => self.free(ty),
            },
            BinOp::Div | BinOp::Rem => match cy {
                Some(c) if c != 0 => {
                    let (q, r) = self.trunc_div(x, c);
                    self.wrap(if op == BinOp::Div { q } else { r }, ty)
                }
                _ => self.free(ty),
            },
            BinOp::Shl => match cy {
                Some(c) if (0..63).contains(&c) => self.wrap(x.scale(1 << c), ty),
                _ => self.free(ty),
            },
            BinOp::Shr => match cy {
                Some(c) if (0..63).contains(&c) => self.floor_div(x, 1 << c).0,
                _ => self.free(ty),
            },
            BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor => {
                let (t, m) = match (cx, cy) {
                    (_, Some(m)) => (x, m),
                    (Some(m), _) => (y, m),
                    _ => return self.free(ty),
                };
                // x & m for m < 0 is x − (x & ~m).
                let and = if m >= 0 {
                    self.mask(t, m)
                } else {
                    let rest = self.mask(t, !m);
                    t.add(&rest, -1)
                };
                let r = match op {
                    BinOp::BitAnd => and,
                    BinOp::BitOr => t.add(&Term::constant(m), 1).add(&and, -1),
                    _ => t.add(&Term::constant(m), 1).add(&and.scale(2), -1),
                };
                self.wrap(r, ty)
            }
            BinOp::Lt | BinOp::Gt | BinOp::Le | BinOp::Ge | BinOp::Eq | BinOp::Ne => {
                self.compare(op, x, y)
            }
            BinOp::And | BinOp::Or => self.free(ty),
        }
    }
}
