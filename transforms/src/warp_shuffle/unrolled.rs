//! The warp-synchronous tail students copy from the classic reduction
//! slides: the tree loop stops at 32 (`s > 32`) and the first warp
//! finishes by hand, without barriers,
//!
//! ```text
//! if (tid < 32) warpReduce(sdata, tid);     // __device__ void warpReduce(volatile int *s, unsigned t)
//!                                           // { s[t] += s[t + 32]; s[t] += s[t + 16]; … s[t] += s[t + 1]; }
//! ```
//!
//! or the same six steps written inline (on the array, or on a `volatile`
//! pointer to it declared first). The steps rely on the lanes of a warp
//! running in lockstep, which CUDA no longer promises (since Volta,
//! without `__syncwarp` between them, a lane may read its partner's
//! element before the partner wrote it). Shuffles compute the same
//! values in lane 0 in the same order, without shared memory.

use copper::cuda::ast::{BinOp, Expr, ExprKind, FnKind, Function, Init, Stmt, StmtKind};
use copper::cuda::parse::ParsedFile;

use crate::ast_util::{self, ident, int};

use super::tree::{accumulation, is_thread_x, literal, name_of, Tree, Written};

/// The offsets of the hand-unrolled steps, in order.
const OFFSETS: [u64; 6] = [32, 16, 8, 4, 2, 1];

/// Whether `s`, the statement after `tree`'s loop (which stops at 32),
/// is its hand-unrolled warp-synchronous tail: `if (tid < 32)` around the
/// six steps combining `tree.array` as the loop does, inline or in a
/// `__device__` function of `file` called with the array and the thread
/// index. How it is written when it is.
pub(super) fn tail_of(file: &ParsedFile, f: &Function, s: &Stmt, tree: &Tree) -> Option<Written> {
    let StmtKind::If {
        cond,
        then,
        els: None,
    } = &s.kind
    else {
        return None;
    };
    let ExprKind::Binary(BinOp::Lt, tid, n) = &cond.kind else {
        return None;
    };
    if literal(n) != Some(32) || !(ast_util::equiv_expr(tid, &tree.tid) || is_thread_x(f, tid)) {
        return None;
    }
    let stmts = ast_util::branch_stmts(then);
    if let [call] = stmts.as_slice() {
        if let StmtKind::Expr(e) = &call.kind {
            if let ExprKind::Call(name, args) = &e.kind {
                return device_steps(file, f, name, args, tree).then(|| Some(name.clone()));
            }
        }
    }
    steps(&stmts, &tree.array, &tree.tid, tree).then_some(None)
}

/// Whether `name(args)` calls a `__device__` function of `file` whose
/// body is the six steps over the parameters the array and the thread
/// index are passed as.
fn device_steps(file: &ParsedFile, f: &Function, name: &str, args: &[Expr], tree: &Tree) -> bool {
    let Some(g) = file.functions.iter().find_map(|p| match &p.result {
        Ok(g) if p.item.name == name && g.kind == FnKind::Device => Some(g),
        _ => None,
    }) else {
        return false;
    };
    if g.params.len() != args.len() || g.template.is_some() {
        return false;
    }
    let array = args
        .iter()
        .position(|a| name_of(a) == Some(tree.array.as_str()));
    let tid = args
        .iter()
        .position(|a| ast_util::equiv_expr(a, &tree.tid) || is_thread_x(f, a));
    let (Some(array), Some(tid)) = (array, tid) else {
        return false;
    };
    steps(
        &g.body,
        &g.params[array].name,
        &ident(&g.params[tid].name),
        tree,
    )
}

/// Whether `stmts` are the six steps `a[tid] ⊕= a[tid + k]` (k = 32 … 1,
/// combining as `tree` does) on `array`, or on a pointer to it declared
/// first (`volatile int *v = array;`).
fn steps(stmts: &[Stmt], array: &str, tid: &Expr, tree: &Tree) -> bool {
    let (target, rest) = match stmts.split_first() {
        Some((first, rest)) => match alias_of(first, array) {
            Some(alias) => (alias, rest),
            None => (array.to_string(), stmts),
        },
        None => return false,
    };
    rest.len() == OFFSETS.len()
        && rest.iter().zip(OFFSETS).all(|(s, k)| match &s.kind {
            StmtKind::Expr(update) => accumulation(update, tid, &int(k))
                .is_some_and(|(a, c)| a == target && c == tree.combine),
            _ => false,
        })
}

/// `v` when `s` declares the pointer `v` to `array` (`volatile T *v = array;`).
fn alias_of(s: &Stmt, array: &str) -> Option<String> {
    let StmtKind::Decl(ds) = &s.kind else {
        return None;
    };
    let [d] = ds.as_slice() else {
        return None;
    };
    match &d.init {
        Some(Init::Expr(e)) if name_of(e) == Some(array) && d.ty.is_pointer() => {
            Some(d.name.clone())
        }
        _ => None,
    }
}
