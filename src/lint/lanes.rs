//! The elements each lane of a warp accesses, evaluated over the launch
//! shape: an index is `u + o_l`, with `u` the same in every lane (known
//! modulo some number) and `o_l` a known offset per lane. A select
//! (`c == 0 ? c : c - 1`) gives a lane both arms' offsets, since either may
//! be taken. Division and remainder by a positive constant `k` are
//! followed when the shared part is known modulo `k` and every value is
//! nonnegative (a sum of builtins with positive coefficients, plus
//! nonnegative offsets), where C's truncation is floor division. Indices
//! this cannot follow (data, a variable assigned more than once, a product
//! of two lane-dependent values) are left to the affine classification of
//! [`super::coalescing`].
//!
//! A local assigned once is followed through its value, evaluated once per
//! warp however often it is used; a shared part whose polynomial would
//! pass [`super::block_size::MAX_TERMS`] terms or degree
//! [`super::block_size::MAX_DEGREE`], or overflow, is not followed.

use std::cell::RefCell;
use std::collections::HashMap;

use crate::absint::congruence::Cong;
use crate::cuda::ast::BinOp;
use crate::ir::{visit_stmts, Builtin, Expr, ExprKind, Kernel, Stmt, Unary, VarId, VarKind};
use crate::launch::Dims;
use crate::poly::{Poly, Rational};

use super::block_size::{MAX_DEGREE, MAX_TERMS};

/// Most offsets one lane may have (nested selects).
const MAX_ARMS: usize = 4;

/// An index over the lanes of one warp.
#[derive(Clone, Debug, PartialEq)]
pub struct LaneIndex {
    /// What is known of the part every lane shares: its residues.
    pub base: Cong,
    /// … and its value, as a polynomial over the builtins and parameters
    /// (so that a select's arms can be compared).
    sym: Poly,
    /// The offsets each lane may access, per lane of the warp.
    pub offsets: Vec<Vec<i64>>,
}

impl LaneIndex {
    fn uniform(base: Cong, sym: Poly, lanes: usize) -> LaneIndex {
        LaneIndex {
            base,
            sym,
            offsets: vec![vec![0]; lanes],
        }
    }

    fn constant_of(c: i64, lanes: usize) -> LaneIndex {
        LaneIndex::uniform(
            Cong::exact(c),
            Poly::constant(Rational::int(c as i128)),
            lanes,
        )
    }

    fn symbol(name: &str, lanes: usize) -> LaneIndex {
        LaneIndex::uniform(Cong::ANY, Poly::var(name), lanes)
    }

    /// The constant every lane has, when the value is one.
    fn constant(&self) -> Option<i64> {
        let first = *self.offsets.first()?.first()?;
        let same = self.offsets.iter().all(|o| o.iter().all(|&x| x == first));
        same.then(|| self.base.value().map(|b| b + first)).flatten()
    }

    /// Whether every lane has one and the same offset.
    fn lane_free(&self) -> bool {
        let first = self.offsets.first().and_then(|o| o.first()).copied();
        self.offsets
            .iter()
            .all(|o| o.iter().all(|&x| Some(x) == first))
    }

    fn combine(
        self,
        o: LaneIndex,
        base: Cong,
        sym: Poly,
        f: impl Fn(i64, i64) -> Option<i64>,
    ) -> Option<LaneIndex> {
        let mut offsets = Vec::with_capacity(self.offsets.len());
        for (a, b) in self.offsets.iter().zip(&o.offsets) {
            let mut v = Vec::new();
            for &x in a {
                for &y in b {
                    let z = f(x, y)?;
                    if !v.contains(&z) {
                        v.push(z);
                    }
                }
            }
            if v.len() > MAX_ARMS {
                return None;
            }
            offsets.push(v);
        }
        Some(LaneIndex { base, sym, offsets })
    }
}

/// Evaluates index expressions of one kernel over the lanes of a warp.
pub struct Lanes<'k> {
    kernel: &'k Kernel,
    /// Locals assigned exactly once, with their value.
    once: HashMap<VarId, &'k Expr>,
    block: Dims,
    grid: Option<Dims>,
    /// `threadIdx` of each lane of the warp.
    tids: &'k [[i64; 3]],
    /// The once-assigned locals evaluated so far (`None`: not followed).
    values: RefCell<HashMap<VarId, Option<LaneIndex>>>,
}

