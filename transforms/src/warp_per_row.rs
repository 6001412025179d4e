//! One warp per row instead of one thread per row.
//!
//! The first matrix-vector kernel most people write gives each thread one
//! row of a row-major matrix:
//!
//! ```text
//! int row = blockIdx.x * blockDim.x + threadIdx.x;
//! if (row < rows) {
//!     float acc = 0.0f;
//!     for (int i = 0; i < m; i++) acc += M[row * m + i] * x[i];
//!     y[row] = acc;
//! }
//! ```
//!
//! Consecutive lanes then read addresses `m` elements apart, one sector
//! each. The rewrite gives each row a whole warp, its lanes striding along
//! the row, and combines the lanes' partial results with
//! `__shfl_down_sync` (offsets 16 … 1); lane 0 runs what followed the
//! loop. It has two routes, both proposed (the search ranks them: per warp
//! they touch the same sectors, and (b) takes 1/32 of (a)'s steps):
//!
//! - **(b)** where the file launches the kernel and every launch can be
//!   edited ([`copper::cuda::relaunch`], [`Reshape::ScaleGridX`]): the
//!   grid gets 32 times the blocks in x, in the same diff, and each warp
//!   takes one row;
//! - **(a)** always: the launch is kept, and each warp takes the 32 rows
//!   its own threads had, one after the other.
//!
//! Route (a):
//!
//! ```text
//! if (blockDim.x % 32 == 0) {
//!     const int lane = threadIdx.x % 32;
//!     for (int k = 0; k < 32; k++) {
//!         int row = blockIdx.x * blockDim.x + (threadIdx.x - lane + k);
//!         if (row < rows) {
//!             float acc = 0.0f;
//!             for (long long j = lane; j < m; j += 32) {  // S + lane for a start S
//!                 int i = (int)j;
//!                 acc += M[row * m + i] * x[i];
//!             }
//!             acc += __shfl_down_sync(0xffffffff, acc, 16);  // … 8, 4, 2, 1
//!             if (lane == 0) { y[row] = acc; }
//!         }
//!     }
//! } else {
//!     the original body
//! }
//! ```
//!
//! **Which rows, on every launch (a).** The launch is not changed, so the
//! rewrite must compute exactly what the original computes with the same
//! grid and block. When `blockDim.x` is not a multiple of 32 (a test every
//! thread of a block evaluates alike), warps may be partial and the full
//! shuffle mask would name lanes that do not exist: the original body runs.
//! Otherwise each warp lies within one `(threadIdx.y, threadIdx.z)` slice
//! of its block, its lanes have `threadIdx.x = b + lane` for `b =
//! threadIdx.x - lane` and `lane < 32`, all 32 of them exist, and step `k`
//! computes the row index the original computes in the thread with
//! `threadIdx.x = b + k` (the same expression, `threadIdx.x` replaced by
//! `b + k`; same block, same `blockIdx`). So the warp handles exactly the
//! rows its 32 threads handled, each once, whatever the grid (too small or
//! too large for `rows`) and whatever `blockDim.y`/`.z` (threads that differ
//! only in `y` or `z` repeat the same rows in both kernels). The guard is
//! evaluated on that row as the original evaluated it in that thread: it
//! reads no thread index, and every name the row's code assigns is
//! declared in it, so nothing carries from one row to the next.
//!
//! **Route (b).** The launch `k<<<G, B>>>` (any `G = (Gx, Gy, Gz)`, `B =
//! (Bx, By, Bz)`) becomes `k<<<(32·Gx, Gy, Gz), B>>>`, and the kernel:
//!
//! ```text
//! if (blockDim.x % 32 == 0) {
//!     const int lane = threadIdx.x % 32;
//!     int row = (blockIdx.x * blockDim.x + threadIdx.x) / 32;  // the original's index over 32
//!     if (row < rows) { the row's code as in (a) }
//! } else {
//!     if (blockIdx.x < gridDim.x / 32) { the original body }
//! }
//! ```
//!
//! **Which rows, on every launch (b).** The edit is made only when every
//! launch of the kernel is in the user's file, and each edited launch is
//! evaluated again and must have exactly `(32·Gx, Gy, Gz)` and `B` (else
//! route (b) is refused with the reason, and (a) stays). When `Bx` is a
//! multiple of 32, each warp is 32 threads of one `(threadIdx.y,
//! threadIdx.z)` slice with `threadIdx.x = 32w + lane`; its global x
//! index `g = blockIdx.x·Bx + 32w + lane` has `g / 32 = blockIdx.x·Bx/32 +
//! w` for all its lanes (`Bx/32` an integer), so the warp takes one row,
//! and as `blockIdx.x` runs over `0 … 32·Gx − 1` and `w` over `0 … Bx/32 −
//! 1`, `g / 32` runs over `0 … Gx·Bx − 1` once each: exactly the rows the
//! original's threads `blockIdx.x·Bx + threadIdx.x` had, each by one warp
//! per `(y, z)` slice and per `(blockIdx.y, blockIdx.z)`, as the original
//! had one thread for each. Threads that differ in `y`, `z`, `blockIdx.y`
//! or `blockIdx.z` repeat the same rows in both kernels, and the row's
//! code reads no `blockIdx` or `gridDim` but through the row index (else
//! (b) is refused), so it sees what it saw in the original's thread. The
//! index is computed in 32-bit unsigned arithmetic: (b) is refused when a
//! launch has `32·Gx·Bx` above `INT_MAX`, so `g` neither wraps nor leaves
//! an `int` where the original's did not. When `Bx` is not a multiple of
//! 32, the blocks `blockIdx.x < Gx` (`gridDim.x / 32`, exact) run the
//! original body with the original's indices (same `blockIdx`,
//! `blockDim`, `threadIdx`; the body reads `gridDim` nowhere, see above)
//! and the other `31·Gx` blocks nothing. From there the row's value is
//! computed as in (a).
//!
//! **Same value per row.** The row's code is: declarations without effects
//! (the accumulator `acc` among them, read by no other of them), one loop
//! `for (int i = S; i < E; i++)` whose only effect is `acc = acc ⊕ e` (or
//! `acc ⊕= e`, `acc = f(acc, e)`, `f` one of `max`, `min`, `fmaxf`,
//! `fminf`, `fmax`, `fmin`, the operands in either order) after
//! declarations without effects, and then statements that use the result.
//! `S` and `E` are `int` constants or `int` parameters, so the loop visits
//! the same `i` in every lane, which the rewrite splits between the lanes
//! (`i ≡ S + lane mod 32`); the counter is a `long long` copied into an
//! `int i`, so `j += 32` cannot overflow where `i++` did not, and the body
//! sees the same `int` as before. Each lane folds its share into its own
//! copy of `acc` (starting at the identity, 0, for a sum; lane 0 starts at
//! the original initializer when it is not 0; a maximum or minimum starts
//! every lane at the initializer, which it may repeat), the five shuffles
//! fold the 32 copies into lane 0, and lane 0 alone runs the statements
//! after the loop, which see the same `acc` and the row's declarations. An
//! integer sum wraps the same in any order; a maximum or minimum does not
//! depend on the order; a floating-point sum in another order may differ in
//! its last bits, so it is proposed only with `--allow-reassociation`
//! (checked within [`crate::check::reassociation_tolerance`]). The types
//! must let the shuffles combine in the accumulator's type: integer sums
//! of integer terms, maxima and minima that compare in the accumulator's
//! type ([`terms`]).
//!
//! **Independence.** Nothing in the kernel observes warps or has effects
//! beyond arrays ([`crate::remap_threads::observes_warps`]); the loop
//! writes no memory; an array the statements after the loop write is
//! written and read only at element `row` (one row's element, written once
//! in both kernels); and since a warp now writes a row's result before it
//! reads the next row, the arrays read and the arrays written are proved
//! apart or declared `__restrict__` in the diff ([`crate::overlap`]).

