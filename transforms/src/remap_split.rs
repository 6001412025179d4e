//! Exchanging a 1-D kernel's row/column split for coalescing.
//!
//! Many first kernels launch one thread per element of an `H×W` matrix
//! and split the global thread index: `row = idx / W; col = idx % W`.
//! Consecutive threads then take consecutive `col`; when the kernel walks
//! its arrays along `row` (a column-major `a[col * H + row]`, or a
//! row-major array indexed `a[row * W + col]` with the split the other way
//! round), the lanes of a warp touch elements a whole row apart. Exchanging
//! the split (`col = idx / H; row = idx % H`) hands the same `(row, col)`
//! pairs to the threads in the other order, so consecutive lanes take
//! consecutive `row`.
//!
//! The rewrite applies to a kernel whose top-level statements declare
//! `idx = blockIdx.x * blockDim.x + threadIdx.x` (casts allowed) and then
//! `P = idx / A` and `S = idx % A`, with a guard that covers exactly the
//! `B×A` index space whichever way the split goes: `idx < A * B` (or
//! `idx >= A * B` returning), or `P < B && S < A` (or `P >= B || S >= A`
//! returning). Since `idx ≥ 0`, both name the indices `0 ≤ idx < A·B`, on
//! which `(idx / A, idx % A)` and `(idx % B, idx / B)` are both bijections
//! onto `[0, B) × [0, A)` (assuming `A, B ≥ 1` and `A·B` without overflow,
//! as sizes are). So the guarded code runs for the same pairs, each once.
//! It must depend on the thread only through `P` and `S`: `idx`, `P` and
//! `S` are never assigned, `idx` appears nowhere else, neither does
//! `threadIdx` or `blockIdx`, and nothing observes warps (no `__shared__`,
//! barrier, warp intrinsic, atomic or device-function call, as for the 2-D
//! remapping). Then every thread of the rewrite does what the thread with
//! its pair did, and the two kernels race alike: accesses of one pair stay
//! in one thread, accesses of different pairs in different threads. The
//! launch does not change.
//!
//! Ranked by the bounds: the split analysis (`copper::absint::divmod`)
//! sees `row * W + col` as `idx` itself, so the rewrite is proposed only
//! when some global access then needs fewer sectors per warp; the
//! differential check runs it on every test launch.

use copper::cuda::ast::{BinOp, Expr, ExprKind, Function, Init, Stmt, StmtKind, UnOp};

use crate::ast_util::{self, early_exit, equiv_expr, Effects};
use crate::remap_threads::{gains_of, observes_warps};
use crate::{Candidate, Context, Proposals, Refusal, Transform};

/// Exchanging `row = idx / W; col = idx % W` for `col = idx / H; row =
/// idx % H`.
pub struct RemapSplit;

/// A row/column split found in a kernel.
struct Split {
    /// The global thread index's name.
    idx: String,
    /// The quotient's and the remainder's names.
    quotient: String,
    remainder: String,
    /// The divisor `A` and the other extent `B` of the guard.
    divisor: Expr,
    other: Expr,
    /// Top-level statements: `idx`'s declaration, the quotient's and the
    /// remainder's, and the guard.
    idx_at: usize,
    decls_at: [usize; 2],
    guard_at: usize,
}

impl Transform for RemapSplit {
    fn name(&self) -> &'static str {
        "split exchange"
    }

    fn propose(&self, cx: &Context) -> Proposals {
        let f = cx.function;
        let Some(found) = find_split(f) else {
            return Proposals::default();
        };
        let made = found.and_then(|split| exchange(cx, &split));
        Proposals::one(f.meta.span, "the row/column split stays", made)
    }
}

