//! Linear expressions: affine forms over symbols with exact rational
//! coefficients.

use std::collections::BTreeMap;
use std::fmt;

use crate::poly::Rational;

use super::Sym;

/// An affine form `Σ cᵢ·sᵢ + constant` with exact rational coefficients.
///
/// Zero coefficients are never stored, so structural equality is equality
/// of forms. The arithmetic methods use [`Rational`]'s operators (which
/// assume values far from the `i128` range); the `checked_` variants return
/// `None` on overflow instead.
#[derive(Clone, PartialEq, Eq, Hash, Debug, PartialOrd, Ord, Default)]
pub struct LinExpr {
    /// The coefficient of each symbol; never zero.
    pub coeffs: BTreeMap<Sym, Rational>,
    /// The constant term.
    pub constant: Rational,
}

impl LinExpr {
    /// The zero form.
    pub fn zero() -> LinExpr {
        LinExpr::default()
    }

    /// The constant form `c`.
    pub fn constant(c: Rational) -> LinExpr {
        LinExpr {
            coeffs: BTreeMap::new(),
            constant: c,
        }
    }

    /// The constant form `n`.
    pub fn int(n: i128) -> LinExpr {
        LinExpr::constant(Rational::int(n))
    }

    /// The form `s`.
    pub fn var(s: Sym) -> LinExpr {
        LinExpr::term(s, Rational::ONE)
    }

    /// The form `c·s` (zero when `c` is zero).
    pub fn term(s: Sym, c: Rational) -> LinExpr {
        let mut e = LinExpr::zero();
        if !c.is_zero() {
            e.coeffs.insert(s, c);
        }
        e
    }

    /// The coefficient of `s` (zero when absent).
    pub fn coeff(&self, s: Sym) -> Rational {
        self.coeffs.get(&s).copied().unwrap_or(Rational::ZERO)
    }

    /// Whether the form mentions no symbol.
    pub fn is_constant(&self) -> bool {
        self.coeffs.is_empty()
    }

    /// The symbols with a non-zero coefficient, in increasing order.
    pub fn vars(&self) -> impl Iterator<Item = Sym> + '_ {
        self.coeffs.keys().copied()
    }

    /// `self + k·o`.
    pub fn add_scaled(&self, o: &LinExpr, k: Rational) -> LinExpr {
        let mut r = self.clone();
        if k.is_zero() {
            return r;
        }
        for (&s, &c) in &o.coeffs {
            let v = r.coeff(s) + c * k;
            if v.is_zero() {
                r.coeffs.remove(&s);
            } else {
                r.coeffs.insert(s, v);
            }
        }
        r.constant = r.constant + o.constant * k;
        r
    }

    /// `self + k·o`, or `None` on overflow.
    pub fn checked_add_scaled(&self, o: &LinExpr, k: Rational) -> Option<LinExpr> {
        let mut r = self.clone();
        if k.is_zero() {
            return Some(r);
        }
        for (&s, &c) in &o.coeffs {
            let v = r.coeff(s).checked_add(c.checked_mul(k)?)?;
            if v.is_zero() {
                r.coeffs.remove(&s);
            } else {
                r.coeffs.insert(s, v);
            }
        }
        r.constant = r.constant.checked_add(o.constant.checked_mul(k)?)?;
        Some(r)
    }

    /// `self + o`.
    pub fn add(&self, o: &LinExpr) -> LinExpr {
        self.add_scaled(o, Rational::ONE)
    }

    /// `self − o`.
    pub fn sub(&self, o: &LinExpr) -> LinExpr {
        self.add_scaled(o, -Rational::ONE)
    }

    /// `k·self`.
    pub fn scale(&self, k: Rational) -> LinExpr {
        LinExpr::zero().add_scaled(self, k)
    }

    /// `−self`.
    pub fn neg(&self) -> LinExpr {
        self.scale(-Rational::ONE)
    }

    /// `self` with `s` replaced by `by`.
    pub fn substitute(&self, s: Sym, by: &LinExpr) -> LinExpr {
        let c = self.coeff(s);
        if c.is_zero() {
            return self.clone();
        }
        let mut r = self.clone();
        r.coeffs.remove(&s);
        r.add_scaled(by, c)
    }

    /// `self` with `s` replaced by `by`, or `None` on overflow.
    pub fn checked_substitute(&self, s: Sym, by: &LinExpr) -> Option<LinExpr> {
        let c = self.coeff(s);
        if c.is_zero() {
            return Some(self.clone());
        }
        let mut r = self.clone();
        r.coeffs.remove(&s);
        r.checked_add_scaled(by, c)
    }

    /// The value of the form when each symbol `s` has the value `env(s)`.
    pub fn eval(&self, env: impl Fn(Sym) -> Rational) -> Rational {
        self.coeffs
            .iter()
            .fold(self.constant, |acc, (&s, &c)| acc + c * env(s))
    }

    /// The form printed with the given symbol names, e.g. `n - i - 1`.
    pub fn to_string_with(&self, name: impl Fn(Sym) -> String) -> String {
        // Positive terms first, so `n - i - 1` rather than `-i + n - 1`.
        let mut out = String::new();
        let positive = self.coeffs.iter().filter(|(_, c)| **c > Rational::ZERO);
        let negative = self.coeffs.iter().filter(|(_, c)| **c < Rational::ZERO);
        for (&s, &c) in positive.chain(negative) {
            let negative = c < Rational::ZERO;
            if out.is_empty() {
                if negative {
                    out.push('-');
                }
            } else {
                out.push_str(if negative { " - " } else { " + " });
            }
            let a = c.abs();
            if a != Rational::ONE {
                out.push_str(&format!("{a}*"));
            }
            out.push_str(&name(s));
        }
        let k = self.constant;
        if out.is_empty() {
            out.push_str(&format!("{k}"));
        } else if k < Rational::ZERO {
            out.push_str(&format!(" - {}", k.abs()));
        } else if !k.is_zero() {
            out.push_str(&format!(" + {k}"));
        }
        out
    }
}

impl fmt::Display for LinExpr {
    /// Prints symbol `s` as `v{s}`: `v0 - v1 - 1`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_string_with(|s| format!("v{s}")))
    }
}
