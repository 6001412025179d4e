//! Assignments and the places they write: expression statements,
//! simple and compound assignments, lvalues, array elements and pointer
//! arithmetic, and the memory accesses and access sites they make.

use super::records::{Dim, Place};
use super::*;
use crate::cuda::ast::{ExprKind as A, UnOp};
use crate::ir::record::FieldType;

/// A place to assign to: a variable, or component `slot` of an array
/// element (moved by run-time indices into array members).
pub(super) enum LValue {
    Var(VarId),
    Mem(ArrayId, Expr, usize, Vec<Dim>),
}

impl Lowerer<'_> {
    /// An access to a scalar element, with a new site.
    pub(super) fn access(
        &mut self,
        array: ArrayId,
        index: Expr,
        is_write: bool,
        meta: &ast::Meta,
    ) -> Access {
        self.access_slot(array, index, 0, is_write, meta)
    }

    /// An access to component `slot` of element `index`, with a new site.
    pub(super) fn access_slot(
        &mut self,
        array: ArrayId,
        index: Expr,
        slot: usize,
        is_write: bool,
        meta: &ast::Meta,
    ) -> Access {
        self.access_member(array, index, slot, &[], is_write, meta)
    }

    /// An access to component `slot` of element `index` moved by the
    /// run-time member indices `member`, with a new site.
    pub(super) fn access_member(
        &mut self,
        array: ArrayId,
        index: Expr,
        slot: usize,
        member: &[Dim],
        is_write: bool,
        meta: &ast::Meta,
    ) -> Access {
        let a = &self.k.arrays[array];
        let at = (a.layout.offsets[slot], a.slot_type(slot).size());
        let (site, index, member) = self.member_site(array, is_write, meta, at, index, member);
        Access {
            array,
            index: Box::new(index),
            site,
            slot,
            charged: true,
            member,
        }
    }

    /// An error unless the elements of `array` are scalars.
    pub(super) fn scalar_element(&self, array: ArrayId, span: Span) -> Result<()> {
        match self.records.get(&array) {
            Some(r) => fail(
                span,
                format!(
                    "a `{}` element used as a scalar (name a member, e.g. `.{}`)",
                    r.name, r.fields[0].name
                ),
            ),
            None => Ok(()),
        }
    }

    /// A new access site touching `width` bytes at `offset` in each
    /// element.
    pub(super) fn site(
        &mut self,
        array: ArrayId,
        is_write: bool,
        meta: &ast::Meta,
        offset: u32,
        width: u32,
    ) -> SiteId {
        self.k.sites.push(Site {
            array,
            is_write,
            span: meta.span,
            node: meta.id,
            call: self.frames.first().map(|f| f.call),
            offset,
            width,
            unit: None,
        });
        self.k.sites.len() - 1
    }

    /// Lowers an expression statement (value discarded).
    pub(super) fn effect(&mut self, e: &ast::Expr, out: &mut Vec<Stmt>) -> Result<()> {
        let span = e.meta.span;
        if let Some(call) = self.method_as_call(e)? {
            return self.effect(&call, out);
        }
        match &e.kind {
            A::Assign(op, lhs, rhs) => self.assign(*op, lhs, rhs, span, out, false).map(|_| ()),
            A::Unary(op @ (UnOp::PreInc | UnOp::PreDec | UnOp::PostInc | UnOp::PostDec), x) => {
                let (bop, one) = step_of(*op, &e.meta);
                self.assign(Some(bop), x, &one, span, out, false)
                    .map(|_| ())
            }
            A::Call(name, args) => self.call(name, args, span, out, false).map(|_| ()),
            A::Comma(xs) => xs.iter().try_for_each(|x| self.effect(x, out)),
            // `(void)x`, `static_cast<void>(x)`: the value is discarded,
            // and an operand without effects (an unused parameter, an
            // array) is not evaluated at all.
            A::Cast(_, t, x) if matches!(t.base, ast::BaseType::Void) && t.pointers.is_empty() => {
                if super::expr::expr_has_effects(x) {
                    self.effect(x, out)
                } else {
                    Ok(())
                }
            }
            _ => self.expr(e, out).map(|_| ()),
        }
    }

    /// Lowers an assignment; returns the assigned value as an expression
    /// that is valid after the statements emitted.
    pub(super) fn assign(
        &mut self,
        op: Option<BinOp>,
        lhs: &ast::Expr,
        rhs: &ast::Expr,
        span: Span,
        out: &mut Vec<Stmt>,
        want_value: bool,
    ) -> Result<Expr> {
        // Pointer assignment: `p = a + k`, `p += k`.
        if let A::Ident(n) = &lhs.kind {
            if let Binding::Ptr {
                array,
                offset: Some(ov),
                ..
            } = self.lookup(n, lhs.meta.span)?
            {
                let new_off = match op {
                    None => {
                        let (a2, off, _) = self.pointer(rhs, out)?;
                        if a2 != array {
                            return fail(
                                span,
                                "a pointer variable must always point into the same array",
                            );
                        }
                        off.map_or(int(0, Scalar::I64), |o| convert(o, Scalar::I64))
                    }
                    Some(o @ (BinOp::Add | BinOp::Sub)) => {
                        let k = self.expr(rhs, out)?;
                        arith(o, var_expr(&self.k, ov), convert(k, Scalar::I64), span)?
                    }
                    Some(_) => return fail(span, "this operator on a pointer"),
                };
                out.push(Stmt::Assign {
                    var: ov,
                    value: convert(new_off, Scalar::I64),
                    span,
                });
                return Ok(var_expr(&self.k, ov));
            }
        }
        if let Some(FieldType::Record(_)) = self.static_field_type(lhs) {
            if op.is_some() || want_value {
                return fail(
                    span,
                    "a struct or vector assignment used as a value or with an operator",
                );
            }
            self.record_assign(lhs, rhs, span, out)?;
            return Ok(int(0, Scalar::I32));
        }
        let target = self.lvalue(lhs, out)?;
        let r = self.expr(rhs, out)?;
        match target {
            LValue::Var(v) => {
                let ty = self.k.vars[v].ty;
                let value = match op {
                    None => r,
                    Some(o) => arith(o, var_expr(&self.k, v), r, span)?,
                };
                out.push(Stmt::Assign {
                    var: v,
                    value: convert(value, ty),
                    span,
                });
                Ok(var_expr(&self.k, v))
            }
            LValue::Mem(array, index, slot, member) => {
                let elem = self.k.arrays[array].slot_type(slot);
                let value = match op {
                    None => r,
                    Some(o) => {
                        let read = self.access_member(
                            array,
                            index.clone(),
                            slot,
                            &member,
                            false,
                            &lhs.meta,
                        );
                        let cur = Expr {
                            kind: ExprKind::Load(read),
                            ty: elem,
                        };
                        arith(o, cur, r, span)?
                    }
                };
                let mut value = convert(value, elem);
                if want_value {
                    // The assignment's value, saved before memory changes.
                    let t = self.temp(elem, span);
                    out.push(Stmt::Assign {
                        var: t,
                        value,
                        span,
                    });
                    value = var_expr(&self.k, t);
                }
                let access = self.access_member(array, index, slot, &member, true, &lhs.meta);
                out.push(Stmt::Store {
                    access,
                    value: value.clone(),
                    span,
                });
                Ok(value)
            }
        }
    }

    /// The place an lvalue denotes; index side effects are emitted.
    pub(super) fn lvalue(&mut self, e: &ast::Expr, out: &mut Vec<Stmt>) -> Result<LValue> {
        let span = e.meta.span;
        match &e.kind {
            A::Ident(n) => match self.lookup(n, span)? {
                Binding::Var(v) if self.k.vars[v].kind == VarKind::Symbol => fail(
                    span,
                    format!(
                        "cannot assign to `{n}`: {}",
                        crate::cuda::include::define_hint(n)
                    ),
                ),
                Binding::Var(v) => Ok(LValue::Var(v)),
                Binding::Cell(a) => Ok(LValue::Mem(a, int(0, Scalar::I64), 0, Vec::new())),
                Binding::Elem {
                    array,
                    index,
                    slot,
                    field,
                } => {
                    if !matches!(field, Some(FieldType::Scalar(_))) {
                        self.scalar_element(array, span)?;
                    }
                    let index = var_expr(&self.k, index);
                    Ok(LValue::Mem(array, index, slot, Vec::new()))
                }
                Binding::Const(..) => fail(span, format!("cannot assign to constant `{n}`")),
                Binding::Ptr { .. } | Binding::View { .. } => {
                    fail(span, format!("cannot assign to array `{n}`"))
                }
                Binding::Rec { .. } => fail(span, format!("`{n}` is a struct or vector")),
            },
            A::Index(b, _) if self.is_array_member(b) => self.member_lvalue(e, out),
            A::Index(..) | A::Unary(UnOp::Deref, _) => {
                let (a, idx) = self.element(e, out)?;
                self.scalar_element(a, span)?;
                Ok(LValue::Mem(a, idx, 0, Vec::new()))
            }
            A::Member { .. } => self.member_lvalue(e, out),
            _ => fail(span, "expression is not assignable"),
        }
    }

    /// The scalar a member (`p.x`, `cells[i].v[k]`) denotes, as an lvalue.
    fn member_lvalue(&mut self, e: &ast::Expr, out: &mut Vec<Stmt>) -> Result<LValue> {
        let span = e.meta.span;
        match self.place(e, out)? {
            (_, FieldType::Record(r)) => {
                fail(span, format!("`{}` member used as a scalar", r.name))
            }
            (_, FieldType::Array { .. }) => {
                fail(span, "an array member used as a scalar (index it)")
            }
            (Place::Vars(v), _) => Ok(LValue::Var(v[0])),
            (
                Place::View {
                    array,
                    index,
                    first,
                },
                _,
            ) => {
                let index = arith(BinOp::Add, index, int(first as i64, Scalar::I64), span)?;
                Ok(LValue::Mem(array, index, 0, Vec::new()))
            }
            (
                Place::Mem {
                    array,
                    index,
                    slot,
                    member,
                    ..
                },
                _,
            ) => Ok(LValue::Mem(array, index, slot, member)),
        }
    }

    /// The array and flattened index of `a[i][j]…` or `*p`.
    pub(super) fn element(
        &mut self,
        e: &ast::Expr,
        out: &mut Vec<Stmt>,
    ) -> Result<(ArrayId, Expr)> {
        let span = e.meta.span;
        let mut indices = Vec::new();
        let mut base = e;
        loop {
            match &base.kind {
                A::Index(b, i) => {
                    indices.push(i.as_ref());
                    base = b;
                }
                A::Unary(UnOp::Deref, p) if indices.is_empty() => {
                    let (array, off, _) = self.pointer(p, out)?;
                    return Ok((array, off.unwrap_or_else(|| int(0, Scalar::I64))));
                }
                _ => break,
            }
        }
        indices.reverse();
        let (array, off, inner) = self.pointer(base, out)?;
        if indices.len() > inner.len() + 1 {
            return fail(span, "too many indices for this array");
        }
        if indices.len() < inner.len() + 1 {
            return fail(
                span,
                "partially indexed multi-dimensional arrays are not supported",
            );
        }
        let mut idx: Option<Expr> = None;
        for (k, i) in indices.iter().enumerate() {
            let v = self.expr(i, out)?;
            if v.ty.is_float() {
                return fail(i.meta.span, "array index is not an integer");
            }
            idx = Some(match idx {
                None => v,
                Some(prev) => {
                    let scaled = arith(
                        BinOp::Mul,
                        convert(prev, Scalar::I64),
                        int(inner[k - 1] as i64, Scalar::I64),
                        span,
                    )?;
                    arith(BinOp::Add, scaled, convert(v, Scalar::I64), span)?
                }
            });
        }
        let idx = idx.unwrap_or_else(|| int(0, Scalar::I64));
        let idx = match off {
            Some(o) => arith(BinOp::Add, o, convert(idx, Scalar::I64), span)?,
            None => idx,
        };
        Ok((array, idx))
    }

    /// An expression denoting a pointer into an array: `a`, `a + k`,
    /// `&a[i]`, `p - k`. Returns the array, the element offset, and the
    /// inner dimensions.
    pub(super) fn pointer(
        &mut self,
        e: &ast::Expr,
        out: &mut Vec<Stmt>,
    ) -> Result<(ArrayId, Option<Expr>, Vec<u64>)> {
        let span = e.meta.span;
        match &e.kind {
            A::Ident(n) => match self.lookup(n, span)? {
                Binding::Ptr {
                    array,
                    offset,
                    inner,
                } => Ok((array, offset.map(|o| var_expr(&self.k, o)), inner)),
                Binding::Cell(a) => fail(
                    span,
                    format!(
                        "`{n}` is a scalar in memory, not an array ({})",
                        self.k.arrays[a].name
                    ),
                ),
                Binding::View { rec, .. } => fail(
                    span,
                    format!("`{n}` is a `{} *` view, used here as a pointer of its array's element type", rec.name),
                ),
                Binding::Var(_)
                | Binding::Rec { .. }
                | Binding::Elem { .. }
                | Binding::Const(..) => fail(span, format!("`{n}` is not an array or pointer")),
            },
            A::Binary(op @ (BinOp::Add | BinOp::Sub), l, r) => {
                let (p, k, neg) = if matches!(
                    l.kind,
                    A::Ident(_) | A::Binary(..) | A::Unary(UnOp::AddrOf, _)
                ) && self.is_pointer_expr(l)
                {
                    (l, r, *op == BinOp::Sub)
                } else if *op == BinOp::Add && self.is_pointer_expr(r) {
                    (r, l, false)
                } else {
                    return fail(span, "expected a pointer into an array");
                };
                let (array, off, inner) = self.pointer(p, out)?;
                if !inner.is_empty() {
                    return fail(
                        span,
                        "pointer arithmetic on multi-dimensional arrays is not supported",
                    );
                }
                let kv = convert(self.expr(k, out)?, Scalar::I64);
                let kv = if neg {
                    arith(BinOp::Sub, int(0, Scalar::I64), kv, span)?
                } else {
                    kv
                };
                let total = match off {
                    Some(o) => arith(BinOp::Add, o, kv, span)?,
                    None => kv,
                };
                Ok((array, Some(total), inner))
            }
            A::Unary(UnOp::AddrOf, x) => {
                let (a, idx) = match &x.kind {
                    A::Ident(n) => match self.lookup(n, span)? {
                        Binding::Cell(a) => (a, int(0, Scalar::I64)),
                        Binding::Elem {
                            array,
                            index,
                            field: None,
                            ..
                        } => (array, var_expr(&self.k, index)),
                        _ => return fail(span, "address of a local variable"),
                    },
                    _ => self.element(x, out)?,
                };
                Ok((a, Some(convert(idx, Scalar::I64)), Vec::new()))
            }
            A::Cast(style, t, x) => {
                let (array, off, inner) = self.pointer(x, out)?;
                let same = t.pointers.len() == 1
                    && self.scalar(t, span).ok() == Some(self.k.arrays[array].elem);
                if !same && !matches!(t.base, BaseType::Void) {
                    let what = style.keyword().unwrap_or("cast");
                    return fail(
                        span,
                        format!("`{what}` to a pointer of another element type is not supported (it reinterprets memory)"),
                    );
                }
                Ok((array, off, inner))
            }
            A::Call(..) => match self.dynamic_shared(e)? {
                Some(array) => Ok((array, None, Vec::new())),
                None => fail(span, "expected a pointer into an array"),
            },
            _ => fail(span, "expected a pointer into an array"),
        }
    }

    pub(super) fn is_pointer_expr(&self, e: &ast::Expr) -> bool {
        match &e.kind {
            A::Ident(n) => {
                matches!(
                    self.scopes.iter().rev().find_map(|s| s.get(n)),
                    Some(Binding::Ptr { .. })
                ) || self
                    .file
                    .globals
                    .iter()
                    .any(|g| &g.name == n && !g.dims.is_empty())
            }
            A::Binary(BinOp::Add | BinOp::Sub, l, r) => {
                self.is_pointer_expr(l) || self.is_pointer_expr(r)
            }
            A::Unary(UnOp::AddrOf, _) => true,
            A::Cast(_, t, x) => !t.pointers.is_empty() && self.is_pointer_expr(x),
            _ => false,
        }
    }
}
