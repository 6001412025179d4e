//! Local declarations: scalars, arrays, `auto`, references, the constant
//! value of a `const` local, and what a name is bound to.

use super::assign::LValue;
use super::globals::flatten_init;
use super::*;
use crate::ir::record::FieldType;

impl Lowerer<'_> {
    pub(super) fn decl(&mut self, d: &ast::VarDecl, out: &mut Vec<Stmt>) -> Result<()> {
        let span = d.meta.span;
        if d.is_static && d.space == Space::Local {
            return fail(span, "`static` local variables are not supported");
        }
        if d.ty.is_ref {
            return self.reference(d, out);
        }
        if d.ty.base == BaseType::Auto {
            return self.auto_decl(d, out);
        }
        let pointer = self.pointer_depth(&d.ty);
        if pointer > 1 {
            return fail(span, "pointers to pointers are not supported");
        }
        if pointer == 1 {
            if d.space != Space::Local || !d.dims.is_empty() {
                return fail(
                    span,
                    "arrays of pointers and pointers in shared memory are not supported",
                );
            }
            let Some(ast::Init::Expr(init)) = &d.init else {
                return fail(span, "a pointer variable must be initialized from an array");
            };
            if self.view_local(d, init, out)? {
                return Ok(());
            }
            let (array, off, inner) = self.pointer(init, out)?;
            let ov = self.new_var(
                &format!("{}_offset", d.name),
                Scalar::I64,
                VarKind::Local,
                span,
            );
            out.push(Stmt::Assign {
                var: ov,
                value: off.map_or(int(0, Scalar::I64), |o| convert(o, Scalar::I64)),
                span,
            });
            self.bind(
                &d.name,
                Binding::Ptr {
                    array,
                    offset: Some(ov),
                    inner,
                },
            );
            return Ok(());
        }
        let rec = self.record_type(&d.ty, span)?;
        let is_array = !d.dims.is_empty();
        let memory = !matches!(d.space, Space::Local);
        if let (Some(r), false, false) = (&rec, is_array, memory) {
            return self.record_local(d, r.clone(), out);
        }
        let elem = match &rec {
            Some(r) => r.types[0],
            None => self.scalar(&d.ty, span)?,
        };
        // A scalar whose address is taken lives in memory: one element of
        // local memory, which `&x` points at.
        let addressed = self.addressed.contains(&d.name);
        if is_array || memory || addressed {
            let dims = if d.is_extern && d.dims.len() == 1 && d.dims[0].is_none() {
                Vec::new()
            } else {
                let dims = self.dims(&d.dims, span)?;
                if dims.is_empty() {
                    vec![1]
                } else {
                    dims
                }
            };
            let space = if d.space == Space::Local {
                Space::Local
            } else {
                d.space
            };
            if !matches!(space, Space::Local | Space::Shared) {
                return fail(
                    span,
                    "only local and `__shared__` variables can be declared in a kernel",
                );
            }
            let name = self.unique(&d.name);
            let id = self.new_array(Array {
                name,
                space,
                elem,
                layout: rec.as_ref().map_or(Layout::scalar(elem), |r| r.layout()),
                dims: dims.clone(),
                param: None,
                init: Vec::new(),
                span,
            });
            if let Some(r) = &rec {
                self.records.insert(id, r.clone());
                if d.init.is_some() {
                    return fail(
                        span,
                        "initializers of struct or vector arrays are not supported yet",
                    );
                }
            }
            if is_array {
                self.bind(
                    &d.name,
                    Binding::Ptr {
                        array: id,
                        offset: None,
                        inner: dims.get(1..).unwrap_or(&[]).to_vec(),
                    },
                );
            } else {
                self.bind(&d.name, Binding::Cell(id));
            }
            if let Some(init) = &d.init {
                if space == Space::Shared {
                    return fail(span, "`__shared__` variables cannot have initializers");
                }
                let mut flat = Vec::new();
                flatten_init(init, &mut flat);
                for (i, e) in flat.into_iter().enumerate() {
                    let v = self.expr(e, out)?;
                    let access = self.access(id, int(i as i64, Scalar::I64), true, &e.meta);
                    out.push(Stmt::Store {
                        access,
                        value: convert(v, elem),
                        span,
                    });
                }
            }
            return Ok(());
        }
        if let Some(c) = self.local_constant(d, elem) {
            // `const int TILE = 16;` reads as 16 everywhere, so that
            // `(n + TILE - 1) / TILE` is a division by a constant.
            self.bind(&d.name, Binding::Const(c, elem));
            return Ok(());
        }
        let v = self.new_var(&d.name, elem, VarKind::Local, span);
        if let Some(init) = &d.init {
            let ast::Init::Expr(e) = init else {
                return fail(span, "brace initializer for a scalar");
            };
            let value = self.expr(e, out)?;
            out.push(Stmt::Assign {
                var: v,
                value: convert(value, elem),
                span,
            });
            self.remember_constant(d, e);
        }
        self.bind(&d.name, Binding::Var(v));
        Ok(())
    }

    /// The value of a `const`/`constexpr` integer local whose initializer
    /// is a constant (remembered as one), converted to its type.
    fn local_constant(&mut self, d: &ast::VarDecl, elem: Scalar) -> Option<Value> {
        let Some(ast::Init::Expr(e)) = &d.init else {
            return None;
        };
        if elem.is_float() || !(d.ty.is_const || d.is_constexpr) {
            return None;
        }
        let Value::I(c) = self.const_value(e)? else {
            return None;
        };
        self.remember_constant(d, e);
        Some(Value::I(c).convert(elem))
    }

    /// A `const`/`constexpr` local with a constant integer initializer is
    /// also a compile-time constant (an array size, a template argument).
    fn remember_constant(&mut self, d: &ast::VarDecl, e: &ast::Expr) {
        if !(d.ty.is_const || d.is_constexpr) {
            return;
        }
        if let Some(Value::I(c)) = self.const_value(e) {
            if let Some(m) = self.consts.last_mut() {
                m.insert(d.name.clone(), c);
            }
        }
    }

    /// `auto x = e;`: a scalar of `e`'s type (`auto` pointers and arrays
    /// are not supported).
    fn auto_decl(&mut self, d: &ast::VarDecl, out: &mut Vec<Stmt>) -> Result<()> {
        let span = d.meta.span;
        let Some(ast::Init::Expr(e)) = &d.init else {
            return fail(
                span,
                "`auto` needs an initializer `= expression` to deduce its type",
            );
        };
        if !d.ty.pointers.is_empty() || !d.dims.is_empty() || d.space != Space::Local {
            return fail(span, "`auto` is supported only for local scalars");
        }
        if self.is_pointer_expr(e) {
            return fail(span, "`auto` deduced as a pointer is not supported");
        }
        let value = self.expr(e, out)?;
        let v = self.new_var(&d.name, value.ty, VarKind::Local, span);
        out.push(Stmt::Assign {
            var: v,
            value,
            span,
        });
        self.remember_constant(d, e);
        self.bind(&d.name, Binding::Var(v));
        Ok(())
    }

    /// `float &r = lvalue;`: `r` names the lvalue itself. An array element's
    /// index is evaluated once, here, as C++ binds it.
    fn reference(&mut self, d: &ast::VarDecl, out: &mut Vec<Stmt>) -> Result<()> {
        let span = d.meta.span;
        let Some(ast::Init::Expr(e)) = &d.init else {
            return fail(span, "a reference must be initialized with `= lvalue`");
        };
        if !d.ty.pointers.is_empty() || !d.dims.is_empty() || d.space != Space::Local {
            return fail(span, "references to pointers or arrays are not supported");
        }
        if let Some(rec) = self.record_type(&d.ty, span)? {
            let b = self.record_reference(e, &rec, &d.name, d.ty.is_const, out)?;
            self.bind(&d.name, b);
            return Ok(());
        }
        let b = self.bind_lvalue(e, &d.name, out)?;
        if d.ty.base != BaseType::Auto {
            let want = self.scalar(&d.ty, span)?;
            if self.binding_type(&b) != Some(want) {
                return fail(
                    span,
                    "a reference must bind to an lvalue of the same type (a conversion would need a temporary)",
                );
            }
        }
        self.bind(&d.name, b);
        Ok(())
    }

    /// The binding that makes a reference named `name` alias the lvalue `e`.
    pub(super) fn bind_lvalue(
        &mut self,
        e: &ast::Expr,
        name: &str,
        out: &mut Vec<Stmt>,
    ) -> Result<Binding> {
        Ok(match self.lvalue(e, out)? {
            LValue::Var(v) => Binding::Var(v),
            LValue::Mem(.., member) if !member.is_empty() => {
                return fail(
                    e.meta.span,
                    format!("a reference to `{}`, an element of an array member at a run-time index, is not supported (index the member where it is used)", crate::cuda::print::expression(e)),
                )
            }
            LValue::Mem(array, index, slot, _) => {
                // A field of a struct or vector element (`float &m =
                // parts[i].mass`): that component.
                let field = self
                    .records
                    .contains_key(&array)
                    .then(|| FieldType::Scalar(self.k.arrays[array].slot_type(slot)));
                let iv = self.new_var(
                    &format!("{name}_index"),
                    Scalar::I64,
                    VarKind::Local,
                    e.meta.span,
                );
                out.push(Stmt::Assign {
                    var: iv,
                    value: convert(index, Scalar::I64),
                    span: e.meta.span,
                });
                Binding::Elem {
                    array,
                    index: iv,
                    slot,
                    field,
                }
            }
        })
    }

    /// The scalar type of what a binding denotes, if it is one scalar.
    pub(super) fn binding_type(&self, b: &Binding) -> Option<Scalar> {
        match b {
            Binding::Var(v) => Some(self.k.vars[*v].ty),
            Binding::Elem {
                field: Some(FieldType::Scalar(s)),
                ..
            } => Some(*s),
            Binding::Elem { field: Some(_), .. } => None,
            Binding::Cell(a) | Binding::Elem { array: a, .. } => Some(self.k.arrays[*a].elem),
            Binding::Const(_, t) => Some(*t),
            Binding::Ptr { .. } | Binding::View { .. } | Binding::Rec { .. } => None,
        }
    }
}
