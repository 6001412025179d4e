//! Warp-shuffle reductions: the last five steps of a
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
//! The tree may also take minima or maxima (`a[tid] = fmaxf(a[tid],
//! a[tid + s])`, with `max`, `min`, `fmaxf`, `fminf`, `fmax` or `fmin`):
//! each shuffle step is then `v = fmaxf(v, __shfl_down_sync(…))`, with the
//! operands in the order the kernel writes them.
//!
//! For integer data that the loop reduces over the whole block (`start` is
//! half of `blockDim.x`), a second candidate reduces per warp first: each
//! warp reduces its 32 elements by shuffles, lane 0 of each stores the
//! result in `a[warp]`, and the first warp reduces those (three barriers
//! in all; its lanes past the warps' results take 0 for a sum, `a[0]`
//! again for a minimum or maximum). Integer addition wraps, and minima and
//! maxima do not depend on the order, so the new order gives the same
//! result; for floating-point data this candidate is made only with
//! `--allow-reassociation` (the description says the result may differ,
//! and the check compares within
//! [`crate::check::reassociation_tolerance`]). The ranking picks
//! between the two (under the default worst-warp `wsteps`, the tail wins:
//! the first warp does both phases).
//!
//! The tail is exact, also for floating-point data: after each step, lane `t < s`
//! holds what `a[t]` held in the original, combined in the same order
//! (lane 0's value depends only on lanes below `2s` at each step, which
//! are the original's operands), so the rewrite does not reassociate.
//! Preconditions, checked syntactically with the launch's block:
//! - the block is one-dimensional and its size (`blockDim.x`) a known
//!   multiple of 32, so lanes `tid < 32` are the whole first warp and the
//!   full mask is right;
//! - the loop is a statement of the kernel's body (not nested, so every
//!   thread reaches it and it runs once), counts `s` from a start that is
//!   a power of two of at least 32 once the block and the template's
//!   arguments are known (`blockDim.x / 2`, `BLOCK / 2`), halves it
//!   (`s >>= 1`, `s /= 2`) while `s > 0`, and its body is exactly
//!   `if (tid < s) a[tid] += a[tid + s]; __syncthreads();` (or
//!   `a[tid] = a[tid] + a[tid + s]`, or a minimum or maximum), where `tid`
//!   is `threadIdx.x` or a local initialized to it and never assigned
//!   again;
//! - `a` is a one-dimensional `__shared__` array of 32- or 64-bit integers,
//!   `float` or `double` (the types `__shfl_down_sync` takes), in the
//!   kernel and, for a template (`__shared__ T a[BLOCK]`), in every
//!   instantiation of the file, used only as `a[index]`, and after the
//!   loop only `a[0]` is used: the rewrite leaves `a[1..32)` holding other
//!   partial results than the original.
//!
//! A loop that stops at 32 and a first warp that finishes with six steps
//! unrolled by hand, without barriers ([`unrolled`]), is the same tree:
//! its steps become the same shuffles, and the candidate says it repairs
//! the reliance on lockstep lanes ([`Candidate::repairs`]).
//!
//! A template's rewrite is checked by the search for each of its
//! instantiations (their own launches), not only the one searched.

use crate::check::CHECKED_WITHIN;
use std::borrow::Cow;

use copper::cuda::ast::{BinOp, Expr, ExprKind, Function, Space, Stmt, StmtKind, Type};
use copper::ir::lower::lower_kernel;
use copper::ir::{Kernel, Scalar};

use crate::ast_util::{self, bin, decl, expr, ident, if_else, index, int, stmt, sync};
use crate::{Candidate, Context, Proposals, Refusal, Skip, Transform};

mod stepped;
pub(crate) mod tree;
mod unrolled;
pub(crate) mod while_form;

use tree::{is_thread_x, literal, loop_to_warp, name_of, tree_loop, Combine, Loop, Tree};
use while_form::WhileLoop;

/// Warp-shuffle tail of shared-memory tree reductions.
pub struct WarpShuffle;

