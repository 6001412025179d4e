//! Rewriting in place: replacing subexpressions, rewriting statements
//! bottom up, trading x and y of thread and block indices.

use copper::cuda::ast::{Expr, ExprKind, Stmt, StmtKind};

use super::{block, children_mut, equiv_expr, index_field};

/// Replaces every subexpression equal (structurally) to `from` by `to`.
pub fn replace_expr(e: &mut Expr, from: &Expr, to: &Expr) {
    use ExprKind as K;
    if equiv_expr(e, from) {
        *e = to.clone();
        return;
    }
    match &mut e.kind {
        K::Unary(_, x) | K::Cast(_, _, x) | K::SizeofExpr(x) => replace_expr(x, from, to),
        K::Binary(_, a, b) | K::Index(a, b) => {
            replace_expr(a, from, to);
            replace_expr(b, from, to);
        }
        K::Assign(_, a, b) => {
            // The target of an assignment is not a read: only its indices.
            if let K::Index(_, i) = &mut a.kind {
                replace_expr(i, from, to);
            }
            replace_expr(b, from, to);
        }
        K::Cond(c, a, b) => {
            replace_expr(c, from, to);
            replace_expr(a, from, to);
            replace_expr(b, from, to);
        }
        K::Call(_, args) | K::Comma(args) => {
            args.iter_mut().for_each(|a| replace_expr(a, from, to))
        }
        K::Member { base, .. } => replace_expr(base, from, to),
        _ => {}
    }
}

/// Rewrites statements bottom-up: the statements nested in each one first
/// (a nested statement that becomes several is wrapped in a block where one
/// statement is expected), then the statement itself by `f`, which may turn
/// it into several.
pub fn rewrite_bottom_up(stmts: Vec<Stmt>, f: &mut impl FnMut(Stmt) -> Vec<Stmt>) -> Vec<Stmt> {
    stmts
        .into_iter()
        .flat_map(|s| rewrite_stmt_bottom_up(s, f))
        .collect()
}

fn rewrite_stmt_bottom_up(mut s: Stmt, f: &mut impl FnMut(Stmt) -> Vec<Stmt>) -> Vec<Stmt> {
    use StmtKind as S;
    s.kind = match s.kind {
        S::Block(b) => S::Block(rewrite_bottom_up(b, f)),
        S::For {
            init,
            cond,
            step,
            body,
        } => S::For {
            init,
            cond,
            step,
            body: rewrite_nested(body, f),
        },
        S::While { cond, body } => S::While {
            cond,
            body: rewrite_nested(body, f),
        },
        S::DoWhile { body, cond } => S::DoWhile {
            body: rewrite_nested(body, f),
            cond,
        },
        S::If { cond, then, els } => S::If {
            cond,
            then: rewrite_nested(then, f),
            els: els.map(|e| rewrite_nested(e, f)),
        },
        S::Switch { cond, mut cases } => {
            for c in cases.iter_mut() {
                c.body = rewrite_bottom_up(std::mem::take(&mut c.body), f);
            }
            S::Switch { cond, cases }
        }
        other => other,
    };
    f(s)
}

/// A nested statement rewritten, as one statement.
fn rewrite_nested(s: Box<Stmt>, f: &mut impl FnMut(Stmt) -> Vec<Stmt>) -> Box<Stmt> {
    let mut v = rewrite_stmt_bottom_up(*s, f);
    Box::new(if v.len() == 1 {
        v.pop().expect("one statement")
    } else {
        block(v)
    })
}

/// `e` with `threadIdx.x` and `threadIdx.y` exchanged everywhere.
pub fn swap_thread_xy(e: &mut Expr) {
    swap_index_xy(e, &["threadIdx"]);
}

/// `e` with x and y of the built-in index variables `indices` exchanged
/// everywhere.
pub fn swap_index_xy(e: &mut Expr, indices: &[&str]) {
    if index_field(e, indices).is_some() {
        if let ExprKind::Member { field, .. } = &mut e.kind {
            *field = match field.as_str() {
                "x" => "y".into(),
                "y" => "x".into(),
                other => other.into(),
            };
        }
        return;
    }
    for c in children_mut(e) {
        swap_index_xy(c, indices);
    }
}
