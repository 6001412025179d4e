//! The tiled matrix multiply: a 2-D kernel whose threads each run a
//! reduction loop `for (k = 0; k < K; k++) sum += A[row * K + k] * B[k *
//! N + col];` reads, in every iteration, one element of `A` that depends
//! on the thread's row only and one of `B` that depends on its column
//! only. Threads of one row of the block read the same `A` elements and
//! threads of one column the same `B` elements, so the block can load a
//! square tile of each once, together, and run the tile's iterations from
//! shared memory:
//!
//! ```c
//! __shared__ float A_tile[TILE][TILE];
//! __shared__ float B_tile[TILE][TILE];
//! int row = …, col = …;                      // as written
//! float sum = 0.0f;
//! for (int t = 0; t < K; t += TILE) {
//!     { int k = t + threadIdx.x;
//!       if (row < M && blockIdx.x * TILE < N && k < K)
//!           A_tile[threadIdx.y][threadIdx.x] = A[row * K + k]; }
//!     { int k = t + threadIdx.y;
//!       if (blockIdx.y * TILE < M && col < N && k < K)
//!           B_tile[threadIdx.y][threadIdx.x] = B[k * N + col]; }
//!     __syncthreads();
//!     if (row < M && col < N)
//!         for (int kk = 0; kk < TILE; kk++) {
//!             int k = t + kk;
//!             if (k < K) sum += A_tile[threadIdx.y][kk] * B_tile[kk][threadIdx.x];
//!         }
//!     __syncthreads();
//! }
//! if (row < M && col < N) C[row * N + col] = sum;
//! ```
//!
//! Why it computes the same: call a load of the loop body "row-side"
//! when its index does not depend on `threadIdx.x` (through the kernel's
//! locals) and "column-side" when it does not depend on `threadIdx.y`.
//! Thread `(x, y)` reads the row-side element of iteration `k = t + kk`
//! from `tile[y][kk]`, which thread `(kk, y)` loaded with `k = t + kk`
//! and the same index (it depends on `y` and `k` only); column-side
//! symmetrically. Every thread that passes the guard runs the same
//! statements in the same order, with the same values, as before: the
//! iterations `k < K` in order, each reading the tiles after the barrier
//! that ends their load and before the one that lets the next tile
//! overwrite them. The loads happen exactly for the elements the original
//! reads: a row-side element when some thread of that row passes the
//! guard and `k < K`. The guard is evaluated at `threadIdx.x = 0` for
//! that, which is exact because each of its conjuncts that depends on
//! `threadIdx.x` is `index < bound` with the index `threadIdx.x` plus a
//! non-negative block-uniform sum (true for some thread exactly when true
//! for the first). The barriers are reached by every thread: the tile
//! loop's range is block-uniform and the kernel has no `return`.
//!
//! What qualifies, checked and refused with the reason otherwise: the
//! block is square and flat (`S×S×1`, the tile's side; the kernel
//! otherwise runs the original code under [`crate::block_guard`] when the
//! block is only assumed); the kernel's shape is that of [`shape`], with
//! no shared memory, barrier, `return` or call that may write memory;
//! the tiles fit beside the dynamic shared memory the launches ask for
//! ([`crate::shared_budget`]); the loop is `for (T k = 0; k < K; k++)` with `K` block-uniform, its
//! body has no `break`, `continue` or barrier, assigns no local an index
//! reads and declares none of their names; the tiled loads are `P[i]` of
//! pointer parameters the kernel never writes, evaluated unconditionally
//! in statements the body always runs; and the tiled arrays do not
//! overlap the written ones (proved, or promised in the diff through
//! [`crate::overlap`]).

mod shape;

use std::collections::BTreeSet;

use copper::cuda::ast::{BinOp, Expr, ExprKind, Function, NodeId, Space, Stmt, StmtKind, Type};
use copper::cuda::print;

use crate::ast_util::{
    self, assign, bin, block, decl, expr, fresh, ident, if_else, int, stmt, sync, Effects,
};
use crate::check::copyable;
use crate::shared_budget;
use crate::staged_transpose::tile::side_expr;
use crate::{overlap, Candidate, Context, Proposals, Refusal, Skip, Transform};
use shape::Shape;

/// The tiled matrix multiply.
pub struct TiledMatmul;

