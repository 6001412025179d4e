//! Chunked threads made interleaved, for coalescing.
//!
//! A first kernel often gives each thread a contiguous run of `C`
//! elements: `idx = blockIdx.x * blockDim.x + threadIdx.x`, then
//! `for (int k = 0; k < C; k++) out[idx * C + k] = f(in[idx * C + k]);`.
//! The lanes of a warp are then `C` elements apart at every step, and each
//! warp request touches up to 32 sectors. Handing out the same elements
//! the other way round, element `e = k * N + idx` at step `k` (`N =
//! blockDim.x * gridDim.x`, the threads along x), makes consecutive lanes
//! take consecutive elements:
//!
//! ```text
//! const long long stride = (long long)blockDim.x * gridDim.x;
//! const long long total = (long long)m * C;  // only with a guard `idx < m`
//! for (int k = 0; k < C; k++) {
//!     long long e = k * stride + idx;
//!     if (e >= total) {                        // only with the guard
//!         break;
//!     }
//!     out[e] = f(in[e]);
//! }
//! ```
//!
//! **Which elements.** For `0 ≤ idx < N` and `0 ≤ k < C`, both `idx·C + k`
//! and `k·N + idx` are bijections onto `[0, N·C)`. So with no guard the
//! two kernels visit the same elements, each once. A per-thread guard
//! (`if (idx < m) { loop }`, or `if (idx >= m) return;` right before the
//! loop) restricts the original to `idx < m`, that is to the elements
//! `e < m·C` (for `C ≥ 1`, `⌊e / C⌋ < m ⟺ e < m·C`): the rewrite tests
//! exactly that, on every launch, whatever its size (no assumption that
//! the launch covers `m` threads); as `e` grows with `k`, it leaves the
//! loop at the first element past them, so threads past the guard's
//! elements do one test, not `C`. A per-element guard in the body (`if
//! (idx * C + k < n)`) is kept, on `e`; when it holds the whole body and
//! `n` is the same in every thread, it becomes an exit too (`if (e >= n)
//! break;`: no later step passes it). Threads that share `idx` (other
//! `threadIdx.y`, `blockIdx.y`) repeat the same elements in both kernels.
//!
//! **Independence**, proved on the loop body: every memory access is
//! `p[idx * C + k]` of a pointer parameter `p` (or `p[i]` with `int i =
//! idx * C + k` a local never assigned), so iteration `(idx, k)` touches
//! element `idx·C + k` of each array and nothing else; every name it
//! assigns is declared inside the body (no value passes from one element
//! to the next); it reads nothing else that depends on the thread (`idx`
//! and `k` appear only in the element index, no `threadIdx`, `blockIdx`,
//! no local computed from them); it has no `break`, `continue` or
//! `return`, and nothing observes warps or has effects beyond the arrays
//! (no `__shared__`, barrier, atomic, warp intrinsic, device-function or
//! impure call: [`crate::remap_threads::observes_warps`]). Then distinct
//! iterations touch distinct elements of each array, the iteration of one
//! element runs the same operations on the same values in both kernels,
//! and its order relative to the others does not matter, provided arrays
//! passed as two parameters do not partly overlap: that is proved, or
//! promised with `__restrict__` in the diff ([`crate::overlap`]).
//!
//! **Arithmetic.** `idx`, `k` and `C` must be `int` (a constant, or an
//! `int` parameter never assigned). The original computes `idx * C + k`
//! in `int`; where it runs without overflow (signed overflow is undefined)
//! and in bounds, every launch has at most 2^31 threads along x (a larger
//! one gives some thread a negative `idx`, whose element is out of
//! bounds), so `k·N + idx < 2^31·2^31` cannot overflow in `long long`, and
//! an element that passes the guards is one the original computed in
//! `int`, so `p[e]` and `e < n` mean what `p[idx * C + k]` and `idx * C +
//! k < n` meant. The element index is used only as a subscript, a
//! comparison's operand or an `int` local's initializer, so its wider type
//! changes no other result.
//!
//! Ranked by the bounds: proposed only when some global access needs
//! fewer sectors per warp in the candidate's own analysis; the
//! differential check runs it on every test launch.

use copper::cuda::ast::{
    BaseType, BinOp, CastStyle, Expr, ExprKind, Function, Stmt, StmtKind, Type, UnOp,
};

use crate::ast_util::{self, bin, counted_for, early_exit, equiv_expr, expr, ident};
use crate::remap_split::{is_global_x, is_ident, top_decls, uncast, unstable};
use crate::remap_threads::{gains_of, observes_warps};
use crate::{overlap, Candidate, Context, Proposals, Refusal, Transform};