use crate::check::CHECKED_WITHIN;
use copper::cuda::ast::{BaseType, BinOp, Expr, ExprKind, Function, Init, Stmt, StmtKind, Type};
use copper::cuda::relaunch::{self, Relaunch, Reshape};

use crate::ast_util::{self, counted_for, early_exit};
use crate::remap_split::{is_global_x, is_ident};
use crate::remap_threads::{gains_of, launch_lines, observes_warps};
use crate::{overlap, Candidate, Context, Proposals, Refusal, Skip, Transform};

mod build;
mod terms;

use build::Route;

/// One thread per row → one warp per row.
pub struct WarpPerRow;

/// How the loop folds its terms into the accumulator.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Fold {
    /// `acc += e`.
    Sum,
    /// `acc = f(acc, e)` (`acc_first`) or `acc = f(e, acc)`.
    Call { name: String, acc_first: bool },
}

/// A per-thread row loop found in a kernel.
struct RowLoop {
    /// The row index's name and its declaration's initializer.
    row: String,
    row_ty: Type,
    row_init: Expr,
    /// The condition under which a row does its work (`row < rows`), when
    /// there is one.
    guard: Option<Expr>,
    /// The row's code: declarations, the loop, what follows it.
    body: Vec<Stmt>,
    /// Where the loop is in `body`.
    loop_at: usize,
    /// The accumulator, its type and its initializer.
    acc: String,
    acc_ty: Type,
    acc_init: Expr,
    /// How the loop folds into it, and the term it folds.
    fold: Fold,
    term: Expr,
    /// The loop's counter, first value and bound.
    counter: String,
    start: Expr,
    end: Expr,
    /// The loop body's statements, the last one the fold.
    loop_body: Vec<Stmt>,
}

