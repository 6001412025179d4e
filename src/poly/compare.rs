//! Ranking cost bounds: the polynomial comparison heuristic of the COpPER
//! paper (COpPER §4.2), and comparison at concrete sizes.
//!
//! The paper defines a relation `f ≤ g` on bound polynomials meant to hold
//! when `f < g` on "a large domain of commonly occurring values". Its rules,
//! as numbered in the paper:
//!
//! 1. If `f` is of lower degree than `g`, then `f ≤ g`.
//! 2. If `f` and `g` have the same degree `n`, compare the sums of their
//!    `n`-th degree coefficients; the lower sum wins. If the sums are equal
//!    (or within a specified absolute difference), go on to the next degree
//!    (the paper says "next-higher", which can only mean the next one down,
//!    `n − 1`, since `n` is already the highest).
//! 3. If this process ends without a decision, neither `f ≤ g` nor `g ≤ f`;
//!    since a candidate is chosen only if it is `≤` the incumbent, the
//!    incumbent is kept.
//!
//! "Degree" is the total degree of a multivariate polynomial and the
//! "`n`-th degree coefficients" are those of the monomials of total degree
//! `n` (`M·N`, `M²` and `N²` all count for `n = 2`).

use std::cmp::Ordering;
use std::collections::BTreeMap;

use super::{Poly, Rational};

/// The outcome of comparing a cost bound `f` with a bound `g`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Comparison {
    /// `f` is the cheaper bound (`f ≤ g` and not `g ≤ f`).
    Better,
    /// `g` is the cheaper bound (`g ≤ f` and not `f ≤ g`).
    Worse,
    /// `f` and `g` are the same polynomial (coefficient by coefficient,
    /// within epsilon) or, for [`compare_at`], have the same value.
    Equal,
    /// Neither is cheaper: the paper's rule 3 for polynomials that differ
    /// but tie at every degree, or, for [`compare_at`], a missing variable.
    /// The caller keeps the incumbent.
    Incomparable,
}

impl Comparison {
    /// The same comparison seen from `g`'s side (`compare(g, f)`).
    pub fn reverse(self) -> Comparison {
        match self {
            Comparison::Better => Comparison::Worse,
            Comparison::Worse => Comparison::Better,
            c => c,
        }
    }

    /// Whether `f` should replace the incumbent `g` (only when strictly
    /// [`Comparison::Better`]).
    pub fn is_better(self) -> bool {
        self == Comparison::Better
    }
}

/// Compares the cost bounds `f` and `g` with the heuristic of COpPER §4.2;
/// [`Comparison::Better`] means `f` is the cheaper bound.
///
/// - Rule 1: the polynomial of lower total degree is better.
/// - Rule 2: at equal degree `n`, for `d = n, n−1, …, 0`, the polynomial
///   whose degree-`d` coefficients have the lower sum is better; sums whose
///   absolute difference is at most `eps` count as equal and the comparison
///   moves to `d − 1`. Pass `eps = 0.0` for exact comparison.
/// - Rule 3: if every degree ties, the paper makes `f` and `g` incomparable.
///   Here that gives [`Comparison::Equal`] when `f` and `g` are the same
///   polynomial (each coefficient within `eps`), and
///   [`Comparison::Incomparable`] otherwise (e.g. `2·M + 1` against
///   `M + N + 1`). Either way a caller that takes only `Better` keeps the
///   incumbent, as the paper does.
///
/// The zero polynomial has degree 0, like a constant.
pub fn compare(f: &Poly, g: &Poly, eps: f64) -> Comparison {
    // Rule 1.
    match f.degree().cmp(&g.degree()) {
        Ordering::Less => return Comparison::Better,
        Ordering::Greater => return Comparison::Worse,
        Ordering::Equal => {}
    }
    // Rule 2, from the top degree down to the constant term.
    for d in (0..=f.degree()).rev() {
        let fs = f.degree_coefficient_sum(d);
        let gs = g.degree_coefficient_sum(d);
        match cmp_within(fs, gs, eps) {
            Ordering::Less => return Comparison::Better,
            Ordering::Greater => return Comparison::Worse,
            Ordering::Equal => {}
        }
    }
    // Rule 3.
    if same_within(f, g, eps) {
        Comparison::Equal
    } else {
        Comparison::Incomparable
    }
}

/// Compares the values of `f` and `g` at the sizes `at`:
/// [`Comparison::Better`] when `f(at) < g(at)`, [`Comparison::Equal`] when
/// they are equal, and [`Comparison::Incomparable`] when a variable of `f` or
/// `g` has no value in `at`.
pub fn compare_at(f: &Poly, g: &Poly, at: &BTreeMap<String, Rational>) -> Comparison {
    match (f.eval(at), g.eval(at)) {
        (Some(x), Some(y)) => match x.cmp(&y) {
            Ordering::Less => Comparison::Better,
            Ordering::Greater => Comparison::Worse,
            Ordering::Equal => Comparison::Equal,
        },
        _ => Comparison::Incomparable,
    }
}

