//! Texture objects read with `tex1Dfetch<T>(tex, i)`: a texture object
//! bound to linear memory is, for the cost model, a read-only global array
//! of `T` (the parameter file gives its elements under the parameter's
//! name), and a fetch is the load `tex[i]`. Other fetches (`tex2D`,
//! normalized coordinates, filtering) stay unsupported.

use super::*;
use crate::cuda::ast::ExprKind as A;
use crate::cuda::visit::visit_stmt_exprs;

/// The type name of texture objects.
const TEXTURE_OBJECT: &str = "cudaTextureObject_t";

/// The fetch copper models.
const FETCH: &str = "tex1Dfetch";

/// Whether a parameter of type `ty` is a texture object.
pub(super) fn is_texture_object(ty: &ast::Type) -> bool {
    ty.pointers.is_empty() && matches!(&ty.base, BaseType::Named(n) if n == TEXTURE_OBJECT)
}

/// Whether `name` (a call's name, with its template arguments) is a 1-D
/// fetch.
pub(super) fn is_fetch(name: &str) -> bool {
    name.split('<').next().is_some_and(|n| n.trim() == FETCH)
}

/// Most device functions deep a texture object is followed through.
const MAX_DEPTH: usize = 16;

/// Pushes to `out` the `T` and place of each `tex1Dfetch<T>(name, …)` in
/// `body`, and in the device functions `body` passes `name` to as a
/// texture object parameter (their fetches of that parameter).
fn fetched_types(
    file: &ParsedFile,
    body: &[ast::Stmt],
    name: &str,
    depth: usize,
    out: &mut Vec<(String, Span)>,
) {
    let mut passed: Vec<(String, usize)> = Vec::new();
    for s in body {
        visit_stmt_exprs(s, &mut |e| {
            let A::Call(f, args) = &e.kind else {
                return;
            };
            for (k, a) in args.iter().enumerate() {
                if !matches!(&a.kind, A::Ident(n) if n == name) {
                    continue;
                }
                if k == 0 && is_fetch(f) {
                    let t = f
                        .split_once('<')
                        .and_then(|(_, t)| t.strip_suffix('>'))
                        .unwrap_or("");
                    out.push((t.trim().to_string(), e.meta.span));
                } else {
                    passed.push((f.clone(), k));
                }
            }
        });
    }
    if depth >= MAX_DEPTH {
        return;
    }
    for (f, k) in passed {
        let base = crate::cuda::template::split_name(&f).map_or(f.as_str(), |(b, _)| b);
        let Ok(pf) = super::names::callee(file, base) else {
            continue;
        };
        let Ok(g) = &pf.result else {
            continue;
        };
        if let Some(p) = g.params.get(k).filter(|p| is_texture_object(&p.ty)) {
            fetched_types(file, &g.body, &p.name, depth + 1, out);
        }
    }
}

impl Lowerer<'_> {
    /// The element type that `body` fetches texture object `name` as (the
    /// `T` of every `tex1Dfetch<T>(name, …)`), or why there is none.
    pub(super) fn texture_element(
        &mut self,
        body: &[ast::Stmt],
        name: &str,
        span: Span,
    ) -> Result<Scalar> {
        let mut types: Vec<(String, Span)> = Vec::new();
        fetched_types(self.file, body, name, 0, &mut types);
        let Some((first, at)) = types.first().cloned() else {
            return fail(
                span,
                format!("texture object `{name}` is not read with `{FETCH}<T>({name}, i)` (only 1-D fetches from linear memory are modelled)"),
            );
        };
        if let Some((other, at)) = types.iter().find(|(t, _)| *t != first) {
            return fail(
                *at,
                format!("texture object `{name}` is fetched as `{first}` and as `{other}`"),
            );
        }
        if first.is_empty() {
            return fail(
                at,
                format!("`{FETCH}` without its element type (`{FETCH}<float>(…)`)"),
            );
        }
        let words: Vec<&str> = first.split_whitespace().collect();
        let base = match words.as_slice() {
            ["float"] => BaseType::Float,
            ["double"] => BaseType::Double,
            _ => crate::cuda::template::integer_type(&words)
                .unwrap_or_else(|| BaseType::Named(first.clone())),
        };
        self.scalar(&ast::Type::scalar(base), at)
    }

    /// Lowers `tex1Dfetch<T>(tex, i)`: the load `tex[i]`.
    pub(super) fn fetch(
        &mut self,
        args: &[ast::Expr],
        span: Span,
        out: &mut Vec<Stmt>,
    ) -> Result<Expr> {
        let [tex, index] = args else {
            return fail(
                span,
                format!("`{FETCH}` takes a texture object and an index"),
            );
        };
        if let A::Ident(n) = &tex.kind {
            if self.lookup(n, tex.meta.span).is_err() {
                return fail(
                    tex.meta.span,
                    format!("`{n}` is not a texture object parameter: legacy texture references (`texture<…>`, removed in CUDA 12) are not modelled; pass a `cudaTextureObject_t` and read it with `{FETCH}<T>`"),
                );
            }
        }
        let load = ast::Expr {
            meta: tex.meta.clone(),
            kind: A::Index(Box::new(tex.clone()), Box::new(index.clone())),
        };
        self.expr(&load, out)
    }
}
