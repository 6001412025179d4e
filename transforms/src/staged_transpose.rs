//! Staged transposition through shared memory: a kernel that
//! maps one array into another with the indices transposed
//! (`out[x * rows + y] = in[y * cols + x]`, `x` from `threadIdx.x`) walks
//! one array along its rows and the other along its columns, so whichever
//! thread index the lanes of a warp follow, one side is uncoalesced, and
//! swapping the thread indices ([`crate::remap_threads`]) only moves the
//! problem. The classic tiled transpose stages a block's elements through
//! a padded `__shared__` tile instead:
//!
//! ```c
//! __shared__ float tile[16][16 + 1];
//! int x = blockIdx.x * 16 + threadIdx.x;                 // as written
//! int y = blockIdx.y * 16 + threadIdx.y;
//! if (x < cols && y < rows)
//!     tile[threadIdx.y][threadIdx.x] = in[y * cols + x];
//! __syncthreads();
//! {
//!     int x = blockIdx.x * 16 + threadIdx.y;             // indices swapped
//!     int y = blockIdx.y * 16 + threadIdx.x;
//!     if (x < cols && y < rows)
//!         out[x * rows + y] = tile[threadIdx.x][threadIdx.y];
//! }
//! ```
//!
//! Call the original's thread `(a, b)` (its `threadIdx.x`, `threadIdx.y`)
//! a logical thread. In one phase each logical thread runs as written; in
//! the other, the hardware thread `(a, b)` plays logical thread `(b, a)`:
//! it recomputes the declarations, the guards and the indices with
//! `threadIdx.x` and `threadIdx.y` exchanged. A logical thread's value goes
//! from the phase that computes it to the phase that stores it through
//! `tile[b][a]`, between them a barrier. The block is square, so the
//! exchange permutes its threads: every logical thread stores exactly once,
//! under its own guards, and reads only the tile element it wrote (a
//! partial tile leaves the same elements out in both phases). The padding
//! (`+ 1`) puts the elements of a tile column in different banks.
//!
//! Either phase may be the exchanged one: the store (when the writes are
//! uncoalesced, as above) or the loads (`out[y * n + x] = in[x * n + y]`).
//! Each variant is proposed when it lowers the sectors a warp's global
//! accesses take at worst (computed on the variant's own analysis); the
//! description says which accesses changed.
//!
//! What qualifies, checked and refused with the reason otherwise:
//! - the block is known, square and flat (`S×S×1`), and the tile
//!   (`S×(S+1)` elements of the written array's scalar type) fits in
//!   shared memory beside the dynamic shared memory the launches ask for
//!   ([`crate::shared_budget`]);
//! - the body is declarations of scalar locals initialized by pure
//!   expressions that read no memory, with early exits `if (c) return;`
//!   among them (`c` pure, reading no memory: before the barrier, which
//!   every thread must reach, each becomes `if (!(c)) { … }` around what
//!   follows it), then one store `out[f] = g`, alone
//!   or inside `if`s without `else` whose conditions are pure and read no
//!   memory; `f` reads no memory; `g` is pure and reads only other pointer
//!   parameters, each as `p[i]`; `threadIdx` appears only as `.x`, `.y`
//!   or `.z` (so nothing else depends on which thread runs which logical
//!   thread: no shared memory, barrier, atomic or device function);
//! - the analysis finds the indices of the store and of the loads affine
//!   in the thread index;
//! - the written array does not overlap the ones read: one side is
//!   `__restrict__`, or the file's launches pass separate `cudaMalloc`
//!   allocations, or the parameter file gives each its own array (the
//!   evidence of [`crate::read_only`], printed as the assumption).

use copper::absint::deps::Coef;
use copper::absint::memory::transactions;
use copper::bound::{prepare, Config, Prepared};
use copper::cuda::ast::{Expr, ExprKind, Function, Init, NodeId, Space, Stmt, StmtKind, UnOp};
use copper::ir::Kernel;
use tile::Tile;

use crate::ast_util::{self, assign, block, early_exit, expr, ident, is_pure, reads_memory};
use crate::check::{copyable, materialize};
use crate::{read_only, shared_budget};
use crate::{Candidate, Context, Proposals, Refusal, Skip, Transform};

pub(crate) mod tile;

/// Staged transposition through a padded shared tile.
pub struct StagedTranspose;

impl Transform for StagedTranspose {
    fn name(&self) -> &'static str {
        "staged transposition"
    }

    fn propose(&self, cx: &Context) -> Proposals {
        let mut out = Proposals::default();
        if !ast_util::reads_thread_xy(cx.function) {
            return out;
        }
        match candidates(cx) {
            Ok(cs) => out.candidates = cs,
            Err(why) => out.skipped.push(Skip {
                span: cx.function.meta.span,
                reason: format!("not staged through a shared tile: {why}"),
            }),
        }
        out
    }
}

