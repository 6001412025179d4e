//! Global to shared memory a tile at a time: the loop form of COpPER
//! §5.2 for arrays whose segment is not a constant length. A loop that
//! every thread of a block runs over the same range `v = S … E`, reading
//! `a[v + c]` with `c` the same in every thread, is split into tiles of as
//! many iterations as the block has threads; the block copies each tile's
//! elements into a `__shared__` buffer together (one element per thread,
//! coalesced), waits at a barrier, runs the tile's iterations from the
//! buffer, and waits again before the next tile overwrites it:
//!
//! ```c
//! for (int v0 = S; v0 < E; v0 += 256) {
//!     if (v0 + threadIdx.x < E) { a_tile[threadIdx.x] = a[v0 + threadIdx.x + c]; }
//!     __syncthreads();
//!     for (int v = v0; v < v0 + 256 && v < E; v++) { … a_tile[v - v0] … }
//!     __syncthreads();
//! }
//! ```
//!
//! Barriers need every thread of the block, so the `if`s around the loop
//! whose conditions differ between threads (`if (col < w)`) are turned
//! into guards: the condition is computed once into a fresh `bool`, the
//! loop runs in every thread, and everything else those threads ran alone
//! runs under `if (active)`. When such a guard exists, a block-wide flag
//! (set by the active threads between two barriers) keeps a block without
//! active threads from copying anything, so the copy never reads an
//! element the kernel does not.
//!
//! What qualifies, all checked syntactically: the array is a pointer
//! parameter only read, only as `a[index]`; the loop is
//! `for (T v = S; v < E; v++)` (or `<=`, `++v`, `v += 1`) with `S`, `E`
//! and `c` built from constants, launch builtins (`blockIdx`, `blockDim`,
//! `gridDim`), parameters the kernel never assigns and the variables of
//! enclosing loops of that kind; the loop body assigns none of them, has
//! no `break` or `return`, and reads the array at one offset `c`, at least
//! once unconditionally per iteration (so every element copied is one the
//! threads read); the path to the loop has only blocks, such loops and
//! `if`s without `else` with side-effect free conditions; the kernel has
//! no `return`.

use copper::launch::Dims;
use std::collections::BTreeSet;

use copper::cuda::ast::{
    BaseType, BinOp, Expr, ExprKind, Function, Init, NodeId, Param, Space, Stmt, StmtKind, Type,
    UnOp, VarDecl,
};

use crate::ast_util::{
    self, assign, bin, block, expr, fresh, ident, if_else, index, int, is_pure, stmt, sync, Effects,
};
use crate::check::copyable;
use crate::shared_budget;
use crate::{overlap, Candidate, Context, Proposals, Refusal, Skip, Transform};

/// Largest tile, in bytes, per array.
const MAX_BYTES: u64 = 16 * 1024;
/// Most arrays of one loop combined into candidates.
const MAX_ARRAYS: usize = 3;

/// Global to shared, a tile of a loop at a time.
pub struct TiledGlobalToShared;

