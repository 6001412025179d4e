//! Tree reductions in global memory, as students write them first, run in
//! a `__shared__` array:
//!
//! ```text
//! int *p = in + blockIdx.x * blockDim.x;             int *p = in + blockIdx.x * blockDim.x;
//! for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) { __shared__ int p_tree[1024];
//!     if (tid < s) p[tid] += p[tid + s];             if (blockDim.x <= 1024 && blockDim.y == 1 && blockDim.z == 1) {
//!     __syncthreads();                                   if (tid < blockDim.x / 2 * 2) p_tree[tid] = p[tid];
//! }                                                      __syncthreads();
//!                                                        for (…) { if (tid < s) p_tree[tid] += p_tree[tid + s]; __syncthreads(); }
//!                                                        if (tid < blockDim.x / 2) p[tid] = p_tree[tid];
//!                                                        __syncthreads();
//!                                                    } else { the original loop }
//! ```
//!
//! Each step of the original reads two elements of global memory and
//! writes one in every working thread; the rewrite reads each element
//! once, runs the same steps in shared memory, and stores once each
//! element the original's steps wrote. The element may be indexed
//! through a per-block pointer (`p[tid]`) or directly
//! (`in[blockIdx.x * blockDim.x + tid]`, or a local `i` initialized so).
//! The loop may also be written `int s = blockDim.x / 2; while (s > 0) {
//! …; s >>= 1; }`: it is proposed as its `for` form, the same loop
//! ([`while_form`] says why).
//!
//! Why the results are the same, global memory included (the host may
//! read the partial sums the original leaves in the array):
//! - Let `S` be the stride's start and `X(t)` the index of thread `t`'s
//!   element (`t` plus an offset every thread of the block computes alike,
//!   [`find`]). The original's step `s` has thread `t < s` combine
//!   `a[X(t)]` with `a[X(t) + s]` = `a[X(t + s)]`: it reads only the
//!   elements `X(t)` for `t < 2S` and writes only those for `t < S`.
//! - The rewrite keeps `p_tree[t]` for `a[X(t)]`: thread `t < 2S` copies
//!   its element in (reading no element the original does not), a barrier
//!   follows, and the loop is the original's, with `p_tree[t]` and
//!   `p_tree[t + s]` for the two elements; so after it `p_tree[t]` holds
//!   what `a[X(t)]` holds after the original's loop, combined in the same
//!   order (also for floating-point data). Thread `t < S` stores
//!   `p_tree[t]` back to `a[X(t)]`: every element the original wrote ends
//!   with the original's last value, and the others were never written by
//!   either. A barrier after the stores orders them before anything the
//!   rest of the kernel (unchanged) does, as the loop's last barrier did.
//! - Within the loop no thread of the block reads or writes anything else,
//!   and another block that touched these elements during the kernel
//!   would race with the original, so only the values at the end are
//!   observable, and they are the same.
//! - The test `blockDim.x <= 1024 && blockDim.y == 1 && blockDim.z == 1`
//!   (or, for a constant start `C`, `blockDim.x >= 2C`) reads only
//!   `blockDim`, so every thread of the block takes the same side and the
//!   barriers on either side are reached by all; it keeps `2S` within the
//!   array's 1024 elements (a block has at most 1024 threads) and makes
//!   `tid` tell the block's threads apart (with `blockDim.y > 1` several
//!   threads share a `threadIdx.x`, and the original races). Any other
//!   block runs the original loop.
//! - The loop is a statement of the kernel's body with no `return` before
//!   it, so every thread reaches the copy and the barriers.
//! - The copy fits ([`crate::shared_budget`]): its static `__shared__`
//!   arrays, the dynamic shared memory each launch in the file asks for
//!   and the copy take at most 48 KiB, so every launch of the original can
//!   launch the rewrite; an `extern __shared__` array with no launch to
//!   size it is refused.
//! - The stride's type holds the largest start the block test lets
//!   through (512, or the constant), so the first step is `s = S` and the
//!   original writes every element `t < S` there: the stores back write
//!   no element the original leaves alone.
//!
//! The cost: the stores of the first half of the block stay (one per
//! element the original wrote, instead of one per step), and one copy-in
//! and two barriers are added; the search keeps the rewrite only when its
//! bound is better. The tail stays in shared memory: the stores back read
//! `p_tree[t]` for every `t < S`, which the warp shuffle's tail would
//! change.

use copper::cuda::ast::{BinOp, Expr, ExprKind, Function, Stmt, StmtKind, Type};