impl Transform for WarpPerRow {
    fn name(&self) -> &'static str {
        "one warp per row"
    }

    fn propose(&self, cx: &Context) -> Proposals {
        let f = cx.function;
        let Some(found) = find(f) else {
            return Proposals::default();
        };
        let span = f.meta.span;
        let mut out = Proposals::default();
        // Route (b) where the launches can change with the kernel, route
        // (a) always: the search ranks them.
        let made = found.and_then(|r| {
            let (integers, pairs) = applies(cx, &r)?;
            let threads_rows = per_warp(cx, &r, integers, None)?;
            let one_row = relaunched(cx, &r).and_then(|re| per_warp(cx, &r, integers, Some(re)));
            Ok((one_row, threads_rows, pairs))
        });
        let (one_row, threads_rows, pairs) = match made {
            Ok(x) => x,
            Err(why) => {
                return Proposals::refused(span, format!("each thread keeps its row: {why}"))
            }
        };
        let one_row = one_row.map_err(|why| Skip {
            span,
            reason: format!("each warp keeps the rows of its threads: {why}"),
        });
        for candidate in one_row.iter().cloned().chain([threads_rows]) {
            overlap::offer(
                cx,
                candidate,
                &pairs,
                &mut out,
                span,
                (
                    "each thread keeps its row",
                    "a warp would write a row's result before reading the next row",
                ),
            );
        }
        out.skipped.extend(one_row.err());
        out.skipped.dedup();
        out
    }
}

/// Whether the accumulator is an integer, and the pairs of arrays (read,
/// written) the rewrite needs apart, when the kernel may be rewritten at
/// all; or why not.
fn applies(cx: &Context, r: &RowLoop) -> Result<(bool, Vec<(String, String)>), Refusal> {
    observes_warps(cx)?;
    let integers = accumulator_kind(cx, r)?;
    terms::combinable(cx.function, r, integers)?;
    Ok((integers, independent(r)))
}

/// The launches of `cx`'s kernel with 32 times the blocks in x, when the
/// row's code lets a warp take the row `(global x index) / 32` (it reads
/// no block index or grid size but through the row) and every launch
/// keeps that index within an `int`; or why not.
fn relaunched(cx: &Context, r: &RowLoop) -> Result<Relaunch, Refusal> {
    let mut reads = None;
    let guard = r.guard.clone().map(|g| ast_util::stmt(StmtKind::Expr(g)));
    for s in guard.iter().chain(&r.body) {
        ast_util::visit_stmt_exprs(s, &mut |e| match &e.kind {
            ExprKind::Ident(n) if n == "blockIdx" || n == "gridDim" => {
                reads.get_or_insert(n.clone());
            }
            _ => {}
        });
    }
    if let Some(n) = reads {
        return Err(format!("the row's code reads `{n}` other than through the row index").into());
    }
    let name = &cx.function.name;
    let relaunch = relaunch::relaunch(cx.host, name, Reshape::ScaleGridX(32))
        .map_err(|why| why.to_string())?;
    for l in cx.host.launches.iter().filter(|l| &l.kernel == name) {
        let (Some(grid), Some(block)) = (l.grid, l.block) else {
            return Err(format!("the shape of the launch at line {} is not known", l.line).into());
        };
        let threads = [32, grid[0], block[0]]
            .iter()
            .try_fold(1u64, |a, &b| a.checked_mul(b));
        if threads.is_none_or(|t| t > i32::MAX as u64) {
            return Err(format!(
                "the launch at line {} would have 32 × {} × {} threads in x, more than an `int` index holds",
                l.line, grid[0], block[0]
            )
            .into());
        }
    }
    Ok(relaunch)
}