impl Transform for TiledMatmul {
    fn name(&self) -> &'static str {
        "tiled matrix multiply"
    }

    fn propose(&self, cx: &Context) -> Proposals {
        let f = cx.function;
        let mut out = Proposals::default();
        if !ast_util::reads_thread_xy(f) || !has_for(f) {
            return out;
        }
        // A kernel of another shape is no matrix multiply: nothing to say.
        if Shape::of(f).is_err_and(|why| why == shape::not_the_shape()) {
            return out;
        }
        let left_alone = "the reduction loop is not tiled";
        match candidate(cx) {
            Ok((c, pairs)) => overlap::offer(
                cx,
                c,
                &pairs,
                &mut out,
                f.meta.span,
                (
                    left_alone,
                    "the kernel writes one of them while the tiles hold the other",
                ),
            ),
            Err(why) => out.skipped.push(Skip {
                span: f.meta.span,
                reason: format!("{left_alone}: {why}"),
            }),
        }
        out
    }
}

fn has_for(f: &Function) -> bool {
    let mut found = false;
    for s in &f.body {
        ast_util::visit_stmts(s, &mut |x| found |= matches!(x.kind, StmtKind::For { .. }));
    }
    found
}

/// Which thread index a tiled load does not depend on.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    /// Not on `threadIdx.x`: the block's rows share it (`A[row * K + k]`).
    Row,
    /// Not on `threadIdx.y`: the block's columns share it
    /// (`B[k * N + col]`).
    Column,
}

impl Side {
    /// The thread index the tile's load walks the loop counter with.
    fn axis(self) -> &'static str {
        match self {
            Side::Row => "x",
            Side::Column => "y",
        }
    }
}

/// One tiled array access (every load of the body with that array and
/// index).
struct Tile {
    /// The array (a pointer parameter).
    array: String,
    /// The index, as written.
    index: Expr,
    /// The loads it replaces.
    loads: Vec<NodeId>,
    side: Side,
    /// The shared tile's name.
    name: String,
    /// Its element type.
    elem: Type,
}

/// The rewritten kernel and the pairs (tiled, written) of arrays it needs
/// apart, or why there is none.
fn candidate(cx: &Context) -> Result<(Candidate, Vec<(String, String)>), Refusal> {
    let f = cx.function;
    let shape = Shape::of(f)?;
    let block = cx.fixed_block(": the tiles are sized from it")?;
    let side = match block.to_array() {
        [x, y, 1] if x == y && x > 1 => x,
        _ => {
            return Err(Refusal::BlockShape {
                block,
                wanted: "square and flat, the shape of a tile",
            })
        }
    };
    let effects = Effects::of(&f.body);
    if effects.sync || effects.opaque_calls {
        return Err("it has a barrier or a call that may write memory".into());
    }
    if ast_util::returns(&f.body) {
        return Err("it has a `return`, and every thread must reach the tiles' barriers".into());
    }
    if uses_shared_or_pointers(f) {
        return Err("it already uses shared memory or a local pointer".into());
    }
    let k = &shape.reduction.var;
    let bound = shape.reduction.bound();
    match shape.dep(bound) {
        Some(d) if !d.x && !d.y && !shape.mentions_counter(bound) => {}
        _ => {
            return Err(format!(
                "the loop bound `{}` is not the same in every thread of the block",
                print::expression(bound)
            )
            .into())
        }
    }
    let hoisted = &shape.decls[shape.decls.len() - shape.hoisted..];
    let mut divides = shape::divides_by_variable(bound);
    for s in hoisted {
        ast_util::visit_stmt_exprs(s, &mut |e| divides |= shape::divides_by_variable(e));
    }
    if shape.guard.is_some() && divides {
        return Err("the loop bound or a declaration inside the guard divides by a variable, which the threads the guard keeps out would then evaluate".into());
    }
    let body = &shape.reduction.body;
    let inside = Effects::of(std::slice::from_ref(body));
    if inside.jumps {
        return Err(Refusal::Jumps {
            what: "the loop body may",
        });
    }
    if inside.writes.contains(k) {
        return Err(format!("the loop body assigns the counter `{k}`").into());
    }
    let mut declared_inside = BTreeSet::new();
    ast_util::visit_stmts(body, &mut |s| {
        if let StmtKind::Decl(ds) = &s.kind {
            declared_inside.extend(ds.iter().map(|d| d.name.clone()));
        }
    });
    if let Some(n) = declared_inside
        .iter()
        .find(|n| shape.fixed.contains_key(*n) || shape.params.contains(*n) || *n == k)
    {
        return Err(format!("the loop body declares `{n}` again").into());
    }
    if let Some(g) = &shape.guard {
        if shape.dep(g).is_none() {
            return Err(
                "the guard reads memory, has side effects, or reads a local that changes".into(),
            );
        }
    }
    let mut names = ast_util::names_in(f);
    let tiles = tiles(cx, &shape, &effects, &mut names)?;
    let bytes: u64 = tiles
        .iter()
        .map(|t| u64::from(t.elem.base.size_bytes().unwrap_or(u32::MAX)) * side * side)
        .sum();
    if let Some(why) = shared_budget::in_use(cx, "the tiling").refusal("the tiling", bytes) {
        return Err(why.into());
    }
    if let Some(g) = &shape.guard {
        for t in &tiles {
            shape.first_thread_decides(g, t.side.axis())?;
        }
    }
    let side_e = side_expr(f, side);
    let g = rewrite(f, &shape, &tiles, &side_e, &mut names);
    let listed: Vec<String> = tiles
        .iter()
        .map(|t| {
            format!(
                "`{}` as `{}[{s}][{s}]`",
                t.array,
                t.name,
                s = print::expression(&side_e)
            )
        })
        .collect();
    let line = cx.line(shape.reduction.stmt.meta.span);
    let description = format!(
        "tiled the loop over `{k}` at line {line}: the block loads {} together, {side}×{side} elements per tile, between two barriers, and each thread runs the tile's iterations from shared memory",
        listed.join(" and ")
    );
    let c = Candidate {
        fixes_block_size: true,
        ..Candidate::new(TiledMatmul.name(), g, description)
    };
    let written: Vec<&String> = effects.array_writes.iter().collect();
    let pairs = tiles
        .iter()
        .flat_map(|t| written.iter().map(|w| (t.array.clone(), (*w).clone())))
        .collect();
    Ok((c, pairs))
}

