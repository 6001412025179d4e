//! A kernel whose pointer parameters are passed one array: what runs when
//! a caller passes the same array twice, which CUDA allows. The rewrite
//! checker runs an original and a rewrite that promised those parameters
//! do not overlap this way, to show what the promise is worth.

use super::{Access, ArrayId, Expr, ExprKind, Kernel, Stmt};

impl Kernel {
    /// This kernel with every access to the second array of each pair made
    /// to the first (`(a, b)`: `b[i]` reads and writes `a[i]`); `Err` says
    /// why a pair cannot share storage (not both pointer parameters, or
    /// elements laid out differently).
    pub fn aliased(&self, pairs: &[(ArrayId, ArrayId)]) -> Result<Kernel, String> {
        let mut to: Vec<ArrayId> = (0..self.arrays.len()).collect();
        for &(a, b) in pairs {
            let (Some(x), Some(y)) = (self.arrays.get(a), self.arrays.get(b)) else {
                return Err("no such array".into());
            };
            if x.param.is_none() || y.param.is_none() {
                return Err(format!(
                    "`{}` and `{}` are not both pointer parameters",
                    x.name, y.name
                ));
            }
            if x.layout != y.layout {
                return Err(format!(
                    "`{}` and `{}` hold elements of different types",
                    x.name, y.name
                ));
            }
            let (ra, rb) = (root(&to, a), root(&to, b));
            to[rb] = ra;
        }
        let to: Vec<ArrayId> = (0..to.len()).map(|i| root(&to, i)).collect();
        let mut k = self.clone();
        for site in &mut k.sites {
            site.array = to[site.array];
        }
        redirect_stmts(&mut k.body, &to);
        Ok(k)
    }
}

/// The array `a` shares storage with: the end of its chain in `to`.
fn root(to: &[ArrayId], mut a: ArrayId) -> ArrayId {
    while to[a] != a {
        a = to[a];
    }
    a
}

fn redirect_stmts(stmts: &mut [Stmt], to: &[ArrayId]) {
    for s in stmts {
        match s {
            Stmt::Assign { value, .. } => redirect_expr(value, to),
            Stmt::Store { access, value, .. } => {
                redirect_access(access, to);
                redirect_expr(value, to);
            }
            Stmt::Atomic {
                access,
                value,
                compare,
                ..
            } => {
                redirect_access(access, to);
                redirect_expr(value, to);
                if let Some(c) = compare {
                    redirect_expr(c, to);
                }
            }
            Stmt::If {
                cond, then, els, ..
            } => {
                redirect_expr(cond, to);
                redirect_stmts(then, to);
                redirect_stmts(els, to);
            }
            Stmt::Loop {
                cond, body, step, ..
            } => {
                if let Some(c) = cond {
                    redirect_expr(c, to);
                }
                redirect_stmts(body, to);
                redirect_stmts(step, to);
            }
            Stmt::Scope { body, .. } => redirect_stmts(body, to),
            Stmt::Jump { .. } | Stmt::Return { .. } | Stmt::Sync { .. } => {}
        }
    }
}

fn redirect_access(a: &mut Access, to: &[ArrayId]) {
    a.array = to[a.array];
    redirect_expr(&mut a.index, to);
}

fn redirect_expr(e: &mut Expr, to: &[ArrayId]) {
    match &mut e.kind {
        ExprKind::Const(_) | ExprKind::Var(_) | ExprKind::Builtin(_) => {}
        ExprKind::Unary(_, x) | ExprKind::Convert { value: x, .. } => redirect_expr(x, to),
        ExprKind::Binary(_, x, y) | ExprKind::And(x, y) | ExprKind::Or(x, y) => {
            redirect_expr(x, to);
            redirect_expr(y, to);
        }
        ExprKind::Select(c, x, y) => {
            redirect_expr(c, to);
            redirect_expr(x, to);
            redirect_expr(y, to);
        }
        ExprKind::Load(a) => redirect_access(a, to),
        ExprKind::Call(_, args) => args.iter_mut().for_each(|x| redirect_expr(x, to)),
    }
}