mod body;

/// Chunked threads → interleaved threads.
pub struct Interleave;

/// A chunk loop found in a kernel.
struct Chunked<'a> {
    /// The global thread index's name and its top-level statement.
    idx: String,
    idx_at: usize,
    /// The per-thread bound `m` of a guard `idx < m`, and the guard's
    /// top-level statement (the `if` around the loop, or an early exit).
    guard: Option<(Expr, usize)>,
    /// The top-level statement holding the loop (the loop, or the `if`
    /// around it).
    loop_at: usize,
    /// The loop, its counter and its trip count `C`.
    lp: &'a Stmt,
    counter: String,
    chunk: Expr,
    /// The element of step `k`: `idx * C + k`, or `base + k` with a
    /// top-level `int base = idx * C;` (its name and statement).
    element: Expr,
    base: Option<(String, usize)>,
}

impl Transform for Interleave {
    fn name(&self) -> &'static str {
        "chunk interleaving"
    }

    fn propose(&self, cx: &Context) -> Proposals {
        let f = cx.function;
        let Some(found) = find(f) else {
            return Proposals::default();
        };
        let span = found.as_ref().map_or(f.meta.span, |c| c.lp.meta.span);
        let mut out = Proposals::default();
        match found.and_then(|c| interleaved(cx, &c)) {
            Ok((candidate, pairs)) => overlap::offer(
                cx,
                candidate,
                &pairs,
                &mut out,
                span,
                (
                    "each thread keeps its run of elements",
                    "the loop reads one and writes the other",
                ),
            ),
            Err(why) => {
                out = Proposals::refused(
                    span,
                    format!("each thread keeps its run of elements: {why}"),
                )
            }
        }
        out
    }
}

/// `idx * C + k` (or `base + k`), the element of step `k` of thread
/// `idx`.
fn element(c: &Chunked) -> Expr {
    c.element.clone()
}

/// The rewrite of `cx`'s kernel for chunk loop `c`, with the pairs of
/// arrays (one read or written, one written) it needs apart; or why not.
fn interleaved(cx: &Context, c: &Chunked) -> Result<(Candidate, Vec<(String, String)>), Refusal> {
    let f = cx.function;
    observes_warps(cx)?;
    let taken = &mut ast_util::names_in(f);
    let names = Names {
        e: ast_util::fresh("e", taken),
        stride: ast_util::fresh("stride", taken),
        total: ast_util::fresh("total", taken),
    };
    let e = &names.e;
    let StmtKind::For { body, .. } = &c.lp.kind else {
        return Err("the loop is not a `for`".into());
    };
    let checked = body::independent(f, c, body, e)?;
    shape(cx, c)?;
    let body = folded(f, c, e, checked.body);
    let function = rewritten(f, c, &names, body);
    let gains = gains_of(cx, &function, cx.analysis.config())?;
    if gains.is_empty() {
        return Err("interleaving would not make any global access touch fewer sectors".into());
    }
    let print = copper::cuda::print::expression;
    let covered = match &c.guard {
        Some((m, _)) => format!(
            "the elements `e < {m} * {C}` the guard `{idx} < {m}` allowed",
            m = print(m),
            C = print(&c.chunk),
            idx = c.idx
        ),
        None => format!(
            "every element below `{} * {}`, as before",
            names.stride,
            print(&c.chunk)
        ),
    };
    let description = format!(
        "interleaved the runs of `{idx}`: step `{k}` of a thread now takes element `e = {k} * {stride} + {idx}` (`{stride}` = `blockDim.x * gridDim.x`, the threads along x) instead of `{el}`, so consecutive lanes take consecutive elements; the same elements, each once: {covered}; proved independent: {proof}; {gains}",
        idx = c.idx,
        k = c.counter,
        stride = names.stride,
        el = print(&element(c)),
        proof = checked.proof,
        gains = gains.join("; "),
    );
    Ok((
        Candidate::new(Interleave.name(), function, description),
        checked.pairs,
    ))
}

