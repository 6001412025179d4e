//! The 16-bit floats of `cuda_fp16.h` and `cuda_bf16.h`: rounding to
//! IEEE binary16 (`__half`) and bfloat16 (`__nv_bfloat16`), and the
//! intrinsics on them that copper knows.
//!
//! A 16-bit value is kept as the `f64` it equals (every binary16 and
//! bfloat16 value is exactly a `double`). Every conversion to one and
//! every arithmetic result on them is rounded to nearest, ties to even,
//! with subnormals, overflow to infinity and NaN as IEEE 754 says: the
//! GPU's `__hadd`, `__hmul`, … are correctly rounded, and an `f64` result
//! of `+ − × ÷ √` or a fused multiply-add rounded once more to 16 bits
//! gives the same value (`f64` has more than twice the bits plus two).
//!
//! The scalar intrinsics lower to the IR's operators (`__hadd(a, b)` is
//! `a + b` of type `__half`, exactly as `cuda_fp16.hpp`'s `operator+`) or
//! to [`MathFn`] calls; those on `__half2`/`__nv_bfloat162` (two
//! components) are lowered component by component by
//! `ir::lower::half2`, which uses [`HALF2_FUNCTIONS`].

use super::math::{MathFn, Signature};
use super::value::Scalar;
use crate::cuda::ast::BinOp;

/// `2^e` for `e` in the normal range of `f64`.
fn pow2(e: i32) -> f64 {
    f64::from_bits(((e + 1023) as u64) << 52)
}

/// `x` rounded to nearest (ties to even) in a binary format with
/// `mantissa` stored fraction bits and normal exponents
/// `min_exp ..= max_exp`: subnormals below `2^min_exp`, infinity past the
/// largest finite value, NaN and signed zeros kept.
fn round_to(x: f64, mantissa: i32, min_exp: i32, max_exp: i32) -> f64 {
    if !x.is_finite() || x == 0.0 {
        return x;
    }
    let exp = ((((x.to_bits() >> 52) & 0x7ff) as i32) - 1023).max(min_exp);
    let ulp = pow2(exp - mantissa);
    let r = (x / ulp).round_ties_even() * ulp;
    let max = (2.0 - pow2(-mantissa)) * pow2(max_exp);
    if r.abs() > max {
        f64::INFINITY.copysign(x)
    } else {
        r
    }
}

/// `x` rounded to the 16-bit float type `ty` (`F16` or `BF16`; any other
/// type leaves `x` as it is).
pub fn round(x: f64, ty: Scalar) -> f64 {
    match ty {
        Scalar::F16 => round_to(x, 10, -14, 15),
        Scalar::BF16 => round_to(x, 7, -126, 127),
        _ => x,
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

    fn h(x: f64) -> f64 {
        round(x, F16)
    }

    fn bf(x: f64) -> f64 {
        round(x, BF16)
    }

    #[test]
    fn binary16_edges() {
        // The largest finite half, and the halfway point above it, which
        // ties to the even 2^16: infinity.
        assert_eq!(h(65504.0), 65504.0);
        assert_eq!(h(65519.99), 65504.0);
        assert_eq!(h(65520.0), f64::INFINITY);
        assert_eq!(h(-65520.0), f64::NEG_INFINITY);
        assert_eq!(h(1e10), f64::INFINITY);
        // The smallest subnormal 2^-24; 2^-25 is the tie between 0 and it
        // (to even: 0); just above it rounds up.
        let tiny = 2f64.powi(-24);
        assert_eq!(h(tiny), tiny);
        assert_eq!(h(tiny / 2.0), 0.0);
        assert_eq!(h(tiny * 0.75), tiny);
        assert_eq!(h(tiny * 1.5), 2.0 * tiny, "tie to the even 2·2^-24");
        assert_eq!(h(tiny * 2.5), 2.0 * tiny);
        // Subnormal spacing is 2^-24 up to 2^-14, the smallest normal.
        assert_eq!(h(2f64.powi(-14) - tiny), 2f64.powi(-14) - tiny);
        // Signs, zeros, NaN, infinity.
        assert!(h(-tiny / 4.0).is_sign_negative() && h(-tiny / 4.0) == 0.0);
        assert!(h(-0.0).is_sign_negative());
        assert!(h(f64::NAN).is_nan());
        assert_eq!(h(f64::NEG_INFINITY), f64::NEG_INFINITY);
        // Normal numbers: 11 significant bits.
        assert_eq!(h(1.0 + 2f64.powi(-11)), 1.0, "tie to even");
        assert_eq!(h(1.0 + 3.0 * 2f64.powi(-11)), 1.0 + 2f64.powi(-9));
        assert_eq!(h(2049.0), 2048.0);
        assert_eq!(h(2051.0), 2052.0);
        assert_eq!(h(0.1), 0.0999755859375);
        assert_eq!(h(1.0 / 3.0), 0.333251953125);
    }

    #[test]
    fn bfloat16_edges() {
        // 8 significant bits, the exponent range of float.
        assert_eq!(bf(1.0 + 2f64.powi(-8)), 1.0, "tie to even");
        assert_eq!(bf(1.0 + 3.0 * 2f64.powi(-8)), 1.0 + 2f64.powi(-6));
        assert_eq!(bf(257.0), 256.0);
        assert_eq!(bf(0.1), 0.10009765625);
        let max = (2.0 - 2f64.powi(-7)) * 2f64.powi(127);
        assert_eq!(bf(max), max);
        assert_eq!(bf(f32::MAX as f64), f64::INFINITY);
        assert_eq!(bf(2f64.powi(-133)), 2f64.powi(-133));
        assert_eq!(bf(2f64.powi(-134)), 0.0);
        assert!(bf(f64::NAN).is_nan());
    }

    #[test]
    fn rounding_agrees_with_nearest_half_by_search() {
        // An independent oracle: every finite positive half by its bits,
        // the nearest found by search, ties to the even bit pattern, and
        // infinity from 65520 on (where 2^16 would be the next value).
        let halves: Vec<f64> = (0u32..0x7c00)
            .map(|b| {
                let (e, m) = ((b >> 10) as i32, (b & 0x3ff) as f64);
                if e == 0 {
                    m * 2f64.powi(-24)
                } else {
                    (1024.0 + m) * 2f64.powi(e - 25)
                }
            })
            .collect();
        let oracle = |x: f64| -> f64 {
            let i = halves.partition_point(|&v| v <= x);
            if i == halves.len() {
                return if x >= 65520.0 { f64::INFINITY } else { 65504.0 };
            }
            let (lo, hi) = (halves[i - 1], halves[i]);
            match (x - lo).partial_cmp(&(hi - x)).unwrap() {
                std::cmp::Ordering::Less => lo,
                std::cmp::Ordering::Greater => hi,
                std::cmp::Ordering::Equal if (i - 1) % 2 == 0 => lo,
                std::cmp::Ordering::Equal => hi,
            }
        };
        // Floats across the whole range (every 0x13579-th bit pattern),
        // and every midpoint between two halves.
        let mut bits = 0u32;
        while bits < 0x7f80_0000 {
            let x = f32::from_bits(bits) as f64;
            assert_eq!(h(x), oracle(x), "{x}");
            assert_eq!(h(-x), -oracle(x), "{x}");
            bits += 0x0001_3579;
        }
        for w in halves.windows(2) {
            let mid = (w[0] + w[1]) / 2.0;
            assert_eq!(h(mid), oracle(mid), "{mid}");
        }
    }

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
