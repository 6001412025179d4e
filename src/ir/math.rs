//! The CUDA device library copper knows: every math function and
//! intrinsic by name, with its argument and result types ([`lookup`]) and
//! its value on one lane ([`eval`]). One table serves lowering, the
//! simulator and the transforms (which may move calls of these functions:
//! they have no side effects).
//!
//! Floating-point functions are evaluated with the host's `f64` library
//! and rounded to the result type, so results may differ from the GPU's in
//! the last units in the last place (the fast `__expf`-style intrinsics
//! differ more on a GPU); integer intrinsics and conversions are exact.

use super::value::{wrap, Scalar, Value};

/// A math function or intrinsic.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MathFn {
    /// `sqrt`
    Sqrt,
    /// `rsqrt` (1/√x)
    Rsqrt,
    /// `cbrt`
    Cbrt,
    /// `rcbrt` (1/∛x)
    Rcbrt,
    /// `exp`
    Exp,
    /// `exp2`
    Exp2,
    /// `exp10`
    Exp10,
    /// `expm1`
    Expm1,
    /// `log`
    Log,
    /// `log2`
    Log2,
    /// `log10`
    Log10,
    /// `log1p`
    Log1p,
    /// `pow`
    Pow,
    /// `sin`
    Sin,
    /// `cos`
    Cos,
    /// `tan`
    Tan,
    /// `sinpi` (sin πx)
    SinPi,
    /// `cospi` (cos πx)
    CosPi,
    /// `asin`
    Asin,
    /// `acos`
    Acos,
    /// `atan`
    Atan,
    /// `atan2`
    Atan2,
    /// `sinh`
    Sinh,
    /// `cosh`
    Cosh,
    /// `tanh`
    Tanh,
    /// `asinh`
    Asinh,
    /// `acosh`
    Acosh,
    /// `atanh`
    Atanh,
    /// `erf`
    Erf,
    /// `erfc`
    Erfc,
    /// `hypot`
    Hypot,
    /// `fmod`
    Fmod,
    /// `copysign`
    Copysign,
    /// `fdim` (max(x − y, 0))
    Fdim,
    /// `fabs`, `abs`
    Abs,
    /// `min`, `fmin`
    Min,
    /// `max`, `fmax`
    Max,
    /// `floor`
    Floor,
    /// `ceil`
    Ceil,
    /// `round` (halves away from zero)
    Round,
    /// `trunc`
    Trunc,
    /// `rint`, `nearbyint` (halves to even)
    Rint,
    /// `fma`
    Fma,
    /// `__fdividef`, `fdivide`
    Div,
    /// `__frcp_rn` (1/x)
    Rcp,
    /// `__saturatef` (clamped to [0, 1])
    Saturate,
    /// `__mul24`, `__umul24`: the low 24 bits of each operand multiplied
    Mul24,
    /// `__mulhi`, `__umulhi`, `__mul64hi`, `__umul64hi`: the high half of
    /// the double-width product
    MulHi,
    /// `__popc`, `__popcll`: set bits
    Popc,
    /// `__clz`, `__clzll`: leading zero bits
    Clz,
    /// `__ffs`, `__ffsll`: position of the lowest set bit (from 1; 0 for 0)
    Ffs,
    /// `__brev`, `__brevll`: bits reversed
    Brev,
    /// `__sad`, `__usad`: |x − y| + z
    Sad,
    /// `__float2int_rn` and the other conversions rounding to nearest even
    ToIntRn,
    /// `__float2int_rz` and others: toward zero
    ToIntRz,
    /// `__float2int_rd` and others: down
    ToIntRd,
    /// `__float2int_ru` and others: up
    ToIntRu,
    /// `__int2float_rn` and others: a number converted to a float type
    ToFloat,
    /// `__float_as_int` and others: the same bits read as another type
    Bits,
    /// `__shfl_sync(mask, var, srcLane, width)`: `var` of another lane
    /// (evaluated across the warp, never lane by lane; see [`WARP_FUNCTIONS`])
    ShflIdx,
    /// `__shfl_up_sync(mask, var, delta, width)`
    ShflUp,
    /// `__shfl_down_sync(mask, var, delta, width)`
    ShflDown,
    /// `__shfl_xor_sync(mask, var, laneMask, width)`
    ShflXor,
    /// `__ballot_sync(mask, predicate)`: the lanes whose predicate holds
    Ballot,
    /// `__any_sync(mask, predicate)`
    Any,
    /// `__all_sync(mask, predicate)`
    All,
    /// `__activemask()`: the lanes running this call
    ActiveMask,
}

