//! Removing staging that does not help: a `__shared__` array in which
//! each thread writes one element and reads back only that element (no
//! exchange between threads), with a barrier between, costs a shared
//! store, a barrier and shared loads for what a register holds:
//!
//! ```c
//! __shared__ float s[256];            // gone
//! s[threadIdx.x] = in[i] * 2.0f;      // float s_v = in[i] * 2.0f;
//! __syncthreads();                    // gone when it orders nothing else
//! out[i] = s[threadIdx.x] + 1.0f;     // out[i] = s_v + 1.0f;
//! ```
//!
//! Why it computes the same: the write is a statement of the kernel's
//! body itself (every thread runs it once, before any read), its index is
//! the thread's own (`threadIdx.x`, or `[threadIdx.y][threadIdx.x]`,
//! directly or through locals never assigned), so no other thread writes
//! that element, and every read uses the same index: each thread reads
//! exactly the value it wrote, which the register holds. The barrier right
//! after the write is dropped when the kernel has no other shared memory
//! and nothing before it writes memory or calls anything that may, so it
//! orders nothing any thread could see; otherwise it stays. The rewrite
//! does not depend on the block: a block larger than the array made the
//! original write out of bounds, where it is not compared.

use std::collections::BTreeSet;

use copper::cuda::ast::{Expr, ExprKind, Function, Space, Stmt, StmtKind, UnOp, VarDecl};

use crate::ast_util::{self, decl, equiv_expr, fresh, ident, is_sync, root_name, Effects};
use crate::{Candidate, Context, Proposals, Refusal, Skip, Transform};

/// Removing staging through shared memory that exchanges nothing.
pub struct Unstage;

impl Transform for Unstage {
    fn name(&self) -> &'static str {
        "needless staging removed"
    }

    fn propose(&self, cx: &Context) -> Proposals {
        let f = cx.function;
        let mut out = Proposals::default();
        for s in &f.body {
            let StmtKind::Decl(ds) = &s.kind else {
                continue;
            };
            for d in ds.iter().filter(|d| d.space == Space::Shared) {
                match candidate(cx, d) {
                    Ok(Some(c)) => out.candidates.push(c),
                    Ok(None) => {}
                    Err(why) => out.skipped.push(Skip {
                        span: d.meta.span,
                        reason: format!("`{}` stays in shared memory: {why}", d.name),
                    }),
                }
            }
        }
        out
    }
}

/// The kernel without the shared array `d`; `None` when `d` is not
/// written by a statement of the body itself (no staging of this kind).
fn candidate(cx: &Context, d: &VarDecl) -> Result<Option<Candidate>, Refusal> {
    let f = cx.function;
    let name = &d.name;
    let Some(w) = f
        .body
        .iter()
        .position(|s| writes_element(s, name).is_some())
    else {
        return Ok(None);
    };
    let Some((target, value)) = writes_element(&f.body[w], name) else {
        return Ok(None);
    };
    // A dynamic array, a scalar, or a higher one is not staging of this
    // kind; nor is an array written more than once (below).
    if d.is_extern || d.init.is_some() || d.dims.is_empty() || d.dims.len() > 2 {
        return Ok(None);
    }
    let mut writes = 0;
    for s in &f.body {
        ast_util::visit_stmt_exprs(s, &mut |e| {
            let t = match &e.kind {
                ExprKind::Assign(_, t, _) => Some(t),
                ExprKind::Unary(UnOp::PreInc | UnOp::PreDec | UnOp::PostInc | UnOp::PostDec, t) => {
                    Some(t)
                }
                _ => None,
            };
            writes += t.is_some_and(|t| root_name(t) == Some(name)) as usize;
        });
    }
    if writes != 1 {
        return Ok(None);
    }
    let uses = ast_util::array_uses(f, name)?;
    let index = indices(target);
    if index.len() != d.dims.len() {
        return Err("it is written as a whole row".into());
    }
    let assigned = ast_util::assigned_names(&f.body);
    if !own_element(&index, f, &assigned) {
        return Err(format!(
            "the element written at line {} is not the thread's own (`[threadIdx.x]` or `[threadIdx.y][threadIdx.x]`)",
            cx.line(f.body[w].meta.span)
        )
        .into());
    }
    let mut later = 0;
    for s in &f.body[w + 1..] {
        ast_util::visit_stmt_exprs(s, &mut |e| {
            let ExprKind::Index(..) = &e.kind else {
                return;
            };
            if indices_of(e, name).is_some_and(|i| same(&i, &index)) {
                later += 1;
            }
        });
    }
    // Every use but the write is a read of the thread's own element in a
    // statement after it.
    if later + 1 != uses.len() {
        return Err(
            "a thread reads an element other than the one it wrote, or reads before writing".into(),
        );
    }
    let mut names = ast_util::names_in(f);
    let v = fresh(&format!("{name}_v"), &mut names);
    let mut ty = d.ty.clone();
    ty.is_volatile = false;
    let mut g = f.clone();
    g.body[w] = decl(ty, &v, Some(value.clone()));
    for s in &mut g.body[w + 1..] {
        ast_util::visit_stmt_roots_mut(s, &mut |e| {
            replace_reads(e, name, &index, &v);
        });
    }
    let barrier = w + 1 < f.body.len() && is_sync(&f.body[w + 1]) && orders_nothing(f, w, name);
    if barrier {
        g.body.remove(w + 1);
    }
    for s in &mut g.body {
        if let StmtKind::Decl(ds) = &mut s.kind {
            ds.retain(|x| x.name != *name || x.space != Space::Shared);
        }
    }
    g.body
        .retain(|s| !matches!(&s.kind, StmtKind::Decl(ds) if ds.is_empty()));
    let line = cx.line(f.body[w].meta.span);
    let description = format!(
        "`{name}` held only each thread's own element (written at line {line}, read back only by the thread that wrote it): it is now a register `{v}`{}",
        if barrier {
            ", and the barrier after the write, which ordered nothing else, is gone"
        } else {
            ""
        }
    );
    Ok(Some(Candidate::new(Unstage.name(), g, description)))
}

