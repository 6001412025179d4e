//! Calls to builtins: math functions, warp shuffles and votes, atomics
//! and cache-hinted loads; calls to device functions go to [`super::inline`].

use super::records::Place;
use super::*;
use super::{surfaces, textures};
use crate::cuda::ast::{ExprKind as A, UnOp};
use crate::ir::half::{self, HalfFn};
use crate::ir::math::Signature;
use crate::ir::record::FieldType;
use crate::ir::sync::{sync_kind, Sync};

/// Loads with a cache hint (the read-only path, streaming, …): each reads
/// what its pointer points to.
const CACHE_HINTED_LOADS: &[&str] = &["__ldg", "__ldca", "__ldcg", "__ldcs", "__ldlu", "__ldcv"];

fn atomic_op(name: &str) -> Option<AtomicOp> {
    let base = name
        .strip_suffix("_block")
        .or_else(|| name.strip_suffix("_system"))
        .unwrap_or(name);
    AtomicOp::ALL.into_iter().find(|op| op.name() == base)
}

/// A call of `f` returning `ty`, each argument converted to its type in
/// `types`.
fn typed_call(f: MathFn, args: Vec<Expr>, types: Vec<Scalar>, ty: Scalar) -> Expr {
    let args = args
        .into_iter()
        .zip(types)
        .map(|(a, t)| convert(a, t))
        .collect();
    Expr {
        kind: ExprKind::Call(f, args),
        ty,
    }
}

/// Types the arguments and result of a math call.
fn math_call(
    f: MathFn,
    signature: Signature,
    name: &str,
    args: Vec<Expr>,
    span: Span,
) -> Result<Expr> {
    let arity = signature.arity();
    if args.len() != arity {
        return fail(span, format!("`{name}` takes {arity} argument(s)"));
    }
    let (arg_types, ty): (Vec<Scalar>, Scalar) = match signature {
        Signature::Same { ty, arity } => (vec![ty; arity], ty),
        Signature::Fixed { args, result } => (args.to_vec(), result),
        Signature::Overloaded { arity, at_least } => {
            let tys: Vec<Scalar> = args.iter().map(|a| a.ty).collect();
            let t = math::overloaded_type(&tys, at_least);
            (vec![t; arity], t)
        }
        Signature::Half { arity } => {
            let tys: Vec<Scalar> = args.iter().map(|a| a.ty).collect();
            let t = half::overload_type(&tys);
            (vec![t; arity], t)
        }
    };
    Ok(typed_call(f, args, arg_types, ty))
}

/// A scalar 16-bit intrinsic: an operator in the arguments' 16-bit type
/// (as `cuda_fp16.hpp` defines `__hadd` and `operator+` alike), or a math
/// call.
pub(super) fn half_call(h: HalfFn, name: &str, args: Vec<Expr>, span: Span) -> Result<Expr> {
    let (op, arity) = match h {
        HalfFn::Math(f, signature) => return math_call(f, signature, name, args, span),
        HalfFn::Neg => (None, 1),
        HalfFn::Op(op) => (Some(op), 2),
    };
    if args.len() != arity {
        return fail(span, format!("`{name}` takes {arity} argument(s)"));
    }
    let t = half::overload_type(&args.iter().map(|a| a.ty).collect::<Vec<_>>());
    let mut args = args.into_iter().map(|a| convert(a, t));
    let first = args.next().expect("arity checked");
    match op {
        None => Ok(Expr {
            kind: ExprKind::Unary(Unary::Neg, Box::new(first)),
            ty: t,
        }),
        Some(op) => arith(op, first, args.next().expect("arity checked"), span),
    }
}

/// A warp-level primitive on lowered arguments (their number checked):
/// shuffles take and give `var`'s (promoted) type, with `width` 32 when it
/// is left out; votes give an `int` or an `unsigned` mask.
pub(super) fn warp_expr(f: MathFn, name: &str, mut vals: Vec<Expr>, span: Span) -> Result<Expr> {
    let shuffle = !matches!(
        f,
        MathFn::Ballot | MathFn::Any | MathFn::All | MathFn::ActiveMask
    );
    if shuffle && vals.len() == 3 {
        vals.push(int(32, Scalar::I32));
    }
    let ty = match f {
        MathFn::Ballot | MathFn::ActiveMask => Scalar::U32,
        MathFn::Any | MathFn::All => Scalar::I32,
        _ if vals[1].ty == Scalar::Bool => {
            return fail(span, format!("`{name}` of a `bool`"));
        }
        _ => vals[1].ty.promote(),
    };
    let types: Vec<Scalar> = match f {
        MathFn::ActiveMask => vec![],
        MathFn::Ballot | MathFn::Any | MathFn::All => vec![Scalar::U32, Scalar::Bool],
        _ => vec![Scalar::U32, ty, Scalar::I32, Scalar::I32],
    };
    Ok(typed_call(f, vals, types, ty))
}

