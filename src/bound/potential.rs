//! Potentials: `q₀ + Σ qᵢ·bᵢ` with each coefficient an affine expression
//! over LP variables, stored sparsely (most bases carry nothing at most
//! program points).

use std::collections::BTreeMap;

use super::lp::Lin;

/// A potential annotation.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Pot {
    /// The constant potential `q₀`.
    pub konst: Lin,
    /// The coefficient of each base that may carry potential.
    pub coef: BTreeMap<usize, Lin>,
}

impl Pot {
    /// Adds a constant cost.
    pub fn add_const(&mut self, c: f64) {
        self.konst.c += c;
    }

    /// `coef[i] += k·q`.
    pub fn add(&mut self, i: usize, q: &Lin, k: f64) {
        if k == 0.0 {
            return;
        }
        let e = self.coef.entry(i).or_default();
        e.add_scaled(q, k);
        if e.terms.is_empty() && e.c == 0.0 {
            self.coef.remove(&i);
        }
    }

    /// The bases with a coefficient.
    pub fn support(&self) -> impl Iterator<Item = usize> + '_ {
        self.coef.keys().copied()
    }
}
