//! Recognition of a shared-memory tree reduction loop:
//! `for (T s = start; s > 0; s >>= 1) { if (tid < s) a[tid] ⊕= a[tid + s]; __syncthreads(); }`,
//! where `⊕` is a sum or a minimum or maximum ([`Combine`]), or its
//! interleaved form, which students write first
//! (`for (T s = 1; s < blockDim.x; s *= 2) { if (tid % (2 * s) == 0) a[tid] ⊕= a[tid + s]; __syncthreads(); }`):
//! that one, and its strided-index form (`index = 2 * s * tid; if (index <
//! blockDim.x) a[index] ⊕= a[index + s];`), are recognized as the
//! sequential tree that reduces the same elements in another order
//! ([`Tree::interleaved`]).

use copper::cuda::ast::{BinOp, Expr, ExprKind, Function, Init, Stmt, StmtKind, VarDecl};
use copper::source::Span;

use crate::ast_util::{self, bin, expr, ident, int, stmt};

/// A shared-memory tree reduction loop, recognized, in its sequential
/// form (`tid < s`, the stride halving).
pub(super) struct Tree {
    /// The loop of the steps above the first warp; `None` when they are
    /// unrolled by hand, each guarded by the block size
    /// ([`super::stepped`]).
    pub looped: Option<Loop>,
    /// The thread's index as the kernel writes it.
    pub tid: Expr,
    /// The shared array.
    pub array: String,
    /// How two partial results are combined.
    pub combine: Combine,
    /// For a loop written interleaved (`tid % (2 * s) == 0`, or the
    /// strided index `2 * s * tid`, the stride doubling up to a bound): it
    /// combines the same elements in another order.
    pub interleaved: Option<Interleaved>,
    /// For a loop that stops at 32 (`s > 32`), finished by the
    /// hand-unrolled warp-synchronous steps of the next statement: how
    /// those are written.
    pub unrolled: Option<Written>,
}

/// The loop of a tree reduction.
pub(super) struct Loop {
    /// The loop's declaration of the stride.
    pub init: Stmt,
    /// The loop's step (`s >>= 1`).
    pub step: Expr,
    /// The loop's body.
    pub body: Stmt,
    /// The stride variable.
    pub var: String,
    /// Where it is declared (its IR variable's span).
    pub var_span: Span,
    /// The stride's start (`blockDim.x / 2`, `BLOCK / 2`).
    pub start: Expr,
}

/// How an interleaved tree is written.
pub(super) struct Interleaved {
    /// The bound the stride doubles up to (`blockDim.x`, `BLOCK`).
    pub bound: Expr,
    /// Whether the threads are compacted through a strided index
    /// (`index = 2 * s * tid`, the element `a[index]`) rather than every
    /// `2·s`-th thread working (`tid % (2 * s) == 0`).
    pub strided_index: bool,
}

/// How a hand-unrolled warp-synchronous tail is written.
pub(super) struct Written {
    /// The device function's name, or `None` inline (for the report).
    pub function: Option<String>,
    /// The guard of its first step (`a[tid] += a[tid + 32]`) in the
    /// kernel's terms, when it holds in some instantiations of the
    /// template and not in others (`blockSize >= 64` in `reduce6<32>`):
    /// the shuffles' first step keeps it.
    pub first_guard: Option<Expr>,
    /// The guard of its second step (`a[tid] += a[tid + 16]`) in the
    /// kernel's terms, when it fails in some instantiations
    /// (`blockSize >= 32` in `reduce6<16>`, whose block is under a warp,
    /// so shuffles over all 32 lanes would name lanes it does not have),
    /// with the tail as written: the shuffles run where the guard holds,
    /// the steps as written elsewhere.
    pub under_a_warp: Option<(Expr, Stmt)>,
}

/// How a tree reduction combines a partial result with its partner's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Combine {
    /// `a[tid] += a[tid + s]`, or `a[tid] = a[tid] + a[tid + s]` with the
    /// operands in either order (floating-point addition is commutative).
    Sum,
    /// `a[tid] = f(a[tid], a[tid + s])` for a minimum or maximum `f`
    /// ([`ORDER_FREE_CALLS`]); `own_first` when `a[tid]` is the first
    /// argument (kept, so each step computes exactly what the original's
    /// does).
    Call {
        /// The function's name (`fmaxf`).
        name: String,
        /// Whether the thread's own element is the first argument.
        own_first: bool,
    },
}