use crate::ast_util::{self, bin, expr, ident, if_else, index, int, shared_decl, stmt, sync};
use crate::shared_budget;
use crate::warp_shuffle::tree::Combine;
use crate::warp_shuffle::while_form;
use crate::{Candidate, Context, Proposals, Refusal, Skip, Transform};

mod find;

use find::{element_type, global_tree, GlobalTree};

/// The elements of the `__shared__` copy for a start of `blockDim.x / 2`:
/// the most threads a block may have.
const MAX_BLOCK: u64 = 1024;

/// Global-memory tree reductions moved into shared memory.
pub struct GlobalTreeToShared;

impl Transform for GlobalTreeToShared {
    fn name(&self) -> &'static str {
        "shared-memory tree reduction"
    }

    fn propose(&self, cx: &Context) -> Proposals {
        // A `while` tree is proposed as its `for` form (the same loop).
        let normalized = while_form::normalize(cx.function, &|f, s| global_tree(f, s).is_some());
        let (f, whiles) = match &normalized {
            Some((g, whiles)) => (g, whiles.as_slice()),
            None => (cx.function, &[][..]),
        };
        let mut out = Proposals::default();
        for (at, s) in f.body.iter().enumerate() {
            let Some(tree) = global_tree(f, s) else {
                continue;
            };
            let written = whiles.iter().find(|w| w.at == at);
            let span = written.map_or(s.meta.span, |w| w.span);
            let line = cx.line(span);
            let original = written.map_or_else(|| vec![s.clone()], |w| w.original.clone());
            match rewrite(cx, f, at, &tree, original) {
                Ok((g, copy, start)) => {
                    let mut description = describe(&tree, &copy, &start, line);
                    if let Some(w) = written {
                        description = format!("{}; {description}", w.note(&tree.var, line));
                    }
                    out.candidates
                        .push(Candidate::new(self.name(), g, description));
                }
                Err(why) => out.skipped.push(Skip {
                    span,
                    reason: format!(
                        "the tree reduction of `{}` at line {line} stays in global memory: {why}",
                        tree.array
                    ),
                }),
            }
        }
        out
    }
}

/// How far the stride starts, which sizes the copy and the block test.
enum Start {
    /// `blockDim.x / 2` (or `blockDim.x >> 1`).
    HalfBlock,
    /// A constant (a literal, a template's value).
    Constant(u64),
}