/// The chunk loop of a kernel that has one: `None` when it has no
/// top-level `for (int k = 0; k < C; k++)` (alone or under an `if`)
/// after a global thread index `idx` whose body indexes an array by
/// `idx * C + k`; an error naming what else is wrong.
fn find(f: &Function) -> Option<Result<Chunked<'_>, Refusal>> {
    let decls = top_decls(f);
    let &(idx_at, idx, _) = decls.iter().find(|(_, _, e)| is_global_x(e))?;
    let (loop_at, wrapper) =
        f.body
            .iter()
            .enumerate()
            .skip(idx_at + 1)
            .find_map(|(i, s)| match &s.kind {
                StmtKind::For { .. } => Some((i, None)),
                StmtKind::If {
                    cond,
                    then,
                    els: None,
                } => ast_util::branch_stmts(then)
                    .iter()
                    .any(|l| matches!(l.kind, StmtKind::For { .. }))
                    .then_some((i, Some(cond))),
                _ => None,
            })?;
    let lp = match &f.body[loop_at].kind {
        StmtKind::If { then, .. } => match &then.kind {
            StmtKind::Block(b) => b.iter().find(|s| matches!(s.kind, StmtKind::For { .. }))?,
            _ => then,
        },
        _ => &f.body[loop_at],
    };
    let (k, cond, step, body) = counted_for(lp)?;
    let chunk = match (&k.init, &cond.kind) {
        (Some(copper::cuda::ast::Init::Expr(z)), ExprKind::Binary(BinOp::Lt, x, bound))
            if ast_util::const_value(z) == Some(0) && is_ident(x, &k.name) =>
        {
            (**bound).clone()
        }
        _ => return None,
    };
    let counter = k.name.clone();
    let plain = bin(
        BinOp::Add,
        bin(BinOp::Mul, ident(idx), chunk.clone()),
        ident(&counter),
    );
    // Only a loop whose body computes `idx * C + k` (or `base + k`) is a
    // chunk loop.
    let computes = |el: &Expr| {
        let mut found = false;
        ast_util::visit_stmt_exprs(body, &mut |x| found |= equiv_expr(x, el));
        found
    };
    let run = bin(BinOp::Mul, ident(idx), chunk.clone());
    let (element, base) = if computes(&plain) {
        (plain, None)
    } else {
        let (at, name, _) = decls
            .iter()
            .find(|(at, _, e)| *at < loop_at && equiv_expr(e, &run))?;
        let el = bin(BinOp::Add, ident(name), ident(&counter));
        if !computes(&el) {
            return None;
        }
        (el, Some((name.to_string(), *at)))
    };
    let c = Chunked {
        idx: idx.to_string(),
        idx_at,
        guard: None,
        loop_at,
        lp,
        counter,
        chunk,
        element,
        base,
    };
    if !is_increment(step, &c.counter) {
        return Some(Err(
            format!("the loop's step is not `{}++`", c.counter).into()
        ));
    }
    Some(guarded(f, c, wrapper))
}

/// `c` with its per-thread guard: the condition of the `if` around the
/// loop (`wrapper`), or an early exit right before the loop.
fn guarded<'a>(
    f: &'a Function,
    mut c: Chunked<'a>,
    wrapper: Option<&Expr>,
) -> Result<Chunked<'a>, Refusal> {
    let print = copper::cuda::print::expression;
    if let Some(cond) = wrapper {
        let m = below(cond, &c.idx, false).ok_or_else(|| {
            format!(
                "the loop is under `if ({})`, not a per-thread guard `{} < m`",
                print(cond),
                c.idx
            )
        })?;
        c.guard = Some((m, c.loop_at));
    } else if let Some(exit) = c
        .loop_at
        .checked_sub(1)
        .and_then(|i| early_exit(&f.body[i]))
    {
        if let Some(m) = below(exit, &c.idx, true) {
            c.guard = Some((m, c.loop_at - 1));
        }
    }
    Ok(c)
}

/// `m` when `cond` is `idx < m` (`m > idx`), or, for an early exit
/// (`exits`), `idx >= m` (`m <= idx`).
fn below(cond: &Expr, idx: &str, exits: bool) -> Option<Expr> {
    let ExprKind::Binary(op, a, b) = &cond.kind else {
        return None;
    };
    let (left, right) = if exits {
        (BinOp::Ge, BinOp::Le)
    } else {
        (BinOp::Lt, BinOp::Gt)
    };
    if *op == left && is_ident(a, idx) {
        Some((**b).clone())
    } else if *op == right && is_ident(b, idx) {
        Some((**a).clone())
    } else {
        None
    }
}

/// Whether `step` is `k++`, `++k` or `k += 1`.
fn is_increment(step: &Expr, k: &str) -> bool {
    match &step.kind {
        ExprKind::Unary(UnOp::PostInc | UnOp::PreInc, x) => is_ident(x, k),
        ExprKind::Assign(Some(BinOp::Add), x, one) => {
            is_ident(x, k) && ast_util::const_value(one) == Some(1)
        }
        _ => false,
    }
}

