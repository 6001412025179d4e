//! The intrinsics on `__half2` and `__nv_bfloat162` (two 16-bit floats in
//! one 4-byte vector, `.x` low and `.y` high), lowered component by
//! component: `__hadd2(a, b)` is `__hadd(a.x, b.x)`, `__hadd(a.y, b.y)`;
//! the conversions to and from `float2` and between scalars and pairs;
//! and the warp shuffles of a pair (one shuffle per component).

use std::sync::Arc;

use super::call::half_call;
use super::*;
use crate::ir::half;
use crate::ir::record::{FieldType, Record};

/// What a `__half2` intrinsic computes.
#[derive(Clone, Copy, Debug)]
enum Half2 {
    /// The named scalar intrinsic on each component (`__hadd2` →
    /// `__hadd`); the pair type of the arguments.
    Each(&'static str),
    /// A pair of two scalars converted to the component type.
    Pair,
    /// A pair of one scalar, twice.
    Splat,
    /// A two-component vector converted (`float2` ↔ `__half2`).
    Vector,
    /// One component (0: low, `.x`; 1: high, `.y`) as a scalar.
    Part(usize),
}

use Half2::*;
use Scalar::{BF16, F16, F32};

/// Each intrinsic, what it computes, and its result's component type
/// (`None` for the arguments' pair type).
const TABLE: &[(&str, Half2, Option<Scalar>)] = &[
    ("__hadd2", Each("__hadd"), None),
    ("__hsub2", Each("__hsub"), None),
    ("__hmul2", Each("__hmul"), None),
    ("__h2div", Each("__hdiv"), None),
    ("__hfma2", Each("__hfma"), None),
    ("__hneg2", Each("__hneg"), None),
    ("__habs2", Each("__habs"), None),
    ("__hmax2", Each("__hmax"), None),
    ("__hmin2", Each("__hmin"), None),
    ("h2sqrt", Each("hsqrt"), None),
    ("h2exp", Each("hexp"), None),
    ("h2log", Each("hlog"), None),
    ("h2rsqrt", Each("hrsqrt"), None),
    ("__floats2half2_rn", Pair, Some(F16)),
    ("__halves2half2", Pair, Some(F16)),
    ("make_half2", Pair, Some(F16)),
    ("__float2half2_rn", Splat, Some(F16)),
    ("__half2half2", Splat, Some(F16)),
    ("__float22half2_rn", Vector, Some(F16)),
    ("__half22float2", Vector, Some(F32)),
    ("__floats2bfloat162_rn", Pair, Some(BF16)),
    ("__halves2bfloat162", Pair, Some(BF16)),
    ("make_bfloat162", Pair, Some(BF16)),
    ("__float2bfloat162_rn", Splat, Some(BF16)),
    ("__bfloat162bfloat162", Splat, Some(BF16)),
    ("__float22bfloat162_rn", Vector, Some(BF16)),
    ("__bfloat1622float2", Vector, Some(F32)),
    ("__low2half", Part(0), Some(F16)),
    ("__high2half", Part(1), Some(F16)),
    ("__low2bfloat16", Part(0), Some(BF16)),
    ("__high2bfloat16", Part(1), Some(BF16)),
    ("__low2float", Part(0), Some(F32)),
    ("__high2float", Part(1), Some(F32)),
];

/// The two-component vector of `elem` (`__half2`, `__nv_bfloat162`,
/// `float2`).
fn pair_type(elem: Scalar) -> Arc<Record> {
    let name = match elem {
        F16 => "__half2",
        BF16 => "__nv_bfloat162",
        _ => "float2",
    };
    Arc::new(Record::vector(name).expect("a CUDA vector type"))
}

/// `e` converted to `ty` as a conversion the user asked for (charged as
/// one operation).
fn converted(e: Expr, ty: Scalar) -> Expr {
    if e.ty == ty {
        return e;
    }
    Expr {
        kind: ExprKind::Convert {
            value: Box::new(e),
            explicit: true,
        },
        ty,
    }
}

fn entry(name: &str) -> Option<(Half2, Option<Scalar>)> {
    TABLE
        .iter()
        .find(|e| e.0 == name)
        .map(|&(_, what, ty)| (what, ty))
}

/// Whether `name` is a shuffle (which CUDA overloads for `__half2`).
fn shuffle(name: &str) -> Option<MathFn> {
    math::warp_lookup(name).map(|(f, _)| f).filter(|f| {
        matches!(
            f,
            MathFn::ShflIdx | MathFn::ShflUp | MathFn::ShflDown | MathFn::ShflXor
        )
    })
}

impl Lowerer<'_> {
    /// A pair argument of `name`: its components, which must be two
    /// 16-bit floats of one type (or two `float`s for `float2`
    /// conversions).
    fn pair_arg(
        &mut self,
        name: &str,
        e: &ast::Expr,
        out: &mut Vec<Stmt>,
    ) -> Result<(Scalar, Vec<Expr>)> {
        let (rec, vals) = self.record_value(e, out).map_err(|err| {
            if err.message.contains("found a scalar") {
                LowerError {
                    message: format!(
                        "`{name}` takes `__half2`, `__nv_bfloat162` or `float2` values, not a scalar"
                    ),
                    ..err
                }
            } else {
                err
            }
        })?;
        match rec.types.as_slice() {
            [a, b] if a == b && (a.is_half() || *a == F32) => Ok((*a, vals)),
            _ => fail(
                e.meta.span,
                format!(
                    "`{name}` takes `__half2`, `__nv_bfloat162` or `float2` values, not `{}`",
                    rec.name
                ),
            ),
        }
    }

