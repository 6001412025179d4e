//! What a fragment does besides computing a value: the names and arrays
//! it reads and writes, whether it is pure, reads memory, or jumps out.

use std::collections::BTreeSet;

use copper::cuda::ast::{Expr, ExprKind, Stmt, StmtKind, UnOp};
use copper::ir::half::is_half_function;
use copper::ir::math::is_math_function;
use copper::ir::sync::is_barrier;

use super::{root_name, visit_expr, visit_stmt_exprs, visit_stmts};

/// Whether a call of `name` has no side effects: a math function or a
/// 16-bit float intrinsic.
fn is_pure_function(name: &str) -> bool {
    is_math_function(name) || is_half_function(name)
}

/// Whether evaluating `e` changes nothing: no assignment, `++`/`--` or
/// call other than to a pure math function.
pub fn is_pure(e: &Expr) -> bool {
    let mut pure = true;
    visit_expr(e, &mut |x| match &x.kind {
        ExprKind::Assign(..) | ExprKind::Comma(_) => pure = false,
        ExprKind::Unary(UnOp::PreInc | UnOp::PreDec | UnOp::PostInc | UnOp::PostDec, _) => {
            pure = false
        }
        ExprKind::Call(name, _) => pure &= is_pure_function(name),
        _ => {}
    });
    pure
}

/// What a fragment of code touches, by name.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Effects {
    /// Names read (variables, and arrays read through an index).
    pub reads: BTreeSet<String>,
    /// Scalar variables assigned.
    pub writes: BTreeSet<String>,
    /// Arrays (or pointers) written through an index or dereference.
    pub array_writes: BTreeSet<String>,
    /// Arrays (or pointers) read through an index or dereference.
    pub array_reads: BTreeSet<String>,
    /// Names declared at the top level of the fragment.
    pub declares: BTreeSet<String>,
    /// Calls to functions that may have effects (device functions,
    /// atomics, `printf`).
    pub opaque_calls: bool,
    /// A `__syncthreads()` (or another barrier).
    pub sync: bool,
    /// A `break`, `continue` or `return` that may leave the fragment.
    pub jumps: bool,
}

impl Effects {
    /// The effects of a list of statements.
    pub fn of(stmts: &[Stmt]) -> Effects {
        let mut e = Effects::default();
        for s in stmts {
            if let StmtKind::Decl(ds) = &s.kind {
                e.declares.extend(ds.iter().map(|d| d.name.clone()));
            }
            e.add_stmt(s);
        }
        e
    }

    fn add_stmt(&mut self, s: &Stmt) {
        use StmtKind as S;
        self.jumps |= jumps_out(s, false, false);
        if let S::Decl(ds) = &s.kind {
            for d in ds {
                if d.init.is_some() {
                    self.writes.insert(d.name.clone());
                }
            }
        }
        visit_stmt_exprs(s, &mut |e| self.add_expr(e));
        if let S::For { .. }
        | S::While { .. }
        | S::DoWhile { .. }
        | S::Block(_)
        | S::If { .. }
        | S::Switch { .. } = &s.kind
        {
            let mut nested_decls = Vec::new();
            visit_stmts(s, &mut |x| {
                if let S::Decl(ds) = &x.kind {
                    nested_decls.extend(
                        ds.iter()
                            .filter(|d| d.init.is_some())
                            .map(|d| d.name.clone()),
                    );
                }
            });
            self.writes.extend(nested_decls);
        }
    }

    fn add_expr(&mut self, e: &Expr) {
        use ExprKind as K;
        match &e.kind {
            K::Ident(n) => {
                self.reads.insert(n.clone());
            }
            K::Assign(_, lhs, _) => self.add_target(lhs),
            K::Unary(UnOp::PreInc | UnOp::PreDec | UnOp::PostInc | UnOp::PostDec, x) => {
                self.add_target(x)
            }
            K::Index(..) | K::Unary(UnOp::Deref, _) => {
                if let Some(n) = root_name(e) {
                    self.array_reads.insert(n.to_string());
                }
            }
            K::Call(name, args) => {
                if is_barrier(name) {
                    self.sync = true;
                } else if !is_pure_function(name) {
                    self.opaque_calls = true;
                    for a in args {
                        // `atomicAdd(&a[i].m[k], v)` writes `a`.
                        let a = match &a.kind {
                            K::Unary(UnOp::AddrOf, x) => x,
                            _ => a,
                        };
                        if let Some(n) = root_name(a) {
                            self.array_writes.insert(n.to_string());
                        }
                    }
                }
            }
            _ => {}
        }
    }

    fn add_target(&mut self, lhs: &Expr) {
        match &lhs.kind {
            ExprKind::Ident(n) => {
                self.writes.insert(n.clone());
            }
            _ => {
                if let Some(n) = root_name(lhs) {
                    self.array_writes.insert(n.to_string());
                }
            }
        }
    }

    /// Everything this fragment reads or writes, by name.
    pub fn touched(&self) -> BTreeSet<String> {
        let mut t = self.reads.clone();
        t.extend(self.writes.iter().cloned());
        t.extend(self.array_writes.iter().cloned());
        t.extend(self.array_reads.iter().cloned());
        t
    }
}

/// Every variable `stmts` assign (`x = …`, `x += …`), increment or
/// decrement, or take the address of (`&x`), by name: the variables whose
/// value code other than their declaration may change. Declarations'
/// initial values are not assignments, and elements written through an
/// index (`a[i] = …`) are not counted.
pub fn assigned_names(stmts: &[Stmt]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for s in stmts {
        visit_stmt_exprs(s, &mut |e| {
            let target = match &e.kind {
                ExprKind::Assign(_, t, _) => t,
                ExprKind::Unary(
                    UnOp::PreInc | UnOp::PreDec | UnOp::PostInc | UnOp::PostDec | UnOp::AddrOf,
                    t,
                ) => t,
                _ => return,
            };
            if let ExprKind::Ident(n) = &target.kind {
                out.insert(n.clone());
            }
        });
    }
    out
}

/// Whether a `break`, `continue` or `return` in `s` may leave it (a
/// `break` inside a nested loop or switch, a `continue` inside a nested
/// loop, stay inside).
fn jumps_out(s: &Stmt, in_loop: bool, in_switch: bool) -> bool {
    use StmtKind as S;
    match &s.kind {
        S::Return(_) => true,
        S::Break => !in_loop && !in_switch,
        S::Continue => !in_loop,
        S::Block(b) => b.iter().any(|x| jumps_out(x, in_loop, in_switch)),
        S::If { then, els, .. } => {
            jumps_out(then, in_loop, in_switch)
                || els
                    .as_ref()
                    .is_some_and(|e| jumps_out(e, in_loop, in_switch))
        }
        S::For { body, .. } | S::While { body, .. } | S::DoWhile { body, .. } => {
            jumps_out(body, true, in_switch)
        }
        S::Switch { cases, .. } => cases
            .iter()
            .any(|c| c.body.iter().any(|x| jumps_out(x, in_loop, true))),
        _ => false,
    }
}

/// Whether `e` reads memory (through an index or a dereference).
pub fn reads_memory(e: &Expr) -> bool {
    let mut found = false;
    visit_expr(e, &mut |x| {
        found |= matches!(
            x.kind,
            ExprKind::Index(..) | ExprKind::Unary(UnOp::Deref, _)
        )
    });
    found
}