impl Transform for TiledGlobalToShared {
    fn name(&self) -> &'static str {
        "global to shared (tiled)"
    }

    fn propose(&self, cx: &Context) -> Proposals {
        let f = cx.function;
        let shape = match cx.fixed_block(": a tile needs a fixed size") {
            Ok(shape) => shape,
            Err(why) => return Proposals::refused(f.meta.span, why),
        };
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
        let used = shared_budget::in_use(cx, "a tile");
        let redeclared = redeclared(f);
        let threads: u64 = shape.count();
        for l in &loops {
            let line = cx.line(l.meta.span);
            let body = loop_body(l);
            let read_here = Effects::of(&body).array_reads;
            let arrays: Vec<&Param> = readonly
                .iter()
                .copied()
                .filter(|p| read_here.contains(&p.name))
                .collect();
            if arrays.is_empty() {
                continue;
            }
            let path = match path_to(&f.body, l.meta.id, &fixed, &redeclared) {
                Ok(p) => p,
                Err(why) => {
                    out.skipped.push(Skip {
                        span: l.meta.span,
                        reason: format!("the loop at line {line} is not tiled: {why}"),
                    });
                    continue;
                }
            };
            let header = match Header::of(l, &path.names) {
                Ok(h) => h,
                Err(why) => {
                    out.skipped.push(Skip {
                        span: l.meta.span,
                        reason: format!("the loop at line {line} is not tiled: {why}"),
                    });
                    continue;
                }
            };
            let mut tiles = Vec::new();
            for p in arrays {
                let bytes = p.ty.base.size_bytes().unwrap_or(u32::MAX) as u64 * threads;
                let plan = if bytes > MAX_BYTES {
                    Err(
                        format!("a tile of {threads} elements takes more than {MAX_BYTES} bytes")
                            .into(),
                    )
                } else {
                    Tile::of(&p.name, &p.ty, &header, &body, &path.names)
                };
                match plan {
                    Ok(t) => tiles.push(t),
                    Err(why) => out.skipped.push(Skip {
                        span: p.meta.span,
                        reason: format!(
                            "`{}` is not tiled in the loop at line {line}: {why}",
                            p.name
                        ),
                    }),
                }
            }
            tiles.truncate(MAX_ARRAYS);
            for mask in 1u32..(1 << tiles.len()) {
                let chosen: Vec<&Tile> = (0..tiles.len())
                    .filter(|i| mask & (1 << i) != 0)
                    .map(|i| &tiles[i])
                    .collect();
                let names: Vec<String> = chosen.iter().map(|t| format!("`{}`", t.array)).collect();
                let bytes: u64 = chosen
                    .iter()
                    .map(|t| u64::from(t.elem.base.size_bytes().unwrap_or(u32::MAX)) * threads)
                    .sum();
                let new = format!("tiling {}", names.join(" and "));
                if let Some(why) = used.refusal(&new, bytes) {
                    out.skipped.push(Skip {
                        span: l.meta.span,
                        reason: format!("the loop at line {line} is not tiled: {why}"),
                    });
                    continue;
                }
                match rewrite(f, l.meta.id, &header, &chosen, shape) {
                    Ok(function) => {
                        let description = format!(
                            "staged {} through shared memory {threads} elements at a time: the loop at line {line} runs in tiles the whole block loads together",
                            names.join(" and ")
                        );
                        let c = Candidate {
                            fixes_block_size: true,
                            ..Candidate::new(self.name(), function, description)
                        };
                        let pairs: Vec<(String, String)> = chosen
                            .iter()
                            .flat_map(|t| {
                                effects
                                    .array_writes
                                    .iter()
                                    .map(|w| (t.array.clone(), w.clone()))
                            })
                            .collect();
                        let left_alone = format!("the loop at line {line} is not tiled");
                        let why = (
                            left_alone.as_str(),
                            "the kernel writes one of them while the tile reads the other",
                        );
                        overlap::offer(cx, c, &pairs, &mut out, l.meta.span, why);
                    }
                    Err(why) => out.skipped.push(Skip {
                        span: l.meta.span,
                        reason: format!("the loop at line {line} is not tiled: {why}"),
                    }),
                }
            }
        }
        out
    }
}

/// What the staging rewrites of a kernel's loops start from.
pub(crate) struct Staging<'f> {
    /// What the whole kernel reads and writes.
    pub effects: Effects,
    /// Pointer parameters the kernel only reads: one level deep, of a type
    /// copied element by element, every use an index.
    pub arrays: Vec<&'f Param>,
    /// Scalar parameters never assigned nor redeclared: one value in every
    /// thread for the whole kernel.
    pub fixed: BTreeSet<String>,
    /// The kernel's `for` loops, outer ones first.
    pub loops: Vec<Stmt>,
}

impl<'f> Staging<'f> {
    /// The read-only parameters and loops of kernel `f`.
    pub(crate) fn of(f: &'f Function) -> Self {
        let effects = Effects::of(&f.body);
        let arrays = f
            .params
            .iter()
            .filter(|p| p.ty.pointers.len() == 1 && p.dims.is_empty() && copyable(&p.ty.base))
            .filter(|p| !effects.array_writes.contains(&p.name))
            .filter(|p| ast_util::array_uses(f, &p.name).is_ok())
            .collect();
        let redeclared = redeclared(f);
        let fixed = f
            .params
            .iter()
            .filter(|p| !p.ty.is_pointer() && !effects.writes.contains(&p.name))
            .map(|p| p.name.clone())
            .filter(|n| !redeclared.contains(n))
            .collect();
        let mut loops = Vec::new();
        for s in &f.body {
            ast_util::visit_stmts(s, &mut |x| {
                if matches!(x.kind, StmtKind::For { .. }) {
                    loops.push(x.clone());
                }
            });
        }
        Staging {
            effects,
            arrays,
            fixed,
            loops,
        }
    }
}

