//! Floor ghosts for loops whose counter starts at a different value in
//! each lane (`for (c = lane; c < cols; c += 32)` with
//! `lane = threadIdx.x % 32`).
//!
//! Such a counter is not `threadIdx` plus a warp-uniform value, so no
//! uniform linear form of it pays for the loop. But when the facts at the
//! loop's entry prove `c ≥ U + lo` in every lane (`U` uniform, `lo` a
//! constant: `lane ≥ 0`) and every iteration adds the same uniform `S` to
//! `c` without wrapping, a ghost `g` set to `U + lo` before the loop and
//! moved by `S` with it stays uniform and below `c` in every lane. A lane
//! still looping has `c < cols`, so `g < cols`: the guard with `c` replaced
//! by `g` bounds the warp's iterations by its worst lane (the linear facts
//! add it, see `absint::facts`). Ghost assignments cost nothing.

use std::collections::{BTreeSet, HashMap};

use super::counter::{count_writes, top_level_updates};
use super::ghost::{insert_ghosts, new_ghost, GhostUpdate};
use crate::absint::deps::{self, key, DepFacts};
use crate::absint::facts::LinFacts;
use crate::absint::linear::LinExpr;
use crate::absint::symbols::{int_bounds, SymKind, Symbols, Update};
use crate::absint::trips::Trips;
use crate::cuda::ast::BinOp;
use crate::ir::structured::FlagKind;
use crate::ir::{Builtin, Expr, ExprKind, Kernel, Scalar, Stmt, Value, VarId};
use crate::poly::Rational;

/// A floor ghost to add: for the loop of this pre-order index, the
/// counter it follows, its value at entry and its step.
struct Plan {
    index: usize,
    counter: VarId,
    init: Expr,
    step: Expr,
}

/// What the analysis of the kernel without floor ghosts knows.
struct Scan<'a> {
    deps: &'a DepFacts,
    lin: &'a LinFacts,
    syms: &'a Symbols,
    flags: &'a [(VarId, FlagKind)],
    k: &'a Kernel,
}

/// Adds a floor ghost to every `for`/`while` loop whose condition bounds
/// a counter that is not uniform at the loop's head but has a proved
/// uniform lower bound at entry and a uniform step (module doc). `deps`,
/// `lin` and `syms` are the analyses of `k` as given. Returns each ghost
/// with [`Trips::Floor`] of its counter.
pub fn add_floors(
    k: &mut Kernel,
    deps: &DepFacts,
    lin: &LinFacts,
    syms: &Symbols,
    flags: &[(VarId, FlagKind)],
) -> HashMap<VarId, Trips> {
    let scan = Scan {
        deps,
        lin,
        syms,
        flags,
        k,
    };
    let mut plans = Vec::new();
    scan.walk(&k.body, &mut 0, &mut plans);
    let mut floors = HashMap::new();
    if plans.is_empty() {
        return floors;
    }
    let mut body = std::mem::take(&mut k.body);
    let mut plans = plans.into_iter().peekable();
    insert_ghosts(&mut body, k, &mut 0, &mut |k, here, span| {
        let p = plans.next_if(|p| p.index == here)?;
        let var = new_ghost(k, format!("floor_{here}"), span);
        floors.insert(var, Trips::Floor(p.counter));
        Some(GhostUpdate {
            var,
            init: p.init,
            step: p.step,
        })
    });
    k.body = body;
    floors
}

