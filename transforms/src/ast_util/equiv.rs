//! Structural equality of expressions and statements, up to the order
//! of the operands of commutative operators.

use copper::cuda::ast::{Expr, ExprKind, Stmt, StmtKind};

/// Whether two expressions are equal up to the order of the operands of
/// commutative operators.
pub fn equiv_expr(a: &Expr, b: &Expr) -> bool {
    use ExprKind as K;
    match (&a.kind, &b.kind) {
        (K::Binary(o1, l1, r1), K::Binary(o2, l2, r2)) if o1 == o2 => {
            (equiv_expr(l1, l2) && equiv_expr(r1, r2))
                || (o1.is_commutative() && equiv_expr(l1, r2) && equiv_expr(r1, l2))
        }
        (K::Unary(o1, x1), K::Unary(o2, x2)) => o1 == o2 && equiv_expr(x1, x2),
        (K::Assign(o1, l1, r1), K::Assign(o2, l2, r2)) => {
            o1 == o2 && equiv_expr(l1, l2) && equiv_expr(r1, r2)
        }
        (K::Cond(c1, a1, b1), K::Cond(c2, a2, b2)) => {
            equiv_expr(c1, c2) && equiv_expr(a1, a2) && equiv_expr(b1, b2)
        }
        (K::Cast(s1, t1, x1), K::Cast(s2, t2, x2)) => s1 == s2 && t1 == t2 && equiv_expr(x1, x2),
        (K::Call(f1, a1), K::Call(f2, a2)) => {
            f1 == f2 && a1.len() == a2.len() && a1.iter().zip(a2).all(|(x, y)| equiv_expr(x, y))
        }
        (K::Index(a1, i1), K::Index(a2, i2)) => equiv_expr(a1, a2) && equiv_expr(i1, i2),
        (K::Comma(x1), K::Comma(x2)) => {
            x1.len() == x2.len() && x1.iter().zip(x2).all(|(x, y)| equiv_expr(x, y))
        }
        (
            K::Member {
                base: b1,
                field: f1,
                arrow: a1,
            },
            K::Member {
                base: b2,
                field: f2,
                arrow: a2,
            },
        ) => f1 == f2 && a1 == a2 && equiv_expr(b1, b2),
        (K::SizeofExpr(x1), K::SizeofExpr(x2)) => equiv_expr(x1, x2),
        _ => a == b,
    }
}

/// Whether two statements are equal up to commutative operands.
pub fn equiv_stmt(a: &Stmt, b: &Stmt) -> bool {
    use StmtKind as S;
    let opt = |x: &Option<Expr>, y: &Option<Expr>| match (x, y) {
        (Some(x), Some(y)) => equiv_expr(x, y),
        (None, None) => true,
        _ => false,
    };
    let boxed = |x: &Option<Box<Stmt>>, y: &Option<Box<Stmt>>| match (x, y) {
        (Some(x), Some(y)) => equiv_stmt(x, y),
        (None, None) => true,
        _ => false,
    };
    let list = |x: &[Stmt], y: &[Stmt]| {
        x.len() == y.len() && x.iter().zip(y).all(|(p, q)| equiv_stmt(p, q))
    };
    match (&a.kind, &b.kind) {
        (S::Expr(x), S::Expr(y)) => equiv_expr(x, y),
        (S::Block(x), S::Block(y)) => list(x, y),
        (
            S::If {
                cond: c1,
                then: t1,
                els: e1,
            },
            S::If {
                cond: c2,
                then: t2,
                els: e2,
            },
        ) => equiv_expr(c1, c2) && equiv_stmt(t1, t2) && boxed(e1, e2),
        (
            S::For {
                init: i1,
                cond: c1,
                step: s1,
                body: b1,
            },
            S::For {
                init: i2,
                cond: c2,
                step: s2,
                body: b2,
            },
        ) => boxed(i1, i2) && opt(c1, c2) && opt(s1, s2) && equiv_stmt(b1, b2),
        (S::While { cond: c1, body: b1 }, S::While { cond: c2, body: b2 })
        | (S::DoWhile { cond: c1, body: b1 }, S::DoWhile { cond: c2, body: b2 }) => {
            equiv_expr(c1, c2) && equiv_stmt(b1, b2)
        }
        _ => a == b,
    }
}
