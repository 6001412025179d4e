//! Warp-shuffle reductions (issue 20): the last five steps of a
//! shared-memory tree reduction, where only the first warp still works,
//! become register shuffles.
//!
//! ```text
//! for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {   // for (…; s > 32; …) { … }
//!     if (tid < s) { sdata[tid] += sdata[tid + s]; }      // if (tid < 32) {
//!     __syncthreads();                                    //     int v = sdata[tid] + sdata[tid + 32];
//! }                                                       //     v += __shfl_down_sync(0xffffffff, v, 16);
//!                                                         //     … 8, 4, 2, 1
//!                                                         //     if (tid == 0) { sdata[0] = v; }
//!                                                         // }
//!                                                         // __syncthreads();
//! ```
//!
//! For integer data that the loop sums over the whole block (`start` is
//! half of `blockDim.x`), a second candidate reduces per warp first: each
//! warp sums its 32 elements by shuffles, lane 0 of each stores the sum in
//! `a[warp]`, and the first warp sums those (three barriers in all).
//! Integer addition wraps, so the new order gives the same sum; for
//! floating-point data this candidate is made only with
//! `--allow-reassociation` (the description says the result may differ in
//! the last bits, and the check compares within
//! [`crate::check::reassociation_tolerance`]). The ranking picks
//! between the two (under the default worst-warp `wsteps`, the tail wins:
//! the first warp does both phases).
//!
//! The tail is exact, also for floating-point data: after each step, lane `t < s`
//! holds what `sdata[t]` held in the original, summed in the same order
//! (lane 0's value depends only on lanes below `2s` at each step, which
//! are the original's operands), so the rewrite does not reassociate.
//! Preconditions, checked syntactically with the launch's block:
//! - the block is one-dimensional and its size (`blockDim.x`) a known
//!   multiple of 32, so lanes `tid < 32` are the whole first warp and the
//!   full mask is right;
//! - the loop is a statement of the kernel's body (not nested, so every
//!   thread reaches it and it runs once), counts `s` from a start that is
//!   a power of two of at least 32 once the block is known, halves it
//!   (`s >>= 1`, `s /= 2`) while `s > 0`, and its body is exactly
//!   `if (tid < s) a[tid] += a[tid + s]; __syncthreads();` (or
//!   `a[tid] = a[tid] + a[tid + s]`), where `tid` is `threadIdx.x` or a
//!   local initialized to it and never assigned again;
//! - `a` is a one-dimensional `__shared__` array of `int`, `unsigned`,
//!   `long long`, `unsigned long long`, `float` or `double` (the types
//!   `__shfl_down_sync` takes), used only as `a[index]`, and after the
//!   loop only `a[0]` is used: the rewrite leaves `a[1..32)` holding
//!   other partial sums than the original.

use copper::cuda::ast::{
    BaseType, BinOp, Expr, ExprKind, Function, Init, Space, Stmt, StmtKind, Type, UnOp,
};

use copper::ir::sync::BARRIER;

use crate::ast_util::{self, bin, decl, expr, ident, if_else, index, int, stmt, sync};
use crate::{Candidate, Context, Proposals, Refusal, Skip, Transform};

/// Warp-shuffle tail of shared-memory tree reductions.
pub struct WarpShuffle;

