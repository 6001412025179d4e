//! The `while` form of a tree reduction, as students copy it, normalized
//! to the `for` form [`super::tree`] (a shared-memory tree) or
//! [`crate::global_tree`] (one in global memory) recognizes:
//!
//! ```text
//! int i = blockDim.x / 2;                      for (int i = blockDim.x / 2; i != 0; i /= 2) {
//! while (i != 0) {                                 if (tid < i) cache[tid] += cache[tid + i];
//!     if (tid < i) cache[tid] += cache[tid + i];   __syncthreads();
//!     __syncthreads();                         }
//!     i /= 2;
//! }
//! ```
//!
//! Why it is the same loop: the declaration is the statement right before
//! the `while` and declares only the counter; the body's last statement
//! is the step, an expression statement, and nothing before it in the
//! body jumps (no `continue`, `break`, `return`: the body is exactly a
//! guarded update and a barrier, which the tree matcher checks), so the
//! `for` runs the same statements in the same order; and the counter is
//! not named after the loop, so moving its scope into the `for` changes
//! nothing else.
//!
//! With the barrier first (`__syncthreads(); if (tid < i) …; i /= 2;`) the
//! loop is `__syncthreads();` followed by the `for` form with one barrier
//! more, after its last step (the leading barrier is left out when the
//! statement before the loop is already one: two barriers in a row order
//! nothing more than one). That barrier is a statement of the kernel's
//! body after a loop whose trip count is the same in every thread (the
//! matcher and the plan require a start fixed by the block), so every
//! thread reaches it; a barrier every thread reaches only removes
//! interleavings, so a kernel without data races computes the same
//! values with it (and the checker simulates the candidate against the
//! original anyway).

use copper::cuda::ast::{Expr, ExprKind, Function, Init, Stmt, StmtKind};
use copper::source::Span;

use crate::ast_util::{self, block, stmt, sync};

use super::tree::name_of;

/// A `while` tree reduction found in the kernel's body.
pub(crate) struct WhileLoop {
    /// The index of the `for` loop in the normalized body.
    pub at: usize,
    /// Where the `while` statement is in the file.
    pub span: Span,
    /// Whether the barrier comes first in the loop's body.
    pub barrier_first: bool,
    /// The counter's declaration and the `while` as the kernel writes
    /// them, for a rewrite to keep as the code other blocks run.
    pub original: Vec<Stmt>,
}

impl WhileLoop {
    /// What the report says of this loop, its counter `var` and its line.
    pub(crate) fn note(&self, var: &str, line: usize) -> String {
        let first = if self.barrier_first {
            ", its leading barrier placed before the loop (unless one is already there) and one added after it, which every thread reaches"
        } else {
            ""
        };
        format!(
            "the `while` loop at line {line} is the tree reduction `for ({var} = …; …; …)` (the counter's declaration and step moved into the loop's head{first})"
        )
    }
}

/// What a normalized loop must be: `matches(f, loop)` for the `for` loop
/// built, in the kernel `f` it is found in.
pub(crate) type Matcher<'m> = &'m dyn Fn(&Function, &Stmt) -> bool;

/// `f` with every `while` tree reduction of its body that `matches` knows
/// in its `for` form written as that form, and where each was; `None`
/// when it has none.
pub(crate) fn normalize(f: &Function, matches: Matcher) -> Option<(Function, Vec<WhileLoop>)> {
    let mut body = Vec::new();
    let mut found = Vec::new();
    let mut at = 0;
    while at < f.body.len() {
        let rest = &f.body[at + 1..];
        if let Some((mut stmts, barrier_first)) = as_for(f, &f.body[at], rest, matches) {
            // A barrier right before the loop already orders what the
            // loop's leading barrier would.
            if barrier_first && body.last().is_some_and(ast_util::is_sync) {
                stmts.remove(0);
            }
            found.push(WhileLoop {
                at: body.len() + stmts.len() - 1,
                span: f.body[at + 1].meta.span,
                barrier_first,
                original: f.body[at..at + 2].to_vec(),
            });
            body.extend(stmts);
            at += 2;
        } else {
            body.push(f.body[at].clone());
            at += 1;
        }
    }
    if found.is_empty() {
        return None;
    }
    Some((Function { body, ..f.clone() }, found))
}

/// The `for` form of `decl; while (…) { … }` (`rest[0]` the `while`), with
/// a barrier before it when the loop's body starts with one; `None` unless
/// the result is a tree reduction `matches` recognizes and the counter is
/// not named after the loop.
fn as_for(f: &Function, decl: &Stmt, rest: &[Stmt], matches: Matcher) -> Option<(Vec<Stmt>, bool)> {
    let StmtKind::Decl(ds) = &decl.kind else {
        return None;
    };
    let [d] = ds.as_slice() else {
        return None;
    };
    if !matches!(d.init, Some(Init::Expr(_))) || !d.dims.is_empty() || d.is_static {
        return None;
    }
    let (first, after) = rest.split_first()?;
    let StmtKind::While { cond, body } = &first.kind else {
        return None;
    };
    let mut stmts = ast_util::branch_stmts(body);
    let Some(Stmt {
        kind: StmtKind::Expr(step),
        ..
    }) = stmts.pop()
    else {
        return None;
    };
    if !assigns(&step, &d.name) {
        return None;
    }
    let barrier_first = stmts.first().is_some_and(ast_util::is_sync) && stmts.len() == 2;
    if barrier_first {
        stmts.rotate_left(1);
    }
    if names(after, &d.name) {
        return None;
    }
    let looped = stmt(StmtKind::For {
        init: Some(Box::new(decl.clone())),
        cond: Some(cond.clone()),
        step: Some(step),
        body: Box::new(block(stmts)),
    });
    if !matches(f, &looped) {
        return None;
    }
    let mut out = Vec::new();
    if barrier_first {
        out.push(sync());
    }
    out.push(looped);
    Some((out, barrier_first))
}

/// Whether `e` assigns `name` (`i /= 2`, `i >>= 1`, `i = i / 2`).
fn assigns(e: &Expr, name: &str) -> bool {
    matches!(&e.kind, ExprKind::Assign(_, l, _) if name_of(l) == Some(name))
}

/// Whether any of `stmts` names `name` (uses or declares it).
fn names(stmts: &[Stmt], name: &str) -> bool {
    let mut found = false;
    for s in stmts {
        ast_util::visit_stmts(s, &mut |x| {
            if let StmtKind::Decl(ds) = &x.kind {
                found |= ds.iter().any(|d| d.name == name);
            }
        });
        ast_util::visit_stmt_exprs(s, &mut |e| {
            found |= matches!(&e.kind, ExprKind::Ident(n) if n == name);
        });
    }
    found
}

#[cfg(test)]
mod tests;
