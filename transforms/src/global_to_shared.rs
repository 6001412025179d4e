//! Global to shared memory (COpPER §5.2): a global array a block reads
//! (or writes) within a fixed-size segment is copied into a `__shared__`
//! buffer once, cooperatively, and read from there.
//!
//! Per array parameter: the per-block index range of every access comes
//! from the analysis ([`copper::bound::Prepared::index_bounds`]); the array
//! qualifies when one segment `[lo, lo + len)` covers them all with `len` a
//! constant (the block size is fixed), its element type is a scalar, it is
//! used only as `a[index]`, and the copy provably reads only elements the
//! kernel itself may read: the accesses share a bound guard (`k < n`,
//! `k >= 0`, with `n` not just the segment's own end) that guards the
//! copy, or one access reads `a[lo + t]` for
//! every thread `t` under conditions on the parameters alone, which then
//! guard the copy. A written array also needs writes that are each a
//! thread's own element, segments that do not overlap between blocks, and
//! no `return` (the write-back at the end must be reached by every
//! thread).
//!
//! Generated code, at the start of the kernel:
//! ```c
//! const int A_lo = 256 * blockIdx.x;      // the segment
//! const int A_len = 256;
//! __shared__ int A_sh[A_len];
//! for (int k = threadIdx.x; k < A_len; k += 256) {
//!     if (guard) { A_sh[k] = A[A_lo + k]; }
//! }
//! __syncthreads();
//! ```
//! then every `A[e]` becomes `A_sh[e - A_lo]`, and for a written array a
//! barrier and the reverse copy end the kernel. One candidate per subset
//! of qualifying arrays.

use copper::launch::Dims;
use std::collections::BTreeSet;

use copper::cuda::ast::{
    BaseType, BinOp, Expr, ExprKind, Function, NodeId, Stmt, StmtKind, Type, UnOp,
};
use copper::poly::{Poly, Rational};

use crate::ast_util::{self, bin, block, expr, fresh, ident, int, stmt, Effects};
use crate::shared_budget;
use crate::{overlap, Candidate, Context, Proposals, Refusal, Skip, Transform};

/// Most subsets of arrays tried.
const MAX_SUBSETS: usize = 15;
/// Largest buffer, in bytes, per array.
const MAX_BYTES: u64 = 16 * 1024;

/// Global to shared memory.
pub struct GlobalToShared;

impl Transform for GlobalToShared {
    fn name(&self) -> &'static str {
        "global to shared"
    }

    fn propose(&self, cx: &Context) -> Proposals {
        let block = match cx.fixed_block(": a shared buffer needs a fixed size") {
            Ok(block) => block,
            Err(why) => return Proposals::refused(cx.function.meta.span, why),
        };
        let mut out = Proposals::default();
        let mut plans = Vec::new();
        for p in &cx.function.params {
            if !p.ty.is_pointer() || p.ty.pointers.len() != 1 || !p.dims.is_empty() {
                continue;
            }
            match plan(cx, &p.name, &p.ty, block) {
                Ok(pl) => plans.push(pl),
                Err(why) => out.skipped.push(Skip {
                    span: p.meta.span,
                    reason: format!("`{}` stays in global memory: {why}", p.name),
                }),
            }
        }
        let n = plans.len().min(4);
        if plans.len() > n {
            out.skipped.push(Skip {
                span: cx.function.meta.span,
                reason: format!(
                    "{} arrays qualify; only subsets of the first {n} are tried",
                    plans.len()
                ),
            });
        }
        if plans.is_empty() {
            return out;
        }
        let used = shared_budget::in_use(cx, "a buffer");
        let mut subsets: Vec<Vec<usize>> = (1u32..(1 << n))
            .map(|m| (0..n).filter(|i| m & (1 << i) != 0).collect())
            .collect();
        subsets.sort_by_key(|s: &Vec<usize>| s.len());
        subsets.truncate(MAX_SUBSETS);
        for subset in subsets {
            let chosen: Vec<&Plan> = subset.iter().map(|&i| &plans[i]).collect();
            let bytes: u64 = chosen.iter().map(|p| p.len * p.elem_bytes).sum();
            if bytes > 3 * MAX_BYTES {
                continue;
            }
            if let Some(why) = used.refusal("its buffer", bytes) {
                if let [p] = chosen.as_slice() {
                    out.skipped.push(Skip {
                        span: cx.function.meta.span,
                        reason: format!("`{}` stays in global memory: {why}", p.array),
                    });
                }
                continue;
            }
            let description = chosen
                    .iter()
                    .map(|p| {
                        format!(
                            "moved `{}` into shared memory ({} elements per block, copied in at the start{})",
                            p.array,
                            p.len,
                            if p.written { ", written back at the end" } else { "" }
                        )
                    })
                    .collect::<Vec<_>>()
                    .join("; ");
            let function = rewrite(cx.function, &chosen, block);
            let c = Candidate {
                fixes_block_size: true,
                ..Candidate::new(self.name(), function, description)
            };
            // Its copy reads early what the kernel writes through another
            // pointer; a copy written back stores late what others read.
            let effects = Effects::of(&cx.function.body);
            let pairs: Vec<(String, String)> = chosen
                .iter()
                .flat_map(|p| {
                    let late = effects.array_reads.iter().filter(|_| p.written);
                    (effects.array_writes.iter().chain(late)).map(|o| (p.array.clone(), o.clone()))
                })
                .collect();
            let why = (
                "no array moves into shared memory",
                "the kernel writes one of them while the copy reads the other",
            );
            overlap::offer(cx, c, &pairs, &mut out, cx.function.meta.span, why);
        }
        out
    }
}

