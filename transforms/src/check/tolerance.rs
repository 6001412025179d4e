//! How far a candidate that sums floating-point values in another order
//! ([`crate::Candidate::reassociates`]) may move the original's results.
//!
//! Each order of a sum of `n` terms `xᵢ` rounds with an error of at most
//! `(n−1)·ε/2·Σ|xᵢ|` (to first order, `ε` the type's machine epsilon), so
//! two orders differ by at most `(n−1)·ε·Σ|xᵢ|`; the check allows twice
//! that. It does not see the terms, so it estimates `Σ|xᵢ|` per result
//! element as the larger of
//! - the magnitude of the two results themselves (exact for terms of one
//!   sign: sums of squares, of counts), and
//! - the magnitude of the original's result on the same launch with every
//!   floating-point input replaced by its absolute value (the
//!   *magnitude run*). For a sum of products of inputs (`Σ M[i]·x[i]`, the
//!   matrix-vector product) that is `Σ|M[i]·x[i]|` exactly, so sums whose
//!   terms cancel are judged by the size of their terms, not by their
//!   small total.
//!
//! Where the magnitude run fails, or a term subtracts inputs (`a − b` on
//! absolute values is smaller than `|a − b|`), the estimate falls back to
//! the results' own magnitude, which only makes the check stricter.

use copper::ir::Scalar;
use copper::sim::{ArrayData, Inputs};

/// How the check of a reassociating candidate is described to users
/// (after "allowed by --allow-reassociation; ").
pub const CHECKED_WITHIN: &str =
    "checked within 2·(n−1)·ε·Σ|terms| per element, n the threads per block";

/// How far a sum of at most `n` floating-point terms may move when they
/// are added in another order: `2·(n−1)·ε·m`, where `ε` is the type's
/// machine epsilon and `m` the estimate of `Σ|xᵢ|` (see the module doc).
pub fn reassociation_tolerance(n: u64, epsilon: f64, magnitude: f64) -> f64 {
    2.0 * n.saturating_sub(1) as f64 * epsilon * magnitude
}

/// `inputs` with every floating-point value (array elements and scalar
/// arguments) replaced by its absolute value: the magnitude run's inputs.
pub(super) fn absolute(mut inputs: Inputs) -> Inputs {
    for data in inputs.arrays.values_mut() {
        for i in 0..data.len() {
            if data.type_at(i).is_float() {
                data.bits[i] &= !SIGN;
            }
        }
    }
    for value in inputs.scalars.values_mut() {
        if let copper::ir::Value::F(f) = value {
            *f = f.abs();
        }
    }
    inputs
}

/// The sign bit of a stored floating-point value (kept as an `f64`'s bits,
/// [`copper::ir::Value::to_bits`]).
const SIGN: u64 = 1 << 63;