impl Scan<'_> {
    fn walk(&self, stmts: &[Stmt], index: &mut usize, out: &mut Vec<Plan>) {
        for (i, s) in stmts.iter().enumerate() {
            match s {
                Stmt::Loop { body, step, .. } => {
                    let here = *index;
                    *index += 1;
                    let before = i.checked_sub(1).map(|j| &stmts[j]);
                    if let Some((counter, init, step)) = self.plan(s, before) {
                        out.push(Plan {
                            index: here,
                            counter,
                            init,
                            step,
                        });
                    }
                    self.walk(body, index, out);
                    self.walk(step, index, out);
                }
                Stmt::If { then, els, .. } => {
                    self.walk(then, index, out);
                    self.walk(els, index, out);
                }
                Stmt::Scope { body, .. } => self.walk(body, index, out),
                _ => {}
            }
        }
    }

    /// The counter, entry value and step of a loop's floor ghost.
    fn plan(&self, s: &Stmt, before: Option<&Stmt>) -> Option<(VarId, Expr, Expr)> {
        let Stmt::Loop {
            cond: Some(_),
            body,
            step,
            test_first: true,
            ..
        } = s
        else {
            return None;
        };
        let head = self.deps.head.get(&key(s))?;
        let entry = self.lin.before.get(&key(s))?;
        let guards = self.lin.guards.get(&key(s))?;
        let mut written = BTreeSet::new();
        deps::written(body, &mut written);
        deps::written(step, &mut written);
        let is_flag = |v: VarId| self.flags.iter().any(|(f, _)| *f == v);
        let counters: BTreeSet<VarId> = guards
            .iter()
            .flat_map(|g| g.vars())
            .filter_map(|x| match self.syms.kind(x) {
                SymKind::Var(v) if written.contains(&v) && !is_flag(v) && !head[v].is_uniform() => {
                    Some(v)
                }
                _ => None,
            })
            .collect();
        // One counter the guard decreases in, moved by a uniform step.
        counters.into_iter().find_map(|c| {
            let x = self.syms.var(c);
            if !guards.iter().any(|g| g.coeff(x) < Rational::ZERO) {
                return None;
            }
            let by = self.step_of(c, body, step, &written, head)?;
            let uniform = self.uniform_start(c, before)?;
            let lo = int_bounds(entry, &LinExpr::var(x).sub(&uniform)).0?;
            let init = lin_to_expr(self.k, self.syms, &uniform.add(&LinExpr::constant(lo)))?;
            Some((c, init, lin_to_expr(self.k, self.syms, &by)?))
        })
    }

    /// The uniform `S` of a counter's only update, `c := c + S` at the top
    /// level of the loop's body or step, provably without wrapping, with
    /// `S` over variables the loop does not write.
    fn step_of(
        &self,
        c: VarId,
        body: &[Stmt],
        step: &[Stmt],
        written: &BTreeSet<VarId>,
        head: &deps::State,
    ) -> Option<LinExpr> {
        let mut updates = Vec::new();
        let tracked = BTreeSet::from([c]);
        top_level_updates(body, &tracked, self.flags, &mut updates);
        top_level_updates(step, &tracked, self.flags, &mut updates);
        let [(_, value, stmt)] = updates[..] else {
            return None;
        };
        if count_writes(body, c) + count_writes(step, c) != 1 {
            return None;
        }
        let ctx = self.lin.before.get(&key(stmt))?;
        let Update::Linear(l) = self.syms.update(c, value, ctx) else {
            return None;
        };
        let x = self.syms.var(c);
        let by = l.sub(&LinExpr::var(x));
        let loop_invariant = by.vars().all(|s| match self.syms.kind(s) {
            SymKind::Var(v) => !written.contains(&v),
            _ => true,
        });
        (l.coeff(x) == Rational::ONE && loop_invariant && self.syms.is_uniform(&by, head))
            .then_some(by)
    }

    /// The uniform terms of the value the statement just before the loop
    /// assigns to the counter (`blockIdx.x·32` of `blockIdx.x·32 + lane`),
    /// or 0. `None` when the rest is `threadIdx` alone
    /// (`blockIdx.x·blockDim.x + threadIdx.x`): the guard's lane-independent
    /// part already pays for such a loop.
    fn uniform_start(&self, c: VarId, before: Option<&Stmt>) -> Option<LinExpr> {
        let Some(s @ Stmt::Assign { var, value, .. }) = before else {
            return Some(LinExpr::zero());
        };
        let (Some(st), Some(ctx)) = (self.deps.before.get(&key(s)), self.lin.before.get(&key(s)))
        else {
            return Some(LinExpr::zero());
        };
        let Some(l) = self.syms.linearize(value, Some(ctx)).filter(|_| *var == c) else {
            return Some(LinExpr::zero());
        };
        let mut u = LinExpr::zero();
        let mut thread_only = true;
        for (&x, &a) in &l.coeffs {
            let term = LinExpr::term(x, a);
            if x != self.syms.var(c) && self.syms.is_uniform(&term, st) {
                u = u.add(&term);
            } else {
                thread_only &= matches!(self.syms.kind(x), SymKind::ThreadIdx(_));
            }
        }
        (!thread_only).then_some(u)
    }
}

/// An `int64` IR expression computing an integer linear form.
fn lin_to_expr(k: &Kernel, syms: &Symbols, l: &LinExpr) -> Option<Expr> {
    let i64c = |v: i128| Expr {
        kind: ExprKind::Const(Value::I(v as i64)),
        ty: Scalar::I64,
    };
    let int = |r: Rational| (r.is_integer() && r.num().unsigned_abs() < 1 << 62).then(|| r.num());
    let mut e = i64c(int(l.constant)?);
    for (&x, &a) in &l.coeffs {
        let sym = match syms.kind(x) {
            SymKind::Var(v) => Expr {
                kind: ExprKind::Var(v),
                ty: k.vars[v].ty,
            },
            SymKind::Atom(i) => syms.atoms[i].expr.clone(),
            kind => {
                let b = match kind {
                    SymKind::BlockIdx(d) => Builtin::BlockIdx(d),
                    SymKind::GridDim(d) => Builtin::GridDim(d),
                    SymKind::BlockDim(d) => Builtin::BlockDim(d),
                    SymKind::ThreadIdx(d) => Builtin::ThreadIdx(d),
                    _ => return None,
                };
                Expr {
                    kind: ExprKind::Builtin(b),
                    ty: Scalar::U32,
                }
            }
        };
        if sym.ty.is_float() || sym.ty == Scalar::Bool {
            return None;
        }
        let wide = Expr {
            kind: ExprKind::Convert {
                value: Box::new(sym),
                explicit: false,
            },
            ty: Scalar::I64,
        };
        let term = Expr {
            kind: ExprKind::Binary(BinOp::Mul, Box::new(i64c(int(a)?)), Box::new(wide)),
            ty: Scalar::I64,
        };
        e = Expr {
            kind: ExprKind::Binary(BinOp::Add, Box::new(e), Box::new(term)),
            ty: Scalar::I64,
        };
    }
    Some(e)
}
