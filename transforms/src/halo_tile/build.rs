//! Writing the halo tile: the guarded cooperative load before the code
//! that holds the window loop, one barrier, the loop reading the tile,
//! and the whole rewritten body under a test of the block shape with the
//! original body on the other side.

use copper::cuda::ast::{
    BaseType, BinOp, CastStyle, Expr, ExprKind, Function, NodeId, Stmt, StmtKind, Type, UnOp,
};

use super::window::{Axis, Window};
use super::MAX_BLOCK;
use crate::ast_util::{
    self, bin, block, decl, expr, fresh, ident, if_else, index, int, stmt, sync,
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

/// `(long long)e`.
pub(crate) fn long_long(e: Expr) -> Expr {
    expr(ExprKind::Cast(
        CastStyle::C,
        Type::scalar(BaseType::LongLong),
        Box::new(e),
    ))
}

/// The tile's length: the largest block's threads plus the halo.
pub(crate) fn tile_len(w: &Window) -> u64 {
    MAX_BLOCK + w.axis.halo()
}

/// Which positions along axis `a` the original reads, for a block whose
/// first thread is at `base` with `bdim` threads along the axis: the
/// conditions the whole block shares (some thread of the block reaches
/// the loop) and those on position `j` (it is in the window of such a
/// thread, within the reads' bounds).
pub(crate) fn axis_reads(a: &Axis, base: &str, bdim: &Expr, j: &str) -> (Vec<Expr>, Vec<Expr>) {
    let mut block_reads: Vec<Expr> = Vec::new();
    let mut when: Vec<Expr> = Vec::new();
    // Threads `i >= m` only: some thread of the block is one (`m < base +
    // blockDim.x`, `m < n`), and `j` is in the window of one (`j - S >= m`).
    for m in &a.from {
        block_reads.push(bin(
            BinOp::Gt,
            bin(BinOp::Add, ident(base), bdim.clone()),
            m.clone(),
        ));
        for n in &a.below {
            block_reads.push(bin(BinOp::Lt, m.clone(), n.clone()));
        }
        when.push(bin(BinOp::Ge, minus_first(ident(j), a), m.clone()));
    }
    for n in &a.below {
        block_reads.push(bin(BinOp::Lt, ident(base), n.clone()));
        // `j < n` among the reads' bounds implies `j - E < n` for `E >= 0`.
        let implied = a.last >= 0
            && a.guard
                .iter()
                .any(|(op, e)| *op == BinOp::Lt && ast_util::equiv_expr(e, n));
        if !implied {
            when.push(bin(BinOp::Lt, offset(ident(j), -a.last), n.clone()));
        }
    }
    for (op, e) in &a.guard {
        when.push(bin(*op, ident(j), e.clone()));
    }
    (block_reads, when)
}

/// The conjunction of `conds`, `None` for none.
pub(crate) fn all(conds: Vec<Expr>) -> Option<Expr> {
    conds.into_iter().reduce(|a, b| bin(BinOp::And, a, b))
}

/// The kernel `f` with the reads of `array` (elements of type `elem`) in
/// loop `target` served from a halo tile.
pub(crate) fn rewrite(
    f: &Function,
    target: NodeId,
    array: &str,
    elem: Type,
    w: &Window,
) -> Function {
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
    // thread of the block that reaches the loop, within the reads' bounds.
    // What is the same in every thread is tested once, around the load.
    let (reads_x, when) = axis_reads(a, &base, &bdim(), &j);
    let mut block_reads: Vec<Expr> = w.uniform.clone();
    block_reads.extend(reads_x);
    let store = ast_util::assign(index(&tile, ident(&t)), index(array, ident(&j)));
    let load_body = vec![
        decl(
            Type::scalar(BaseType::LongLong),
            &j,
            Some(plus_first(bin(BinOp::Add, ident(&base), ident(&t)), a)),
        ),
        match all(when) {
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
    match all(block_reads) {
        Some(c) => setup.push(if_else(c, vec![load], Vec::new())),
        None => setup.push(load),
    }
    // `threadIdx.x + (k - S)`: `k - S` is not negative, so the unsigned
    // sum does not wrap.
    let at_tile = index(
        &tile,
        bin(BinOp::Add, tid(), minus_first(ident(&a.counter), a)),
    );
    let reads: Vec<Expr> = std::iter::once(a.element())
        .chain(w.copies.iter().map(|c| ident(c)))
        .map(|x| index(array, x))
        .collect();
    let shape = block_shape([(BinOp::Le, MAX_BLOCK), (BinOp::Eq, 1), (BinOp::Eq, 1)]);
    let tiled = Tiled {
        at: w.place.at,
        setup,
        target,
        reads: &reads,
        at_tile: &at_tile,
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
    /// The loop whose reads the tile serves.
    pub(crate) target: NodeId,
    /// The reads of the array the tile serves, as written.
    pub(crate) reads: &'a [Expr],
    /// The tile's element each of them reads.
    pub(crate) at_tile: &'a Expr,
}

impl Tiled<'_> {
    /// Kernel `f` with the tile loaded before its statement `at` (one
    /// barrier after the load) and the reads in the loop replaced, run
    /// when `shape` holds of the block; the original body otherwise.
    pub(crate) fn kernel(self, f: &Function, shape: Expr) -> Function {
        let mut fast: Vec<Stmt> = f.body[..self.at].to_vec();
        fast.extend(self.setup);
        fast.push(sync());
        for s in &f.body[self.at..] {
            let mut s = s.clone();
            visit_target_mut(&mut s, self.target, &mut |l| {
                if let StmtKind::For { body, .. } = &mut l.kind {
                    ast_util::visit_stmt_roots_mut(body, &mut |e| {
                        for read in self.reads {
                            ast_util::replace_expr(e, read, self.at_tile)
                        }
                    });
                }
            });
            fast.push(s);
        }
        Function {
            body: vec![if_else(shape, fast, f.body.clone())],
            ..f.clone()
        }
    }
}