/// The functions a tree may combine with, besides `+`: minima and maxima,
/// which give the same value in any order and grouping (for floating-point
/// data up to the sign of a zero result).
pub(super) const ORDER_FREE_CALLS: [&str; 6] = ["max", "min", "fmaxf", "fminf", "fmax", "fmin"];

impl Combine {
    /// `own ⊕ partner`, as the original writes it.
    pub fn apply(&self, own: Expr, partner: Expr) -> Expr {
        match self {
            Combine::Sum => bin(BinOp::Add, own, partner),
            Combine::Call { name, own_first } => {
                let args = if *own_first {
                    vec![own, partner]
                } else {
                    vec![partner, own]
                };
                expr(ExprKind::Call(name.clone(), args))
            }
        }
    }

    /// `acc ⊕= partner` as a statement's expression: `acc += partner` for a
    /// sum, `acc = f(acc, partner)` otherwise.
    pub fn accumulate(&self, acc: &str, partner: Expr) -> Expr {
        match self {
            Combine::Sum => expr(ExprKind::Assign(
                Some(BinOp::Add),
                Box::new(ident(acc)),
                Box::new(partner),
            )),
            Combine::Call { .. } => expr(ExprKind::Assign(
                None,
                Box::new(ident(acc)),
                Box::new(self.apply(ident(acc), partner)),
            )),
        }
    }

    /// What a warp's partial result is called in the rewrite (`warp_sum`,
    /// `warp_max`).
    pub fn variable(&self) -> &'static str {
        match self {
            Combine::Sum => "warp_sum",
            Combine::Call { name, .. } if name.contains("max") => "warp_max",
            Combine::Call { .. } => "warp_min",
        }
    }
}

/// `s` when `e` is the name `s`.
pub(crate) fn name_of(e: &Expr) -> Option<&str> {
    match &e.kind {
        ExprKind::Ident(n) => Some(n),
        _ => None,
    }
}

/// The integer literal's value.
pub(crate) fn literal(e: &Expr) -> Option<u64> {
    match &e.kind {
        ExprKind::Int { value, .. } => Some(*value),
        _ => None,
    }
}

/// Recognizes a tree reduction loop, sequential or interleaved.
pub(super) fn tree_loop(f: &Function, s: &Stmt) -> Option<Tree> {
    sequential(f, s, 0)
        .or_else(|| interleaved(f, s))
        .or_else(|| strided(f, s))
}

/// Recognizes a sequential tree loop that stops above the first warp
/// (`s > 32`), which the statement after it must finish.
pub(super) fn loop_to_warp(f: &Function, s: &Stmt) -> Option<Tree> {
    sequential(f, s, 32)
}

/// The parts of `for (T s = init; cond; step) { [T index = …;] if (guard) update; __syncthreads(); }`.
pub(crate) struct Parts<'a> {
    /// The stride's declaration.
    pub decl: &'a VarDecl,
    /// The index declared first in the body, when there is one.
    pub index: Option<VarDecl>,
    /// The stride's start.
    pub start: &'a Expr,
    /// The loop's condition.
    pub cond: &'a Expr,
    /// The loop's step.
    pub step: &'a Expr,
    /// The loop's body.
    pub body: &'a Stmt,
    /// The guard of the update.
    pub guard: Expr,
    /// The update, an expression statement's expression.
    pub update: Expr,
}

/// The parts of a loop shaped like a tree reduction.
fn parts(s: &Stmt) -> Option<Parts<'_>> {
    let (decl, cond, step, body) = ast_util::counted_for(s)?;
    let Some(Init::Expr(start)) = &decl.init else {
        return None;
    };
    let stmts = ast_util::branch_stmts(body);
    let (index, guard, barrier) = match stmts.as_slice() {
        [guard, barrier] => (None, guard, barrier),
        [first, guard, barrier] => match &first.kind {
            StmtKind::Decl(ds) if ds.len() == 1 => (Some(ds[0].clone()), guard, barrier),
            _ => return None,
        },
        _ => return None,
    };
    if !ast_util::is_sync(barrier) {
        return None;
    }
    let StmtKind::If {
        cond: guard,
        then,
        els: None,
    } = &guard.kind
    else {
        return None;
    };
    let inner = ast_util::branch_stmts(then);
    let [update] = inner.as_slice() else {
        return None;
    };
    let StmtKind::Expr(update) = &update.kind else {
        return None;
    };
    Some(Parts {
        decl,
        index,
        start,
        cond,
        step,
        body,
        guard: guard.clone(),
        update: update.clone(),
    })
}