/// How one array moves.
struct Plan {
    array: String,
    elem: Type,
    elem_bytes: u64,
    /// First index of the segment, over blockIdx and the parameters.
    lo: Expr,
    /// Elements in the segment.
    len: u64,
    /// Conditions on the global index `lo + k` (written as a function of
    /// an expression) under which the copy may read it.
    guards: Vec<Guard>,
    /// Conditions on the parameters alone under which the copy runs.
    when: Vec<Expr>,
    written: bool,
}

/// A bound on the global index the copy reads.
enum Guard {
    /// `index >= 0`
    NonNegative,
    /// `index <= e`
    AtMost(Expr),
}

fn plan(cx: &Context, name: &str, ty: &Type, block: Dims) -> Result<Plan, Refusal> {
    if !crate::check::copyable(&ty.base) {
        return Err("its element type is not a scalar".into());
    }
    plan_scalar(cx, name, ty, block)
}

fn plan_scalar(cx: &Context, name: &str, ty: &Type, block: Dims) -> Result<Plan, Refusal> {
    let uses = ast_util::array_uses(cx.function, name)?;
    if uses.is_empty() {
        return Err("the kernel does not access it".into());
    }
    let array = cx
        .kernel
        .arrays
        .iter()
        .position(|a| a.name == name && a.param.is_some())
        .ok_or("copper cannot follow it")?;
    let sites: Vec<usize> = (0..cx.kernel.sites.len())
        .filter(|&s| cx.kernel.sites[s].array == array)
        .collect();
    // Every access of the array must be one of the `a[e]` found in the
    // kernel's own body (not in an inlined device function).
    let ours: BTreeSet<usize> = uses.iter().flat_map(|e| cx.sites_of(e)).collect();
    if sites.iter().any(|s| !ours.contains(s)) {
        return Err("a device function accesses it".into());
    }
    let written = sites.iter().any(|&s| cx.kernel.sites[s].is_write);
    let mut lows: Vec<Vec<Poly>> = Vec::new();
    let mut highs: Vec<Vec<Poly>> = Vec::new();
    for &s in &sites {
        let b = cx.analysis.index_bounds(s).ok_or_else(|| {
            format!(
                "the index at line {} is not linear",
                cx.line(cx.kernel.sites[s].span)
            )
        })?;
        lows.push(b.lower);
        highs.push(b.upper);
    }
    let (lo_poly, len) = segment(&lows, &highs)?;
    let threads: u64 = block.count();
    let in_loop = uses.iter().any(|u| in_a_loop(&cx.function.body, u.meta.id));
    if uses.len() < 2 && !in_loop && len <= threads {
        return Err("each thread accesses it once: there is nothing to reuse".into());
    }
    let elem_bytes = ty.base.size_bytes().ok_or("its element size is unknown")? as u64;
    if len * elem_bytes > MAX_BYTES {
        return Err(format!(
            "its segment of {len} elements does not fit a buffer of {MAX_BYTES} bytes"
        )
        .into());
    }
    let lo =
        poly_expr(&lo_poly).ok_or("its segment start is not a C expression copper can write")?;
    let (guards, when) = copy_guards(cx, &uses, &sites, &lows, &highs, &lo_poly, len, block)?;
    if written {
        written_ok(cx, &sites, &lo_poly, len, threads)?;
    }
    Ok(Plan {
        array: name.to_string(),
        elem: ty.base_only(),
        elem_bytes,
        lo,
        len,
        guards,
        when,
        written,
    })
}

