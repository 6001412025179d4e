//! The largest bank conflict of one shared access as a MILP (`003_…` §4,
//! decided rather than searched): "lanes of one warp access the same bank
//! at different words", maximized over every input.
//!
//! The index is encoded once per lane of a warp, along the path from the
//! kernel's entry to the access: assignments before it are substituted,
//! variables a loop or branch on the way may change become free (with
//! their type's range), the conditions of the `if`s and loops that
//! enclose the access are guards of the lane being active, and every load
//! of an input array is a free integer in the array's value range (its
//! type, narrowed by the parameter file's `min`/`max` for a random fill).
//! Integer arithmetic is exact: `+ - *` by constants, shifts, masks, `/`
//! and `%` by constants (auxiliary integer quotients), narrowing
//! conversions and unsigned wrap-around, comparisons, `&&`/`||`/`!` and
//! `?:` (big-M indicators over the operands' ranges). What is not encoded
//! (a product of two unknowns, a math function, a float) becomes a free
//! value of its type. So every execution of the kernel is a solution: an
//! optimum below `d` proves that no input reaches degree `d`, whatever the
//! over-approximation lost.
//!
//! The collision: `K` slots with strictly increasing rows `ρ_k` and one
//! bank `B`; lane `l` may take slot `k` (binary `x_lk`) only when it is
//! active and its word is `banks·ρ_k + B`; the objective counts the slots
//! taken. `K` is the fewest of the lanes, the rows the index can reach,
//! and the analysis bound.

use std::collections::HashMap;
use std::time::Instant;

use copper::cost::Hardware;
use copper::cuda::ast::BinOp;
use copper::ir::{
    visit_exprs, visit_stmts, ArrayId, Builtin, Expr, ExprKind, Kernel, Scalar, SiteId, Stmt,
    Unary, Value, VarId, VarKind,
};
use copper::sim::params::{InitKind, LaunchSpec};
use good_lp::{
    Constraint, Expression, ProblemVariables, Solution, SolutionStatus, SolverModel, Variable,
    WithTimeLimit,
};

use super::witness::load_index;

/// An integer linear expression with the range of values it takes.
#[derive(Clone)]
struct Term {
    e: Expression,
    lo: i128,
    hi: i128,
}

impl Term {
    fn constant(v: i128) -> Term {
        Term {
            e: Expression::from(v as f64),
            lo: v,
            hi: v,
        }
    }

    fn as_const(&self) -> Option<i128> {
        (self.lo == self.hi).then_some(self.lo)
    }

    fn add(&self, o: &Term, sign: i128) -> Term {
        let (a, b) = if sign > 0 {
            (o.lo, o.hi)
        } else {
            (-o.hi, -o.lo)
        };
        Term {
            e: self.e.clone() + o.e.clone() * sign as f64,
            lo: self.lo + a,
            hi: self.hi + b,
        }
    }

    fn scale(&self, c: i128) -> Term {
        let (x, y) = (self.lo * c, self.hi * c);
        Term {
            e: self.e.clone() * c as f64,
            lo: x.min(y),
            hi: x.max(y),
        }
    }
}

/// Ranges wider than this are not encoded (floating-point solvers lose
/// integrality on them); such a value becomes free in its type.
const LARGEST: i128 = 1 << 40;

/// The largest degree, as far as the solver got.
#[derive(Clone, Debug, PartialEq)]
pub struct Maximum {
    /// The best degree found (a lane assignment reaching it).
    pub degree: u64,
    /// Whether the solver proved it optimal (no input does better).
    pub proved: bool,
    /// The values the solution gives each input array's first load, lane
    /// by lane (for the inputs to simulate).
    pub loads: Vec<(ArrayId, Vec<i64>)>,
}

/// Why no MILP was solved.
pub type Unsupported = String;

/// One lane's state along the path.
#[derive(Clone, Default)]
struct Lane {
    env: HashMap<VarId, Term>,
    guards: Vec<Term>,
}

/// The encoder: variables, constraints, and the launch it reads.
struct Enc<'a> {
    kernel: &'a Kernel,
    spec: &'a LaunchSpec,
    pv: ProblemVariables,
    cons: Vec<Constraint>,
    /// Values the same in every lane (block index, unknown parameters).
    uniform: HashMap<String, Term>,
    /// The first load of each input array in each lane.
    loads: Vec<(ArrayId, usize, Variable)>,
    /// `warpSize`.
    warp: i128,
    /// Whether a thread index was read.
    read_tid: bool,
}

fn div_floor(a: i128, b: i128) -> i128 {
    a.div_euclid(b)
}