/// The statements of a loop's body.
pub(crate) fn loop_body(l: &Stmt) -> Vec<Stmt> {
    match &l.kind {
        StmtKind::For { body, .. } => ast_util::branch_stmts(body),
        _ => Vec::new(),
    }
}

/// What is known on the way to the loop.
struct Path {
    /// Names whose value is the same in every thread of the block and does
    /// not change inside the loop: fixed parameters, enclosing loops'
    /// variables.
    names: BTreeSet<String>,
}

/// Checks the statements enclosing loop `target`: blocks, `for` loops
/// with block-uniform headers, and `if`s without `else` (side-effect free
/// conditions); no `return` anywhere in the kernel.
fn path_to(
    stmts: &[Stmt],
    target: NodeId,
    fixed: &BTreeSet<String>,
    redeclared: &BTreeSet<String>,
) -> Result<Path, Refusal> {
    if ast_util::returns(stmts) {
        return Err(
            "the kernel may return early, and the tiles' barriers need every thread".into(),
        );
    }
    let mut names = fixed.clone();
    let mut level = stmts.to_vec();
    loop {
        let Some(s) = level.iter().find(|s| contains(s, target)).cloned() else {
            return Err("copper lost track of the loop".into());
        };
        if s.meta.id == target {
            return Ok(Path { names });
        }
        level = match &s.kind {
            StmtKind::Block(b) => b.clone(),
            StmtKind::For { body, .. } => {
                let h = Header::of(&s, &names).map_err(|why| {
                    format!("an enclosing loop is not the same in every thread ({why})")
                })?;
                if !redeclared.contains(&h.var) {
                    names.insert(h.var);
                }
                ast_util::branch_stmts(body)
            }
            StmtKind::If { cond, then, els } => {
                if !is_pure(cond) {
                    return Err(Refusal::SideEffects {
                        what: "an enclosing `if` condition",
                    });
                }
                if els.as_ref().is_some_and(|e| contains(e, target)) {
                    return Err("it sits in the `else` branch of an `if`".into());
                }
                ast_util::branch_stmts(then)
            }
            _ => return Err("it sits in a `while`, `do` or `switch`".into()),
        };
    }
}

/// Names declared more than once in the kernel (parameters count): a
/// name like that may not mean the same variable everywhere.
pub(crate) fn redeclared(f: &Function) -> BTreeSet<String> {
    let mut once: BTreeSet<String> = f.params.iter().map(|p| p.name.clone()).collect();
    let mut twice = BTreeSet::new();
    for s in &f.body {
        ast_util::visit_stmts(s, &mut |x| {
            if let StmtKind::Decl(ds) = &x.kind {
                for d in ds {
                    if !once.insert(d.name.clone()) {
                        twice.insert(d.name.clone());
                    }
                }
            }
        });
    }
    twice
}

/// Whether statement `s` is or contains statement `target`.
pub(crate) fn contains(s: &Stmt, target: NodeId) -> bool {
    let mut found = false;
    ast_util::visit_stmts(s, &mut |x| found |= x.meta.id == target);
    found
}

/// Whether `e` has the same value in every thread of a block, built from
/// constants, launch builtins and `names`.
pub(crate) fn uniform(e: &Expr, names: &BTreeSet<String>) -> bool {
    use ExprKind as K;
    match &e.kind {
        K::Ident(n) => names.contains(n),
        K::Int { .. } | K::Float(_) | K::Char(_) | K::Bool(_) | K::SizeofType(_) => true,
        K::Member { base, .. } => matches!(&base.kind,
            K::Ident(b) if ["blockIdx", "blockDim", "gridDim"].contains(&b.as_str())),
        K::Unary(UnOp::Neg | UnOp::Not | UnOp::BitNot | UnOp::Plus, x) | K::Cast(_, _, x) => {
            uniform(x, names)
        }
        K::Binary(_, a, b) => uniform(a, names) && uniform(b, names),
        K::Cond(c, a, b) => uniform(c, names) && uniform(a, names) && uniform(b, names),
        _ => false,
    }
}