impl Transform for WarpShuffle {
    fn name(&self) -> &'static str {
        "warp-shuffle reduction"
    }

    fn propose(&self, cx: &Context) -> Proposals {
        let mut out = Proposals::default();
        let f = cx.function;
        for (at, s) in f.body.iter().enumerate() {
            let Some(tree) = tree_loop(f, s) else {
                continue;
            };
            let line = cx.line(s.meta.span);
            match rewrite(cx, at, &tree) {
                Ok(versions) => {
                    for (function, variant) in versions {
                        let what = match variant {
                            Variant::Tail => "the last 5 steps of the tree reduction of `{a}` at line {line} (the first warp's) use `__shfl_down_sync` instead of shared memory and barriers; the sums keep their order",
                            Variant::PerWarp { reassociates: false } => "the tree reduction of `{a}` at line {line} runs in registers: each warp sums its 32 elements with `__shfl_down_sync`, then the first warp sums the warps' totals (3 barriers instead of one per step; integer sums, so the new order gives the same result)",
                            Variant::PerWarp { reassociates: true } => "the tree reduction of `{a}` at line {line} runs in registers: each warp sums its 32 elements with `__shfl_down_sync`, then the first warp sums the warps' totals (3 barriers instead of one per step); the summation order changes, so the floating-point result may differ in the last bits (allowed by --allow-reassociation; checked within 2·(n−1)·ε·|sum| per element, n the threads per block)",
                        };
                        let description = what
                            .replace("{a}", &tree.array)
                            .replace("{line}", &line.to_string());
                        out.candidates.push(Candidate {
                            fixes_block_size: true,
                            reassociates: variant == Variant::PerWarp { reassociates: true },
                            ..Candidate::new(self.name(), function, description)
                        });
                    }
                }
                Err(why) => out.skipped.push(Skip {
                    span: s.meta.span,
                    reason: format!(
                        "the tree reduction of `{}` at line {line} keeps its shared-memory steps: {why}",
                        tree.array
                    ),
                }),
            }
        }
        out
    }
}

/// A shared-memory tree reduction loop, recognized.
struct Tree<'a> {
    /// The loop.
    init: &'a Stmt,
    step: &'a Expr,
    body: &'a Stmt,
    /// The stride variable and its start.
    var: &'a str,
    start: &'a Expr,
    /// The thread's index as the kernel writes it.
    tid: Expr,
    /// The shared array.
    array: String,
}

/// `s` when `e` is the name `s`.
fn name_of(e: &Expr) -> Option<&str> {
    match &e.kind {
        ExprKind::Ident(n) => Some(n),
        _ => None,
    }
}

/// The integer literal's value.
fn literal(e: &Expr) -> Option<u64> {
    match &e.kind {
        ExprKind::Int { value, .. } => Some(*value),
        _ => None,
    }
}

