//! Rounding to the 16-bit floats of `cuda_fp16.h` and `cuda_bf16.h`:
//! IEEE binary16 (`__half`) and bfloat16 (`__nv_bfloat16`).
//!
//! A 16-bit value is kept as the `f64` it equals (every binary16 and
//! bfloat16 value is exactly a `double`). Every conversion to one and
//! every arithmetic result on them is rounded to nearest, ties to even,
//! with subnormals, overflow to infinity and NaN as IEEE 754 says: the
//! GPU's `__hadd`, `__hmul`, … are correctly rounded, and an `f64` result
//! of `+ − × ÷ √` or a fused multiply-add rounded once more to 16 bits
//! gives the same value (`f64` has more than twice the bits plus two).

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

/// `x` rounded to IEEE binary16 (`__half`): 11 significant bits,
/// normal exponents −14 … 15.
pub fn binary16(x: f64) -> f64 {
    round_to(x, 10, -14, 15)
}

/// `x` rounded to bfloat16 (`__nv_bfloat16`): 8 significant bits, the
/// exponents of `float`.
pub fn bfloat16(x: f64) -> f64 {
    round_to(x, 7, -126, 127)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(x: f64) -> f64 {
        binary16(x)
    }

    fn bf(x: f64) -> f64 {
        bfloat16(x)
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
}