/// The kernel of `cx` with `split` exchanged, or why not.
fn exchange(cx: &Context, split: &Split) -> Result<Candidate, Refusal> {
    let f = cx.function;
    independent(cx, split)?;
    let function = exchanged(f, split);
    let gains = gains_of(cx, &function, cx.analysis.config())?;
    if gains.is_empty() {
        return Err("exchanging it would not make any global access touch fewer sectors".into());
    }
    let print = copper::cuda::print::expression;
    let size = |e: &Expr| print(&in_parameters(f, e, 0));
    let covers = format!("({}) * ({})", size(&split.divisor), size(&split.other));
    let description = format!(
                "exchanged the split of `{idx}`: `{q} = {idx} % {b}; {r} = {idx} / {b}` (was `/ {a}` and `% {a}`; the guard covers the same {b}×{a} elements); {}; assumes every launch runs at least `{covers}` threads, one per element, as a launch sized for the matrix does",
                gains.join("; "),
                idx = split.idx,
                q = split.quotient,
                r = split.remainder,
                a = print(&split.divisor),
                b = print(&split.other),
            );
    Ok(Candidate {
        covers: Some(covers),
        ..Candidate::new(RemapSplit.name(), function, description)
    })
}

/// `e` without casts around it.
pub(crate) fn uncast(e: &Expr) -> &Expr {
    match &e.kind {
        ExprKind::Cast(_, _, x) => uncast(x),
        _ => e,
    }
}

fn is_field(e: &Expr, base: &str, field: &str) -> bool {
    matches!(&uncast(e).kind, ExprKind::Member { base: b, field: f, arrow: false }
        if f == field && matches!(&b.kind, ExprKind::Ident(n) if n == base))
}

/// `blockIdx.x * blockDim.x + threadIdx.x` in any order, casts allowed.
pub(crate) fn is_global_x(e: &Expr) -> bool {
    let ExprKind::Binary(BinOp::Add, l, r) = &uncast(e).kind else {
        return false;
    };
    let product = |e: &Expr| match &uncast(e).kind {
        ExprKind::Binary(BinOp::Mul, a, b) => {
            (is_field(a, "blockIdx", "x") && is_field(b, "blockDim", "x"))
                || (is_field(b, "blockIdx", "x") && is_field(a, "blockDim", "x"))
        }
        _ => false,
    };
    (product(l) && is_field(r, "threadIdx", "x")) || (product(r) && is_field(l, "threadIdx", "x"))
}

pub(crate) fn is_ident(e: &Expr, name: &str) -> bool {
    matches!(&uncast(e).kind, ExprKind::Ident(n) if n == name)
}

/// The top-level declarations `name = init` of the kernel, in order.
pub(crate) fn top_decls(f: &Function) -> Vec<(usize, &str, &Expr)> {
    let mut out = Vec::new();
    for (i, s) in f.body.iter().enumerate() {
        if let StmtKind::Decl(ds) = &s.kind {
            for d in ds {
                if let (Some(Init::Expr(e)), true) = (&d.init, d.dims.is_empty()) {
                    out.push((i, d.name.as_str(), e));
                }
            }
        }
    }
    out
}

/// The split of a kernel that has one: `None` when it has no `idx / A`
/// and `idx % A` of the global thread index; an error naming what else is
/// missing.
fn find_split(f: &Function) -> Option<Result<Split, Refusal>> {
    let decls = top_decls(f);
    let &(idx_at, idx, _) = decls.iter().find(|(_, _, e)| is_global_x(e))?;
    let of = |op: BinOp| {
        decls.iter().find_map(|(i, name, e)| match &e.kind {
            ExprKind::Binary(o, x, a) if *o == op && is_ident(x, idx) => Some((*i, *name, &**a)),
            _ => None,
        })
    };
    let (q_at, quotient, a) = of(BinOp::Div)?;
    let (r_at, remainder, a2) = of(BinOp::Rem)?;
    if !equiv_expr(a, a2) {
        return Some(Err(format!(
            "`{quotient}` and `{remainder}` divide `{idx}` by different values"
        )
        .into()));
    }
    let guard = f.body.iter().enumerate().find_map(|(i, s)| {
        let (cond, returns) = guard_of(s)?;
        Some((i, extent(cond, returns, idx, quotient, remainder, a)?))
    });
    let Some((guard_at, other)) = guard else {
        return Some(Err(format!(
            "no guard `if ({idx} < {a} * …)` or `if ({quotient} < … && {remainder} < {a})` names the other extent",
            a = copper::cuda::print::expression(a)
        ).into()));
    };
    Some(Ok(Split {
        idx: idx.to_string(),
        quotient: quotient.to_string(),
        remainder: remainder.to_string(),
        divisor: a.clone(),
        other,
        idx_at,
        decls_at: [q_at, r_at],
        guard_at,
    }))
}