/// Why the kernel around the loop is not the shape the proof covers, if
/// it is not: `int` index, counter and trip count; `C` and `m` fixed and
/// the same in every thread; nothing but pure declarations besides the
/// index, the guard and the loop, which comes last.
fn shape(cx: &Context, c: &Chunked) -> Result<(), Refusal> {
    let f = cx.function;
    let print = copper::cuda::print::expression;
    let int = |ty: &Type| ty.base == BaseType::Int && !ty.is_pointer() && !ty.is_ref;
    let idx_ty = match &f.body[c.idx_at].kind {
        StmtKind::Decl(ds) => ds.iter().find(|d| d.name == c.idx).map(|d| &d.ty),
        _ => None,
    };
    if !idx_ty.is_some_and(int) {
        return Err(format!(
            "`{}` is not an `int` (the rewrite's proof of the element index's range is for `int` arithmetic)",
            c.idx
        )
        .into());
    }
    if let Some((base, at)) = &c.base {
        let base_ty = match &f.body[*at].kind {
            StmtKind::Decl(ds) => ds.iter().find(|d| &d.name == base).map(|d| &d.ty),
            _ => None,
        };
        if !base_ty.is_some_and(int) {
            return Err(format!("`{base}` is not an `int`").into());
        }
        if let Some(name) = unstable(f, &ident(base), c.loop_at) {
            return Err(format!("`{base}` may change (`{name}`)").into());
        }
    }
    if !counted_for(c.lp).is_some_and(|(k, ..)| int(&k.ty)) {
        return Err(format!("the counter `{}` is not an `int`", c.counter).into());
    }
    let chunk_ok = match &uncast(&c.chunk).kind {
        ExprKind::Int { value, text } => {
            *value >= 1 && *value <= i32::MAX as u64 && !text.contains(['u', 'U', 'l', 'L'])
        }
        ExprKind::Ident(n) => f.params.iter().any(|p| &p.name == n && int(&p.ty)),
        _ => false,
    } && !matches!(c.chunk.kind, ExprKind::Cast(..));
    if !chunk_ok {
        return Err(format!(
            "the trip count `{}` is not an `int` constant or `int` parameter",
            print(&c.chunk)
        )
        .into());
    }
    let tainted = thread_locals(f);
    for (what, e, at) in [
        Some(("trip count", &c.chunk, c.loop_at)),
        c.guard.as_ref().map(|(m, at)| ("guard's bound", m, *at)),
        Some(("thread index", &ident(&c.idx), c.loop_at)),
    ]
    .into_iter()
    .flatten()
    {
        let reads = ast_util::Effects::of(&[ast_util::stmt(StmtKind::Expr(e.clone()))]).reads;
        let thread = what != "thread index" && reads.iter().any(|n| tainted.contains(n));
        if let Some(name) = unstable(f, e, at).or(thread.then(|| c.idx.clone())) {
            return Err(format!(
                "the {what} `{}` may change or differ between threads (`{name}`)",
                print(e)
            )
            .into());
        }
    }
    if let StmtKind::If { then, .. } = &f.body[c.loop_at].kind {
        let stmts = ast_util::branch_stmts(then);
        if stmts
            .iter()
            .filter(|s| !matches!(s.kind, StmtKind::Empty))
            .count()
            > 1
        {
            return Err("the `if` around the loop holds more than the loop".into());
        }
    }
    let guard_at = c.guard.as_ref().map(|(_, at)| *at);
    for (i, s) in f.body.iter().enumerate() {
        if i == c.idx_at || i == c.loop_at || Some(i) == guard_at {
            continue;
        }
        let pure_decl = match &s.kind {
            StmtKind::Decl(ds) => ds.iter().all(|d| {
                d.dims.is_empty()
                    && d.space == copper::cuda::ast::Space::Local
                    && d.init.as_ref().is_none_or(|init| match init {
                        copper::cuda::ast::Init::Expr(x) => {
                            ast_util::is_pure(x) && !ast_util::reads_memory(x)
                        }
                        copper::cuda::ast::Init::List(_) => false,
                    })
            }),
            StmtKind::Empty => true,
            _ => false,
        };
        if i > c.loop_at && !matches!(s.kind, StmtKind::Empty) {
            return Err("code follows the loop".into());
        }
        if !pure_decl {
            return Err(format!(
                "the statement at line {} is not a declaration without effects (only the index, a guard and the loop may do work)",
                cx.line(s.meta.span)
            )
            .into());
        }
    }
    Ok(())
}

