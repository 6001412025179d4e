//! Surface objects read with `surf1Dread`/`surf2Dread` and written with
//! `surf1Dwrite`/`surf2Dwrite`: a surface object is, for the cost model, a
//! global array of `T` (the parameter file gives its elements under the
//! parameter's name), one-dimensional or `W×H` row-major with extents the
//! launch gives (`surf.width`, `surf.height`, in elements). The `x`
//! coordinate is in bytes (`x / sizeof(T)` is the element's column); a
//! coordinate out of range is an error, as with the default
//! `cudaBoundaryModeTrap`: the access goes to element −1, which the
//! simulator reports as out of bounds. `T` is the read's template argument,
//! the type of the variable `surf2Dread(&v, …)` reads into, or the written
//! value's type; every access of a surface must agree on its size.

use super::assign::LValue;
use super::objects::{element_base, is_surface_object, reads, Object, Read};
use super::*;
use crate::cuda::ast::{ExprKind as A, UnOp};

/// The surface functions copper models: name, coordinates, whether it
/// writes.
const SURFACE_CALLS: &[(&str, usize, bool)] = &[
    ("surf1Dread", 1, false),
    ("surf2Dread", 2, false),
    ("surf1Dwrite", 1, true),
    ("surf2Dwrite", 2, true),
];

/// The only boundary mode modelled, when a call names one.
const TRAP: &str = "cudaBoundaryModeTrap";

/// The modelled surface call `name` (with its template arguments, if
/// any): its base name, number of coordinates and whether it writes.
fn surface_call(name: &str) -> Option<(&'static str, usize, bool)> {
    let base = name.split('<').next()?.trim();
    SURFACE_CALLS.iter().find(|(f, _, _)| *f == base).copied()
}

/// Whether `name` is a surface read or write copper models.
pub(super) fn is_surface_call(name: &str) -> bool {
    surface_call(name).is_some()
}

/// The surface objects, for [`reads`].
const SURFACES: Object = Object {
    dims_of: |f| surface_call(f).map(|(_, d, _)| d),
    is_object: is_surface_object,
};