/// The rewrite of `cx`'s kernel for row loop `r`: one row per warp on the
/// launches `relaunch` makes, or each warp its threads' 32 rows on the
/// same launch; or why not.
fn per_warp(
    cx: &Context,
    r: &RowLoop,
    integers: bool,
    relaunch: Option<Relaunch>,
) -> Result<Candidate, Refusal> {
    let f = cx.function;
    let route = match relaunch {
        Some(_) => Route::OneRow,
        None => Route::ThreadsRows,
    };
    let function = build::rewritten(f, r, route, true);
    // The accesses of the warp path alone (the other branch is the
    // original's), on the launch it runs on.
    let config = (cx.analysis.config()).reshaped(relaunch.as_ref().map(|re| re.reshape));
    let gains = gains_of(cx, &build::rewritten(f, r, route, false), config)?;
    if gains.is_empty() {
        return Err("one warp per row would not make any global access touch fewer sectors".into());
    }
    let print = copper::cuda::print::expression;
    let order = match (&r.fold, integers) {
        (Fold::Call { name, .. }, _) => {
            format!("`{name}` does not depend on the order of its terms")
        }
        (Fold::Sum, true) => "integer sums wrap, so the new order gives the same result".into(),
        (Fold::Sum, false) => format!("the summation order changes, so the floating-point result may differ in the last bits (allowed by --allow-reassociation; {CHECKED_WITHIN})"),
    };
    let (takes, launch) = match &relaunch {
        Some(_) => {
            let lines = launch_lines(cx, &f.name);
            (
                format!("each warp takes one row `{row}`, its global x index over 32", row = r.row),
                format!("the launch at line {lines} changes: 32 times the blocks in x, a warp for each of the original's threads (where `blockDim.x` is not a multiple of 32, the original's blocks run the original code and the others nothing)"),
            )
        }
        None => (
            format!("each warp takes the 32 rows `{row}` its threads had, one after the other", row = r.row),
            "blocks whose `blockDim.x` is not a multiple of 32 run the original code, so every launch computes the same rows".to_string(),
        ),
    };
    let description = format!(
        "{takes}; its lanes stride the loop over `{i}` (lane `l` takes `{i} = {s}l`, then every 32nd) and combine their `{acc}` with `__shfl_down_sync` (offsets 16 … 1), and lane 0 runs what followed the loop; {launch}; {order}; {gains}",
        i = r.counter,
        s = match ast_util::const_value(&r.start) {
            Some(0) => String::new(),
            _ => format!("{} + ", print(&r.start)),
        },
        acc = r.acc,
        gains = gains.join("; "),
    );
    Ok(Candidate {
        reassociates: !integers && r.fold == Fold::Sum,
        relaunch,
        ..Candidate::new(WarpPerRow.name(), function, description)
    })
}

/// Whether the accumulator is an integer, or why its type or fold is
/// refused (a floating-point sum without `--allow-reassociation`).
fn accumulator_kind(cx: &Context, r: &RowLoop) -> Result<bool, Refusal> {
    use BaseType as B;
    if r.acc_ty.is_pointer() || r.acc_ty.is_ref {
        return Err(format!("the accumulator `{}` is not a scalar", r.acc).into());
    }
    let integers = match r.acc_ty.base {
        B::Int | B::UInt | B::LongLong | B::ULongLong => true,
        B::Float | B::Double => false,
        _ => {
            return Err(format!(
                "the accumulator `{}` has a type `__shfl_down_sync` does not take",
                r.acc
            )
            .into())
        }
    };
    if !integers && r.fold == Fold::Sum && !cx.allow_reassociation {
        return Err(format!(
            "`{}` is a floating-point sum, which the warp would add in another order (allowed by --allow-reassociation)",
            r.acc
        )
        .into());
    }
    Ok(integers)
}

