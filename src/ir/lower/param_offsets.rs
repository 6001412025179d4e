//! Pointer parameters the kernel moves (`src += offset;`, `p = p + k;`,
//! `p++`): each gets an offset variable, 0 at the start, so that later
//! accesses through it index the array at that offset, as a local pointer
//! into the array does.

use super::*;
use crate::cuda::ast::{ExprKind as A, UnOp};
use crate::cuda::visit::visit_stmt_exprs;

impl Lowerer<'_> {
    /// Gives each pointer parameter of `f` that its body assigns an
    /// offset variable set to 0 (into `out`), bound in the current scope.
    pub(super) fn offset_moved_params(&mut self, f: &ast::Function, out: &mut Vec<Stmt>) {
        let mut moved: Vec<&str> = Vec::new();
        for s in &f.body {
            visit_stmt_exprs(s, &mut |e| {
                let target = match &e.kind {
                    A::Assign(_, lhs, _) => lhs,
                    A::Unary(UnOp::PreInc | UnOp::PreDec | UnOp::PostInc | UnOp::PostDec, x) => x,
                    _ => return,
                };
                if let A::Ident(n) = &target.kind {
                    moved.push(n);
                }
            });
        }
        for p in &f.params {
            if !moved.contains(&p.name.as_str()) {
                continue;
            }
            let Some(Binding::Ptr {
                array,
                offset: None,
                inner,
            }) = self.scopes.last().and_then(|s| s.get(&p.name)).cloned()
            else {
                continue;
            };
            let span = p.meta.span;
            let ov = self.new_var(
                &format!("{}_offset", p.name),
                Scalar::I64,
                VarKind::Local,
                span,
            );
            out.push(Stmt::Assign {
                var: ov,
                value: int(0, Scalar::I64),
                span,
            });
            self.bind(
                &p.name,
                Binding::Ptr {
                    array,
                    offset: Some(ov),
                    inner,
                },
            );
        }
    }
}
