//! C scalar types and values with CUDA's arithmetic: 32-bit `int` wrap-around,
//! integer division and `%` toward zero, `float` rounded to IEEE single.

use super::Unary;
use crate::cuda::ast::BinOp;

/// A C scalar type.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Scalar {
    /// `bool`
    Bool,
    /// `char`, `signed char`
    I8,
    /// `unsigned char`
    U8,
    /// `short`
    I16,
    /// `unsigned short`
    U16,
    /// `int`
    I32,
    /// `unsigned int`
    U32,
    /// `long`, `long long`
    I64,
    /// `unsigned long`, `size_t`
    U64,
    /// `float`
    F32,
    /// `double`
    F64,
    /// `__half` (IEEE binary16, `cuda_fp16.h`)
    F16,
    /// `__nv_bfloat16` (bfloat16, `cuda_bf16.h`)
    BF16,
}

impl Scalar {
    /// Size in bytes.
    pub fn size(self) -> u32 {
        match self {
            Scalar::Bool | Scalar::I8 | Scalar::U8 => 1,
            Scalar::I16 | Scalar::U16 | Scalar::F16 | Scalar::BF16 => 2,
            Scalar::I32 | Scalar::U32 | Scalar::F32 => 4,
            Scalar::I64 | Scalar::U64 | Scalar::F64 => 8,
        }
    }

    /// Whether this is a floating-point type (`float`, `double`, or one of
    /// the 16-bit `__half` and `__nv_bfloat16`).
    pub fn is_float(self) -> bool {
        matches!(self, Scalar::F32 | Scalar::F64 | Scalar::F16 | Scalar::BF16)
    }

    /// Whether this is one of the 16-bit floats (`__half`, `__nv_bfloat16`).
    pub fn is_half(self) -> bool {
        matches!(self, Scalar::F16 | Scalar::BF16)
    }

    /// The values an integer type holds, `None` for floating point.
    pub fn range(self) -> Option<(i128, i128)> {
        Some(match self {
            Scalar::Bool => (0, 1),
            Scalar::I8 => (i8::MIN as i128, i8::MAX as i128),
            Scalar::U8 => (0, u8::MAX as i128),
            Scalar::I16 => (i16::MIN as i128, i16::MAX as i128),
            Scalar::U16 => (0, u16::MAX as i128),
            Scalar::I32 => (i32::MIN as i128, i32::MAX as i128),
            Scalar::U32 => (0, u32::MAX as i128),
            Scalar::I64 => (i64::MIN as i128, i64::MAX as i128),
            Scalar::U64 => (0, u64::MAX as i128),
            Scalar::F32 | Scalar::F64 | Scalar::F16 | Scalar::BF16 => return None,
        })
    }

    /// Whether every value of this integer type is one of integer type
    /// `to` (a conversion to `to` keeps it).
    pub fn widens_to(self, to: Scalar) -> bool {
        match (self.range(), to.range()) {
            (Some((lo, hi)), Some((to_lo, to_hi))) => lo >= to_lo && hi <= to_hi,
            _ => false,
        }
    }

    /// Whether this is a signed integer type.
    pub fn is_signed(self) -> bool {
        matches!(self, Scalar::I8 | Scalar::I16 | Scalar::I32 | Scalar::I64)
    }

    /// Integer promotion: types narrower than `int` become `int`.
    pub fn promote(self) -> Scalar {
        match self {
            Scalar::Bool | Scalar::I8 | Scalar::U8 | Scalar::I16 | Scalar::U16 => Scalar::I32,
            t => t,
        }
    }

