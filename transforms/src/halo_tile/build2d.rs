//! Writing the 2-D halo tile: a static `(32 + 2Ry) × (32 + 2Rx)` tile
//! loaded by a strided loop over its rows and columns, each position
//! under the conditions of both axes ([`super::build::axis_reads`]), the
//! window loops reading the tile, and the whole rewritten body under
//! `blockDim.x <= 32 && blockDim.y <= 32 && blockDim.z == 1`.

use copper::cuda::ast::{BaseType, BinOp, CastStyle, Expr, ExprKind, Function, Type};

use super::build::Tiled;
use super::build::{all, axis_reads, block_shape, long_long, minus_first, plus_first, strided};
use super::window2d::Window2d;
use super::MAX_SIDE;
use crate::ast_util::{self, bin, decl, expr, fresh, ident, if_else, index, int};
use crate::coop_load::builtin;

/// The tile's rows and columns: the largest block's plus the halos, the
/// rows padded to 16 words past a multiple of 32, so that the two rows of
/// tile a warp of a 16-wide block reads fall in different banks (a 32-wide
/// block reads one row per warp, conflict-free whatever the padding).
pub(crate) fn tile_dims(w: &Window2d) -> [u64; 2] {
    let cols = MAX_SIDE + w.cols.halo();
    [MAX_SIDE + w.rows.halo(), cols + (48 - cols % 32) % 32]
}

/// `(int)e`: a position the original computes as an `int`.
fn as_int(e: Expr) -> Expr {
    expr(ExprKind::Cast(
        CastStyle::C,
        Type::scalar(BaseType::Int),
        Box::new(e),
    ))
}

/// `tile[r][c]`.
fn at2(tile: &str, r: Expr, c: Expr) -> Expr {
    expr(ExprKind::Index(Box::new(index(tile, r)), Box::new(c)))
}

/// The kernel `f` with the reads of `array` (elements of type `elem`) in
/// the window loops served from a 2-D halo tile.
pub(crate) fn rewrite(f: &Function, array: &str, elem: Type, w: &Window2d) -> Function {
    let mut taken = ast_util::names_in(f);
    let mut name = |s: &str| fresh(&format!("{array}_{s}"), &mut taken);
    let (tile, by, bx, ty, tx, jy, jx) = (
        name("halo"),
        name("by"),
        name("bx"),
        name("ty"),
        name("tx"),
        name("jy"),
        name("jx"),
    );
    let (rows, cols) = (&w.rows, &w.cols);
    let (reads_y, when_y) = axis_reads(rows, &by, &builtin("blockDim", "y"), &jy);
    let (reads_x, when_x) = axis_reads(cols, &bx, &builtin("blockDim", "x"), &jx);
    let mut block_reads = w.uniform.clone();
    block_reads.extend(reads_y);
    block_reads.extend(reads_x);
    let mut when = when_y;
    when.extend(when_x);

    // The element the original reads at a position: in the window of a
    // thread that reads it, so its `int` value is the original's.
    let element = bin(
        BinOp::Add,
        bin(
            BinOp::Mul,
            w.row_key.at(as_int(ident(&jy))),
            w.stride.clone(),
        ),
        w.col_key.at(as_int(ident(&jx))),
    );
    let store = ast_util::assign(at2(&tile, ident(&ty), ident(&tx)), index(array, element));
    let long = || Type::scalar(BaseType::LongLong);
    let column = vec![
        decl(
            long(),
            &jx,
            Some(plus_first(bin(BinOp::Add, ident(&bx), ident(&tx)), cols)),
        ),
        match all(when) {
            Some(c) => if_else(c, vec![store], Vec::new()),
            None => store,
        },
    ];
    let row = vec![
        decl(
            long(),
            &jy,
            Some(plus_first(bin(BinOp::Add, ident(&by), ident(&ty)), rows)),
        ),
        strided(
            &tx,
            builtin("threadIdx", "x"),
            builtin("blockDim", "x"),
            cols.halo(),
            column,
        ),
    ];
    let load = strided(
        &ty,
        builtin("threadIdx", "y"),
        builtin("blockDim", "y"),
        rows.halo(),
        row,
    );
    let base = |b: &str, i: &str, d: &str| {
        decl(
            long(),
            b,
            Some(bin(
                BinOp::Sub,
                long_long(ident(i)),
                builtin("threadIdx", d),
            )),
        )
    };
    let mut setup = vec![
        ast_util::shared_decl(elem, &tile, tile_dims(w).map(int).to_vec()),
        base(&by, &rows.index, "y"),
        base(&bx, &cols.index, "x"),
    ];
    match all(block_reads) {
        Some(c) => setup.push(if_else(c, vec![load], Vec::new())),
        None => setup.push(load),
    }
    // `threadIdx.y + (dy - Sy)`: `dy - Sy` is not negative, so the
    // unsigned sum does not wrap.
    let at_tile = at2(
        &tile,
        bin(
            BinOp::Add,
            builtin("threadIdx", "y"),
            minus_first(ident(&rows.counter), rows),
        ),
        bin(
            BinOp::Add,
            builtin("threadIdx", "x"),
            minus_first(ident(&cols.counter), cols),
        ),
    );
    let shape = block_shape([(BinOp::Le, MAX_SIDE), (BinOp::Le, MAX_SIDE), (BinOp::Eq, 1)]);
    Tiled {
        at: w.place.at,
        setup,
        target: w.inner,
        reads: &w.reads,
        at_tile: &at_tile,
    }
    .kernel(f, shape)
}
