//! The one-warp-per-row kernel built from a matched row loop (the shape
//! and the proof are in the parent module's documentation).

use copper::cuda::ast::{
    BaseType, BinOp, CastStyle, Expr, ExprKind, Function, Stmt, StmtKind, Type,
};

use super::{Fold, RowLoop};
use crate::ast_util::{self, bin, block, decl, expr, ident, if_else, int, stmt};

/// The names the rewrite declares.
struct Names {
    lane: String,
    k: String,
    j: String,
}

/// `base.field`.
fn member(base: &str, field: &str) -> Expr {
    expr(ExprKind::Member {
        base: Box::new(ident(base)),
        field: field.into(),
        arrow: false,
    })
}

/// `0xffffffff`, the full warp's mask.
fn full_mask() -> Expr {
    expr(ExprKind::Int {
        value: 0xffff_ffff,
        text: "0xffffffff".into(),
    })
}

/// Whether `e` is a literal zero (`0`, `0.0f`, `0.f`, `0.0`).
fn is_zero(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Int { value, .. } => *value == 0,
        ExprKind::Float(text) => text
            .trim_end_matches(['f', 'F'])
            .parse::<f64>()
            .is_ok_and(|v| v == 0.0),
        ExprKind::Cast(_, _, x) => is_zero(x),
        _ => false,
    }
}

/// Which rows a warp takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Route {
    /// The launch is kept: each warp takes its threads' 32 rows, one after
    /// the other.
    ThreadsRows,
    /// The grid has 32 times the blocks in x: each warp takes one row,
    /// `(global x index) / 32`.
    OneRow,
}

/// `f` with row loop `r` run by whole warps as `route` says when
/// `blockDim.x` is a multiple of 32; the original body otherwise (for
/// [`Route::OneRow`], in the first 1/32 of the blocks in x, the ones the
/// original launch had), only with `fallback`: without it, the warp path
/// alone, whose accesses the description reports.
pub(super) fn rewritten(f: &Function, r: &RowLoop, route: Route, fallback: bool) -> Function {
    let taken = &mut ast_util::names_in(f);
    let n = Names {
        lane: ast_util::fresh("lane", taken),
        k: ast_util::fresh("k", taken),
        j: ast_util::fresh("j", taken),
    };
    let int_ty = Type::scalar(BaseType::Int);
    let lane_decl = decl(
        Type {
            is_const: true,
            ..int_ty.clone()
        },
        &n.lane,
        Some(bin(BinOp::Rem, member("threadIdx", "x"), int(32))),
    );
    let mut row_init = r.row_init.clone();
    match route {
        // The row of the thread `threadIdx.x - lane + k` of the same block.
        Route::ThreadsRows => {
            let thread = bin(
                BinOp::Add,
                bin(BinOp::Sub, member("threadIdx", "x"), ident(&n.lane)),
                ident(&n.k),
            );
            ast_util::replace_expr(&mut row_init, &member("threadIdx", "x"), &thread);
        }
        // The warp's global x index over 32.
        Route::OneRow => row_init = bin(BinOp::Div, row_init, int(32)),
    }
    let mut row_code = vec![decl(r.row_ty.clone(), &r.row, Some(row_init))];
    let work = row_work(r, &n);
    match &r.guard {
        Some(g) => row_code.push(if_else(g.clone(), work, Vec::new())),
        None => row_code.extend(work),
    }
    let warp_code = match route {
        Route::ThreadsRows => vec![
            lane_decl,
            stmt(StmtKind::For {
                init: Some(Box::new(decl(int_ty, &n.k, Some(int(0))))),
                cond: Some(bin(BinOp::Lt, ident(&n.k), int(32))),
                step: Some(expr(ExprKind::Unary(
                    copper::cuda::ast::UnOp::PostInc,
                    Box::new(ident(&n.k)),
                ))),
                body: Box::new(block(row_code)),
            }),
        ],
        Route::OneRow => std::iter::once(lane_decl).chain(row_code).collect(),
    };
    let whole_warps = bin(
        BinOp::Eq,
        bin(BinOp::Rem, member("blockDim", "x"), int(32)),
        int(0),
    );
    let original = match (fallback, route) {
        (false, _) => Vec::new(),
        (true, Route::ThreadsRows) => f.body.clone(),
        (true, Route::OneRow) => {
            let first_blocks = bin(
                BinOp::Lt,
                member("blockIdx", "x"),
                bin(BinOp::Div, member("gridDim", "x"), int(32)),
            );
            vec![if_else(first_blocks, f.body.clone(), Vec::new())]
        }
    };
    let body = vec![if_else(whole_warps, warp_code, original)];
    Function { body, ..f.clone() }
}