/// The variants that lower the sectors, or why there is none.
fn candidates(cx: &Context) -> Result<Vec<Candidate>, Refusal> {
    let f = cx.function;
    let map = Map::of(f)?;
    let side = square_side(cx)?;
    let elem = &f.params[map.out].ty.base;
    let bytes = cx
        .kernel
        .arrays
        .iter()
        .find(|a| a.param == Some(map.out))
        .map(|a| a.layout.size)
        .filter(|_| copyable(elem) || ast_util::is_type_param(f, elem));
    let Some(bytes) = bytes else {
        return Err(format!(
            "`{}` does not hold scalars, so there is no tile type",
            map.out_name(f)
        )
        .into());
    };
    let name = ast_util::fresh("tile", &mut ast_util::names_in(f));
    let tile = Tile::new(f, name, side, elem.clone(), bytes);
    let size = u64::from(bytes) * side * (side + tile.pad);
    let new = format!("a {side}×{} tile", side + tile.pad);
    if let Some(why) = shared_budget::in_use(cx, &new).refusal(&new, size) {
        return Err(why.into());
    }
    map.affine(cx)?;
    let evidence = no_overlap(cx, &map)?;
    let config = Config {
        block: cx.block,
        ..cx.analysis.config()
    };
    let before = traffic(cx.analysis, cx.kernel, config);
    let mut found = Vec::new();
    let mut worse = Vec::new();
    for exchanged in [Phase::Store, Phase::Load] {
        let g = rewrite(f, &map, exchanged, &tile);
        let (_, kernel) = materialize(cx.file, &g)
            .map_err(|why| format!("the staged kernel cannot be written: {why}"))?;
        let after = traffic(&prepare(&kernel, config), &kernel, config);
        let (old, new) = (total(&before), total(&after));
        if new >= old {
            worse.push(format!("{}: {old} → {new}", exchanged.short()));
            continue;
        }
        let description = format!(
                "staged the transposition through a padded shared tile `{}`, {}: {}; global sectors per warp {old} → {new}; assumes {evidence}",
                tile.text(),
                exchanged.what(),
                changes(&before, &after).join("; "),
            );
        found.push(Candidate {
            fixes_block_size: true,
            ..Candidate::new(StagedTranspose.name(), g, description)
        });
    }
    if found.is_empty() {
        return Err(format!(
            "it would not make the global accesses touch fewer sectors per warp ({})",
            worse.join("; ")
        )
        .into());
    }
    Ok(found)
}

/// The side `S` of the kernel's block, known, square and flat.
fn square_side(cx: &Context) -> Result<u64, Refusal> {
    let block = cx.fixed_block(": the tile is sized from it")?;
    match block.to_array() {
        [x, y, 1] if x == y && x > 1 => Ok(x),
        _ => Err(Refusal::BlockShape {
            block,
            wanted: "square and flat, so exchanging `threadIdx.x` and `threadIdx.y` would not map the block onto itself",
        }),
    }
}

/// Which phase runs with `threadIdx.x` and `threadIdx.y` exchanged.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// The store: the tile is read along its columns.
    Store,
    /// The loads: the tile is written along its columns.
    Load,
}

impl Phase {
    /// Which phase, in a few words.
    fn short(self) -> &'static str {
        match self {
            Phase::Store => "the store exchanged",
            Phase::Load => "the loads exchanged",
        }
    }

    /// Who runs the exchanged phase, for the description.
    fn what(self) -> &'static str {
        match self {
            Phase::Store => "stored by the thread with `threadIdx.x` and `threadIdx.y` exchanged",
            Phase::Load => "loaded by the thread with `threadIdx.x` and `threadIdx.y` exchanged",
        }
    }
}

/// A kernel that is a per-element map: declarations, then one store
/// under `if`s.
struct Map {
    /// The statement of the store (`out[f] = g;`).
    store: NodeId,
    /// The store's target `out[f]`.
    target: Expr,
    /// The stored value `g`.
    value: Expr,
    /// The written parameter, by position.
    out: usize,
    /// The parameters `g` reads, by position.
    reads: Vec<usize>,
    /// The loads of `g` (`p[i]`).
    loads: Vec<Expr>,
    /// Whether the declarations are interleaved with early exits
    /// (`if (c) return;`).
    returns: bool,
}

