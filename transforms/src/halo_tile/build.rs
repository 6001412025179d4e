//! Writing the halo tile: the guarded cooperative load before the code
//! that holds the window loop, one barrier, the loop reading the tile,
//! and the whole rewritten body under a test of the block shape with the
//! original body on the other side.

use std::collections::BTreeSet;

use copper::cuda::ast::{
    BaseType, BinOp, CastStyle, Expr, ExprKind, Function, NodeId, Stmt, StmtKind, Type, UnOp,
};

use super::key::Key;
use super::window::{Axis, Offset, Window};
use super::MAX_BLOCK;
use crate::ast_util::{
    self, bin, block, decl, expr, fresh, ident, if_else, index, int, long_long, stmt, sync,
};
use crate::coop_load::{builtin, visit_target_mut};

/// `e + k`, `e - |k|` for a negative `k`, `e` for 0.
fn offset(e: Expr, k: i64) -> Expr {
    match k {
        0 => e,
        k if k > 0 => bin(BinOp::Add, e, int(k.unsigned_abs())),
        k => bin(BinOp::Sub, e, int(k.unsigned_abs())),
    }
}

/// `e - S` for the axis' first offset `S`, with `S` as written when
/// it is `-X` (`e + R` for `-R`).
pub(crate) fn minus_first(e: Expr, a: &Axis) -> Expr {
    match &a.start.kind {
        ExprKind::Unary(UnOp::Neg, x) if a.first < 0 => bin(BinOp::Add, e, (**x).clone()),
        _ => offset(e, -a.first),
    }
}

/// `e + S`, with `S` as written when it is `-X` (`e - R` for `-R`).
pub(crate) fn plus_first(e: Expr, a: &Axis) -> Expr {
    match &a.start.kind {
        ExprKind::Unary(UnOp::Neg, x) if a.first < 0 => bin(BinOp::Sub, e, (**x).clone()),
        _ => offset(e, a.first),
    }
}

/// The tile's length: the largest block's threads plus the halo.
pub(crate) fn tile_len(w: &Window) -> u64 {
    MAX_BLOCK + w.axis.halo()
}

/// The conditions, the same in every thread of the block whose first
/// thread is at `base` with `bdim` threads along axis `a`, under which
/// some thread of the block reaches the reads.
pub(crate) fn block_reads(a: &Axis, base: &str, bdim: &Expr) -> Vec<Expr> {
    let mut found = Vec::new();
    // Threads `i >= m` only: some thread of the block is one (`m < base +
    // blockDim.x`, `m < n`).
    for m in &a.from {
        found.push(bin(
            BinOp::Gt,
            bin(BinOp::Add, ident(base), bdim.clone()),
            m.clone(),
        ));
        for n in &a.below {
            found.push(bin(BinOp::Lt, m.clone(), n.clone()));
        }
    }
    for n in &a.below {
        found.push(bin(BinOp::Lt, ident(base), n.clone()));
    }
    found
}

/// The conditions under which the original reads position `j` (tile
/// position `t`) along axis `a` through offsets `s` to `e` (a box of
/// [`super::window::Served::boxes`]), for a block with `bdim` threads
/// along the axis that passes [`block_reads`]: `j` is in the window
/// `[i + s, i + e]` of a thread `i` of the block that reaches the reads,
/// and within the reads' bounds.
pub(crate) fn position_reads(
    a: &Axis,
    (s, e): (i64, i64),
    bdim: &Expr,
    (j, t): (&str, &str),
) -> Vec<Expr> {
    let mut when: Vec<Expr> = Vec::new();
    // A box narrower than the tile: `j` in `[base + s, base + bdim - 1 + e]`.
    if s > a.first {
        when.push(bin(BinOp::Ge, ident(t), int(s.abs_diff(a.first))));
    }
    if e < a.last {
        when.push(bin(BinOp::Lt, ident(t), offset(bdim.clone(), e - a.first)));
    }
    let minus_s = |x: Expr| match s == a.first {
        true => minus_first(x, a),
        false => offset(x, -s),
    };
    for m in &a.from {
        when.push(bin(BinOp::Ge, minus_s(ident(j)), m.clone()));
    }
    for n in &a.below {
        // `j < n` among the reads' bounds implies `j - e < n` for `e >= 0`.
        let implied = e >= 0
            && a.guard
                .iter()
                .any(|(op, x)| *op == BinOp::Lt && ast_util::equiv_expr(x, n));
        if !implied {
            when.push(bin(BinOp::Lt, offset(ident(j), -e), n.clone()));
        }
    }
    for (op, x) in &a.guard {
        when.push(bin(*op, ident(j), x.clone()));
    }
    when
}