impl MathFn {
    /// Whether this is a warp-level primitive: its value in one lane
    /// depends on the other lanes of the warp (and on which are active),
    /// so it is evaluated across the warp and never moved by a rewrite.
    pub fn is_warp(self) -> bool {
        matches!(
            self,
            M::ShflIdx
                | M::ShflUp
                | M::ShflDown
                | M::ShflXor
                | M::Ballot
                | M::Any
                | M::All
                | M::ActiveMask
        )
    }
}

/// The warp-level primitives: name, function, and the number of
/// arguments without the optional `width` of the shuffles.
pub const WARP_FUNCTIONS: &[(&str, MathFn, usize)] = &[
    ("__shfl_sync", M::ShflIdx, 3),
    ("__shfl_up_sync", M::ShflUp, 3),
    ("__shfl_down_sync", M::ShflDown, 3),
    ("__shfl_xor_sync", M::ShflXor, 3),
    ("__ballot_sync", M::Ballot, 2),
    ("__any_sync", M::Any, 2),
    ("__all_sync", M::All, 2),
    ("__activemask", M::ActiveMask, 0),
];

/// The warp-level primitive called `name`, and its number of arguments
/// (without a shuffle's optional `width`).
pub fn warp_lookup(name: &str) -> Option<(MathFn, usize)> {
    WARP_FUNCTIONS
        .iter()
        .find(|e| e.0 == name)
        .map(|&(_, f, n)| (f, n))
}

/// The lane a shuffle in lane `lane` reads, with `arg` its lane operand
/// (source lane, delta or lane mask) and `width` its segment size: the
/// lane itself where CUDA returns the caller's own value.
pub fn shuffle_source(f: MathFn, lane: u32, arg: u32, width: u32) -> u32 {
    let segment = lane / width * width;
    match f {
        M::ShflIdx => segment + arg % width,
        M::ShflUp if lane - segment >= arg => lane - arg,
        M::ShflDown if (lane - segment).saturating_add(arg) < width => lane + arg,
        // Earlier segments may be read, later ones give the own value.
        M::ShflXor if (lane ^ arg) < segment + width => lane ^ arg,
        _ => lane,
    }
}

/// Argument and result types of a function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Signature {
    /// `arity` arguments of type `ty` (converted to it), result `ty`.
    Same {
        /// The type.
        ty: Scalar,
        /// Number of arguments.
        arity: usize,
    },
    /// `min`/`max`/`abs` over integers or floats: the arguments' common
    /// type (at least `at_least`'s rank and signedness for `umin`,
    /// `llmax`, …).
    Overloaded {
        /// Number of arguments.
        arity: usize,
        /// `Some(U32)` for `umin`, `Some(I64)` for `llmin`, …
        at_least: Option<Scalar>,
    },
    /// The 16-bit intrinsics overloaded on `__half` and `__nv_bfloat16`:
    /// `arity` arguments of the arguments' 16-bit type
    /// (`half::overload_type`), result of that type.
    Half {
        /// Number of arguments.
        arity: usize,
    },
    /// Fixed argument types and result.
    Fixed {
        /// Argument types.
        args: &'static [Scalar],
        /// Result type.
        result: Scalar,
    },
}

impl Signature {
    /// Number of arguments.
    pub fn arity(self) -> usize {
        match self {
            Signature::Same { arity, .. }
            | Signature::Overloaded { arity, .. }
            | Signature::Half { arity } => arity,
            Signature::Fixed { args, .. } => args.len(),
        }
    }
}

use MathFn as M;
use Scalar::{F32, F64, I32, I64, U32, U64};

/// Floating-point functions with `arity` arguments: `NAME` takes and gives
/// `double`, `NAMEf` `float`.
const FLOAT_FUNCTIONS: &[(&str, MathFn, usize)] = &[
    ("sqrt", M::Sqrt, 1),
    ("rsqrt", M::Rsqrt, 1),
    ("cbrt", M::Cbrt, 1),
    ("rcbrt", M::Rcbrt, 1),
    ("exp", M::Exp, 1),
    ("exp2", M::Exp2, 1),
    ("exp10", M::Exp10, 1),
    ("expm1", M::Expm1, 1),
    ("log", M::Log, 1),
    ("log2", M::Log2, 1),
    ("log10", M::Log10, 1),
    ("log1p", M::Log1p, 1),
    ("pow", M::Pow, 2),
    ("sin", M::Sin, 1),
    ("cos", M::Cos, 1),
    ("tan", M::Tan, 1),
    ("sinpi", M::SinPi, 1),
    ("cospi", M::CosPi, 1),
    ("asin", M::Asin, 1),
    ("acos", M::Acos, 1),
    ("atan", M::Atan, 1),
    ("atan2", M::Atan2, 2),
    ("sinh", M::Sinh, 1),
    ("cosh", M::Cosh, 1),
    ("tanh", M::Tanh, 1),
    ("asinh", M::Asinh, 1),
    ("acosh", M::Acosh, 1),
    ("atanh", M::Atanh, 1),
    ("erf", M::Erf, 1),
    ("erfc", M::Erfc, 1),
    ("hypot", M::Hypot, 2),
    ("fmod", M::Fmod, 2),
    ("copysign", M::Copysign, 2),
    ("fdim", M::Fdim, 2),
    ("fabs", M::Abs, 1),
    ("fmin", M::Min, 2),
    ("fmax", M::Max, 2),
    ("floor", M::Floor, 1),
    ("ceil", M::Ceil, 1),
    ("round", M::Round, 1),
    ("trunc", M::Trunc, 1),
    ("rint", M::Rint, 1),
    ("nearbyint", M::Rint, 1),
    ("fma", M::Fma, 3),
    ("fdivide", M::Div, 2),
];

