//! Vector views of scalar arrays: `reinterpret_cast<float4 *>(p)[i]`,
//! `*(const float4 *)(p + i)`, `((int2 *)a)[i].x` and local view pointers
//! (`const float4 *v = reinterpret_cast<const float4 *>(in);`).
//!
//! A view of a vector type whose components all have the array's element
//! type reads and writes the array itself: element `i` of the view is the
//! `width` consecutive elements from `offset + i·width`, where `width` is
//! the vector's component count and `offset` the pointer's element offset.
//! A whole vector is one access of the vector's bytes per lane (a `float4`
//! 16 bytes: four components of one site, the first charged), a member one
//! access of its component. The cost model places the access at the
//! element index of its first component; when the analysis cannot prove
//! that index a multiple of `width`, it charges the access as possibly
//! unaligned (one more sector), which bounds the aligned case too.
//! Any other change of element type (`(int *)floats`, a `float4` view of a
//! `float2` array) is refused: it reinterprets memory.

use std::sync::Arc;

use super::records::Place;
use super::*;
use crate::cuda::ast::{ExprKind as A, UnOp};
use crate::ir::record::FieldType;

/// A view pointer, lowered: the array, the element offset of the view's
/// element 0, and the view's vector type.
pub(super) struct ViewPtr {
    pub(super) array: ArrayId,
    pub(super) offset: Expr,
    pub(super) rec: Arc<Record>,
}