/// Recognizes `for (T s = start; s > stop; s >>= 1) { if (tid < s) a[tid] ⊕= a[tid + s]; __syncthreads(); }`
/// (for `stop` 0 also `s != 0`, `s >= 1`).
fn sequential(f: &Function, s: &Stmt, stop: u64) -> Option<Tree> {
    let g = guarded_halving(f, s, stop)?;
    let p = &g.parts;
    let var = p.decl.name.as_str();
    let (array, combine) = accumulation(&p.update, &g.tid, &ident(var))?;
    Some(Tree {
        looped: Some(Loop {
            init: g.init.clone(),
            step: p.step.clone(),
            body: p.body.clone(),
            var: var.to_string(),
            var_span: p.decl.meta.span,
            start: p.start.clone(),
        }),
        tid: g.tid.clone(),
        array,
        combine,
        interleaved: None,
        unrolled: None,
    })
}

/// A halving loop whose update is guarded by `tid < s`, `tid` the
/// thread's index ([`is_thread_x`]), whatever it reduces.
pub(crate) struct GuardedHalving<'a> {
    /// The loop's parts.
    pub parts: Parts<'a>,
    /// The loop's initializer, the stride's declaration.
    pub init: &'a Stmt,
    /// The thread's index as the guard writes it.
    pub tid: Expr,
}

/// Recognizes `for (T s = start; s > stop; s >>= 1) { if (tid < s) update; __syncthreads(); }`
/// ([`halving`]) with `tid` the thread's index: the loop shape shared by
/// the shared-memory tree and the global-memory one.
pub(crate) fn guarded_halving<'a>(
    f: &Function,
    s: &'a Stmt,
    stop: u64,
) -> Option<GuardedHalving<'a>> {
    let parts = halving(s, stop)?;
    let StmtKind::For {
        init: Some(init), ..
    } = &s.kind
    else {
        return None;
    };
    let ExprKind::Binary(BinOp::Lt, tid, s_name) = &parts.guard.kind else {
        return None;
    };
    if name_of(s_name) != Some(parts.decl.name.as_str()) || !is_thread_x(f, tid) {
        return None;
    }
    let tid = tid.as_ref().clone();
    Some(GuardedHalving { parts, init, tid })
}

/// The parts of `for (T s = start; s > stop; s >>= 1) { if (guard) update; __syncthreads(); }`
/// (for `stop` 0 also `s != 0`, `s >= 1`; the step also `s /= 2`), the
/// loop shape of a sequential tree whatever it reduces.
fn halving(s: &Stmt, stop: u64) -> Option<Parts<'_>> {
    let p = parts(s).filter(|p| p.index.is_none())?;
    let var = p.decl.name.as_str();
    // s > 0, s != 0, s >= 1
    let ExprKind::Binary(op, l, r) = &p.cond.kind else {
        return None;
    };
    let bound_ok = match op {
        BinOp::Gt => literal(r) == Some(stop),
        BinOp::Ne => stop == 0 && literal(r) == Some(0),
        BinOp::Ge => stop == 0 && literal(r) == Some(1),
        _ => false,
    };
    (name_of(l) == Some(var) && bound_ok && halves(p.step, var)).then_some(p)
}

/// Recognizes `for (T s = 1; s < bound; s *= 2) { if (tid % (2 * s) == 0) a[tid] ⊕= a[tid + s]; __syncthreads(); }`
/// (also `s <<= 1`, `(tid & (2 * s - 1)) == 0`), as the sequential tree
/// from `bound / 2` down.
fn interleaved(f: &Function, s: &Stmt) -> Option<Tree> {
    let p = parts(s).filter(|p| p.index.is_none())?;
    let var = p.decl.name.as_str();
    let bound = doubling_bound(&p)?;
    let ExprKind::Binary(BinOp::Eq, test, zero) = &p.guard.kind else {
        return None;
    };
    let twice = |e: &Expr| match &e.kind {
        ExprKind::Binary(BinOp::Mul, a, b) => {
            (literal(a) == Some(2) && name_of(b) == Some(var))
                || (name_of(a) == Some(var) && literal(b) == Some(2))
        }
        ExprKind::Binary(BinOp::Add, a, b) => name_of(a) == Some(var) && name_of(b) == Some(var),
        _ => false,
    };
    let tid = match &test.kind {
        ExprKind::Binary(BinOp::Rem, tid, m) if twice(m) => tid,
        ExprKind::Binary(BinOp::BitAnd, tid, m) => match &m.kind {
            ExprKind::Binary(BinOp::Sub, m, one) if twice(m) && literal(one) == Some(1) => tid,
            _ => return None,
        },
        _ => return None,
    };
    if literal(zero) != Some(0) || !is_thread_x(f, tid) {
        return None;
    }
    let (array, combine) = accumulation(&p.update, tid, &ident(var))?;
    let interleaved = Interleaved {
        bound: bound.clone(),
        strided_index: false,
    };
    Some(as_sequential(
        &p,
        tid,
        p.update.clone(),
        array,
        combine,
        interleaved,
    ))
}