impl Map {
    /// The map `f` is, or why it is none.
    fn of(f: &Function) -> Result<Map, Refusal> {
        let body: Vec<&Stmt> = f
            .body
            .iter()
            .filter(|s| !matches!(s.kind, StmtKind::Empty))
            .collect();
        let Some((last, decls)) = body.split_last() else {
            return Err("its body is empty".into());
        };
        let mut returns = false;
        for d in decls {
            match early_exit(d) {
                Some(c) if is_pure(c) && !reads_memory(c) => returns = true,
                Some(_) => {
                    return Err(
                        "an early `return`'s condition has side effects or reads memory".into(),
                    )
                }
                None => index_decl(d)?,
            }
        }
        let mut s: &Stmt = last;
        loop {
            s = match &s.kind {
                StmtKind::If {
                    cond,
                    then,
                    els: None,
                } => {
                    if !is_pure(cond) || reads_memory(cond) {
                        return Err("a guard has side effects or reads memory".into());
                    }
                    then
                }
                StmtKind::Block(b) => match b.as_slice() {
                    [one] => one,
                    _ => return Err(not_a_map()),
                },
                StmtKind::Expr(_) => break,
                _ => return Err(not_a_map()),
            };
        }
        let StmtKind::Expr(e) = &s.kind else {
            return Err(not_a_map());
        };
        let ExprKind::Assign(None, target, value) = &e.kind else {
            return Err(not_a_map());
        };
        let param = |name: &str| {
            f.params.iter().position(|p| {
                p.name == name && p.ty.pointers.len() == 1 && p.dims.is_empty() && !p.ty.is_ref
            })
        };
        let ExprKind::Index(base, index) = &target.kind else {
            return Err(not_a_map());
        };
        let Some(out) = root_ident(base).and_then(param) else {
            return Err("it does not store into a pointer parameter".into());
        };
        if !is_pure(index) || reads_memory(index) {
            return Err("the index it stores at reads memory or has side effects".into());
        }
        if !is_pure(value) {
            return Err(Refusal::SideEffects {
                what: "the stored value",
            });
        }
        let mut loads = Vec::new();
        let mut reads = Vec::new();
        let mut bad = None;
        ast_util::visit_expr(value, &mut |x| match &x.kind {
            ExprKind::Index(b, _) => match root_ident(b).and_then(param) {
                Some(p) if p != out => {
                    loads.push(x.clone());
                    if !reads.contains(&p) {
                        reads.push(p);
                    }
                }
                Some(_) => {
                    bad.get_or_insert("the stored value reads the array it writes");
                }
                None => {
                    bad.get_or_insert(
                        "the stored value reads memory other than pointer parameters",
                    );
                }
            },
            ExprKind::Unary(UnOp::Deref | UnOp::AddrOf, _)
            | ExprKind::Member { arrow: true, .. } => {
                bad.get_or_insert("the stored value reads memory through a pointer expression");
            }
            _ => {}
        });
        if let Some(why) = bad {
            return Err(why.into());
        }
        if loads.is_empty() {
            return Err("the stored value reads no array, so there is nothing to transpose".into());
        }
        for &p in reads.iter().chain([&out]) {
            ast_util::array_uses(f, &f.params[p].name)
                .map_err(|why| format!("`{}`: {why}", f.params[p].name))?;
        }
        let mut whole = false;
        for s in &f.body {
            ast_util::visit_stmt_roots(s, &mut |root| {
                let (mut fields, mut all) = (0, 0);
                ast_util::visit_expr(root, &mut |x| {
                    fields += ast_util::thread_field(x).is_some() as usize;
                    all += matches!(&x.kind, ExprKind::Ident(n) if n == "threadIdx") as usize;
                });
                whole |= fields != all;
            });
        }
        if whole {
            return Err("it uses `threadIdx` as a whole".into());
        }
        Ok(Map {
            store: s.meta.id,
            target: (**target).clone(),
            value: (**value).clone(),
            out,
            reads,
            loads,
            returns,
        })
    }

    fn out_name<'f>(&self, f: &'f Function) -> &'f str {
        &f.params[self.out].name
    }

    /// Checks that the analysis finds the store's and the loads' indices
    /// affine in the thread index.
    fn affine(&self, cx: &Context) -> Result<(), Refusal> {
        for e in std::iter::once(&self.target).chain(&self.loads) {
            let sites = cx.sites_of(e);
            if sites.is_empty()
                || sites
                    .iter()
                    .any(|&s| cx.analysis.index_dep(s).affine_parts().is_none())
            {
                return Err(format!(
                    "the index of `{}` at line {} is not affine in the thread index",
                    root_ident(e).unwrap_or("?"),
                    cx.line(e.meta.span)
                )
                .into());
            }
        }
        Ok(())
    }
}