/// An `if` with no `else`: its condition, and whether its body is just
/// `return;`.
fn guard_of(s: &Stmt) -> Option<(&Expr, bool)> {
    if let Some(cond) = early_exit(s) {
        return Some((cond, true));
    }
    match &s.kind {
        StmtKind::If {
            cond, els: None, ..
        } => Some((cond, false)),
        _ => None,
    }
}

/// The other extent `B` a guard names: `idx < A * B` (`idx >= A * B` when
/// it returns), `P < B && S < A` (`P >= B || S >= A`), in either order.
fn extent(cond: &Expr, returns: bool, idx: &str, q: &str, r: &str, a: &Expr) -> Option<Expr> {
    let (lt, join) = if returns {
        (BinOp::Ge, BinOp::Or)
    } else {
        (BinOp::Lt, BinOp::And)
    };
    let below = |e: &Expr, name: &str| match &e.kind {
        ExprKind::Binary(op, x, bound) if *op == lt && is_ident(x, name) => Some((**bound).clone()),
        _ => None,
    };
    if let Some(total) = below(cond, idx) {
        let ExprKind::Binary(BinOp::Mul, x, y) = &total.kind else {
            return None;
        };
        return if equiv_expr(x, a) {
            Some((**y).clone())
        } else if equiv_expr(y, a) {
            Some((**x).clone())
        } else {
            None
        };
    }
    let ExprKind::Binary(op, x, y) = &cond.kind else {
        return None;
    };
    if *op != join {
        return None;
    }
    [(x, y), (y, x)].into_iter().find_map(|(x, y)| {
        let b = below(x, q)?;
        below(y, r).filter(|w| equiv_expr(w, a)).map(|_| b)
    })
}

/// Why the work may depend on more than the pair `(P, S)` a thread
/// takes, or run for pairs outside the guard, if it may.
fn independent(cx: &Context, s: &Split) -> Result<(), Refusal> {
    observes_warps(cx)?;
    let f = cx.function;
    let returns = guard_of(&f.body[s.guard_at]).is_some_and(|(_, r)| r);
    let split = [&s.idx, &s.quotient, &s.remainder];
    let mut why = None;
    for (i, st) in f.body.iter().enumerate() {
        let reads = Effects::of(std::slice::from_ref(st)).reads;
        let reads_pair = reads.contains(&s.quotient) || reads.contains(&s.remainder);
        // The pair only under the guard.
        let under_guard = i == s.guard_at || i > s.guard_at && returns;
        if reads_pair && !under_guard {
            why.get_or_insert(format!(
                "`{}` or `{}` is used where the guard does not hold",
                s.quotient, s.remainder
            ));
        }
        // `idx` only in the split and the guard's condition.
        let idx_ok = s.decls_at.contains(&i)
            || i == s.guard_at
                && matches!(&st.kind, StmtKind::If { then, .. }
                    if !Effects::of(std::slice::from_ref(&**then)).reads.contains(&s.idx));
        if reads.contains(&s.idx) && !idx_ok {
            why.get_or_insert(format!(
                "`{}` is used beyond the split, so the work depends on which thread takes which element",
                s.idx
            ));
        }
        ast_util::visit_stmts(st, &mut |x| {
            if let StmtKind::Decl(ds) = &x.kind {
                for d in ds.iter().filter(|d| split.contains(&&d.name)) {
                    if !std::ptr::eq(x, st) {
                        why.get_or_insert(format!("`{}` is declared again", d.name));
                    }
                }
            }
        });
        ast_util::visit_stmt_exprs(st, &mut |e| {
            let written = match &e.kind {
                ExprKind::Assign(_, lhs, _) => Some(&**lhs),
                ExprKind::Unary(UnOp::PreInc | UnOp::PreDec | UnOp::PostInc | UnOp::PostDec, x) => {
                    Some(&**x)
                }
                _ => None,
            };
            if let Some(name) = written.and_then(ast_util::root_name) {
                if split.iter().any(|n| *n == name) {
                    why.get_or_insert(format!("`{name}` is assigned"));
                }
            }
            let thread = matches!(&e.kind, ExprKind::Member { base, .. }
                if matches!(&base.kind, ExprKind::Ident(n) if n == "threadIdx" || n == "blockIdx"));
            if thread && i != s.idx_at {
                why.get_or_insert("it uses `threadIdx` or `blockIdx` beyond the split".into());
            }
        });
    }
    let first = s.decls_at[0].min(s.decls_at[1]);
    for (what, e) in [("divisor", &s.divisor), ("other extent", &s.other)] {
        if let Some(name) = unstable(f, e, first) {
            why.get_or_insert(format!(
                "the {what} `{}` may change or is not known where the split is computed (`{name}`)",
                copper::cuda::print::expression(e)
            ));
        }
    }
    let params = f.params.iter().map(|p| &p.name);
    if let Some(n) = params.into_iter().find(|p| split.contains(p)) {
        why.get_or_insert(format!("`{n}` is a parameter too"));
    }
    why.map_or(Ok(()), |why| Err(Refusal::Other(why)))
}

