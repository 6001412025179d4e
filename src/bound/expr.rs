//! Bounds as expressions over the kernel's inputs: a constant plus
//! coefficients times products of factors `max(0, P)`.

use std::collections::BTreeMap;
use std::fmt;

use crate::poly::poly::pretty_exp;
use crate::poly::{Poly, Rational};

/// One term: `coef · Π max(0, factor)`.
#[derive(Clone, Debug, PartialEq)]
pub struct Term {
    /// A positive coefficient.
    pub coef: Rational,
    /// Factors over input names, each read as `max(0, factor)`.
    pub factors: Vec<Poly>,
}

/// A bound: `constant + Σ terms`.
#[derive(Clone, Debug, PartialEq)]
pub struct BoundExpr {
    /// The constant part.
    pub constant: Rational,
    /// The terms, merged (no two with the same factors), highest degree
    /// first.
    pub terms: Vec<Term>,
}

impl BoundExpr {
    /// A bound from a constant and terms: merges terms with equal factors
    /// and orders them. `None` when a coefficient overflows 128-bit
    /// rational arithmetic.
    pub fn new(constant: Rational, terms: Vec<Term>) -> Option<BoundExpr> {
        let mut merged: Vec<Term> = Vec::new();
        for mut t in terms {
            if t.coef.is_zero() {
                continue;
            }
            // max(0, c·p) = c·max(0, p) for c > 0: integer factors print best.
            for f in t.factors.iter_mut() {
                let (c, p) = f.primitive()?;
                t.coef = t.coef.checked_mul(c)?;
                *f = p;
            }
            t.factors.sort_by_key(|f| f.to_plain());
            match merged.iter_mut().find(|m| m.factors == t.factors) {
                Some(m) => m.coef = m.coef.checked_add(t.coef)?,
                None => merged.push(t),
            }
        }
        merged.sort_by(|a, b| {
            b.degree()
                .cmp(&a.degree())
                .then_with(|| a.text().cmp(&b.text()))
        });
        Some(BoundExpr {
            constant,
            terms: merged,
        })
    }

    /// The bound at given input values; `None` if an input is missing.
    /// A `log2(n)` in the bound ([`super::ghost::log_name`]) is derived
    /// from `n`, a `⌈n/blockDim.x⌉` from `n` and the launch.
    pub fn eval(&self, inputs: &BTreeMap<String, f64>) -> Option<f64> {
        let mut derived = None;
        for t in &self.terms {
            for f in &t.factors {
                for (m, _) in f.terms() {
                    for (name, _) in m.factors() {
                        if inputs.contains_key(name) {
                            continue;
                        }
                        if let Some(x) = super::ghost::derived_value(name, inputs) {
                            derived
                                .get_or_insert_with(|| inputs.clone())
                                .insert(name.to_string(), x);
                        }
                    }
                }
            }
        }
        let inputs = derived.as_ref().unwrap_or(inputs);
        let mut v = self.constant.to_f64();
        for t in &self.terms {
            let mut p = t.coef.to_f64();
            for f in &t.factors {
                p *= f.eval_f64(inputs)?.max(0.0);
            }
            v += p;
        }
        Some(v)
    }

    /// The bound as a polynomial, reading each `max(0, P)` as `P` (what it
    /// is wherever the [`BoundExpr::assumptions`] hold); `None` when a
    /// coefficient overflows 128-bit rational arithmetic.
    pub fn to_poly(&self) -> Option<Poly> {
        let mut p = Poly::constant(self.constant);
        for t in &self.terms {
            let mut m = Poly::constant(t.coef);
            for f in &t.factors {
                m = m.checked_mul(f)?;
            }
            p = p.checked_add(&m)?;
        }
        Some(p)
    }

    /// The factors the polynomial form assumes nonnegative: `h + 1 ≥ 0`.
    pub fn assumptions(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .terms
            .iter()
            .flat_map(|t| t.factors.iter())
            .filter(|f| f.degree() > 0 && !surely_nonnegative(f))
            .map(|f| format!("{f} ≥ 0"))
            .collect();
        out.sort();
        out.dedup();
        out
    }

