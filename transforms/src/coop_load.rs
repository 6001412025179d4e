//! Cooperative loads of a block-uniform range: a loop that every thread
//! of a block runs over the same constant range `v = S … E-1`, reading
//! `a[v + c]` with `c` the same in every thread (a weight vector, a
//! filter, a row every thread walks), reads the same `E - S` elements in
//! every thread. The whole block copies them into a `__shared__` buffer
//! once, coalesced, before the code that holds the loop, waits at one
//! barrier, and the loop reads the buffer:
//!
//! ```c
//! __shared__ float w_sh[64];
//! for (int w_k = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
//!      w_k < 64; w_k += blockDim.x * blockDim.y * blockDim.z) {
//!     w_sh[w_k] = w[w_k + c];          // `a[v + c]` at v = S + w_k
//! }
//! __syncthreads();
//! … for (int k = 0; k < 64; k++) { … w_sh[k] … }
//! ```
//!
//! The copy uses the flat thread index and the block's thread count, so it
//! is right for every block shape; it needs no known block.
//!
//! Where the barrier goes: at the top level of the kernel body, before
//! the first statement that holds a `return` or the loop, so every thread
//! of the block reaches it. When a thread may not reach the loop (the loop
//! sits in `if`s, or `if (c) return;` statements come first), the
//! conditions under which it does are evaluated at that point into a flag
//! and the block copies only when some thread has it set
//! (a `__shared__` flag cleared by the first thread, set by the threads
//! that reach the loop, between two barriers), so the copy never reads an
//! element the original kernel does not read.
//!
//! Proof that results are bit-identical: a thread that reaches the loop
//! runs all its iterations (constant bounds, no `break`, `continue` or
//! `return` in the body, the counter not assigned) and reads `a[v + c]`
//! unconditionally in each, so the block's threads read exactly the
//! elements `S + c … E - 1 + c` when one of them reaches the loop, which is
//! when the copy runs. The array is never written in the kernel, and is
//! proved apart from every array the kernel writes (or declared
//! `__restrict__` in the diff, see [`crate::overlap`]), so the copy holds
//! the values the original reads later; each thread then reads the same
//! values in the same order, and computes the same results.
//!
//! What qualifies, all checked syntactically: a pointer parameter of a
//! scalar type, only read, only as `a[index]`; the loop is
//! `for (T v = S; v < E; v++)` with `S` and `E` integer constants (macros
//! included) and the body reads the array at one offset `c` built from
//! constants, launch builtins and parameters never assigned; the path
//! from the kernel body to the loop has only blocks and `if`s (the loop not
//! in an `else`) with side-effect free conditions that read no name the
//! statements between the barrier and the loop assign or declare; those
//! statements have no `break`, `continue` or `return`, except whole
//! statements `if (c) return;` at the top level. The buffers and the
//! kernel's other static shared arrays fit in 48 KiB, beside the dynamic
//! shared memory its launches in the file ask for
//! ([`crate::shared_budget`]). A length that is a
//! kernel parameter (dynamic shared memory sized at the launch) is refused.

use std::collections::BTreeSet;

use copper::cuda::ast::{
    BaseType, BinOp, Expr, ExprKind, Function, NodeId, Stmt, StmtKind, Type, UnOp,
};

use crate::ast_util::{
    self, bin, block, expr, fresh, ident, if_else, index, int, is_pure, stmt, sync, Effects,
};
use crate::shared_budget;
use crate::tiled_shared::{contains, loop_body, replace_reads, Header, Staging, Tile};
use crate::{overlap, Candidate, Context, Proposals, Refusal, Skip, Transform};

/// Most arrays of one loop combined into candidates.
const MAX_ARRAYS: usize = 3;

/// Cooperative loads of a block-uniform range.
pub struct CooperativeLoad;