/// The row loop of a kernel that has one: `None` when its body is not a
/// global thread index `row` followed by a row's code with a `for` loop
/// whose last statement folds into a local declared before it; an error
/// naming what else is wrong.
fn find(f: &Function) -> Option<Result<RowLoop, Refusal>> {
    let stmts: Vec<&Stmt> = f
        .body
        .iter()
        .filter(|s| !matches!(s.kind, StmtKind::Empty))
        .collect();
    let (first, rest) = stmts.split_first()?;
    let StmtKind::Decl(ds) = &first.kind else {
        return None;
    };
    let [d] = ds.as_slice() else {
        return None;
    };
    let Some(Init::Expr(init)) = &d.init else {
        return None;
    };
    if !is_global_x(init) || !d.dims.is_empty() {
        return None;
    }
    let (guard, body) = match rest {
        [one] => match &one.kind {
            StmtKind::If {
                cond,
                then,
                els: None,
            } => (Some(cond.clone()), ast_util::branch_stmts(then)),
            _ => (None, vec![(*one).clone()]),
        },
        [exit, tail @ ..] if early_exit(exit).is_some() => (
            early_exit(exit).map(negated),
            tail.iter().map(|s| (*s).clone()).collect(),
        ),
        _ => (None, rest.iter().map(|s| (*s).clone()).collect()),
    };
    let loop_at = body
        .iter()
        .position(|s| matches!(s.kind, StmtKind::For { .. }))?;
    let (k, cond, step, lbody) = counted_for(&body[loop_at])?;
    let loop_body = ast_util::branch_stmts(lbody);
    let (acc, fold, term) = fold_of(loop_body.last()?)?;
    let acc_decl = body[..loop_at].iter().find_map(|s| match &s.kind {
        StmtKind::Decl(ds) => ds.iter().find(|d| d.name == acc),
        _ => None,
    })?;
    let Some(Init::Expr(acc_init)) = &acc_decl.init else {
        return Some(Err(
            format!("the accumulator `{acc}` has no initial value").into()
        ));
    };
    let bounds = (|| {
        if !is_int(&k.ty) {
            return Err(format!("the counter `{}` is not an `int`", k.name).into());
        }
        let Some(Init::Expr(start)) = &k.init else {
            return Err(format!("the counter `{}` has no initial value", k.name).into());
        };
        let end = match &cond.kind {
            ExprKind::Binary(BinOp::Lt, x, e) if is_ident(x, &k.name) => (**e).clone(),
            _ => return Err(format!("the loop's condition is not `{} < bound`", k.name).into()),
        };
        if !is_increment(step, &k.name) {
            return Err(format!("the loop's step is not `{}++`", k.name).into());
        }
        for (what, e) in [("first value", start), ("bound", &end)] {
            if !uniform_int(f, e) {
                return Err(format!(
                    "the loop's {what} `{}` is not an `int` constant or an `int` parameter, so it may differ between the rows of a warp",
                    copper::cuda::print::expression(e)
                )
                .into());
            }
        }
        Ok((start.clone(), end))
    })();
    let counter = k.name.clone();
    let (acc_ty, acc_init) = (acc_decl.ty.clone(), acc_init.clone());
    Some(bounds.and_then(|(start, end)| {
        let r = RowLoop {
            row: d.name.clone(),
            row_ty: d.ty.clone(),
            row_init: init.clone(),
            guard,
            loop_at,
            acc,
            acc_ty,
            acc_init,
            fold,
            term,
            counter,
            start,
            end,
            loop_body,
            body,
        };
        preconditions(f, &r).map(|()| r)
    }))
}

/// The accumulator, the fold and the term of `acc += e;`, `acc = acc + e;`
/// (`e + acc`) or `acc = f(acc, e);` (`f(e, acc)`) with `f` a maximum or
/// minimum.
fn fold_of(s: &Stmt) -> Option<(String, Fold, Expr)> {
    let StmtKind::Expr(e) = &s.kind else {
        return None;
    };
    let ExprKind::Assign(op, lhs, rhs) = &e.kind else {
        return None;
    };
    let ExprKind::Ident(acc) = &lhs.kind else {
        return None;
    };
    match (op, &rhs.kind) {
        (Some(BinOp::Add), _) => Some((acc.clone(), Fold::Sum, (**rhs).clone())),
        (None, ExprKind::Binary(BinOp::Add, a, b)) if is_ident(a, acc) => {
            Some((acc.clone(), Fold::Sum, (**b).clone()))
        }
        (None, ExprKind::Binary(BinOp::Add, a, b)) if is_ident(b, acc) => {
            Some((acc.clone(), Fold::Sum, (**a).clone()))
        }
        (None, ExprKind::Call(name, args))
            if ["max", "min", "fmaxf", "fminf", "fmax", "fmin"].contains(&name.as_str()) =>
        {
            let [a, b] = args.as_slice() else {
                return None;
            };
            let name = name.clone();
            if matches!(&a.kind, ExprKind::Ident(n) if n == acc) {
                Some((
                    acc.clone(),
                    Fold::Call {
                        name,
                        acc_first: true,
                    },
                    b.clone(),
                ))
            } else if matches!(&b.kind, ExprKind::Ident(n) if n == acc) {
                Some((
                    acc.clone(),
                    Fold::Call {
                        name,
                        acc_first: false,
                    },
                    a.clone(),
                ))
            } else {
                None
            }
        }
        _ => None,
    }
}