/// A loop `for (T v = start; v < end; v++)` (its condition may also be
/// `v <= E`, `E > v` or `E >= v`: `end` is then `E + 1` or `E`).
pub(crate) struct Header {
    pub(crate) var: String,
    ty: Type,
    pub(crate) start: Expr,
    pub(crate) end: Expr,
}

impl Header {
    /// The header of `l` when its range is the same in every thread of the
    /// block (`names` are the block-uniform names) and its body leaves the
    /// variable and the bounds alone.
    pub(crate) fn of(l: &Stmt, names: &BTreeSet<String>) -> Result<Header, Refusal> {
        let StmtKind::For {
            init: Some(init),
            cond: Some(cond),
            step: Some(step),
            body,
        } = &l.kind
        else {
            return Err("it is not a counted `for` loop".into());
        };
        let StmtKind::Decl(ds) = &init.kind else {
            return Err("it does not declare its variable".into());
        };
        let [d] = ds.as_slice() else {
            return Err("it declares several variables".into());
        };
        let Some(Init::Expr(start)) = &d.init else {
            return Err("its variable has no initial value".into());
        };
        let v = d.name.as_str();
        if !d.dims.is_empty() || d.ty.is_pointer() {
            return Err(format!("its counter `{v}` is an array or a pointer").into());
        }
        if !is_integer(&d.ty.base) {
            return Err(format!(
                "its counter `{v}` is `{}`: tiling rewrites only counters of the built-in integer types (`int`, `unsigned`, `long`, …)",
                d.ty.base.c_name()
            )
            .into());
        }
        let is_v = |e: &Expr| matches!(&e.kind, ExprKind::Ident(n) if n == v);
        let (bound, inclusive) = match &cond.kind {
            ExprKind::Binary(op @ (BinOp::Lt | BinOp::Le), a, e) if is_v(a) => {
                (e, *op == BinOp::Le)
            }
            ExprKind::Binary(op @ (BinOp::Gt | BinOp::Ge), e, a) if is_v(a) => {
                (e, *op == BinOp::Ge)
            }
            _ => return Err(format!("its condition is not `{v} < bound`").into()),
        };
        let unit_step = match &step.kind {
            ExprKind::Unary(UnOp::PostInc | UnOp::PreInc, x) => is_v(x),
            ExprKind::Assign(Some(BinOp::Add), x, one) => {
                is_v(x) && matches!(one.kind, ExprKind::Int { value: 1, .. })
            }
            _ => false,
        };
        if !unit_step {
            return Err(format!("its step is not `{v}++`").into());
        }
        if !uniform(start, names) || !uniform(bound, names) {
            return Err("its range may differ between threads".into());
        }
        let assigned = Effects::of(std::slice::from_ref(&**body)).writes;
        let mut used = BTreeSet::new();
        ast_util::visit_expr(bound, &mut |x| {
            if let ExprKind::Ident(n) = &x.kind {
                used.insert(n.clone());
            }
        });
        used.insert(v.to_string());
        if used.iter().any(|n| assigned.contains(n)) {
            return Err("its body assigns its variable or its bound".into());
        }
        Ok(Header {
            var: d.name.clone(),
            ty: Type {
                is_const: false,
                ..d.ty.clone()
            },
            start: start.clone(),
            end: if inclusive {
                bin(BinOp::Add, (**bound).clone(), int(1))
            } else {
                (**bound).clone()
            },
        })
    }
}

fn is_integer(b: &BaseType) -> bool {
    copyable(b)
        && !matches!(
            b,
            BaseType::Float | BaseType::Double | BaseType::Bool | BaseType::Named(_)
        )
}

/// One array of a tiled loop: read as `a[v + offset]`.
pub(crate) struct Tile {
    pub(crate) array: String,
    pub(crate) elem: Type,
    /// The index with the loop variable in it (`v + c`), from one access.
    pub(crate) index: Expr,
}

