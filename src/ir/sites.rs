//! Where each access site is: the path from a kernel's body to the
//! statement whose own expressions hold it, built once per kernel so that
//! a per-site query costs the nesting depth rather than the kernel's size
//! (the lint asks about every site; a linear walk each time made 8,000
//! statements take seconds), and the index of a load at a site inside an
//! expression.

use std::collections::HashMap;

use super::{Expr, ExprKind, SiteId, Stmt};

/// One step down: the index of a statement in a list, then which of its
/// statement lists to enter next (`then`/`body` = 0, `else`/`step` = 1).
type Step = (u32, u8);

/// The index of the load at `site` inside `e`.
pub fn load_index(e: &Expr, site: SiteId) -> Option<&Expr> {
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

/// The statement holding each site.
#[derive(Clone, Debug, Default)]
pub struct SitePaths {
    paths: HashMap<SiteId, (Vec<Step>, u32)>,
}

impl SitePaths {
    /// Indexes every site of `body`; a site met twice (code inlined twice
    /// keeps its site) maps to its first statement in program order.
    pub fn build(body: &[Stmt]) -> SitePaths {
        let mut out = SitePaths::default();
        out.walk(body, &mut Vec::new());
        out
    }

    fn walk(&mut self, stmts: &[Stmt], path: &mut Vec<Step>) {
        for (i, s) in stmts.iter().enumerate() {
            let i = i as u32;
            let mut own = |site: SiteId| {
                self.paths.entry(site).or_insert_with(|| (path.clone(), i));
            };
            let mut exprs = |e: &crate::ir::Expr| {
                e.visit(&mut |x| {
                    if let ExprKind::Load(a) = &x.kind {
                        own(a.site);
                    }
                })
            };
            let lists: [&[Stmt]; 2] = match s {
                Stmt::Assign { value, .. } => {
                    exprs(value);
                    [&[], &[]]
                }
                Stmt::Store { access, value, .. } => {
                    exprs(&access.index);
                    exprs(value);
                    own(access.site);
                    [&[], &[]]
                }
                Stmt::Atomic {
                    access,
                    value,
                    compare,
                    ..
                } => {
                    exprs(&access.index);
                    exprs(value);
                    if let Some(c) = compare {
                        exprs(c);
                    }
                    own(access.site);
                    [&[], &[]]
                }
                Stmt::If {
                    cond, then, els, ..
                } => {
                    exprs(cond);
                    [then, els]
                }
                Stmt::Loop {
                    cond, body, step, ..
                } => {
                    if let Some(c) = cond {
                        exprs(c);
                    }
                    [body, step]
                }
                Stmt::Scope { body, .. } => [body, &[]],
                Stmt::Jump { .. } | Stmt::Return { .. } | Stmt::Sync { .. } => [&[], &[]],
            };
            for (which, list) in lists.into_iter().enumerate() {
                path.push((i, which as u8));
                self.walk(list, path);
                path.pop();
            }
        }
    }

    /// The statement of `body` (the body indexed) that holds `site`.
    pub fn stmt<'k>(&self, body: &'k [Stmt], site: SiteId) -> Option<&'k Stmt> {
        let (path, last) = self.paths.get(&site)?;
        let mut list = body;
        for &(i, which) in path {
            list = match (list.get(i as usize)?, which) {
                (Stmt::If { then, .. }, 0) => then,
                (Stmt::If { els, .. }, _) => els,
                (Stmt::Loop { body, .. }, 0) => body,
                (Stmt::Loop { step, .. }, _) => step,
                (Stmt::Scope { body, .. }, _) => body,
                _ => return None,
            };
        }
        list.get(*last as usize)
    }
}
