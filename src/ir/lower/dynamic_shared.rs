//! The launch's dynamic shared memory named without a declaration
//! (`SharedMemory<T>()`, read as [`DYNAMIC_SHARED`]): one `extern
//! __shared__` array per element type, which every use in the kernel
//! shares.

use super::*;
use crate::cuda::ast::ExprKind as A;
use crate::cuda::unit::DYNAMIC_SHARED;

impl Lowerer<'_> {
    /// The array `e` names when it is the call [`DYNAMIC_SHARED`]: the
    /// kernel's dynamic shared memory of the element type its argument is
    /// cast to a pointer of; `None` for any other expression.
    pub(super) fn dynamic_shared(&mut self, e: &ast::Expr) -> Result<Option<ArrayId>> {
        let A::Call(name, args) = &e.kind else {
            return Ok(None);
        };
        if name != DYNAMIC_SHARED {
            return Ok(None);
        }
        let span = e.meta.span;
        let ty = match args.as_slice() {
            [ast::Expr {
                kind: A::Cast(_, ty, _),
                ..
            }] if ty.pointers.len() == 1 => ty,
            _ => return fail(span, "dynamic shared memory of an unknown element type"),
        };
        let rec = self.record_type(ty, span)?;
        let elem = match &rec {
            Some(r) => r.types[0],
            None => self.scalar(ty, span)?,
        };
        let key = match &rec {
            Some(r) => format!("{DYNAMIC_SHARED}<{}>", r.name),
            None => format!("{DYNAMIC_SHARED}<{elem:?}>"),
        };
        if let Some(Binding::Ptr { array, .. }) = self.scopes.first().and_then(|s| s.get(&key)) {
            return Ok(Some(*array));
        }
        let name = self.unique("dynamic_shared");
        Ok(Some(self.dynamic_shared_array(name, key, elem, rec, span)))
    }

    /// A new `extern __shared__` array `name` of elements `elem` (of the
    /// struct `rec`), the launch's dynamic shared memory, bound to `key`
    /// in the file's scope.
    pub(super) fn dynamic_shared_array(
        &mut self,
        name: String,
        key: String,
        elem: Scalar,
        rec: Option<Arc<Record>>,
        span: Span,
    ) -> ArrayId {
        let id = self.new_array(Array {
            name,
            space: Space::Shared,
            elem,
            layout: rec.as_ref().map_or(Layout::scalar(elem), |r| r.layout()),
            dims: Vec::new(),
            param: None,
            init: Vec::new(),
            span,
        });
        if let Some(r) = rec {
            self.records.insert(id, r);
        }
        let b = Binding::Ptr {
            array: id,
            offset: None,
            inner: Vec::new(),
        };
        if let Some(s) = self.scopes.first_mut() {
            s.insert(key, b);
        }
        id
    }
}
