//! Walks over the AST: every statement, every expression, the direct
//! subexpressions of an expression; read-only, and the same walks over
//! mutable references for rewriting in place.

use super::ast::{Expr, ExprKind, Init, Stmt, StmtKind};

/// Visits every expression of a statement (outermost first), descending
/// into nested statements.
pub fn visit_stmt_exprs<'a>(s: &'a Stmt, f: &mut impl FnMut(&'a Expr)) {
    visit_stmt_roots(s, &mut |e| visit_expr(e, f));
}

/// Visits an expression and its subexpressions, outermost first.
pub fn visit_expr<'a>(e: &'a Expr, f: &mut impl FnMut(&'a Expr)) {
    f(e);
    for c in children(e) {
        visit_expr(c, f);
    }
}

/// Defines the structural walks once for shared and once for mutable
/// references, so the two families cannot drift apart. The shared
/// statement walk hands out references that live as long as the tree
/// (`['a]`); a mutable one cannot, as it visits a statement and then its
/// parts.
macro_rules! walks {
    ([$($lt:lifetime)?] $iter:ident $(, $m:tt)?; $roots:ident, $init:ident, $children:ident, $stmts:ident) => {
        /// Visits the whole expressions of a statement and of the
        /// statements nested in it (not their subexpressions): conditions,
        /// initializers, expression statements.
        pub fn $roots<'a>(s: &'a $($m)? Stmt, f: &mut impl FnMut(&'a $($m)? Expr)) {
            use StmtKind as S;
            match &$($m)? s.kind {
                S::Decl(ds) => {
                    for d in ds {
                        for e in d.dims.$iter().flatten() {
                            f(e);
                        }
                        if let Some(i) = &$($m)? d.init {
                            $init(i, f);
                        }
                    }
                }
                S::Expr(e) | S::Return(Some(e)) => f(e),
                S::Block(b) => b.$iter().for_each(|x| $roots(x, f)),
                S::If { cond, then, els } => {
                    f(cond);
                    $roots(then, f);
                    if let Some(e) = els {
                        $roots(e, f);
                    }
                }
                S::For {
                    init,
                    cond,
                    step,
                    body,
                } => {
                    if let Some(i) = init {
                        $roots(i, f);
                    }
                    if let Some(c) = cond {
                        f(c);
                    }
                    if let Some(s) = step {
                        f(s);
                    }
                    $roots(body, f);
                }
                S::While { cond, body } | S::DoWhile { body, cond } => {
                    f(cond);
                    $roots(body, f);
                }
                S::Switch { cond, cases } => {
                    f(cond);
                    for c in cases {
                        for l in c.labels.$iter().flatten() {
                            f(l);
                        }
                        c.body.$iter().for_each(|x| $roots(x, f));
                    }
                }
                _ => {}
            }
        }

        fn $init<'a>(i: &'a $($m)? Init, f: &mut impl FnMut(&'a $($m)? Expr)) {
            match i {
                Init::Expr(e) => f(e),
                Init::List(l) => l.$iter().for_each(|x| $init(x, f)),
            }
        }

        /// The direct subexpressions of an expression, in evaluation order
        /// of the source (left to right).
        pub fn $children(e: & $($m)? Expr) -> Vec<& $($m)? Expr> {
            use ExprKind as K;
            match & $($m)? e.kind {
                K::Unary(_, x) | K::Cast(_, _, x) | K::SizeofExpr(x) => vec![x],
                K::Binary(_, a, b) | K::Assign(_, a, b) | K::Index(a, b) => vec![a, b],
                K::Cond(c, a, b) => vec![c, a, b],
                K::Call(_, args) | K::Comma(args) => args.$iter().collect(),
                K::Member { base, .. } => vec![base],
                K::Method { base, args, .. } => {
                    std::iter::once(&$($m)? **base).chain(args.$iter()).collect()
                }
                _ => Vec::new(),
            }
        }

        /// Visits every statement of a statement (itself first),
        /// descending into nested statements.
        pub fn $stmts<$($lt)?>(s: &$($lt)? $($m)? Stmt, f: &mut impl FnMut(&$($lt)? $($m)? Stmt)) {
            use StmtKind as S;
            f(s);
            match & $($m)? s.kind {
                S::Block(b) => b.$iter().for_each(|x| $stmts(x, f)),
                S::If { then, els, .. } => {
                    $stmts(then, f);
                    if let Some(e) = els {
                        $stmts(e, f);
                    }
                }
                S::For { init, body, .. } => {
                    if let Some(i) = init {
                        $stmts(i, f);
                    }
                    $stmts(body, f);
                }
                S::While { body, .. } | S::DoWhile { body, .. } => $stmts(body, f),
                S::Switch { cases, .. } => cases
                    .$iter()
                    .for_each(|c| c.body.$iter().for_each(|x| $stmts(x, f))),
                _ => {}
            }
        }
    };
}

walks!(['a] iter; visit_stmt_roots, visit_init, children, visit_stmts);
walks!([] iter_mut, mut; visit_stmt_roots_mut, visit_init_mut, children_mut, visit_stmts_mut);