impl Transform for WarpShuffle {
    fn name(&self) -> &'static str {
        "warp-shuffle reduction"
    }

    fn propose(&self, cx: &Context) -> Proposals {
        // A `while` tree is proposed as its `for` form (the same loop).
        let normalized = while_form::normalize(cx.function, &|f, s| {
            tree_loop(f, s).is_some() || loop_to_warp(f, s).is_some()
        });
        let Some((g, whiles)) = &normalized else {
            return propose_in(self, cx, &[]);
        };
        propose_in(self, &Context { function: g, ..*cx }, whiles)
    }
}

/// The proposals for `cx.function`, in which the `for` loops `whiles`
/// stand for the `while` loops the kernel writes.
fn propose_in(t: &WarpShuffle, cx: &Context, whiles: &[WhileLoop]) -> Proposals {
    let mut out = Proposals::default();
    let f = cx.function;
    let mut planned = Vec::new();
    for (at, s) in f.body.iter().enumerate() {
        let Some(tree) = tree_loop(f, s).or_else(|| unrolled_tree(cx, at)) else {
            continue;
        };
        let written = whiles.iter().find(|w| w.at == at);
        let line = cx.line(written.map_or(s.meta.span, |w| w.span));
        let as_for = |d: String| match (written, &tree.looped) {
            (Some(w), Some(l)) => format!("{}; {d}", w.note(&l.var, line)),
            _ => d,
        };
        match plan(cx, at, &tree) {
                Ok(plan) => {
                    for (function, variant) in versions(f, at, &tree, &plan, cx) {
                        out.candidates.push(Candidate {
                            fixes_block_size: true,
                            repairs: tree.unrolled.as_ref().map(|_| {
                                "it no longer relies on the lanes of a warp running in lockstep".to_string()
                            }),
                            reassociates: plan.reorders
                                || variant == Variant::PerWarp { reassociates: true },
                            ..Candidate::new(
                                t.name(),
                                function,
                                as_for(describe(variant, &tree, line, &plan)),
                            )
                        });
                    }
                    planned.push((at, tree, plan, line));
                }
                Err(why) => out.skipped.push(Skip {
                    span: written.map_or(s.meta.span, |w| w.span),
                    reason: format!(
                        "the tree reduction of `{}` at line {line} keeps its shared-memory steps: {why}",
                        tree.array
                    ),
                }),
            }
    }
    // Several trees (a softmax's maximum, then its sum): one more
    // candidate with the tail of each, since a transform applies once.
    if planned.len() > 1 {
        let mut g = f.clone();
        for (at, tree, plan, _) in planned.iter().rev() {
            g = tail(&g, *at, tree, plan);
        }
        let each: Vec<String> = planned
            .iter()
            .map(|(_, t, _, line)| format!("`{}` at line {line}", t.array))
            .collect();
        let order = if planned.iter().any(|(_, _, p, _)| p.reorders) {
            "the interleaved ones become sequential (`tid < s`), so their floating-point steps combine in another order (allowed by --allow-reassociation)"
        } else if planned.iter().any(|(_, t, _, _)| t.interleaved.is_some()) {
            "the interleaved ones become sequential (`tid < s`), which gives integers the same result in another order"
        } else {
            "each step combines the same operands in the same order"
        };
        let description = format!(
                "the last 5 steps of the tree reductions of {} (the first warp's) use `__shfl_down_sync` instead of shared memory and barriers; {order}",
                each.join(" and ")
            );
        out.candidates.push(Candidate {
            fixes_block_size: true,
            reassociates: planned.iter().any(|(_, _, p, _)| p.reorders),
            ..Candidate::new(t.name(), g, description)
        });
    }
    out
}

/// The tree loop at `cx.function.body[at]` that stops at 32 (or its
/// last step above the first warp unrolled by hand, [`stepped`]), when
/// the next statement finishes it by hand-unrolled warp-synchronous
/// steps.
fn unrolled_tree(cx: &Context, at: usize) -> Option<Tree> {
    let f = cx.function;
    let mut tree =
        loop_to_warp(f, &f.body[at]).or_else(|| stepped::step_to_warp(f, &f.body[at]))?;
    let instances = instance_functions(cx);
    tree.unrolled = Some(unrolled::tail_of(
        cx.file,
        &instances,
        f.body.get(at + 1)?,
        &tree,
    )?);
    Some(tree)
}