    /// The scalar value of a `__half2` intrinsic that gives one
    /// (`__low2float(h2)`); the others used as a scalar are an error.
    pub(super) fn half2_scalar(
        &mut self,
        name: &str,
        args: &[ast::Expr],
        span: Span,
        out: &mut Vec<Stmt>,
    ) -> Result<Expr> {
        let Some((Part(i), Some(ty))) = entry(name) else {
            return fail(
                span,
                format!("`{name}` gives a two-component value, used as a scalar"),
            );
        };
        let [arg] = args else {
            return fail(span, format!("`{name}` takes one argument"));
        };
        let (_, mut vals) = self.pair_arg(name, arg, out)?;
        Ok(converted(vals.swap_remove(i), ty))
    }

    /// The type of a `__half2` intrinsic's (or a `__half2` shuffle's)
    /// value, found without lowering; `None` for other calls.
    pub(super) fn half2_static_type(
        &mut self,
        name: &str,
        args: &[ast::Expr],
    ) -> Option<FieldType> {
        if shuffle(name).is_some() {
            return match self.static_field_type(args.get(1)?)? {
                FieldType::Record(r) if r.types.iter().all(|t| t.is_half()) => {
                    Some(FieldType::Record(r))
                }
                _ => None,
            };
        }
        match entry(name)? {
            (Part(_), _) => None,
            (_, Some(ty)) => Some(FieldType::Record(pair_type(ty))),
            (_, None) => match self.static_field_type(args.first()?)? {
                FieldType::Record(r) => Some(FieldType::Record(r)),
                FieldType::Scalar(_) | FieldType::Array { .. } => None,
            },
        }
    }

