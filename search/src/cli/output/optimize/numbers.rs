//! Bounds as numbers: each bound evaluated at the sizes the kernel is
//! used at ([`Sizes`]), and the improvement as a ratio, so a batch of
//! kernels with different parameter names can be sorted by one column.

use copper::bound::Outcome;
use copper_search::pipeline::sizes::Sizes;
use copper_search::pipeline::KernelResult;

/// The value of bound `o` at `sizes`; `None` without a bound, or when a
/// variable of the bound has no value (without sizes, any variable).
pub fn value(o: &Outcome, sizes: Option<&Sizes>) -> Option<f64> {
    let none = std::collections::BTreeMap::new();
    match o {
        // A constant bound has its value without sizes.
        Outcome::Bound(e) => e
            .eval(sizes.map_or(&none, |s| &s.values))
            .filter(|v| v.is_finite()),
        Outcome::NoBound(..) => None,
    }
}

/// The ranking metric's bound before and after, as numbers at the sizes
/// in use, and before ÷ after.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Numbers {
    /// The original's bound at the sizes.
    pub before: Option<f64>,
    /// The best version's bound at the sizes.
    pub after: Option<f64>,
    /// `before / after` (1 when nothing changed).
    pub improvement: Option<f64>,
}

/// [`Numbers`] of metric `m` (an index into the bounds) of a search's
/// result.
pub fn ranked(x: &KernelResult, m: usize) -> Numbers {
    let sizes = x.sizes.as_ref();
    let before = value(&x.original.bounds[m].work, sizes);
    let after = value(&x.best.bounds[m].work, sizes);
    Numbers {
        before,
        after,
        improvement: ratio(before, after),
    }
}

/// `before / after`: 1 when both are 0, `None` when either is missing or
/// only `after` is 0.
pub fn ratio(before: Option<f64>, after: Option<f64>) -> Option<f64> {
    match (before, after) {
        (Some(b), Some(a)) if a > 0.0 => Some(b / a),
        (Some(b), Some(a)) if a == 0.0 && b == 0.0 => Some(1.0),
        _ => None,
    }
}

/// The sizes in words: `n=4096, w=16 (the launch at line 40)`.
pub fn sizes_text(s: &Sizes) -> String {
    let values: Vec<String> = s.values.iter().map(|(k, v)| format!("{k}={v}")).collect();
    format!("{} ({})", values.join(", "), s.from)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn no_sizes_no_number_and_the_text_names_the_source() {
        let s = Sizes {
            values: BTreeMap::from([("n".to_string(), 4096.0), ("w".to_string(), 16.0)]),
            from: "the launch at line 40".into(),
        };
        assert_eq!(sizes_text(&s), "n=4096, w=16 (the launch at line 40)");
        let none = Outcome::NoBound(copper::bound::NoBound::OverSteps(1), None);
        assert_eq!(value(&none, Some(&s)), None);
    }
}