/// What a rewrite of `tree` (the loop at `line`) does, for the report.
fn describe(variant: Variant, tree: &Tree, line: usize, plan: &Plan) -> String {
    let a = &tree.array;
    let head = format!("the tree reduction of `{a}` at line {line}");
    if let Some(written) = &tree.unrolled {
        let how = match &written.function {
            Some(name) => format!("`{name}`'s"),
            None => "the".to_string(),
        };
        let print = copper::cuda::print::expression;
        let under = written.under_a_warp.as_ref().map(|(g, _)| format!("`{}` fails (a block under a warp, whose shuffles would name lanes it does not have) in others, where the steps stay as written", print(g)));
        let guards = match (&written.first_guard, &under) {
            (Some(g), None) => format!("the first step keeps its guard `{}` (it holds in some instantiations of the template and not in others), and the guards of the other five hold in every instantiation of the file", print(g)),
            (Some(g), Some(under)) => format!("the first step keeps its guard `{}` (it holds in some instantiations of the template and not in others); the shuffles run in the instantiations whose block is a warp or more, and {under}", print(g)),
            (None, Some(under)) => format!("the shuffles run in the instantiations whose block is a warp or more, and {under}"),
            (None, None) => "any guard of the six steps holds in every instantiation of the file, so the shuffles take all six".to_string(),
        };
        let varies = written.first_guard.is_some() || under.is_some();
        let above = match (&tree.looped, varies) {
            (Some(_), false) => String::new(),
            (Some(_), true) => format!("; {guards}"),
            (None, _) => format!("; the steps above the first warp, unrolled by hand, stay as written (with what they assume of the block), and {guards}"),
        };
        return format!("{how} hand-unrolled last 6 steps of {head} (shared-memory steps without barriers, which rely on the lanes of a warp running in lockstep: CUDA does not promise that since Volta without `__syncwarp`) become `__shfl_down_sync` steps; each step combines the same operands in the same order{above}");
    }
    if let (Some(interleaved), Variant::Tail) = (&tree.interleaved, variant) {
        let order = match (&tree.combine, plan.reorders) {
            (Combine::Sum, false) => "integer sums, so the new order gives the same result".to_string(),
            (Combine::Call { name, .. }, false) => format!("`{name}` of integers gives the same result in any order"),
            (_, true) => format!("the order of the steps changes, so the floating-point result may differ in the last bits (allowed by --allow-reassociation; {CHECKED_WITHIN})"),
        };
        let why = match interleaved.strided_index {
            true => "the element index `2·s·tid` makes the lanes of a warp hit the same shared-memory banks",
            false => "each step keeps every `2·s`-th thread, which leaves lanes of every warp idle",
        };
        return format!("the interleaved tree reduction of `{a}` at line {line} ({why}) becomes sequential (`tid < s`), and its last 5 steps use `__shfl_down_sync` in the first warp; {order}");
    }
    match (&tree.combine, variant) {
        (Combine::Sum, Variant::Tail) => format!("the last 5 steps of {head} (the first warp's) use `__shfl_down_sync` instead of shared memory and barriers; the sums keep their order"),
        (Combine::Sum, Variant::PerWarp { reassociates: false }) => format!("{head} runs in registers: each warp sums its 32 elements with `__shfl_down_sync`, then the first warp sums the warps' totals (3 barriers instead of one per step; integer sums, so the new order gives the same result)"),
        (Combine::Sum, Variant::PerWarp { reassociates: true }) => format!("{head} runs in registers: each warp sums its 32 elements with `__shfl_down_sync`, then the first warp sums the warps' totals (3 barriers instead of one per step); the summation order changes, so the floating-point result may differ in the last bits (allowed by --allow-reassociation; {CHECKED_WITHIN})"),
        (Combine::Call { name, .. }, Variant::Tail) => format!("the last 5 steps of {head} (the first warp's) use `__shfl_down_sync` instead of shared memory and barriers; each `{name}` takes the same operands in the same order"),
        (Combine::Call { name, .. }, Variant::PerWarp { reassociates: false }) => format!("{head} runs in registers: each warp combines its 32 elements with `{name}` over `__shfl_down_sync`, then the first warp combines the warps' results (3 barriers instead of one per step; `{name}` of integers gives the same result in any order)"),
        (Combine::Call { name, .. }, Variant::PerWarp { reassociates: true }) => format!("{head} runs in registers: each warp combines its 32 elements with `{name}` over `__shfl_down_sync`, then the first warp combines the warps' results (3 barriers instead of one per step); the order of the `{name}` steps changes, which picks the same value up to the sign of a zero (allowed by --allow-reassociation; {CHECKED_WITHIN})"),
    }
}