    /// The value of a call giving a `__half2` (or, converting one, a
    /// `float2`); `None` when `name` is not such an intrinsic.
    pub(super) fn half2_value(
        &mut self,
        name: &str,
        args: &[ast::Expr],
        span: Span,
        out: &mut Vec<Stmt>,
    ) -> Result<Option<(Arc<Record>, Vec<Expr>)>> {
        if let Some(f) = shuffle(name) {
            if self.half2_static_type(name, args).is_some() {
                return self.pair_shuffle(f, name, args, span, out).map(Some);
            }
            return Ok(None);
        }
        let Some((what, ty)) = entry(name) else {
            return Ok(None);
        };
        let arity = match what {
            Each(scalar) => match half::lookup(scalar) {
                Some(half::HalfFn::Math(_, sig)) => sig.arity(),
                Some(half::HalfFn::Neg) => 1,
                _ => 2,
            },
            Pair => 2,
            Splat | Vector | Part(_) => 1,
        };
        if args.len() != arity {
            return fail(span, format!("`{name}` takes {arity} argument(s)"));
        }
        let (elem, vals) = match (what, ty) {
            (Each(scalar), _) => {
                let mut pairs = Vec::new();
                for a in args {
                    pairs.push(self.pair_arg(name, a, out)?);
                }
                let elem = pairs[0].0;
                if !elem.is_half() || pairs.iter().any(|p| p.0 != elem) {
                    return fail(
                        span,
                        format!(
                            "`{name}` takes `__half2` or `__nv_bfloat162` arguments of one type"
                        ),
                    );
                }
                let h = half::lookup(scalar).expect("a 16-bit intrinsic");
                let mut vals = Vec::new();
                for i in 0..2 {
                    let comps = pairs.iter().map(|p| p.1[i].clone()).collect();
                    vals.push(half_call(h, scalar, comps, span)?);
                }
                (elem, vals)
            }
            (Part(_), _) | (_, None) => {
                return fail(
                    span,
                    format!("`{name}` gives a scalar, used as a two-component value"),
                )
            }
            (Pair, Some(ty)) => {
                let mut vals = Vec::new();
                for a in args {
                    let v = self.expr(a, out)?;
                    vals.push(converted(v, ty));
                }
                (ty, vals)
            }
            (Splat, Some(ty)) => {
                let v = self.expr(&args[0], out)?;
                let v = self.snapshot(converted(v, ty), span, out);
                (ty, vec![v.clone(), v])
            }
            (Vector, Some(ty)) => {
                let (_, vals) = self.pair_arg(name, &args[0], out)?;
                (ty, vals.into_iter().map(|v| converted(v, ty)).collect())
            }
        };
        Ok(Some((pair_type(elem), vals)))
    }

    /// A shuffle of a `__half2`: the same shuffle of each component, the
    /// mask and lane operands evaluated once.
    fn pair_shuffle(
        &mut self,
        f: MathFn,
        name: &str,
        args: &[ast::Expr],
        span: Span,
        out: &mut Vec<Stmt>,
    ) -> Result<(Arc<Record>, Vec<Expr>)> {
        if !(3..=4).contains(&args.len()) {
            return fail(
                span,
                format!("`{name}` takes 3 arguments (and an optional width)"),
            );
        }
        let mask = self.expr(&args[0], out)?;
        let mask = self.snapshot(mask, span, out);
        let (rec, comps) = self.record_value(&args[1], out)?;
        let mut rest = Vec::new();
        for a in &args[2..] {
            let v = self.expr(a, out)?;
            rest.push(self.snapshot(v, span, out));
        }
        let mut vals = Vec::new();
        for c in comps {
            let mut call_args = vec![mask.clone(), c];
            call_args.extend(rest.iter().cloned());
            vals.push(super::call::warp_expr(f, name, call_args, span)?);
        }
        Ok((rec, vals))
    }

    /// `atomicAdd(&pairs[i], v)` on a `__half2` or `__nv_bfloat162`
    /// array: each component's atomic add, made by one 4-byte access (the
    /// first component's pays for it), as the GPU's 32-bit atomic is. Other
    /// atomics on structs or vectors, and the old value, are errors.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn pair_atomic(
        &mut self,
        op: AtomicOp,
        name: &str,
        array: ArrayId,
        index: Expr,
        args: &[ast::Expr],
        span: Span,
        out: &mut Vec<Stmt>,
        want_value: bool,
    ) -> Result<Option<Expr>> {
        let layout = self.k.arrays[array].layout.clone();
        let pair = matches!(layout.types.as_slice(), [a, b] if a == b && a.is_half());
        if !pair || op != AtomicOp::Add {
            return fail(
                span,
                format!("`{name}` on a struct or vector element (copper knows `atomicAdd` on `__half2` and `__nv_bfloat162`)"),
            );
        }
        if want_value {
            return fail(
                span,
                format!("the old value of `{name}` on a `__half2` element"),
            );
        }
        let (_, vals) = self.pair_arg(name, &args[1], out)?;
        let index = self.snapshot(index, span, out);
        let site = self.site(array, true, &args[0].meta, 0, layout.size);
        for (slot, value) in vals.into_iter().enumerate() {
            out.push(Stmt::Atomic {
                op,
                access: Access {
                    array,
                    index: Box::new(index.clone()),
                    site,
                    slot,
                    charged: slot == 0,
                    member: None,
                },
                value: convert(value, layout.types[slot]),
                compare: None,
                result: None,
                span,
            });
        }
        Ok(None)
    }
}