fn not_a_map() -> Refusal {
    "its body is not index declarations (and early `return`s) followed by one store `out[f] = g(in[h])` under `if`s"
        .into()
}

/// The name at the root of `a[i]`, `a`.
fn root_ident(e: &Expr) -> Option<&str> {
    match &e.kind {
        ExprKind::Ident(n) => Some(n),
        ExprKind::Index(b, _) => root_ident(b),
        _ => None,
    }
}

/// Checks a leading declaration: scalar locals with pure initial values
/// that read no memory.
fn index_decl(s: &Stmt) -> Result<(), Refusal> {
    let StmtKind::Decl(ds) = &s.kind else {
        return Err(not_a_map());
    };
    for d in ds {
        if d.space == Space::Shared {
            return Err(format!("it already uses shared memory (`{}`)", d.name).into());
        }
        let plain = d.is_plain_local();
        let computed = matches!(&d.init, Some(Init::Expr(e)) if is_pure(e) && !reads_memory(e));
        if !plain || !computed {
            return Err(format!(
                "`{}` is not a scalar computed from indices (no memory read, no side effect)",
                d.name
            )
            .into());
        }
    }
    Ok(())
}

/// Why the written array cannot overlap the ones read.
fn no_overlap(cx: &Context, map: &Map) -> Result<String, Refusal> {
    let f = cx.function;
    let name = |i: usize| format!("`{}`", f.params[i].name);
    let restrict = |i: usize| f.params[i].ty.pointers[0].is_restrict;
    let read_names: Vec<String> = map.reads.iter().map(|&i| name(i)).collect();
    let pair = format!("{} and {}", read_names.join(", "), name(map.out));
    if restrict(map.out) {
        return Ok(format!(
            "{pair} do not overlap: {} is declared `__restrict__`",
            name(map.out)
        ));
    }
    if map.reads.iter().all(|&i| restrict(i)) {
        return Ok(format!(
            "{pair} do not overlap: {} {} declared `__restrict__`",
            read_names.join(", "),
            if read_names.len() == 1 { "is" } else { "are" }
        ));
    }
    read_only::no_alias(cx.file, f, &map.reads, &[map.out], cx.params)
        .map(|evidence| format!("{pair} do not overlap: {evidence}"))
        .map_err(|why| {
            format!("{pair} may overlap ({why}), and the tile would reorder their reads and writes")
                .into()
        })
}

/// The kernel staged through `tile`, with phase `exchanged` run by the
/// thread with `threadIdx.x` and `threadIdx.y` exchanged.
fn rewrite(f: &Function, map: &Map, exchanged: Phase, tile: &Tile) -> Function {
    let at = |row: &str, col: &str| {
        let row = expr(ExprKind::Index(
            Box::new(ident(&tile.name)),
            Box::new(thread(row)),
        ));
        expr(ExprKind::Index(Box::new(row), Box::new(thread(col))))
    };
    // Logical thread (a, b) keeps its value in tile[b][a]; the exchanged
    // phase's thread (a, b) plays (b, a).
    let (load_at, store_at) = match exchanged {
        Phase::Store => (at("y", "x"), at("x", "y")),
        Phase::Load => (at("x", "y"), at("y", "x")),
    };
    let mut load = phase(f, map, Phase::Load, exchanged, &mut |_, value| {
        assign(load_at.clone(), value.clone())
    });
    let mut store = phase(f, map, Phase::Store, exchanged, &mut |target, _| {
        assign(target.clone(), store_at.clone())
    });
    // The loads come before the barrier, which every thread must reach:
    // an early `return` there becomes an `if` around what follows it (the
    // statements it wraps keep their text and comments).
    if map.returns {
        load = without_returns(load);
    }
    // A new phase goes in a block of its own, so that its declarations
    // may repeat the kept phase's.
    if exchanged == Phase::Load || map.returns {
        load = vec![block(load)];
    }
    if exchanged == Phase::Store {
        store = vec![block(store)];
    }
    let mut g = f.clone();
    g.body = vec![tile.decl()];
    g.body.extend(load);
    g.body.push(ast_util::sync());
    g.body.extend(store);
    g
}

/// `threadIdx.d`
fn thread(d: &str) -> Expr {
    expr(ExprKind::Member {
        base: Box::new(ident("threadIdx")),
        field: d.into(),
        arrow: false,
    })
}

