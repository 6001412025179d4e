//! Inlining of device functions: the callee a (qualified) name denotes,
//! arguments bound to parameters (by value or by reference), template
//! instantiation, and `return` as a jump out of the inlined body.

use super::names::callee;
use super::stmt::contains_jump_to;
use super::types::TemplateArg;
use super::*;
use crate::cuda::ast::{ExprKind as A, UnOp};
use crate::cuda::template;
use crate::ir::record::{FieldType, Record};
use std::sync::Arc;

/// Deepest nesting of inlined device functions.
const MAX_INLINE_DEPTH: usize = 16;

impl Lowerer<'_> {
    pub(super) fn inline(
        &mut self,
        name: &str,
        args: &[ast::Expr],
        span: Span,
        out: &mut Vec<Stmt>,
    ) -> Result<Returned> {
        let file = self.file;
        let (base, targs) = match template::split_name(name) {
            Some((b, a)) => (b, Some(a)),
            None => (name, None),
        };
        let pf = callee(file, base).map_err(|m| LowerError {
            offset: span.start,
            message: m.to_string(),
        })?;
        let f = match &pf.result {
            Ok(f) => f,
            Err(d) if pf.item.span.is_included() => {
                let at = format!("{}:{}:{}", d.file.display(), d.line, d.col);
                return fail(
                    span,
                    format!(
                        "call to `{name}`, which copper could not read ({at}): {}",
                        d.message
                    ),
                );
            }
            Err(d) => {
                return fail(
                    span,
                    format!(
                        "call to `{name}`, which copper could not read: {}",
                        d.message
                    ),
                )
            }
        };
        if f.kind == FnKind::Global {
            return fail(span, "kernel launches inside a kernel are not supported");
        }
        // Parameters left out take their default arguments (read at the call).
        let filled: Vec<ast::Expr>;
        let args = match f.params.get(args.len()..) {
            Some(rest) if !rest.is_empty() && rest.iter().all(|p| p.default.is_some()) => {
                let defaults = rest.iter().filter_map(|p| p.default.clone());
                filled = (args.iter().cloned())
                    .chain(defaults.map(|mut e| {
                        e.meta.span = span;
                        e
                    }))
                    .collect();
                filled.as_slice()
            }
            _ => args,
        };
        let template_bindings = match (&f.template, targs) {
            (Some(t), Some(a)) => {
                let args =
                    template::arguments(&t.params, a, &crate::cuda::macros::MacroTable::new(&[]))
                        .map_err(|m| LowerError {
                        offset: span.start,
                        message: format!("`{name}`: {m}"),
                    })?;
                self.template_bindings(t, &args, span)?
            }
            (Some(t), None) => {
                let deduced = self.deduce(t, &f.params, args, name, span)?;
                let args = template::arguments(
                    &t.params,
                    &deduced.join(", "),
                    &crate::cuda::macros::MacroTable::new(&[]),
                )
                .map_err(|m| LowerError {
                    offset: span.start,
                    message: format!("`{name}`: {m}"),
                })?;
                self.template_bindings(t, &args, span)?
            }
            (None, Some(_)) => return fail(span, format!("`{base}` is not a template")),
            (None, None) => Vec::new(),
        };
        if self.frames.iter().any(|fr| fr.name == name) {
            return fail(
                span,
                format!("recursive call to `{name}` (recursion is not supported)"),
            );
        }
        if self.frames.len() >= MAX_INLINE_DEPTH {
            return fail(
                span,
                format!("device functions nested more than {MAX_INLINE_DEPTH} deep"),
            );
        }
        if args.len() != f.params.len() {
            return fail(
                span,
                format!(
                    "`{name}` takes {} arguments but {} were given",
                    f.params.len(),
                    args.len()
                ),
            );
        }
        // Evaluate arguments in the caller's scope.
        let mut bindings = Vec::new();
        // Template arguments are read in the caller; the callee's
        // parameter types use the callee's.
        let caller_types = std::mem::take(&mut self.template_types);
        let mut types = HashMap::new();
        for (n, a) in &template_bindings {
            if let TemplateArg::Type(t) = a {
                types.insert(n.clone(), t.clone());
            }
        }
        self.template_types = types.clone();
        // Per parameter: its scalar type, or `None` for a reference, a
        // pointer or a struct/vector (bound below).
        let mut param_types: Result<Vec<Option<Scalar>>> = Ok(Vec::new());
        for p in &f.params {
            let t = if p.ty.is_ref
                || self.pointer_depth(&p.ty) + usize::from(!p.dims.is_empty()) > 0
                || super::objects::is_texture_object(&p.ty)
                || super::objects::is_surface_object(&p.ty)
            {
                Ok(None)
            } else {
                match self.record_type(&p.ty, p.meta.span) {
                    Ok(Some(_)) => Ok(None),
                    Ok(None) => self.scalar(&p.ty, p.meta.span).map(Some),
                    Err(e) => Err(e),
                }
            };
            param_types = param_types.and_then(|mut v| {
                v.push(t?);
                Ok(v)
            });
        }
        let ret_record = if f.ret.pointers.is_empty() {
            self.record_type(&f.ret, f.meta.span)
        } else {
            Ok(None)
        };
        let ret_type = if f.ret.base == BaseType::Void || !f.ret.pointers.is_empty() {
            None
        } else {
            Some(self.scalar(&f.ret, f.meta.span))
        };
        let ref_types: Vec<Option<Scalar>> = f
            .params
            .iter()
            .map(|p| {
                p.ty.is_ref
                    .then(|| self.scalar(&p.ty, p.meta.span).ok())
                    .flatten()
            })
            .collect();
        // Struct parameters' types, read with the callee's template
        // parameters bound (`Pair<U>`: [`Self::bound_instance`]).
        let param_records: Result<Vec<Option<Arc<Record>>>> = (f.params.iter())
            .map(|p| match p.ty.pointers.is_empty() && p.dims.is_empty() {
                true => self.record_type(&p.ty, p.meta.span),
                false => Ok(None),
            })
            .collect();
        self.template_types = caller_types;
        let param_types = param_types?;
        let param_records = param_records?;
        let callee_addressed = super::addressed_names(&f.body);
        for (k, (p, a)) in f.params.iter().zip(args).enumerate() {
            if p.ty.is_ref {
                if !p.ty.pointers.is_empty() {
                    return fail(p.meta.span, "references to pointers are not supported");
                }
                if let Some(rec) = param_records[k].clone() {
                    let b = self.record_reference(a, &rec, &p.name, p.ty.is_const, out)?;
                    bindings.push((p.name.clone(), b));
                    continue;
                }
                // A `const` reference to a value that is not an lvalue binds
                // to a temporary copy.
                let is_lvalue = matches!(
                    a.kind,
                    A::Ident(_) | A::Index(..) | A::Unary(UnOp::Deref, _)
                );
                let b = if p.ty.is_const && !is_lvalue {
                    let want = ref_types[k].ok_or_else(|| LowerError {
                        offset: p.meta.span.start,
                        message: "reference of this type is not supported".into(),
                    })?;
                    let v = self.expr(a, out)?;
                    let pv = self.new_var(&p.name, want, VarKind::Local, p.meta.span);
                    out.push(Stmt::Assign {
                        var: pv,
                        value: convert(v, want),
                        span,
                    });
                    Binding::Var(pv)
                } else {
                    let b = self.bind_lvalue(a, &p.name, out)?;
                    if self.binding_type(&b) != ref_types[k] {
                        return fail(
                            a.meta.span,
                            format!("argument for reference parameter `{}` is not an lvalue of its type", p.name),
                        );
                    }
                    b
                };
                bindings.push((p.name.clone(), b));
                continue;
            }
            if let Some(ty) = param_types[k] {
                let v = self.expr(a, out)?;
                if callee_addressed.contains(&p.name) {
                    let cell = self.cell(&p.name, ty, v, &p.meta, out);
                    bindings.push((p.name.clone(), cell));
                    continue;
                }
                let pv = self.new_var(&p.name, ty, VarKind::Local, p.meta.span);
                out.push(Stmt::Assign {
                    var: pv,
                    value: convert(v, ty),
                    span,
                });
                bindings.push((p.name.clone(), Binding::Var(pv)));
                continue;
            }
            if self.pointer_depth(&p.ty) + usize::from(!p.dims.is_empty()) == 0 {
                if let Some(rec) = param_records[k].clone() {
                    let (from, vals) = self.record_value(a, out)?;
                    let (place, binding) = self.record_storage(&p.name, &rec, p.meta.span);
                    records::check_compatible(&rec, &from, span)?;
                    let ty = FieldType::Record(rec.clone());
                    self.write_place(place, &ty, vals, &a.meta, out);
                    bindings.push((p.name.clone(), binding));
                    continue;
                }
            }
            {
                let (array, off, inner) = self.pointer(a, out)?;
                let offset = match off {
                    None => None,
                    Some(o) => {
                        let ov = self.new_var(
                            &format!("{}_offset", p.name),
                            Scalar::I64,
                            VarKind::Local,
                            p.meta.span,
                        );
                        out.push(Stmt::Assign {
                            var: ov,
                            value: convert(o, Scalar::I64),
                            span,
                        });
                        Some(ov)
                    }
                };
                bindings.push((
                    p.name.clone(),
                    Binding::Ptr {
                        array,
                        offset,
                        inner,
                    },
                ));
            }
        }
        let result = if f.ret.base == BaseType::Void && f.ret.pointers.is_empty() {
            Returned::Nothing
        } else {
            if !f.ret.pointers.is_empty() {
                return fail(
                    f.meta.span,
                    "device functions returning pointers are not supported",
                );
            }
            match ret_record? {
                Some(rec) => {
                    let vars =
                        self.record_vars(&format!("{base}_result"), &rec, VarKind::Local, span);
                    Returned::Record(rec, vars)
                }
                None => {
                    let ty = ret_type.unwrap_or_else(|| self.scalar(&f.ret, f.meta.span))?;
                    let v = self.new_var(&format!("{base}_result"), ty, VarKind::Local, span);
                    Returned::Scalar(v)
                }
            }
        };
        let scope = self.new_scope();
        // The callee sees only globals and its parameters.
        let globals = self.scopes[0].clone();
        let saved_scopes = std::mem::replace(&mut self.scopes, vec![globals, HashMap::new()]);
        let saved_consts = std::mem::replace(&mut self.consts, vec![HashMap::new()]);
        let saved_targets = std::mem::take(&mut self.targets);
        let saved_types = std::mem::replace(&mut self.template_types, types);
        self.bind_template(template_bindings);
        for (n, b) in bindings {
            self.bind(&n, b);
        }
        self.k.inlined.push(Inlined {
            call: self.frames.first().map_or(span, |f| f.call),
            callee: f.meta.span,
        });
        self.frames.push(Frame {
            name: name.to_string(),
            scope,
            result: result.clone(),
            call: span,
        });
        self.addressed.extend(callee_addressed);
        let mut body = Vec::new();
        let r = f.body.iter().try_for_each(|s| self.stmt(s, &mut body));
        self.frames.pop();
        self.template_types = saved_types;
        self.targets = saved_targets;
        self.consts = saved_consts;
        let callee_globals = std::mem::replace(&mut self.scopes, saved_scopes);
        // Globals first bound inside the callee stay bound.
        if let (Some(outer), Some(inner)) = (self.scopes.first_mut(), callee_globals.first()) {
            for (k, v) in inner {
                outer.entry(k.clone()).or_insert_with(|| v.clone());
            }
        }
        r?;
        if matches!(body.last(), Some(Stmt::Jump { kind: JumpKind::Break, scope: s, .. }) if *s == scope)
        {
            body.pop();
        }
        if contains_jump_to(&body, scope) {
            out.push(Stmt::Scope { scope, body });
        } else {
            out.extend(body);
        }
        Ok(result)
    }

    /// The template arguments of a call written without them, deduced from
    /// its arguments as C++ does in the plain cases: a type parameter `T`
    /// of a parameter `T *p` or `const T *p` takes the element type of the
    /// array passed, of a parameter `T x` (or `const T &x`) the type of the
    /// variable, element, field, cast or literal passed. Deduction stops at
    /// the first parameter it cannot deduce (its default, if any, follows).
    fn deduce(
        &mut self,
        t: &ast::Template,
        params: &[ast::Param],
        args: &[ast::Expr],
        name: &str,
        span: Span,
    ) -> Result<Vec<String>> {
        let mut out = Vec::new();
        for tp in &t.params {
            let found = params.iter().zip(args).find_map(|(p, a)| {
                let named = matches!(&p.ty.base, BaseType::Named(n) if *n == tp.name);
                if !named || tp.value_type.is_some() {
                    return None;
                }
                match p.ty.pointers.len() + p.dims.len() {
                    0 => self.static_type_name(a),
                    1 => self.static_array(a).map(|arr| self.element_type_name(arr)),
                    _ => None,
                }
            });
            match found {
                Some(ty) => out.push(ty),
                None if tp.default.is_some() => break,
                None => {
                    return fail(
                        span,
                        format!(
                            "call to template `{name}`: copper cannot deduce `{}` from the arguments; write `{name}<…>(…)`",
                            tp.name
                        ),
                    )
                }
            }
        }
        Ok(out)
    }

    /// The type of an argument as a template argument, when it is known
    /// without lowering it.
    pub(super) fn static_type_name(&mut self, e: &ast::Expr) -> Option<String> {
        match &e.kind {
            A::Ident(n) => match self.lookup(n, e.meta.span).ok()? {
                Binding::Var(v) => Some(self.k.vars[v].ty.c_name().to_string()),
                Binding::Const(_, s) => Some(s.c_name().to_string()),
                _ => match self.static_field_type(e)? {
                    FieldType::Record(r) => Some(r.name.clone()),
                    FieldType::Scalar(s) => Some(s.c_name().to_string()),
                    FieldType::Array { .. } => None,
                },
            },
            A::Int { value, text } => {
                Some(self.int_literal_type(*value, text).c_name().to_string())
            }
            A::Float(text) => Some(
                if text.ends_with(['f', 'F']) {
                    "float"
                } else {
                    "double"
                }
                .to_string(),
            ),
            A::Bool(_) => Some("bool".into()),
            A::Cast(_, ty, _) if ty.pointers.is_empty() => {
                let s = self.scalar(ty, e.meta.span).ok()?;
                Some(s.c_name().to_string())
            }
            A::Index(b, _) => {
                let mut base = b.as_ref();
                while let A::Index(inner, _) = &base.kind {
                    base = inner;
                }
                self.static_array(base).map(|a| self.element_type_name(a))
            }
            A::Member { .. } => match self.static_field_type(e)? {
                FieldType::Record(r) => Some(r.name.clone()),
                FieldType::Scalar(s) => Some(s.c_name().to_string()),
                FieldType::Array { .. } => None,
            },
            _ => None,
        }
    }

    /// The element type of array `a` as a template argument.
    fn element_type_name(&self, a: ArrayId) -> String {
        match self.records.get(&a) {
            Some(r) => r.name.clone(),
            None => self.k.arrays[a].elem.c_name().to_string(),
        }
    }
}
