//! Read-only walks over the AST: every statement, every expression, the
//! direct subexpressions of an expression.

use super::ast::{Expr, ExprKind, Init, Stmt, StmtKind};

/// Visits every expression of a statement (outermost first), descending
/// into nested statements.
pub fn visit_stmt_exprs<'a>(s: &'a Stmt, f: &mut impl FnMut(&'a Expr)) {
    visit_stmt_roots(s, &mut |e| visit_expr(e, f));
}

/// Visits the whole expressions of a statement and of the statements
/// nested in it (not their subexpressions): conditions, initializers,
/// expression statements.
pub fn visit_stmt_roots<'a>(s: &'a Stmt, f: &mut impl FnMut(&'a Expr)) {
    use StmtKind as S;
    match &s.kind {
        S::Decl(ds) => {
            for d in ds {
                for e in d.dims.iter().flatten() {
                    f(e);
                }
                if let Some(i) = &d.init {
                    visit_init(i, f);
                }
            }
        }
        S::Expr(e) => f(e),
        S::Block(b) => b.iter().for_each(|x| visit_stmt_roots(x, f)),
        S::If { cond, then, els } => {
            f(cond);
            visit_stmt_roots(then, f);
            if let Some(e) = els {
                visit_stmt_roots(e, f);
            }
        }
        S::For {
            init,
            cond,
            step,
            body,
        } => {
            if let Some(i) = init {
                visit_stmt_roots(i, f);
            }
            if let Some(c) = cond {
                f(c);
            }
            if let Some(s) = step {
                f(s);
            }
            visit_stmt_roots(body, f);
        }
        S::While { cond, body } | S::DoWhile { body, cond } => {
            f(cond);
            visit_stmt_roots(body, f);
        }
        S::Switch { cond, cases } => {
            f(cond);
            for c in cases {
                for l in c.labels.iter().flatten() {
                    f(l);
                }
                c.body.iter().for_each(|x| visit_stmt_roots(x, f));
            }
        }
        S::Return(Some(e)) => f(e),
        _ => {}
    }
}

fn visit_init<'a>(i: &'a Init, f: &mut impl FnMut(&'a Expr)) {
    match i {
        Init::Expr(e) => f(e),
        Init::List(l) => l.iter().for_each(|x| visit_init(x, f)),
    }
}

/// Visits an expression and its subexpressions, outermost first.
pub fn visit_expr<'a>(e: &'a Expr, f: &mut impl FnMut(&'a Expr)) {
    f(e);
    for c in children(e) {
        visit_expr(c, f);
    }
}

/// The direct subexpressions of an expression, in evaluation order of the
/// source (left to right).
pub fn children(e: &Expr) -> Vec<&Expr> {
    use ExprKind as K;
    match &e.kind {
        K::Unary(_, x) | K::Cast(_, _, x) | K::SizeofExpr(x) => vec![x],
        K::Binary(_, a, b) | K::Assign(_, a, b) | K::Index(a, b) => vec![a, b],
        K::Cond(c, a, b) => vec![c, a, b],
        K::Call(_, args) | K::Comma(args) => args.iter().collect(),
        K::Member { base, .. } => vec![base],
        _ => Vec::new(),
    }
}

/// Visits every statement of a statement (itself first), descending into
/// nested statements.
pub fn visit_stmts<'a>(s: &'a Stmt, f: &mut impl FnMut(&'a Stmt)) {
    use StmtKind as S;
    f(s);
    match &s.kind {
        S::Block(b) => b.iter().for_each(|x| visit_stmts(x, f)),
        S::If { then, els, .. } => {
            visit_stmts(then, f);
            if let Some(e) = els {
                visit_stmts(e, f);
            }
        }
        S::For { init, body, .. } => {
            if let Some(i) = init {
                visit_stmts(i, f);
            }
            visit_stmts(body, f);
        }
        S::While { body, .. } | S::DoWhile { body, .. } => visit_stmts(body, f),
        S::Switch { cases, .. } => cases
            .iter()
            .for_each(|c| c.body.iter().for_each(|x| visit_stmts(x, f))),
        _ => {}
    }
}
