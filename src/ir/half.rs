//! The intrinsics of `cuda_fp16.h` and `cuda_bf16.h` on the 16-bit
//! floats `__half` and `__nv_bfloat16` that copper knows (their values
//! and rounding: `ir::float16`).
//!
//! The scalar intrinsics lower to the IR's operators (`__hadd(a, b)` is
//! `a + b` of type `__half`, exactly as `cuda_fp16.hpp`'s `operator+`) or
//! to [`MathFn`] calls; those on `__half2`/`__nv_bfloat162` (two
//! components) are lowered component by component by
//! `ir::lower::half2`, which uses [`HALF2_FUNCTIONS`].

use super::math::{MathFn, Signature};
use super::value::Scalar;
use crate::cuda::ast::BinOp;

/// The 16-bit float type a builtin type name stands for (`__half`,
/// `half`, `__nv_bfloat16`, `nv_bfloat16`).
pub fn type_named(name: &str) -> Option<Scalar> {
    match name {
        "half" | "__half" => Some(Scalar::F16),
        "nv_bfloat16" | "__nv_bfloat16" => Some(Scalar::BF16),
        _ => None,
    }
}

/// What a scalar 16-bit intrinsic lowers to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HalfFn {
    /// An IR binary operator on two values of the 16-bit type (`__hadd`:
    /// `+`; `__hlt`: `<`, whose result is a truth value).
    Op(BinOp),
    /// Negation (`__hneg`).
    Neg,
    /// A math function or conversion.
    Math(MathFn, Signature),
}

/// The 16-bit type an overloaded intrinsic computes in: `__nv_bfloat16`
/// when an argument is one, else `__half`.
pub fn overload_type(args: &[Scalar]) -> Scalar {
    if args.contains(&Scalar::BF16) {
        Scalar::BF16
    } else {
        Scalar::F16
    }
}

use MathFn as M;
use Scalar::{BF16, F16, F32, F64, I32, U32};

/// Operators: `__hadd(a, b)` is `a + b` in the arguments' 16-bit type.
const OPERATORS: &[(&str, HalfFn)] = &[
    ("__hadd", HalfFn::Op(BinOp::Add)),
    ("__hadd_rn", HalfFn::Op(BinOp::Add)),
    ("__hsub", HalfFn::Op(BinOp::Sub)),
    ("__hsub_rn", HalfFn::Op(BinOp::Sub)),
    ("__hmul", HalfFn::Op(BinOp::Mul)),
    ("__hmul_rn", HalfFn::Op(BinOp::Mul)),
    ("__hdiv", HalfFn::Op(BinOp::Div)),
    ("__heq", HalfFn::Op(BinOp::Eq)),
    ("__hne", HalfFn::Op(BinOp::Ne)),
    ("__hlt", HalfFn::Op(BinOp::Lt)),
    ("__hle", HalfFn::Op(BinOp::Le)),
    ("__hgt", HalfFn::Op(BinOp::Gt)),
    ("__hge", HalfFn::Op(BinOp::Ge)),
    ("__hneg", HalfFn::Neg),
];

/// Functions overloaded on `__half` and `__nv_bfloat16` (arguments and
/// result of the arguments' 16-bit type), with their arity.
const OVERLOADED: &[(&str, MathFn, usize)] = &[
    ("__habs", M::Abs, 1),
    ("__hfma", M::Fma, 3),
    ("__hmax", M::Max, 2),
    ("__hmin", M::Min, 2),
    ("hsqrt", M::Sqrt, 1),
    ("hrsqrt", M::Rsqrt, 1),
    ("hrcp", M::Rcp, 1),
    ("hexp", M::Exp, 1),
    ("hexp2", M::Exp2, 1),
    ("hexp10", M::Exp10, 1),
    ("hlog", M::Log, 1),
    ("hlog2", M::Log2, 1),
    ("hlog10", M::Log10, 1),
    ("hsin", M::Sin, 1),
    ("hcos", M::Cos, 1),
    ("hceil", M::Ceil, 1),
    ("hfloor", M::Floor, 1),
    ("htrunc", M::Trunc, 1),
    ("hrint", M::Rint, 1),
];