/// Intrinsics with one fixed signature.
const INTRINSICS: &[(&str, MathFn, &[Scalar], Scalar)] = &[
    // Fast single-precision intrinsics.
    ("__expf", M::Exp, &[F32], F32),
    ("__exp10f", M::Exp10, &[F32], F32),
    ("__logf", M::Log, &[F32], F32),
    ("__log2f", M::Log2, &[F32], F32),
    ("__log10f", M::Log10, &[F32], F32),
    ("__sinf", M::Sin, &[F32], F32),
    ("__cosf", M::Cos, &[F32], F32),
    ("__tanf", M::Tan, &[F32], F32),
    ("__powf", M::Pow, &[F32, F32], F32),
    ("__fdividef", M::Div, &[F32, F32], F32),
    ("__saturatef", M::Saturate, &[F32], F32),
    ("__fsqrt_rn", M::Sqrt, &[F32], F32),
    ("__dsqrt_rn", M::Sqrt, &[F64], F64),
    ("__frsqrt_rn", M::Rsqrt, &[F32], F32),
    ("__frcp_rn", M::Rcp, &[F32], F32),
    ("__drcp_rn", M::Rcp, &[F64], F64),
    ("__fmaf_rn", M::Fma, &[F32, F32, F32], F32),
    ("__fma_rn", M::Fma, &[F64, F64, F64], F64),
    // Integer intrinsics.
    ("__mul24", M::Mul24, &[I32, I32], I32),
    ("__umul24", M::Mul24, &[U32, U32], U32),
    ("__mulhi", M::MulHi, &[I32, I32], I32),
    ("__umulhi", M::MulHi, &[U32, U32], U32),
    ("__mul64hi", M::MulHi, &[I64, I64], I64),
    ("__umul64hi", M::MulHi, &[U64, U64], U64),
    ("__popc", M::Popc, &[U32], I32),
    ("__popcll", M::Popc, &[U64], I32),
    ("__clz", M::Clz, &[I32], I32),
    ("__clzll", M::Clz, &[I64], I32),
    ("__ffs", M::Ffs, &[I32], I32),
    ("__ffsll", M::Ffs, &[I64], I32),
    ("__brev", M::Brev, &[U32], U32),
    ("__brevll", M::Brev, &[U64], U64),
    ("__sad", M::Sad, &[I32, I32, U32], U32),
    ("__usad", M::Sad, &[U32, U32, U32], U32),
    // Conversions.
    ("__float2int_rn", M::ToIntRn, &[F32], I32),
    ("__float2int_rz", M::ToIntRz, &[F32], I32),
    ("__float2int_rd", M::ToIntRd, &[F32], I32),
    ("__float2int_ru", M::ToIntRu, &[F32], I32),
    ("__float2uint_rn", M::ToIntRn, &[F32], U32),
    ("__float2uint_rz", M::ToIntRz, &[F32], U32),
    ("__float2uint_rd", M::ToIntRd, &[F32], U32),
    ("__float2uint_ru", M::ToIntRu, &[F32], U32),
    ("__float2ll_rn", M::ToIntRn, &[F32], I64),
    ("__float2ll_rz", M::ToIntRz, &[F32], I64),
    ("__double2int_rn", M::ToIntRn, &[F64], I32),
    ("__double2int_rz", M::ToIntRz, &[F64], I32),
    ("__double2int_rd", M::ToIntRd, &[F64], I32),
    ("__double2int_ru", M::ToIntRu, &[F64], I32),
    ("__double2ll_rn", M::ToIntRn, &[F64], I64),
    ("__double2ll_rz", M::ToIntRz, &[F64], I64),
    ("__int2float_rn", M::ToFloat, &[I32], F32),
    ("__uint2float_rn", M::ToFloat, &[U32], F32),
    ("__ll2float_rn", M::ToFloat, &[I64], F32),
    ("__int2double_rn", M::ToFloat, &[I32], F64),
    ("__ll2double_rn", M::ToFloat, &[I64], F64),
    ("__double2float_rn", M::ToFloat, &[F64], F32),
    ("__float_as_int", M::Bits, &[F32], I32),
    ("__float_as_uint", M::Bits, &[F32], U32),
    ("__int_as_float", M::Bits, &[I32], F32),
    ("__uint_as_float", M::Bits, &[U32], F32),
    ("__double_as_longlong", M::Bits, &[F64], I64),
    ("__longlong_as_double", M::Bits, &[I64], F64),
];