/// `!c`, written as the opposite comparison when `c` is one.
fn negated(c: &Expr) -> Expr {
    let opposite = |op: BinOp| match op {
        BinOp::Lt => Some(BinOp::Ge),
        BinOp::Ge => Some(BinOp::Lt),
        BinOp::Gt => Some(BinOp::Le),
        BinOp::Le => Some(BinOp::Gt),
        _ => None,
    };
    match &c.kind {
        ExprKind::Binary(op, a, b) if opposite(*op).is_some() => {
            ast_util::bin(opposite(*op).unwrap_or(*op), (**a).clone(), (**b).clone())
        }
        _ => ast_util::expr(ExprKind::Unary(
            copper::cuda::ast::UnOp::Not,
            Box::new(c.clone()),
        )),
    }
}

/// Whether `step` is `k++`, `++k` or `k += 1`.
fn is_increment(step: &Expr, k: &str) -> bool {
    use copper::cuda::ast::UnOp;
    match &step.kind {
        ExprKind::Unary(UnOp::PostInc | UnOp::PreInc, x) => is_ident(x, k),
        ExprKind::Assign(Some(BinOp::Add), x, one) => {
            is_ident(x, k) && ast_util::const_value(one) == Some(1)
        }
        _ => false,
    }
}

/// Whether `ty` is a plain `int`.
fn is_int(ty: &Type) -> bool {
    ty.base == BaseType::Int && !ty.is_pointer() && !ty.is_ref
}

/// Whether `e` is an `int` constant (no suffix, at most `INT_MAX`) or an
/// `int` parameter of `f` (never assigned: [`preconditions`] checks that
/// only the row's own locals are).
fn uniform_int(f: &Function, e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Int { value, text } => {
            *value <= i32::MAX as u64 && !text.contains(['u', 'U', 'l', 'L'])
        }
        ExprKind::Ident(n) => f.params.iter().any(|p| &p.name == n && is_int(&p.ty)),
        _ => false,
    }
}

