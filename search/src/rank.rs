//! Comparing bounds (COpPER §4.2): is a candidate's bound better than the
//! incumbent's?
//!
//! By default ([`Ranking::InUse`]) at the sizes the kernel is used at:
//! the bounds' values at the arguments of its parameter file's or host
//! code's launch, lower by more than a relative `epsilon` (default 2%:
//! differences smaller than that are within what the cost model can
//! tell). A kernel without such sizes is ranked by the heuristic, a
//! candidate taken only when its bound is also no higher at the sizes of
//! the test launches' largest sizes ([`sized`]). The heuristic alone
//! ([`Ranking::Asymptotic`], `--asymptotic`): a lower degree wins; at
//! equal degree, the sums of the coefficients of each degree, from the top
//! down, decide — the first degree where they differ by more than
//! `epsilon`. Bounds equal at every degree are not comparable, and the
//! incumbent stays. `--at h=4096,w=1024` ([`Ranking::At`]) ranks at the
//! sizes given. A version that runs more (or fewer) warps than the one it
//! is compared with, its launch edited, is compared by total work
//! ([`total`]).

use std::collections::BTreeMap;

use copper::bound::expr::number;
use copper::bound::{BoundExpr, Outcome};
use copper::poly::{Monomial, Poly};

pub mod sized;
pub mod total;

/// The default relative tolerance.
pub const DEFAULT_EPSILON: f64 = 0.02;

/// How bounds are compared: the user's choice, resolved for each kernel
/// into a [`Ranker`].
#[derive(Clone, Debug, PartialEq)]
pub enum Ranking {
    /// At the sizes the kernel is used at (its launch's arguments), where
    /// known; else by degree and coefficients, a candidate taken only when
    /// no higher at the sizes of its test launches.
    InUse {
        /// Relative tolerance.
        epsilon: f64,
    },
    /// Degree, then coefficient sums degree by degree, whatever the sizes
    /// (`--asymptotic`).
    Asymptotic {
        /// Relative tolerance.
        epsilon: f64,
    },
    /// The value at given sizes (`--at`; every variable of the bounds
    /// named).
    At {
        /// Values of the bounds' variables.
        values: BTreeMap<String, f64>,
        /// Relative tolerance.
        epsilon: f64,
    },
}

impl Default for Ranking {
    fn default() -> Ranking {
        Ranking::InUse {
            epsilon: DEFAULT_EPSILON,
        }
    }
}

impl Ranking {
    /// The relative tolerance of the ranking.
    pub fn epsilon(&self) -> f64 {
        match self {
            Ranking::InUse { epsilon }
            | Ranking::Asymptotic { epsilon }
            | Ranking::At { epsilon, .. } => *epsilon,
        }
    }
}

/// How one kernel's candidates are compared: its [`Ranking`] with the
/// sizes the kernel is used at, or those of its test launches.
#[derive(Clone, Debug, PartialEq)]
pub enum Ranker {
    /// Degree, then coefficient sums degree by degree.
    Asymptotic {
        /// Relative tolerance.
        epsilon: f64,
    },
    /// The bounds' values at the sizes in use.
    At(sized::InUse),
    /// The heuristic, and no higher at the sizes of the test launches.
    Tested(sized::Tested),
}

impl Ranker {
    /// The relative tolerance.
    pub fn epsilon(&self) -> f64 {
        match self {
            Ranker::Asymptotic { epsilon } => *epsilon,
            Ranker::At(s) => s.epsilon,
            Ranker::Tested(t) => t.epsilon,
        }
    }