/// The shortest segment `[lo, lo + len)` with `len` a constant that holds
/// every access: each access's index is at least every one of its lower
/// bounds and at most every one of its upper bounds, so measuring them all
/// from one base form (a lower bound of some access) bounds the segment.
fn segment(lows: &[Vec<Poly>], highs: &[Vec<Poly>]) -> Result<(Poly, u64), Refusal> {
    let mut best: Option<(Poly, u64)> = None;
    for base in lows.iter().flatten() {
        let off = |p: &Poly| (p.clone() - base.clone()).as_constant();
        let lo = lows
            .iter()
            .map(|ls| ls.iter().filter_map(off).max())
            .collect::<Option<Vec<_>>>()
            .and_then(|v| v.into_iter().min());
        let hi = highs
            .iter()
            .map(|hs| hs.iter().filter_map(off).min())
            .collect::<Option<Vec<_>>>()
            .and_then(|v| v.into_iter().max());
        let (Some(lo), Some(hi)) = (lo, hi) else {
            continue;
        };
        if !lo.is_integer() || !hi.is_integer() || hi < lo {
            continue;
        }
        let Ok(len) = u64::try_from((hi - lo).num() + 1) else {
            continue;
        };
        if best.as_ref().is_none_or(|(_, l)| len < *l) {
            best = Some((base.clone() + Poly::constant(lo), len));
        }
    }
    best.ok_or_else(|| {
        "no segment of constant length holds its accesses (their index bounds differ by more than a constant)".into()
    })
}

/// What keeps the copy from reading elements the kernel may not: the
/// bound guards every access shares (`k >= 0`, `k < n` with `n` a length
/// the kernel respects), or one access that reads each thread's own
/// element under conditions on the parameters alone. A segment fixed by
/// constants is no proof: the kernel may read less of it (`if (s <
/// window_size)`), and the array may be exactly that short.
#[allow(clippy::too_many_arguments)]
fn copy_guards(
    cx: &Context,
    uses: &[Expr],
    sites: &[usize],
    lows: &[Vec<Poly>],
    highs: &[Vec<Poly>],
    lo: &Poly,
    len: u64,
    block: Dims,
) -> Result<(Vec<Guard>, Vec<Expr>), Refusal> {
    let mut guards = Vec::new();
    let launch_only = |p: &Poly| {
        p.terms()
            .all(|(m, c)| c >= Rational::ZERO && m.factors().all(|(v, _)| is_launch_builtin(v)))
    };
    if !launch_only(lo) {
        let c = lows
            .iter()
            .map(|ls| ls.iter().filter_map(Poly::as_constant).max())
            .collect::<Option<Vec<_>>>()
            .and_then(|v| v.into_iter().min());
        match c {
            Some(c) if c >= Rational::ZERO => guards.push(Guard::NonNegative),
            _ => {
                return Err(
                    "its segment may start below 0 and its accesses are not guarded by `>= 0`"
                        .into(),
                )
            }
        }
    }
    // The same bound on every access: `k < n` for all, a length the
    // kernel respects. It must name a parameter the segment's start does
    // not account for (a bound that is the segment's own end, `k <= 2559`
    // from `threadIdx.x * 10 + i`, says nothing about how long the array
    // is), and hold every access at the same offset (with `a[i]` and
    // `a[i + 1]` under `i < n`, `a[n]` is read only when the thread with
    // `i = n - 1` takes the second access: `n` is no length).
    let shared_high = highs[0]
        .iter()
        .filter(|h| !h.variables().iter().any(|v| is_launch_builtin(v)))
        .filter(|h| ((*h).clone() - lo.clone()).as_constant().is_none())
        .filter_map(|h| {
            let offsets = highs
                .iter()
                .map(|hs| {
                    hs.iter()
                        .filter_map(|p| (p.clone() - h.clone()).as_constant())
                        .min()
                })
                .collect::<Option<Vec<_>>>()?;
            let off = *offsets.first()?;
            offsets
                .iter()
                .all(|o| *o == off)
                .then(|| h.clone() + Poly::constant(off))
        })
        .next();
    match shared_high {
        Some(h) => {
            let e =
                poly_expr(&h).ok_or("its bound guard is not a C expression copper can write")?;
            guards.push(Guard::AtMost(e));
            let when = guarded_covering_access(cx, uses, lo, len, block)?;
            Ok((guards, when))
        }
        None => {
            let when = covering_access(cx, sites, lo, len, block)?;
            Ok((guards, when))
        }
    }
}

