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
//! pointer to it declared first). Each step may be guarded by a condition
//! that holds in every instantiation of the file (`if (blockSize >= 32)`
//! in the template `warpReduce<blockSize>` of `reduce5`/`reduce6`, or
//! `if (BLOCK_SIZE >= 32)` once the macro is expanded); the first step's
//! guard (`blockSize >= 64`) may fail in some (`reduce6<32>`, whose
//! block has no elements from 32 on), and the shuffles' first step keeps
//! it, in the kernel's terms. The steps rely on the lanes of a warp
//! running in lockstep, which CUDA no longer promises (since Volta,
//! without `__syncwarp` between them, a lane may read its partner's
//! element before the partner wrote it). Shuffles compute the same
//! values in lane 0 in the same order, without shared memory.

use copper::cuda::ast::{BinOp, Expr, ExprKind, FnKind, Function, Init, Stmt, StmtKind};
use copper::cuda::parse::ParsedFile;
use copper::cuda::template;

use crate::ast_util::{self, ident, int};

use super::stepped::{guard_in_all, Guard};

use super::tree::{accumulation, is_thread_x, literal, name_of, Tree, Written};

/// The offsets of the hand-unrolled steps, in order.
const OFFSETS: [u64; 6] = [32, 16, 8, 4, 2, 1];

/// Whether `s`, the statement after `tree`'s loop (which stops at 32),
/// is its hand-unrolled warp-synchronous tail: `if (tid < 32)` around the
/// six steps combining `tree.array` as the loop does, inline or in a
/// `__device__` function of `file` called with the array and the thread
/// index. `instances` are the kernel searched and the file's other
/// instantiations of its template, in which every guard of a step must
/// hold. How it is written when it is.
pub(super) fn tail_of(
    file: &ParsedFile,
    instances: &[&Function],
    s: &Stmt,
    tree: &Tree,
) -> Option<Written> {
    let f = *instances.first()?;
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
    let written = |function: Option<String>, guards: Guards| Written {
        function,
        first_guard: guards.first,
        under_a_warp: guards.full_warp.map(|g| (g, then.as_ref().clone())),
    };
    if let [call] = stmts.as_slice() {
        if let StmtKind::Expr(e) = &call.kind {
            if let ExprKind::Call(name, args) = &e.kind {
                let guards = device_steps(file, instances, name, args, tree)?;
                return Some(written(Some(name.clone()), guards));
            }
        }
    }
    let guard = |c: &Expr| guard_in_all(c, instances, &|n| Some(n.to_string()));
    let guards = steps(&stmts, &tree.array, &tree.tid, tree, &guard)?;
    Some(written(None, guards))
}

/// The guards of the six steps that vary between instantiations, in the
/// kernel's terms.
struct Guards {
    /// The first step's (`blockSize >= 64`).
    first: Option<Expr>,
    /// The second step's (`blockSize >= 32`): where it fails, the block is
    /// under a warp and the steps stay as written.
    full_warp: Option<Expr>,
}

/// When `name(args)` calls a `__device__` function of `file` whose
/// body is the six steps over the parameters the array and the thread
/// index are passed as (for a template, `warpReduce<blockSize>(…)`, its
/// guards read with the arguments written at the call); the first step's
/// guards as [`steps`] gives them.
fn device_steps(
    file: &ParsedFile,
    instances: &[&Function],
    name: &str,
    args: &[Expr],
    tree: &Tree,
) -> Option<Guards> {
    let &f = instances.first()?;
    let (base, written) = match template::split_name(name) {
        Some((base, targs)) => (base, targs.split(',').map(str::trim).collect()),
        None => (name, Vec::new()),
    };
    let g = file.functions.iter().find_map(|p| match &p.result {
        Ok(g) if p.item.name == base && g.kind == FnKind::Device => Some(g),
        _ => None,
    })?;
    let tparams = g.template.as_ref().map_or(&[][..], |t| t.params.as_slice());
    if g.params.len() != args.len() || tparams.len() != written.len() {
        return None;
    }
    // A template parameter of `g` stands for what the call writes.
    let bound = |n: &str| {
        let at = tparams.iter().position(|p| p.name == n)?;
        written.get(at).map(|a| a.to_string())
    };
    let array = args
        .iter()
        .position(|a| name_of(a) == Some(tree.array.as_str()));
    let tid = args
        .iter()
        .position(|a| ast_util::equiv_expr(a, &tree.tid) || is_thread_x(f, a));
    let (Some(array), Some(tid)) = (array, tid) else {
        return None;
    };
    let guard = |c: &Expr| guard_in_all(c, instances, &bound);
    steps(
        &g.body,
        &g.params[array].name,
        &ident(&g.params[tid].name),
        tree,
        &guard,
    )
}

/// When `stmts` are the six steps `a[tid] ⊕= a[tid + k]` (k = 32 … 1,
/// combining as `tree` does) on `array`, or on a pointer to it declared
/// first (`volatile int *v = array;`), each alone or under an `if` whose
/// condition holds in every instantiation (`guard`). The first step's
/// condition may also be known in each and fail in some, and so may the
/// second's, when each later step's holds wherever the second's does
/// (`blockSize >= 32`, then `>= 16`, …): those are given, in the
/// kernel's terms.
fn steps(
    stmts: &[Stmt],
    array: &str,
    tid: &Expr,
    tree: &Tree,
    guard: &dyn Fn(&Expr) -> Guard,
) -> Option<Guards> {
    let (first, rest) = stmts.split_first()?;
    let (target, rest) = match alias_of(first, array) {
        Some(alias) => (alias, rest),
        None => (array.to_string(), stmts),
    };
    if rest.len() != OFFSETS.len() {
        return None;
    }
    let mut guards = Guards {
        first: None,
        full_warp: None,
    };
    let mut full_warp_holds: Option<Vec<bool>> = None;
    for (s, k) in rest.iter().zip(OFFSETS) {
        let step = match &s.kind {
            StmtKind::If {
                cond,
                then,
                els: None,
            } => {
                match guard(cond) {
                    Guard::Holds => {}
                    Guard::Varies(c, _) if k == OFFSETS[0] => guards.first = Some(c),
                    // Shuffles that run in no instantiation would repair
                    // nothing.
                    Guard::Varies(c, holds) if k == OFFSETS[1] && holds.contains(&true) => {
                        guards.full_warp = Some(c);
                        full_warp_holds = Some(holds);
                    }
                    // A later step is skipped only where the block is
                    // under a warp already.
                    Guard::Varies(_, holds) => {
                        let warp = full_warp_holds.as_ref()?;
                        if warp.iter().zip(&holds).any(|(&w, &h)| w && !h) {
                            return None;
                        }
                    }
                    Guard::Unknown => return None,
                }
                match ast_util::branch_stmts(then).as_slice() {
                    [only] => only.kind.clone(),
                    _ => return None,
                }
            }
            kind => kind.clone(),
        };
        let StmtKind::Expr(update) = &step else {
            return None;
        };
        accumulation(update, tid, &int(k)).filter(|(a, c)| *a == target && *c == tree.combine)?;
    }
    Some(guards)
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