impl<'k> Lanes<'k> {
    /// An evaluator for the lanes `tids` of a warp of `kernel` in blocks of
    /// `block` threads.
    pub fn new(
        kernel: &'k Kernel,
        block: Dims,
        grid: Option<Dims>,
        tids: &'k [[i64; 3]],
    ) -> Lanes<'k> {
        let mut count: HashMap<VarId, (usize, Option<&'k Expr>)> = HashMap::new();
        visit_stmts(&kernel.body, &mut |s| match s {
            Stmt::Assign { var, value, .. } => {
                let e = count.entry(*var).or_default();
                e.0 += 1;
                e.1 = Some(value);
            }
            Stmt::Atomic {
                result: Some(r), ..
            } => count.entry(*r).or_default().0 += 2,
            _ => {}
        });
        let once = count
            .into_iter()
            .filter(|(v, _)| kernel.vars[*v].kind == VarKind::Local)
            .filter_map(|(v, (n, e))| (n == 1).then_some((v, e?)))
            .collect();
        Lanes {
            kernel,
            once,
            block,
            grid,
            tids,
            values: RefCell::new(HashMap::new()),
        }
    }

    /// The index `e` over the warp's lanes, or `None` when it cannot be
    /// followed.
    pub fn eval(&self, e: &Expr) -> Option<LaneIndex> {
        self.expr(e, 0)
    }

    fn expr(&self, e: &Expr, depth: usize) -> Option<LaneIndex> {
        if depth > 64 || e.ty.is_float() {
            return None;
        }
        let n = self.tids.len();
        let known = |c: u64| Some(LaneIndex::constant_of(c as i64, n));
        match &e.kind {
            ExprKind::Const(v) => Some(LaneIndex::constant_of(v.as_i64(), n)),
            ExprKind::Builtin(Builtin::ThreadIdx(d)) => Some(LaneIndex {
                offsets: self.tids.iter().map(|t| vec![t[*d as usize]]).collect(),
                ..LaneIndex::constant_of(0, n)
            }),
            ExprKind::Builtin(Builtin::BlockDim(d)) => known(self.block[*d as usize]),
            ExprKind::Builtin(Builtin::GridDim(d)) => match self.grid {
                Some(g) => known(g[*d as usize]),
                None => Some(LaneIndex::symbol(&format!("gridDim.{d}"), n)),
            },
            ExprKind::Builtin(Builtin::BlockIdx(d)) => {
                Some(LaneIndex::symbol(&format!("blockIdx.{d}"), n))
            }
            ExprKind::Builtin(Builtin::WarpSize) => known(32),
            ExprKind::Var(v) => match (self.kernel.vars[*v].kind, self.once.get(v)) {
                (VarKind::Param(_), _) if !self.assigned(*v) => {
                    Some(LaneIndex::symbol(&format!("v{v}"), n))
                }
                (VarKind::Local, Some(value)) => self.value_of(*v, value, depth),
                _ => None,
            },
            ExprKind::Convert { value, .. }
                if value.ty.size() <= e.ty.size() && !value.ty.is_float() =>
            {
                self.expr(value, depth + 1)
            }
            ExprKind::Unary(Unary::Neg, x) => {
                let x = self.expr(x, depth + 1)?;
                let (base, sym) = (-x.base, Poly::zero().checked_sub(&x.sym)?);
                LaneIndex::constant_of(0, n).combine(x, base, sym, |a, b| a.checked_sub(b))
            }
            ExprKind::Binary(op @ (BinOp::Add | BinOp::Sub | BinOp::Mul), a, b) => {
                let (a, b) = (self.expr(a, depth + 1)?, self.expr(b, depth + 1)?);
                match op {
                    BinOp::Add => {
                        let (base, sym) = (a.base + b.base, capped(a.sym.checked_add(&b.sym))?);
                        a.combine(b, base, sym, |x, y| x.checked_add(y))
                    }
                    BinOp::Sub => {
                        let (base, sym) = (a.base + -b.base, capped(a.sym.checked_sub(&b.sym))?);
                        a.combine(b, base, sym, |x, y| x.checked_sub(y))
                    }
                    _ => self.product(a, b),
                }
            }
            ExprKind::Binary(op @ (BinOp::Div | BinOp::Rem), a, b) => {
                let a = self.expr(a, depth + 1)?;
                let k = self.expr(b, depth + 1)?.constant()?;
                divide(a, k, *op == BinOp::Rem)
            }
            ExprKind::Select(_, a, b) => {
                let (a, b) = (self.expr(a, depth + 1)?, self.expr(b, depth + 1)?);
                // Either arm: offsets relative to a common base, which
                // needs the arms' shared parts to differ by a constant.
                let diff = b.sym.checked_sub(&a.sym)?.as_constant()?;
                if !diff.is_integer() {
                    return None;
                }
                let shift = i64::try_from(diff.num()).ok()?;
                let (base, sym) = (a.base, a.sym);
                let mut offsets = a.offsets;
                for (o, extra) in offsets.iter_mut().zip(b.offsets) {
                    for x in extra {
                        let x = x.checked_add(shift)?;
                        if !o.contains(&x) {
                            o.push(x);
                        }
                    }
                    if o.len() > MAX_ARMS {
                        return None;
                    }
                }
                Some(LaneIndex { base, sym, offsets })
            }
            _ => None,
        }
    }