/// `blockIdx`, `blockDim` or `gridDim` (nonnegative, fixed per block).
fn is_launch_builtin(v: &str) -> bool {
    ["blockIdx.", "blockDim.", "gridDim."]
        .iter()
        .any(|b| v.starts_with(b))
}

/// A written array moves only when the write-back cannot clobber what
/// other threads wrote: each lane writes its own element, blocks' segments
/// do not overlap, and every thread reaches the write-back.
fn written_ok(
    cx: &Context,
    sites: &[usize],
    lo: &Poly,
    len: u64,
    threads: u64,
) -> Result<(), Refusal> {
    let writes = sites.iter().filter(|&&s| cx.kernel.sites[s].is_write);
    if writes.clone().any(|&s| !cx.analysis.lane_injective(s)) {
        return Err("lanes of a warp may write the same element".into());
    }
    let stride = lo.coefficient(&copper::poly::Monomial::var("blockIdx.x"));
    let other_dims = lo
        .variables()
        .iter()
        .any(|v| is_launch_builtin(v) && v != "blockIdx.x");
    if other_dims || stride < Rational::int(len as i128) {
        return Err("it is written and the blocks' segments may overlap".into());
    }
    if len > threads * 64 {
        return Err("its segment is too long to write back".into());
    }
    if ast_util::returns(&cx.function.body) {
        return Err(
            "it is written and the kernel returns early: the write-back would be skipped".into(),
        );
    }
    Ok(())
}

/// Whether the expression `node` sits inside a loop of `stmts`.
fn in_a_loop(stmts: &[Stmt], node: NodeId) -> bool {
    let mut found = false;
    for s in stmts {
        ast_util::visit_stmts(s, &mut |x| {
            if let StmtKind::For { .. } | StmtKind::While { .. } | StmtKind::DoWhile { .. } = x.kind
            {
                ast_util::visit_stmt_exprs(x, &mut |e| found |= e.meta.id == node);
            }
        });
    }
    found
}

/// Conditions on the parameters under which one access reads `a[lo + t]`
/// for every thread `t` of the block: the access is reached by every
/// thread whenever enclosing loops whose first test only involves
/// parameters and constants run.
fn covering_access(
    cx: &Context,
    sites: &[usize],
    lo: &Poly,
    len: u64,
    block: Dims,
) -> Result<Vec<Expr>, Refusal> {
    let threads: u64 = block.count();
    let why = "nothing shows the copy reads only elements the kernel reads (no guard like `k < n` on every access, and no access reading each thread's own element)";
    if len != threads || block[1] != 1 || block[2] != 1 {
        return Err(why.into());
    }
    let params = unassigned_params(cx.function);
    for &s in sites {
        if cx.kernel.sites[s].is_write {
            continue;
        }
        // index = lo + threadIdx.x exactly.
        let Some(b) = cx.analysis.index_bounds(s) else {
            continue;
        };
        if !b.lower.contains(lo) || !reads_own_element(cx, s) {
            continue;
        }
        if let Some(conds) = path_conditions(&cx.function.body, cx.kernel.sites[s].node, &params) {
            return Ok(conds);
        }
    }
    Err(why.into())
}