/// Whether `f` declares shared memory or a pointer anywhere.
fn uses_shared_or_pointers(f: &Function) -> bool {
    let mut found = false;
    for s in &f.body {
        ast_util::visit_stmts(s, &mut |x| {
            if let StmtKind::Decl(ds) = &x.kind {
                found |= ds
                    .iter()
                    .any(|d| d.space == Space::Shared || d.ty.is_pointer() || d.ty.is_ref);
            }
        });
    }
    found
}

/// The loads of the loop body to tile: `P[i]` of a pointer parameter `P`
/// the kernel never writes, `i` reading the counter and depending on one
/// thread index at most, evaluated whenever the statement is, in
/// statements the body always runs.
fn tiles(
    cx: &Context,
    shape: &Shape,
    effects: &Effects,
    names: &mut BTreeSet<String>,
) -> Result<Vec<Tile>, Refusal> {
    let f = cx.function;
    let readonly = |n: &str| {
        f.params.iter().find(|p| {
            p.name == n
                && p.ty.pointers.len() == 1
                && p.dims.is_empty()
                && !p.ty.is_ref
                && copyable(&p.ty.base)
                && !effects.array_writes.contains(n)
                && ast_util::array_uses(f, n).is_ok()
        })
    };
    let mut roots = Vec::new();
    always_run(&shape.reduction.body, &mut roots);
    let mut out: Vec<Tile> = Vec::new();
    for root in roots {
        ast_util::visit_expr(root, &mut |x| {
            let ExprKind::Index(base, index) = &x.kind else {
                return;
            };
            let ExprKind::Ident(array) = &base.kind else {
                return;
            };
            let Some(p) = readonly(array) else {
                return;
            };
            if !shape.mentions_counter(index) || !ast_util::unconditional_in(root, x.meta.id) {
                return;
            }
            let side = match shape.dep(index) {
                Some(d) if !d.x => Side::Row,
                Some(d) if !d.y => Side::Column,
                _ => return,
            };
            if let Some(t) = out
                .iter_mut()
                .find(|t| t.array == *array && ast_util::equiv_expr(&t.index, index))
            {
                t.loads.push(x.meta.id);
                return;
            }
            let elem = p.ty.base_only();
            out.push(Tile {
                array: array.clone(),
                index: (**index).clone(),
                loads: vec![x.meta.id],
                side,
                name: fresh(&format!("{array}_tile"), names),
                elem,
            });
        });
    }
    if out.is_empty() {
        return Err("no load in the loop body reads a read-only array at an index of the counter that depends on the thread's row or column only".into());
    }
    Ok(out)
}

/// The expressions of the statements `s` always runs (its expression
/// statements and declarations, through blocks).
fn always_run<'a>(s: &'a Stmt, out: &mut Vec<&'a Expr>) {
    match &s.kind {
        StmtKind::Block(b) => b.iter().for_each(|x| always_run(x, out)),
        StmtKind::Expr(e) => out.push(e),
        StmtKind::Decl(ds) => {
            for d in ds {
                if let Some(copper::cuda::ast::Init::Expr(e)) = &d.init {
                    out.push(e);
                }
            }
        }
        _ => {}
    }
}