/// Recognizes `for (T s = start; s > 0; s >>= 1) { if (tid < s) a[tid] += a[tid + s]; __syncthreads(); }`.
fn tree_loop<'a>(f: &'a Function, s: &'a Stmt) -> Option<Tree<'a>> {
    let StmtKind::For {
        init: Some(init),
        cond: Some(cond),
        step: Some(step),
        body,
    } = &s.kind
    else {
        return None;
    };
    let StmtKind::Decl(ds) = &init.kind else {
        return None;
    };
    let [d] = ds.as_slice() else {
        return None;
    };
    let Some(Init::Expr(start)) = &d.init else {
        return None;
    };
    let var = d.name.as_str();
    // s > 0, s != 0, s >= 1
    let ExprKind::Binary(op, l, r) = &cond.kind else {
        return None;
    };
    let bound_ok = match op {
        BinOp::Gt | BinOp::Ne => literal(r) == Some(0),
        BinOp::Ge => literal(r) == Some(1),
        _ => false,
    };
    if name_of(l) != Some(var) || !bound_ok {
        return None;
    }
    if !halves(step, var) {
        return None;
    }
    let stmts = ast_util::branch_stmts(body);
    let [guard, barrier] = stmts.as_slice() else {
        return None;
    };
    if !matches!(&barrier.kind, StmtKind::Expr(e) if matches!(&e.kind, ExprKind::Call(n, a) if n == BARRIER && a.is_empty()))
    {
        return None;
    }
    let StmtKind::If {
        cond: gcond,
        then,
        els: None,
    } = &guard.kind
    else {
        return None;
    };
    let ExprKind::Binary(BinOp::Lt, tid, s_name) = &gcond.kind else {
        return None;
    };
    if name_of(s_name) != Some(var) || !is_thread_x(f, tid) {
        return None;
    }
    let inner = ast_util::branch_stmts(then);
    let [update] = inner.as_slice() else {
        return None;
    };
    let StmtKind::Expr(update) = &update.kind else {
        return None;
    };
    let array = accumulation(update, tid, var)?;
    Some(Tree {
        init,
        step,
        body,
        var,
        start,
        tid: tid.as_ref().clone(),
        array,
    })
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
fn is_thread_x(f: &Function, e: &Expr) -> bool {
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
    let mut inits = Vec::new();
    for s in &f.body {
        ast_util::visit_stmts(s, &mut |x| {
            if let StmtKind::Decl(ds) = &x.kind {
                inits.extend(ds.iter().filter(|d| d.name == name).map(|d| d.init.clone()));
            }
        });
    }
    let from_tid = matches!(inits.as_slice(), [Some(Init::Expr(i))] if ast_util::equiv_expr(&strip(i), &thread_x()));
    let mut assigned = false;
    for s in &f.body {
        ast_util::visit_stmt_exprs(s, &mut |x| match &x.kind {
            ExprKind::Assign(_, l, _)
            | ExprKind::Unary(UnOp::PreInc | UnOp::PreDec | UnOp::PostInc | UnOp::PostDec, l)
                if name_of(l) == Some(name) =>
            {
                assigned = true
            }
            ExprKind::Unary(UnOp::AddrOf, l) if name_of(l) == Some(name) => assigned = true,
            _ => {}
        });
    }
    from_tid && !assigned && f.params.iter().all(|p| p.name != name)
}

/// The array `a` of `a[tid] += a[tid + s]` or `a[tid] = a[tid] + a[tid + s]`.
fn accumulation(update: &Expr, tid: &Expr, var: &str) -> Option<String> {
    let own = |e: &Expr| match &e.kind {
        ExprKind::Index(a, i) if ast_util::equiv_expr(i, tid) => name_of(a).map(str::to_string),
        _ => None,
    };
    let partner = |e: &Expr, a: &str| match &e.kind {
        ExprKind::Index(b, i) => {
            name_of(b) == Some(a)
                && ast_util::equiv_expr(i, &bin(BinOp::Add, tid.clone(), ident(var)))
        }
        _ => false,
    };
    match &update.kind {
        ExprKind::Assign(Some(BinOp::Add), l, r) => {
            let a = own(l)?;
            partner(r, &a).then_some(a)
        }
        ExprKind::Assign(None, l, r) => {
            let a = own(l)?;
            let ExprKind::Binary(BinOp::Add, x, y) = &r.kind else {
                return None;
            };
            let ok = (own(x).as_deref() == Some(&a) && partner(y, &a))
                || (own(y).as_deref() == Some(&a) && partner(x, &a));
            ok.then_some(a)
        }
        _ => None,
    }
}

/// The value of `e` with `blockDim.x` = `bx`.
fn start_value(e: &Expr, bx: u64) -> Option<u64> {
    match &e.kind {
        ExprKind::Member { base, field, .. }
            if field == "x" && name_of(base) == Some("blockDim") =>
        {
            Some(bx)
        }
        ExprKind::Binary(op, a, b) => {
            let (x, y) = (start_value(a, bx)?, start_value(b, bx)?);
            match op {
                BinOp::Add => x.checked_add(y),
                BinOp::Sub => x.checked_sub(y),
                BinOp::Mul => x.checked_mul(y),
                BinOp::Div => x.checked_div(y),
                BinOp::Shr if y < 64 => Some(x >> y),
                BinOp::Shl if y < 64 => x.checked_shl(y as u32),
                _ => None,
            }
        }
        ExprKind::Cast(_, _, x) => start_value(x, bx),
        _ => ast_util::const_value(e),
    }
}

/// The element type of the one-dimensional `__shared__` array `name`, when
/// `__shfl_down_sync` takes it.
fn shuffled_type(f: &Function, name: &str) -> Result<Type, Refusal> {
    let mut found = Vec::new();
    for s in &f.body {
        ast_util::visit_stmts(s, &mut |x| {
            if let StmtKind::Decl(ds) = &x.kind {
                found.extend(ds.iter().filter(|d| d.name == name).cloned());
            }
        });
    }
    let [d] = found.as_slice() else {
        return Err(format!("`{name}` is not one `__shared__` array of the kernel").into());
    };
    if d.space != Space::Shared || d.dims.len() != 1 || d.ty.is_pointer() {
        return Err(format!("`{name}` is not a one-dimensional `__shared__` array").into());
    }
    use BaseType as B;
    match d.ty.base {
        B::Int | B::UInt | B::LongLong | B::ULongLong | B::Float | B::Double => {
            Ok(Type::scalar(d.ty.base.clone()))
        }
        _ => Err(format!(
            "its elements are `{}`, which `__shfl_down_sync` does not take",
            d.ty.base.c_name()
        )
        .into()),
    }
}

/// The kernel with the tree loop at `f.body[at]` rewritten.
fn rewrite(cx: &Context, at: usize, tree: &Tree) -> Result<Vec<(Function, Variant)>, Refusal> {
    let f = cx.function;
    let block = cx.fixed_block("")?;
    if block[1] != 1 || block[2] != 1 || block[0] % 32 != 0 {
        return Err(Refusal::BlockShape {
            block,
            wanted: "one-dimensional with a multiple of 32 threads",
        });
    }
    let start = start_value(tree.start, block[0])
        .ok_or("the stride's start is not a constant once the block is known")?;
    if start < 32 || !start.is_power_of_two() {
        return Err(
            format!("the stride starts at {start}, not at a power of two of at least 32").into(),
        );
    }
    let ty = shuffled_type(f, &tree.array)?;
    ast_util::array_uses(f, &tree.array).map_err(|why| format!("`{}`: {why}", tree.array))?;
    let after = &f.body[at + 1..];
    let mut later_ok = true;
    for s in after {
        ast_util::visit_stmt_exprs(s, &mut |e| {
            if let ExprKind::Index(b, i) = &e.kind {
                if name_of(b) == Some(tree.array.as_str()) && literal(i) != Some(0) {
                    later_ok = false;
                }
            }
        });
    }
    if !later_ok {
        return Err(format!(
            "after the loop, `{}` is used at other indices than 0",
            tree.array
        )
        .into());
    }
    let mut taken = ast_util::names_in(f);
    let v = ast_util::fresh("warp_sum", &mut taken);
    let tid = tree.tid.clone();
    let elem = |i: Expr| index(&tree.array, i);
    let shuffles = || -> Vec<Stmt> {
        [16, 8, 4, 2, 1]
            .into_iter()
            .map(|off| {
                let mask = expr(ExprKind::Int {
                    value: 0xffff_ffff,
                    text: "0xffffffff".into(),
                });
                let shfl = expr(ExprKind::Call(
                    "__shfl_down_sync".into(),
                    vec![mask, ident(&v), int(off)],
                ));
                stmt(StmtKind::Expr(expr(ExprKind::Assign(
                    Some(BinOp::Add),
                    Box::new(ident(&v)),
                    Box::new(shfl),
                ))))
            })
            .collect()
    };
    let store_first = || {
        if_else(
            bin(BinOp::Eq, tid.clone(), int(0)),
            vec![ast_util::assign(elem(int(0)), ident(&v))],
            Vec::new(),
        )
    };
    let splice = |replacement: Vec<Stmt>| {
        let mut body = f.body[..at].to_vec();
        body.extend(replacement);
        body.extend(after.iter().cloned());
        Function { body, ..f.clone() }
    };
    // The tail: the steps above 32 as written, then the first warp.
    let mut warp = vec![decl(
        ty.clone(),
        &v,
        Some(bin(
            BinOp::Add,
            elem(tid.clone()),
            elem(bin(BinOp::Add, tid.clone(), int(32))),
        )),
    )];
    warp.extend(shuffles());
    warp.push(store_first());
    let mut tail = Vec::new();
    if start > 32 {
        tail.push(stmt(StmtKind::For {
            init: Some(Box::new(tree.init.clone())),
            cond: Some(bin(BinOp::Gt, ident(tree.var), int(32))),
            step: Some(tree.step.clone()),
            body: Box::new(tree.body.clone()),
        }));
    }
    tail.push(if_else(
        bin(BinOp::Lt, tid.clone(), int(32)),
        warp,
        Vec::new(),
    ));
    tail.push(sync());
    let mut out = vec![(splice(tail), Variant::Tail)];
    // Per warp, for integers (or floating-point data with
    // `--allow-reassociation`) summing the whole block (`start` is half of
    // it): each warp sums its 32 elements, the first warp their partials.
    let reassociates = !is_integer(&ty.base);
    if (!reassociates || cx.allow_reassociation) && start * 2 == block[0] {
        let warps = bin(BinOp::Div, block_dim_x(), int(32));
        let mut per_warp = vec![decl(ty, &v, Some(elem(tid.clone())))];
        per_warp.extend(shuffles());
        per_warp.push(sync());
        per_warp.push(if_else(
            bin(BinOp::Eq, bin(BinOp::Rem, tid.clone(), int(32)), int(0)),
            vec![ast_util::assign(
                elem(bin(BinOp::Div, tid.clone(), int(32))),
                ident(&v),
            )],
            Vec::new(),
        ));
        per_warp.push(sync());
        let mut first = vec![ast_util::assign(
            ident(&v),
            expr(ExprKind::Cond(
                Box::new(bin(BinOp::Lt, tid.clone(), warps)),
                Box::new(elem(tid.clone())),
                Box::new(int(0)),
            )),
        )];
        first.extend(shuffles());
        first.push(store_first());
        per_warp.push(if_else(bin(BinOp::Lt, tid, int(32)), first, Vec::new()));
        per_warp.push(sync());
        out.push((splice(per_warp), Variant::PerWarp { reassociates }));
    }
    Ok(out)
}

/// Which rewrite of the tree.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Variant {
    /// Only the first warp's last five steps shuffle (exact for any type).
    Tail,
    /// Every warp reduces its elements by shuffles, then the first warp
    /// reduces the warps' sums: exact for integers; for floating-point
    /// data (`reassociates`) only with `--allow-reassociation`.
    PerWarp {
        /// Whether the sums are floating-point, so the new order may
        /// change their last bits.
        reassociates: bool,
    },
}