    /// The bound times a nonnegative constant; `None` when a coefficient
    /// overflows 128-bit rational arithmetic.
    pub fn scaled(&self, k: Rational) -> Option<BoundExpr> {
        Some(BoundExpr {
            constant: self.constant.checked_mul(k)?,
            terms: self
                .terms
                .iter()
                .filter(|_| !k.is_zero())
                .map(|t| {
                    Some(Term {
                        coef: t.coef.checked_mul(k)?,
                        factors: t.factors.clone(),
                    })
                })
                .collect::<Option<_>>()?,
        })
    }

    /// The degree of the polynomial form (where that overflows, the
    /// highest degree of a term).
    pub fn degree(&self) -> u32 {
        match self.to_poly() {
            Some(p) => p.degree(),
            None => self.terms.iter().map(Term::degree).max().unwrap_or(0),
        }
    }
}

/// Whether input `name` is never negative: a launch dimension, a
/// logarithm, a quotient, or a limit `max(n,64)` that is never negative
/// (`min(n,500)` may be); any other bare input counts as 0 where it is,
/// and says so.
fn never_negative(name: &str) -> bool {
    if super::limit::is_extreme_name(name) {
        return super::limit::extreme_nonnegative(name);
    }
    super::ghost::is_derived_name(name)
        || ["blockDim.", "gridDim."]
            .iter()
            .any(|p| name.starts_with(p))
}

/// Whether `f` is a sum of nonnegative multiples of products of inputs
/// that are never negative (`log2(n) + 1`), so assuming it nonnegative
/// assumes nothing.
fn surely_nonnegative(f: &Poly) -> bool {
    f.terms()
        .all(|(m, c)| c >= Rational::ZERO && m.factors().all(|(name, _)| never_negative(name)))
}

impl Term {
    fn degree(&self) -> u32 {
        self.factors.iter().map(|f| f.degree()).sum()
    }

    fn text(&self) -> String {
        let mut s = String::new();
        if self.coef != Rational::ONE || self.factors.is_empty() {
            s.push_str(&number(self.coef));
        }
        // Factors are sorted: equal ones are adjacent and print as a power.
        let mut i = 0;
        while i < self.factors.len() {
            let f = &self.factors[i];
            let n = self.factors[i..].iter().take_while(|g| *g == f).count();
            if !s.is_empty() {
                s.push('·');
            }
            let name = f.to_plain();
            let single = f.len() == 1
                && f.as_constant().is_none()
                && (super::ghost::is_derived_name(&name)
                    || name
                        .chars()
                        .all(|c| c.is_alphanumeric() || c == '_' || c == '.'));
            let nonnegative = never_negative(&name);
            if single && nonnegative {
                s.push_str(&name);
            } else if single {
                s.push_str(&format!("max(0, {name})"));
            } else {
                s.push_str(&format!("({f})"));
            }
            if n > 1 {
                s.push_str(&pretty_exp(n as u32));
            }
            i += n;
        }
        s
    }
}

impl fmt::Display for BoundExpr {
    /// Readable form, constant first: `14 + 32·(h + 1)`, `9 + 85·M·N + 64·N`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts: Vec<String> = Vec::new();
        if !self.constant.is_zero() || self.terms.is_empty() {
            parts.push(number(self.constant));
        }
        for t in &self.terms {
            parts.push(t.text());
        }
        let mut out = String::new();
        for (i, p) in parts.iter().enumerate() {
            match p.strip_prefix('-') {
                Some(rest) if i > 0 => {
                    out.push_str(" - ");
                    out.push_str(rest);
                }
                _ => {
                    if i > 0 {
                        out.push_str(" + ");
                    }
                    out.push_str(p);
                }
            }
        }
        f.write_str(&out)
    }
}

