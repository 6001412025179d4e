//! Multivariate polynomials with exact [`Rational`] coefficients over named
//! variables (`w`, `h`, `gridDim.x`, …): the form cost bounds take.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::ops::{Add, AddAssign, Mul, Neg, Sub};

use super::Rational;

/// A product of variables with positive exponents, e.g. `M·N` or `w²`; the
/// empty product is [`Monomial::one`].
///
/// The derived `Ord` (lexicographic over the sorted `(variable, exponent)`
/// pairs) only serves as a map key; [`Monomial::graded_cmp`] is the order in
/// which polynomials are printed.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Default)]
pub struct Monomial {
    /// Variable name → exponent; exponents are never zero.
    exps: BTreeMap<String, u32>,
}

impl Monomial {
    /// The empty product, `1`.
    pub fn one() -> Monomial {
        Monomial::default()
    }

    /// A single variable to the first power.
    pub fn var(name: &str) -> Monomial {
        Monomial::power(name, 1)
    }

    /// `name^exp`; `exp = 0` gives [`Monomial::one`].
    pub fn power(name: &str, exp: u32) -> Monomial {
        let mut exps = BTreeMap::new();
        if exp > 0 {
            exps.insert(name.to_string(), exp);
        }
        Monomial { exps }
    }

    /// Total degree: the sum of the exponents (0 for [`Monomial::one`]).
    pub fn degree(&self) -> u32 {
        self.exps.values().sum()
    }

    /// Whether this is the empty product `1`.
    pub fn is_one(&self) -> bool {
        self.exps.is_empty()
    }

    /// The exponent of `name` (0 if it does not occur).
    pub fn exponent(&self, name: &str) -> u32 {
        self.exps.get(name).copied().unwrap_or(0)
    }

    /// The `(variable, exponent)` pairs, sorted by variable name.
    pub fn factors(&self) -> impl Iterator<Item = (&str, u32)> {
        self.exps.iter().map(|(v, &e)| (v.as_str(), e))
    }

    /// The product `self · other` (exponents add).
    pub fn mul(&self, other: &Monomial) -> Monomial {
        let mut exps = self.exps.clone();
        for (v, &e) in &other.exps {
            *exps.entry(v.clone()).or_insert(0) += e;
        }
        Monomial { exps }
    }

    /// The printing order: higher total degree first; at equal degree,
    /// lexicographic on the variable names written out with repetition
    /// (`M² = M·M` before `M·N` before `N²`). [`Monomial::one`] comes last.
    pub fn graded_cmp(&self, other: &Monomial) -> Ordering {
        other
            .degree()
            .cmp(&self.degree())
            .then_with(|| self.word().cmp(other.word()))
    }

    /// The variable names written out with repetition, e.g. `[M, M, N]`.
    fn word(&self) -> impl Iterator<Item = &str> {
        self.exps
            .iter()
            .flat_map(|(v, &e)| std::iter::repeat_n(v.as_str(), e as usize))
    }

    /// `∏ value(v)^e`, or `None` if a variable has no value.
    pub fn eval(&self, values: &BTreeMap<String, Rational>) -> Option<Rational> {
        let mut acc = Rational::ONE;
        for (v, &e) in &self.exps {
            let x = *values.get(v)?;
            for _ in 0..e {
                acc = acc * x;
            }
        }
        Some(acc)
    }

    /// `∏ value(v)^e` in floating point, or `None` if a variable has no value.
    pub fn eval_f64(&self, values: &BTreeMap<String, f64>) -> Option<f64> {
        let mut acc = 1.0;
        for (v, &e) in &self.exps {
            let x = *values.get(v)?;
            acc *= x.powi(i32::try_from(e).unwrap_or(i32::MAX));
        }
        Some(acc)
    }

    /// Writes the factors joined by `times`, exponents via `exp`.
    fn write_with(
        &self,
        f: &mut impl fmt::Write,
        times: &str,
        exp: fn(u32) -> String,
    ) -> fmt::Result {
        for (i, (v, &e)) in self.exps.iter().enumerate() {
            if i > 0 {
                f.write_str(times)?;
            }
            f.write_str(v)?;
            if e > 1 {
                f.write_str(&exp(e))?;
            }
        }
        Ok(())
    }
}