/// The condition under which the original reads the tile's position
/// along the axes `axes` (rows first), each with its names `(j, t)` and
/// threads `bdim`: in one of the boxes, within each axis' conditions.
pub(crate) fn tile_reads(
    boxes: &[Vec<(i64, i64)>],
    axes: &[(&Axis, Expr, (&str, &str))],
) -> Option<Expr> {
    let in_box = |b: &Vec<(i64, i64)>| {
        let conds: Vec<Expr> = axes
            .iter()
            .zip(b)
            .flat_map(|((a, bdim, names), range)| position_reads(a, *range, bdim, *names))
            .collect();
        all(conds)
    };
    let mut any = None;
    for b in boxes {
        // A box with no conditions covers every position.
        let c = in_box(b)?;
        any = Some(match any {
            None => c,
            Some(x) => bin(BinOp::Or, x, c),
        });
    }
    any
}

/// The tile position along axis `a` of read offset `o` for the thread
/// at `thread`: `thread + (k - S)` for a counter `k`, `thread + (o - S)`
/// for a constant; `o - S` is not negative, so the unsigned sum does
/// not wrap.
pub(crate) fn tile_at(thread: Expr, o: &Offset, a: &Axis) -> Expr {
    match o {
        Offset::Counter(k) => bin(BinOp::Add, thread, minus_first(ident(k), a)),
        Offset::Const(c) => offset(thread, c - a.first),
    }
}

/// The conjunction of `conds`, `None` for none.
pub(crate) fn all(conds: Vec<Expr>) -> Option<Expr> {
    conds.into_iter().reduce(|a, b| bin(BinOp::And, a, b))
}

/// `(int)e`: a position the original computes as an `int`.
pub(crate) fn as_int(e: Expr) -> Expr {
    expr(ExprKind::Cast(
        CastStyle::C,
        Type::scalar(BaseType::Int),
        Box::new(e),
    ))
}

/// What key `key` makes of the position in the `long long` `j`: the key
/// of `(int)j`, the `int` the original computes at a position some thread
/// reads; for an index written as an offset (`idx - w`), `j` itself, the
/// number the original computes, without overflow, in `long long`.
pub(crate) fn key_at(key: &Key, j: &str) -> Expr {
    match key {
        Key::Offset => ident(j),
        k => k.at(as_int(ident(j))),
    }
}