/// A coefficient for people: an integer as is, anything else as a decimal
/// with four significant digits, rounded up when it is not exact (so a
/// printed bound is still a bound, and within a part in a thousand of the
/// exact one, however small): `65/2` → `32.5`, `12527/128` → `97.87`,
/// `2^-40` → `0.0000000000009095`. The exact fraction where the decimal
/// does not fit 128-bit arithmetic.
pub fn number(r: Rational) -> String {
    if r.is_integer() {
        return r.to_string();
    }
    let magnitude = r.to_f64().abs().log10().floor() as i32;
    let digits = (3 - magnitude).max(1) as u32;
    let Some(num) = 10i128
        .checked_pow(digits)
        .and_then(|scale| r.num().checked_mul(scale))
    else {
        return r.to_string();
    };
    let scale = 10i128.pow(digits);
    let den = r.den();
    let up = num.div_euclid(den) + i128::from(num.rem_euclid(den) != 0);
    let sign = if up < 0 { "-" } else { "" };
    let (int, frac) = (up.abs() / scale, up.abs() % scale);
    let frac = format!("{frac:0width$}", width = digits as usize);
    let frac = frac.trim_end_matches('0');
    if frac.is_empty() {
        format!("{sign}{int}")
    } else {
        format!("{sign}{int}.{frac}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lin(terms: &[(&str, i128)], c: i128) -> Poly {
        let mut p = Poly::constant(Rational::int(c));
        for (n, k) in terms {
            p += Poly::var(n).scale(Rational::int(*k));
        }
        p
    }

    #[test]
    fn fractions_print_as_decimals_rounded_up() {
        assert_eq!(number(Rational::new(65, 2)), "32.5");
        assert_eq!(number(Rational::new(12527, 128)), "97.87");
        assert_eq!(number(Rational::new(561, 32)), "17.54");
        assert_eq!(number(Rational::new(1, 128)), "0.007813");
        assert_eq!(number(Rational::new(1, 3)), "0.3334");
        assert_eq!(number(Rational::new(-1, 3)), "-0.3333");
        assert_eq!(number(Rational::int(7)), "7");
        // Tiny coefficients keep four significant digits, rounded up (they
        // printed as 0.000000000001, a trillion times 2^-60).
        assert_eq!(number(Rational::new(1, 1 << 40)), "0.0000000000009095");
        assert_eq!(
            number(Rational::new(1, 1 << 60)),
            "0.0000000000000000008674"
        );
        assert_eq!(
            number(Rational::new(1, 10i128.pow(30))),
            "0.000000000000000000000000000001"
        );
        assert_eq!(
            number(Rational::new(1, 10i128.pow(37) + 1)),
            format!("1/{}", 10i128.pow(37) + 1)
        );
    }

    #[test]
    fn prints_like_the_papers() {
        let b = BoundExpr::new(
            Rational::int(14),
            vec![Term {
                coef: Rational::int(32),
                factors: vec![lin(&[("h", 1)], 1)],
            }],
        )
        .unwrap();
        assert_eq!(b.to_string(), "14 + 32·(h + 1)");
        let b = BoundExpr::new(
            Rational::int(9),
            vec![
                Term {
                    coef: Rational::int(64),
                    factors: vec![lin(&[("N", 1)], 0)],
                },
                Term {
                    coef: Rational::int(85),
                    factors: vec![lin(&[("N", 1)], 0), lin(&[("M", 1)], 0)],
                },
            ],
        )
        .unwrap();
        assert_eq!(b.to_string(), "9 + 85·max(0, M)·max(0, N) + 64·max(0, N)");
        let at = BTreeMap::from([("N".to_string(), 3.0), ("M".to_string(), 2.0)]);
        assert_eq!(b.eval(&at), Some(9.0 + 85.0 * 6.0 + 64.0 * 3.0));
        // max(0, ·) on each factor.
        let neg = BTreeMap::from([("N".to_string(), -3.0), ("M".to_string(), 2.0)]);
        assert_eq!(b.eval(&neg), Some(9.0));
        assert_eq!(b.to_poly().unwrap().to_string(), "85·M·N + 64·N + 9");
        assert_eq!(b.assumptions(), vec!["M ≥ 0", "N ≥ 0"]);
    }

    #[test]
    fn merges_equal_terms() {
        let t = |c| Term {
            coef: Rational::int(c),
            factors: vec![lin(&[("w", 1)], 0)],
        };
        let b = BoundExpr::new(Rational::ZERO, vec![t(100), t(77)]).unwrap();
        assert_eq!(b.to_string(), "177·max(0, w)");
        let cube = BoundExpr::new(
            Rational::ZERO,
            vec![Term {
                coef: Rational::int(13),
                factors: vec![lin(&[("n", 1)], 0); 3],
            }],
        )
        .unwrap();
        assert_eq!(cube.to_string(), "13·max(0, n)³");
        assert_eq!(
            b.scaled(Rational::int(2)).unwrap().to_string(),
            "354·max(0, w)"
        );
    }

    #[test]
    fn launch_dimensions_and_logarithms_print_bare_and_logarithms_evaluate() {
        let b = BoundExpr::new(
            Rational::int(14),
            vec![
                Term {
                    coef: Rational::int(16),
                    factors: vec![lin(&[("log2(n)", 1)], 1)],
                },
                Term {
                    coef: Rational::int(2),
                    factors: vec![lin(&[("blockDim.x", 1)], 0)],
                },
            ],
        )
        .unwrap();
        assert_eq!(b.to_string(), "14 + 16·(log2(n) + 1) + 2·blockDim.x");
        let at = BTreeMap::from([("n".to_string(), 1000.0), ("blockDim.x".to_string(), 32.0)]);
        // ⌊log2 1000⌋ = 9.
        assert_eq!(b.eval(&at), Some(14.0 + 64.0 + 16.0 * 10.0));
        let tiny = BTreeMap::from([("n".to_string(), -7.0), ("blockDim.x".to_string(), 1.0)]);
        assert_eq!(b.eval(&tiny), Some(14.0 + 2.0 + 16.0));
    }

    #[test]
    fn arithmetic_past_i128_is_no_bound_not_a_wrapped_number() {
        // A user metric weighing 0.001, 0.003 and 0.002 per event: LP
        // solutions whose denominators pass 2^60, and the block time
        // W/4 + S of 8 warps wrapped around to about −7.5. Here the
        // denominators are near 2^64 and coprime: their sum needs 2^128.
        let (d1, d2) = ((1i128 << 64) + 1, (1i128 << 64) - 59);
        let w = BoundExpr::new(
            Rational::new(1, d1),
            vec![Term {
                coef: Rational::new(3, d1),
                factors: vec![lin(&[("n", 1)], 0)],
            }],
        )
        .unwrap();
        let s = BoundExpr::new(Rational::new(1, d2), Vec::new()).unwrap();
        let time = w
            .to_poly()
            .and_then(|p| p.checked_scale(Rational::new(8, 4)))
            .and_then(|p| p.checked_add(&s.to_poly().unwrap()));
        assert_eq!(time, None);
        assert_eq!(w.scaled(Rational::int(i128::MAX / 2)), None);
        let many = vec![
            Term {
                coef: Rational::new(1, i128::MAX / 3),
                factors: vec![lin(&[("n", 1)], 0)],
            },
            Term {
                coef: Rational::new(1, i128::MAX / 5),
                factors: vec![lin(&[("n", 1)], 0)],
            },
        ];
        assert_eq!(BoundExpr::new(Rational::ZERO, many), None);
    }

    proptest::proptest! {
        /// Coefficients driven to the edges of `i128`: every derived form
        /// is exact or absent, never wrapped (its value at a point agrees
        /// with the parts' in floating point).
        #[test]
        fn derived_bounds_are_exact_or_absent(
            c in proptest::num::i128::ANY, d in 1i128..,
            k in proptest::num::i128::ANY, e in 1i128..,
            scale in 0i128..=1 << 40,
        ) {
            let Some(a) = Rational::checked_new(c.saturating_abs(), d) else { return Ok(()) };
            let Some(b) = Rational::checked_new(k.saturating_abs(), e) else { return Ok(()) };
            let Some(bound) = BoundExpr::new(
                a,
                vec![Term { coef: b, factors: vec![lin(&[("n", 1)], 0)] }],
            ) else { return Ok(()) };
            let at = BTreeMap::from([("n".to_string(), 3.0)]);
            let value = bound.eval(&at).unwrap();
            if let Some(p) = bound.to_poly().and_then(|p| p.checked_scale(Rational::int(scale))) {
                let got = p.eval_f64(&at).unwrap();
                let want = value * scale as f64;
                proptest::prop_assert!((got - want).abs() <= 1e-9 * want.abs().max(1.0), "{got} vs {want}");
                proptest::prop_assert!(got >= 0.0);
            }
            if let Some(l) = bound.scaled(Rational::int(scale)) {
                let got = l.eval(&at).unwrap();
                proptest::prop_assert!(got >= 0.0 && (got - value * scale as f64).abs() <= 1e-9 * got.abs().max(1.0));
            }
        }
    }
}
