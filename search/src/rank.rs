//! Comparing bounds (COpPER §4.2): is a candidate's bound better than the
//! incumbent's?
//!
//! The heuristic: a lower degree wins; at equal degree, the sums of the
//! coefficients of each degree, from the top down, decide — the first
//! degree where they differ by more than a relative `epsilon` (default
//! 2%: differences smaller than that are within what the cost model can
//! tell). Bounds equal at every degree are not comparable, and the
//! incumbent stays. Alternatively, the bounds' values at given sizes
//! (`--at h=4096,w=1024`), again lower by more than `epsilon`.

use std::collections::BTreeMap;

use copper::bound::expr::number;
use copper::bound::Outcome;
use copper::poly::{Monomial, Poly};

/// The default relative tolerance.
pub const DEFAULT_EPSILON: f64 = 0.02;

/// How bounds are compared.
#[derive(Clone, Debug, PartialEq)]
pub enum Ranking {
    /// Degree, then coefficient sums degree by degree.
    Heuristic {
        /// Relative tolerance.
        epsilon: f64,
    },
    /// The value at given sizes (every variable of the bounds named).
    At {
        /// Values of the bounds' variables.
        values: BTreeMap<String, f64>,
        /// Relative tolerance.
        epsilon: f64,
    },
}

impl Default for Ranking {
    fn default() -> Ranking {
        Ranking::Heuristic {
            epsilon: DEFAULT_EPSILON,
        }
    }
}

/// The verdict on a candidate's bound against the incumbent's, with the
/// reason in words ("the M·N term: 46 → 23").
#[derive(Clone, Debug, PartialEq)]
pub enum Comparison {
    /// The candidate is better.
    Better(String),
    /// It is not (worse, equal within epsilon, or no bound).
    NotBetter(String),
}

impl Comparison {
    /// Whether the candidate wins.
    pub fn is_better(&self) -> bool {
        matches!(self, Comparison::Better(_))
    }

    /// The reason.
    pub fn reason(&self) -> &str {
        match self {
            Comparison::Better(r) | Comparison::NotBetter(r) => r,
        }
    }
}

impl Ranking {
    /// The relative tolerance of either ranking.
    pub fn epsilon(&self) -> f64 {
        match self {
            Ranking::Heuristic { epsilon } | Ranking::At { epsilon, .. } => *epsilon,
        }
    }
}

/// Compares a candidate's bound `new` with the incumbent's `old`.
pub fn compare(ranking: &Ranking, new: &Outcome, old: &Outcome) -> Comparison {
    let (new, old) = match (new, old) {
        (Outcome::NoBound(why, _), _) => {
            return Comparison::NotBetter(format!("it has no bound ({why})"))
        }
        (Outcome::Bound(n), Outcome::NoBound(..)) => {
            return Comparison::Better(format!("it has a bound ({n}); the original has none"))
        }
        (Outcome::Bound(n), Outcome::Bound(o)) => match (n.to_poly(), o.to_poly()) {
            (Some(n), Some(o)) => (n, o),
            _ => {
                return Comparison::NotBetter(
                    "the bounds overflow 128-bit rational arithmetic".into(),
                )
            }
        },
    };
    match ranking {
        Ranking::Heuristic { epsilon } => heuristic(&new, &old, *epsilon),
        Ranking::At { values, epsilon } => at(&new, &old, values, *epsilon),
    }
}

/// Whether the candidate's bound `new` exceeds the incumbent's `old` by a
/// constant at most: no higher degree, and at each degree above 0 the sum
/// of its coefficients no larger (within `epsilon`, relative).
pub fn at_most_a_constant_more(new: &Outcome, old: &Outcome, epsilon: f64) -> bool {
    let (Outcome::Bound(n), Outcome::Bound(o)) = (new, old) else {
        return false;
    };
    let (Some(n), Some(o)) = (n.to_poly(), o.to_poly()) else {
        return false;
    };
    n.degree() <= o.degree()
        && (1..=n.degree()).all(|d| {
            let (a, b) = (
                n.degree_coefficient_sum(d).to_f64(),
                o.degree_coefficient_sum(d).to_f64(),
            );
            a <= b + epsilon * a.abs().max(b.abs())
        })
}

fn heuristic(new: &Poly, old: &Poly, epsilon: f64) -> Comparison {
    let (dn, d_old) = (new.degree(), old.degree());
    if dn != d_old {
        let text = format!("degree {d_old} → {dn}");
        return if dn < d_old {
            Comparison::Better(text)
        } else {
            Comparison::NotBetter(format!("its bound grows faster ({text})"))
        };
    }
    for d in (0..=dn).rev() {
        let (a, b) = (
            new.degree_coefficient_sum(d).to_f64(),
            old.degree_coefficient_sum(d).to_f64(),
        );
        if (a - b).abs() <= epsilon * a.abs().max(b.abs()) {
            continue;
        }
        let terms = changed_terms(new, old, d);
        return if a < b {
            Comparison::Better(terms)
        } else {
            Comparison::NotBetter(format!("its bound is higher: {terms}"))
        };
    }
    Comparison::NotBetter(format!(
        "its bound is the same within {}%",
        fmt_num(epsilon * 100.0)
    ))
}