/// Whether integer addition, associative with wrap-around, sums `b`.
fn is_integer(b: &BaseType) -> bool {
    matches!(
        b,
        BaseType::Int | BaseType::UInt | BaseType::LongLong | BaseType::ULongLong
    )
}

/// `blockDim.x`.
fn block_dim_x() -> Expr {
    expr(ExprKind::Member {
        base: Box::new(ident("blockDim")),
        field: "x".into(),
        arrow: false,
    })
}

/// The rewrite before and after, and the kernels it leaves alone with the
/// exact reason ([`crate::fixture`]).
#[cfg(test)]
mod tests {
    use super::WarpShuffle;
    use crate::fixture::{check, check_not_applicable};

    #[test]
    fn the_last_steps_of_a_float_tree_use_shuffles() {
        let desc = check(
            &WarpShuffle,
            [128, 1, 1],
            r#"#define BLOCK_SIZE 128
__global__ void reduce_sum(const float *__restrict__ in, float *__restrict__ out, unsigned int n) {
    __shared__ float sdata[BLOCK_SIZE];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    sdata[tid] = (i < n) ? in[i] : 0.0f;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) {
            sdata[tid] += sdata[tid + s];
        }
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = sdata[0];
}
"#,
            r#"#define BLOCK_SIZE 128
__global__ void reduce_sum(const float *__restrict__ in, float *__restrict__ out, unsigned int n) {
    __shared__ float sdata[BLOCK_SIZE];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    sdata[tid] = (i < n) ? in[i] : 0.0f;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 32; s >>= 1) {
        if (tid < s) {
            sdata[tid] += sdata[tid + s];
        }
        __syncthreads();
    }
    if (tid < 32) {
        float warp_sum = sdata[tid] + sdata[tid + 32];
        warp_sum += __shfl_down_sync(0xffffffff, warp_sum, 16);
        warp_sum += __shfl_down_sync(0xffffffff, warp_sum, 8);
        warp_sum += __shfl_down_sync(0xffffffff, warp_sum, 4);
        warp_sum += __shfl_down_sync(0xffffffff, warp_sum, 2);
        warp_sum += __shfl_down_sync(0xffffffff, warp_sum, 1);
        if (tid == 0) {
            sdata[0] = warp_sum;
        }
    }
    __syncthreads();
    if (tid == 0) out[blockIdx.x] = sdata[0];
}
"#,
        );
        assert_eq!(
        desc,
        "the last 5 steps of the tree reduction of `sdata` at line 8 (the first warp's) use `__shfl_down_sync` instead of shared memory and barriers; the sums keep their order"
    );
    }

    #[test]
    fn a_double_tree_with_a_constant_stride_uses_shuffles() {
        let desc = check(
            &WarpShuffle,
            [256, 1, 1],
            r#"__global__ void reduce_max_shape(const double *in, double *out, int n) {
    __shared__ double partial[256];
    int tid = threadIdx.x;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    partial[tid] = i < n ? in[i] : 0.0;
    __syncthreads();
    for (int s = 128; s > 0; s /= 2) {
        if (tid < s) partial[tid] += partial[tid + s];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = partial[0];
}
"#,
            r#"__global__ void reduce_max_shape(const double *in, double *out, int n) {
    __shared__ double partial[256];
    int tid = threadIdx.x;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    partial[tid] = i < n ? in[i] : 0.0;
    __syncthreads();
    for (int s = 128; s > 32; s /= 2) {
        if (tid < s) partial[tid] += partial[tid + s];
        __syncthreads();
    }
    if (tid < 32) {
        double warp_sum = partial[tid] + partial[tid + 32];
        warp_sum += __shfl_down_sync(0xffffffff, warp_sum, 16);
        warp_sum += __shfl_down_sync(0xffffffff, warp_sum, 8);
        warp_sum += __shfl_down_sync(0xffffffff, warp_sum, 4);
        warp_sum += __shfl_down_sync(0xffffffff, warp_sum, 2);
        warp_sum += __shfl_down_sync(0xffffffff, warp_sum, 1);
        if (tid == 0) {
            partial[0] = warp_sum;
        }
    }
    __syncthreads();
    if (tid == 0) out[blockIdx.x] = partial[0];
}
"#,
        );
        assert_eq!(
        desc,
        "the last 5 steps of the tree reduction of `partial` at line 7 (the first warp's) use `__shfl_down_sync` instead of shared memory and barriers; the sums keep their order"
    );
    }

    #[test]
    fn a_stride_that_skips_32_stays() {
        check_not_applicable(
        &WarpShuffle,
        [96, 1, 1],
        r#"__global__ void reduce96(const int *in, int *out, int n) {
    __shared__ int sdata[96];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    sdata[tid] = (i < n) ? in[i] : 0;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = sdata[0];
}
"#,
        "the tree reduction of `sdata` at line 7 keeps its shared-memory steps: the stride starts at 48, not at a power of two of at least 32",
    );
    }

    #[test]
    fn partial_sums_read_after_the_loop_stay() {
        check_not_applicable(
        &WarpShuffle,
        [128, 1, 1],
        r#"__global__ void reduce_pair(const int *in, int *out, int n) {
    __shared__ int sdata[128];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    sdata[tid] = (i < n) ? in[i] : 0;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = sdata[0] + sdata[1];
}
"#,
        "the tree reduction of `sdata` at line 7 keeps its shared-memory steps: after the loop, `sdata` is used at other indices than 0",
    );
    }
}