/// The value of the stride's start `e` in the instantiation `f` launched
/// with `blockDim.x` = `bx`: `blockDim.x`, template value parameters and
/// literals.
fn start_value(f: &Function, e: &Expr, bx: u64) -> Option<u64> {
    ast_util::value_with(e, &|leaf| match &leaf.kind {
        ExprKind::Member { base, field, .. }
            if field == "x" && name_of(base) == Some("blockDim") =>
        {
            Some(bx)
        }
        ExprKind::Ident(n) => ast_util::template_value(f, n),
        _ => None,
    })
}

/// The element type of the one-dimensional `__shared__` array `name` as
/// the kernel declares it (`float`, a template's `T`), when
/// `__shfl_down_sync` takes it in the instantiation searched and in every
/// other instantiation of the file, and whether all of them hold integers.
fn shuffled_type(cx: &Context, name: &str) -> Result<(Type, bool), Refusal> {
    let f = cx.function;
    let [d] = ast_util::declarations(f, name)[..] else {
        return Err(format!("`{name}` is not one `__shared__` array of the kernel").into());
    };
    if d.space != Space::Shared || d.dims.len() != 1 || d.ty.is_pointer() {
        return Err(format!("`{name}` is not a one-dimensional `__shared__` array").into());
    }
    let mut integers = true;
    for (instance, kernel) in instantiations(cx)? {
        let array = kernel
            .arrays
            .iter()
            .find(|a| a.name == name && a.space == Space::Shared);
        use Scalar as S;
        match array.map(|a| a.layout.types.as_slice()) {
            Some([t @ (S::I32 | S::U32 | S::I64 | S::U64 | S::F32 | S::F64)]) => {
                integers &= is_integer(*t);
            }
            Some(_) => {
                let (of, written) = if instance != f.name {
                    (
                        format!(" in `{instance}`"),
                        array.map_or("?", |a| a.elem.c_name()),
                    )
                } else if ast_util::is_type_param(f, &d.ty.base) {
                    (String::new(), array.map_or("?", |a| a.elem.c_name()))
                } else {
                    (String::new(), d.ty.base.c_name())
                };
                return Err(format!(
                    "its elements{of} are `{written}`, which `__shfl_down_sync` does not take"
                )
                .into());
            }
            None => {
                return Err(format!("`{name}` is not a `__shared__` array of `{instance}`").into())
            }
        }
    }
    Ok((d.ty.base_only(), integers))
}

/// The kernel searched and, when it instantiates a template, the file's
/// other instantiations (a rewrite of the template changes them all).
fn instance_functions<'a>(cx: &Context<'a>) -> Vec<&'a Function> {
    let f = cx.function;
    let mut out = vec![f];
    if let Some(t) = &f.template {
        out.extend(cx.host.kernels().filter(|g| {
            g.template.as_ref().is_some_and(|u| u.name == t.name)
                && g.name != f.name
                && g.meta.span == f.meta.span
        }));
    }
    out
}

/// The kernels of [`instance_functions`], each with its name, lowered
/// (the one searched as the search has it); refused when one of them
/// does not lower.
fn instantiations<'a>(cx: &Context<'a>) -> Result<Vec<(String, Cow<'a, Kernel>)>, Refusal> {
    let mut out = vec![(cx.function.name.clone(), Cow::Borrowed(cx.kernel))];
    for g in instance_functions(cx).into_iter().skip(1) {
        let k = lower_kernel(cx.host, &g.name).map_err(|d| {
            format!(
                "the template's instantiation `{}` cannot be analyzed: {}",
                g.name, d.message
            )
        })?;
        out.push((g.name.clone(), Cow::Owned(k)));
    }
    Ok(out)
}

