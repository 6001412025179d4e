//! Potentials: `q₀ + Σ qᵢ·bᵢ` with each coefficient an affine expression
//! over LP variables, stored sparsely (most bases carry nothing at most
//! program points).

use std::collections::BTreeMap;

use super::lp::Lin;
use crate::poly::Rational;

/// A potential annotation.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Pot {
    /// The constant potential `q₀`.
    pub konst: Lin,
    /// The coefficient of each base that may carry potential.
    pub coef: BTreeMap<usize, Lin>,
}

impl Pot {
    /// Adds a constant cost, as the least simple rational at least `c`
    /// (exactly `c` for the integer and binary-fraction costs of the
    /// built-in metrics; a cost that is not a finite number makes the
    /// potential unusable, see [`Lin::overflow`]).
    pub fn add_const(&mut self, c: f64) {
        self.konst.add_constant(exact_cost(c));
    }

    /// `coef[i] += k·q`.
    pub fn add(&mut self, i: usize, q: &Lin, k: Rational) {
        if k.is_zero() {
            return;
        }
        let e = self.coef.entry(i).or_default();
        e.add_scaled(q, k);
        if e.is_zero() {
            self.coef.remove(&i);
        }
    }

    /// The bases with a coefficient.
    pub fn support(&self) -> impl Iterator<Item = usize> + '_ {
        self.coef.keys().copied()
    }
}

/// A cost as an exact rational no smaller than it: costs only ever add to
/// what a potential must pay, so rounding up keeps a bound sound.
pub fn exact_cost(c: f64) -> Option<Rational> {
    if c.fract() == 0.0 && c.abs() < 1e15 {
        return Some(Rational::int(c as i128));
    }
    Rational::at_least(c, 0.0, 1e-12 * (1.0 + c.abs()), 1 << 30)
}