/// Why the row's code is not what the proof covers, if it is not (see
/// the module's documentation).
fn preconditions(f: &Function, r: &RowLoop) -> Result<(), Refusal> {
    let print = copper::cuda::print::expression;
    let guard_stmt = r.guard.clone().map(|g| ast_util::stmt(StmtKind::Expr(g)));
    let all: Vec<Stmt> = guard_stmt
        .iter()
        .cloned()
        .chain(r.body.iter().cloned())
        .collect();
    // No thread index but through the row.
    let mut thread = false;
    for s in &all {
        ast_util::visit_stmt_exprs(s, &mut |e| {
            thread |= matches!(&e.kind, ExprKind::Ident(n) if n == "threadIdx");
        });
    }
    if thread {
        return Err("the row's code reads `threadIdx` other than through the row index".into());
    }
    // Every name assigned is declared in the row's code.
    let mut declared = std::collections::BTreeSet::new();
    for s in &r.body {
        ast_util::visit_stmts(s, &mut |x| {
            if let StmtKind::Decl(ds) = &x.kind {
                declared.extend(ds.iter().map(|d| d.name.clone()));
            }
        });
    }
    if let Some(n) = declared
        .iter()
        .find(|n| **n == r.row || f.params.iter().any(|p| &p.name == *n))
    {
        return Err(format!("the row's code declares `{n}` again").into());
    }
    let effects = ast_util::Effects::of(&all);
    if let Some(n) = effects.writes.iter().find(|n| !declared.contains(*n)) {
        return Err(format!(
            "the row's code assigns `{n}`, which it does not declare (a value would pass from one row to the next)"
        )
        .into());
    }
    if effects.opaque_calls || effects.sync {
        return Err(Refusal::SideEffects {
            what: "the row's code",
        });
    }
    if let Some(g) = &r.guard {
        if !ast_util::is_pure(g) {
            return Err(format!("the guard `{}` has side effects", print(g)).into());
        }
    }
    // Before the loop: declarations without effects.
    for s in &r.body[..r.loop_at] {
        pure_decls(s, &r.acc, "before the loop")?;
    }
    let loop_effects = ast_util::Effects::of(&r.loop_body);
    if loop_effects.jumps {
        return Err(Refusal::Jumps {
            what: "the loop body may",
        });
    }
    if !loop_effects.array_writes.is_empty() {
        return Err(format!(
            "the loop writes memory (`{}`)",
            loop_effects
                .array_writes
                .iter()
                .cloned()
                .collect::<Vec<_>>()
                .join("`, `")
        )
        .into());
    }
    // The loop: declarations without effects, then the fold.
    let (_, decls) = r.loop_body.split_last().ok_or("the loop is empty")?;
    for s in decls {
        pure_decls(s, &r.acc, "in the loop")?;
    }
    let mut in_loop = std::collections::BTreeSet::new();
    for s in &r.loop_body {
        ast_util::visit_stmts(s, &mut |x| {
            if let StmtKind::Decl(ds) = &x.kind {
                in_loop.extend(ds.iter().map(|d| d.name.clone()));
            }
        });
    }
    if let Some(n) = loop_effects
        .writes
        .iter()
        .find(|n| **n != r.acc && !in_loop.contains(*n))
    {
        return Err(format!("the loop assigns `{n}` besides the accumulator").into());
    }
    if !ast_util::is_pure(&r.term) || reads(&r.term, &r.acc) {
        return Err(format!(
            "the term `{}` has side effects or reads the accumulator",
            print(&r.term)
        )
        .into());
    }
    // After the loop: lane 0 runs it, so it must not leave the row.
    let after = ast_util::Effects::of(&r.body[r.loop_at + 1..]);
    if after.jumps {
        return Err(Refusal::Jumps {
            what: "the code after the loop may",
        });
    }
    for w in &after.array_writes {
        let mut only_row = true;
        for s in &all {
            ast_util::visit_stmt_exprs(s, &mut |e| match &e.kind {
                ExprKind::Index(b, i) if is_ident(b, w) && !is_ident(i, &r.row) => only_row = false,
                ExprKind::Unary(copper::cuda::ast::UnOp::Deref, x)
                    if ast_util::root_name(x) == Some(w.as_str()) =>
                {
                    only_row = false
                }
                _ => {}
            });
        }
        if !only_row {
            return Err(format!(
                "`{w}` is written after the loop and used at another element than `{w}[{}]`",
                r.row
            )
            .into());
        }
    }
    Ok(())
}

/// Whether `e` reads the name `n`.
fn reads(e: &Expr, n: &str) -> bool {
    let mut found = false;
    ast_util::visit_expr(e, &mut |x| {
        found |= matches!(&x.kind, ExprKind::Ident(m) if m == n);
    });
    found
}

/// Why `s` (`where` in the row's code) is not declarations of local
/// scalars with initializers without effects that do not read `acc`.
fn pure_decls(s: &Stmt, acc: &str, place: &str) -> Result<(), Refusal> {
    let ok = match &s.kind {
        StmtKind::Decl(ds) => ds.iter().all(|d| {
            d.dims.is_empty()
                && d.space == copper::cuda::ast::Space::Local
                && !d.is_static
                && match &d.init {
                    Some(Init::Expr(x)) => {
                        ast_util::is_pure(x) && (d.name == acc || !reads(x, acc))
                    }
                    Some(Init::List(_)) => false,
                    None => true,
                }
        }),
        StmtKind::Empty => true,
        _ => false,
    };
    if ok {
        Ok(())
    } else {
        Err(format!("{place}, a statement is not a declaration without effects").into())
    }
}

/// The pairs (read, written) of arrays the rewrite needs apart: every
/// array the row's code reads, with every array it writes.
fn independent(r: &RowLoop) -> Vec<(String, String)> {
    let mut all = r.body.clone();
    if let Some(g) = &r.guard {
        all.push(ast_util::stmt(StmtKind::Expr(g.clone())));
    }
    let e = ast_util::Effects::of(&all);
    let mut pairs = Vec::new();
    for read in &e.array_reads {
        for written in &e.array_writes {
            pairs.push((read.clone(), written.clone()));
        }
    }
    pairs
}

#[cfg(test)]
mod relaunch_tests;
#[cfg(test)]
mod tests;