/// The kernel `f` with the reads of `array` (elements of type `elem`)
/// that window `w` describes served from a halo tile.
pub(crate) fn rewrite(f: &Function, array: &str, elem: Type, w: &Window) -> Function {
    let mut taken = ast_util::names_in(f);
    let tile = fresh(&format!("{array}_halo"), &mut taken);
    let base = fresh(&format!("{array}_base"), &mut taken);
    let t = fresh(&format!("{array}_t"), &mut taken);
    let j = fresh(&format!("{array}_j"), &mut taken);
    let tid = || builtin("threadIdx", "x");
    let bdim = || builtin("blockDim", "x");
    let a = &w.axis;
    let halo = a.halo();

    // Which elements the original reads: those of the window of some
    // thread of the block that reaches the reads, within the reads'
    // bounds. What is the same in every thread is tested once, around the
    // load.
    let mut block_reads_x: Vec<Expr> = w.uniform.clone();
    block_reads_x.extend(block_reads(a, &base, &bdim()));
    let when = tile_reads(&w.served.boxes, &[(a, bdim(), (&j, &t))]);
    // The element the original reads at position `j`: `a[j]` for the
    // position itself (an index of any width), else what the reads' key
    // (`min(max(j, 0), n - 1)`) makes of it.
    let element = match &w.key {
        Key::Position => ident(&j),
        k => key_at(k, &j),
    };
    let store = ast_util::assign(index(&tile, ident(&t)), index(array, element));
    let load_body = vec![
        decl(
            Type::scalar(BaseType::LongLong),
            &j,
            Some(plus_first(bin(BinOp::Add, ident(&base), ident(&t)), a)),
        ),
        match when {
            Some(c) => if_else(c, vec![store], Vec::new()),
            None => store,
        },
    ];
    let load = strided(&t, tid(), bdim(), halo, load_body);
    let mut setup = vec![
        ast_util::shared_decl(elem, &tile, vec![int(tile_len(w))]),
        decl(
            Type::scalar(BaseType::LongLong),
            &base,
            Some(bin(BinOp::Sub, long_long(ident(&a.index)), tid())),
        ),
    ];
    match all(block_reads_x) {
        Some(c) => setup.push(if_else(c, vec![load], Vec::new())),
        None => setup.push(load),
    }
    let reads: Vec<(Expr, Expr)> = w
        .served
        .reads
        .iter()
        .filter_map(|(r, o)| Some((r.clone(), index(&tile, tile_at(tid(), o.first()?, a)))))
        .collect();
    let shape = block_shape([(BinOp::Le, MAX_BLOCK), (BinOp::Eq, 1), (BinOp::Eq, 1)]);
    let tiled = Tiled {
        at: w.place.at,
        setup,
        targets: &w.served.targets,
        reads: &reads,
    };
    tiled.kernel(f, shape)
}

/// `blockDim.x op v && blockDim.y op' v' && blockDim.z op'' v''` for the
/// bounds `dims` on x, y and z.
pub(crate) fn block_shape(dims: [(BinOp, u64); 3]) -> Expr {
    let dim = |d: &str, (op, v): (BinOp, u64)| bin(op, builtin("blockDim", d), int(v));
    let [x, y, z] = dims;
    bin(
        BinOp::And,
        bin(BinOp::And, dim("x", x), dim("y", y)),
        dim("z", z),
    )
}

/// `for (int t = from; t < bdim + halo; t += bdim) body`: the positions
/// `from`, `from + bdim`, … of a tile `halo` longer than the block.
pub(crate) fn strided(t: &str, from: Expr, bdim: Expr, halo: u64, body: Vec<Stmt>) -> Stmt {
    stmt(StmtKind::For {
        init: Some(Box::new(decl(Type::scalar(BaseType::Int), t, Some(from)))),
        cond: Some(bin(
            BinOp::Lt,
            ident(t),
            offset(bdim.clone(), i64::try_from(halo).unwrap_or(i64::MAX)),
        )),
        step: Some(expr(ExprKind::Assign(
            Some(BinOp::Add),
            Box::new(ident(t)),
            Box::new(bdim),
        ))),
        body: Box::new(block(body)),
    })
}

/// A kernel whose window reads come from a tile.
pub(crate) struct Tiled<'a> {
    /// The top-level statement the tile is loaded before.
    pub(crate) at: usize,
    /// The tile's declaration and its guarded load.
    pub(crate) setup: Vec<Stmt>,
    /// The loop whose body holds the reads the tile serves, or the
    /// statements that hold them.
    pub(crate) targets: &'a [NodeId],
    /// The reads of the array the tile serves, as written, each with the
    /// tile's element it reads.
    pub(crate) reads: &'a [(Expr, Expr)],
}