/// Recognizes the strided-index form of the interleaved tree:
/// `for (T s = 1; s < bound; s *= 2) { U index = 2 * s * tid; if (index < bound) a[index] ⊕= a[index + s]; __syncthreads(); }`
/// (the factors in any order), which combines the same pairs.
fn strided(f: &Function, s: &Stmt) -> Option<Tree> {
    let p = parts(s)?;
    let index = p.index.as_ref()?;
    let var = p.decl.name.as_str();
    let bound = doubling_bound(&p)?;
    let Some(Init::Expr(init)) = &index.init else {
        return None;
    };
    let mut factors = Vec::new();
    product_factors(init, &mut factors);
    if factors.len() != 3 {
        return None;
    }
    let tid = factors.remove(factors.iter().position(|x| is_thread_x(f, x))?);
    let two_and_s = |x: &Expr, y: &Expr| literal(x) == Some(2) && name_of(y) == Some(var);
    if !(two_and_s(factors[0], factors[1]) || two_and_s(factors[1], factors[0])) {
        return None;
    }
    let ExprKind::Binary(BinOp::Lt, ix, limit) = &p.guard.kind else {
        return None;
    };
    if name_of(ix) != Some(index.name.as_str()) || !ast_util::equiv_expr(limit, &bound) {
        return None;
    }
    let (array, combine) = accumulation(&p.update, &ident(&index.name), &ident(var))?;
    // The same update, on the thread's own element.
    let mut update = p.update.clone();
    ast_util::replace_expr(&mut update, &ident(&index.name), tid);
    let interleaved = Interleaved {
        bound,
        strided_index: true,
    };
    Some(as_sequential(&p, tid, update, array, combine, interleaved))
}

/// The bound of a loop `for (T s = 1; s < bound; s *= 2)`.
fn doubling_bound(p: &Parts) -> Option<Expr> {
    let var = p.decl.name.as_str();
    let ExprKind::Binary(BinOp::Lt, l, bound) = &p.cond.kind else {
        return None;
    };
    (literal(p.start) == Some(1) && name_of(l) == Some(var) && doubles(p.step, var))
        .then(|| bound.as_ref().clone())
}

/// The factors of a product `x * y * …` (casts kept).
fn product_factors<'e>(e: &'e Expr, out: &mut Vec<&'e Expr>) {
    match &e.kind {
        ExprKind::Binary(BinOp::Mul, l, r) => {
            product_factors(l, out);
            product_factors(r, out);
        }
        _ => out.push(e),
    }
}

/// The sequential tree an interleaved loop `p` is equivalent to, for
/// `update` on the thread's own element: `for (T s = bound / 2; s > 0;
/// s >>= 1) { if (tid < s) update; __syncthreads(); }`.
fn as_sequential(
    p: &Parts,
    tid: &Expr,
    update: Expr,
    array: String,
    combine: Combine,
    interleaved: Interleaved,
) -> Tree {
    let var = p.decl.name.as_str();
    let start = bin(BinOp::Div, interleaved.bound.clone(), int(2));
    let mut decl = p.decl.clone();
    decl.init = Some(Init::Expr(start.clone()));
    decl.meta = ast_util::meta();
    let update = stmt(StmtKind::Expr(update));
    let guard = ast_util::if_else(
        bin(BinOp::Lt, tid.clone(), ident(var)),
        vec![update],
        Vec::new(),
    );
    let body = ast_util::block(vec![guard, ast_util::sync()]);
    Tree {
        looped: Some(Loop {
            init: stmt(StmtKind::Decl(vec![decl])),
            step: expr(ExprKind::Assign(
                Some(BinOp::Shr),
                Box::new(ident(var)),
                Box::new(int(1)),
            )),
            body,
            var: var.to_string(),
            var_span: p.decl.meta.span,
            start,
        }),
        tid: tid.clone(),
        array,
        combine,
        interleaved: Some(interleaved),
        unrolled: None,
    }
}

