//! Calls of structs' member functions: `obj.f(args)` is the call of the
//! device function `S::f` (its struct's) with the object first, bound to
//! the member function's implicit `this` reference.

use super::*;
use crate::cuda::ast::ExprKind as A;

impl Lowerer<'_> {
    /// The call `S::f(obj, args…)` that the member function call `e`
    /// (`obj.f(args)`, or `p->f(args)` on `p[0]`) stands for; `None` when
    /// `e` is no member function call.
    pub(super) fn method_as_call(&mut self, e: &ast::Expr) -> Result<Option<ast::Expr>> {
        let A::Method {
            base,
            name,
            arrow,
            args,
        } = &e.kind
        else {
            return Ok(None);
        };
        let object = if *arrow {
            let zero = ast::Expr {
                meta: base.meta.clone(),
                kind: A::Int {
                    value: 0,
                    text: "0".into(),
                },
            };
            ast::Expr {
                meta: base.meta.clone(),
                kind: A::Index(base.clone(), Box::new(zero)),
            }
        } else {
            base.as_ref().clone()
        };
        let op = if *arrow { "->" } else { "." };
        let Some(owner) = self.static_type_name(&object) else {
            return fail(
                e.meta.span,
                format!("member function call `{op}{name}()` on a value whose struct copper cannot tell"),
            );
        };
        if !self.file.structs.contains_key(&owner) {
            return fail(
                e.meta.span,
                format!("member function call `{op}{name}()` on a `{owner}`, which is no struct of the file"),
            );
        }
        let qualified = format!("{owner}::{name}");
        if names::callee(self.file, &qualified).is_err() {
            return fail(
                e.meta.span,
                format!("`{owner}` has no `__device__` member function `{name}` copper reads"),
            );
        }
        let all = std::iter::once(object)
            .chain(args.iter().cloned())
            .collect();
        Ok(Some(ast::Expr {
            meta: e.meta.clone(),
            kind: A::Call(qualified, all),
        }))
    }
}
