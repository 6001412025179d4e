//! Comparing bounds at sizes: at the sizes a kernel is used at ([`InUse`],
//! from `--at` or its launch), or, for a kernel without them, by the
//! heuristic with a guard at the sizes of its test launches ([`Tested`]):
//! a bound lower only for sizes larger than any the kernel was seen at is
//! not taken.

use std::collections::{BTreeMap, BTreeSet};

use copper::bound::ghost::{derived_from, derived_value};

use copper::bound::Outcome;

use super::{fmt_num, heuristic, trend, Comparison, Pair, Ranker, Trend};

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

    /// The bounds of `pair` at the sizes (the candidate's, then the
    /// incumbent's), with the sizes they depend on in words ("m=64");
    /// `None` where the sizes do not give every variable of the bounds.
    pub(super) fn values_of(&self, pair: &Pair) -> Option<(String, f64, f64)> {
        let (a, b) = (pair.new.eval(&self.values)?, pair.old.eval(&self.values)?);
        Some((shown(&self.values, Some(&inputs(pair))), a, b))
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
/// the largest sizes its checks' launches use (each size at its largest
/// over them). The smaller test launches are sized to be quick to
/// simulate (a few elements, a partial block), not like any real use: a
/// rewrite with a start-up cost (a tile's loads, a warp's shuffles) loses
/// there however large the sizes it is meant for.
#[derive(Clone, Debug, PartialEq)]
pub struct Tested {
    /// The largest sizes (arguments, defines and launch dimensions) of
    /// the test launches.
    pub point: BTreeMap<String, f64>,
    /// Relative tolerance.
    pub epsilon: f64,
}

impl Tested {
    /// Compares the bounds of `pair` by the heuristic, then at the test
    /// launches' largest sizes.
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
                "{t} (not compared at the test launches' largest sizes: they do not give {})",
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
                "its bound is lower only for large sizes ({t}) and higher at the test launches' largest sizes, {at}; without sizes in use (--at, a launch in the host code or a parameter file) such a candidate is not taken, and --asymptotic takes it"
            ));
        }
        Comparison::Better(format!(
            "{t}, and no higher at the test launches' largest sizes, {at}"
        ))
    }
}

/// The input variables of the bounds of `pair`: their variables, with a
/// `log2(n)` read as `n` and a `⌈n/blockDim.x⌉` as `n` and `blockDim.x`.
fn inputs(pair: &Pair) -> BTreeSet<String> {
    let vars = pair.new_poly.variables();
    vars.union(&pair.old_poly.variables())
        .flat_map(|v| derived_from(v))
        .collect()
}

/// The variables of the bounds of `pair` that `values` do not give (nor
/// derive, as `log2(n)` from `n`).
fn missing(pair: &Pair, values: &BTreeMap<String, f64>) -> Vec<String> {
    let vars = pair.new_poly.variables();
    vars.union(&pair.old_poly.variables())
        .filter(|v| !values.contains_key(*v) && derived_value(v, values).is_none())
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

/// Where a candidate whose bound grows more slowly than the incumbent's
/// (by the heuristic) starts to win: the sizes the ranker compared at,
/// scaled up together until the candidate's bound is lower by more than
/// the tolerance ("n=110"). `None` when the ranker has no sizes (the
/// asymptotic ranking), the candidate does not grow more slowly, or it
/// does not win within 2²⁰ times the sizes. The launch's dimensions stay
/// as they are.
pub fn wins_from(ranker: &Ranker, new: &Outcome, old: &Outcome) -> Option<BTreeMap<String, f64>> {
    let values = match ranker {
        Ranker::At(s) => &s.values,
        Ranker::Tested(t) => &t.point,
        Ranker::Asymptotic { .. } => return None,
    };
    let eps = ranker.epsilon();
    let (Outcome::Bound(n), Outcome::Bound(o)) = (new, old) else {
        return None;
    };
    let pair = Pair::of(n, o)?;
    if !matches!(trend(&pair.new_poly, &pair.old_poly, eps), Trend::Lower(_)) {
        return None;
    }
    let inputs = inputs(&pair);
    let sizes: BTreeSet<&String> = values
        .keys()
        .filter(|k| {
            inputs.contains(*k) && !k.starts_with("gridDim.") && !k.starts_with("blockDim.")
        })
        .collect();
    let at = |factor: f64| {
        let mut v = values.clone();
        for k in &sizes {
            if let Some(x) = v.get_mut(*k) {
                *x = (*x * factor).ceil();
            }
        }
        v
    };
    let wins = |factor: f64| {
        let v = at(factor);
        matches!((pair.new.eval(&v), pair.old.eval(&v)), (Some(a), Some(b)) if a < b && b - a > eps * b.abs())
    };
    if sizes.is_empty() || wins(1.0) {
        return None;
    }
    let mut hi = (1..=20).map(|k| f64::from(1u32 << k)).find(|&f| wins(f))?;
    let mut lo = hi / 2.0;
    for _ in 0..40 {
        let mid = (lo + hi) / 2.0;
        match wins(mid) {
            true => hi = mid,
            false => lo = mid,
        }
    }
    let crossing = at(hi);
    Some(
        sizes
            .iter()
            .filter_map(|k| Some(((*k).clone(), *crossing.get(*k)?)))
            .collect(),
    )
}