    /// The usual arithmetic conversions: the type both operands of a binary
    /// operator are converted to. Two `__half`s (or two `__nv_bfloat16`s)
    /// stay one, as `cuda_fp16.hpp`'s operators compute in half precision;
    /// a 16-bit float with any other type goes through its conversion to
    /// `float` (nvcc finds most such mixes ambiguous; `float` is what a
    /// cast of the half operand gives).
    pub fn common(a: Scalar, b: Scalar) -> Scalar {
        let (a, b) = (a.promote(), b.promote());
        if a == Scalar::F64 || b == Scalar::F64 {
            return Scalar::F64;
        }
        if a.is_half() && a == b {
            return a;
        }
        if a == Scalar::F32 || b == Scalar::F32 || a.is_half() || b.is_half() {
            return Scalar::F32;
        }
        let rank = |t: Scalar| match t {
            Scalar::I64 | Scalar::U64 => 2,
            _ => 1,
        };
        match rank(a).cmp(&rank(b)) {
            std::cmp::Ordering::Greater => {
                if b == Scalar::U32 && a == Scalar::I64 {
                    Scalar::I64
                } else {
                    a
                }
            }
            std::cmp::Ordering::Less => {
                if a == Scalar::U32 && b == Scalar::I64 {
                    Scalar::I64
                } else {
                    b
                }
            }
            std::cmp::Ordering::Equal => {
                if a.is_signed() && b.is_signed() {
                    a
                } else if rank(a) == 2 {
                    Scalar::U64
                } else {
                    Scalar::U32
                }
            }
        }
    }

    /// The C spelling.
    pub fn c_name(self) -> &'static str {
        match self {
            Scalar::Bool => "bool",
            Scalar::I8 => "char",
            Scalar::U8 => "unsigned char",
            Scalar::I16 => "short",
            Scalar::U16 => "unsigned short",
            Scalar::I32 => "int",
            Scalar::U32 => "unsigned int",
            Scalar::I64 => "long",
            Scalar::U64 => "unsigned long",
            Scalar::F32 => "float",
            Scalar::F64 => "double",
            Scalar::F16 => "__half",
            Scalar::BF16 => "__nv_bfloat16",
        }
    }
}

/// A scalar value. Integers are kept normalized to their type (an
/// `unsigned int` is in `0..2^32`; an `unsigned long` is stored as its bit
/// pattern); floats of type `float` are always exactly representable in
/// single precision.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    /// Any integer type (and `bool` as 0/1).
    I(i64),
    /// `float` or `double`.
    F(f64),
}

/// An arithmetic error with no defined result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArithError {
    /// Integer division or remainder by zero.
    DivByZero,
    /// A signed `+`, `−`, `*`, `/` or negation whose result does not fit
    /// its type (undefined behaviour in C).
    SignedOverflow,
    /// A shift `x << s` or `x >> s` by a count `s` that is negative or not
    /// below the width of `x`'s promoted type (undefined behaviour in C:
    /// `1u << 63` has no defined value).
    ShiftCount,
}

impl Value {
    /// Zero of any type.
    pub const ZERO: Value = Value::I(0);

    /// The value converted to `to` as C converts it (integers wrap; floats
    /// truncate toward zero, saturating where C leaves it undefined).
    pub fn convert(self, to: Scalar) -> Value {
        match (self, to) {
            (Value::I(v), Scalar::F32) => Value::F(v as f32 as f64),
            (Value::I(v), Scalar::F64) => Value::F(v as f64),
            (Value::I(v), Scalar::F16 | Scalar::BF16) => Value::F(v as f64).convert(to),
            (Value::F(f), Scalar::F32) => Value::F(f as f32 as f64),
            (Value::F(f), Scalar::F64) => Value::F(f),
            (Value::F(f), Scalar::F16) => Value::F(super::float16::binary16(f)),
            (Value::F(f), Scalar::BF16) => Value::F(super::float16::bfloat16(f)),
            (Value::F(f), Scalar::Bool) => Value::I((f != 0.0) as i64),
            (Value::F(f), Scalar::U64) => Value::I(f as u64 as i64),
            (Value::F(f), t) => wrap(f as i64, t),
            (Value::I(v), Scalar::Bool) => Value::I((v != 0) as i64),
            (Value::I(v), t) => wrap(v, t),
        }
    }

    /// Reinterprets an integer of type `from` (as stored) as its
    /// mathematical value for `to`'s conversion (an `unsigned long` above
    /// `i64::MAX` becomes a large float, not a negative one).
    pub fn convert_from(self, from: Scalar, to: Scalar) -> Value {
        match (self, from) {
            (Value::I(v), Scalar::U64) if to.is_float() => {
                let f = v as u64 as f64;
                Value::F(f).convert(to)
            }
            _ => self.convert(to),
        }
    }