/// Exponent in the readable form: `²`, `³`, then `^k`.
/// Exponent in the readable form: `²`, `³`, `⁴`, else `^k`.
pub fn pretty_exp(e: u32) -> String {
    match e {
        2 => "²".to_string(),
        3 => "³".to_string(),
        4 => "⁴".to_string(),
        _ => format!("^{e}"),
    }
}

/// Exponent in the ASCII form `^k`.
fn plain_exp(e: u32) -> String {
    format!("^{e}")
}

impl fmt::Display for Monomial {
    /// `M·N`, `w²`; `1` for the empty product.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_one() {
            return f.write_str("1");
        }
        self.write_with(f, "·", pretty_exp)
    }
}

/// A multivariate polynomial `Σ c·m` with [`Rational`] coefficients `c` and
/// [`Monomial`]s `m`. No zero coefficient is stored, so structural equality
/// is equality of polynomials.
#[derive(Clone, PartialEq, Eq, Hash, Debug, Default)]
pub struct Poly {
    terms: BTreeMap<Monomial, Rational>,
}

impl Poly {
    /// The zero polynomial.
    pub fn zero() -> Poly {
        Poly::default()
    }

    /// A constant.
    pub fn constant(c: Rational) -> Poly {
        Poly::term(c, Monomial::one())
    }

    /// A single variable.
    pub fn var(name: &str) -> Poly {
        Poly::term(Rational::ONE, Monomial::var(name))
    }

    /// The single term `c·m` (zero if `c` is zero).
    pub fn term(c: Rational, m: Monomial) -> Poly {
        let mut p = Poly::zero();
        p.add_term(c, m);
        p
    }

    /// Adds `c·m` in place, dropping the term if its coefficient becomes 0.
    pub fn add_term(&mut self, c: Rational, m: Monomial) {
        if c.is_zero() {
            return;
        }
        let sum = self.coefficient(&m) + c;
        if sum.is_zero() {
            self.terms.remove(&m);
        } else {
            self.terms.insert(m, sum);
        }
    }

    /// Every coefficient multiplied by `k`.
    pub fn scale(&self, k: Rational) -> Poly {
        if k.is_zero() {
            return Poly::zero();
        }
        let terms = self
            .terms
            .iter()
            .map(|(m, &c)| (m.clone(), c * k))
            .collect();
        Poly { terms }
    }

    /// `self + o`, or `None` when a coefficient overflows.
    pub fn checked_add(&self, o: &Poly) -> Option<Poly> {
        let mut r = self.clone();
        for (m, &c) in &o.terms {
            let sum = r.coefficient(m).checked_add(c)?;
            r.terms.remove(m);
            if !sum.is_zero() {
                r.terms.insert(m.clone(), sum);
            }
        }
        Some(r)
    }

    /// Every coefficient multiplied by `k`, or `None` when one overflows.
    pub fn checked_scale(&self, k: Rational) -> Option<Poly> {
        if k.is_zero() {
            return Some(Poly::zero());
        }
        let terms = self
            .terms
            .iter()
            .map(|(m, &c)| Some((m.clone(), c.checked_mul(k)?)))
            .collect::<Option<_>>()?;
        Some(Poly { terms })
    }

    /// `self · o`, or `None` when a coefficient overflows.
    pub fn checked_mul(&self, o: &Poly) -> Option<Poly> {
        let mut r = Poly::zero();
        for (ma, &ca) in &self.terms {
            for (mb, &cb) in &o.terms {
                r = r.checked_add(&Poly::term(ca.checked_mul(cb)?, ma.mul(mb)))?;
            }
        }
        Some(r)
    }

    /// `self · o` when the product has at most `max_terms` terms, none of
    /// degree above `max_degree`, and no coefficient overflows; `None`
    /// otherwise. The limits are checked on the factors before multiplying
    /// (the product of `m` and `n` terms has at most `m·n`), so the work is
    /// bounded by `max_terms` whatever the factors.
    pub fn bounded_mul(&self, o: &Poly, max_terms: usize, max_degree: u32) -> Option<Poly> {
        let terms = self.len().checked_mul(o.len())?;
        if terms > max_terms || self.degree().checked_add(o.degree())? > max_degree {
            return None;
        }
        self.checked_mul(o)
    }

    /// `self − o`, or `None` when a coefficient overflows.
    pub fn checked_sub(&self, o: &Poly) -> Option<Poly> {
        self.checked_add(&o.checked_scale(-Rational::ONE)?)
    }