/// `threadIdx.d`
fn thread(d: &str) -> Expr {
    expr(ExprKind::Member {
        base: Box::new(ident("threadIdx")),
        field: d.into(),
        arrow: false,
    })
}

/// `name[i][j]`
fn at(name: &str, i: Expr, j: Expr) -> Expr {
    let row = expr(ExprKind::Index(Box::new(ident(name)), Box::new(i)));
    expr(ExprKind::Index(Box::new(row), Box::new(j)))
}

/// The tiled kernel.
fn rewrite(
    f: &Function,
    shape: &Shape,
    tiles: &[Tile],
    side: &Expr,
    names: &mut BTreeSet<String>,
) -> Function {
    let r = &shape.reduction;
    let t = fresh("t", names);
    let kk = fresh("kk", names);
    let mut body: Vec<Stmt> = tiles
        .iter()
        .map(|x| ast_util::shared_decl(x.elem.clone(), &x.name, vec![side.clone(), side.clone()]))
        .collect();
    body.extend(shape.decls.iter().cloned());
    let mut step: Vec<Stmt> = tiles.iter().map(|x| load(shape, x, &t, names)).collect();
    step.push(sync());
    let mut iteration = r.body.clone();
    replace_loads(&mut iteration, tiles, &kk);
    fresh_metas(&mut iteration);
    let iteration = match iteration.kind {
        StmtKind::Block(b) => b,
        _ => vec![iteration],
    };
    let counter = decl(
        r.ty.clone(),
        &r.var,
        Some(bin(BinOp::Add, ident(&t), ident(&kk))),
    );
    let run = for_loop(
        decl(r.ty.clone(), &kk, Some(int(0))),
        bin(BinOp::Lt, ident(&kk), side.clone()),
        &kk,
        None,
        block(vec![
            counter,
            if_else(r.cond.clone(), iteration, Vec::new()),
        ]),
    );
    step.push(guarded(shape, vec![run]));
    step.push(sync());
    let tile_loop = for_loop(
        decl(r.ty.clone(), &t, Some(int(0))),
        bin(BinOp::Lt, ident(&t), r.bound().clone()),
        &t,
        Some(side.clone()),
        block(step),
    );
    body.push(tile_loop);
    if !shape.post.is_empty() {
        match &shape.guard {
            Some(_) => body.push(guarded(shape, shape.post.clone())),
            None => body.extend(shape.post.iter().cloned()),
        }
    }
    Function { body, ..f.clone() }
}

/// `stmts` under `if (G)` when the kernel has a guard `G`.
fn guarded(shape: &Shape, stmts: Vec<Stmt>) -> Stmt {
    match &shape.guard {
        Some(g) => if_else(g.clone(), stmts, Vec::new()),
        None => block(stmts),
    }
}

/// `for (init; cond; v++)`, or `v += by`.
fn for_loop(init: Stmt, cond: Expr, v: &str, by: Option<Expr>, body: Stmt) -> Stmt {
    let step = match by {
        Some(by) => expr(ExprKind::Assign(
            Some(BinOp::Add),
            Box::new(ident(v)),
            Box::new(by),
        )),
        None => expr(ExprKind::Unary(
            copper::cuda::ast::UnOp::PostInc,
            Box::new(ident(v)),
        )),
    };
    stmt(StmtKind::For {
        init: Some(Box::new(init)),
        cond: Some(cond),
        step: Some(step),
        body: Box::new(body),
    })
}

/// The block that loads one tile element per thread for tile step `t`:
/// the counter for the thread's place along the tile, the guard evaluated
/// for the first thread along it (the locals it reads recomputed there),
/// and the load as written.
fn load(shape: &Shape, x: &Tile, t: &str, names: &mut BTreeSet<String>) -> Stmt {
    let r = &shape.reduction;
    let axis = x.side.axis();
    let mut stmts = vec![decl(
        r.ty.clone(),
        &r.var,
        Some(bin(BinOp::Add, ident(t), thread(axis))),
    )];
    let mut cond = r.cond.clone();
    if let Some(g) = &shape.guard {
        let mut first = g.clone();
        let again = recomputed(shape, g, axis);
        let renamed: Vec<(String, String)> = again
            .iter()
            .map(|(n, _)| (n.clone(), fresh(&format!("{n}0"), names)))
            .collect();
        for ((_, v), (_, to)) in again.iter().zip(&renamed) {
            let mut init = v.init.clone();
            at_first(&mut init, axis);
            rename(&mut init, &renamed);
            stmts.push(decl(v.ty.clone(), to, Some(init)));
        }
        at_first(&mut first, axis);
        rename(&mut first, &renamed);
        cond = bin(BinOp::And, first, cond);
    }
    let value = expr(ExprKind::Index(
        Box::new(ident(&x.array)),
        Box::new(x.index.clone()),
    ));
    let target = at(&x.name, thread("y"), thread("x"));
    stmts.push(if_else(cond, vec![assign(target, value)], Vec::new()));
    block(stmts)
}