impl Transform for CooperativeLoad {
    fn name(&self) -> &'static str {
        "cooperative load"
    }

    fn propose(&self, cx: &Context) -> Proposals {
        let f = cx.function;
        let mut out = Proposals::default();
        let Staging {
            effects,
            arrays: readonly,
            fixed,
            loops,
        } = Staging::of(f);
        if readonly.is_empty() {
            return out;
        }
        let used = shared_budget::in_use(cx, "the buffer");
        for l in &loops {
            let line = cx.line(l.meta.span);
            let body = loop_body(l);
            let read_here = Effects::of(&body).array_reads;
            let arrays: Vec<_> = readonly
                .iter()
                .copied()
                .filter(|p| read_here.contains(&p.name))
                .collect();
            if arrays.is_empty() {
                continue;
            }
            let left_alone = format!("the loop at line {line} keeps its global reads");
            let refuse = |out: &mut Proposals, why: Refusal| {
                out.skipped.push(Skip {
                    span: l.meta.span,
                    reason: format!("{left_alone}: {why}"),
                })
            };
            let (header, r) = match range(l, &fixed) {
                Ok((h, r)) => (h, r),
                Err(why) => {
                    refuse(&mut out, why);
                    continue;
                }
            };
            let len = r.len();
            let place = match Place::of(&f.body, l.meta.id) {
                Ok(p) => p,
                Err(why) => {
                    refuse(&mut out, why);
                    continue;
                }
            };
            let mut loads = Vec::new();
            for p in arrays {
                let bytes = u64::from(p.ty.base.size_bytes().unwrap_or(u32::MAX)) * r.buffer();
                let too_much = used
                    .refusal(&format!("a buffer of {} elements", r.buffer()), bytes)
                    .map(|w| match used.is_known() {
                        true => format!("{w} (copying in chunks is not done)"),
                        false => w,
                    });
                let plan = match too_much {
                    Some(why) => Err(why.into()),
                    None => Tile::of(&p.name, &p.ty, &header, &body, &fixed),
                };
                match plan {
                    Ok(t) => loads.push((t, bytes)),
                    Err(why) => out.skipped.push(Skip {
                        span: p.meta.span,
                        reason: format!(
                            "`{}` is not loaded cooperatively for the loop at line {line}: {why}",
                            p.name
                        ),
                    }),
                }
            }
            loads.truncate(MAX_ARRAYS);
            for mask in 1u32..(1 << loads.len()) {
                let chosen: Vec<&Tile> = (0..loads.len())
                    .filter(|i| mask & (1 << i) != 0)
                    .map(|i| &loads[i].0)
                    .collect();
                let bytes: u64 = (0..loads.len())
                    .filter(|i| mask & (1 << i) != 0)
                    .map(|i| loads[i].1)
                    .sum();
                if used.refusal("the buffers", bytes).is_some() {
                    continue;
                }
                let function = rewrite(f, l.meta.id, &header, r, &chosen, &place);
                let names: Vec<String> = chosen.iter().map(|t| format!("`{}`", t.array)).collect();
                let description = format!(
                    "loaded the {len} elements of {} that every thread of a block reads in the loop at line {line} into shared memory once, by the whole block, before {}",
                    names.join(" and "),
                    if place.conds.is_empty() { "the code that holds the loop" } else { "the code that holds the loop (when some thread of the block reaches it)" }
                );
                let c = Candidate::new(self.name(), function, description);
                let pairs: Vec<(String, String)> = chosen
                    .iter()
                    .flat_map(|t| {
                        effects
                            .array_writes
                            .iter()
                            .map(|w| (t.array.clone(), w.clone()))
                    })
                    .collect();
                let why = (
                    left_alone.as_str(),
                    "the kernel writes one of them while the shared copy holds the other",
                );
                overlap::offer(cx, c, &pairs, &mut out, l.meta.span, why);
            }
        }
        out
    }
}

/// The constant range `start … end - 1` of a loop's counter, and where
/// its buffer starts: at 0 when the range starts at 0 or above but no
/// further from 0 than it is long (the buffer is indexed by the counter
/// itself, `w_sh[k]`, and its first `start` elements stay unused), at
/// `start` otherwise (`w_sh[k - start]`, `w_sh[k + 4]` from `-4`).
#[derive(Clone, Copy)]
struct Range {
    start: i64,
    end: i64,
    base: i64,
}

impl Range {
    /// Iterations of the loop.
    fn len(self) -> u64 {
        self.end.abs_diff(self.start)
    }

    /// Elements of the buffer.
    fn buffer(self) -> u64 {
        self.end.abs_diff(self.base)
    }
}

/// The value of a constant integer expression that may be negative
/// (`-R`, `-4`).
pub(crate) fn signed_value(e: &Expr) -> Option<i64> {
    match &e.kind {
        ExprKind::Unary(UnOp::Neg, x) => i64::try_from(ast_util::const_value(x)?).ok().map(|v| -v),
        _ => i64::try_from(ast_util::const_value(e)?).ok(),
    }
}

/// The loop's header and its constant range.
fn range(l: &Stmt, fixed: &BTreeSet<String>) -> Result<(Header, Range), Refusal> {
    let h = Header::of(l, fixed)?;
    let (Some(s), Some(e)) = (signed_value(&h.start), signed_value(&h.end)) else {
        return Err(
            "its range is not fixed by constants (a length from a parameter would need dynamic shared memory sized at every launch, which is not done)"
                .into(),
        );
    };
    if e <= s {
        return Err("its range is empty".into());
    }
    let base = if (0..=e - s).contains(&s) { 0 } else { s };
    Ok((
        h,
        Range {
            start: s,
            end: e,
            base,
        },
    ))
}