    /// `(c, p)` with `self = c·p`, `c > 0` and `p` having coprime integer
    /// coefficients: `1/16·n + 15/16` is `1/16·(n + 15)`. The zero
    /// polynomial gives `(1, 0)`; `None` when the common denominator
    /// overflows.
    pub fn primitive(&self) -> Option<(Rational, Poly)> {
        if self.is_zero() {
            return Some((Rational::ONE, Poly::zero()));
        }
        fn gcd(a: i128, b: i128) -> i128 {
            if b == 0 {
                a.abs()
            } else {
                gcd(b, a % b)
            }
        }
        let mut den = 1i128;
        for c in self.terms.values() {
            den = (den / gcd(den, c.den())).checked_mul(c.den())?;
        }
        let mut num = 0i128;
        for c in self.terms.values() {
            num = gcd(num, c.num().checked_mul(den / c.den())?);
        }
        let c = Rational::checked_new(num, den)?;
        Some((c, self.checked_scale(Rational::ONE.checked_div(c)?)?))
    }

    /// `self^n` (`1` for `n = 0`).
    pub fn pow(&self, n: u32) -> Poly {
        let mut acc = Poly::constant(Rational::ONE);
        for _ in 0..n {
            acc = &acc * self;
        }
        acc
    }

    /// Total degree: the highest degree of a term (0 for constants and for
    /// the zero polynomial).
    pub fn degree(&self) -> u32 {
        self.terms.keys().map(Monomial::degree).max().unwrap_or(0)
    }

    /// Whether this is the zero polynomial.
    pub fn is_zero(&self) -> bool {
        self.terms.is_empty()
    }

    /// The value if this polynomial is a constant (including zero).
    pub fn as_constant(&self) -> Option<Rational> {
        match self.terms.len() {
            0 => Some(Rational::ZERO),
            1 => self.terms.get(&Monomial::one()).copied(),
            _ => None,
        }
    }

    /// The coefficient of `m` (zero if absent).
    pub fn coefficient(&self, m: &Monomial) -> Rational {
        self.terms.get(m).copied().unwrap_or(Rational::ZERO)
    }

    /// The sum of the coefficients of the terms of total degree `d` (the
    /// quantity the ranking heuristic compares, see [`super::compare`]).
    pub fn degree_coefficient_sum(&self, d: u32) -> Rational {
        self.terms
            .iter()
            .filter(|(m, _)| m.degree() == d)
            .fold(Rational::ZERO, |acc, (_, &c)| acc + c)
    }

    /// The terms in printing order ([`Monomial::graded_cmp`]): highest degree
    /// first, the constant last.
    pub fn terms(&self) -> impl Iterator<Item = (&Monomial, Rational)> {
        let mut v: Vec<_> = self.terms.iter().map(|(m, &c)| (m, c)).collect();
        v.sort_by(|a, b| a.0.graded_cmp(b.0));
        v.into_iter()
    }

    /// The number of (nonzero) terms.
    pub fn len(&self) -> usize {
        self.terms.len()
    }

    /// Same as [`Poly::is_zero`].
    pub fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }

    /// The value at `values`, or `None` if a variable of the polynomial has no
    /// value there.
    pub fn eval(&self, values: &BTreeMap<String, Rational>) -> Option<Rational> {
        let mut acc = Rational::ZERO;
        for (m, &c) in &self.terms {
            acc = acc + c * m.eval(values)?;
        }
        Some(acc)
    }

    /// The value at `values` in floating point, or `None` if a variable of
    /// the polynomial has no value there.
    pub fn eval_f64(&self, values: &BTreeMap<String, f64>) -> Option<f64> {
        let mut acc = 0.0;
        for (m, &c) in &self.terms {
            acc += c.to_f64() * m.eval_f64(values)?;
        }
        Some(acc)
    }

    /// The variables that occur in the polynomial.
    pub fn variables(&self) -> BTreeSet<String> {
        self.terms
            .keys()
            .flat_map(|m| m.exps.keys().cloned())
            .collect()
    }

    /// ASCII form: `32*h + 14`, `1/2*w^2 + 3`, `0` for zero.
    pub fn to_plain(&self) -> String {
        let mut s = String::new();
        // Writing to a `String` cannot fail.
        let _ = self.write_with(&mut s, "*", plain_exp);
        s
    }

    /// Writes the terms in printing order, with `times` between factors and
    /// exponents via `exp`.
    fn write_with(
        &self,
        f: &mut impl fmt::Write,
        times: &str,
        exp: fn(u32) -> String,
    ) -> fmt::Result {
        if self.is_zero() {
            return f.write_str("0");
        }
        for (i, (m, c)) in self.terms().enumerate() {
            let negative = c < Rational::ZERO;
            match (i, negative) {
                (0, true) => f.write_str("-")?,
                (0, false) => {}
                (_, true) => f.write_str(" - ")?,
                (_, false) => f.write_str(" + ")?,
            }
            let a = c.abs();
            if m.is_one() {
                write!(f, "{a}")?;
            } else {
                if a != Rational::ONE {
                    write!(f, "{a}{times}")?;
                }
                m.write_with(f, times, exp)?;
            }
        }
        Ok(())
    }
}