/// What the rewrites of a tree need to know, once its preconditions hold.
struct Plan {
    /// The stride's start, with the launch's block (`None` for steps
    /// unrolled by hand).
    start: Option<u64>,
    /// The partial result's type as the kernel declares its elements.
    ty: Type,
    /// Whether the elements are integers in every instantiation.
    integers: bool,
    /// Whether the tree reduces the whole block (`start` is half of it).
    whole_block: bool,
    /// Whether even the tail changes the order of the floating-point
    /// steps (an interleaved tree made sequential).
    reorders: bool,
}

/// Checks the preconditions of rewriting the tree loop at `f.body[at]`.
fn plan(cx: &Context, at: usize, tree: &Tree) -> Result<Plan, Refusal> {
    let f = cx.function;
    let block = cx.fixed_block("")?;
    if block[1] != 1 || block[2] != 1 || block[0] % 32 != 0 {
        return Err(Refusal::BlockShape {
            block,
            wanted: "one-dimensional with a multiple of 32 threads",
        });
    }
    if tree.interleaved.is_some() && !(block[0] >= 64 && block[0].is_power_of_two()) {
        return Err(format!(
            "the interleaved loop reduces {} elements, not a power of two of at least 64 that the sequential one would halve",
            block[0]
        )
        .into());
    }
    let start = match &tree.looped {
        Some(l) => Some(loop_start(cx, l, block[0])?),
        None => None,
    };
    let (ty, integers) = shuffled_type(cx, &tree.array)?;
    // The hand-unrolled tail passes the array to its device function; the
    // rewrite replaces it.
    let tail_len = usize::from(tree.unrolled.is_some());
    let without_tail = splice(f, at + 1, tail_len, Vec::new());
    ast_util::array_uses(&without_tail, &tree.array)
        .map_err(|why| format!("`{}`: {why}", tree.array))?;
    // The rewrite leaves other partial results than the original's in
    // `a[1..32)` (and, per warp, below `start`): later code may read only
    // `a[0]` until every thread writes its own element again
    // (`a[tid] = …;`, the next reduction of a reused buffer).
    for s in &f.body[at + 1 + tail_len..] {
        if overwrites_own_element(f, s, tree) {
            break;
        }
        let mut other = false;
        ast_util::visit_stmt_exprs(s, &mut |e| {
            if let ExprKind::Index(b, i) = &e.kind {
                other |= name_of(b) == Some(tree.array.as_str()) && literal(i) != Some(0);
            }
        });
        if other {
            return Err(format!(
                "after the loop, `{}` is used at other indices than 0 before each thread writes its own element again",
                tree.array
            )
            .into());
        }
        if ast_util::returns(std::slice::from_ref(s)) {
            return Err(format!(
                "after the loop, a thread may return before each thread writes its own element of `{}` again",
                tree.array
            )
            .into());
        }
    }
    let reorders = tree.interleaved.is_some() && !integers;
    if let Some(interleaved) = &tree.interleaved {
        let to = start_value(f, &interleaved.bound, block[0]);
        if to != Some(block[0]) {
            let to = to.map_or_else(
                || "a bound not known once the block is".into(),
                |v| v.to_string(),
            );
            return Err(format!(
                "the interleaved loop runs its stride up to {to}, not to the block's {} threads",
                block[0]
            )
            .into());
        }
        if reorders && !cx.allow_reassociation {
            return Err("made sequential, its floating-point steps would combine in another order (allowed by --allow-reassociation)".into());
        }
    }
    Ok(Plan {
        start,
        ty,
        integers,
        whole_block: start.is_some_and(|s| s * 2 == block[0]),
        reorders,
    })
}

/// The start of the tree's loop `l` with `bx` threads a block: a power of
/// two of at least 32 that the stride's type holds.
fn loop_start(cx: &Context, l: &Loop, bx: u64) -> Result<u64, Refusal> {
    let start = start_value(cx.function, &l.start, bx)
        .ok_or("the stride's start is not a constant once the block is known")?;
    if start < 32 || !start.is_power_of_two() {
        return Err(
            format!("the stride starts at {start}, not at a power of two of at least 32").into(),
        );
    }
    // The stride's type as the kernel has it (typedefs, `auto` and
    // template parameters resolved): `char s = 256` would be 0.
    let stride = cx
        .kernel
        .vars
        .iter()
        .find(|v| v.span == l.var_span && !v.span.is_synthetic())
        .map(|v| v.ty)
        .ok_or_else(|| format!("the stride `{}` is not a variable of the kernel", l.var))?;
    if stride
        .range()
        .is_none_or(|(_, max)| i128::from(start) > max)
    {
        return Err(format!(
            "the stride `{}` is `{}`, which cannot hold its start {start}",
            l.var,
            stride.c_name()
        )
        .into());
    }
    Ok(start)
}