impl Tile {
    /// The tile of `name` in a loop with header `h` and body `body`.
    pub(crate) fn of(
        name: &str,
        ty: &Type,
        h: &Header,
        body: &[Stmt],
        names: &BTreeSet<String>,
    ) -> Result<Tile, Refusal> {
        let mut indices = Vec::new();
        for s in body {
            ast_util::visit_stmt_exprs(s, &mut |e| {
                if let ExprKind::Index(base, i) = &e.kind {
                    if matches!(&base.kind, ExprKind::Ident(n) if n == name) {
                        indices.push((e.meta.id, (**i).clone()));
                    }
                }
            });
        }
        let Some((_, first)) = indices.first().cloned() else {
            return Err("the loop does not read it".into());
        };
        if !offset_of(&first, &h.var).is_some_and(|c| c.is_none_or(|c| uniform(&c, names))) {
            return Err(format!(
                "its index is not `{} + c` with `c` the same in every thread",
                h.var
            )
            .into());
        }
        if indices
            .iter()
            .any(|(_, i)| !ast_util::equiv_expr(i, &first))
        {
            return Err("the loop reads it at more than one offset".into());
        }
        let fx = Effects::of(body);
        if fx.jumps {
            return Err(Refusal::Jumps {
                what: "the loop body may",
            });
        }
        let unconditional = body.iter().any(|s| match &s.kind {
            StmtKind::Expr(e) => indices
                .iter()
                .any(|(id, _)| ast_util::unconditional_in(e, *id)),
            StmtKind::Decl(ds) => ds.iter().any(|d| match &d.init {
                Some(Init::Expr(e)) => indices
                    .iter()
                    .any(|(id, _)| ast_util::unconditional_in(e, *id)),
                _ => false,
            }),
            _ => false,
        });
        if !unconditional {
            return Err("no iteration is sure to read it (every read is conditional)".into());
        }
        Ok(Tile {
            array: name.to_string(),
            elem: ty.base_only(),
            index: first,
        })
    }
}

/// `c` when `e` is `v + c`, `c + v` or `v - c` (`Some(None)` for `v`);
/// `None` otherwise. `c` must not mention `v`.
fn offset_of(e: &Expr, v: &str) -> Option<Option<Expr>> {
    let is_v = |x: &Expr| matches!(&x.kind, ExprKind::Ident(n) if n == v);
    let free = |x: &Expr| {
        let mut ok = true;
        ast_util::visit_expr(x, &mut |y| ok &= !is_v(y));
        ok
    };
    match &e.kind {
        _ if is_v(e) => Some(None),
        ExprKind::Binary(BinOp::Add, a, c) if is_v(a) && free(c) => Some(Some((**c).clone())),
        ExprKind::Binary(BinOp::Add, c, a) if is_v(a) && free(c) => Some(Some((**c).clone())),
        ExprKind::Binary(BinOp::Sub, a, c) if is_v(a) && free(c) => Some(Some(expr(
            ExprKind::Unary(UnOp::Neg, Box::new((**c).clone())),
        ))),
        _ => None,
    }
}

/// The kernel with loop `target` tiled for `tiles`.
fn rewrite(
    f: &Function,
    target: NodeId,
    h: &Header,
    tiles: &[&Tile],
    shape: Dims,
) -> Result<Function, Refusal> {
    let mut taken = ast_util::names_in(f);
    let threads: u64 = shape.count();
    let mut top = Vec::new();
    let mut buffers = Vec::new();
    for t in tiles {
        let buf = fresh(&format!("{}_tile", t.array), &mut taken);
        top.push(ast_util::shared_decl(
            t.elem.clone(),
            &buf,
            vec![int(threads)],
        ));
        buffers.push(buf);
    }
    let flag = fresh("any_active", &mut taken);
    let mut lifter = Lifter {
        target,
        h,
        tiles,
        buffers: &buffers,
        shape,
        flag: &flag,
        flag_used: false,
        taken: &mut taken,
    };
    let body = lifter.lift(&f.body, None)?;
    if lifter.flag_used {
        top.push(ast_util::shared_decl(
            Type::scalar(BaseType::Int),
            &flag,
            Vec::new(),
        ));
    }
    let mut g = f.clone();
    top.extend(body);
    g.body = top;
    Ok(g)
}