impl Tiled<'_> {
    /// Kernel `f` with the tile loaded before its statement `at` (one
    /// barrier after the load) and the reads in the targets replaced (in
    /// a loop, the locals only they used dropped), run when `shape` holds
    /// of the block; the original body otherwise.
    pub(crate) fn kernel(self, f: &Function, shape: Expr) -> Function {
        let mut fast: Vec<Stmt> = f.body[..self.at].to_vec();
        fast.extend(self.setup);
        fast.push(sync());
        let replace = |e: &mut Expr| {
            for (read, at_tile) in self.reads {
                ast_util::replace_expr(e, read, at_tile)
            }
        };
        // The locals the reads written out named in their indices (`int
        // left = i > 0 ? i - 1 : 0;`), which the tile may leave unused.
        let mut named = BTreeSet::new();
        for s in &f.body[self.at..] {
            let mut s = s.clone();
            for &target in self.targets {
                visit_target_mut(&mut s, target, &mut |l| match &mut l.kind {
                    // A loop's header does not read the tile.
                    StmtKind::For { body, .. } => {
                        ast_util::visit_stmt_roots_mut(body, &mut |e| replace(e));
                        if let StmtKind::Block(stmts) = &mut body.kind {
                            // A local clamped by statements (`xx = xx < 0 ?
                            // 0 : xx;`) that the tile leaves unused goes
                            // with its updates.
                            *stmts = super::normalize::fold_updates(std::mem::take(stmts));
                            drop_unused_locals(stmts, None);
                        }
                    }
                    _ => {
                        for (read, _) in self.reads {
                            ast_util::visit_expr(read, &mut |e| {
                                if let ExprKind::Ident(n) = &e.kind {
                                    named.insert(n.clone());
                                }
                            });
                        }
                        ast_util::visit_stmt_roots_mut(l, &mut |e| replace(e))
                    }
                });
            }
            fast.push(s);
        }
        if !named.is_empty() {
            drop_unused_within(&mut fast, &named);
        }
        Function {
            body: vec![if_else(shape, fast, f.body.clone())],
            ..f.clone()
        }
    }
}

/// Drops from `stmts` and the blocks in them the declarations of `names`
/// that nothing in their block uses any more.
fn drop_unused_within(stmts: &mut Vec<Stmt>, names: &BTreeSet<String>) {
    for s in stmts.iter_mut() {
        match &mut s.kind {
            StmtKind::Block(b) => drop_unused_within(b, names),
            StmtKind::If { then, els, .. } => {
                for x in std::iter::once(then).chain(els.as_mut()) {
                    if let StmtKind::Block(b) = &mut x.kind {
                        drop_unused_within(b, names);
                    }
                }
            }
            _ => {}
        }
    }
    drop_unused_locals(stmts, Some(names));
}

/// Drops from the statements `stmts` the declarations of locals (of
/// `only`, when given) nothing in them uses any more (`int r =
/// min(max(row + dy, 0), h - 1);` once the read of `in[r * w + c]` is the
/// tile's), their values computed without side effects.
fn drop_unused_locals(stmts: &mut Vec<Stmt>, only: Option<&BTreeSet<String>>) {
    let used = |stmts: &[Stmt], name: &str| {
        let mut found = false;
        for s in stmts {
            ast_util::visit_stmt_exprs(s, &mut |e| {
                found |= matches!(&e.kind, ExprKind::Ident(n) if n == name);
            });
        }
        found
    };
    let mut at = stmts.len();
    while at > 0 {
        at -= 1;
        let StmtKind::Decl(ds) = &stmts[at].kind else {
            continue;
        };
        let dead = ds.iter().all(|d| {
            let pure = match &d.init {
                Some(copper::cuda::ast::Init::Expr(e)) => ast_util::is_pure(e),
                None => true,
                Some(_) => false,
            };
            let chosen = only.is_none_or(|names| names.contains(&d.name));
            chosen && pure && d.dims.is_empty() && !used(stmts, &d.name)
        });
        if dead {
            stmts.remove(at);
        }
    }
}