/// Whether `s` is `a[tid] = e;` (`tid` the thread's `threadIdx.x`) with
/// `e` reading `a` at most at index 0: a
/// statement of the kernel's body every thread runs, after which every
/// element the block's threads index holds the same value in the original
/// and the rewrite (the block has at least 32 threads, and the rewrite
/// changes only elements below `start`, less than the block).
fn overwrites_own_element(f: &Function, s: &Stmt, tree: &Tree) -> bool {
    let StmtKind::Expr(e) = &s.kind else {
        return false;
    };
    let ExprKind::Assign(None, target, value) = &e.kind else {
        return false;
    };
    let ExprKind::Index(a, i) = &target.kind else {
        return false;
    };
    let mut reads_other = false;
    copper::cuda::visit::visit_expr(value, &mut |x| {
        if let ExprKind::Index(b, k) = &x.kind {
            reads_other |= name_of(b) == Some(tree.array.as_str()) && literal(k) != Some(0);
        }
    });
    name_of(a) == Some(tree.array.as_str()) && is_thread_x(f, i) && !reads_other
}

/// The rewrites of the tree loop at `f.body[at]`: the tail, and the
/// per-warp order when it keeps the results (or `--allow-reassociation`
/// allows floating-point sums in another order).
fn versions(
    f: &Function,
    at: usize,
    tree: &Tree,
    plan: &Plan,
    cx: &Context,
) -> Vec<(Function, Variant)> {
    let mut out = vec![(tail(f, at, tree, plan), Variant::Tail)];
    let reassociates = !plan.integers;
    if (!reassociates || cx.allow_reassociation) && plan.whole_block && tree.unrolled.is_none() {
        out.push((
            per_warp(f, at, tree, plan),
            Variant::PerWarp { reassociates },
        ));
    }
    out
}

/// `f` with the `count` statements from `at` on replaced by
/// `replacement`.
fn splice(f: &Function, at: usize, count: usize, replacement: Vec<Stmt>) -> Function {
    let mut body = f.body[..at].to_vec();
    body.extend(replacement);
    body.extend(f.body[at + count..].iter().cloned());
    Function { body, ..f.clone() }
}

/// The statements that build a warp's result in `v` by five shuffle
/// steps (offsets 16 to 1).
fn shuffles(combine: &Combine, v: &str) -> Vec<Stmt> {
    [16, 8, 4, 2, 1]
        .into_iter()
        .map(|off| {
            let mask = expr(ExprKind::Int {
                value: 0xffff_ffff,
                text: "0xffffffff".into(),
            });
            let shfl = expr(ExprKind::Call(
                "__shfl_down_sync".into(),
                vec![mask, ident(v), int(off)],
            ));
            stmt(StmtKind::Expr(combine.accumulate(v, shfl)))
        })
        .collect()
}

/// `if (tid == 0) { a[0] = v; }`.
fn store_first(tree: &Tree, v: &str) -> Stmt {
    if_else(
        bin(BinOp::Eq, tree.tid.clone(), int(0)),
        vec![ast_util::assign(index(&tree.array, int(0)), ident(v))],
        Vec::new(),
    )
}