/// `(target, value)` when `s` is `name[…] = value;`.
fn writes_element<'a>(s: &'a Stmt, name: &str) -> Option<(&'a Expr, &'a Expr)> {
    let StmtKind::Expr(e) = &s.kind else {
        return None;
    };
    let ExprKind::Assign(None, t, v) = &e.kind else {
        return None;
    };
    (matches!(t.kind, ExprKind::Index(..)) && root_name(t) == Some(name)).then_some((&**t, &**v))
}

/// The indices of `a[i][j]`, outermost first.
fn indices(e: &Expr) -> Vec<Expr> {
    match &e.kind {
        ExprKind::Index(b, i) => {
            let mut v = indices(b);
            v.push((**i).clone());
            v
        }
        _ => Vec::new(),
    }
}

/// The indices of `e` when it is `name[…]…` in full.
fn indices_of(e: &Expr, name: &str) -> Option<Vec<Expr>> {
    let mut base = e;
    while let ExprKind::Index(b, _) = &base.kind {
        base = b;
    }
    matches!(&base.kind, ExprKind::Ident(n) if n == name).then(|| indices(e))
}

fn same(a: &[Expr], b: &[Expr]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| equiv_expr(x, y))
}

/// Whether `index` is `[threadIdx.x]` or `[threadIdx.y][threadIdx.x]`,
/// each directly or through a local declared at the top of the body with
/// that value and never assigned.
fn own_element(index: &[Expr], f: &Function, assigned: &BTreeSet<String>) -> bool {
    let is = |e: &Expr, axis: &str| {
        if ast_util::thread_field(e) == Some(axis) {
            return true;
        }
        let ExprKind::Ident(n) = &e.kind else {
            return false;
        };
        !assigned.contains(n)
            && f.body.iter().any(|s| {
                matches!(&s.kind, StmtKind::Decl(ds) if ds.iter().any(|d| d.name == *n
                    && d.dims.is_empty()
                    && d.space == Space::Local
                    && matches!(&d.init, Some(copper::cuda::ast::Init::Expr(x)) if ast_util::thread_field(x) == Some(axis))))
            })
    };
    match index {
        [x] => is(x, "x"),
        [y, x] => is(y, "y") && is(x, "x"),
        _ => false,
    }
}

/// Whether the barrier after statement `w` orders nothing once `name` is
/// gone: no other shared memory, and nothing up to it writes memory or
/// calls what may.
fn orders_nothing(f: &Function, w: usize, name: &str) -> bool {
    let mut other_shared = false;
    for s in &f.body {
        ast_util::visit_stmts(s, &mut |x| {
            if let StmtKind::Decl(ds) = &x.kind {
                other_shared |= ds
                    .iter()
                    .any(|d| d.space == Space::Shared && d.name != name);
            }
        });
    }
    let before = Effects::of(&f.body[..=w]);
    !other_shared
        && !before.opaque_calls
        && !before.sync
        && before.array_writes.iter().all(|a| a == name)
}

/// Replaces each read `name[index]` in `e` by the register `v`; whether
/// it replaced any (an expression around one no longer prints as a
/// macro's invocation).
fn replace_reads(e: &mut Expr, name: &str, index: &[Expr], v: &str) -> bool {
    if indices_of(e, name).is_some_and(|i| same(&i, index)) {
        *e = ident(v);
        return true;
    }
    let mut any = false;
    for c in ast_util::children_mut(e) {
        any |= replace_reads(c, name, index, v);
    }
    if any {
        e.meta.macro_text = None;
    }
    any
}

#[cfg(test)]
mod tests;
