//! Texture and surface object parameters: their types, the calls that
//! use them (followed into the device functions they are passed to), the
//! extents the launch gives the 2-D and 3-D ones, and the notes that say
//! what they are bounded as ([`super::textures`], [`super::surfaces`]).

use super::*;
use crate::cuda::ast::ExprKind as A;
use crate::cuda::visit::visit_stmt_exprs;

/// The type name of surface objects.
const SURFACE_OBJECT: &str = "cudaSurfaceObject_t";

/// Whether a parameter of type `ty` is a surface object.
pub(super) fn is_surface_object(ty: &ast::Type) -> bool {
    ty.pointers.is_empty() && matches!(&ty.base, BaseType::Named(n) if n == SURFACE_OBJECT)
}

/// The type name of texture objects.
const TEXTURE_OBJECT: &str = "cudaTextureObject_t";

/// Whether a parameter of type `ty` is a texture object.
pub(super) fn is_texture_object(ty: &ast::Type) -> bool {
    ty.pointers.is_empty() && matches!(&ty.base, BaseType::Named(n) if n == TEXTURE_OBJECT)
}

/// The names of an object's extents, in coordinate order.
const EXTENTS: [&str; 3] = ["width", "height", "depth"];

/// Most device functions deep an object is followed through.
const MAX_DEPTH: usize = 16;

/// One use of a texture or surface object: the `T` of its call (empty
/// when the call has no template argument), place and number of
/// coordinates.
pub(super) struct Read {
    pub(super) ty: String,
    pub(super) at: Span,
    pub(super) dims: usize,
}

/// What kind of object [`reads`] follows: the calls that use it (their
/// number of coordinates by name) and the parameter type it is passed as.
pub(super) struct Object {
    pub(super) dims_of: fn(&str) -> Option<usize>,
    pub(super) is_object: fn(&ast::Type) -> bool,
}

/// Pushes to `out` each use (`tex1Dfetch<T>(name, …)`, `tex2D<T>(name,
/// …)`, `surf2Dwrite(v, name, …)`, …) of object `name` in `body`, and in
/// the device functions `body` passes `name` to as a parameter of its kind
/// (their uses of that parameter).
pub(super) fn reads(
    file: &ParsedFile,
    body: &[ast::Stmt],
    name: &str,
    kind: &Object,
    depth: usize,
    out: &mut Vec<Read>,
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
                match (kind.dims_of)(f).filter(|_| k < 2) {
                    Some(dims) => {
                        let t = f
                            .split_once('<')
                            .and_then(|(_, t)| t.strip_suffix('>'))
                            .unwrap_or("");
                        out.push(Read {
                            ty: t.trim().to_string(),
                            at: e.meta.span,
                            dims,
                        });
                    }
                    None => passed.push((f.clone(), k)),
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
        if let Some(p) = g.params.get(k).filter(|p| (kind.is_object)(&p.ty)) {
            reads(file, &g.body, &p.name, kind, depth + 1, out);
        }
    }
}

/// The type a call's template argument `t` names (`float`, `unsigned
/// char`, a typedef's name).
pub(super) fn element_base(t: &str) -> BaseType {
    let words: Vec<&str> = t.split_whitespace().collect();
    match words.as_slice() {
        ["float"] => BaseType::Float,
        ["double"] => BaseType::Double,
        _ => crate::cuda::template::integer_type(&words)
            .unwrap_or_else(|| BaseType::Named(t.to_string())),
    }
}

/// Notes (warnings) on what the 2-D and 3-D textures and the surfaces of
/// `k` are bounded as and the assumptions made, one per object at its
/// parameter.
pub(super) fn object_notes(file: &ParsedFile, k: &Kernel) -> Vec<crate::diag::Diagnostic> {
    let params = file
        .function(&k.name)
        .map_or(&[][..], |f| f.params.as_slice());
    let mut notes = Vec::new();
    for p in &k.params {
        let Param::Array(a) = p else { continue };
        let arr = &k.arrays[*a];
        let surface = arr
            .param
            .and_then(|i| params.get(i))
            .is_some_and(|p| is_surface_object(&p.ty));
        let prefix = format!("{}.", arr.name);
        let names: Vec<String> = k
            .extents
            .iter()
            .map(|&v| &k.vars[v].name)
            .filter(|n| n.starts_with(&prefix))
            .map(|n| format!("`{n}`"))
            .collect();
        if names.is_empty() && !surface {
            continue;
        }
        let array = format!(
            "a {}-D array of `{}`{}",
            names.len().max(1),
            arr.elem.c_name(),
            match names.is_empty() {
                true => String::new(),
                false => format!(" whose extents ({}) the launch gives", names.join(", ")),
            }
        );
        let message = match surface {
            true => format!("surface `{}` is bounded as global reads and writes of {array}, `x` in bytes: a coordinate out of range is an out-of-bounds access (`cudaBoundaryModeTrap`, the default; the clamp and zero modes are not modelled)", arr.name),
            false => format!("texture `{}` is bounded as global reads of {array}: unnormalized coordinates, point filtering and clamp addressing are assumed (border and wrap addressing and linear filtering are not modelled)", arr.name),
        };
        notes.push(file.source.diagnostic(
            crate::diag::Severity::Warning,
            if surface { "surface" } else { "texture" },
            arr.span.start,
            message,
        ));
    }
    notes
}

impl Lowerer<'_> {
    /// The global array of elements `elem` that object parameter `name`
    /// (the `param`th) stands for, bound to its name.
    pub(super) fn object_array(
        &mut self,
        name: &str,
        elem: Scalar,
        param: usize,
        span: Span,
    ) -> ArrayId {
        let a = self.new_array(Array {
            name: name.to_string(),
            space: Space::Device,
            elem,
            layout: Layout::scalar(elem),
            dims: Vec::new(),
            param: Some(param),
            init: Vec::new(),
            span,
        });
        self.k.params.push(Param::Array(a));
        self.bind(
            name,
            Binding::Ptr {
                array: a,
                offset: None,
                inner: Vec::new(),
            },
        );
        a
    }

    /// New variables for the first `dims` extents of object parameter
    /// `name` (the `i`th), given by the launch: `name.width`, ….
    pub(super) fn extents(&mut self, name: &str, i: usize, dims: usize, span: Span) -> Vec<VarId> {
        let extents: Vec<VarId> = EXTENTS[..dims]
            .iter()
            .map(|e| self.new_var(&format!("{name}.{e}"), Scalar::I32, VarKind::Param(i), span))
            .collect();
        self.k.extents.extend(&extents);
        extents
    }
}
