//! Lowering of struct and CUDA vector values (`float4`, `int2`, `Node`):
//! each value becomes one scalar per component ([`super::record`]), a
//! field is a component range, and a copy from or to memory makes one
//! access per piece of the type (a whole `float4` is one 16-byte access,
//! its four components one charged access and three free ones of the same
//! site).

use std::sync::Arc;

use super::globals::flatten_init;
use super::names::callee;
use super::*;
use crate::cuda::ast::{ExprKind as A, UnOp};
use crate::ir::record::{FieldType, Record};

/// Where a struct or vector value, or a field of one, lives.
pub(super) enum Place {
    /// Components in variables.
    Vars(Vec<VarId>),
    /// Components of an array element from component `slot` (at byte
    /// `offset` of the element) on, moved by the run-time indices into
    /// array members `member` (`cells[i].v[k]`: `slot` and `offset` are
    /// those of `v[0]`).
    Mem {
        array: ArrayId,
        index: Expr,
        slot: usize,
        offset: u32,
        member: Vec<Dim>,
    },
    /// Components of a vector view of a scalar array from component
    /// `first` on: component `k` is element `index + k`
    /// ([`super::views`]).
    View {
        array: ArrayId,
        index: Expr,
        first: usize,
    },
}

/// A run-time index into an array member of a place in memory.
#[derive(Clone, Debug)]
pub(super) struct Dim {
    /// The variable holding the index.
    pub(super) var: VarId,
    /// The member as written (`cells[i].v`).
    pub(super) name: String,
    /// Number of elements.
    pub(super) len: u64,
    /// Components per element.
    pub(super) slots: usize,
    /// Bytes per element.
    pub(super) bytes: u32,
}

impl Place {
    /// The `n` components from component `slot`, at byte `offset` of this
    /// place (a field, or a member element at a constant index).
    pub(super) fn part(self, slot: usize, n: usize, offset: u32) -> Place {
        match self {
            Place::Vars(v) => Place::Vars(v[slot..slot + n].to_vec()),
            Place::Mem {
                array,
                index,
                slot: first,
                offset: at,
                member,
            } => Place::Mem {
                array,
                index,
                slot: first + slot,
                offset: at + offset,
                member,
            },
            Place::View {
                array,
                index,
                first,
            } => Place::View {
                array,
                index,
                first: first + slot,
            },
        }
    }
}

/// Whether `e` reads variable `v` or array `a`.
fn mentions(e: &Expr, vars: &[VarId], array: Option<ArrayId>) -> bool {
    let mut hit = false;
    e.visit(&mut |x| match &x.kind {
        ExprKind::Var(v) if vars.contains(v) => hit = true,
        ExprKind::Load(acc) if Some(acc.array) == array => hit = true,
        _ => {}
    });
    hit
}

/// The record type a builtin vector (`threadIdx`, `blockDim`, …) has, and
/// its components.
fn builtin_vector(name: &str) -> Option<(Record, [Builtin; 3])> {
    let dims = |f: fn(u8) -> Builtin| [f(0), f(1), f(2)];
    let (ty, b) = match name {
        "threadIdx" => ("uint3", dims(Builtin::ThreadIdx)),
        "blockIdx" => ("uint3", dims(Builtin::BlockIdx)),
        "blockDim" => ("dim3", dims(Builtin::BlockDim)),
        "gridDim" => ("dim3", dims(Builtin::GridDim)),
        _ => return None,
    };
    Some((Record::vector(ty)?, b))
}