/// The bound guard is a length the kernel respects, not proof that the
/// copy reads only elements the kernel reads: one read must reach every
/// element of the segment the guards allow. It reads each thread's own
/// element (`a[lo + threadIdx.x + …]`), spans the whole segment by
/// itself, and is reached by every thread, in every iteration of the
/// loops around it, under loops' first tests over parameters (which then
/// guard the copy) and `if`s that only bound its index (`if (k < n)`,
/// the copy's own guards). Its conditions on the parameters are returned.
fn guarded_covering_access(
    cx: &Context,
    uses: &[Expr],
    lo: &Poly,
    len: u64,
    block: Dims,
) -> Result<Vec<Expr>, Refusal> {
    let threads: u64 = block.count();
    let why = "no read reaches every element its copy would read (a read of each thread's own element, under no condition but bounds on its index)";
    // Consecutive threads' spans overlap or touch only when the segment
    // is at most twice the block.
    if block[1] != 1 || block[2] != 1 || len > 2 * threads {
        return Err(why.into());
    }
    let params = unassigned_params(cx.function);
    for u in uses {
        let ExprKind::Index(_, index) = &u.kind else {
            continue;
        };
        for s in cx.sites_of(u) {
            if cx.kernel.sites[s].is_write {
                continue;
            }
            let Some(b) = cx.analysis.index_bounds(s) else {
                continue;
            };
            let own_element = reads_own_element(cx, s);
            let end = lo.clone() + Poly::constant(Rational::int(len as i128 - 1));
            if !own_element || !b.lower.contains(lo) || !b.upper.contains(&end) {
                continue;
            }
            let path = PathRule {
                params: &params,
                index_bounds_of: Some(index),
            };
            if let Some(conds) = path.conditions(&cx.function.body, u.meta.id) {
                return Ok(conds);
            }
        }
    }
    Err(why.into())
}

/// The value of a comparison of two constants (`0 < 7`), if it is one.
fn constant_test(e: &Expr) -> Option<bool> {
    let ExprKind::Binary(op, a, b) = &e.kind else {
        return None;
    };
    let (x, y) = (ast_util::const_value(a)?, ast_util::const_value(b)?);
    match op {
        BinOp::Lt => Some(x < y),
        BinOp::Le => Some(x <= y),
        BinOp::Gt => Some(x > y),
        BinOp::Ge => Some(x >= y),
        BinOp::Eq => Some(x == y),
        BinOp::Ne => Some(x != y),
        _ => None,
    }
}

/// Parameters the kernel never assigns: a test over them means the same
/// at the kernel's start as where the kernel makes it.
fn unassigned_params(f: &Function) -> BTreeSet<String> {
    let assigned = Effects::of(&f.body).writes;
    f.params
        .iter()
        .map(|p| p.name.clone())
        .filter(|p| !assigned.contains(p))
        .collect()
}

/// Whether access `site` reads each thread's own element: its index is
/// `threadIdx.x` plus the same value in every thread.
fn reads_own_element(cx: &Context, site: usize) -> bool {
    use copper::absint::deps::{Coef, Dep};
    matches!(
        cx.analysis.index_dep(site),
        Dep::Affine([Coef::Known(1), Coef::Known(0), Coef::Known(0)], _)
    )
}

/// Whether `cond` only bounds `index`: a conjunction of comparisons with
/// `index` on one side.
fn bounds_only(cond: &Expr, index: &Expr) -> bool {
    match &cond.kind {
        ExprKind::Binary(BinOp::And, a, b) => bounds_only(a, index) && bounds_only(b, index),
        ExprKind::Binary(BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge, a, b) => {
            **a == *index || **b == *index
        }
        _ => false,
    }
}

/// The conditions under which the expression `node` is evaluated, when
/// they are first tests of enclosing `for` loops over parameters and
/// constants (`0 < h` for `for (j = 0; j < h; …)`); `None` when some
/// enclosing construct is anything else, a statement before it may jump
/// away, or the expression itself is evaluated conditionally (`?:`, `&&`).
fn path_conditions(stmts: &[Stmt], node: NodeId, params: &BTreeSet<String>) -> Option<Vec<Expr>> {
    PathRule {
        params,
        index_bounds_of: None,
    }
    .conditions(stmts, node)
}

/// What [`path_conditions`] accepts on the way to an expression.
struct PathRule<'a> {
    /// Parameters the kernel never assigns.
    params: &'a BTreeSet<String>,
    /// Also `if`s that only bound this index (their then-branch), inside
    /// loops that never jump (every iteration runs).
    index_bounds_of: Option<&'a Expr>,
}