/// Rewrites the path to the tiled loop so every thread runs it.
struct Lifter<'a> {
    target: NodeId,
    h: &'a Header,
    tiles: &'a [&'a Tile],
    buffers: &'a [String],
    shape: Dims,
    flag: &'a str,
    flag_used: bool,
    taken: &'a mut BTreeSet<String>,
}

impl Lifter<'_> {
    /// `stmts`, where only threads with `guard` set ran them before.
    fn lift(&mut self, stmts: &[Stmt], guard: Option<&str>) -> Result<Vec<Stmt>, Refusal> {
        let mut out = Vec::new();
        let mut run: Vec<Stmt> = Vec::new();
        for s in stmts {
            if !contains(s, self.target) {
                run.push(s.clone());
                continue;
            }
            out.extend(guarded(std::mem::take(&mut run), guard)?);
            match &s.kind {
                _ if s.meta.id == self.target => out.extend(self.tiled(s, guard)),
                StmtKind::Block(b) => {
                    let inner = self.lift(b, guard)?;
                    out.push(block(inner));
                }
                StmtKind::For {
                    init,
                    cond,
                    step,
                    body,
                } => {
                    let inner = self.lift(&ast_util::branch_stmts(body), guard)?;
                    out.push(stmt(StmtKind::For {
                        init: init.clone(),
                        cond: cond.clone(),
                        step: step.clone(),
                        body: Box::new(block(inner)),
                    }));
                }
                StmtKind::If { cond, then, els } => {
                    let act = fresh("active", self.taken);
                    let value = match guard {
                        Some(g) => bin(BinOp::And, ident(g), cond.clone()),
                        None => cond.clone(),
                    };
                    out.push(ast_util::decl(
                        Type::scalar(BaseType::Bool),
                        &act,
                        Some(value),
                    ));
                    out.extend(self.any_active(&act));
                    let mut inner = self.lift(&ast_util::branch_stmts(then), Some(&act))?;
                    if let Some(e) = els {
                        // The threads that took the `else` run it after
                        // the others' `then` (no barrier ordered them).
                        let not = expr(ExprKind::Unary(UnOp::Not, Box::new(ident(&act))));
                        let outside = match guard {
                            Some(g) => bin(BinOp::And, ident(g), not),
                            None => not,
                        };
                        inner.push(if_else(outside, ast_util::branch_stmts(e), Vec::new()));
                    }
                    out.push(block(inner));
                }
                _ => return Err("copper cannot rewrite the statement holding it".into()),
            }
        }
        out.extend(guarded(run, guard)?);
        Ok(out)
    }

    /// Sets the block-wide flag to whether some thread has `act` set
    /// (every thread runs this; the last such flag before the loop is the
    /// innermost guard's).
    fn any_active(&mut self, act: &str) -> Vec<Stmt> {
        self.flag_used = true;
        let is_first = bin(BinOp::Eq, ast_util::linear_tid(self.shape), int(0));
        vec![
            if_else(is_first, vec![assign(ident(self.flag), int(0))], Vec::new()),
            sync(),
            if_else(
                ident(act),
                vec![assign(ident(self.flag), int(1))],
                Vec::new(),
            ),
            sync(),
        ]
    }

    /// The tiled form of the target loop.
    fn tiled(&mut self, l: &Stmt, guard: Option<&str>) -> Vec<Stmt> {
        let h = self.h;
        let threads: u64 = self.shape.count();
        let tid = ast_util::linear_tid(self.shape);
        let v0 = fresh(&format!("{}_tile", h.var), self.taken);
        let mut out = Vec::new();
        let mine = bin(BinOp::Add, ident(&v0), tid.clone());
        let mut copy_cond = bin(BinOp::Lt, mine.clone(), h.end.clone());
        if guard.is_some() {
            copy_cond = bin(BinOp::And, ident(self.flag), copy_cond);
        }
        let mut tile_body = Vec::new();
        let mut copies = Vec::new();
        for (t, buf) in self.tiles.iter().zip(self.buffers) {
            let mut from = t.index.clone();
            ast_util::replace_expr(&mut from, &ident(&h.var), &mine);
            copies.push(assign(index(buf, tid.clone()), index(&t.array, from)));
        }
        tile_body.push(if_else(copy_cond, copies, Vec::new()));
        tile_body.push(sync());
        let mut body = loop_body(l);
        for s in &mut body {
            ast_util::visit_stmt_roots_mut(s, &mut |e| {
                for (t, buf) in self.tiles.iter().zip(self.buffers) {
                    let local = bin(BinOp::Sub, ident(&h.var), ident(&v0));
                    let from = index(&t.array, t.index.clone());
                    replace_reads(e, &from, &index(buf, local));
                }
            });
        }
        // The tile's last iteration + 1: min(v0 + threads, end).
        let end = fresh(&format!("{}_end", h.var), self.taken);
        let full = bin(BinOp::Add, ident(&v0), int(threads));
        let nearer = expr(ExprKind::Cond(
            Box::new(bin(BinOp::Lt, h.end.clone(), full.clone())),
            Box::new(h.end.clone()),
            Box::new(full),
        ));
        tile_body.push(ast_util::decl(h.ty.clone(), &end, Some(nearer)));
        let inner = stmt(StmtKind::For {
            init: Some(Box::new(ast_util::decl(
                h.ty.clone(),
                &h.var,
                Some(ident(&v0)),
            ))),
            cond: Some(bin(BinOp::Lt, ident(&h.var), ident(&end))),
            step: Some(expr(ExprKind::Unary(
                UnOp::PostInc,
                Box::new(ident(&h.var)),
            ))),
            body: Box::new(block(body)),
        });
        tile_body.push(match guard {
            Some(g) => if_else(ident(g), vec![inner], Vec::new()),
            None => inner,
        });
        tile_body.push(sync());
        out.push(stmt(StmtKind::For {
            init: Some(Box::new(ast_util::decl(
                h.ty.clone(),
                &v0,
                Some(h.start.clone()),
            ))),
            cond: Some(bin(BinOp::Lt, ident(&v0), h.end.clone())),
            step: Some(expr(ExprKind::Assign(
                Some(BinOp::Add),
                Box::new(ident(&v0)),
                Box::new(int(threads)),
            ))),
            body: Box::new(block(tile_body)),
        }));
        out
    }
}