fn at(new: &Poly, old: &Poly, values: &BTreeMap<String, f64>, epsilon: f64) -> Comparison {
    let shown: Vec<String> = values.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let (Some(a), Some(b)) = (new.eval_f64(values), old.eval_f64(values)) else {
        let mut missing: Vec<String> = new
            .variables()
            .union(&old.variables())
            .filter(|v| !values.contains_key(*v))
            .cloned()
            .collect();
        missing.sort();
        return Comparison::NotBetter(format!(
            "--at does not give {} (the bounds depend on it)",
            missing.join(", ")
        ));
    };
    let text = format!("at {}: {} → {}", shown.join(", "), fmt_num(b), fmt_num(a));
    if a < b && (b - a) > epsilon * b.abs() {
        Comparison::Better(text)
    } else {
        Comparison::NotBetter(format!(
            "not lower by more than {}% {text}",
            fmt_num(epsilon * 100.0)
        ))
    }
}

/// The terms of degree `d` whose coefficients changed: "the M·N term:
/// 46 → 23", or "the constant: 75 → 71".
fn changed_terms(new: &Poly, old: &Poly, d: u32) -> String {
    let mut monos: Vec<Monomial> = new
        .terms()
        .chain(old.terms())
        .filter(|(m, _)| m.degree() == d)
        .map(|(m, _)| m.clone())
        .collect();
    monos.sort();
    monos.dedup();
    let parts: Vec<String> = monos
        .iter()
        .filter(|m| new.coefficient(m) != old.coefficient(m))
        .map(|m| {
            let name = if m.is_one() {
                "the constant".to_string()
            } else {
                format!("the {m} term")
            };
            format!(
                "{name}: {} → {}",
                number(old.coefficient(m)),
                number(new.coefficient(m))
            )
        })
        .collect();
    parts.join(", ")
}

/// A number for people: integers as such, others to two decimals.
pub fn fmt_num(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else {
        format!("{x:.2}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use copper::bound::{BoundExpr, Term};
    use copper::poly::Rational;

    fn bound(constant: i128, terms: &[(i128, &[&str])]) -> Outcome {
        Outcome::Bound(
            BoundExpr::new(
                Rational::int(constant),
                terms
                    .iter()
                    .map(|(c, vars)| Term {
                        coef: Rational::int(*c),
                        factors: vars.iter().map(|v| Poly::var(v)).collect(),
                    })
                    .collect(),
            )
            .unwrap(),
        )
    }

    #[test]
    fn lower_degree_wins() {
        let r = Ranking::default();
        let quadratic = bound(1, &[(1, &["n", "n"])]);
        let linear = bound(1000, &[(1000, &["n"])]);
        assert!(compare(&r, &linear, &quadratic).is_better());
        assert!(!compare(&r, &quadratic, &linear).is_better());
    }

    #[test]
    fn equal_degree_compares_coefficient_sums_from_the_top() {
        let r = Ranking::default();
        // SYN-BRDIS: 75 + 46·M·N + 28·N → 71 + 23·M·N + 14·N.
        let before = bound(75, &[(46, &["M", "N"]), (28, &["N"])]);
        let after = bound(71, &[(23, &["M", "N"]), (14, &["N"])]);
        let c = compare(&r, &after, &before);
        assert_eq!(c, Comparison::Better("the M·N term: 46 → 23".into()));
        assert!(!compare(&r, &before, &after).is_better());
        // Equal top degree: the next degree down decides.
        let a = bound(0, &[(10, &["n"]), (5, &["m"])]);
        let b = bound(100, &[(15, &["n"])]);
        assert!(compare(&r, &a, &b).is_better());
    }

    #[test]
    fn differences_within_epsilon_do_not_count() {
        let r = Ranking::default();
        // 183·w → 181.5·w is under 1%: the incumbent stays.
        let before = bound(41, &[(183, &["w"])]);
        let after = Outcome::Bound(
            BoundExpr::new(
                Rational::int(62),
                vec![Term {
                    coef: Rational::new(363, 2),
                    factors: vec![Poly::var("w")],
                }],
            )
            .unwrap(),
        );
        assert!(!compare(&r, &after, &before).is_better());
        assert!(!compare(&r, &before, &before).is_better());
        let strict = Ranking::Heuristic { epsilon: 0.0 };
        assert!(compare(&strict, &after, &before).is_better());
    }

    #[test]
    fn no_bound_never_wins_and_always_loses() {
        let r = Ranking::default();
        let none = Outcome::NoBound(copper::bound::NoBound::NoCondition, None);
        let some = bound(5, &[]);
        assert!(!compare(&r, &none, &some).is_better());
        assert!(compare(&r, &some, &none).is_better());
    }

    #[test]
    fn values_at_given_sizes() {
        let values: BTreeMap<String, f64> = [("h".to_string(), 4096.0)].into();
        let r = Ranking::At {
            values,
            epsilon: 0.0,
        };
        // Lower slope, higher constant: better for large h.
        let before = bound(12, &[(88, &["h"])]);
        let after = bound(100, &[(71, &["h"])]);
        assert!(compare(&r, &after, &before).is_better());
        let missing = compare(&r, &bound(1, &[(1, &["w"])]), &before);
        assert!(missing.reason().contains("does not give w"));
    }
}
