//! Scalar parameters whose address the body takes (`&n`, a kernel's or an
//! inlined device function's): each lives in a *cell*, a one-element
//! local array holding the argument's value, so that a pointer can point
//! at it and writes through the pointer are the parameter's new value (as
//! scalar locals whose address is taken do, in `decl`).

use super::*;

impl Lowerer<'_> {
    /// A cell named `name` of type `ty` holding `value` (its store pushed
    /// to `out`), as the binding of the name.
    pub(super) fn cell(
        &mut self,
        name: &str,
        ty: Scalar,
        value: Expr,
        meta: &ast::Meta,
        out: &mut Vec<Stmt>,
    ) -> Binding {
        let span = meta.span;
        let unique = self.unique(name);
        let id = self.new_array(Array {
            name: unique,
            space: Space::Local,
            elem: ty,
            layout: Layout::scalar(ty),
            dims: vec![1],
            param: None,
            init: Vec::new(),
            span,
        });
        let access = self.access(id, int(0, Scalar::I64), true, meta);
        out.push(Stmt::Store {
            access,
            value: convert(value, ty),
            span,
        });
        Binding::Cell(id)
    }

    /// Moves each scalar parameter of kernel `f` whose address its body
    /// takes into a cell (the stores pushed to `out`), bound in the
    /// current scope.
    pub(super) fn cell_addressed_params(&mut self, f: &ast::Function, out: &mut Vec<Stmt>) {
        for p in &f.params {
            if !self.addressed.contains(&p.name) {
                continue;
            }
            let Some(Binding::Var(v)) = self.scopes.last().and_then(|s| s.get(&p.name)).cloned()
            else {
                continue;
            };
            let ty = self.k.vars[v].ty;
            let b = self.cell(&p.name, ty, var_expr(&self.k, v), &p.meta, out);
            self.bind(&p.name, b);
        }
    }
}