/// `min`/`max`/`abs` and their typed spellings.
const OVERLOADED: &[(&str, MathFn, usize, Option<Scalar>)] = &[
    ("min", M::Min, 2, None),
    ("max", M::Max, 2, None),
    ("abs", M::Abs, 1, None),
    ("umin", M::Min, 2, Some(U32)),
    ("umax", M::Max, 2, Some(U32)),
    ("llmin", M::Min, 2, Some(I64)),
    ("llmax", M::Max, 2, Some(I64)),
    ("ullmin", M::Min, 2, Some(U64)),
    ("ullmax", M::Max, 2, Some(U64)),
    ("labs", M::Abs, 1, Some(I64)),
    ("llabs", M::Abs, 1, Some(I64)),
];

/// The constants of `<climits>`, `<cfloat>`, `<cmath>` and CUDA's
/// `math_constants.h` that kernels use without defining them (copper does
/// not read system headers): the value and its C type.
pub fn library_constant(name: &str) -> Option<(Value, Scalar)> {
    use std::f64::consts as c;
    let int = |v: i64, t: Scalar| Some((Value::I(v), t));
    let float = |v: f64, t: Scalar| Some((Value::F(v), t));
    match name {
        "CHAR_BIT" => int(8, I32),
        "SCHAR_MIN" | "CHAR_MIN" => int(i8::MIN as i64, I32),
        "SCHAR_MAX" | "CHAR_MAX" => int(i8::MAX as i64, I32),
        "UCHAR_MAX" => int(u8::MAX as i64, I32),
        "SHRT_MIN" => int(i16::MIN as i64, I32),
        "SHRT_MAX" => int(i16::MAX as i64, I32),
        "USHRT_MAX" => int(u16::MAX as i64, I32),
        "INT_MIN" => int(i32::MIN as i64, I32),
        "INT_MAX" => int(i32::MAX as i64, I32),
        "UINT_MAX" => int(u32::MAX as i64, U32),
        "LONG_MIN" | "LLONG_MIN" => int(i64::MIN, I64),
        "LONG_MAX" | "LLONG_MAX" => int(i64::MAX, I64),
        "ULONG_MAX" | "ULLONG_MAX" => int(-1, U64),
        "FLT_MAX" => float(f32::MAX as f64, F32),
        "FLT_MIN" => float(f32::MIN_POSITIVE as f64, F32),
        "FLT_EPSILON" => float(f32::EPSILON as f64, F32),
        "DBL_MAX" => float(f64::MAX, F64),
        "DBL_MIN" => float(f64::MIN_POSITIVE, F64),
        "DBL_EPSILON" => float(f64::EPSILON, F64),
        "INFINITY" | "HUGE_VALF" | "CUDART_INF_F" => float(f64::INFINITY, F32),
        "HUGE_VAL" | "CUDART_INF" => float(f64::INFINITY, F64),
        "NAN" | "CUDART_NAN_F" => float(f64::NAN, F32),
        "CUDART_NAN" => float(f64::NAN, F64),
        "M_PI" | "CUDART_PI" => float(c::PI, F64),
        "CUDART_PI_F" => float(c::PI as f32 as f64, F32),
        "M_PI_2" => float(c::FRAC_PI_2, F64),
        "M_PI_4" => float(c::FRAC_PI_4, F64),
        "M_1_PI" => float(c::FRAC_1_PI, F64),
        "M_2_PI" => float(c::FRAC_2_PI, F64),
        "M_E" => float(c::E, F64),
        "M_LN2" => float(c::LN_2, F64),
        "M_LN10" => float(c::LN_10, F64),
        "M_LOG2E" => float(c::LOG2_E, F64),
        "M_LOG10E" => float(c::LOG10_E, F64),
        "M_SQRT2" => float(c::SQRT_2, F64),
        "M_SQRT1_2" => float(c::FRAC_1_SQRT_2, F64),
        _ => None,
    }
}