    /// The value of once-assigned local `v` (`value`), evaluated the first
    /// time it is asked for and kept: a chain of locals each using the
    /// previous one several times costs one evaluation per local.
    fn value_of(&self, v: VarId, value: &Expr, depth: usize) -> Option<LaneIndex> {
        if let Some(known) = self.values.borrow().get(&v) {
            return known.clone();
        }
        let r = self.expr(value, depth + 1);
        self.values.borrow_mut().insert(v, r.clone());
        r
    }

    /// Whether the variable is assigned anywhere.
    fn assigned(&self, v: VarId) -> bool {
        let mut found = false;
        visit_stmts(&self.kernel.body, &mut |s| {
            found |= matches!(s, Stmt::Assign { var, .. } if *var == v);
        });
        found
    }

    /// `a · b`: one side must be the same in every lane; a known constant
    /// scales offsets, an unknown one is allowed only on a lane-free side.
    fn product(&self, a: LaneIndex, b: LaneIndex) -> Option<LaneIndex> {
        let n = self.tids.len();
        for (x, y) in [(&a, &b), (&b, &a)] {
            if let Some(k) = x.constant() {
                let (base, sym) = (
                    y.base.scale(k),
                    y.sym.checked_scale(Rational::int(k as i128))?,
                );
                let zero = LaneIndex::constant_of(0, n);
                return y.clone().combine(zero, base, sym, |o, _| o.checked_mul(k));
            }
        }
        if a.lane_free() && b.lane_free() {
            let (oa, ob) = (a.offsets[0][0], b.offsets[0][0]);
            let base = (a.base + Cong::exact(oa)) * (b.base + Cong::exact(ob));
            let shifted = |l: &LaneIndex, o: i64| {
                l.sym.checked_add(&Poly::constant(Rational::int(o as i128)))
            };
            let sym = shifted(&a, oa)?.bounded_mul(&shifted(&b, ob)?, MAX_TERMS, MAX_DEGREE)?;
            return Some(LaneIndex::uniform(base, sym, n));
        }
        None
    }
}

/// A sum's shared part, when it is within [`MAX_TERMS`] terms.
fn capped(sym: Option<Poly>) -> Option<Poly> {
    sym.filter(|p| p.len() <= MAX_TERMS)
}

/// Whether a shared part is nonnegative: a sum of builtins (never
/// negative) with nonnegative coefficients.
fn nonnegative(sym: &Poly) -> bool {
    sym.terms().all(|(m, c)| {
        c.checked_cmp(Rational::int(0)) != Some(std::cmp::Ordering::Less)
            && m.factors().all(|(name, _)| {
                ["blockIdx", "blockDim", "gridDim"]
                    .iter()
                    .any(|b| name.starts_with(b))
            })
    })
}

/// `a / k` or `a % k` for a constant `k > 0`, when `a`'s shared part is
/// known modulo `k` and every value is nonnegative.
fn divide(a: LaneIndex, k: i64, rem: bool) -> Option<LaneIndex> {
    if k <= 0 || a.base.modulus() % k != 0 || !nonnegative(&a.sym) {
        return None;
    }
    let r = a.base.residue().rem_euclid(k);
    if a.offsets.iter().flatten().any(|&o| r + o < 0) {
        return None;
    }
    let n = a.offsets.len();
    let offsets = a
        .offsets
        .iter()
        .map(|o| {
            let v: Vec<i64> = o
                .iter()
                .map(|&x| if rem { (r + x) % k } else { (r + x) / k })
                .fold(Vec::new(), |mut v, x| {
                    if !v.contains(&x) {
                        v.push(x);
                    }
                    v
                })
                .into_iter()
                .collect();
            v
        })
        .collect();
    if rem {
        return Some(LaneIndex {
            offsets,
            ..LaneIndex::constant_of(0, n)
        });
    }
    let sym = a
        .sym
        .checked_sub(&Poly::constant(Rational::int(r as i128)))?
        .checked_scale(Rational::checked_new(1, k as i128)?)?;
    let shared = (a.base.residue() - r) / k;
    let base = match a.base.modulus() {
        0 => Cong::exact(shared),
        m => Cong::new(m / k, shared),
    };
    Some(LaneIndex { base, sym, offsets })
}
