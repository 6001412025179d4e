//! Names from outside the function: file-scope globals, constants and
//! `__shared__`/`__device__`/`__constant__` arrays, undefined identifiers
//! as symbols, and the constant evaluation of their initializers and
//! dimensions.

use super::names::unqualified;
use super::types::char_value;
use super::*;
use crate::cuda::ast::{ExprKind as A, UnOp};
use crate::ir::value::binary;

pub(super) fn flatten_init<'e>(i: &'e ast::Init, out: &mut Vec<&'e ast::Expr>) {
    match i {
        ast::Init::Expr(e) => out.push(e),
        ast::Init::List(items) => items.iter().for_each(|x| flatten_init(x, out)),
    }
}

impl Lowerer<'_> {
    /// The value of a file-scope `const`/`constexpr` scalar named `name`
    /// with a constant initializer.
    pub(super) fn file_constant(&self, name: &str) -> Option<(Value, Scalar)> {
        self.file_constants
            .get(unqualified(name))
            .copied()
            .flatten()
    }

    /// Evaluates the file's `const`/`constexpr` scalars once, in file
    /// order: an initializer reads only the constants declared before
    /// it (as in C++), so constants that name each other in a cycle, or a
    /// long chain of them, cost one evaluation each and no recursion.
    /// The first global of a name decides what the name is.
    pub(super) fn evaluate_file_constants(&mut self) {
        let file = self.file;
        for g in &file.globals {
            if self.file_constants.contains_key(&g.name) {
                continue;
            }
            let value = self.constant_of(g);
            self.file_constants.insert(g.name.clone(), value);
        }
    }

    /// The value of the global `g` when it is a `const`/`constexpr`
    /// scalar with a constant initializer.
    fn constant_of(&self, g: &ast::VarDecl) -> Option<(Value, Scalar)> {
        if g.space != Space::Local || !(g.ty.is_const || g.is_constexpr) || !g.dims.is_empty() {
            return None;
        }
        let ty = self.scalar(&g.ty, g.meta.span).ok()?;
        match &g.init {
            Some(ast::Init::Expr(e)) => Some((self.const_value(e)?.convert(ty), ty)),
            _ => None,
        }
    }

    /// Whether nothing in scope or in the file defines `name` (a symbol
    /// made for it earlier counts as undefined).
    pub(super) fn is_undefined(&self, name: &str) -> bool {
        self.is_symbol(name)
            || (!self.scopes.iter().any(|s| s.contains_key(name))
                && !self.consts.iter().any(|c| c.contains_key(name))
                && !self
                    .file
                    .globals
                    .iter()
                    .any(|g| g.name == unqualified(name)))
    }

    /// Whether `name` is bound to a symbol of the kernel.
    fn is_symbol(&self, name: &str) -> bool {
        self.k.symbols.iter().any(|&v| self.k.vars[v].name == name)
    }

    /// A new symbol for the undefined identifier `name`, first used at
    /// `span`: an `int` the launch gives, bound for the rest of the kernel.
    pub(super) fn symbol(&mut self, name: &str, span: Span) -> VarId {
        let v = self.new_var(name, Scalar::I32, VarKind::Symbol, span);
        self.k.symbols.push(v);
        if let Some(s) = self.scopes.first_mut() {
            s.insert(name.to_string(), Binding::Var(v));
        }
        v
    }

    /// Binds a `__constant__`/`__device__` global on first use.
    pub(super) fn global(&mut self, name: &str, span: Span) -> Result<Binding> {
        if let Some((v, ty)) = self.file_constant(name) {
            return Ok(Binding::Const(v, ty));
        }
        let file = self.file;
        let Some(g) = file.globals.iter().find(|g| g.name == name) else {
            if crate::cuda::include::looks_like_macro(name) {
                let hint = crate::cuda::include::define_hint(name);
                return fail(span, format!("unknown identifier `{name}`: {hint}"));
            }
            return fail(span, format!("unknown identifier `{name}`"));
        };
        if !g.ty.pointers.is_empty() {
            return fail(g.meta.span, "global pointer variables are not supported");
        }
        if g.space == Space::Local {
            return fail(
                g.meta.span,
                format!("file-scope `{name}` is not a constant copper can evaluate (a `const` scalar with a constant initializer)"),
            );
        }
        let rec = self.record_type(&g.ty, g.meta.span)?;
        let elem = match &rec {
            Some(r) => r.types[0],
            None => self.scalar(&g.ty, g.meta.span)?,
        };
        let layout = rec.as_ref().map_or(Layout::scalar(elem), |r| r.layout());
        let dynamic = g.is_extern && g.dims.len() == 1 && g.dims[0].is_none();
        let dims = if dynamic {
            Vec::new()
        } else {
            self.dims(&g.dims, g.meta.span)?
        };
        if dynamic && g.space != Space::Shared {
            return fail(
                g.meta.span,
                "only `extern __shared__` arrays may have an unspecified size",
            );
        }
        if dynamic {
            let id = self.dynamic_shared_array(name.into(), name.into(), elem, rec, g.meta.span);
            return Ok(Binding::Ptr {
                array: id,
                offset: None,
                inner: Vec::new(),
            });
        }
        let init = match &g.init {
            None => Vec::new(),
            Some(i) => self.const_init(i, &layout.types, g.meta.span)?,
        };
        let scalar = dims.is_empty();
        let id = self.new_array(Array {
            name: name.to_string(),
            space: g.space,
            elem,
            layout,
            dims: if scalar { vec![1] } else { dims.clone() },
            param: None,
            init,
            span: g.meta.span,
        });
        if let Some(r) = rec {
            self.records.insert(id, r);
        }
        let b = if scalar {
            Binding::Cell(id)
        } else {
            Binding::Ptr {
                array: id,
                offset: None,
                inner: dims[1..].to_vec(),
            }
        };
        if let Some(s) = self.scopes.first_mut() {
            s.insert(name.to_string(), b.clone());
        }
        Ok(b)
    }

    /// The flattened constant initializer of a global whose components
    /// have `types` (value `i` converted to `types[i % types.len()]`).
    fn const_init(&self, i: &ast::Init, types: &[Scalar], span: Span) -> Result<Vec<Value>> {
        let mut out = Vec::new();
        let mut stack = vec![i];
        while let Some(i) = stack.pop() {
            match i {
                ast::Init::Expr(e) => {
                    let elem = types[out.len() % types.len()];
                    let v = self.const_value(e).map(|v| v.convert(elem));
                    match v {
                        Some(v) => out.push(v),
                        None => return fail(span, "initializer of a global is not a constant"),
                    }
                }
                ast::Init::List(items) => stack.extend(items.iter().rev()),
            }
        }
        Ok(out)
    }

    /// Value of a constant expression (literals, `const` locals with constant
    /// initializers, arithmetic on them, `sizeof`).
    pub(super) fn const_value(&self, e: &ast::Expr) -> Option<Value> {
        Some(match &e.kind {
            A::Int { value, text } => {
                Value::I(*value as i64).convert(self.int_literal_type(*value, text))
            }
            A::Float(t) => Value::F(t.trim_end_matches(['f', 'F']).parse().ok()?),
            A::Bool(b) => Value::I(*b as i64),
            A::Char(c) => Value::I(char_value(c)?),
            A::Ident(n) => match self.consts.iter().rev().find_map(|c| c.get(n)) {
                Some(v) => Value::I(*v),
                None => match self.file_constant(n) {
                    Some((v, _)) => v,
                    None => math::library_constant(n)?.0,
                },
            },
            A::Unary(UnOp::Neg, x) => match self.const_value(x)? {
                Value::I(v) => Value::I(v.wrapping_neg()),
                Value::F(f) => Value::F(-f),
            },
            A::Unary(UnOp::Plus, x) => self.const_value(x)?,
            A::Binary(op, l, r) => {
                let (l, r) = (self.const_value(l)?, self.const_value(r)?);
                let ty = match (l, r) {
                    (Value::F(_), _) | (_, Value::F(_)) => Scalar::F64,
                    _ => Scalar::I64,
                };
                binary(*op, l, r, ty).ok()?
            }
            A::Cast(_, t, x) => self
                .const_value(x)?
                .convert(self.scalar(t, e.meta.span).ok()?),
            A::SizeofType(t) => Value::I(self.scalar(t, e.meta.span).ok()?.size() as i64),
            _ => return None,
        })
    }

    pub(super) fn dims(&self, dims: &[Option<ast::Expr>], span: Span) -> Result<Vec<u64>> {
        dims.iter()
            .map(|d| match d.as_ref().and_then(|e| self.const_value(e)) {
                Some(Value::I(v)) if v > 0 && v <= (1 << 32) => Ok(v as u64),
                _ => {
                    let at = d.as_ref().map_or(span, |e| e.meta.span);
                    let undefined = d
                        .iter()
                        .flat_map(|e| e.identifiers())
                        .find(|n| self.is_undefined(unqualified(n)));
                    match undefined {
                        Some(n) => fail(
                            at,
                            format!(
                                "array size needs the value of `{n}`: {}",
                                crate::cuda::include::define_hint(n)
                            ),
                        ),
                        None => fail(at, "array size must be a positive integer constant"),
                    }
                }
            })
            .collect()
    }
}
