//! Writing the halo tile: the guarded cooperative load before the code
//! that holds the window loop, one barrier, the loop reading the tile,
//! and the whole rewritten body under a test of the block shape with the
//! original body on the other side.

use copper::cuda::ast::{
    BaseType, BinOp, CastStyle, Expr, ExprKind, Function, Stmt, StmtKind, Type, UnOp,
};

use super::window::Window;
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

/// `e - S` for the window's first offset `S`, with `S` as written when
/// it is `-X` (`e + R` for `-R`).
fn minus_first(e: Expr, w: &Window) -> Expr {
    match &w.start.kind {
        ExprKind::Unary(UnOp::Neg, x) if w.first < 0 => bin(BinOp::Add, e, (**x).clone()),
        _ => offset(e, -w.first),
    }
}

/// `e + S`, with `S` as written when it is `-X` (`e - R` for `-R`).
fn plus_first(e: Expr, w: &Window) -> Expr {
    match &w.start.kind {
        ExprKind::Unary(UnOp::Neg, x) if w.first < 0 => bin(BinOp::Sub, e, (**x).clone()),
        _ => offset(e, w.first),
    }
}

/// `(long long)e`.
fn long_long(e: Expr) -> Expr {
    expr(ExprKind::Cast(
        CastStyle::C,
        Type::scalar(BaseType::LongLong),
        Box::new(e),
    ))
}

/// The tile's length: the largest block's threads plus the halo.
pub(crate) fn tile_len(w: &Window) -> u64 {
    MAX_BLOCK + w.last.abs_diff(w.first)
}

/// The kernel `f` with the reads of `array` (elements of type `elem`) in
/// loop `target` served from a halo tile.
pub(crate) fn rewrite(
    f: &Function,
    target: copper::cuda::ast::NodeId,
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
    let halo = w.last.abs_diff(w.first);

    // Which elements the original reads: those of the window of some
    // thread of the block that reaches the loop, within the reads' bounds.
    // What is the same in every thread is tested once, around the load.
    let mut block_reads: Vec<Expr> = w.uniform.clone();
    let mut when: Vec<Expr> = Vec::new();
    // Threads `i >= m` only: some thread of the block is one (`m < base +
    // blockDim.x`, `m < n`), and `j` is in the window of one (`j - S >= m`).
    for m in &w.from {
        block_reads.push(bin(
            BinOp::Gt,
            bin(BinOp::Add, ident(&base), bdim()),
            m.clone(),
        ));
        for n in &w.below {
            block_reads.push(bin(BinOp::Lt, m.clone(), n.clone()));
        }
        when.push(bin(BinOp::Ge, minus_first(ident(&j), w), m.clone()));
    }
    for n in &w.below {
        block_reads.push(bin(BinOp::Lt, ident(&base), n.clone()));
        // `j < n` among the reads' bounds implies `j - E < n` for `E >= 0`.
        let implied = w.last >= 0
            && w.guard
                .iter()
                .any(|(op, e)| *op == BinOp::Lt && ast_util::equiv_expr(e, n));
        if !implied {
            when.push(bin(BinOp::Lt, offset(ident(&j), -w.last), n.clone()));
        }
    }
    for (op, e) in &w.guard {
        when.push(bin(*op, ident(&j), e.clone()));
    }
    let store = ast_util::assign(index(&tile, ident(&t)), index(array, ident(&j)));
    let load_body = vec![
        decl(
            Type::scalar(BaseType::LongLong),
            &j,
            Some(plus_first(bin(BinOp::Add, ident(&base), ident(&t)), w)),
        ),
        match when.into_iter().reduce(|a, b| bin(BinOp::And, a, b)) {
            Some(c) => if_else(c, vec![store], Vec::new()),
            None => store,
        },
    ];
    let load = stmt(StmtKind::For {
        init: Some(Box::new(decl(Type::scalar(BaseType::Int), &t, Some(tid())))),
        cond: Some(bin(
            BinOp::Lt,
            ident(&t),
            offset(bdim(), i64::try_from(halo).unwrap_or(i64::MAX)),
        )),
        step: Some(expr(ExprKind::Assign(
            Some(BinOp::Add),
            Box::new(ident(&t)),
            Box::new(bdim()),
        ))),
        body: Box::new(block(load_body)),
    });

    let at = w.place.at;
    let mut fast: Vec<Stmt> = f.body[..at].to_vec();
    fast.push(ast_util::shared_decl(elem, &tile, vec![int(tile_len(w))]));
    fast.push(decl(
        Type::scalar(BaseType::LongLong),
        &base,
        Some(bin(BinOp::Sub, long_long(ident(&w.index)), tid())),
    ));
    match block_reads.into_iter().reduce(|a, b| bin(BinOp::And, a, b)) {
        Some(c) => fast.push(if_else(c, vec![load], Vec::new())),
        None => fast.push(load),
    }
    fast.push(sync());
    // `threadIdx.x + (k - S)`: `k - S` is not negative, so the unsigned
    // sum does not wrap.
    let at_tile = index(
        &tile,
        bin(BinOp::Add, tid(), minus_first(ident(&w.counter), w)),
    );
    let reads: Vec<Expr> = std::iter::once(w.element())
        .chain(w.copies.iter().map(|c| ident(c)))
        .map(|x| index(array, x))
        .collect();
    for s in &f.body[at..] {
        let mut s = s.clone();
        visit_target_mut(&mut s, target, &mut |l| {
            if let StmtKind::For { body, .. } = &mut l.kind {
                ast_util::visit_stmt_roots_mut(body, &mut |e| {
                    for read in &reads {
                        ast_util::replace_expr(e, read, &at_tile)
                    }
                });
            }
        });
        fast.push(s);
    }
    let dim = |d: &str, op: BinOp, v: u64| bin(op, builtin("blockDim", d), int(v));
    let shape = bin(
        BinOp::And,
        bin(
            BinOp::And,
            dim("x", BinOp::Le, MAX_BLOCK),
            dim("y", BinOp::Eq, 1),
        ),
        dim("z", BinOp::Eq, 1),
    );
    Function {
        body: vec![if_else(shape, fast, f.body.clone())],
        ..f.clone()
    }
}