impl fmt::Display for Poly {
    /// Readable form: `85·M·N + 64·N + 9`, `1/2·w² + 3`, `-2·x + 1`, `0`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write_with(f, "·", pretty_exp)
    }
}

impl From<Rational> for Poly {
    fn from(c: Rational) -> Poly {
        Poly::constant(c)
    }
}

impl From<i64> for Poly {
    fn from(n: i64) -> Poly {
        Poly::constant(Rational::from(n))
    }
}

impl AddAssign<&Poly> for Poly {
    fn add_assign(&mut self, o: &Poly) {
        for (m, &c) in &o.terms {
            self.add_term(c, m.clone());
        }
    }
}

impl AddAssign for Poly {
    fn add_assign(&mut self, o: Poly) {
        *self += &o;
    }
}

impl Add<&Poly> for &Poly {
    type Output = Poly;
    fn add(self, o: &Poly) -> Poly {
        let mut r = self.clone();
        r += o;
        r
    }
}

impl Add for Poly {
    type Output = Poly;
    fn add(mut self, o: Poly) -> Poly {
        self += &o;
        self
    }
}

impl Neg for &Poly {
    type Output = Poly;
    fn neg(self) -> Poly {
        self.scale(-Rational::ONE)
    }
}

impl Neg for Poly {
    type Output = Poly;
    fn neg(self) -> Poly {
        -&self
    }
}

impl Sub<&Poly> for &Poly {
    type Output = Poly;
    fn sub(self, o: &Poly) -> Poly {
        self + &(-o)
    }
}

impl Sub for Poly {
    type Output = Poly;
    fn sub(self, o: Poly) -> Poly {
        &self - &o
    }
}

impl Mul<&Poly> for &Poly {
    type Output = Poly;
    fn mul(self, o: &Poly) -> Poly {
        self.checked_mul(o)
            .unwrap_or_else(|| panic!("128-bit rational arithmetic overflowed"))
    }
}