    /// C truth value.
    pub fn truthy(self) -> bool {
        match self {
            Value::I(v) => v != 0,
            Value::F(f) => f != 0.0,
        }
    }

    /// As an integer (floats truncate).
    pub fn as_i64(self) -> i64 {
        match self {
            Value::I(v) => v,
            Value::F(f) => f as i64,
        }
    }

    /// As a float.
    pub fn as_f64(self) -> f64 {
        match self {
            Value::I(v) => v as f64,
            Value::F(f) => f,
        }
    }

    /// Bit pattern for storage.
    pub fn to_bits(self) -> u64 {
        match self {
            Value::I(v) => v as u64,
            Value::F(f) => f.to_bits(),
        }
    }

    /// Value of a stored bit pattern of type `ty`.
    pub fn from_bits(bits: u64, ty: Scalar) -> Value {
        if ty.is_float() {
            Value::F(f64::from_bits(bits))
        } else {
            Value::I(bits as i64)
        }
    }
}

/// Normalizes an integer to type `t` (wrap-around).
pub fn wrap(v: i64, t: Scalar) -> Value {
    Value::I(match t {
        Scalar::Bool => (v != 0) as i64,
        Scalar::I8 => v as i8 as i64,
        Scalar::U8 => v as u8 as i64,
        Scalar::I16 => v as i16 as i64,
        Scalar::U16 => v as u16 as i64,
        Scalar::I32 => v as i32 as i64,
        Scalar::U32 => v as u32 as i64,
        Scalar::I64 | Scalar::U64 => v,
        Scalar::F32 | Scalar::F64 | Scalar::F16 | Scalar::BF16 => {
            return Value::F(v as f64).convert(t)
        }
    })
}

/// Applies `op` to `a` for a result of type `ty`, as C does. Negating a
/// signed value whose negation the type cannot hold (`-INT_MIN`) is an
/// error, as it is undefined behaviour; unsigned negation wraps.
pub fn unary(op: Unary, a: Value, ty: Scalar) -> Result<Value, ArithError> {
    Ok(match (op, a) {
        (Unary::Neg, Value::F(f)) => Value::F(-f),
        (Unary::Neg, Value::I(i)) => {
            let r = i.wrapping_neg();
            if ty.is_signed() && (i.checked_neg().is_none() || wrap(r, ty) != Value::I(r)) {
                return Err(ArithError::SignedOverflow);
            }
            wrap(r, ty)
        }
        (Unary::Not, a) => Value::I(!a.truthy() as i64),
        (Unary::BitNot, a) => wrap(!a.as_i64(), ty),
    })
}