/// Every read `from` in `e` becomes `to`.
pub(crate) fn replace_reads(e: &mut Expr, from: &Expr, to: &Expr) {
    ast_util::replace_expr(e, from, to);
}

/// Statements that only threads with `guard` ran: declarations stay where
/// they are, without their initial value, and everything else (the
/// initializations included) runs under `if (guard)`.
fn guarded(run: Vec<Stmt>, guard: Option<&str>) -> Result<Vec<Stmt>, Refusal> {
    let Some(g) = guard else {
        return Ok(run);
    };
    if run.is_empty() {
        return Ok(run);
    }
    let mut decls = Vec::new();
    let mut body = Vec::new();
    let mut seen: BTreeSet<String> = BTreeSet::new();
    for s in run {
        match s.kind {
            StmtKind::Decl(ds) => {
                for d in ds {
                    if seen.contains(&d.name) {
                        return Err(format!(
                            "`{}` is used before its declaration in a guarded region",
                            d.name
                        )
                        .into());
                    }
                    if let Some(Init::Expr(e)) = &d.init {
                        seen.extend(Effects::of(&[stmt(StmtKind::Expr(e.clone()))]).touched());
                    }
                    match (&d.init, d.space, d.dims.is_empty()) {
                        (None, _, _) => decls.push(stmt(StmtKind::Decl(vec![d]))),
                        (Some(Init::Expr(e)), Space::Local, true) => {
                            let value = e.clone();
                            let name = d.name.clone();
                            decls.push(stmt(StmtKind::Decl(vec![VarDecl {
                                init: None,
                                ty: Type {
                                    is_const: false,
                                    ..d.ty
                                },
                                ..d
                            }])));
                            body.push(assign(ident(&name), value));
                        }
                        _ => {
                            return Err(format!(
                                "`{}` has an initializer copper cannot split",
                                d.name
                            )
                            .into())
                        }
                    }
                }
            }
            StmtKind::Empty => {}
            _ => {
                seen.extend(Effects::of(std::slice::from_ref(&s)).touched());
                body.push(s);
            }
        }
    }
    let mut out = decls;
    if !body.is_empty() {
        out.push(if_else(ident(g), body, Vec::new()));
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