/// The function called `name`, and its signature.
pub fn lookup(name: &str) -> Option<(MathFn, Signature)> {
    if let Some(&(_, f, arity, at_least)) = OVERLOADED.iter().find(|e| e.0 == name) {
        return Some((f, Signature::Overloaded { arity, at_least }));
    }
    if let Some(&(_, f, args, result)) = INTRINSICS.iter().find(|e| e.0 == name) {
        return Some((f, Signature::Fixed { args, result }));
    }
    let (base, ty) = match FLOAT_FUNCTIONS.iter().find(|e| e.0 == name) {
        Some(_) => (name, F64),
        None => (name.strip_suffix('f')?, F32),
    };
    let &(_, f, arity) = FLOAT_FUNCTIONS.iter().find(|e| e.0 == base)?;
    Some((f, Signature::Same { ty, arity }))
}

/// Whether `name` is a function of this table (no side effects).
pub fn is_math_function(name: &str) -> bool {
    lookup(name).is_some()
}

/// The result type of an overloaded call on arguments of these types.
pub fn overloaded_type(args: &[Scalar], at_least: Option<Scalar>) -> Scalar {
    let t = args.iter().copied().reduce(Scalar::common).unwrap_or(I32);
    match at_least {
        Some(min) if !t.is_float() => Scalar::common(t, min),
        _ => t.promote(),
    }
}

/// `f` on one lane's arguments (already converted to the argument types
/// of its signature; the first is of type `arg_ty`), giving a value of
/// type `ty`.
pub fn eval(f: MathFn, args: &[Value], arg_ty: Scalar, ty: Scalar) -> Value {
    let int = |i: usize| args.get(i).map_or(0, |v| v.as_i64());
    let float = |i: usize| args.get(i).map_or(0.0, |v| v.as_f64());
    if let Some(v) = integer(f, int, arg_ty.size() == 8, ty) {
        return v;
    }
    let rounded = match f {
        M::ToIntRn => Some(float(0).round_ties_even()),
        M::ToIntRz => Some(float(0).trunc()),
        M::ToIntRd => Some(float(0).floor()),
        M::ToIntRu => Some(float(0).ceil()),
        _ => None,
    };
    if let Some(r) = rounded {
        return saturate(r, ty);
    }
    let (x, y) = (float(0), float(1));
    let r = match f {
        M::Sqrt => x.sqrt(),
        M::Rsqrt => 1.0 / x.sqrt(),
        M::Cbrt => x.cbrt(),
        M::Rcbrt => 1.0 / x.cbrt(),
        M::Exp => x.exp(),
        M::Exp2 => x.exp2(),
        M::Exp10 => 10f64.powf(x),
        M::Expm1 => x.exp_m1(),
        M::Log => x.ln(),
        M::Log2 => x.log2(),
        M::Log10 => x.log10(),
        M::Log1p => x.ln_1p(),
        M::Pow => x.powf(y),
        M::Sin => x.sin(),
        M::Cos => x.cos(),
        M::Tan => x.tan(),
        M::SinPi => (std::f64::consts::PI * x).sin(),
        M::CosPi => (std::f64::consts::PI * x).cos(),
        M::Asin => x.asin(),
        M::Acos => x.acos(),
        M::Atan => x.atan(),
        M::Atan2 => x.atan2(y),
        M::Sinh => x.sinh(),
        M::Cosh => x.cosh(),
        M::Tanh => x.tanh(),
        M::Asinh => x.asinh(),
        M::Acosh => x.acosh(),
        M::Atanh => x.atanh(),
        M::Erf => erf(x),
        M::Erfc => 1.0 - erf(x),
        M::Hypot => x.hypot(y),
        M::Fmod => x % y,
        M::Copysign => x.copysign(y),
        M::Fdim => {
            if x > y {
                x - y
            } else if x.is_nan() || y.is_nan() {
                f64::NAN
            } else {
                0.0
            }
        }
        M::Abs => x.abs(),
        M::Min => x.min(y),
        M::Max => x.max(y),
        M::Floor => x.floor(),
        M::Ceil => x.ceil(),
        M::Round => x.round(),
        M::Trunc => x.trunc(),
        M::Rint => x.round_ties_even(),
        M::Fma => x.mul_add(y, float(2)),
        M::Div => x / y,
        M::Rcp => 1.0 / x,
        M::Saturate => {
            if x.is_nan() {
                0.0
            } else {
                x.clamp(0.0, 1.0)
            }
        }
        M::ToFloat => x,
        M::Bits => return bits(args.first().copied().unwrap_or(Value::I(0)), ty),
        // Integer-only functions on floats (not produced by lowering).
        _ => x,
    };
    Value::F(r).convert(ty)
}