/// Whether `e` has one value in the whole kernel, known before top-level
/// statement `before`: pure, reading no memory, and every name in it a
/// parameter, a name the kernel does not declare, or a top-level
/// declaration before `before`, none of them ever assigned. `Some` names
/// the first that is not (the whole of `e` when it is not pure).
pub(crate) fn unstable(f: &Function, e: &Expr, before: usize) -> Option<String> {
    if !ast_util::is_pure(e) || ast_util::reads_memory(e) {
        return Some(copper::cuda::print::expression(e));
    }
    let mut top = std::collections::BTreeMap::new();
    for (i, st) in f.body.iter().enumerate() {
        if let StmtKind::Decl(ds) = &st.kind {
            top.extend(ds.iter().map(|d| (d.name.clone(), i)));
        }
    }
    let mut nested = std::collections::BTreeSet::new();
    for st in &f.body {
        ast_util::visit_stmts(st, &mut |x| {
            if let StmtKind::Decl(ds) = &x.kind {
                if !std::ptr::eq(x, st) {
                    nested.extend(ds.iter().map(|d| d.name.clone()));
                }
            }
        });
    }
    let mut assigned = std::collections::BTreeSet::new();
    for st in &f.body {
        ast_util::visit_stmt_exprs(st, &mut |x| match &x.kind {
            ExprKind::Assign(_, lhs, _)
            | ExprKind::Unary(UnOp::PreInc | UnOp::PreDec | UnOp::PostInc | UnOp::PostDec, lhs) => {
                assigned.extend(ast_util::root_name(lhs).map(str::to_string));
            }
            _ => {}
        });
    }
    let names = Effects::of(&[ast_util::stmt(StmtKind::Expr(e.clone()))]).reads;
    names.into_iter().find(|n| {
        assigned.contains(n) || nested.contains(n) || top.get(n).is_some_and(|&i| i >= before)
    })
}

/// `e` over the kernel's parameters: top-level locals replaced by their
/// initializers, casts dropped (a length expression for the checker).
fn in_parameters(f: &Function, e: &Expr, depth: usize) -> Expr {
    if let ExprKind::Ident(n) = &e.kind {
        let init = top_decls(f).into_iter().find(|(_, name, _)| name == n);
        if let (Some((_, _, init)), true) = (init, depth < 8) {
            return in_parameters(f, init, depth + 1);
        }
    }
    let mut out = uncast(e).clone();
    for c in ast_util::children_mut(&mut out) {
        *c = in_parameters(f, c, depth);
    }
    out
}

/// The kernel with the split exchanged: `P = idx % B; S = idx / B`.
fn exchanged(f: &Function, s: &Split) -> Function {
    let mut g = f.clone();
    for st in &mut g.body {
        let StmtKind::Decl(ds) = &mut st.kind else {
            continue;
        };
        for d in ds {
            let op = if d.name == s.quotient {
                BinOp::Rem
            } else if d.name == s.remainder {
                BinOp::Div
            } else {
                continue;
            };
            if let Some(Init::Expr(e)) = &mut d.init {
                if let ExprKind::Binary(o, _, a) = &mut e.kind {
                    *o = op;
                    **a = s.other.clone();
                }
            }
        }
    }
    g
}