/// Phase `which` of the kernel: its body with its store replaced by
/// `store(target, value)`; when it is the `exchanged` phase, with `threadIdx.x` and `threadIdx.y` exchanged (in
/// what it computes, not in `store`'s tile index), as new statements,
/// except the early exits of the store phase that the exchange leaves as
/// they were: the loads' copies of those become `if`s around the loads,
/// so these are the originals, moved with their text and comments.
fn phase(
    f: &Function,
    map: &Map,
    which: Phase,
    exchanged: Phase,
    store: &mut dyn FnMut(&Expr, &Expr) -> Stmt,
) -> Vec<Stmt> {
    let (mut target, mut value) = (map.target.clone(), map.value.clone());
    let mut body = f.body.clone();
    let swapped = which == exchanged;
    if swapped {
        ast_util::swap_thread_xy(&mut target);
        ast_util::swap_thread_xy(&mut value);
        for s in &mut body {
            ast_util::visit_stmt_roots_mut(s, &mut ast_util::swap_thread_xy);
        }
    }
    let new = store(&target, &value);
    for s in &mut body {
        ast_util::visit_stmts_mut(s, &mut |x| {
            if x.meta.id == map.store {
                *x = new.clone();
            }
        });
    }
    if swapped {
        for (s, o) in body.iter_mut().zip(&f.body) {
            if !(which == Phase::Store && early_exit(o).is_some() && s == o) {
                fresh_metas(std::slice::from_mut(s));
            }
        }
    }
    body
}

/// Marks statements as new: none of them is the original's text (their
/// expressions keep theirs, so a macro's use prints as written).
fn fresh_metas(stmts: &mut [Stmt]) {
    for s in stmts {
        ast_util::visit_stmts_mut(s, &mut |x| {
            x.meta = ast_util::meta();
            if let StmtKind::Decl(ds) = &mut x.kind {
                ds.iter_mut().for_each(|d| d.meta = ast_util::meta());
            }
        });
    }
}

/// `stmts` with each `if (c) return;` replaced by `if (!(c)) { … }`
/// around the statements after it.
fn without_returns(stmts: Vec<Stmt>) -> Vec<Stmt> {
    let mut out = Vec::new();
    let mut rest = stmts.into_iter();
    while let Some(s) = rest.next() {
        if let Some(c) = early_exit(&s) {
            let go_on = expr(ExprKind::Unary(UnOp::Not, Box::new(c.clone())));
            out.push(ast_util::if_else(
                go_on,
                without_returns(rest.collect()),
                Vec::new(),
            ));
            break;
        }
        out.push(s);
    }
    out
}

/// A warp's global traffic to one array in one direction.
struct Traffic {
    /// `true` for writes.
    write: bool,
    array: String,
    /// Sectors per warp at worst, summed over the sites (in a per-element
    /// map each runs at most once per warp).
    sectors: u64,
    /// Whether at every site consecutive lanes touch consecutive elements.
    consecutive: bool,
}

/// The global traffic of `kernel`, by array and direction.
fn traffic(prep: &Prepared, kernel: &Kernel, config: Config) -> Vec<Traffic> {
    let mut out: Vec<Traffic> = Vec::new();
    for (i, site) in kernel.sites.iter().enumerate() {
        let array = &kernel.arrays[site.array];
        if !array.is_global() {
            continue;
        }
        let dep = prep.index_dep(i);
        let sectors = transactions(dep, array.footprint(site), &config.hw, config.block);
        let consecutive = dep
            .affine_parts()
            .is_some_and(|(k, _)| k[0] == Coef::Known(1));
        match out
            .iter_mut()
            .find(|t| t.write == site.is_write && t.array == array.name)
        {
            Some(t) => {
                t.sectors += sectors;
                t.consecutive &= consecutive;
            }
            None => out.push(Traffic {
                write: site.is_write,
                array: array.name.clone(),
                sectors,
                consecutive,
            }),
        }
    }
    out
}

fn total(t: &[Traffic]) -> u64 {
    t.iter().map(|x| x.sectors).sum()
}

/// The accesses whose sectors changed, in words.
fn changes(before: &[Traffic], after: &[Traffic]) -> Vec<String> {
    after
        .iter()
        .filter_map(|a| {
            let b = before
                .iter()
                .find(|b| b.write == a.write && b.array == a.array)?;
            let what = if a.write { "writes to" } else { "reads of" };
            let now = if a.consecutive && !b.consecutive {
                " now coalesced"
            } else {
                ""
            };
            (a.sectors != b.sectors).then(|| {
                format!(
                    "{what} `{}`{now}: {} → {} sectors per warp",
                    a.array, b.sectors, a.sectors
                )
            })
        })
        .collect()
}