/// `f` with the tree at `at` ending in the first warp's shuffles: the
/// steps above 32 as written, then the first warp.
fn tail(f: &Function, at: usize, tree: &Tree, plan: &Plan) -> Function {
    let v = ast_util::fresh(tree.combine.variable(), &mut ast_util::names_in(f));
    let tid = &tree.tid;
    let elem = |i: Expr| index(&tree.array, i);
    let partner = elem(bin(BinOp::Add, tid.clone(), int(32)));
    let first_guard = tree.unrolled.as_ref().and_then(|w| w.first_guard.as_ref());
    let mut warp = match first_guard {
        // The first step only where the original takes it
        // (`if (blockSize >= 64)`): a block of 32 has no partner there.
        Some(guard) => vec![
            decl(plan.ty.clone(), &v, Some(elem(tid.clone()))),
            if_else(
                guard.clone(),
                vec![stmt(StmtKind::Expr(tree.combine.accumulate(&v, partner)))],
                Vec::new(),
            ),
        ],
        None => vec![decl(
            plan.ty.clone(),
            &v,
            Some(tree.combine.apply(elem(tid.clone()), partner)),
        )],
    };
    warp.extend(shuffles(&tree.combine, &v));
    warp.push(store_first(tree, &v));
    let warp = match tree.unrolled.as_ref().and_then(|w| w.under_a_warp.as_ref()) {
        // Shuffles over all 32 lanes only where the block has them
        // (`if (blockSize >= 32)`); a smaller block keeps its steps.
        Some((guard, written)) => vec![if_else(guard.clone(), warp, vec![written.clone()])],
        None => warp,
    };
    let first_warp = if_else(bin(BinOp::Lt, tid.clone(), int(32)), warp, Vec::new());
    if tree.unrolled.is_some() {
        // The loop already stops at 32: the hand-unrolled steps give way
        // to the shuffles. Thread 0 writes `a[0]` last in both, so what
        // follows sees it as it did (no barrier added).
        return splice(f, at + 1, 1, vec![first_warp]);
    }
    let mut tail = Vec::new();
    if let (Some(l), Some(33..)) = (&tree.looped, plan.start) {
        tail.push(stmt(StmtKind::For {
            init: Some(Box::new(l.init.clone())),
            cond: Some(bin(BinOp::Gt, ident(&l.var), int(32))),
            step: Some(l.step.clone()),
            body: Box::new(l.body.clone()),
        }));
    }
    tail.push(first_warp);
    tail.push(sync());
    splice(f, at, 1, tail)
}

/// `f` with the tree at `at` reduced per warp first: each warp reduces its
/// 32 elements, the first warp their results.
fn per_warp(f: &Function, at: usize, tree: &Tree, plan: &Plan) -> Function {
    let v = ast_util::fresh(tree.combine.variable(), &mut ast_util::names_in(f));
    let tid = &tree.tid;
    let elem = |i: Expr| index(&tree.array, i);
    let warps = bin(BinOp::Div, block_dim_x(), int(32));
    let mut out = vec![decl(plan.ty.clone(), &v, Some(elem(tid.clone())))];
    out.extend(shuffles(&tree.combine, &v));
    out.push(sync());
    out.push(if_else(
        bin(BinOp::Eq, bin(BinOp::Rem, tid.clone(), int(32)), int(0)),
        vec![ast_util::assign(
            elem(bin(BinOp::Div, tid.clone(), int(32))),
            ident(&v),
        )],
        Vec::new(),
    ));
    out.push(sync());
    // Lanes past the warps' results add 0 to a sum, and take the first
    // warp's result again in a minimum or maximum.
    let identity = match tree.combine {
        Combine::Sum => int(0),
        Combine::Call { .. } => elem(int(0)),
    };
    let mut first = vec![ast_util::assign(
        ident(&v),
        expr(ExprKind::Cond(
            Box::new(bin(BinOp::Lt, tid.clone(), warps)),
            Box::new(elem(tid.clone())),
            Box::new(identity),
        )),
    )];
    first.extend(shuffles(&tree.combine, &v));
    first.push(store_first(tree, &v));
    out.push(if_else(
        bin(BinOp::Lt, tid.clone(), int(32)),
        first,
        Vec::new(),
    ));
    out.push(sync());
    splice(f, at, 1, out)
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

/// Whether the elements are integers, whose sums (wrapping around),
/// minima and maxima do not depend on the order.
fn is_integer(t: Scalar) -> bool {
    matches!(t, Scalar::I32 | Scalar::U32 | Scalar::I64 | Scalar::U64)
}

/// `blockDim.x`.
fn block_dim_x() -> Expr {
    expr(ExprKind::Member {
        base: Box::new(ident("blockDim")),
        field: "x".into(),
        arrow: false,
    })
}

#[cfg(test)]
mod tests;