    /// The sizes the ranking is at, in words, for the report ("ranked at
    /// m=64, n=1000: the launch at line 42"); `None` for a ranking by
    /// degree and coefficients, or a launch without sizes.
    pub fn said(&self) -> Option<String> {
        match self {
            Ranker::At(s) => s.said(),
            Ranker::Asymptotic { .. } | Ranker::Tested(_) => None,
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

/// Two bounds, each as written and as a polynomial.
struct Pair<'a> {
    /// The candidate's bound.
    new: &'a BoundExpr,
    /// The incumbent's.
    old: &'a BoundExpr,
    /// The candidate's, as a polynomial.
    new_poly: Poly,
    /// The incumbent's, as a polynomial.
    old_poly: Poly,
}

impl<'a> Pair<'a> {
    /// The bounds `new` and `old` with their polynomials; `None` when one
    /// overflows 128-bit rational arithmetic.
    fn of(new: &'a BoundExpr, old: &'a BoundExpr) -> Option<Pair<'a>> {
        Some(Pair {
            new,
            old,
            new_poly: new.to_poly()?,
            old_poly: old.to_poly()?,
        })
    }
}

/// Compares a candidate's bound `new` with the incumbent's `old`.
pub fn compare(ranker: &Ranker, new: &Outcome, old: &Outcome) -> Comparison {
    let pair = match (new, old) {
        (Outcome::NoBound(why, _), _) => {
            return Comparison::NotBetter(format!("it has no bound ({why})"))
        }
        (Outcome::Bound(n), Outcome::NoBound(..)) => {
            return Comparison::Better(format!("it has a bound ({n}); the original has none"))
        }
        (Outcome::Bound(n), Outcome::Bound(o)) => match Pair::of(n, o) {
            Some(pair) => pair,
            None => {
                return Comparison::NotBetter(
                    "the bounds overflow 128-bit rational arithmetic".into(),
                )
            }
        },
    };
    match ranker {
        Ranker::Asymptotic { epsilon } => heuristic(&pair.new_poly, &pair.old_poly, *epsilon),
        Ranker::At(s) => s.compare(&pair),
        Ranker::Tested(t) => t.compare(&pair),
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

/// How a candidate's bound grows against the incumbent's, by the
/// heuristic.
enum Trend {
    /// Lower: a lower degree, or at the first degree whose coefficient
    /// sums differ, a lower sum (which terms).
    Lower(String),
    /// Higher (why).
    Higher(String),
    /// The same within epsilon at every degree.
    Same,
}

/// The heuristic's [`Trend`]: degree, then coefficient sums degree by
/// degree.
fn trend(new: &Poly, old: &Poly, epsilon: f64) -> Trend {
    let (dn, d_old) = (new.degree(), old.degree());
    if dn != d_old {
        let text = format!("degree {d_old} → {dn}");
        return if dn < d_old {
            Trend::Lower(text)
        } else {
            Trend::Higher(format!("its bound grows faster ({text})"))
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
            Trend::Lower(terms)
        } else {
            Trend::Higher(format!("its bound is higher: {terms}"))
        };
    }
    Trend::Same
}

/// The heuristic as a verdict.
fn heuristic(new: &Poly, old: &Poly, epsilon: f64) -> Comparison {
    match trend(new, old, epsilon) {
        Trend::Lower(t) => Comparison::Better(t),
        Trend::Higher(t) => Comparison::NotBetter(t),
        Trend::Same => Comparison::NotBetter(format!(
            "its bound is the same within {}%",
            fmt_num(epsilon * 100.0)
        )),
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
    use copper::bound::Term;
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
        let r = asymptotic();
        let quadratic = bound(1, &[(1, &["n", "n"])]);
        let linear = bound(1000, &[(1000, &["n"])]);
        assert!(compare(&r, &linear, &quadratic).is_better());
        assert!(!compare(&r, &quadratic, &linear).is_better());
    }

    #[test]
    fn equal_degree_compares_coefficient_sums_from_the_top() {
        let r = asymptotic();
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
        let r = asymptotic();
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
        let strict = Ranker::Asymptotic { epsilon: 0.0 };
        assert!(compare(&strict, &after, &before).is_better());
    }

    #[test]
    fn no_bound_never_wins_and_always_loses() {
        let r = asymptotic();
        let none = Outcome::NoBound(copper::bound::NoBound::NoCondition, None);
        let some = bound(5, &[]);
        assert!(!compare(&r, &none, &some).is_better());
        assert!(compare(&r, &some, &none).is_better());
    }

    fn asymptotic() -> Ranker {
        Ranker::Asymptotic {
            epsilon: DEFAULT_EPSILON,
        }
    }

    fn at(values: &[(&str, f64)], given: bool) -> Ranker {
        Ranker::At(sized::InUse {
            values: values.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
            from: "the launch at line 42".into(),
            given,
            epsilon: DEFAULT_EPSILON,
        })
    }

    #[test]
    fn values_at_given_sizes() {
        let r = at(&[("h", 4096.0)], true);
        // Lower slope, higher constant: better for large h.
        let before = bound(12, &[(88, &["h"])]);
        let after = bound(100, &[(71, &["h"])]);
        let c = compare(&r, &after, &before);
        assert_eq!(
            c,
            Comparison::Better("at h=4096: 360460 → 290916 (the h term: 88 → 71)".into())
        );
        let missing = compare(&r, &bound(1, &[(1, &["w"])]), &before);
        assert!(!missing.is_better());
        assert!(missing.reason().contains("--at does not give w"));
    }

    #[test]
    fn at_the_sizes_in_use_a_tile_with_a_large_constant_loses() {
        // 8·m → 255 + 2·m: lower only from m ≈ 43.
        let before = bound(0, &[(8, &["m"])]);
        let after = bound(255, &[(2, &["m"])]);
        assert!(compare(&asymptotic(), &after, &before).is_better());
        let small = compare(&at(&[("m", 16.0), ("n", 1000.0)], false), &after, &before);
        assert_eq!(
            small,
            Comparison::NotBetter(
                "not better at the sizes in use (the launch at line 42): at m=16: 128 → 287; it is lower only for larger sizes (the m term: 8 → 2)".into()
            )
        );
        assert!(compare(&at(&[("m", 1000.0)], false), &after, &before).is_better());
        // Better at the sizes though it grows faster: taken, and said.
        let c = compare(&at(&[("m", 4.0)], false), &before, &after);
        assert_eq!(
            c,
            Comparison::Better(
                "at m=4: 263 → 32, though its bound is higher: the m term: 2 → 8".into()
            )
        );
    }

    #[test]
    fn sizes_from_a_launch_missing_a_variable_fall_back_to_the_heuristic() {
        let before = bound(0, &[(8, &["m"]), (1, &["k"])]);
        let after = bound(255, &[(2, &["m"]), (1, &["k"])]);
        let c = compare(&at(&[("m", 16.0)], false), &after, &before);
        assert_eq!(
            c,
            Comparison::Better(
                "the m term: 8 → 2 (ranked by degree and coefficients: the launch at line 42 does not give k)"
                    .into()
            )
        );
    }

    /// A candidate lower only for larger sizes is said to win from where
    /// its bound drops below the incumbent's by more than the tolerance:
    /// 8·m against 255 + 2·m crosses at m = 43.66 (with 2%), so from
    /// m=44, the test launch's m=17 scaled up; the launch's dimensions
    /// stay.
    #[test]
    fn a_candidate_lower_only_for_larger_sizes_wins_from_where_the_bounds_cross() {
        let tested = Ranker::Tested(sized::Tested {
            point: BTreeMap::from([("m".to_string(), 17.0), ("gridDim.x".into(), 2.0)]),
            epsilon: DEFAULT_EPSILON,
        });
        let before = bound(0, &[(8, &["m"])]);
        let after = bound(255, &[(2, &["m"])]);
        assert_eq!(
            sized::wins_from(&tested, &after, &before),
            Some(BTreeMap::from([("m".to_string(), 44.0)]))
        );
        // Growing faster, or ranked by growth alone: nothing to say.
        assert_eq!(sized::wins_from(&tested, &before, &after), None);
        let asymptotic = Ranker::Asymptotic {
            epsilon: DEFAULT_EPSILON,
        };
        assert_eq!(sized::wins_from(&asymptotic, &after, &before), None);
        // Already lower at the sizes: it would have been taken.
        let cheap = bound(1, &[(2, &["m"])]);
        assert_eq!(sized::wins_from(&tested, &cheap, &before), None);
    }

    #[test]
    fn without_sizes_a_candidate_higher_at_the_largest_test_sizes_is_not_taken() {
        let tested = |m: f64| {
            Ranker::Tested(sized::Tested {
                point: BTreeMap::from([("m".to_string(), m), ("gridDim.x".into(), 2.0)]),
                epsilon: DEFAULT_EPSILON,
            })
        };
        let before = bound(0, &[(8, &["m"])]);
        let after = bound(255, &[(2, &["m"])]);
        let c = compare(&tested(17.0), &after, &before);
        assert!(!c.is_better());
        assert!(
            c.reason().starts_with(
                "its bound is lower only for large sizes (the m term: 8 → 2) and higher at the test launches' largest sizes, m=17: 136 → 289"
            ),
            "{}",
            c.reason()
        );
        // No higher at the largest test size: taken, and said.
        assert_eq!(
            compare(&tested(96.0), &after, &before),
            Comparison::Better(
                "the m term: 8 → 2, and no higher at the test launches' largest sizes, m=96: 768 → 447"
                    .into()
            )
        );
        // Asymptotically worse: the heuristic's verdict, whatever the tests.
        assert!(!compare(&tested(5.0), &before, &after).is_better());
    }
}
