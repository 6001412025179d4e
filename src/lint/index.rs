//! The index expression of an access site: in the statement that holds
//! it, or inside a load nested in another expression. The coalescing
//! check, the witnesses and the MILP ask for it.

use crate::ir::sites::SitePaths;
use crate::ir::{Expr, ExprKind, Kernel, SiteId, Stmt};

/// The index of the load at `site` inside `e`.
pub(crate) fn load_index(e: &Expr, site: SiteId) -> Option<&Expr> {
    match &e.kind {
        ExprKind::Load(a) if a.site == site => Some(&a.index),
        ExprKind::Load(a) => load_index(&a.index, site),
        ExprKind::Unary(_, x) | ExprKind::Convert { value: x, .. } => load_index(x, site),
        ExprKind::Binary(_, a, b) | ExprKind::And(a, b) | ExprKind::Or(a, b) => {
            load_index(a, site).or_else(|| load_index(b, site))
        }
        ExprKind::Select(c, a, b) => load_index(c, site)
            .or_else(|| load_index(a, site))
            .or_else(|| load_index(b, site)),
        ExprKind::Call(_, args) => args.iter().find_map(|x| load_index(x, site)),
        ExprKind::Const(_) | ExprKind::Var(_) | ExprKind::Builtin(_) => None,
    }
}

/// The index expression of access site `site`.
pub fn index_of(kernel: &Kernel, site: SiteId) -> Option<&Expr> {
    index_in(&SitePaths::build(&kernel.body), kernel, site)
}

/// The index expression of access site `site`, found through `sites`
/// (built once for a kernel whose sites are all asked about).
pub fn index_in<'k>(sites: &SitePaths, kernel: &'k Kernel, site: SiteId) -> Option<&'k Expr> {
    let exprs: Vec<&Expr> = match sites.stmt(&kernel.body, site)? {
        Stmt::Store { access, .. } | Stmt::Atomic { access, .. } if access.site == site => {
            return Some(access.index.as_ref());
        }
        Stmt::Store { access, value, .. } => vec![&access.index, value],
        Stmt::Atomic {
            access,
            value,
            compare,
            ..
        } => [Some(&*access.index), Some(value), compare.as_ref()]
            .into_iter()
            .flatten()
            .collect(),
        Stmt::Assign { value, .. } => vec![value],
        Stmt::If { cond, .. } => vec![cond],
        Stmt::Loop { cond: Some(c), .. } => vec![c],
        _ => vec![],
    };
    exprs.into_iter().find_map(|e| load_index(e, site))
}
