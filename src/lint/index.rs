//! The index expression of an access site: in the statement that holds
//! it, or inside a load nested in another expression. The coalescing
//! check, the witnesses and the MILP ask for it.

use crate::ir::sites::{load_index, SitePaths};
use crate::ir::{Expr, Kernel, SiteId, Stmt};

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