/// The kernel's top-level locals whose value depends on the thread: the
/// ones computed from `threadIdx` or `blockIdx`, directly or through
/// another such local.
fn thread_locals(f: &Function) -> std::collections::BTreeSet<String> {
    let mut out: std::collections::BTreeSet<String> =
        ["threadIdx", "blockIdx"].map(String::from).into();
    loop {
        let before = out.len();
        for (_, name, init) in top_decls(f) {
            let reads =
                ast_util::Effects::of(&[ast_util::stmt(StmtKind::Expr(init.clone()))]).reads;
            if reads.iter().any(|n| out.contains(n)) {
                out.insert(name.to_string());
            }
        }
        if out.len() == before {
            return out;
        }
    }
}

/// The body with a per-element guard around all of it (`if (e < n) {
/// … }`, `n` the same in every thread and never assigned) made an exit:
/// `if (e >= n) break;` then the guarded statements. As `e` grows with
/// the step, no later step passes the guard either, so the same elements
/// are visited and threads stop at the first element past `n`.
fn folded(f: &Function, c: &Chunked, e: &str, body: Vec<Stmt>) -> Vec<Stmt> {
    let [Stmt {
        kind: StmtKind::If {
            cond,
            then,
            els: None,
        },
        ..
    }] = body.as_slice()
    else {
        return body;
    };
    let Some(n) = below(cond, e, false) else {
        return body;
    };
    let tainted = thread_locals(f);
    let reads = ast_util::Effects::of(&[ast_util::stmt(StmtKind::Expr(n.clone()))]).reads;
    if unstable(f, &n, c.loop_at).is_some() || reads.iter().any(|r| tainted.contains(r)) {
        return body;
    }
    let stop = ast_util::stmt(StmtKind::Break);
    let mut out = vec![ast_util::if_else(
        bin(BinOp::Ge, ident(e), n),
        vec![stop],
        Vec::new(),
    )];
    out.extend(ast_util::branch_stmts(then));
    out
}

/// The names the rewrite declares: the element index, the threads along
/// x and the guard's element count.
struct Names {
    e: String,
    stride: String,
    total: String,
}

/// The kernel with loop `c` interleaved: before the loop `const long long
/// stride = (long long)blockDim.x * gridDim.x;` (and `const long long
/// total = (long long)m * C;` for a per-thread guard, which goes); in it,
/// `long long e = k * stride + idx;`, `if (e >= total) break;` and the
/// body (`body`, the element index already `e`).
fn rewritten(f: &Function, c: &Chunked, n: &Names, body: Vec<Stmt>) -> Function {
    let member = |base: &str| {
        expr(ExprKind::Member {
            base: Box::new(ident(base)),
            field: "x".into(),
            arrow: false,
        })
    };
    let long = Type::scalar(BaseType::LongLong);
    let constant = Type {
        is_const: true,
        ..long.clone()
    };
    let cast = |x: Expr| expr(ExprKind::Cast(CastStyle::C, long.clone(), Box::new(x)));
    let mut before = vec![ast_util::decl(
        constant.clone(),
        &n.stride,
        Some(bin(BinOp::Mul, cast(member("blockDim")), member("gridDim"))),
    )];
    let init = bin(
        BinOp::Add,
        bin(BinOp::Mul, ident(&c.counter), ident(&n.stride)),
        ident(&c.idx),
    );
    let mut stmts = vec![ast_util::decl(long.clone(), &n.e, Some(init))];
    if let Some((m, _)) = &c.guard {
        let total = bin(BinOp::Mul, cast(m.clone()), c.chunk.clone());
        before.push(ast_util::decl(constant, &n.total, Some(total)));
        let stop = ast_util::stmt(StmtKind::Break);
        stmts.push(ast_util::if_else(
            bin(BinOp::Ge, ident(&n.e), ident(&n.total)),
            vec![stop],
            Vec::new(),
        ));
    }
    stmts.extend(body);
    let mut lp = c.lp.clone();
    if let StmtKind::For { body, .. } = &mut lp.kind {
        **body = ast_util::block(stmts);
    }
    let mut g = f.clone();
    g.body[c.loop_at] = lp;
    let mut at = c.loop_at;
    if let Some((_, exit)) = c.guard.as_ref().filter(|(_, x)| *x != c.loop_at) {
        g.body.remove(*exit);
        at -= 1;
    }
    g.body.splice(at..at, before);
    g
}

#[cfg(test)]
mod tests;