/// A float converted to an integer type as the GPU's conversion
/// instructions do: clamped to the type's range, NaN to 0.
fn saturate(x: f64, ty: Scalar) -> Value {
    if x.is_nan() {
        return Value::I(0);
    }
    let (lo, hi) = ty.range().unwrap_or((i64::MIN as i128, i64::MAX as i128));
    let v = (x.max(lo as f64).min(hi as f64)) as i128;
    wrap(v.clamp(lo, hi) as i64, ty)
}

/// Integer results: integer intrinsics and `min`/`max`/`abs` on integers;
/// `wide_arg` when the (first) argument is 64-bit.
fn integer(f: MathFn, a: impl Fn(usize) -> i64, wide_arg: bool, ty: Scalar) -> Option<Value> {
    let wide = ty.size() == 8;
    let unsigned = !ty.is_signed();
    let (x, y) = (a(0), a(1));
    let v: i64 = match f {
        M::Abs | M::Min | M::Max | M::Mul24 if ty.is_float() => return None,
        M::Abs => x.wrapping_abs(),
        M::Min | M::Max => {
            let less = if ty == U64 {
                (y as u64) < (x as u64)
            } else {
                y < x
            };
            if less == (f == M::Min) {
                y
            } else {
                x
            }
        }
        M::Mul24 => {
            let low = |v: i64| {
                if unsigned {
                    v & 0xFF_FFFF
                } else {
                    (v << 40) >> 40
                }
            };
            low(x).wrapping_mul(low(y))
        }
        M::MulHi => match (wide, unsigned) {
            (false, false) => ((x as i32 as i64) * (y as i32 as i64)) >> 32,
            (false, true) => (((x as u32 as u64) * (y as u32 as u64)) >> 32) as i64,
            (true, false) => ((x as i128 * y as i128) >> 64) as i64,
            (true, true) => (((x as u64 as u128) * (y as u64 as u128)) >> 64) as i64,
        },
        M::Popc if wide_arg => (x as u64).count_ones() as i64,
        M::Popc => (x as u32).count_ones() as i64,
        M::Clz if wide_arg => (x as u64).leading_zeros() as i64,
        M::Clz => (x as u32).leading_zeros() as i64,
        M::Ffs if x == 0 => 0,
        M::Ffs => ((x as u64).trailing_zeros() + 1) as i64,
        M::Brev if wide => (x as u64).reverse_bits() as i64,
        M::Brev => (x as u32).reverse_bits() as i64,
        M::Sad => (x - y).abs() + a(2),
        _ => return None,
    };
    Some(wrap(v, ty))
}

/// Reinterprets the bits of `v` as type `ty` (`__float_as_int`, …).
fn bits(v: Value, ty: Scalar) -> Value {
    let raw: u64 = match v {
        Value::F(x) if ty.size() == 4 => (x as f32).to_bits() as u64,
        Value::F(x) => x.to_bits(),
        Value::I(i) => i as u64,
    };
    match ty {
        F32 => Value::F(f32::from_bits(raw as u32) as f64),
        F64 => Value::F(f64::from_bits(raw)),
        t => wrap(raw as i64, t),
    }
}

