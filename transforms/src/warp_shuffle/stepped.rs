//! The tree of the classic `reduce5`/`reduce6`, whose steps above the
//! first warp are unrolled by hand, each guarded by the block size the
//! template is instantiated for:
//!
//! ```text
//! if (blockSize >= 512) { if (tid < 256) { sdata[tid] += sdata[tid + 256]; } __syncthreads(); }
//! if (blockSize >= 256) { if (tid < 128) { sdata[tid] += sdata[tid + 128]; } __syncthreads(); }
//! if (blockSize >= 128) { if (tid < 64) { sdata[tid] += sdata[tid + 64]; } __syncthreads(); }
//! if (tid < 32) warpReduce<blockSize>(sdata, tid);
//! ```
//!
//! The last of those steps (offset 64) stands where a loop stopping at 32
//! would; the warp-synchronous statement after it is the tail
//! ([`super::unrolled`]). The rewrite replaces only that tail: the steps
//! above it stay as written, with what they assume of the block
//! (`blockSize` threads), so it is right for every launch the original is.

use copper::cuda::ast::{BinOp, Expr, ExprKind, Function, Stmt, StmtKind};

use crate::ast_util::{self, int};

use super::tree::{accumulation, is_thread_x, Tree};

/// Recognizes `if (cond) { if (tid < 64) a[tid] ⊕= a[tid + 64]; __syncthreads(); }`,
/// the last hand-unrolled step of a tree above the first warp, as that
/// tree (without a loop), `tid` the thread's index.
pub(super) fn step_to_warp(f: &Function, s: &Stmt) -> Option<Tree> {
    let StmtKind::If {
        then, els: None, ..
    } = &s.kind
    else {
        return None;
    };
    let [guarded, barrier] = ast_util::branch_stmts(then).try_into().ok()?;
    if !ast_util::is_sync(&barrier) {
        return None;
    }
    let StmtKind::If {
        cond,
        then,
        els: None,
    } = &guarded.kind
    else {
        return None;
    };
    let ExprKind::Binary(BinOp::Lt, tid, k) = &cond.kind else {
        return None;
    };
    let offset = int(64);
    if !ast_util::equiv_expr(k, &offset) || !is_thread_x(f, tid) {
        return None;
    }
    let [update] = ast_util::branch_stmts(then).try_into().ok()?;
    let StmtKind::Expr(update) = &update.kind else {
        return None;
    };
    let (array, combine) = accumulation(update, tid, &offset)?;
    Some(Tree {
        looped: None,
        tid: tid.as_ref().clone(),
        array,
        combine,
        interleaved: None,
        unrolled: None,
    })
}

/// What a step's guard is in the instantiations of a template.
pub(super) enum Guard {
    /// It holds in each.
    Holds,
    /// Its value is known in each, not always true: the condition in
    /// the kernel's terms (a device function's template parameters
    /// replaced by what the call writes), and its value in each
    /// instantiation, in order.
    Varies(Expr, Vec<bool>),
    /// Its value is not known in some.
    Unknown,
}

/// What the comparison `cond` of constants (`blockSize >= 64`, `256 >=
/// 64`) is in `instances`: a name `n` stands for the text `bound(n)` (a
/// template argument as a call writes it), which is an integer or a
/// template value parameter of the instance.
pub(super) fn guard_in_all(
    cond: &Expr,
    instances: &[&Function],
    bound: &dyn Fn(&str) -> Option<String>,
) -> Guard {
    let ExprKind::Binary(op, l, r) = &cond.kind else {
        return Guard::Unknown;
    };
    let compare: fn(&u64, &u64) -> bool = match op {
        BinOp::Ge => u64::ge,
        BinOp::Gt => u64::gt,
        BinOp::Le => u64::le,
        BinOp::Lt => u64::lt,
        BinOp::Eq => u64::eq,
        BinOp::Ne => u64::ne,
        _ => return Guard::Unknown,
    };
    let values: Option<Vec<bool>> = instances
        .iter()
        .map(|f| {
            let leaf = |e: &Expr| match &e.kind {
                ExprKind::Ident(n) => {
                    let text = bound(n)?;
                    integer(&text).or_else(|| ast_util::template_value(f, &text))
                }
                _ => None,
            };
            let x = ast_util::value_with(l, &leaf)?;
            let y = ast_util::value_with(r, &leaf)?;
            Some(compare(&x, &y))
        })
        .collect();
    match values {
        Some(v) if !v.is_empty() && v.iter().all(|&b| b) => Guard::Holds,
        Some(v) if !v.is_empty() => {
            in_kernel_terms(cond, bound).map_or(Guard::Unknown, |c| Guard::Varies(c, v))
        }
        _ => Guard::Unknown,
    }
}

/// The integer `text` spells (`64`, `64u`).
fn integer(text: &str) -> Option<u64> {
    text.trim_end_matches(['u', 'U', 'l', 'L']).parse().ok()
}

/// `cond` with each name `n` replaced by what `bound(n)` spells: an
/// integer or a name.
fn in_kernel_terms(cond: &Expr, bound: &dyn Fn(&str) -> Option<String>) -> Option<Expr> {
    let mut names = Vec::new();
    copper::cuda::visit::visit_expr(cond, &mut |e| {
        if let ExprKind::Ident(n) = &e.kind {
            names.push(n.clone());
        }
    });
    names.dedup();
    let mut out = cond.clone();
    for n in names {
        let t = bound(&n)?;
        let to = match integer(&t) {
            Some(value) => ast_util::expr(ExprKind::Int { value, text: t }),
            None => ast_util::ident(&t),
        };
        ast_util::replace_expr(&mut out, &ast_util::ident(&n), &to);
    }
    Some(out)
}

#[cfg(test)]
mod tests;