impl Lowerer<'_> {
    /// The vector type of the view `e` points with, found without
    /// lowering: a cast of a pointer into a scalar array to a pointer to a
    /// vector, a local view pointer, or one of those moved by `+`/`-`.
    pub(super) fn view_type(&mut self, e: &ast::Expr) -> Option<Arc<Record>> {
        match &e.kind {
            A::Cast(_, t, x) if t.pointers.len() == 1 => {
                let rec = self.record_type(t, e.meta.span).ok()??;
                let array = self.static_array(x)?;
                if self.records.contains_key(&array) {
                    return None;
                }
                Some(rec)
            }
            A::Ident(n) => match self.lookup(n, e.meta.span).ok()? {
                Binding::View { rec, .. } => Some(rec),
                _ => None,
            },
            A::Binary(BinOp::Add, l, r) => self.view_type(l).or_else(|| self.view_type(r)),
            A::Binary(BinOp::Sub, l, _) => self.view_type(l),
            _ => None,
        }
    }

    /// Lowers a view pointer (one [`Lowerer::view_type`] accepts).
    pub(super) fn view_pointer(&mut self, e: &ast::Expr, out: &mut Vec<Stmt>) -> Result<ViewPtr> {
        let span = e.meta.span;
        match &e.kind {
            A::Cast(style, t, x) => {
                let Some(rec) = self.record_type(t, span)? else {
                    return fail(span, "expected a pointer to a vector type");
                };
                let (array, off, inner) = self.pointer(x, out)?;
                if !inner.is_empty() && off.is_some() {
                    return fail(
                        span,
                        "a view of a multi-dimensional array at an offset is not supported",
                    );
                }
                let elem = self.k.arrays[array].elem;
                let fits = !self.records.contains_key(&array)
                    && rec.types.iter().all(|&t| t == elem)
                    && rec.size == elem.size() * rec.types.len() as u32;
                if !fits {
                    let what = style.keyword().unwrap_or("cast");
                    return fail(
                        span,
                        format!(
                            "`{what}` of a `{}` array to `{} *` is not supported (it reinterprets memory; views of a vector of the array's element type are)",
                            elem.c_name(),
                            rec.name
                        ),
                    );
                }
                let offset = off.map_or(int(0, Scalar::I64), |o| convert(o, Scalar::I64));
                Ok(ViewPtr { array, offset, rec })
            }
            A::Ident(n) => match self.lookup(n, span)? {
                Binding::View { array, offset, rec } => Ok(ViewPtr {
                    array,
                    offset: var_expr(&self.k, offset),
                    rec,
                }),
                _ => fail(span, format!("`{n}` is not a view pointer")),
            },
            A::Binary(op @ (BinOp::Add | BinOp::Sub), l, r) => {
                let (p, k) = if self.view_type(l).is_some() {
                    (l, r)
                } else {
                    (r, l)
                };
                let v = self.view_pointer(p, out)?;
                let k = convert(self.expr(k, out)?, Scalar::I64);
                let step = arith(BinOp::Mul, k, int(v.width(), Scalar::I64), span)?;
                let offset = arith(*op, v.offset, step, span)?;
                Ok(ViewPtr { offset, ..v })
            }
            _ => fail(span, "expected a view pointer"),
        }
    }

    /// The element a view expression (`v[i]`, `*v`, `((int2 *)a)[i]`)
    /// denotes, when `e` is one.
    pub(super) fn view_place(
        &mut self,
        e: &ast::Expr,
        out: &mut Vec<Stmt>,
    ) -> Result<Option<(Place, FieldType)>> {
        let (p, index) = match &e.kind {
            A::Index(b, i) => (b.as_ref(), Some(i.as_ref())),
            A::Unary(UnOp::Deref, p) => (p.as_ref(), None),
            _ => return Ok(None),
        };
        if self.view_type(p).is_none() {
            return Ok(None);
        }
        let v = self.view_pointer(p, out)?;
        let at = match index {
            Some(i) => {
                let k = self.expr(i, out)?;
                if k.ty.is_float() {
                    return fail(i.meta.span, "array index is not an integer");
                }
                let k = convert(k, Scalar::I64);
                let step = arith(BinOp::Mul, k, int(v.width(), Scalar::I64), e.meta.span)?;
                arith(BinOp::Add, v.offset, step, e.meta.span)?
            }
            None => v.offset,
        };
        Ok(Some((
            Place::View {
                array: v.array,
                index: at,
                first: 0,
            },
            FieldType::Record(v.rec),
        )))
    }

    /// Binds the local pointer `name` declared with initializer `init` to
    /// the view `init` denotes, when it is one of the declared type.
    pub(super) fn view_local(
        &mut self,
        d: &ast::VarDecl,
        init: &ast::Expr,
        out: &mut Vec<Stmt>,
    ) -> Result<bool> {
        if self.view_type(init).is_none() {
            return Ok(false);
        }
        let span = d.meta.span;
        let v = self.view_pointer(init, out)?;
        if self.record_type(&d.ty, span)?.map(|r| r.name.clone()) != Some(v.rec.name.clone()) {
            return fail(
                span,
                format!("`{}` must be declared a `{} *` pointer", d.name, v.rec.name),
            );
        }
        let ov = self.new_var(
            &format!("{}_offset", d.name),
            Scalar::I64,
            VarKind::Local,
            span,
        );
        out.push(Stmt::Assign {
            var: ov,
            value: v.offset,
            span,
        });
        self.bind(
            &d.name,
            Binding::View {
                array: v.array,
                offset: ov,
                rec: v.rec,
            },
        );
        Ok(true)
    }

    /// One access per component of a view place: the accesses of each
    /// piece of `ty` share one site of the piece's bytes, the first one
    /// charged. `write` gives each access its value (stores), otherwise
    /// the loads are returned.
    pub(super) fn view_accesses(
        &mut self,
        array: ArrayId,
        index: Expr,
        first: usize,
        ty: &FieldType,
        is_write: bool,
        meta: &ast::Meta,
    ) -> Vec<Access> {
        let mut accesses = Vec::new();
        for p in ty.pieces() {
            let site = self.site(array, is_write, meta, 0, p.bytes);
            for k in 0..p.slots {
                let at = (first + p.slot + k) as i64;
                let index = if at == 0 {
                    index.clone()
                } else {
                    Expr {
                        kind: ExprKind::Binary(
                            BinOp::Add,
                            Box::new(index.clone()),
                            Box::new(int(at, Scalar::I64)),
                        ),
                        ty: Scalar::I64,
                    }
                };
                accesses.push(Access {
                    array,
                    index: Box::new(index),
                    site,
                    slot: 0,
                    charged: k == 0,
                    member: None,
                });
            }
        }
        accesses
    }
}

impl ViewPtr {
    /// Array elements per view element.
    fn width(&self) -> i64 {
        self.rec.types.len() as i64
    }
}
