//! Texture objects read with `tex1Dfetch<T>(tex, i)`, `tex2D<T>(tex, x, y)`
//! and `tex3D<T>(tex, x, y, z)`: a texture object is, for the cost model, a
//! read-only global array of `T` (the parameter file gives its elements
//! under the parameter's name). A 1-D fetch is the load `tex[i]`; a 2-D or
//! 3-D read is the load of element `(z·H + y)·W + x` of a `W×H(×D)` array
//! whose extents the launch gives (`tex.width`, `tex.height`,
//! `tex.depth`), each coordinate floored and clamped into its extent: the
//! model assumes unnormalized coordinates, point filtering and clamp
//! addressing. Other reads (`tex1D`, levels of detail, gathers, layered
//! and cube textures) stay unsupported.

use super::objects::{element_base, is_texture_object, reads, Object, Read};
use super::*;
use crate::cuda::ast::ExprKind as A;
use crate::ir::math::MathFn;

/// The reads copper models, with the number of coordinates of each.
const FETCHES: &[(&str, usize)] = &[("tex1Dfetch", 1), ("tex2D", 2), ("tex3D", 3)];

/// The number of coordinates of the texture read `name` (a call's name,
/// with its template arguments), if it is one copper models.
pub(super) fn fetch_dims(name: &str) -> Option<usize> {
    let base = name.split('<').next()?.trim();
    FETCHES.iter().find(|(f, _)| *f == base).map(|(_, d)| *d)
}

/// The texture objects.
const TEXTURES: Object = Object {
    dims_of: fetch_dims,
    is_object: is_texture_object,
};

/// The name of the read that takes `dims` coordinates.
fn fetch_name(dims: usize) -> &'static str {
    FETCHES
        .iter()
        .find(|(_, d)| *d == dims)
        .map_or("tex1Dfetch", |(f, _)| f)
}