impl<'a> Enc<'a> {
    fn fresh(&mut self, lo: i128, hi: i128) -> (Variable, Term) {
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
    fn free(&mut self, ty: Scalar) -> Term {
        let (lo, hi) = ty.range().unwrap_or((0, 1));
        self.fresh(lo.max(-LARGEST), hi.min(LARGEST)).1
    }

    fn binary(&mut self) -> Term {
        self.fresh(0, 1).1
    }

    fn push(&mut self, c: Constraint) {
        self.cons.push(c);
    }

    /// `t = c·q + r` with `0 ≤ r < c` (`c > 0`): the floor quotient and
    /// the remainder.
    fn floor_div(&mut self, t: &Term, c: i128) -> (Term, Term) {
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
    fn trunc_div(&mut self, t: &Term, c: i128) -> (Term, Term) {
        let (q, r) = if t.lo >= 0 {
            self.floor_div(t, c.abs())
        } else if t.hi <= 0 {
            let (q, r) = self.floor_div(&t.scale(-1), c.abs());
            (q.scale(-1), r.scale(-1))
        } else {
            // s = 1 when t ≥ 0: then 0 ≤ r < |c|, else −|c| < r ≤ 0.
            let a = c.abs();
            let s = self.binary();
            self.push((t.e.clone() - s.e.clone() * t.lo as f64).geq(t.lo as f64));
            self.push((t.e.clone() - s.e.clone() * (t.hi + 1) as f64).leq(-1.0));
            let (_, q) = self.fresh(-(t.lo.abs() / a), t.hi / a);
            let r = t.add(&q.scale(a), -1);
            self.push((r.e.clone() - s.e.clone() * (a - 1) as f64).leq(0.0));
            self.push((r.e.clone() - s.e.clone() * (a - 1) as f64).geq(-(a - 1) as f64));
            let r = Term {
                lo: -(a - 1),
                hi: a - 1,
                ..r
            };
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
    fn wrap(&mut self, t: Term, ty: Scalar) -> Term {
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
    fn mask(&mut self, t: &Term, mask: i128) -> Term {
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
    fn negative(&mut self, d: &Term) -> Term {
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

    fn not(b: &Term) -> Term {
        Term::constant(1).add(b, -1)
    }

    /// `t != 0` as 0/1.
    fn truth(&mut self, t: &Term) -> Term {
        if t.lo >= 0 && t.hi <= 1 {
            return t.clone();
        }
        let neg = self.negative(t);
        let pos = self.negative(&t.scale(-1));
        neg.add(&pos, 1)
    }

    fn compare(&mut self, op: BinOp, a: &Term, b: &Term) -> Term {
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

    fn and(&mut self, a: &Term, b: &Term) -> Term {
        let z = self.binary();
        self.push((z.e.clone() - a.e.clone()).leq(0.0));
        self.push((z.e.clone() - b.e.clone()).leq(0.0));
        self.push((z.e.clone() - a.e.clone() - b.e.clone()).geq(-1.0));
        z
    }

    /// `c ? a : b` for a 0/1 term `c`.
    fn select(&mut self, c: &Term, a: &Term, b: &Term) -> Term {
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
    fn gate(&mut self, z: &Term, x: &Term) -> Term {
        let zero = Term::constant(0);
        self.select(z, x, &zero)
    }

    fn input_range(&self, array: ArrayId, slot: usize) -> Option<(i128, i128)> {
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

    fn builtin(&mut self, b: Builtin, tid: &[Term; 3]) -> Term {
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

    fn var(&mut self, v: VarId, lane: &Lane) -> Term {
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
    fn expr(&mut self, e: &Expr, lane: &Lane, l: usize, tid: &[Term; 3]) -> Term {
        let t = self.expr_unwrapped(e, lane, l, tid);
        if t.hi - t.lo > 2 * LARGEST {
            return self.free(e.ty);
        }
        t
    }

    fn expr_unwrapped(&mut self, e: &Expr, lane: &Lane, l: usize, tid: &[Term; 3]) -> Term {
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

    fn binary_op(&mut self, op: BinOp, x: &Term, y: &Term, ty: Scalar) -> Term {
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

/// Whether `s` holds site `site` (in its own expressions or nested).
fn holds(s: &Stmt, site: SiteId) -> bool {
    let s = std::slice::from_ref(s);
    let mut found = false;
    visit_exprs(s, &mut |e| {
        if let ExprKind::Load(a) = &e.kind {
            found |= a.site == site;
        }
    });
    visit_stmts(s, &mut |x| {
        if let Stmt::Store { access, .. } | Stmt::Atomic { access, .. } = x {
            found |= access.site == site;
        }
    });
    found
}

/// The variables `stmts` may assign.
fn assigned(stmts: &[Stmt]) -> Vec<VarId> {
    let mut out = Vec::new();
    visit_stmts(stmts, &mut |s| match s {
        Stmt::Assign { var, .. } => out.push(*var),
        Stmt::Atomic {
            result: Some(var), ..
        } => out.push(*var),
        _ => {}
    });
    out
}

/// The index expression of `site` in the statement that holds it.
fn own_index(s: &Stmt, site: SiteId) -> Option<&Expr> {
    let exprs: Vec<&Expr> = match s {
        Stmt::Store { access, .. } | Stmt::Atomic { access, .. } if access.site == site => {
            return Some(&access.index)
        }
        Stmt::Store { access, value, .. } => vec![&access.index, value],
        Stmt::Atomic { access, value, .. } => vec![&access.index, value],
        Stmt::Assign { value, .. } => vec![value],
        Stmt::If { cond, .. } => vec![cond],
        Stmt::Loop { cond: Some(c), .. } => vec![c],
        _ => vec![],
    };
    exprs.into_iter().find_map(|e| load_index(e, site))
}

/// Walks to the statement holding `site`, updating every lane, and
/// returns the index expression there.
fn walk<'k>(
    enc: &mut Enc,
    stmts: &'k [Stmt],
    site: SiteId,
    lanes: &mut [Lane],
    tids: &[[Term; 3]],
) -> Option<&'k Expr> {
    for s in stmts {
        if !holds(s, site) {
            match s {
                Stmt::Assign { var, value, .. } => {
                    for (l, lane) in lanes.iter_mut().enumerate() {
                        let t = enc.expr(value, lane, l, &tids[l]);
                        lane.env.insert(*var, t);
                    }
                }
                _ => {
                    for v in assigned(std::slice::from_ref(s)) {
                        for lane in lanes.iter_mut() {
                            lane.env.remove(&v);
                        }
                    }
                }
            }
            continue;
        }
        return match s {
            Stmt::If { then, els, .. } if !then.iter().chain(els).any(|x| holds(x, site)) => {
                own_index(s, site)
            }
            Stmt::If {
                cond, then, els, ..
            } => {
                let in_then = then.iter().any(|x| holds(x, site));
                for (l, lane) in lanes.iter_mut().enumerate() {
                    let c = enc.expr(cond, lane, l, &tids[l]);
                    let c = enc.truth(&c);
                    lane.guards.push(if in_then { c } else { Enc::not(&c) });
                }
                walk(enc, if in_then { then } else { els }, site, lanes, tids)
            }
            Stmt::Loop {
                cond,
                body,
                step,
                test_first,
                ..
            } => {
                for v in assigned(body).into_iter().chain(assigned(step)) {
                    for lane in lanes.iter_mut() {
                        lane.env.remove(&v);
                    }
                }
                let in_body = body.iter().any(|x| holds(x, site));
                if !in_body && !step.iter().any(|x| holds(x, site)) {
                    return own_index(s, site);
                }
                if let (true, true, Some(c)) = (in_body, *test_first, cond) {
                    for (l, lane) in lanes.iter_mut().enumerate() {
                        let g = enc.expr(c, lane, l, &tids[l]);
                        let g = enc.truth(&g);
                        lane.guards.push(g);
                    }
                }
                walk(enc, if in_body { body } else { step }, site, lanes, tids)
            }
            Stmt::Scope { body, .. } => walk(enc, body, site, lanes, tids),
            _ => own_index(s, site),
        };
    }
    None
}

/// The largest bank-conflict degree one warp can reach at shared site
/// `site` under the launch `spec`, at most `cap`, solved before
/// `deadline`: one MILP per warp of the block (the thread indices
/// constant, so the index's range is tight), or one for all when the
/// index does not depend on them.
pub fn maximum(
    kernel: &Kernel,
    site: SiteId,
    cap: u64,
    spec: &LaunchSpec,
    hw: &Hardware,
    deadline: Instant,
) -> Result<Maximum, Unsupported> {
    let threads: u64 = (0..3)
        .map(|d| spec.block.get(d).copied().unwrap_or(1))
        .product();
    let warps = threads.div_ceil(hw.warp_size as u64).max(1);
    // No warp does better than every lane in one bank.
    let most = cap.min(threads.min(hw.warp_size as u64));
    let (first, per_warp) = warp_maximum(kernel, site, cap, spec, hw, deadline, 0)?;
    if !per_warp || first.degree >= most {
        return Ok(first);
    }
    let mut best = first;
    for w in 1..warps {
        if best.degree >= most {
            break;
        }
        let (m, _) = warp_maximum(kernel, site, cap, spec, hw, deadline, w)?;
        let proved = best.proved && m.proved;
        if m.degree > best.degree {
            best = m;
        }
        best.proved = proved;
    }
    Ok(best)
}

/// [`maximum`] for warp `w` of the block, and whether the index read the
/// thread index (so that other warps may differ).
fn warp_maximum(
    kernel: &Kernel,
    site: SiteId,
    cap: u64,
    spec: &LaunchSpec,
    hw: &Hardware,
    deadline: Instant,
    w: u64,
) -> Result<(Maximum, bool), Unsupported> {
    let array = &kernel.arrays[kernel.sites[site].array];
    let fp = array.footprint(&kernel.sites[site]);
    if !fp.within(hw.bank_bytes) {
        return Err("the access is wider than a bank word".into());
    }
    let len = match array.fixed_len() {
        Some(n) => n,
        None => spec.shared_bytes / array.layout.size.max(1) as u64,
    } as i128;
    if len == 0 {
        return Err("the shared array's length is unknown".into());
    }
    let block: Vec<i128> = (0..3)
        .map(|d| spec.block.get(d).copied().unwrap_or(1) as i128)
        .collect();
    let threads = block.iter().product::<i128>();
    let warp = hw.warp_size as i128;
    let lanes = threads.min(warp) as usize;
    let mut enc = Enc {
        kernel,
        spec,
        pv: ProblemVariables::new(),
        cons: Vec::new(),
        uniform: HashMap::new(),
        loads: Vec::new(),
        warp,
        read_tid: false,
    };
    // Each lane's thread index.
    let w = Term::constant(w as i128);
    let mut tids = Vec::new();
    let mut lane_state = vec![Lane::default(); lanes];
    for (l, lane) in lane_state.iter_mut().enumerate() {
        let linear = w.scale(warp).add(&Term::constant(l as i128), 1);
        let (rest, x) = enc.floor_div(&linear, block[0]);
        let (z, y) = enc.floor_div(&rest, block[1]);
        if threads % warp != 0 {
            let exists = enc.negative(&linear.add(&Term::constant(threads), -1));
            lane.guards.push(exists);
        }
        tids.push([x, y, z]);
    }
    let index = walk(&mut enc, &kernel.body, site, &mut lane_state, &tids)
        .ok_or("the access was not found on a path from the kernel's entry")?;
    let b = hw.bank_bytes as i128;
    let banks = hw.banks as i128;
    let mut words = Vec::new();
    let mut active = Vec::new();
    for (l, lane) in lane_state.iter().enumerate() {
        let i = enc.expr(index, lane, l, &tids[l]);
        // An active lane's index is in bounds (the simulator stops
        // otherwise): `inside` is the index when the lane is active.
        let on = enc.binary();
        for g in &lane.guards {
            enc.push((on.e.clone() - g.e.clone()).leq(0.0));
        }
        let (lo, hi) = (i.lo.max(0), i.hi.min(len - 1));
        if lo > hi {
            // Always out of bounds: the lane never gets here.
            enc.push(on.e.clone().leq(0.0));
        }
        let (_, inside) = enc.fresh(lo.min(hi), hi);
        let span = (i.hi.max(len) - i.lo.min(0)) as f64;
        let d = i.add(&inside, -1);
        enc.push((d.e.clone() + on.e.clone() * span).leq(span));
        enc.push((d.e.clone() - on.e.clone() * span).geq(-span));
        let byte = inside
            .scale(fp.stride as i128)
            .add(&Term::constant(fp.offset as i128), 1);
        let (word, _) = enc.floor_div(&byte, b);
        words.push(word);
        active.push(on);
    }
    let (wlo, whi) = words.iter().fold((i128::MAX, i128::MIN), |(a, z), w| {
        (a.min(w.lo), z.max(w.hi))
    });
    if wlo > whi {
        return Err("no lane reaches the access".into());
    }
    let (rlo, rhi) = (div_floor(wlo, banks), div_floor(whi, banks));
    let k = (cap as i128).min(lanes as i128).min(rhi - rlo + 1).max(1) as usize;
    // Each lane's row and bank; the bank all counted lanes share, one-hot
    // when some lane's bank can only be among a few (a tight cut: such a
    // lane counts only when one of them is chosen).
    let narrow = words
        .iter()
        .any(|w| div_floor(w.lo, banks) == div_floor(w.hi, banks) && w.hi - w.lo + 1 < banks);
    let pick: Vec<Term> = if narrow {
        (0..banks).map(|_| enc.binary()).collect()
    } else {
        Vec::new()
    };
    let bank = if narrow {
        let all = pick
            .iter()
            .fold(Expression::from(0.0), |acc, y| acc + y.e.clone());
        enc.push(all.eq(1.0));
        let sum = pick
            .iter()
            .enumerate()
            .fold(Term::constant(0), |acc, (b, y)| {
                acc.add(&y.scale(b as i128), 1)
            });
        Term {
            lo: 0,
            hi: banks - 1,
            ..sum
        }
    } else {
        enc.fresh(0, banks - 1).1
    };
    let rows: Vec<Term> = (0..k)
        .map(|_| enc.fresh(rlo - k as i128, rhi + k as i128).1)
        .collect();
    for pair in rows.windows(2) {
        enc.push((pair[1].e.clone() - pair[0].e.clone()).geq(1.0));
    }
    let mut objective = Expression::from(0.0);
    let mut takes: Vec<Vec<Term>> = vec![Vec::new(); k];
    for (l, word) in words.iter().enumerate() {
        let (row_l, bank_l) = if narrow {
            enc.floor_div(word, banks)
        } else {
            (word.clone(), Term::constant(0))
        };
        let mut one = Expression::from(0.0);
        for (slot, row) in rows.iter().enumerate() {
            let x = enc.binary();
            // x = 1 → the lane's row is the slot's and its bank the one
            // (split when the banks are narrow, else as one word).
            let apart = if narrow {
                vec![row_l.add(row, -1), bank_l.add(&bank, -1)]
            } else {
                vec![word.add(&row.scale(banks), -1).add(&bank, -1)]
            };
            for d in apart {
                let m = (d.hi.abs().max(d.lo.abs())) as f64;
                enc.push((d.e.clone() + x.e.clone() * m).leq(m));
                enc.push((d.e.clone() - x.e.clone() * m).geq(-m));
            }
            one += x.e.clone();
            takes[slot].push(x);
        }
        if narrow && bank_l.hi - bank_l.lo + 1 < banks {
            let can = (bank_l.lo..=bank_l.hi).fold(Expression::from(0.0), |acc, b| {
                acc + pick[b as usize].e.clone()
            });
            enc.push((one.clone() - can).leq(0.0));
        }
        enc.push((one - active[l].e.clone()).leq(0.0));
    }
    for xs in takes {
        let (_, used) = enc.fresh(0, 1);
        let sum = xs
            .iter()
            .fold(Expression::from(0.0), |acc, x| acc + x.e.clone());
        enc.push((used.e.clone() - sum).leq(0.0));
        objective += used.e;
    }
    let seconds = deadline
        .saturating_duration_since(Instant::now())
        .as_secs_f64();
    if seconds <= 0.0 {
        return Err("the time budget ran out before the MILP (raise it with --budget)".into());
    }
    let Enc {
        pv,
        cons,
        loads,
        read_tid,
        ..
    } = enc;
    #[cfg(feature = "cbc")]
    let model = {
        let mut m = pv.maximise(objective.clone()).using(good_lp::coin_cbc);
        m.set_parameter("log", "0");
        m
    };
    #[cfg(not(feature = "cbc"))]
    let model = pv.maximise(objective.clone()).using(good_lp::microlp);
    let solved = model
        .with_all(cons)
        .with_time_limit(seconds)
        .solve()
        .map_err(|e| match e {
            good_lp::ResolutionError::Infeasible => {
                "no lane can make this access (the MILP is infeasible)".to_string()
            }
            e => format!("the MILP solver stopped: {e}"),
        })?;
    let degree = solved.eval(&objective).round().max(0.0) as u64;
    let mut per_array: Vec<(ArrayId, Vec<i64>)> = Vec::new();
    for (a, l, v) in loads {
        let value = solved.value(v).round() as i64;
        match per_array.iter_mut().find(|x| x.0 == a) {
            Some((_, vals)) => {
                if vals.len() <= l {
                    vals.resize(l + 1, value);
                }
                vals[l] = value;
            }
            None => {
                let mut vals = vec![value; l + 1];
                vals[l] = value;
                per_array.push((a, vals));
            }
        }
    }
    Ok((
        Maximum {
            degree,
            proved: matches!(solved.status(), SolutionStatus::Optimal),
            loads: per_array,
        },
        read_tid,
    ))
}
