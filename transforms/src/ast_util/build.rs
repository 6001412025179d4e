//! Builders for new AST nodes (spans and ids left empty) and fresh names.

use copper::launch::Dims;
use std::collections::BTreeSet;

use copper::cuda::ast::{BinOp, Expr, ExprKind, Init, Meta, NodeId, Stmt, StmtKind, Type, VarDecl};
use copper::ir::sync::BARRIER;

/// A name starting with `base` that is not in `taken` (and records it).
pub fn fresh(base: &str, taken: &mut BTreeSet<String>) -> String {
    let mut name = base.to_string();
    let mut n = 1;
    while taken.contains(&name) {
        name = format!("{base}_{n}");
        n += 1;
    }
    taken.insert(name.clone());
    name
}

/// Metadata for a node a transform made.
pub fn meta() -> Meta {
    Meta::synthetic(NodeId(0))
}

/// An expression node.
pub fn expr(kind: ExprKind) -> Expr {
    Expr { meta: meta(), kind }
}

/// A statement node.
pub fn stmt(kind: StmtKind) -> Stmt {
    Stmt { meta: meta(), kind }
}

/// `name`
pub fn ident(name: &str) -> Expr {
    expr(ExprKind::Ident(name.to_string()))
}

/// An `int` literal.
pub fn int(v: u64) -> Expr {
    expr(ExprKind::Int {
        value: v,
        text: v.to_string(),
    })
}

/// `(long long)e`.
pub fn long_long(e: Expr) -> Expr {
    expr(ExprKind::Cast(
        copper::cuda::ast::CastStyle::C,
        Type::scalar(copper::cuda::ast::BaseType::LongLong),
        Box::new(e),
    ))
}

/// `a op b`
pub fn bin(op: BinOp, a: Expr, b: Expr) -> Expr {
    expr(ExprKind::Binary(op, Box::new(a), Box::new(b)))
}

/// `ty name = init;` (a local).
pub fn decl(ty: Type, name: &str, init: Option<Expr>) -> Stmt {
    stmt(StmtKind::Decl(vec![VarDecl {
        meta: meta(),
        is_constexpr: false,
        space: copper::cuda::ast::Space::Local,
        is_extern: false,
        is_static: false,
        ty,
        name: name.to_string(),
        dims: Vec::new(),
        init: init.map(Init::Expr),
    }]))
}

/// `__shared__ T name[d0][d1]…;` (a scalar without `dims`).
pub fn shared_decl(ty: Type, name: &str, dims: Vec<Expr>) -> Stmt {
    stmt(StmtKind::Decl(vec![VarDecl {
        meta: meta(),
        is_constexpr: false,
        space: copper::cuda::ast::Space::Shared,
        is_extern: false,
        is_static: false,
        ty,
        name: name.to_string(),
        dims: dims.into_iter().map(Some).collect(),
        init: None,
    }]))
}

/// `lhs = rhs;`
pub fn assign(lhs: Expr, rhs: Expr) -> Stmt {
    stmt(StmtKind::Expr(expr(ExprKind::Assign(
        None,
        Box::new(lhs),
        Box::new(rhs),
    ))))
}

/// `array[i]`
pub fn index(array: &str, i: Expr) -> Expr {
    expr(ExprKind::Index(Box::new(ident(array)), Box::new(i)))
}

/// `{ stmts }`
pub fn block(stmts: Vec<Stmt>) -> Stmt {
    stmt(StmtKind::Block(stmts))
}

/// `if (cond) { then } else { els }` (no else when `els` is empty).
pub fn if_else(cond: Expr, then: Vec<Stmt>, els: Vec<Stmt>) -> Stmt {
    stmt(StmtKind::If {
        cond,
        then: Box::new(block(then)),
        els: (!els.is_empty()).then(|| Box::new(block(els))),
    })
}

/// `__syncthreads();`
pub fn sync() -> Stmt {
    stmt(StmtKind::Expr(expr(ExprKind::Call(
        BARRIER.into(),
        Vec::new(),
    ))))
}

/// The thread's index within the block, flattened.
pub fn linear_tid(block: Dims) -> Expr {
    let t = |d: &str| {
        expr(ExprKind::Member {
            base: Box::new(ident("threadIdx")),
            field: d.to_string(),
            arrow: false,
        })
    };
    let mut e = t("x");
    if block[1] > 1 || block[2] > 1 {
        e = bin(BinOp::Add, e, bin(BinOp::Mul, t("y"), int(block[0])));
    }
    if block[2] > 1 {
        e = bin(
            BinOp::Add,
            e,
            bin(BinOp::Mul, t("z"), int(block[0] * block[1])),
        );
    }
    e
}
