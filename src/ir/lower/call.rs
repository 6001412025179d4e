//! Calls to builtins: math functions, warp shuffles and votes, atomics
//! and cache-hinted loads; calls to device functions go to [`super::inline`].

use super::*;
use crate::cuda::ast::{ExprKind as A, UnOp};
use crate::ir::half::{self, HalfFn};
use crate::ir::math::Signature;

/// Loads with a cache hint (the read-only path, streaming, …): each reads
/// what its pointer points to.
const CACHE_HINTED_LOADS: &[&str] = &["__ldg", "__ldca", "__ldcg", "__ldcs", "__ldlu", "__ldcv"];

fn atomic_op(name: &str) -> Option<AtomicOp> {
    let base = name
        .strip_suffix("_block")
        .or_else(|| name.strip_suffix("_system"))
        .unwrap_or(name);
    Some(match base {
        "atomicAdd" => AtomicOp::Add,
        "atomicSub" => AtomicOp::Sub,
        "atomicExch" => AtomicOp::Exch,
        "atomicMin" => AtomicOp::Min,
        "atomicMax" => AtomicOp::Max,
        "atomicAnd" => AtomicOp::And,
        "atomicOr" => AtomicOp::Or,
        "atomicXor" => AtomicOp::Xor,
        "atomicInc" => AtomicOp::Inc,
        "atomicDec" => AtomicOp::Dec,
        "atomicCAS" => AtomicOp::Cas,
        _ => return None,
    })
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
    let args = args
        .into_iter()
        .zip(arg_types)
        .map(|(a, t)| convert(a, t))
        .collect();
    Ok(Expr {
        kind: ExprKind::Call(f, args),
        ty,
    })
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
    let args = vals
        .into_iter()
        .zip(types)
        .map(|(v, t)| convert(v, t))
        .collect();
    Ok(Expr {
        kind: ExprKind::Call(f, args),
        ty,
    })
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
        if name == "__syncthreads" {
            if want_value {
                return fail(span, "`__syncthreads()` used as a value");
            }
            out.push(Stmt::Sync { span });
            return Ok(None);
        }
        if matches!(
            name,
            "printf"
                | "assert"
                | "__threadfence"
                | "__threadfence_block"
                | "__threadfence_system"
                | "__syncwarp"
        ) {
            // No effect on results or cost in the model.
            return Ok(if want_value {
                Some(int(0, Scalar::I32))
            } else {
                None
            });
        }
        if let Some(op) = atomic_op(name) {
            return self.atomic(op, name, args, span, out, want_value);
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
        match self.inline(name, args, span, out)? {
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
        let (array, off, _) = self.pointer(&args[0], out)?;
        let elem = self.k.arrays[array].elem;
        let idx = off.unwrap_or_else(|| int(0, Scalar::I64));
        if self.records.contains_key(&array) {
            return self.pair_atomic(op, name, array, idx, args, span, out, want_value);
        }
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
        let access = self.access(array, idx, true, &args[0].meta);
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
}