/// A row's code for the warp: the declarations, the loop strided over the
/// lanes, the shuffles, and what followed the loop run by lane 0.
fn row_work(r: &RowLoop, n: &Names) -> Vec<Stmt> {
    let mut out = Vec::new();
    for s in &r.body[..r.loop_at] {
        out.push(with_lane_start(s, r, n));
    }
    out.push(strided_loop(r, n));
    for off in [16, 8, 4, 2, 1] {
        let shfl = expr(ExprKind::Call(
            "__shfl_down_sync".into(),
            vec![full_mask(), ident(&r.acc), int(off)],
        ));
        let update = match &r.fold {
            Fold::Sum => expr(ExprKind::Assign(
                Some(BinOp::Add),
                Box::new(ident(&r.acc)),
                Box::new(shfl),
            )),
            Fold::Call { name, acc_first } => {
                let args = if *acc_first {
                    vec![ident(&r.acc), shfl]
                } else {
                    vec![shfl, ident(&r.acc)]
                };
                expr(ExprKind::Assign(
                    None,
                    Box::new(ident(&r.acc)),
                    Box::new(expr(ExprKind::Call(name.clone(), args))),
                ))
            }
        };
        out.push(stmt(StmtKind::Expr(update)));
    }
    let after: Vec<Stmt> = r.body[r.loop_at + 1..]
        .iter()
        .filter(|s| !matches!(s.kind, StmtKind::Empty))
        .cloned()
        .collect();
    if !after.is_empty() {
        let first = bin(BinOp::Eq, ident(&n.lane), int(0));
        out.push(if_else(first, after, Vec::new()));
    }
    out
}

/// A declaration before the loop; the accumulator's, for a sum that does
/// not start at 0, starts lanes other than 0 at 0.
fn with_lane_start(s: &Stmt, r: &RowLoop, n: &Names) -> Stmt {
    if r.fold != Fold::Sum || is_zero(&r.acc_init) {
        return s.clone();
    }
    let mut s = s.clone();
    if let StmtKind::Decl(ds) = &mut s.kind {
        for d in ds.iter_mut().filter(|d| d.name == r.acc) {
            let lane0 = bin(BinOp::Eq, ident(&n.lane), int(0));
            d.init = Some(copper::cuda::ast::Init::Expr(expr(ExprKind::Cond(
                Box::new(lane0),
                Box::new(r.acc_init.clone()),
                Box::new(int(0)),
            ))));
        }
    }
    s
}

/// `for (long long j = S + lane; j < E; j += 32) { int i = (int)j; … }`.
fn strided_loop(r: &RowLoop, n: &Names) -> Stmt {
    let long = Type::scalar(BaseType::LongLong);
    let start = if ast_util::const_value(&r.start) == Some(0) {
        ident(&n.lane)
    } else {
        let wide = match &r.start.kind {
            ExprKind::Int { value, .. } if *value <= (i32::MAX - 31) as u64 => r.start.clone(),
            _ => expr(ExprKind::Cast(
                CastStyle::C,
                long.clone(),
                Box::new(r.start.clone()),
            )),
        };
        bin(BinOp::Add, wide, ident(&n.lane))
    };
    let int_ty = Type::scalar(BaseType::Int);
    let counter = decl(
        int_ty.clone(),
        &r.counter,
        Some(expr(ExprKind::Cast(
            CastStyle::C,
            int_ty,
            Box::new(ident(&n.j)),
        ))),
    );
    let mut body = vec![counter];
    body.extend(r.loop_body.iter().cloned());
    stmt(StmtKind::For {
        init: Some(Box::new(decl(long, &n.j, Some(start)))),
        cond: Some(bin(BinOp::Lt, ident(&n.j), r.end.clone())),
        step: Some(expr(ExprKind::Assign(
            Some(BinOp::Add),
            Box::new(ident(&n.j)),
            Box::new(int(32)),
        ))),
        body: Box::new(block(body)),
    })
}