/// The fixed locals `g` reads (directly or through others) that depend
/// on `threadIdx.axis`, in declaration order.
fn recomputed(shape: &Shape, g: &Expr, axis: &str) -> Vec<(String, shape::Fixed)> {
    let mut needed = BTreeSet::new();
    let mut work = vec![g.clone()];
    while let Some(e) = work.pop() {
        ast_util::visit_expr(&e, &mut |x| {
            if let ExprKind::Ident(n) = &x.kind {
                if let Some(v) = shape.fixed.get(n) {
                    if v.dep.on(axis) && needed.insert(n.clone()) {
                        work.push(v.init.clone());
                    }
                }
            }
        });
    }
    let mut out = Vec::new();
    for s in &shape.decls {
        if let StmtKind::Decl(ds) = &s.kind {
            for d in ds {
                if needed.contains(&d.name) {
                    if let Some(v) = shape.fixed.get(&d.name) {
                        out.push((d.name.clone(), v.clone()));
                    }
                }
            }
        }
    }
    out
}

/// `e` with each name of `map` replaced by its new name; whether it
/// replaced any (an expression around one no longer prints as a macro's
/// invocation).
fn rename(e: &mut Expr, map: &[(String, String)]) -> bool {
    if let ExprKind::Ident(n) = &mut e.kind {
        let Some((_, to)) = map.iter().find(|(from, _)| from == n) else {
            return false;
        };
        *n = to.clone();
        e.meta.macro_text = None;
        return true;
    }
    let mut any = false;
    for c in ast_util::children_mut(e) {
        any |= rename(c, map);
    }
    if any {
        e.meta.macro_text = None;
    }
    any
}

/// `e` with `threadIdx.axis` replaced by 0 (and `a + 0` by `a`);
/// whether it changed (an expression around a change no longer prints as
/// a macro's invocation).
fn at_first(e: &mut Expr, axis: &str) -> bool {
    if ast_util::thread_field(e) == Some(axis) {
        *e = int(0);
        return true;
    }
    let mut any = false;
    for c in ast_util::children_mut(e) {
        any |= at_first(c, axis);
    }
    if !any {
        return false;
    }
    e.meta.macro_text = None;
    if let ExprKind::Binary(BinOp::Add, a, b) = &e.kind {
        let zero = |x: &Expr| matches!(x.kind, ExprKind::Int { value: 0, .. });
        let kept = match (zero(a), zero(b)) {
            (_, true) => Some((**a).clone()),
            (true, false) => Some((**b).clone()),
            _ => None,
        };
        if let Some(k) = kept {
            *e = k;
        }
    }
    true
}

/// The loop body with each tiled load reading its tile at `kk`.
fn replace_loads(s: &mut Stmt, tiles: &[Tile], kk: &str) {
    ast_util::visit_stmt_roots_mut(s, &mut |e| {
        replace_in(e, tiles, kk);
    });
}

/// Replaces the tiled loads in `e`; whether it replaced any (an
/// expression around one no longer prints as a macro's invocation).
fn replace_in(e: &mut Expr, tiles: &[Tile], kk: &str) -> bool {
    if let Some(t) = tiles.iter().find(|t| t.loads.contains(&e.meta.id)) {
        *e = match t.side {
            Side::Row => at(&t.name, thread("y"), ident(kk)),
            Side::Column => at(&t.name, ident(kk), thread("x")),
        };
        return true;
    }
    let mut any = false;
    for c in ast_util::children_mut(e) {
        any |= replace_in(c, tiles, kk);
    }
    if any {
        e.meta.macro_text = None;
    }
    any
}

/// Marks statements as new (their expressions keep their metadata).
fn fresh_metas(s: &mut Stmt) {
    ast_util::visit_stmts_mut(s, &mut |x| {
        x.meta = ast_util::meta();
        if let StmtKind::Decl(ds) = &mut x.kind {
            ds.iter_mut().for_each(|d| d.meta = ast_util::meta());
        }
    });
}

#[cfg(test)]
mod tests;
