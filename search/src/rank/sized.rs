//! Comparing bounds at sizes: at the sizes a kernel is used at ([`InUse`],
//! from `--at` or its launch), or, for a kernel without them, by the
//! heuristic with a guard at the sizes of its test launches ([`Tested`]):
//! a bound lower only for sizes larger than any the kernel was seen at is
//! not taken.

use std::collections::{BTreeMap, BTreeSet};

use copper::bound::ghost::log_value;

use super::{fmt_num, heuristic, trend, Comparison, Pair, Trend};

/// Ranking at the sizes a kernel is used at.
#[derive(Clone, Debug, PartialEq)]
pub struct InUse {
    /// The value of each size (argument or define) by name.
    pub values: BTreeMap<String, f64>,
    /// Where they came from ("the launch at line 42", "--at").
    pub from: String,
    /// Whether the user gave them (`--at`): a bound over a variable they
    /// do not give then never wins. Sizes from a launch fall back to the
    /// heuristic for such a pair, and say so.
    pub given: bool,
    /// Relative tolerance.
    pub epsilon: f64,
}

impl InUse {
    /// "ranked at m=64, n=1000: the launch at line 42"; `None` when the
    /// launch gives no sizes (a kernel without scalar arguments).
    pub fn said(&self) -> Option<String> {
        (!self.values.is_empty())
            .then(|| format!("ranked at {}: {}", shown(&self.values, None), self.from))
    }

    /// Compares the bounds of `pair` at the sizes.
    pub(super) fn compare(&self, pair: &Pair) -> Comparison {
        let eps = self.epsilon;
        let inputs = inputs(pair);
        // Constant bounds: their values are their constants.
        if inputs.is_empty() {
            return heuristic(&pair.new_poly, &pair.old_poly, eps);
        }
        let (Some(a), Some(b)) = (pair.new.eval(&self.values), pair.old.eval(&self.values)) else {
            let missing = missing(pair, &self.values).join(", ");
            if self.given {
                return Comparison::NotBetter(format!(
                    "--at does not give {missing} (the bounds depend on it)"
                ));
            }
            let note = format!(
                "ranked by degree and coefficients: {} does not give {missing}",
                self.from
            );
            return match heuristic(&pair.new_poly, &pair.old_poly, eps) {
                Comparison::Better(t) => Comparison::Better(format!("{t} ({note})")),
                Comparison::NotBetter(t) => Comparison::NotBetter(format!("{t} ({note})")),
            };
        };
        let at = format!(
            "at {}: {} → {}",
            shown(&self.values, Some(&inputs)),
            fmt_num(b),
            fmt_num(a)
        );
        let trend = trend(&pair.new_poly, &pair.old_poly, eps);
        if a < b && (b - a) > eps * b.abs() {
            return Comparison::Better(match trend {
                Trend::Lower(t) => format!("{at} ({t})"),
                Trend::Higher(t) => format!("{at}, though {t}"),
                Trend::Same => at,
            });
        }
        Comparison::NotBetter(match trend {
            Trend::Lower(t) => format!(
                "not better at the sizes in use ({}): {at}; it is lower only for larger sizes ({t})",
                self.from
            ),
            _ if a - b > eps * b.abs() => {
                format!("higher at the sizes in use ({}): {at}", self.from)
            }
            Trend::Higher(_) | Trend::Same => format!(
                "not lower by more than {}% {at} ({})",
                fmt_num(eps * 100.0),
                self.from
            ),
        })
    }
}

/// Ranking by the heuristic, for a kernel without sizes in use, with a
/// guard: a candidate must also be no higher (within the tolerance) at
/// the sizes of the largest launch its checks run. The smaller test
/// launches are sized to be quick to simulate (a few elements, a partial
/// block), not like any real use: a rewrite with a start-up cost (a
/// tile's loads, a warp's shuffles) loses there however large the sizes
/// it is meant for.
#[derive(Clone, Debug, PartialEq)]
pub struct Tested {
    /// The sizes (arguments, defines and launch dimensions) of the
    /// largest test launch.
    pub point: BTreeMap<String, f64>,
    /// Relative tolerance.
    pub epsilon: f64,
}

impl Tested {
    /// Compares the bounds of `pair` by the heuristic, then at the largest
    /// test launch's sizes.
    pub(super) fn compare(&self, pair: &Pair) -> Comparison {
        let eps = self.epsilon;
        let t = match trend(&pair.new_poly, &pair.old_poly, eps) {
            Trend::Lower(t) => t,
            _ => return heuristic(&pair.new_poly, &pair.old_poly, eps),
        };
        let inputs = inputs(pair);
        if inputs.is_empty() {
            return Comparison::Better(t);
        }
        let p = &self.point;
        let (Some(a), Some(b)) = (pair.new.eval(p), pair.old.eval(p)) else {
            return Comparison::Better(format!(
                "{t} (not compared at the largest test launch's sizes: it does not give {})",
                missing(pair, p).join(", ")
            ));
        };
        let at = format!(
            "{}: {} → {}",
            shown(p, Some(&inputs)),
            fmt_num(b),
            fmt_num(a)
        );
        if a > b + eps * b.abs() {
            return Comparison::NotBetter(format!(
                "its bound is lower only for large sizes ({t}) and higher at the largest test launch's {at}; without sizes in use (--at, a launch in the host code or a parameter file) such a candidate is not taken, and --asymptotic takes it"
            ));
        }
        Comparison::Better(format!(
            "{t}, and no higher at the largest test launch's {at}"
        ))
    }
}

/// The input variables of the bounds of `pair`: their variables, with a
/// `log2(n)` read as `n`.
fn inputs(pair: &Pair) -> BTreeSet<String> {
    let vars = pair.new_poly.variables();
    vars.union(&pair.old_poly.variables())
        .map(|v| {
            v.strip_prefix("log2(")
                .and_then(|r| r.strip_suffix(')'))
                .unwrap_or(v)
                .to_string()
        })
        .collect()
}

/// The variables of the bounds of `pair` that `values` do not give (nor
/// derive, as `log2(n)` from `n`).
fn missing(pair: &Pair, values: &BTreeMap<String, f64>) -> Vec<String> {
    let vars = pair.new_poly.variables();
    vars.union(&pair.old_poly.variables())
        .filter(|v| !values.contains_key(*v) && log_value(v, values).is_none())
        .cloned()
        .collect()
}

/// `values` in words ("m=64, n=1000"), only the variables of `only`
/// when given.
fn shown(values: &BTreeMap<String, f64>, only: Option<&BTreeSet<String>>) -> String {
    let parts: Vec<String> = values
        .iter()
        .filter(|(k, _)| only.is_none_or(|o| o.contains(*k)))
        .map(|(k, v)| format!("{k}={}", fmt_num(*v)))
        .collect();
    parts.join(", ")
}