impl PathRule<'_> {
    fn conditions(&self, stmts: &[Stmt], node: NodeId) -> Option<Vec<Expr>> {
        fn contains(s: &Stmt, node: NodeId) -> bool {
            let mut found = false;
            ast_util::visit_stmt_exprs(s, &mut |e| found |= e.meta.id == node);
            found
        }
        let at = stmts.iter().position(|s| contains(s, node))?;
        if Effects::of(&stmts[..at]).jumps {
            return None;
        }
        let s = &stmts[at];
        match &s.kind {
            StmtKind::Expr(e) => ast_util::unconditional_in(e, node).then(Vec::new),
            StmtKind::Decl(ds) => ds
                .iter()
                .filter_map(|d| match &d.init {
                    Some(copper::cuda::ast::Init::Expr(e)) => Some(e),
                    _ => None,
                })
                .any(|e| ast_util::unconditional_in(e, node))
                .then(Vec::new),
            StmtKind::Block(b) => self.conditions(b, node),
            StmtKind::If { cond, then, .. } => {
                let index = self.index_bounds_of?;
                if !bounds_only(cond, index) || !contains(then, node) {
                    return None;
                }
                self.conditions(&ast_util::branch_stmts(then), node)
            }
            StmtKind::For {
                init,
                cond,
                step,
                body,
            } => {
                let first =
                    ast_util::loop_first_test(init.as_deref(), cond.as_ref(), step.as_ref(), body)?;
                // Evaluated where the copy is, at the kernel's start: it may
                // only read parameters the kernel never assigns.
                let mut only_params = true;
                ast_util::visit_expr(&first, &mut |x| match &x.kind {
                    ExprKind::Ident(n) => only_params &= self.params.contains(n),
                    ExprKind::Int { .. } | ExprKind::Binary(..) | ExprKind::Unary(UnOp::Neg, _) => {
                    }
                    _ => only_params = false,
                });
                if !only_params {
                    return None;
                }
                let body_stmts = ast_util::branch_stmts(body);
                if self.index_bounds_of.is_some() && Effects::of(&body_stmts).jumps {
                    return None;
                }
                let mut inner = self.conditions(&body_stmts, node)?;
                match constant_test(&first) {
                    // `0 < MASK_WIDTH`: always runs, nothing to test.
                    Some(true) => {}
                    Some(false) => return None,
                    None => inner.insert(0, first),
                }
                Some(inner)
            }
            _ => None,
        }
    }
}

/// A polynomial with integer coefficients over parameters and builtins as
/// a C expression.
fn poly_expr(p: &Poly) -> Option<Expr> {
    let mut acc: Option<Expr> = None;
    for (m, c) in p.terms() {
        if !c.is_integer() {
            return None;
        }
        let k = c.num();
        let mut term: Option<Expr> = None;
        for (v, e) in m.factors() {
            for _ in 0..e {
                let x = var_expr(v)?;
                term = Some(match term {
                    Some(t) => bin(BinOp::Mul, t, x),
                    None => x,
                });
            }
        }
        let mag = int(k.unsigned_abs() as u64);
        let value = match term {
            Some(t) if k.abs() == 1 => t,
            Some(t) => bin(BinOp::Mul, mag, t),
            None => mag,
        };
        acc = Some(match acc {
            None if k < 0 => expr(ExprKind::Unary(UnOp::Neg, Box::new(value))),
            None => value,
            Some(a) if k < 0 => bin(BinOp::Sub, a, value),
            Some(a) => bin(BinOp::Add, a, value),
        });
    }
    Some(acc.unwrap_or_else(|| int(0)))
}

fn var_expr(name: &str) -> Option<Expr> {
    match name.split_once('.') {
        Some((base, field)) if ["blockIdx", "blockDim", "gridDim"].contains(&base) => {
            Some(expr(ExprKind::Member {
                base: Box::new(ident(base)),
                field: field.to_string(),
                arrow: false,
            }))
        }
        None if name.chars().all(|c| c.is_alphanumeric() || c == '_') => Some(ident(name)),
        _ => None,
    }
}