impl Lowerer<'_> {
    /// The struct or vector type `t` names (through typedefs), if any.
    pub(super) fn record_type(&mut self, t: &ast::Type, span: Span) -> Result<Option<Arc<Record>>> {
        let mut base = t.base.clone();
        for _ in 0..16 {
            let BaseType::Named(n) = &base else {
                return Ok(None);
            };
            let name = ast::type_key(n).to_string();
            let name = self.bound_instance(&name).unwrap_or(name);
            if let Some(r) = self.record_cache.get(&name) {
                return Ok(Some(r.clone()));
            }
            if let Some(r) = Record::vector(&name) {
                let r = Arc::new(r);
                self.record_cache.insert(name, r.clone());
                return Ok(Some(r));
            }
            if let Some(def) = self.file.structs.get(&name) {
                let mut fields = Vec::new();
                for f in def {
                    if f.ty.is_pointer() {
                        return fail(
                            span,
                            format!("struct `{name}` has a pointer field (`{}`), which copper does not support yet", f.name),
                        );
                    }
                    let mut ty = match self.record_type(&f.ty, span)? {
                        Some(r) => FieldType::Record(r),
                        None => FieldType::Scalar(self.scalar(&f.ty, span)?),
                    };
                    for len in self.dims(&f.dims, span)?.into_iter().rev() {
                        ty = FieldType::array(ty, len).ok_or(())
                            .or_else(|()| fail(span, format!("array member `{}` of struct `{name}` is too large: copper handles at most {} scalar components per struct", f.name, crate::ir::record::MAX_SLOTS)))?;
                    }
                    fields.push((f.name.clone(), ty));
                }
                let r = Arc::new(Record::structure(&name, fields).or_else(|m| fail(span, m))?);
                self.record_cache.insert(name, r.clone());
                return Ok(Some(r));
            }
            match self.file.typedefs.get(&name) {
                Some(td) if td.pointers.is_empty() => base = td.base.clone(),
                _ => return Ok(None),
            }
        }
        Ok(None)
    }

    /// The type of `e` when it is a struct or vector value or a field of
    /// one, found without lowering anything; `None` otherwise.
    pub(super) fn static_field_type(&mut self, e: &ast::Expr) -> Option<FieldType> {
        match &e.kind {
            A::Ident(n) => match self.lookup(n, e.meta.span) {
                Ok(Binding::Rec { rec, .. }) => Some(FieldType::Record(rec)),
                Ok(Binding::Elem { field: Some(f), .. }) => Some(f),
                Ok(Binding::Cell(a) | Binding::Elem { array: a, .. }) => {
                    self.records.get(&a).cloned().map(FieldType::Record)
                }
                Ok(_) => None,
                Err(_) => builtin_vector(n).map(|(r, _)| FieldType::Record(Arc::new(r))),
            },
            A::Index(b, _) => {
                if let Some(FieldType::Array { elem, .. }) = self.static_field_type(b) {
                    return Some(*elem);
                }
                if let Some(rec) = self.view_type(b) {
                    return Some(FieldType::Record(rec));
                }
                let mut base = b.as_ref();
                while let A::Index(inner, _) = &base.kind {
                    base = inner;
                }
                self.static_array(base)
                    .and_then(|a| self.records.get(&a).cloned())
                    .map(FieldType::Record)
            }
            A::Unary(UnOp::Deref, p) if self.view_type(p).is_some() => {
                self.view_type(p).map(FieldType::Record)
            }
            A::Unary(UnOp::Deref, p) => self
                .static_array(p)
                .and_then(|a| self.records.get(&a).cloned())
                .map(FieldType::Record),
            A::Member { base, field, arrow } => {
                let rec = if *arrow {
                    self.static_array(base)
                        .and_then(|a| self.records.get(&a).cloned())?
                } else {
                    match self.static_field_type(base)? {
                        FieldType::Record(r) => r,
                        _ => return None,
                    }
                };
                rec.field(field).map(|f| f.ty.clone())
            }
            A::Call(n, args) => match n.strip_prefix("make_").and_then(Record::vector) {
                Some(r) => Some(FieldType::Record(Arc::new(r))),
                None => self
                    .half2_static_type(n, args)
                    .or_else(|| self.returned_record(n).map(FieldType::Record)),
            },
            _ => None,
        }
    }

    /// The struct or vector type device function `name` returns, if it
    /// returns one (not for templates, whose return type may depend on
    /// their arguments).
    fn returned_record(&mut self, name: &str) -> Option<Arc<Record>> {
        let f = callee(self.file, name).ok()?.result.as_ref().ok()?;
        if f.template.is_some() || !f.ret.pointers.is_empty() {
            return None;
        }
        self.record_type(&f.ret, f.meta.span).ok().flatten()
    }

    /// The array a pointer expression points into, found without lowering.
    pub(super) fn static_array(&mut self, e: &ast::Expr) -> Option<ArrayId> {
        match &e.kind {
            A::Ident(n) => match self.lookup(n, e.meta.span).ok()? {
                Binding::Ptr { array, .. } | Binding::View { array, .. } => Some(array),
                _ => None,
            },
            A::Binary(BinOp::Add | BinOp::Sub, l, r) => {
                self.static_array(l).or_else(|| self.static_array(r))
            }
            A::Cast(_, _, x) => self.static_array(x),
            A::Unary(UnOp::AddrOf, x) => match &x.kind {
                A::Index(b, _) => self.static_array(b),
                _ => None,
            },
            _ => None,
        }
    }

    /// Where a struct or vector value, a field of one, or an element of an
    /// array lives; index side effects are emitted.
    pub(super) fn place(
        &mut self,
        e: &ast::Expr,
        out: &mut Vec<Stmt>,
    ) -> Result<(Place, FieldType)> {
        let span = e.meta.span;
        match &e.kind {
            A::Ident(n) => match self.lookup(n, span)? {
                Binding::Rec { vars, rec } => Ok((Place::Vars(vars), FieldType::Record(rec))),
                Binding::Var(v) => Ok((Place::Vars(vec![v]), FieldType::Scalar(self.k.vars[v].ty))),
                Binding::Cell(a) => Ok((
                    Place::Mem {
                        array: a,
                        index: int(0, Scalar::I64),
                        slot: 0,
                        offset: 0,
                        member: Vec::new(),
                    },
                    self.element_type(a),
                )),
                Binding::Elem {
                    array,
                    index,
                    slot,
                    field,
                } => Ok((
                    Place::Mem {
                        array,
                        index: var_expr(&self.k, index),
                        slot,
                        offset: self.k.arrays[array].layout.offsets[slot],
                        member: Vec::new(),
                    },
                    field.unwrap_or_else(|| self.element_type(array)),
                )),
                Binding::Const(..) => fail(
                    span,
                    format!("constant `{n}` used where a struct or vector is expected"),
                ),
                Binding::Ptr { .. } | Binding::View { .. } => {
                    fail(span, format!("array `{n}` used as a value"))
                }
            },
            A::Index(b, i) if self.is_array_member(b) => self.index_member(b, i, out),
            A::Index(..) | A::Unary(UnOp::Deref, _) => {
                if let Some(view) = self.view_place(e, out)? {
                    return Ok(view);
                }
                let (array, index) = self.element(e, out)?;
                Ok((
                    Place::Mem {
                        array,
                        index,
                        slot: 0,
                        offset: 0,
                        member: Vec::new(),
                    },
                    self.element_type(array),
                ))
            }
            A::Member { base, field, arrow } => {
                let (place, ty) = if *arrow {
                    let (array, off, _) = self.pointer(base, out)?;
                    let index = off.unwrap_or_else(|| int(0, Scalar::I64));
                    let place = Place::Mem {
                        array,
                        index,
                        slot: 0,
                        offset: 0,
                        member: Vec::new(),
                    };
                    (place, self.element_type(array))
                } else {
                    self.place(base, out)?
                };
                let FieldType::Record(rec) = ty else {
                    return fail(
                        span,
                        format!("member `.{field}` of a value that is not a struct or vector"),
                    );
                };
                let Some(f) = rec.field(field) else {
                    return fail(span, format!("`{}` has no member `{field}`", rec.name));
                };
                let place = place.part(f.slot, f.ty.slots(), f.offset);
                Ok((place, f.ty.clone()))
            }
            A::Call(..) | A::Method { .. } => {
                // A returned value (`cmul(a, b).x`): its components in
                // variables.
                let (rec, vals) = self.record_value(e, out)?;
                let vars: Option<Vec<VarId>> = vals
                    .iter()
                    .map(|v| match v.kind {
                        ExprKind::Var(x) => Some(x),
                        _ => None,
                    })
                    .collect();
                let vars = match vars {
                    Some(v) => v,
                    None => {
                        let vars = self.record_vars("tmp", &rec, VarKind::Local, span);
                        let ty = FieldType::Record(rec.clone());
                        self.write_place(Place::Vars(vars.clone()), &ty, vals, &e.meta, out);
                        vars
                    }
                };
                Ok((Place::Vars(vars), FieldType::Record(rec)))
            }
            _ => fail(span, "expected a struct or vector value"),
        }
    }

    /// The type of an element of array `a`.
    fn element_type(&self, a: ArrayId) -> FieldType {
        match self.records.get(&a) {
            Some(r) => FieldType::Record(r.clone()),
            None => FieldType::Scalar(self.k.arrays[a].elem),
        }
    }

    /// The components of a place, read: one access per piece of its type
    /// for memory.
    pub(super) fn read_place(
        &mut self,
        place: Place,
        ty: &FieldType,
        meta: &ast::Meta,
        out: &mut Vec<Stmt>,
    ) -> Vec<Expr> {
        match place {
            Place::Vars(vars) => vars.iter().map(|&v| var_expr(&self.k, v)).collect(),
            Place::View {
                array,
                index,
                first,
            } => {
                let index = self.shared_index(index, ty, meta.span, out);
                let ty_of = self.k.arrays[array].elem;
                self.view_accesses(array, index, first, ty, false, meta)
                    .into_iter()
                    .map(|a| Expr {
                        kind: ExprKind::Load(a),
                        ty: ty_of,
                    })
                    .collect()
            }
            Place::Mem {
                array,
                index,
                slot,
                offset,
                member,
            } => {
                let index = self.shared_index(index, ty, meta.span, out);
                let mut vals = Vec::new();
                for p in ty.pieces() {
                    let at = (offset + p.offset, p.bytes);
                    let (site, index, m) =
                        self.member_site(array, false, meta, at, index.clone(), &member);
                    for k in 0..p.slots {
                        let slot = slot + p.slot + k;
                        vals.push(Expr {
                            kind: ExprKind::Load(Access {
                                array,
                                index: Box::new(index.clone()),
                                site,
                                slot,
                                charged: k == 0,
                                member: m.clone(),
                            }),
                            ty: self.k.arrays[array].slot_type(slot),
                        });
                    }
                }
                vals
            }
        }
    }

    /// Writes the components `values` (already of the components' types)
    /// to a place: one access per piece of its type for memory. Values that
    /// read the place are saved first.
    pub(super) fn write_place(
        &mut self,
        place: Place,
        ty: &FieldType,
        values: Vec<Expr>,
        meta: &ast::Meta,
        out: &mut Vec<Stmt>,
    ) {
        let span = meta.span;
        let (vars, array) = match &place {
            Place::Vars(v) => (v.clone(), None),
            Place::Mem { array, .. } | Place::View { array, .. } => (Vec::new(), Some(*array)),
        };
        let values = if values.len() > 1 && values.iter().any(|v| mentions(v, &vars, array)) {
            values
                .into_iter()
                .map(|v| self.snapshot(v, span, out))
                .collect()
        } else {
            values
        };
        match place {
            Place::Vars(vars) => {
                for (var, value) in vars.into_iter().zip(values) {
                    out.push(Stmt::Assign { var, value, span });
                }
            }
            Place::View {
                array,
                index,
                first,
            } => {
                let index = self.shared_index(index, ty, span, out);
                let accesses = self.view_accesses(array, index, first, ty, true, meta);
                for (access, value) in accesses.into_iter().zip(values) {
                    out.push(Stmt::Store {
                        access,
                        value,
                        span,
                    });
                }
            }
            Place::Mem {
                array,
                index,
                slot,
                offset,
                member,
            } => {
                let index = self.shared_index(index, ty, span, out);
                let mut values = values.into_iter();
                for p in ty.pieces() {
                    let at = (offset + p.offset, p.bytes);
                    let (site, index, m) =
                        self.member_site(array, true, meta, at, index.clone(), &member);
                    for k in 0..p.slots {
                        let Some(value) = values.next() else {
                            return;
                        };
                        out.push(Stmt::Store {
                            access: Access {
                                array,
                                index: Box::new(index.clone()),
                                site,
                                slot: slot + p.slot + k,
                                charged: k == 0,
                                member: m.clone(),
                            },
                            value,
                            span,
                        });
                    }
                }
            }
        }
    }

    /// An index used by several components, computed once when it is
    /// more than a variable or constant.
    fn shared_index(
        &mut self,
        index: Expr,
        ty: &FieldType,
        span: Span,
        out: &mut Vec<Stmt>,
    ) -> Expr {
        if ty.slots() > 1 && !matches!(index.kind, ExprKind::Var(_) | ExprKind::Const(_)) {
            self.snapshot(index, span, out)
        } else {
            index
        }
    }

    /// A struct or vector value: its type and components.
    pub(super) fn record_value(
        &mut self,
        e: &ast::Expr,
        out: &mut Vec<Stmt>,
    ) -> Result<(Arc<Record>, Vec<Expr>)> {
        let span = e.meta.span;
        if let Some(call) = self.method_as_call(e)? {
            return self.record_value(&call, out);
        }
        if let A::Call(name, args) = &e.kind {
            if let Some(v) = self.half2_value(name, args, span, out)? {
                return Ok(v);
            }
            let Some(rec) = name.strip_prefix("make_").and_then(Record::vector) else {
                return match self.inline(name, args, span, out)? {
                    Returned::Record(rec, vars) => {
                        let vals = vars.iter().map(|&v| var_expr(&self.k, v)).collect();
                        Ok((rec, vals))
                    }
                    _ => fail(
                        span,
                        format!("`{name}` does not return a struct or vector value"),
                    ),
                };
            };
            if args.len() != rec.offsets.len() {
                return fail(
                    span,
                    format!(
                        "`{name}` takes {} arguments but {} were given",
                        rec.offsets.len(),
                        args.len()
                    ),
                );
            }
            let mut vals = Vec::new();
            for (a, &ty) in args.iter().zip(&rec.types) {
                let v = self.expr(a, out)?;
                vals.push(convert(v, ty));
            }
            return Ok((Arc::new(rec), vals));
        }
        if let A::Ident(n) = &e.kind {
            if self.lookup(n, span).is_err() {
                if let Some((rec, dims)) = builtin_vector(n) {
                    let vals = dims
                        .iter()
                        .map(|&b| Expr {
                            kind: ExprKind::Builtin(b),
                            ty: Scalar::U32,
                        })
                        .collect();
                    return Ok((Arc::new(rec), vals));
                }
            }
        }
        if let A::Cond(c, a, b) = &e.kind {
            return self.record_select(c, a, b, &e.meta, out);
        }
        let (place, ty) = self.place(e, out)?;
        let FieldType::Record(rec) = ty.clone() else {
            return fail(span, "expected a struct or vector value, found a scalar");
        };
        let vals = self.read_place(place, &ty, &e.meta, out);
        Ok((rec, vals))
    }

    /// The binding of a reference named `name` of struct or vector type
    /// `rec` to `e` (`const Particle &p = tile[k]`, a reference
    /// parameter): the variables of a local, or the array element itself
    /// (its index evaluated once, here). A `const` reference to a value
    /// that is not an lvalue (a returned struct) binds to a copy.
    pub(super) fn record_reference(
        &mut self,
        e: &ast::Expr,
        rec: &Arc<Record>,
        name: &str,
        is_const: bool,
        out: &mut Vec<Stmt>,
    ) -> Result<Binding> {
        let span = e.meta.span;
        if matches!(e.kind, A::Call(..) | A::Method { .. }) {
            if !is_const {
                return fail(span, "a non-`const` reference to a returned value");
            }
            let (from, vals) = self.record_value(e, out)?;
            check_compatible(rec, &from, span)?;
            let vars = self.record_vars(name, rec, VarKind::Local, span);
            let ty = FieldType::Record(rec.clone());
            self.write_place(Place::Vars(vars.clone()), &ty, vals, &e.meta, out);
            return Ok(Binding::Rec {
                vars,
                rec: rec.clone(),
            });
        }
        let (place, ty) = self.place(e, out)?;
        let FieldType::Record(from) = ty else {
            return fail(
                span,
                format!("a `{}` reference bound to a scalar", rec.name),
            );
        };
        check_compatible(rec, &from, span)?;
        match place {
            Place::Vars(vars) => Ok(Binding::Rec {
                vars,
                rec: rec.clone(),
            }),
            Place::View { .. } => fail(
                span,
                format!("a reference into a vector view (`{}`) is not supported (copy the element to a local)", crate::cuda::print::expression(e)),
            ),
            Place::Mem { member, .. } if !member.is_empty() => fail(
                span,
                format!("a reference to `{}`, an element of an array member at a run-time index, is not supported (index the member where it is used)", crate::cuda::print::expression(e)),
            ),
            Place::Mem {
                array, index, slot, ..
            } => {
                let whole = slot == 0
                    && self
                        .records
                        .get(&array)
                        .is_some_and(|r| r.name == from.name);
                let iv = self.new_var(&format!("{name}_index"), Scalar::I64, VarKind::Local, span);
                out.push(Stmt::Assign {
                    var: iv,
                    value: convert(index, Scalar::I64),
                    span,
                });
                Ok(Binding::Elem {
                    array,
                    index: iv,
                    slot,
                    field: (!whole).then_some(FieldType::Record(from)),
                })
            }
        }
    }

    /// `return e;` in an inlined function returning a struct or vector of
    /// type `rec`, whose result is in `vars`.
    pub(super) fn record_return(
        &mut self,
        e: &ast::Expr,
        rec: &Arc<Record>,
        vars: Vec<VarId>,
        span: Span,
        out: &mut Vec<Stmt>,
    ) -> Result<()> {
        let (from, vals) = self.record_value(e, out)?;
        check_compatible(rec, &from, span)?;
        let ty = FieldType::Record(rec.clone());
        self.write_place(Place::Vars(vars), &ty, vals, &e.meta, out);
        Ok(())
    }

    /// `c ? a : b` of struct or vector type: each side evaluated only for
    /// its lanes, as for scalars (one select per component, or an `if`
    /// into new variables when a side has statements of its own).
    fn record_select(
        &mut self,
        c: &ast::Expr,
        a: &ast::Expr,
        b: &ast::Expr,
        meta: &ast::Meta,
        out: &mut Vec<Stmt>,
    ) -> Result<(Arc<Record>, Vec<Expr>)> {
        let span = meta.span;
        let cond = self.expr(c, out)?;
        let mut then = Vec::new();
        let (rec, av) = self.record_value(a, &mut then)?;
        let mut els = Vec::new();
        let (from, bv) = self.record_value(b, &mut els)?;
        check_compatible(&rec, &from, span)?;
        if then.is_empty() && els.is_empty() {
            let cond = self.snapshot(cond, span, out);
            let vals = av
                .into_iter()
                .zip(bv)
                .zip(&rec.types)
                .map(|((x, y), &ty)| Expr {
                    kind: ExprKind::Select(Box::new(cond.clone()), Box::new(x), Box::new(y)),
                    ty,
                })
                .collect();
            return Ok((rec, vals));
        }
        let vars = self.record_vars("tmp", &rec, VarKind::Local, span);
        let ty = FieldType::Record(rec.clone());
        self.write_place(Place::Vars(vars.clone()), &ty, av, meta, &mut then);
        self.write_place(Place::Vars(vars.clone()), &ty, bv, meta, &mut els);
        out.push(Stmt::If {
            cond,
            then,
            els,
            span,
        });
        let vals = vars.iter().map(|&v| var_expr(&self.k, v)).collect();
        Ok((rec, vals))
    }

    /// The value of a scalar member (`v.x`, `nodes[i].start`, `p->w`).
    pub(super) fn member_value(&mut self, e: &ast::Expr, out: &mut Vec<Stmt>) -> Result<Expr> {
        let (place, ty) = self.place(e, out)?;
        match &ty {
            FieldType::Record(r) => {
                return fail(
                    e.meta.span,
                    format!("a `{}` member used as a scalar value", r.name),
                )
            }
            FieldType::Array { .. } => {
                return fail(e.meta.span, "an array member used as a value (index it)")
            }
            FieldType::Scalar(_) => {}
        }
        let mut vals = self.read_place(place, &ty, &e.meta, out);
        Ok(vals.remove(0))
    }

    /// `target = value` for a struct or vector `target` of type `rec`.
    pub(super) fn record_assign(
        &mut self,
        lhs: &ast::Expr,
        rhs: &ast::Expr,
        span: Span,
        out: &mut Vec<Stmt>,
    ) -> Result<()> {
        let (rec, vals) = self.record_value(rhs, out)?;
        let (place, ty) = self.place(lhs, out)?;
        let FieldType::Record(target) = &ty else {
            return fail(span, "assignment of a struct or vector value to a scalar");
        };
        check_compatible(target, &rec, span)?;
        self.write_place(place, &ty, vals, &lhs.meta, out);
        Ok(())
    }

    /// One new variable of `kind` per component of a `rec` named `name`
    /// (`p.w`, `c.x`).
    pub(super) fn record_vars(
        &mut self,
        name: &str,
        rec: &Record,
        kind: VarKind,
        span: Span,
    ) -> Vec<VarId> {
        let mut names = Vec::new();
        rec.component_names(name, &mut names);
        names
            .iter()
            .zip(&rec.types)
            .map(|(n, &ty)| self.new_var(n, ty, kind, span))
            .collect()
    }

    /// A local of struct or vector type `rec` (`float4 v = a[i];`).
    pub(super) fn record_local(
        &mut self,
        d: &ast::VarDecl,
        rec: Arc<Record>,
        out: &mut Vec<Stmt>,
    ) -> Result<()> {
        let copied = matches!(d.init, Some(ast::Init::Expr(_)));
        if !copied && self.file.extracted.has_constructor(&rec.name) {
            return fail(
                d.meta.span,
                format!(
                    "`{} {}` is built by a constructor of `{}`, which copper does not read (a struct with constructors is no aggregate: remove them and initialize it with `{{…}}`)",
                    rec.name, d.name, rec.name
                ),
            );
        }
        if rec.has_array() {
            return self.record_cell(d, rec, out);
        }
        let span = d.meta.span;
        let vars = self.record_vars(&d.name, &rec, VarKind::Local, span);
        match &d.init {
            None => {}
            Some(ast::Init::Expr(e)) => {
                let (from, vals) = self.record_value(e, out)?;
                check_compatible(&rec, &from, span)?;
                self.write_place(
                    Place::Vars(vars.clone()),
                    &FieldType::Record(rec.clone()),
                    vals,
                    &d.meta,
                    out,
                );
            }
            Some(list @ ast::Init::List(_)) => {
                let mut flat = Vec::new();
                flatten_init(list, &mut flat);
                if flat.len() > vars.len() {
                    return fail(span, format!("too many initializers for `{}`", rec.name));
                }
                for (i, &var) in vars.iter().enumerate() {
                    let value = match flat.get(i) {
                        Some(e) => self.expr(e, out)?,
                        None => int(0, Scalar::I32),
                    };
                    out.push(Stmt::Assign {
                        var,
                        value: convert(value, rec.types[i]),
                        span,
                    });
                }
            }
        }
        self.bind(&d.name, Binding::Rec { vars, rec });
        Ok(())
    }
}

/// Whether a value of type `from` can be assigned to `to`: the same type,
/// or vectors of the same components (`dim3` from `uint3`).
pub(super) fn check_compatible(to: &Record, from: &Record, span: Span) -> Result<()> {
    let same_shape = to.offsets == from.offsets && to.types == from.types;
    let vectors = Record::vector(&to.name).is_some() && Record::vector(&from.name).is_some();
    if to.name == from.name || (same_shape && vectors) {
        Ok(())
    } else {
        fail(
            span,
            format!("a `{}` value assigned to a `{}`", from.name, to.name),
        )
    }
}
