//! Writing the 2-D halo tile: a static `(32 + 2Ry) × (32 + 2Rx)` tile
//! loaded by a strided loop over its rows and columns, each position
//! under the conditions of both axes ([`super::build::axis_reads`]), the
//! window loops reading the tile, and the whole rewritten body under
//! `blockDim.x <= 32 && blockDim.y <= 32 && blockDim.z == 1`.

use copper::cuda::ast::{BaseType, BinOp, Expr, ExprKind, Function, Type};

use super::build::Tiled;
use super::build::{
    all, block_reads, block_shape, key_at, plus_first, strided, tile_at, tile_reads,
};
use super::key::Key;
use super::window2d::Window2d;
use super::MAX_SIDE;
use crate::ast_util::{self, bin, decl, expr, fresh, ident, if_else, index, int, long_long};
use crate::coop_load::builtin;

/// The tile's rows and columns: the largest block's plus the halos, the
/// rows padded to 16 words past a multiple of 32, so that the two rows of
/// tile a warp of a 16-wide block reads fall in different banks (a 32-wide
/// block reads one row per warp, conflict-free whatever the padding).
pub(crate) fn tile_dims(w: &Window2d) -> [u64; 2] {
    let cols = MAX_SIDE + w.cols.halo();
    [MAX_SIDE + w.rows.halo(), cols + (48 - cols % 32) % 32]
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
    let bdim = |d: &str| builtin("blockDim", d);
    let mut block = w.uniform.clone();
    block.extend(block_reads(rows, &by, &bdim("y")));
    block.extend(block_reads(cols, &bx, &bdim("x")));
    let when = tile_reads(
        &w.served.boxes,
        &[(rows, bdim("y"), (&jy, &ty)), (cols, bdim("x"), (&jx, &tx))],
    );

    // The element the original reads at a position: in the window of a
    // thread that reads it, so its `int` value is the original's (for an
    // index written as an offset, `idx - w`, the same number computed in
    // `long long`).
    // A clamped row written out (`yu * w` with `int yu = max(y - 1, 0);`)
    // multiplies in `long long` too: the reads of its rows need not all
    // compute the same product.
    let row = match &w.row_key {
        k @ Key::Clamp { .. } if k.written() => long_long(key_at(k, &jy)),
        k => key_at(k, &jy),
    };
    let element = bin(
        BinOp::Add,
        bin(BinOp::Mul, row, w.stride.clone()),
        key_at(&w.col_key, &jx),
    );
    let store = ast_util::assign(at2(&tile, ident(&ty), ident(&tx)), index(array, element));
    let long = || Type::scalar(BaseType::LongLong);
    let column = vec![
        decl(
            long(),
            &jx,
            Some(plus_first(bin(BinOp::Add, ident(&bx), ident(&tx)), cols)),
        ),
        match when {
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
    match all(block) {
        Some(c) => setup.push(if_else(c, vec![load], Vec::new())),
        None => setup.push(load),
    }
    let reads: Vec<(Expr, Expr)> = w
        .served
        .reads
        .iter()
        .filter_map(|(r, o)| {
            let [oy, ox] = o.as_slice() else {
                return None;
            };
            let y = tile_at(builtin("threadIdx", "y"), oy, rows);
            Some((
                r.clone(),
                at2(&tile, y, tile_at(builtin("threadIdx", "x"), ox, cols)),
            ))
        })
        .collect();
    let shape = block_shape([(BinOp::Le, MAX_SIDE), (BinOp::Le, MAX_SIDE), (BinOp::Eq, 1)]);
    Tiled {
        at: w.place.at,
        setup,
        targets: &w.served.targets,
        reads: &reads,
    }
    .kernel(f, shape)
}