/// The kernel with the arrays of `plans` in shared memory.
fn rewrite(f: &Function, plans: &[&Plan], shape: Dims) -> Function {
    let mut f = f.clone();
    let mut taken = ast_util::names_in(&f);
    let threads: u64 = shape.count();
    let tid = ast_util::linear_tid(shape);
    let mut prologue = Vec::new();
    let mut epilogue = Vec::new();
    let mut renames = Vec::new();
    for p in plans {
        let lo_name = fresh(&format!("{}_lo", p.array), &mut taken);
        let len_name = fresh(&format!("{}_len", p.array), &mut taken);
        let sh_name = fresh(&format!("{}_sh", p.array), &mut taken);
        let k_name = fresh("k", &mut taken);
        let int_ty = |is_const| Type {
            is_const,
            ..Type::scalar(BaseType::Int)
        };
        prologue.push(ast_util::decl(int_ty(true), &lo_name, Some(p.lo.clone())));
        prologue.push(ast_util::decl(int_ty(true), &len_name, Some(int(p.len))));
        prologue.push(ast_util::shared_decl(
            p.elem.clone(),
            &sh_name,
            vec![ident(&len_name)],
        ));
        let global = |k: &str| bin(BinOp::Add, ident(&lo_name), ident(k));
        let index = |arr: &str, i: Expr| expr(ExprKind::Index(Box::new(ident(arr)), Box::new(i)));
        let guard = |k: &str| {
            p.guards
                .iter()
                .map(|g| match g {
                    Guard::NonNegative => bin(BinOp::Ge, global(k), int(0)),
                    Guard::AtMost(e) => bin(BinOp::Le, global(k), e.clone()),
                })
                .reduce(|a, b| bin(BinOp::And, a, b))
        };
        let copy = |to: Expr, from: Expr, k: &str| {
            let assign = stmt(StmtKind::Expr(expr(ExprKind::Assign(
                None,
                Box::new(to),
                Box::new(from),
            ))));
            let body = match guard(k) {
                Some(g) => ast_util::if_else(g, vec![assign], Vec::new()),
                None => assign,
            };
            stmt(StmtKind::For {
                init: Some(Box::new(ast_util::decl(
                    Type::scalar(BaseType::Int),
                    k,
                    Some(tid.clone()),
                ))),
                cond: Some(bin(BinOp::Lt, ident(k), ident(&len_name))),
                step: Some(expr(ExprKind::Assign(
                    Some(BinOp::Add),
                    Box::new(ident(k)),
                    Box::new(int(threads)),
                ))),
                body: Box::new(block(vec![body])),
            })
        };
        let when = |s: Stmt| match p.when.iter().cloned().reduce(|a, b| bin(BinOp::And, a, b)) {
            Some(c) => ast_util::if_else(c, vec![s], Vec::new()),
            None => s,
        };
        let copy_in = copy(
            index(&sh_name, ident(&k_name)),
            index(&p.array, global(&k_name)),
            &k_name,
        );
        prologue.push(when(copy_in));
        if p.written {
            let copy_out = copy(
                index(&p.array, global(&k_name)),
                index(&sh_name, ident(&k_name)),
                &k_name,
            );
            epilogue.push(when(copy_out));
        }
        renames.push((p.array.clone(), sh_name, lo_name));
    }
    prologue.push(ast_util::sync());
    for s in f.body.iter_mut() {
        redirect_stmt(s, &renames);
    }
    let mut body = prologue;
    body.append(&mut f.body);
    if !epilogue.is_empty() {
        body.push(ast_util::sync());
        body.extend(epilogue);
    }
    f.body = body;
    f
}

/// `a[e]` → `a_sh[e - a_lo]` for every moved array.
fn redirect_stmt(s: &mut Stmt, renames: &[(String, String, String)]) {
    ast_util::visit_stmt_roots_mut(s, &mut |e| redirect(e, renames));
}

fn redirect(e: &mut Expr, renames: &[(String, String, String)]) {
    if let ExprKind::Index(base, index) = &mut e.kind {
        if let ExprKind::Ident(n) = &base.kind {
            if let Some((_, sh, lo)) = renames.iter().find(|(a, _, _)| a == n) {
                redirect(index, renames);
                let shifted = bin(BinOp::Sub, (**index).clone(), ident(lo));
                **base = ident(sh);
                **index = shifted;
                return;
            }
        }
    }
    for c in ast_util::children_mut(e) {
        redirect(c, renames);
    }
}

#[cfg(test)]
mod tests;