impl Mul for Poly {
    type Output = Poly;
    fn mul(self, o: Poly) -> Poly {
        &self * &o
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(n: i128) -> Rational {
        Rational::int(n)
    }

    fn c(n: i128) -> Poly {
        Poly::constant(r(n))
    }

    fn v(name: &str) -> Poly {
        Poly::var(name)
    }

    #[test]
    fn arithmetic() {
        let (x, y) = (v("x"), v("y"));
        let s = &x + &y;
        let d = &x - &y;
        // (x + y)(x − y) = x² − y²
        let p = &s * &d;
        assert_eq!(p, &x.pow(2) - &y.pow(2));
        assert_eq!(p.coefficient(&Monomial::power("x", 2)), r(1));
        assert_eq!(p.coefficient(&Monomial::power("y", 2)), r(-1));
        assert_eq!(
            p.coefficient(&Monomial::var("x").mul(&Monomial::var("y"))),
            r(0)
        );
        assert_eq!(p.len(), 2);
        // Cancellation leaves no zero coefficients behind.
        assert!((&p - &p).is_zero());
        assert_eq!(&p - &p, Poly::zero());
        assert_eq!((x.clone() + c(0)), x);
        assert_eq!(x.scale(Rational::ZERO), Poly::zero());
        assert_eq!(
            (x.clone() + c(1)).scale(Rational::new(1, 2)),
            Poly::term(Rational::new(1, 2), Monomial::var("x"))
                + Poly::constant(Rational::new(1, 2))
        );
        assert_eq!(-(x.clone() - c(1)), c(1) - x.clone());
        assert_eq!(c(3) * c(4), c(12));
        assert_eq!(Poly::zero() * x.clone(), Poly::zero());
        assert_eq!(x.pow(0), c(1));
        let mut acc = Poly::zero();
        acc += &x;
        acc += x.clone();
        assert_eq!(acc, x.scale(r(2)));
    }

    #[test]
    fn degree() {
        assert_eq!(Poly::zero().degree(), 0);
        assert_eq!(c(7).degree(), 0);
        assert_eq!(v("w").degree(), 1);
        let p = v("M") * v("N") * c(85) + v("N") * c(64) + c(9);
        assert_eq!(p.degree(), 2);
        assert_eq!((v("w") + c(1)).pow(3).degree(), 3);
        assert_eq!(Monomial::one().degree(), 0);
        assert_eq!(Monomial::var("a").mul(&Monomial::power("b", 2)).degree(), 3);
        assert_eq!(p.degree_coefficient_sum(2), r(85));
        assert_eq!(p.degree_coefficient_sum(1), r(64));
        assert_eq!(p.degree_coefficient_sum(0), r(9));
        assert_eq!(p.degree_coefficient_sum(5), r(0));
        assert_eq!(c(5).as_constant(), Some(r(5)));
        assert_eq!(Poly::zero().as_constant(), Some(r(0)));
        assert_eq!(p.as_constant(), None);
    }

    #[test]
    fn eval() {
        let p = v("M") * v("N") * c(85) + v("N") * c(64) + c(9);
        let mut at = BTreeMap::new();
        at.insert("M".to_string(), r(2));
        assert_eq!(p.eval(&at), None);
        at.insert("N".to_string(), r(3));
        assert_eq!(p.eval(&at), Some(r(85 * 6 + 64 * 3 + 9)));
        let q = v("w").pow(2).scale(Rational::new(1, 2)) + c(3);
        at.insert("w".to_string(), r(3));
        assert_eq!(q.eval(&at), Some(Rational::new(15, 2)));
        assert_eq!(Poly::zero().eval(&BTreeMap::new()), Some(r(0)));

        let mut atf = BTreeMap::new();
        atf.insert("w".to_string(), 3.0);
        assert_eq!(q.eval_f64(&atf), Some(7.5));
        assert_eq!(p.eval_f64(&atf), None);

        let vars: Vec<_> = p.variables().into_iter().collect();
        assert_eq!(vars, ["M", "N"]);
        assert!(c(4).variables().is_empty());
    }

    #[test]
    fn display() {
        assert_eq!(Poly::zero().to_string(), "0");
        assert_eq!(c(-4).to_string(), "-4");
        assert_eq!((v("h") * c(32) + c(14)).to_string(), "32·h + 14");
        let p = c(9) + v("N") * c(64) + v("M") * v("N") * c(85);
        assert_eq!(p.to_string(), "85·M·N + 64·N + 9");
        assert_eq!(p.to_plain(), "85*M*N + 64*N + 9");
        let q = c(3) + v("w").pow(2).scale(Rational::new(1, 2));
        assert_eq!(q.to_string(), "1/2·w² + 3");
        assert_eq!(q.to_plain(), "1/2*w^2 + 3");
        assert_eq!((c(1) - v("x") * c(2)).to_string(), "-2·x + 1");
        assert_eq!((v("w") - c(3)).to_string(), "w - 3");
        assert_eq!((-v("w")).to_string(), "-w");
        assert_eq!(v("x").pow(3).to_string(), "x³");
        assert_eq!(v("x").pow(4).to_string(), "x⁴");
        assert_eq!(v("x").pow(5).to_string(), "x^5");
        // Same degree: lexicographic on the variables written out.
        let s = v("N").pow(2) + v("M") * v("N") + v("M").pow(2) + v("a") + v("Z");
        assert_eq!(s.to_string(), "M² + M·N + N² + Z + a");
        let g = v("gridDim.x") * v("blockIdx.x") + c(1);
        assert_eq!(g.to_string(), "blockIdx.x·gridDim.x + 1");
        assert_eq!(Monomial::one().to_string(), "1");
        assert_eq!(Monomial::power("w", 2).to_string(), "w²");
    }

    #[test]
    fn terms_in_canonical_order() {
        let p = c(1) + v("b") + v("a") * v("b") + v("a").pow(3);
        let degrees: Vec<u32> = p.terms().map(|(m, _)| m.degree()).collect();
        assert_eq!(degrees, [3, 2, 1, 0]);
    }
}