/// Applies `op` to operands already converted to `ty` (for shifts: `ty` is
/// the promoted left type). Comparisons give an `int` 0/1. Unsigned
/// arithmetic wraps; signed arithmetic that overflows (`+`, `-`, `*`, `/`,
/// and `x << s` whose value `x·2^s` the type cannot hold) is an error, as
/// it is undefined behaviour in C; so is a shift by a negative count or
/// one not below the type's width.
pub fn binary(op: BinOp, a: Value, b: Value, ty: Scalar) -> Result<Value, ArithError> {
    if ty.is_float() {
        let (x, y) = (a.as_f64(), b.as_f64());
        let r = match op {
            BinOp::Add => x + y,
            BinOp::Sub => x - y,
            BinOp::Mul => x * y,
            BinOp::Div => x / y,
            BinOp::Rem => x % y,
            BinOp::Lt => return Ok(Value::I((x < y) as i64)),
            BinOp::Gt => return Ok(Value::I((x > y) as i64)),
            BinOp::Le => return Ok(Value::I((x <= y) as i64)),
            BinOp::Ge => return Ok(Value::I((x >= y) as i64)),
            BinOp::Eq => return Ok(Value::I((x == y) as i64)),
            BinOp::Ne => return Ok(Value::I((x != y) as i64)),
            BinOp::And => return Ok(Value::I((x != 0.0 && y != 0.0) as i64)),
            BinOp::Or => return Ok(Value::I((x != 0.0 || y != 0.0) as i64)),
            // Bitwise operators on floats are rejected by lowering.
            _ => x,
        };
        return Ok(Value::F(r).convert(ty));
    }
    let (x, y) = (a.as_i64(), b.as_i64());
    let unsigned = !ty.is_signed() && ty != Scalar::Bool;
    let cmp = |o: std::cmp::Ordering| -> Value {
        Value::I(match op {
            BinOp::Lt => o.is_lt(),
            BinOp::Gt => o.is_gt(),
            BinOp::Le => o.is_le(),
            BinOp::Ge => o.is_ge(),
            BinOp::Eq => o.is_eq(),
            _ => o.is_ne(),
        } as i64)
    };
    let bits = ty.size() * 8;
    if ty.is_signed() && matches!(op, BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div) {
        let r = match op {
            BinOp::Add => x.checked_add(y),
            BinOp::Sub => x.checked_sub(y),
            BinOp::Mul => x.checked_mul(y),
            _ if y == 0 => return Err(ArithError::DivByZero),
            _ => x.checked_div(y),
        };
        return match r {
            Some(r) if wrap(r, ty) == Value::I(r) => Ok(Value::I(r)),
            _ => Err(ArithError::SignedOverflow),
        };
    }
    let r = match op {
        BinOp::Add => x.wrapping_add(y),
        BinOp::Sub => x.wrapping_sub(y),
        BinOp::Mul => x.wrapping_mul(y),
        BinOp::Div | BinOp::Rem => {
            if y == 0 {
                return Err(ArithError::DivByZero);
            }
            match (unsigned && ty == Scalar::U64, op) {
                (true, BinOp::Div) => ((x as u64) / (y as u64)) as i64,
                (true, _) => ((x as u64) % (y as u64)) as i64,
                (false, BinOp::Div) => x.wrapping_div(y),
                (false, _) => x.wrapping_rem(y),
            }
        }
        BinOp::Shl | BinOp::Shr if (y as u64) >= bits as u64 => {
            return Err(ArithError::ShiftCount);
        }
        BinOp::Shl => {
            let s = y as u64;
            if ty.is_signed()
                && ty
                    .range()
                    .is_some_and(|(lo, hi)| !(lo..=hi).contains(&(i128::from(x) << s)))
            {
                return Err(ArithError::SignedOverflow);
            } else {
                x.wrapping_shl(s as u32)
            }
        }
        BinOp::Shr => {
            // The count is below the width (checked above), so below 64.
            let s = y as u32;
            match unsigned && ty == Scalar::U64 {
                true => ((x as u64) >> s) as i64,
                false => x >> s,
            }
        }
        BinOp::BitAnd => x & y,
        BinOp::BitOr => x | y,
        BinOp::BitXor => x ^ y,
        BinOp::And => return Ok(Value::I((x != 0 && y != 0) as i64)),
        BinOp::Or => return Ok(Value::I((x != 0 || y != 0) as i64)),
        BinOp::Lt | BinOp::Gt | BinOp::Le | BinOp::Ge | BinOp::Eq | BinOp::Ne => {
            let o = if ty == Scalar::U64 {
                (x as u64).cmp(&(y as u64))
            } else {
                x.cmp(&y)
            };
            return Ok(cmp(o));
        }
    };
    Ok(wrap(r, ty))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usual_arithmetic_conversions() {
        use Scalar::*;
        assert_eq!(Scalar::common(I32, U32), U32);
        assert_eq!(Scalar::common(U8, I16), I32);
        assert_eq!(Scalar::common(I64, U32), I64);
        assert_eq!(Scalar::common(U64, I32), U64);
        assert_eq!(Scalar::common(F32, I64), F32);
        assert_eq!(Scalar::common(F32, F64), F64);
    }

    #[test]
    fn int_semantics_are_cs() {
        let i = |v| Value::I(v);
        // Signed overflow is undefined behaviour: an error, not a wrap.
        assert_eq!(
            binary(BinOp::Add, i(i32::MAX as i64), i(1), Scalar::I32),
            Err(ArithError::SignedOverflow)
        );
        assert_eq!(
            binary(BinOp::Mul, i(1 << 40), i(1 << 30), Scalar::I64),
            Err(ArithError::SignedOverflow)
        );
        assert_eq!(
            binary(BinOp::Div, i(i32::MIN as i64), i(-1), Scalar::I32),
            Err(ArithError::SignedOverflow)
        );
        assert_eq!(
            binary(BinOp::Add, i(u32::MAX as i64), i(1), Scalar::U32),
            Ok(i(0))
        );
        assert_eq!(binary(BinOp::Div, i(-7), i(2), Scalar::I32), Ok(i(-3)));
        // So is a signed left shift past the type's range.
        assert_eq!(
            binary(BinOp::Shl, i(1 << 30), i(1), Scalar::I32),
            Err(ArithError::SignedOverflow)
        );
        assert_eq!(
            binary(BinOp::Shl, i(1 << 62), i(1), Scalar::I64),
            Err(ArithError::SignedOverflow)
        );
        assert_eq!(
            binary(BinOp::Shl, i(1 << 29), i(1), Scalar::I32),
            Ok(i(1 << 30))
        );
        assert_eq!(
            binary(BinOp::Shl, i(-1), i(31), Scalar::I32),
            Ok(i(i32::MIN as i64))
        );
        assert_eq!(binary(BinOp::Shl, i(1 << 31), i(1), Scalar::U32), Ok(i(0)));
        // A shift by the type's width or more, or by a negative count, has
        // no value in C (a loop stepping by `1u << 63` must not step by 0).
        for (op, x, s, ty) in [
            (BinOp::Shl, 1, 63, Scalar::U32),
            (BinOp::Shl, 1, 32, Scalar::I32),
            (BinOp::Shl, 1, -1, Scalar::I32),
            (BinOp::Shr, -8, 32, Scalar::I32),
            (BinOp::Shr, 8, 64, Scalar::U64),
        ] {
            assert_eq!(binary(op, i(x), i(s), ty), Err(ArithError::ShiftCount));
        }
        assert_eq!(
            binary(BinOp::Shl, i(1), i(63), Scalar::U64),
            Ok(i(i64::MIN))
        );
        assert_eq!(binary(BinOp::Shr, i(-8), i(31), Scalar::I32), Ok(i(-1)));
        assert_eq!(binary(BinOp::Rem, i(-7), i(2), Scalar::I32), Ok(i(-1)));
        assert_eq!(
            binary(BinOp::Sub, i(0), i(1), Scalar::U32),
            Ok(i(u32::MAX as i64))
        );
        assert_eq!(
            binary(BinOp::Lt, i(u32::MAX as i64), i(1), Scalar::U32),
            Ok(i(0))
        );
        assert_eq!(
            binary(BinOp::Div, i(1), i(0), Scalar::I32),
            Err(ArithError::DivByZero)
        );
        assert_eq!(binary(BinOp::Shr, i(-8), i(1), Scalar::I32), Ok(i(-4)));
        assert_eq!(
            binary(BinOp::Shr, i(u32::MAX as i64), i(28), Scalar::U32),
            Ok(i(15))
        );
        assert_eq!(Value::I(300).convert(Scalar::U8), i(44));
        assert_eq!(Value::F(-2.7).convert(Scalar::I32), i(-2));
        assert_eq!(
            Value::I(-1).convert_from(Scalar::U64, Scalar::F64),
            Value::F(18446744073709551615.0)
        );
    }

    #[test]
    fn float_is_single_precision() {
        let third = binary(BinOp::Div, Value::F(1.0), Value::F(3.0), Scalar::F32).unwrap();
        assert_eq!(third, Value::F((1.0f32 / 3.0f32) as f64));
        let d = binary(BinOp::Div, Value::F(1.0), Value::F(3.0), Scalar::F64).unwrap();
        assert_eq!(d, Value::F(1.0 / 3.0));
    }
}