/// `f` with the tree at `f.body[at]` run in a `__shared__` copy, the
/// copy's name and where the stride starts; other blocks run `original`,
/// the loop as the kernel writes it (a `while` stays a `while`).
fn rewrite(
    cx: &Context,
    f: &Function,
    at: usize,
    tree: &GlobalTree,
    original: Vec<Stmt>,
) -> Result<(Function, String, Start), Refusal> {
    if ast_util::returns(&f.body[..at]) {
        return Err(
            "a thread may return before it, so not every thread reaches its barriers".into(),
        );
    }
    let start = start_of(f, &tree.start)?;
    // The stride's type as the kernel has it: one that cannot hold the
    // start (`char s = blockDim.x / 2`) would skip steps, and the stores
    // back would write elements the original leaves alone.
    let most = match start {
        Start::HalfBlock => MAX_BLOCK / 2,
        Start::Constant(c) => c,
    };
    let holds = cx
        .kernel
        .vars
        .iter()
        .find(|v| v.span == tree.var_span && !v.span.is_synthetic())
        .and_then(|v| v.ty.range())
        .is_some_and(|(_, max)| max >= i128::from(most));
    if !holds {
        return Err(format!("its stride `{}` may not hold its start ({most})", tree.var).into());
    }
    let elem = element_type(f, &tree.array)?;
    let copy = ast_util::fresh(&format!("{}_tree", tree.array), &mut ast_util::names_in(f));
    let size = match start {
        Start::HalfBlock => MAX_BLOCK,
        Start::Constant(c) => 2 * c,
    };
    // The copy must fit beside the kernel's own static `__shared__`
    // arrays and the launches' dynamic shared memory, or the kernel would
    // not launch at all.
    let bytes = size * u64::from(elem.size_bytes().unwrap_or(u32::MAX));
    let new = format!("its copy of {size} elements");
    if let Some(why) = shared_budget::in_use(cx, &new).refusal(&new, bytes) {
        return Err(why.into());
    }
    let tid = &tree.tid;
    let own = || {
        expr(ExprKind::Index(
            Box::new(ident(&tree.array)),
            Box::new(tree.own.clone()),
        ))
    };
    let mine = || index(&copy, tid.clone());
    let mut fast = vec![if_else(
        bin(
            BinOp::Lt,
            tid.clone(),
            bin(BinOp::Mul, tree.start.clone(), int(2)),
        ),
        vec![ast_util::assign(mine(), own())],
        Vec::new(),
    )];
    fast.push(sync());
    let partner = index(&copy, bin(BinOp::Add, tid.clone(), ident(&tree.var)));
    let update = match &tree.combine {
        Combine::Sum => expr(ExprKind::Assign(
            Some(BinOp::Add),
            Box::new(mine()),
            Box::new(partner),
        )),
        c @ Combine::Call { .. } => expr(ExprKind::Assign(
            None,
            Box::new(mine()),
            Box::new(c.apply(mine(), partner)),
        )),
    };
    let step = if_else(
        bin(BinOp::Lt, tid.clone(), ident(&tree.var)),
        vec![stmt(StmtKind::Expr(update))],
        Vec::new(),
    );
    fast.push(stmt(StmtKind::For {
        init: Some(Box::new(tree.init.clone())),
        cond: Some(tree.cond.clone()),
        step: Some(tree.step.clone()),
        body: Box::new(ast_util::block(vec![step, sync()])),
    }));
    fast.push(if_else(
        bin(BinOp::Lt, tid.clone(), tree.start.clone()),
        vec![ast_util::assign(own(), mine())],
        Vec::new(),
    ));
    fast.push(sync());
    let test = [
        match start {
            Start::HalfBlock => bin(BinOp::Le, block_dim("x"), int(MAX_BLOCK)),
            Start::Constant(c) => bin(BinOp::Ge, block_dim("x"), int(2 * c)),
        },
        bin(BinOp::Eq, block_dim("y"), int(1)),
        bin(BinOp::Eq, block_dim("z"), int(1)),
    ]
    .into_iter()
    .reduce(|a, b| bin(BinOp::And, a, b))
    .ok_or("no block test")?;
    let replacement = vec![
        shared_decl(Type::scalar(elem), &copy, vec![int(size)]),
        if_else(test, fast, original),
    ];
    let mut body = f.body[..at].to_vec();
    body.extend(replacement);
    body.extend(f.body[at + 1..].iter().cloned());
    Ok((Function { body, ..f.clone() }, copy, start))
}

/// The stride's start: half the block, or a constant of 1 to 512 (twice
/// it, the elements the tree reads, fit in a block).
fn start_of(f: &Function, e: &Expr) -> Result<Start, Refusal> {
    let half = |op| {
        bin(
            op,
            block_dim("x"),
            int(if op == BinOp::Div { 2 } else { 1 }),
        )
    };
    if ast_util::equiv_expr(e, &half(BinOp::Div)) || ast_util::equiv_expr(e, &half(BinOp::Shr)) {
        return Ok(Start::HalfBlock);
    }
    let value = ast_util::value_with(e, &|leaf| match &leaf.kind {
        ExprKind::Ident(n) => ast_util::template_value(f, n),
        _ => None,
    });
    match value {
        Some(c @ 1..=512) => Ok(Start::Constant(c)),
        _ => Err(
            "its stride starts neither at `blockDim.x / 2` nor at a constant of 1 to 512".into(),
        ),
    }
}

/// `blockDim.<d>`.
fn block_dim(d: &str) -> Expr {
    expr(ExprKind::Member {
        base: Box::new(ident("blockDim")),
        field: d.to_string(),
        arrow: false,
    })
}

/// What the rewrite of `tree` (the loop at `line`, copied into `copy`)
/// does, for the report.
fn describe(tree: &GlobalTree, copy: &str, start: &Start, line: usize) -> String {
    let a = &tree.array;
    let blocks = match start {
        Start::HalfBlock => "one-dimensional ones of at most 1024 threads".to_string(),
        Start::Constant(c) => format!("one-dimensional ones of at least {} threads", 2 * c),
    };
    format!(
        "the tree reduction of `{a}` at line {line} runs in the `__shared__` array `{copy}`: each thread copies its element in once, the steps combine the same operands in the same order in shared memory instead of reading and writing global memory at each step, and each thread of the first half stores its final partial result back to `{a}` once, so global memory ends as the original leaves it; blocks other than {blocks} run the original loop"
    )
}

#[cfg(test)]
mod tests;