impl Lowerer<'_> {
    /// Lowers a call; returns its value when `want_value`.
    pub(super) fn call(
        &mut self,
        name: &str,
        args: &[ast::Expr],
        span: Span,
        out: &mut Vec<Stmt>,
        want_value: bool,
    ) -> Result<Option<Expr>> {
        let written = name;
        let name = super::names::builtin_name(self.file, written);
        let no_effect = match sync_kind(name) {
            Some(Sync::Block) => {
                if want_value {
                    return fail(span, format!("`{name}()` used as a value"));
                }
                out.push(Stmt::Sync { span });
                return Ok(None);
            }
            Some(Sync::Warp) => {
                self.k.warp_syncs.push(span);
                true
            }
            Some(Sync::Fence) => true,
            Some(Sync::BlockPredicate) | None => matches!(name, "printf" | "assert"),
        };
        if no_effect {
            // No effect on results or cost in the lock-step model.
            return Ok(want_value.then(|| int(0, Scalar::I32)));
        }
        if matches!(name, "clock" | "clock64") {
            return fail(
                span,
                format!(
                    "`{name}()` reads the multiprocessor's clock, which copper does not model: \
                     this kernel is not analyzed (time it with `copper bench`)"
                ),
            );
        }
        if let Some(op) = atomic_op(name) {
            return self.atomic(op, name, args, span, out, want_value);
        }
        if textures::fetch_dims(name).is_some() {
            return self.fetch(name, args, span, out).map(Some);
        }
        if surfaces::is_surface_call(name) {
            let value = self.surface(name, args, span, out)?;
            if want_value && value.is_none() {
                return fail(
                    span,
                    format!("`{name}` used as a value (it returns nothing)"),
                );
            }
            return Ok(value);
        }
        if CACHE_HINTED_LOADS.contains(&name) {
            // `__ldg(&a[i])` reads `a[i]` through another cache: in the
            // model, the load `*(&a[i])`.
            let [ptr] = args else {
                return fail(span, format!("`{name}` takes one pointer"));
            };
            let load = ast::Expr {
                meta: ptr.meta.clone(),
                kind: A::Unary(UnOp::Deref, Box::new(ptr.clone())),
            };
            return self.expr(&load, out).map(Some);
        }
        if let Some(h) = half::lookup(name) {
            let mut vals = Vec::new();
            for a in args {
                vals.push(self.expr(a, out)?);
            }
            return Ok(Some(half_call(h, name, vals, span)?));
        }
        if half::HALF2_FUNCTIONS.contains(&name) {
            return self.half2_scalar(name, args, span, out).map(Some);
        }
        if let Some((f, signature)) = math::lookup(name) {
            let mut vals = Vec::new();
            for a in args {
                vals.push(self.expr(a, out)?);
            }
            return Ok(Some(math_call(f, signature, name, vals, span)?));
        }
        if let Some((f, arity)) = math::warp_lookup(name) {
            return Ok(Some(self.warp_call(f, arity, name, args, span, out)?));
        }
        if name.starts_with("__shfl") || name.starts_with("__ballot") || name.starts_with("__match")
        {
            return fail(
                span,
                format!("warp intrinsic `{name}` is not supported (copper knows the `_sync` shuffles, ballot, any, all and __activemask)"),
            );
        }
        match self.inline(written, args, span, out)? {
            Returned::Scalar(r) => Ok(Some(var_expr(&self.k, r))),
            Returned::Nothing if want_value => fail(span, format!("`{name}` returns `void`")),
            Returned::Record(rec, _) if want_value => fail(
                span,
                format!("`{name}` returns a `{}` value, used as a scalar", rec.name),
            ),
            Returned::Nothing | Returned::Record(..) => Ok(None),
        }
    }

    /// A warp-level primitive ([`warp_expr`]), its arguments counted and
    /// lowered.
    fn warp_call(
        &mut self,
        f: MathFn,
        arity: usize,
        name: &str,
        args: &[ast::Expr],
        span: Span,
        out: &mut Vec<Stmt>,
    ) -> Result<Expr> {
        let shuffle = !matches!(
            f,
            MathFn::Ballot | MathFn::Any | MathFn::All | MathFn::ActiveMask
        );
        if args.len() != arity && !(shuffle && args.len() == arity + 1) {
            let also = if shuffle {
                " (and an optional width)"
            } else {
                ""
            };
            return fail(span, format!("`{name}` takes {arity} argument(s){also}"));
        }
        let mut vals = Vec::new();
        for a in args {
            vals.push(self.expr(a, out)?);
        }
        warp_expr(f, name, vals, span)
    }

    fn atomic(
        &mut self,
        op: AtomicOp,
        name: &str,
        args: &[ast::Expr],
        span: Span,
        out: &mut Vec<Stmt>,
        want_value: bool,
    ) -> Result<Option<Expr>> {
        let expected = if op == AtomicOp::Cas { 3 } else { 2 };
        if args.len() != expected {
            return fail(span, format!("`{name}` takes {expected} arguments"));
        }
        let access = match self.atomic_target(&args[0], name, out)? {
            AtomicTarget::Scalar(access) => access,
            // A whole `__half2` element: one atomic per component.
            AtomicTarget::Record(array, idx) => {
                return self.pair_atomic(op, name, array, idx, args, span, out, want_value);
            }
        };
        let elem = self.k.arrays[access.array].slot_type(access.slot);
        let (compare, value) = if op == AtomicOp::Cas {
            let c = self.expr(&args[1], out)?;
            let v = self.expr(&args[2], out)?;
            (Some(convert(c, elem)), convert(v, elem))
        } else {
            let v = self.expr(&args[1], out)?;
            (None, convert(v, elem))
        };
        if elem.is_float() && !matches!(op, AtomicOp::Add | AtomicOp::Exch | AtomicOp::Sub) {
            return fail(span, format!("`{name}` on floating-point data"));
        }
        let result = want_value.then(|| self.temp(elem, span));
        out.push(Stmt::Atomic {
            op,
            access,
            value,
            compare,
            result,
            span,
        });
        Ok(result.map(|r| var_expr(&self.k, r)))
    }

    /// The memory an atomic's first argument points to: an element
    /// (`&a[i]`, `a + i`) or a scalar field of one (`&nodes[i].count`,
    /// `&acc[i].x`, `&best.dist` of a `__shared__` struct), as a write
    /// access of its own site (the field's offset and width); or a whole
    /// element of a struct or vector array (a `__half2`), with its index.
    fn atomic_target(
        &mut self,
        target: &ast::Expr,
        name: &str,
        out: &mut Vec<Stmt>,
    ) -> Result<AtomicTarget> {
        let span = target.meta.span;
        let field = match &target.kind {
            A::Unary(UnOp::AddrOf, x) if matches!(x.kind, A::Member { .. }) => x,
            A::Unary(UnOp::AddrOf, x) if matches!(&x.kind, A::Index(b, _) if self.is_array_member(b)) => {
                x
            }
            _ => {
                let (array, off, _) = self.pointer(target, out)?;
                let idx = off.unwrap_or_else(|| int(0, Scalar::I64));
                if self.records.contains_key(&array) {
                    return Ok(AtomicTarget::Record(array, idx));
                }
                return Ok(AtomicTarget::Scalar(self.access(
                    array,
                    idx,
                    true,
                    &target.meta,
                )));
            }
        };
        match self.place(field, out)? {
            (
                Place::Mem {
                    array,
                    index,
                    slot,
                    member,
                    ..
                },
                FieldType::Scalar(_),
            ) => {
                let index = convert(index, Scalar::I64);
                let access = self.access_member(array, index, slot, &member, true, &target.meta);
                Ok(AtomicTarget::Scalar(access))
            }
            (
                Place::View {
                    array,
                    index,
                    first,
                },
                FieldType::Scalar(_),
            ) => {
                let index = arith(BinOp::Add, index, int(first as i64, Scalar::I64), span)?;
                let access = self.access(array, index, true, &target.meta);
                Ok(AtomicTarget::Scalar(access))
            }
            (Place::Vars(_), _) => fail(
                span,
                format!("`{name}` on a member of a local variable (atomics work on memory)"),
            ),
            (_, FieldType::Record(r)) => fail(
                span,
                format!(
                    "`{name}` on a whole `{}` (atomics take one scalar field)",
                    r.name
                ),
            ),
            (_, FieldType::Array { .. }) => fail(
                span,
                format!("`{name}` on a whole array member (atomics take one element)"),
            ),
        }
    }
}

/// What an atomic updates: one scalar in memory, or a whole element of a
/// struct or vector array (a `__half2`, updated per component).
enum AtomicTarget {
    /// A scalar element or field.
    Scalar(Access),
    /// A whole element: the array and the element's index.
    Record(ArrayId, Expr),
}