/// Where the copy goes, and when a thread reaches the loop.
pub(crate) struct Place {
    /// Index of the top-level statement the copy goes before.
    pub(crate) at: usize,
    /// Conditions that all hold, evaluated there, exactly when the thread
    /// reaches the loop.
    pub(crate) conds: Vec<Expr>,
}

impl Place {
    /// The place for the copy of loop `target` in the kernel body `body`.
    pub(crate) fn of(body: &[Stmt], target: NodeId) -> Result<Place, Refusal> {
        let Some(t) = body.iter().position(|s| contains(s, target)) else {
            return Err("copper lost track of the loop".into());
        };
        let at = body[..t]
            .iter()
            .position(|s| ast_util::returns(std::slice::from_ref(s)))
            .unwrap_or(t);
        let mut conds = Vec::new();
        let mut between: Vec<Stmt> = Vec::new();
        for s in &body[at..t] {
            match ast_util::early_exit(s) {
                Some(c) => {
                    conds.push(expr(ExprKind::Unary(UnOp::Not, Box::new(c.clone()))));
                }
                None => between.push(s.clone()),
            }
        }
        let mut level = body[t..].to_vec();
        loop {
            let Some(i) = level.iter().position(|s| contains(s, target)) else {
                return Err("copper lost track of the loop".into());
            };
            between.extend(level[..i].iter().cloned());
            let s = level[i].clone();
            if s.meta.id == target {
                break;
            }
            level = match &s.kind {
                StmtKind::Block(b) => b.clone(),
                StmtKind::If { cond, then, els } => {
                    if els.as_ref().is_some_and(|e| contains(e, target)) {
                        return Err("it sits in the `else` branch of an `if`".into());
                    }
                    conds.push(cond.clone());
                    ast_util::branch_stmts(then)
                }
                StmtKind::For { .. } | StmtKind::While { .. } | StmtKind::DoWhile { .. } => {
                    return Err(
                        "it sits in another loop (one copy before the kernel's code would not cover every iteration)"
                            .into(),
                    )
                }
                _ => return Err("it sits in a `switch`".into()),
            };
        }
        let fx = Effects::of(&between);
        if fx.jumps {
            return Err(Refusal::Jumps {
                what: "the code before it may",
            });
        }
        let mut changed = fx.writes.clone();
        changed.extend(fx.declares.iter().cloned());
        for c in &conds {
            if !is_pure(c) {
                return Err(Refusal::SideEffects {
                    what: "a condition on the way to it",
                });
            }
            let cx = Effects::of(&[stmt(StmtKind::Expr(c.clone()))]);
            if cx.reads.iter().any(|n| changed.contains(n))
                || cx.array_reads.iter().any(|n| fx.array_writes.contains(n))
                || (fx.opaque_calls && !cx.array_reads.is_empty())
            {
                return Err(
                    "a condition on the way to it reads what the code before it computes, so no barrier can go before that code"
                        .into(),
                );
            }
        }
        Ok(Place { at, conds })
    }
}

/// `k + e`, `e - |k|` when `k` is negative, or `e` when `k` is 0.
fn plus(k: i64, e: Expr) -> Expr {
    match k {
        0 => e,
        k if k > 0 => bin(BinOp::Add, int(k.unsigned_abs()), e),
        k => bin(BinOp::Sub, e, int(k.unsigned_abs())),
    }
}

/// `blockDim.f` or `threadIdx.f`.
pub(crate) fn builtin(base: &str, field: &str) -> Expr {
    expr(ExprKind::Member {
        base: Box::new(ident(base)),
        field: field.to_string(),
        arrow: false,
    })
}