/// `a` against `b`, with an absolute difference of at most `eps` counting as
/// equal. Exact when the difference fits in `i128`, in floating point
/// otherwise.
fn cmp_within(a: Rational, b: Rational, eps: f64) -> Ordering {
    let diff = a
        .checked_add(-b)
        .map_or_else(|| a.to_f64() - b.to_f64(), Rational::to_f64);
    if diff.abs() <= eps {
        Ordering::Equal
    } else if diff < 0.0 {
        Ordering::Less
    } else if diff > 0.0 {
        Ordering::Greater
    } else {
        // Unreachable for finite values; a NaN `eps` decides nothing.
        Ordering::Equal
    }
}

/// Whether `f` and `g` have the same coefficient, within `eps`, at every
/// monomial of either.
fn same_within(f: &Poly, g: &Poly, eps: f64) -> bool {
    let within = |p: &Poly, q: &Poly| {
        p.terms()
            .all(|(m, c)| cmp_within(c, q.coefficient(m), eps) == Ordering::Equal)
    };
    within(f, g) && within(g, f)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(n: i128) -> Poly {
        Poly::constant(Rational::int(n))
    }

    fn v(name: &str) -> Poly {
        Poly::var(name)
    }

    /// Checks `compare(f, g)` and that `compare(g, f)` is its reverse.
    fn check(f: &Poly, g: &Poly, eps: f64, want: Comparison) {
        assert_eq!(compare(f, g, eps), want, "{f} vs {g}");
        assert_eq!(compare(g, f, eps), want.reverse(), "{g} vs {f}");
    }

    #[test]
    fn rule1_lower_degree_wins() {
        // Even with much larger coefficients.
        let f = v("n") * c(1000) + c(100_000);
        let g = v("n") * v("n");
        check(&f, &g, 0.0, Comparison::Better);
        check(&c(50), &v("n"), 0.0, Comparison::Better);
        check(&Poly::zero(), &v("n"), 0.0, Comparison::Better);
        // Total degree: M·N (2) is above M (1) and below N³ (3).
        check(
            &(v("M") * c(5)),
            &(v("M") * v("N")),
            0.0,
            Comparison::Better,
        );
        check(&(v("M") * v("N")), &v("N").pow(3), 0.0, Comparison::Better);
    }

    #[test]
    fn rule2_top_degree_sums() {
        // The paper's running example shape: 32·h + 14 against 32·h + 20.
        let f = v("h") * c(32) + c(14);
        let g = v("h") * c(32) + c(20);
        check(&f, &g, 0.0, Comparison::Better);
        // The top degree decides before the constant does.
        let f = v("h") * c(31) + c(1000);
        check(&f, &g, 0.0, Comparison::Better);
        // Sums over all monomials of the top degree: 3·M·N + 4·N² (7)
        // against 8·M² (8).
        let f = v("M") * v("N") * c(3) + v("N").pow(2) * c(4);
        let g = v("M").pow(2) * c(8);
        check(&f, &g, 0.0, Comparison::Better);
        // Middle degree decides when the top ties.
        let f = v("x").pow(2) + v("x") * c(2) + c(9);
        let g = v("x").pow(2) + v("x") * c(3);
        check(&f, &g, 0.0, Comparison::Better);
        // Zero against a positive constant.
        check(&Poly::zero(), &c(1), 0.0, Comparison::Better);
    }

    #[test]
    fn rule2_epsilon() {
        let f = v("n") * Poly::constant(Rational::new(1001, 1000)) + c(1);
        let g = v("n") + c(2);
        // Exactly: the top sums differ, g wins.
        check(&f, &g, 0.0, Comparison::Worse);
        // Within 0.01 the top sums tie and the constant decides.
        check(&f, &g, 0.01, Comparison::Better);
        // Equal within eps at every coefficient.
        let g = v("n") + c(1);
        check(&f, &g, 0.01, Comparison::Equal);
    }

    #[test]
    fn rule3_ties_everywhere() {
        check(&(v("n") + c(3)), &(v("n") + c(3)), 0.0, Comparison::Equal);
        check(&Poly::zero(), &Poly::zero(), 0.0, Comparison::Equal);
        // Same sums at every degree, different polynomials.
        let f = v("M") * c(2) + c(1);
        let g = v("M") + v("N") + c(1);
        check(&f, &g, 0.0, Comparison::Incomparable);
        assert!(!compare(&f, &g, 0.0).is_better());
    }

    #[test]
    fn at_sizes() {
        let f = v("M") * v("N") * c(85) + v("N") * c(64) + c(9);
        let g = v("M") * v("N") * c(90);
        let mut at = BTreeMap::new();
        at.insert("N".to_string(), Rational::int(1));
        assert_eq!(compare_at(&f, &g, &at), Comparison::Incomparable);
        // M = 1: 158 against 90.
        at.insert("M".to_string(), Rational::int(1));
        assert_eq!(compare_at(&f, &g, &at), Comparison::Worse);
        // M = 100: 8573 against 9000.
        at.insert("M".to_string(), Rational::int(100));
        assert_eq!(compare_at(&f, &g, &at), Comparison::Better);
        assert_eq!(compare_at(&g, &f, &at), Comparison::Worse);
        assert_eq!(compare_at(&f, &f, &at), Comparison::Equal);
        // The heuristic agrees with large sizes here.
        assert_eq!(compare(&f, &g, 0.0), Comparison::Better);
    }
}