/// Whether `step` doubles `var`: `var *= 2`, `var <<= 1`, `var = var * 2`,
/// `var = var << 1`, `var += var`.
fn doubles(step: &Expr, var: &str) -> bool {
    let by = |op: &BinOp, k: &Expr| match op {
        BinOp::Shl => literal(k) == Some(1),
        BinOp::Mul => literal(k) == Some(2),
        BinOp::Add => name_of(k) == Some(var),
        _ => false,
    };
    match &step.kind {
        ExprKind::Assign(Some(op), l, k) => name_of(l) == Some(var) && by(op, k),
        ExprKind::Assign(None, l, r) => {
            name_of(l) == Some(var)
                && matches!(&r.kind, ExprKind::Binary(op, x, k) if name_of(x) == Some(var) && by(op, k))
        }
        _ => false,
    }
}

/// Whether `step` halves `var`: `var >>= 1`, `var /= 2`, `var = var >> 1`,
/// `var = var / 2`.
fn halves(step: &Expr, var: &str) -> bool {
    let by = |op: &BinOp, k: &Expr| match op {
        BinOp::Shr => literal(k) == Some(1),
        BinOp::Div => literal(k) == Some(2),
        _ => false,
    };
    match &step.kind {
        ExprKind::Assign(Some(op), l, k) => name_of(l) == Some(var) && by(op, k),
        ExprKind::Assign(None, l, r) => {
            name_of(l) == Some(var)
                && matches!(&r.kind, ExprKind::Binary(op, x, k) if name_of(x) == Some(var) && by(op, k))
        }
        _ => false,
    }
}

/// `threadIdx.x`.
fn thread_x() -> Expr {
    expr(ExprKind::Member {
        base: Box::new(ident("threadIdx")),
        field: "x".into(),
        arrow: false,
    })
}

/// Whether `e` is `threadIdx.x`, or a local initialized to it (possibly
/// through a cast) and never assigned again.
pub(crate) fn is_thread_x(f: &Function, e: &Expr) -> bool {
    let strip = |mut x: &Expr| {
        while let ExprKind::Cast(_, _, inner) = &x.kind {
            x = inner;
        }
        x.clone()
    };
    if strip(e) == thread_x() {
        return true;
    }
    let Some(name) = name_of(e) else {
        return false;
    };
    let from_tid = matches!(ast_util::declarations(f, name)[..], [d] if matches!(&d.init, Some(Init::Expr(i)) if ast_util::equiv_expr(&strip(i), &thread_x())));
    let assigned = ast_util::assigned_names(&f.body).contains(name);
    from_tid && !assigned && f.params.iter().all(|p| p.name != name)
}

/// The array `a` and the combination of `a[tid] += a[tid + s]`,
/// `a[tid] = a[tid] + a[tid + s]` or `a[tid] = f(a[tid], a[tid + s])`
/// (either operand first), `s` the partner's offset `offset`.
pub(crate) fn accumulation(update: &Expr, tid: &Expr, offset: &Expr) -> Option<(String, Combine)> {
    let own = |e: &Expr| match &e.kind {
        ExprKind::Index(a, i) if ast_util::equiv_expr(i, tid) => name_of(a).map(str::to_string),
        _ => None,
    };
    let partner = |e: &Expr, a: &str| match &e.kind {
        ExprKind::Index(b, i) => {
            name_of(b) == Some(a)
                && ast_util::equiv_expr(i, &bin(BinOp::Add, tid.clone(), offset.clone()))
        }
        _ => false,
    };
    // Which of `x`, `y` is the own element (the other the partner).
    let own_first = |a: &str, x: &Expr, y: &Expr| {
        if own(x).as_deref() == Some(a) && partner(y, a) {
            Some(true)
        } else if own(y).as_deref() == Some(a) && partner(x, a) {
            Some(false)
        } else {
            None
        }
    };
    match &update.kind {
        ExprKind::Assign(Some(BinOp::Add), l, r) => {
            let a = own(l)?;
            partner(r, &a).then_some((a, Combine::Sum))
        }
        ExprKind::Assign(None, l, r) => {
            let a = own(l)?;
            match &r.kind {
                ExprKind::Binary(BinOp::Add, x, y) => {
                    own_first(&a, x, y)?;
                    Some((a, Combine::Sum))
                }
                ExprKind::Call(name, args) if ORDER_FREE_CALLS.contains(&name.as_str()) => {
                    let [x, y] = args.as_slice() else {
                        return None;
                    };
                    let own_first = own_first(&a, x, y)?;
                    let name = name.clone();
                    Some((a, Combine::Call { name, own_first }))
                }
                _ => None,
            }
        }
        _ => None,
    }
}