/// The kernel with the reads of `loads` in loop `target` served from
/// shared buffers copied at `place`.
fn rewrite(
    f: &Function,
    target: NodeId,
    h: &Header,
    r: Range,
    loads: &[&Tile],
    place: &Place,
) -> Function {
    let mut taken = ast_util::names_in(f);
    let mut copy = Vec::new();
    let mut buffers = Vec::new();
    let tid = bin(
        BinOp::Add,
        builtin("threadIdx", "x"),
        bin(
            BinOp::Mul,
            builtin("blockDim", "x"),
            bin(
                BinOp::Add,
                builtin("threadIdx", "y"),
                bin(
                    BinOp::Mul,
                    builtin("blockDim", "y"),
                    builtin("threadIdx", "z"),
                ),
            ),
        ),
    );
    let threads = bin(
        BinOp::Mul,
        bin(
            BinOp::Mul,
            builtin("blockDim", "x"),
            builtin("blockDim", "y"),
        ),
        builtin("blockDim", "z"),
    );
    for t in loads {
        let buf = fresh(&format!("{}_sh", t.array), &mut taken);
        copy.push(ast_util::shared_decl(
            t.elem.clone(),
            &buf,
            vec![int(r.buffer())],
        ));
        let j = fresh(&format!("{}_k", t.array), &mut taken);
        let at = plus(r.base, ident(&j));
        let mut from = t.index.clone();
        ast_util::replace_expr(&mut from, &ident(&h.var), &at);
        copy.push(stmt(StmtKind::For {
            init: Some(Box::new(ast_util::decl(
                Type::scalar(BaseType::Int),
                &j,
                Some(plus(r.start - r.base, tid.clone())),
            ))),
            cond: Some(bin(BinOp::Lt, ident(&j), int(r.buffer()))),
            step: Some(expr(ExprKind::Assign(
                Some(BinOp::Add),
                Box::new(ident(&j)),
                Box::new(threads.clone()),
            ))),
            body: Box::new(block(vec![ast_util::assign(
                index(&buf, ident(&j)),
                index(&t.array, from),
            )])),
        }));
        buffers.push(buf);
    }
    let mut before = Vec::new();
    if place.conds.is_empty() {
        before.extend(copy);
    } else {
        let (decls, loops): (Vec<Stmt>, Vec<Stmt>) = copy
            .into_iter()
            .partition(|s| matches!(s.kind, StmtKind::Decl(_)));
        before.extend(decls);
        let flag = fresh("coop_active", &mut taken);
        let any = fresh("coop_any", &mut taken);
        let all = place
            .conds
            .iter()
            .cloned()
            .reduce(|a, b| bin(BinOp::And, a, b))
            .unwrap_or_else(|| int(1));
        before.push(ast_util::shared_decl(
            Type::scalar(BaseType::Int),
            &any,
            Vec::new(),
        ));
        before.push(ast_util::decl(
            Type::scalar(BaseType::Bool),
            &flag,
            Some(all),
        ));
        let zero = |axis: &str| bin(BinOp::Eq, builtin("threadIdx", axis), int(0));
        let first = bin(BinOp::And, bin(BinOp::And, zero("x"), zero("y")), zero("z"));
        before.push(if_else(
            first,
            vec![ast_util::assign(ident(&any), int(0))],
            Vec::new(),
        ));
        before.push(sync());
        before.push(if_else(
            ident(&flag),
            vec![ast_util::assign(ident(&any), int(1))],
            Vec::new(),
        ));
        before.push(sync());
        let any = ident(&any);
        before.push(if_else(any, loops, Vec::new()));
    }
    before.push(sync());
    let mut g = f.clone();
    let rest: Vec<Stmt> = f.body[place.at..]
        .iter()
        .map(|s| serve(s, target, h, r.base, loads, &buffers))
        .collect();
    g.body = f.body[..place.at].to_vec();
    g.body.extend(before);
    g.body.extend(rest);
    g
}

/// `s` with the reads of `loads` in loop `target` taken from `buffers`.
fn serve(
    s: &Stmt,
    target: NodeId,
    h: &Header,
    base: i64,
    loads: &[&Tile],
    buffers: &[String],
) -> Stmt {
    let mut s = s.clone();
    let var = ident(&h.var);
    let local = match base {
        0 => var,
        b if b > 0 => bin(BinOp::Sub, var, int(b.unsigned_abs())),
        b => bin(BinOp::Add, var, int(b.unsigned_abs())),
    };
    visit_target_mut(&mut s, target, &mut |l| {
        if let StmtKind::For { body, .. } = &mut l.kind {
            ast_util::visit_stmt_roots_mut(body, &mut |e| {
                for (t, buf) in loads.iter().zip(buffers) {
                    replace_reads(
                        e,
                        &index(&t.array, t.index.clone()),
                        &index(buf, local.clone()),
                    );
                }
            });
        }
    });
    s
}

/// Calls `f` on the statement `target` inside `s`.
pub(crate) fn visit_target_mut(s: &mut Stmt, target: NodeId, f: &mut dyn FnMut(&mut Stmt)) {
    if s.meta.id == target {
        f(s);
        return;
    }
    match &mut s.kind {
        StmtKind::Block(b) => b.iter_mut().for_each(|x| visit_target_mut(x, target, f)),
        StmtKind::If { then, els, .. } => {
            visit_target_mut(then, target, f);
            if let Some(e) = els {
                visit_target_mut(e, target, f);
            }
        }
        StmtKind::For { body, .. }
        | StmtKind::While { body, .. }
        | StmtKind::DoWhile { body, .. } => visit_target_mut(body, target, f),
        _ => {}
    }
}

#[cfg(test)]
mod tests;