/// Conversions, each with its fixed argument and result types.
const CONVERSIONS: &[(&str, MathFn, Scalar, Scalar)] = &[
    ("__float2half", M::ToFloat, F32, F16),
    ("__float2half_rn", M::ToFloat, F32, F16),
    ("__double2half", M::ToFloat, F64, F16),
    ("__half2float", M::ToFloat, F16, F32),
    ("__int2half_rn", M::ToFloat, I32, F16),
    ("__uint2half_rn", M::ToFloat, U32, F16),
    ("__half2int_rn", M::ToIntRn, F16, I32),
    ("__half2int_rz", M::ToIntRz, F16, I32),
    ("__half2int_rd", M::ToIntRd, F16, I32),
    ("__half2int_ru", M::ToIntRu, F16, I32),
    ("__half2uint_rz", M::ToIntRz, F16, U32),
    ("__float2bfloat16", M::ToFloat, F32, BF16),
    ("__float2bfloat16_rn", M::ToFloat, F32, BF16),
    ("__double2bfloat16", M::ToFloat, F64, BF16),
    ("__bfloat162float", M::ToFloat, BF16, F32),
    ("__int2bfloat16_rn", M::ToFloat, I32, BF16),
    ("__bfloat162int_rn", M::ToIntRn, BF16, I32),
    ("__bfloat162int_rz", M::ToIntRz, BF16, I32),
];

/// The intrinsics on `__half2` and `__nv_bfloat162` (and the conversions
/// to and from them), which `ir::lower::half2` lowers component by
/// component.
pub const HALF2_FUNCTIONS: &[&str] = &[
    "__hadd2",
    "__hsub2",
    "__hmul2",
    "__h2div",
    "__hfma2",
    "__hneg2",
    "__habs2",
    "__hmax2",
    "__hmin2",
    "h2sqrt",
    "h2exp",
    "h2log",
    "h2rsqrt",
    "__floats2half2_rn",
    "__float22half2_rn",
    "__float2half2_rn",
    "__half2half2",
    "__halves2half2",
    "make_half2",
    "__floats2bfloat162_rn",
    "__float22bfloat162_rn",
    "__float2bfloat162_rn",
    "__bfloat162bfloat162",
    "__halves2bfloat162",
    "make_bfloat162",
    "__half22float2",
    "__bfloat1622float2",
    "__low2half",
    "__high2half",
    "__low2bfloat16",
    "__high2bfloat16",
    "__low2float",
    "__high2float",
];

/// The scalar 16-bit intrinsic called `name`.
pub fn lookup(name: &str) -> Option<HalfFn> {
    if let Some(&(_, f)) = OPERATORS.iter().find(|e| e.0 == name) {
        return Some(f);
    }
    if let Some(&(_, f, arity)) = OVERLOADED.iter().find(|e| e.0 == name) {
        return Some(HalfFn::Math(f, Signature::Half { arity }));
    }
    let &(_, f, arg, result) = CONVERSIONS.iter().find(|e| e.0 == name)?;
    let args: &'static [Scalar] = match arg {
        F32 => &[F32],
        F64 => &[F64],
        F16 => &[F16],
        BF16 => &[BF16],
        I32 => &[I32],
        _ => &[U32],
    };
    Some(HalfFn::Math(f, Signature::Fixed { args, result }))
}

/// Whether `name` is a 16-bit intrinsic, scalar or on `__half2` (no side
/// effects).
pub fn is_half_function(name: &str) -> bool {
    lookup(name).is_some() || HALF2_FUNCTIONS.contains(&name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intrinsics_are_known() {
        for n in "__hadd __hsub __hmul __hdiv __hneg __habs __hfma __hmax __hmin __hlt __hgt \
                  __heq __hle __hge hsqrt hexp hlog hrsqrt __float2half __float2half_rn \
                  __half2float __float2bfloat16 __bfloat162float __int2half_rn __half2int_rz \
                  __hadd2 __hmul2 __hfma2 __hsub2 __floats2half2_rn __float22half2_rn \
                  __half22float2 __low2float __high2float __halves2half2 __low2half __high2half"
            .split_whitespace()
        {
            assert!(is_half_function(n), "{n}");
        }
        assert_eq!(lookup("__hadd"), Some(HalfFn::Op(BinOp::Add)));
        assert_eq!(overload_type(&[F16, F16]), F16);
        assert_eq!(overload_type(&[BF16, F32]), BF16);
        assert!(!is_half_function("__hadd3"));
    }
}