/// The error function (Abramowitz–Stegun 7.1.26 is too coarse; this is
/// the series for small |x| and a continued fraction for large |x|, good
/// to about 1e-15).
fn erf(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    let t = x.abs();
    if t < 2.5 {
        // Maclaurin series: 2/√π Σ (−1)^n x^(2n+1) / (n! (2n+1)).
        let mut sum = 0.0f64;
        let mut term = t;
        let mut n = 0.0;
        while term.abs() > 1e-17 * sum.abs().max(1e-300) && n < 200.0 {
            sum += term / (2.0 * n + 1.0);
            n += 1.0;
            term *= -t * t / n;
        }
        return (2.0 / std::f64::consts::PI.sqrt() * sum).copysign(x);
    }
    if t > 6.0 {
        return 1f64.copysign(x);
    }
    // erfc(t) by Lentz's continued fraction.
    let mut f = t;
    let mut c = t;
    let mut d = 0.0;
    for k in 1..300 {
        let a = k as f64 / 2.0;
        d = t + a * d;
        d = if d == 0.0 { 1e-300 } else { 1.0 / d };
        c = t + a / c;
        let delta = c * d;
        f *= delta;
        if (delta - 1.0).abs() < 1e-16 {
            break;
        }
    }
    let erfc = (-t * t).exp() / f / std::f64::consts::PI.sqrt();
    (1.0 - erfc).copysign(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(name: &str, args: &[Value]) -> Value {
        let (f, sig) = lookup(name).unwrap_or_else(|| panic!("{name} unknown"));
        let arg_ty = match sig {
            Signature::Fixed { args, .. } => args[0],
            _ => I32,
        };
        let ty = match sig {
            Signature::Same { ty, .. } => ty,
            Signature::Fixed { result, .. } => result,
            Signature::Half { .. } => Scalar::F16,
            Signature::Overloaded { at_least, .. } => {
                let tys: Vec<Scalar> = args
                    .iter()
                    .map(|a| if matches!(a, Value::F(_)) { F32 } else { I32 })
                    .collect();
                overloaded_type(&tys, at_least)
            }
        };
        eval(f, args, arg_ty, ty)
    }

    #[test]
    fn every_name_of_the_issue_is_known() {
        for n in [
            "sqrtf rsqrtf expf exp2f logf log2f log10f powf sinf cosf tanf asinf acosf atanf atan2f",
            "fabsf fminf fmaxf floorf ceilf roundf truncf fmaf erff sqrt exp log pow sin cos fabs",
            "__expf __logf __sinf __cosf __powf __fdividef __saturatef",
            "min max abs llabs __popc __clz __ffs __brev __mul24 __umul24 __mulhi __umulhi",
            "__float2int_rn __int_as_float __float_as_int __uint_as_float",
        ]
        .iter()
        .flat_map(|l| l.split_whitespace())
        {
            assert!(is_math_function(n), "{n}");
        }
        assert!(!is_math_function("sincosf"), "writes through pointers");
        assert!(!is_math_function("f"));
        assert!(!is_math_function("printf"));
    }

    #[test]
    fn shuffle_sources_follow_the_cuda_guide() {
        // __shfl_down_sync by 1 over a full warp: the last lane keeps its own.
        assert_eq!(shuffle_source(M::ShflDown, 0, 1, 32), 1);
        assert_eq!(shuffle_source(M::ShflDown, 31, 1, 32), 31);
        // width 16: lane 15 is the last of its segment, lane 16 starts one.
        assert_eq!(shuffle_source(M::ShflDown, 15, 1, 16), 15);
        assert_eq!(shuffle_source(M::ShflDown, 16, 4, 16), 20);
        assert_eq!(shuffle_source(M::ShflUp, 16, 1, 16), 16);
        assert_eq!(shuffle_source(M::ShflUp, 17, 1, 16), 16);
        assert_eq!(shuffle_source(M::ShflUp, 3, 8, 32), 3);
        // __shfl_sync: the source lane within the caller's segment.
        assert_eq!(shuffle_source(M::ShflIdx, 20, 0, 16), 16);
        assert_eq!(shuffle_source(M::ShflIdx, 5, 35, 32), 3);
        // xor: butterfly; a later segment gives the caller's own value.
        assert_eq!(shuffle_source(M::ShflXor, 5, 1, 32), 4);
        assert_eq!(shuffle_source(M::ShflXor, 3, 16, 16), 3);
        assert_eq!(shuffle_source(M::ShflXor, 19, 16, 16), 3);
        assert!(warp_lookup("__shfl_down_sync").is_some());
        assert!(!is_math_function("__shfl_down_sync"));
    }

    #[test]
    fn library_constants() {
        assert_eq!(
            library_constant("INT_MAX"),
            Some((Value::I(2147483647), I32))
        );
        assert_eq!(
            library_constant("UINT_MAX"),
            Some((Value::I(4294967295), U32))
        );
        assert_eq!(
            library_constant("FLT_MAX"),
            Some((Value::F(f32::MAX as f64), F32))
        );
        assert_eq!(library_constant("N"), None);
    }

    #[test]
    fn signatures() {
        assert_eq!(
            lookup("expf"),
            Some((M::Exp, Signature::Same { ty: F32, arity: 1 }))
        );
        assert_eq!(
            lookup("exp"),
            Some((M::Exp, Signature::Same { ty: F64, arity: 1 }))
        );
        assert_eq!(lookup("atan2f").map(|l| l.1.arity()), Some(2));
        assert_eq!(lookup("fmaf").map(|l| l.1.arity()), Some(3));
        assert_eq!(overloaded_type(&[I32, I32], None), I32);
        assert_eq!(overloaded_type(&[Scalar::U8, I32], None), I32);
        assert_eq!(overloaded_type(&[I32, I32], Some(U32)), U32);
        assert_eq!(overloaded_type(&[F32, I32], None), F32);
    }

    #[test]
    fn integer_intrinsics_are_exact() {
        assert_eq!(call("__popc", &[Value::I(0xF0F0)]), Value::I(8));
        assert_eq!(call("__popc", &[Value::I(0xFFFF_FFFF)]), Value::I(32));
        assert_eq!(call("__popcll", &[Value::I(-1)]), Value::I(64));
        assert_eq!(call("__clz", &[Value::I(1)]), Value::I(31));
        assert_eq!(call("__clz", &[Value::I(0)]), Value::I(32));
        assert_eq!(call("__clz", &[Value::I(-1)]), Value::I(0));
        assert_eq!(call("__ffs", &[Value::I(0)]), Value::I(0));
        assert_eq!(call("__ffs", &[Value::I(8)]), Value::I(4));
        assert_eq!(call("__brev", &[Value::I(1)]), Value::I(0x8000_0000));
        assert_eq!(
            call("__mulhi", &[Value::I(0x4000_0000), Value::I(8)]),
            Value::I(2)
        );
        assert_eq!(call("__mulhi", &[Value::I(-1), Value::I(1)]), Value::I(-1));
        assert_eq!(
            call("__umulhi", &[Value::I(0xFFFF_FFFF), Value::I(0xFFFF_FFFF)]),
            Value::I(0xFFFF_FFFE)
        );
        assert_eq!(
            call("__mul24", &[Value::I(0x0100_0003), Value::I(2)]),
            Value::I(6)
        );
        assert_eq!(
            call("__sad", &[Value::I(3), Value::I(10), Value::I(1)]),
            Value::I(8)
        );
        assert_eq!(call("min", &[Value::I(-3), Value::I(2)]), Value::I(-3));
        assert_eq!(
            call("umax", &[Value::I(0xFFFF_FFFF), Value::I(2)]),
            Value::I(0xFFFF_FFFF)
        );
        assert_eq!(call("abs", &[Value::I(-7)]), Value::I(7));
    }

    #[test]
    fn conversions_round_as_named_and_bits_are_kept() {
        assert_eq!(call("__float2int_rn", &[Value::F(2.5)]), Value::I(2));
        assert_eq!(call("__float2int_rn", &[Value::F(3.5)]), Value::I(4));
        assert_eq!(call("__float2int_rz", &[Value::F(-2.7)]), Value::I(-2));
        assert_eq!(call("__float2int_rd", &[Value::F(-2.2)]), Value::I(-3));
        assert_eq!(call("__float2int_ru", &[Value::F(2.2)]), Value::I(3));
        assert_eq!(
            call("__float2int_rn", &[Value::F(1e20)]),
            Value::I(i32::MAX as i64)
        );
        assert_eq!(call("__float2int_rn", &[Value::F(f64::NAN)]), Value::I(0));
        assert_eq!(
            call("__float_as_int", &[Value::F(1.0)]),
            Value::I(0x3F80_0000)
        );
        assert_eq!(
            call("__int_as_float", &[Value::I(0x4000_0000)]),
            Value::F(2.0)
        );
        assert_eq!(call("__saturatef", &[Value::F(1.5)]), Value::F(1.0));
        assert_eq!(call("__saturatef", &[Value::F(f64::NAN)]), Value::F(0.0));
    }

    #[test]
    fn float_functions_follow_the_host_library() {
        let close = |v: Value, want: f64| {
            let got = v.as_f64();
            assert!(
                (got - want).abs() <= 1e-6 * want.abs().max(1.0),
                "{got} vs {want}"
            );
        };
        close(call("exp2f", &[Value::F(10.0)]), 1024.0);
        close(call("log10f", &[Value::F(1000.0)]), 3.0);
        close(
            call("atan2f", &[Value::F(1.0), Value::F(1.0)]),
            std::f64::consts::FRAC_PI_4,
        );
        close(call("erff", &[Value::F(0.5)]), 0.520_499_877_813_046_5);
        close(call("erff", &[Value::F(3.0)]), 0.999_977_909_503_001_4);
        close(call("erf", &[Value::F(-1.0)]), -0.842_700_792_949_714_9);
        close(call("erfcf", &[Value::F(2.0)]), 0.004_677_734_981_047_266);
        close(call("truncf", &[Value::F(-2.7)]), -2.0);
        close(call("rintf", &[Value::F(2.5)]), 2.0);
        close(call("roundf", &[Value::F(2.5)]), 3.0);
        close(call("fdimf", &[Value::F(2.0), Value::F(5.0)]), 0.0);
        // Single-precision results are rounded to float.
        assert_eq!(
            call("sqrtf", &[Value::F(2.0)]),
            Value::F(2f32.sqrt() as f64)
        );
    }
}