impl Lowerer<'_> {
    /// Lowers surface object parameter `p` (the `i`th) of kernel `f`: a
    /// global array whose element type its first access sets, with its
    /// extents when it is accessed with 2 coordinates.
    pub(super) fn surface_param(
        &mut self,
        f: &ast::Function,
        p: &ast::Param,
        i: usize,
    ) -> Result<()> {
        let span = p.meta.span;
        let name = &p.name;
        let mut uses: Vec<Read> = Vec::new();
        reads(self.file, &f.body, name, &SURFACES, 0, &mut uses);
        let Some(first) = uses.first() else {
            return fail(
                span,
                format!("surface object `{name}` is not read or written with `surf1Dread`/`surf2Dread`/`surf1Dwrite`/`surf2Dwrite` (the accesses copper models)"),
            );
        };
        if let Some(other) = uses.iter().find(|u| u.dims != first.dims) {
            return fail(
                other.at,
                format!("surface object `{name}` is accessed with 1 and with 2 coordinates"),
            );
        }
        // The element type is set by the first access lowered.
        let elem = Scalar::U8;
        let a = self.object_array(name, elem, i, span);
        let extents = match first.dims {
            1 => Vec::new(),
            d => self.extents(name, i, d, span),
        };
        self.surfaces.insert(a, (extents, None));
        Ok(())
    }

    /// Lowers a surface read or write `name` (`surf2Dread<T>(s, x, y)`,
    /// `surf2Dread(&v, s, x, y)`, `surf2Dwrite(v, s, x, y)`, 1-D alike):
    /// the read's value, or `None` for a write or a read into a variable.
    pub(super) fn surface(
        &mut self,
        name: &str,
        args: &[ast::Expr],
        span: Span,
        out: &mut Vec<Stmt>,
    ) -> Result<Option<Expr>> {
        let Some((f, dims, write)) = surface_call(name) else {
            return fail(span, format!("`{name}` is not a surface access"));
        };
        let templated = name.contains('<');
        // Before the object: the value written, or the read's target.
        let lead = usize::from(write || !templated);
        let mut args = args;
        // A trailing boundary mode: only the default is modelled.
        if let Some((last, rest)) = args.split_last().filter(|_| args.len() == 2 + lead + dims) {
            if !matches!(&last.kind, A::Ident(m) if m == TRAP) {
                return fail(
                    last.meta.span,
                    format!("`{f}` with a boundary mode other than `{TRAP}` (the clamp and zero modes are not modelled)"),
                );
            }
            args = rest;
        }
        if args.len() != 1 + lead + dims {
            let what = match (write, templated) {
                (true, _) => "a value, a surface object",
                (false, true) => "a surface object",
                (false, false) => "the address of a variable, a surface object",
            };
            return fail(
                span,
                format!("`{f}` takes {what} and {dims} coordinate(s) (`x` in bytes)"),
            );
        }
        let surf = &args[lead];
        let coords = &args[lead + 1..];
        let (array, _, _) = self.pointer(surf, out)?;
        let Some((extents, _)) = self.surfaces.get(&array).cloned() else {
            return fail(
                surf.meta.span,
                format!("`{f}` accesses a surface object parameter of the kernel"),
            );
        };
        if write {
            let value = self.expr(&args[0], out)?;
            let elem = self.surface_type(array, value.ty, &args[0])?;
            let index = self.surface_index(array, &extents, coords, elem, out)?;
            let access = self.access(array, index, true, &surf.meta);
            out.push(Stmt::Store {
                access,
                value: convert(value, elem),
                span,
            });
            return Ok(None);
        }
        if templated {
            let t = name
                .split_once('<')
                .and_then(|(_, t)| t.strip_suffix('>'))
                .unwrap_or("")
                .trim();
            let ty = self.scalar(&ast::Type::scalar(element_base(t)), span)?;
            let elem = self.surface_type(array, ty, surf)?;
            return self
                .surface_load(array, &extents, coords, elem, surf, out)
                .map(Some);
        }
        let A::Unary(UnOp::AddrOf, target) = &args[0].kind else {
            return fail(
                args[0].meta.span,
                format!("`{f}` reads into the variable whose address it is given (`{f}(&v, …)`)"),
            );
        };
        let lvalue = self.lvalue(target, out)?;
        let ty = match &lvalue {
            LValue::Var(v) => self.k.vars[*v].ty,
            LValue::Mem(a, _, slot, _) => self.k.arrays[*a].slot_type(*slot),
        };
        let elem = self.surface_type(array, ty, target)?;
        let value = self.surface_load(array, &extents, coords, elem, surf, out)?;
        match lvalue {
            LValue::Var(v) => out.push(Stmt::Assign {
                var: v,
                value,
                span,
            }),
            LValue::Mem(a, index, slot, member) => {
                let access = self.access_member(a, index, slot, &member, true, &target.meta);
                out.push(Stmt::Store {
                    access,
                    value,
                    span,
                });
            }
        }
        Ok(None)
    }

    /// The element type of surface `array` accessed as `ty` at `e`: the
    /// first access sets it, later ones must agree.
    fn surface_type(&mut self, array: ArrayId, ty: Scalar, e: &ast::Expr) -> Result<Scalar> {
        let name = self.k.arrays[array].name.clone();
        match self.surfaces.get_mut(&array) {
            Some((_, Some(t))) if *t != ty => fail(
                e.meta.span,
                format!(
                    "surface object `{name}` is accessed as `{}` and as `{}`",
                    t.c_name(),
                    ty.c_name()
                ),
            ),
            Some((_, set)) => {
                *set = Some(ty);
                let a = &mut self.k.arrays[array];
                a.elem = ty;
                a.layout = Layout::scalar(ty);
                Ok(ty)
            }
            None => fail(e.meta.span, format!("`{name}` is not a surface object")),
        }
    }

    /// The load of the element of surface `array` at `coords`.
    fn surface_load(
        &mut self,
        array: ArrayId,
        extents: &[VarId],
        coords: &[ast::Expr],
        elem: Scalar,
        surf: &ast::Expr,
        out: &mut Vec<Stmt>,
    ) -> Result<Expr> {
        let index = self.surface_index(array, extents, coords, elem, out)?;
        let access = self.access(array, index, false, &surf.meta);
        Ok(Expr {
            kind: ExprKind::Load(access),
            ty: elem,
        })
    }

    /// The element index of `coords` (`x` in bytes) in a surface of
    /// `elem`s with `extents` (none for a 1-D surface, bounded by its
    /// length): `y·W + x / sizeof(T)`, or −1 (out of bounds) when a
    /// coordinate is outside its extent.
    fn surface_index(
        &mut self,
        array: ArrayId,
        extents: &[VarId],
        coords: &[ast::Expr],
        elem: Scalar,
        out: &mut Vec<Stmt>,
    ) -> Result<Expr> {
        let t = Scalar::I64;
        let mut values = Vec::new();
        for (k, c) in coords.iter().enumerate() {
            let v = self.expr(c, out)?;
            if v.ty.is_float() {
                return fail(
                    c.meta.span,
                    "surface coordinates are integers (`x` in bytes)",
                );
            }
            let later_effects = coords[k + 1..].iter().any(super::expr::expr_has_effects);
            let v = convert(v, t);
            values.push(if later_effects {
                self.snapshot(v, c.meta.span, out)
            } else {
                v
            });
        }
        let span = self.k.arrays[array].span;
        let size = int(i64::from(elem.size()), t);
        let column = arith(BinOp::Div, values[0].clone(), size.clone(), span)?;
        if extents.is_empty() {
            // Past the end the array's length catches; before it, a
            // negative byte offset.
            let inside = arith(BinOp::Ge, values[0].clone(), int(0, t), span)?;
            return Ok(select(inside, column, int(-1, t)));
        }
        let width = convert(var_expr(&self.k, extents[0]), t);
        let height = convert(var_expr(&self.k, extents[1]), t);
        let row = values.get(1).cloned().unwrap_or_else(|| int(0, t));
        let mut inside = arith(BinOp::Ge, values[0].clone(), int(0, t), span)?;
        let x_end = arith(BinOp::Mul, width.clone(), size, span)?;
        for cond in [
            arith(BinOp::Lt, values[0].clone(), x_end, span)?,
            arith(BinOp::Ge, row.clone(), int(0, t), span)?,
            arith(BinOp::Lt, row.clone(), height, span)?,
        ] {
            inside = arith(BinOp::And, inside, cond, span)?;
        }
        let scaled = arith(BinOp::Mul, row, width, span)?;
        let index = arith(BinOp::Add, scaled, column, span)?;
        Ok(select(inside, index, int(-1, t)))
    }
}

/// `c ? a : b` of `a`'s type.
fn select(c: Expr, a: Expr, b: Expr) -> Expr {
    Expr {
        ty: a.ty,
        kind: ExprKind::Select(Box::new(c), Box::new(a), Box::new(b)),
    }
}