/// Whether `got` matches `want` as a reassociated sum of at most `n`
/// terms per element may: floating-point elements within
/// [`reassociation_tolerance`] of the magnitude estimate (with the
/// magnitude run's results `magnitude`, when there are), everything else
/// bit for bit.
pub(super) fn within_tolerance(
    got: &ArrayData,
    want: &ArrayData,
    n: u64,
    magnitude: Option<&ArrayData>,
) -> bool {
    let magnitude = magnitude.filter(|m| m.types == want.types && m.len() == want.len());
    got.types == want.types
        && got.len() == want.len()
        && (0..want.len()).all(|i| {
            let (g, w) = (got.get(i), want.get(i));
            let epsilon = match want.type_at(i) {
                Scalar::F32 => f64::from(f32::EPSILON),
                Scalar::F64 => f64::EPSILON,
                Scalar::F16 => 2f64.powi(-10),
                Scalar::BF16 => 2f64.powi(-7),
                _ => return g.to_bits() == w.to_bits(),
            };
            let (g, w) = (g.as_f64(), w.as_f64());
            let terms = magnitude.map_or(0.0, |m| m.get(i).as_f64().abs());
            // A magnitude run that overflowed or produced a NaN says
            // nothing: only finite estimates count.
            let terms = if terms.is_finite() { terms } else { 0.0 };
            g.to_bits() == w.to_bits()
                || (g - w).abs()
                    <= reassociation_tolerance(n, epsilon, g.abs().max(w.abs()).max(terms))
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use copper::ir::Value;

    fn floats(v: &[f64]) -> ArrayData {
        ArrayData::from_values(Scalar::F32, v.iter().map(|&x| Value::F(x)))
    }

    /// A reassociated sum may move by its tolerance in floating point, no
    /// more, and not at all in integers.
    #[test]
    fn reassociated_floats_match_within_the_tolerance_only() {
        let want = floats(&[1000.0, -3.0]);
        // 2·255·2⁻²³·1000 ≈ 0.061 for 256 terms.
        let tol = reassociation_tolerance(256, f64::from(f32::EPSILON), 1000.0);
        assert!((tol - 0.0608).abs() < 1e-3, "{tol}");
        let close = floats(&[1000.0 + 0.0625 / 2.0, -3.0]);
        assert!(within_tolerance(&close, &want, 256, None));
        assert!(!within_tolerance(
            &floats(&[1000.125, -3.0]),
            &want,
            256,
            None
        ));
        // One term per sum: nothing to reorder, so nothing may move.
        assert!(!within_tolerance(&close, &want, 1, None));
        let ints = |v: &[i64]| ArrayData::from_values(Scalar::I32, v.iter().map(|&x| Value::I(x)));
        assert!(!within_tolerance(&ints(&[1001]), &ints(&[1000]), 256, None));
        assert!(within_tolerance(&ints(&[1000]), &ints(&[1000]), 256, None));
    }

    /// A sum whose terms cancel to nearly 0 is judged by its terms' size
    /// when the magnitude run gives it, and by its own size otherwise.
    #[test]
    fn cancelling_sums_are_judged_by_the_magnitude_of_their_terms() {
        let want = floats(&[0.5]);
        let got = floats(&[0.5 + 0.01]);
        // 0.01 is past 2·255·ε·0.5 ≈ 3·10⁻⁵ …
        assert!(!within_tolerance(&got, &want, 256, None));
        // … and within 2·255·ε·1000 ≈ 0.061 when the terms' magnitudes sum
        // to 1000.
        let terms = floats(&[-1000.0]);
        assert!(within_tolerance(&got, &want, 256, Some(&terms)));
        // Far off is still far off.
        assert!(!within_tolerance(&floats(&[1.5]), &want, 256, Some(&terms)));
        // A magnitude run of another shape, or a non-finite one, is ignored.
        assert!(!within_tolerance(
            &got,
            &want,
            256,
            Some(&floats(&[1000.0, 1.0]))
        ));
        assert!(!within_tolerance(
            &got,
            &want,
            256,
            Some(&floats(&[f64::INFINITY]))
        ));
    }

    /// The magnitude run's inputs: floats lose their sign, integers keep it.
    #[test]
    fn absolute_inputs_clear_the_sign_of_floats_only() {
        let mut inputs = Inputs {
            shape: copper::launch::Shape::checked([1, 1, 1], [1, 1, 1]).unwrap(),
            scalars: [
                ("alpha".to_string(), Value::F(-2.5)),
                ("n".to_string(), Value::I(-3)),
            ]
            .into_iter()
            .collect(),
            arrays: [
                ("x".to_string(), floats(&[-1.0, 2.0, -0.0])),
                (
                    "k".to_string(),
                    ArrayData::from_values(Scalar::I32, [Value::I(-7)]),
                ),
            ]
            .into_iter()
            .collect(),
            shared_bytes: 0,
        };
        inputs = absolute(inputs);
        assert_eq!(inputs.scalars["alpha"], Value::F(2.5));
        assert_eq!(inputs.scalars["n"], Value::I(-3));
        let x: Vec<f64> = inputs.arrays["x"].values().map(|v| v.as_f64()).collect();
        assert_eq!(x, vec![1.0, 2.0, 0.0]);
        assert!(!inputs.arrays["x"].get(2).as_f64().is_sign_negative());
        assert_eq!(inputs.arrays["k"].get(0), Value::I(-7));
    }
}