impl Lowerer<'_> {
    /// The element type and number of coordinates that `body` reads
    /// texture object `name` with (the `T` of every `tex1Dfetch<T>(name,
    /// …)`, `tex2D<T>(name, …)`, …), or why there are none.
    fn texture_element(
        &mut self,
        body: &[ast::Stmt],
        name: &str,
        span: Span,
    ) -> Result<(Scalar, usize)> {
        let mut found: Vec<Read> = Vec::new();
        reads(self.file, body, name, &TEXTURES, 0, &mut found);
        let Some(first) = found.first() else {
            return fail(
                span,
                format!("texture object `{name}` is not read with `tex1Dfetch<T>({name}, i)`, `tex2D<T>({name}, x, y)` or `tex3D<T>({name}, x, y, z)` (the reads copper models)"),
            );
        };
        if let Some(other) = found.iter().find(|r| r.ty != first.ty) {
            return fail(
                other.at,
                format!(
                    "texture object `{name}` is read as `{}` and as `{}`",
                    first.ty, other.ty
                ),
            );
        }
        if let Some(other) = found.iter().find(|r| r.dims != first.dims) {
            return fail(
                other.at,
                format!(
                    "texture object `{name}` is read with `{}` and with `{}`",
                    fetch_name(first.dims),
                    fetch_name(other.dims)
                ),
            );
        }
        let f = fetch_name(first.dims);
        if first.ty.is_empty() {
            return fail(
                first.at,
                format!("`{f}` without its element type (`{f}<float>(…)`)"),
            );
        }
        let elem = self.scalar(&ast::Type::scalar(element_base(&first.ty)), first.at)?;
        Ok((elem, first.dims))
    }

    /// Lowers texture object parameter `p` (the `i`th) of kernel `f`: a
    /// read-only global array of the type it is read as, with its extents
    /// when it is read with 2 or 3 coordinates.
    pub(super) fn texture_param(
        &mut self,
        f: &ast::Function,
        p: &ast::Param,
        i: usize,
    ) -> Result<()> {
        let span = p.meta.span;
        let (elem, dims) = self.texture_element(&f.body, &p.name, span)?;
        let a = self.object_array(&p.name, elem, i, span);
        if dims > 1 {
            let extents = self.extents(&p.name, i, dims, span);
            self.texture_extents.insert(a, extents);
        }
        Ok(())
    }

    /// Lowers the texture read `name` (`tex1Dfetch<T>(tex, i)`: the load
    /// `tex[i]`; `tex2D<T>(tex, x, y)`, `tex3D<T>(tex, x, y, z)`: the load
    /// of the element the clamped coordinates name).
    pub(super) fn fetch(
        &mut self,
        name: &str,
        args: &[ast::Expr],
        span: Span,
        out: &mut Vec<Stmt>,
    ) -> Result<Expr> {
        let dims = fetch_dims(name).unwrap_or(1);
        let f = fetch_name(dims);
        let Some((tex, coords)) = args.split_first().filter(|(_, c)| c.len() == dims) else {
            return fail(
                span,
                format!("`{f}` takes a texture object and {dims} coordinate(s)"),
            );
        };
        if let A::Ident(n) = &tex.kind {
            if self.lookup(n, tex.meta.span).is_err() {
                return fail(
                    tex.meta.span,
                    format!("`{n}` is not a texture object parameter: legacy texture references (`texture<…>`, removed in CUDA 12) are not modelled; pass a `cudaTextureObject_t` and read it with `{f}<T>`"),
                );
            }
        }
        if dims == 1 {
            let load = ast::Expr {
                meta: tex.meta.clone(),
                kind: A::Index(Box::new(tex.clone()), Box::new(coords[0].clone())),
            };
            return self.expr(&load, out);
        }
        let (array, _, _) = self.pointer(tex, out)?;
        let Some(extents) = self.texture_extents.get(&array).cloned() else {
            return fail(
                tex.meta.span,
                format!("`{f}` reads a texture object parameter of the kernel"),
            );
        };
        let mut values = Vec::new();
        for (k, c) in coords.iter().enumerate() {
            let v = self.expr(c, out)?;
            let later_effects = coords[k + 1..].iter().any(super::expr::expr_has_effects);
            values.push(if later_effects {
                self.snapshot(v, c.meta.span, out)
            } else {
                v
            });
        }
        let mut index: Option<Expr> = None;
        for (v, &e) in values.into_iter().zip(&extents).rev() {
            let c = self.clamped(v, e);
            index = Some(match index {
                None => c,
                Some(outer) => {
                    let extent = convert(var_expr(&self.k, e), Scalar::I64);
                    let scaled = arith(BinOp::Mul, outer, extent, span)?;
                    arith(BinOp::Add, scaled, c, span)?
                }
            });
        }
        let index = index.unwrap_or_else(|| int(0, Scalar::I64));
        self.scalar_element(array, span)?;
        let access = self.access(array, index, false, &tex.meta);
        Ok(Expr {
            kind: ExprKind::Load(access),
            ty: self.k.arrays[array].elem,
        })
    }

    /// Coordinate `v` as an element index in `[0, extent − 1]` (a `long
    /// long`): a floating coordinate is floored first (point filtering,
    /// unnormalized coordinates), and out-of-range ones clamp.
    fn clamped(&self, v: Expr, extent: VarId) -> Expr {
        let call = |f: MathFn, args: Vec<Expr>, ty: Scalar| Expr {
            kind: ExprKind::Call(f, args),
            ty,
        };
        let last = bin(
            BinOp::Sub,
            var_expr(&self.k, extent),
            int(1, Scalar::I32),
            Scalar::I32,
        );
        if v.ty.is_float() {
            let t = Scalar::F32;
            let floor = call(MathFn::Floor, vec![convert(v, t)], t);
            let zero = Expr {
                kind: ExprKind::Const(Value::F(0.0)),
                ty: t,
            };
            let low = call(MathFn::Max, vec![floor, zero], t);
            let high = call(MathFn::Min, vec![low, convert(last, t)], t);
            Expr {
                kind: ExprKind::Convert {
                    value: Box::new(high),
                    explicit: true,
                },
                ty: Scalar::I64,
            }
        } else {
            let t = Scalar::I64;
            let low = call(MathFn::Max, vec![convert(v, t), int(0, t)], t);
            call(MathFn::Min, vec![low, convert(last, t)], t)
        }
    }
}
