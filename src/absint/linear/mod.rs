//! Linear constraints over symbols: a small relational abstract domain.
//!
//! A [`Constraints`] value is a conjunction of facts `e ≥ 0` with `e` a
//! [`LinExpr`] (an affine form over [`Sym`]s with exact [`Rational`]
//! coefficients). Questions about it — feasibility, entailment, the bounds
//! of an expression, projection — are decided exactly over the rationals by
//! Fourier–Motzkin elimination.
//!
//! Every operation is bounded: one elimination keeps at most [`MAX_ROWS`]
//! rows after each step, forms at most [`MAX_COMBINATIONS`] pairwise
//! combinations in all, and drops rows whose numbers exceed
//! [`MAX_MAGNITUDE`]. Dropping a row only weakens the system, so when a cap
//! is hit the answers stay sound (the set over-approximates the states):
//! a feasibility check may say "feasible", an entailment check may say "not
//! entailed", bounds may come out looser, and a projection may keep fewer
//! facts — never the reverse.
//!
//! Facts are stored normalized: the coefficients are coprime integers (the
//! fact is divided by their gcd, which also fixes the leading coefficient
//! up to sign, the only freedom an inequality has), the constant is
//! rational, at most one fact is kept per direction (the tightest), and
//! trivially true facts are dropped. A trivially false fact, or two
//! opposite facts that contradict each other, make the set bottom. All
//! operations are deterministic.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use crate::poly::Rational;

mod expr;
mod rows;

pub use expr::LinExpr;
use rows::{eliminate_var, fourier_motzkin, tidy, Row};

/// A symbol: a program variable or parameter, named by the caller.
pub type Sym = u32;

/// The most rows one Fourier–Motzkin elimination keeps after each step;
/// beyond it the most complex rows (most symbols, largest coefficients) are
/// dropped.
pub const MAX_ROWS: usize = 500;

/// The most pairwise row combinations one Fourier–Motzkin elimination forms
/// in all; once spent, later steps drop the rows that mention the
/// eliminated symbol instead of combining them.
pub const MAX_COMBINATIONS: usize = 50_000;

/// The largest absolute coefficient, constant numerator and constant
/// denominator a row may have; rows beyond it are dropped. Keeps all
/// intermediate `i128` arithmetic far from overflow.
pub const MAX_MAGNITUDE: i128 = 1 << 40;

/// A conjunction of facts `e ≥ 0` over rational-valued symbols, or bottom
/// (the empty set). See the module documentation for the normal form and
/// the caps.
///
/// The default value is top (no facts). Equality is syntactic (on the
/// normalized facts); use [`Constraints::entails`] for semantic inclusion.
#[derive(Clone, PartialEq, Eq, Hash, Debug, Default)]
pub struct Constraints {
    /// Normalized facts, sorted, at most one per direction.
    facts: Vec<LinExpr>,
    /// Known to be empty (then `facts` is empty).
    bottom: bool,
}

impl Constraints {
    /// No facts: every point.
    pub fn top() -> Constraints {
        Constraints::default()
    }

    /// The empty set.
    pub fn bottom() -> Constraints {
        Constraints {
            facts: Vec::new(),
            bottom: true,
        }
    }

    /// Whether the set is known to be empty (a cheap flag: a set can be
    /// infeasible without it, see [`Constraints::is_feasible`]).
    pub fn is_bottom(&self) -> bool {
        self.bottom
    }

    /// Whether the set has no facts and is not bottom.
    pub fn is_top(&self) -> bool {
        !self.bottom && self.facts.is_empty()
    }

    /// The normalized facts `e ≥ 0`, each `e` listed once, sorted.
    pub fn facts(&self) -> &[LinExpr] {
        &self.facts
    }

    /// The symbols the facts mention.
    pub fn vars(&self) -> BTreeSet<Sym> {
        self.facts.iter().flat_map(|f| f.vars()).collect()
    }

    /// Whether some fact mentions `s`.
    pub fn mentions(&self, s: Sym) -> bool {
        self.facts.iter().any(|f| f.coeffs.contains_key(&s))
    }

    fn set_bottom(&mut self) {
        self.facts.clear();
        self.bottom = true;
    }

    /// Inserts a normalized fact with at least one symbol.
    fn insert(&mut self, f: LinExpr) {
        if self.bottom {
            return;
        }
        let constant = match self.facts.binary_search_by(|g| g.coeffs.cmp(&f.coeffs)) {
            Ok(i) => {
                if f.constant >= self.facts[i].constant {
                    return;
                }
                self.facts[i].constant = f.constant;
                f.constant
            }
            Err(i) => {
                let c = f.constant;
                self.facts.insert(i, f.clone());
                c
            }
        };
        let neg: BTreeMap<Sym, Rational> = f.coeffs.iter().map(|(&s, &c)| (s, -c)).collect();
        if let Ok(j) = self.facts.binary_search_by(|g| g.coeffs.cmp(&neg)) {
            if constant
                .checked_add(self.facts[j].constant)
                .is_some_and(|sum| sum < Rational::ZERO)
            {
                self.set_bottom();
            }
        }
    }

    fn add_row(&mut self, r: Row) {
        if r.coeffs.is_empty() {
            if r.is_contradiction() {
                self.set_bottom();
            }
        } else {
            self.insert(r.to_expr());
        }
    }

    /// Adds the fact `e ≥ 0`. A fact too large to normalize within
    /// [`MAX_MAGNITUDE`] is dropped (sound: the set only gets larger).
    pub fn add_ge0(&mut self, e: LinExpr) {
        if self.bottom {
            return;
        }
        if let Some(r) = Row::from_expr(&e, false) {
            self.add_row(r);
        }
    }

    /// Adds the fact `e = 0` (as `e ≥ 0` and `−e ≥ 0`).
    pub fn add_eq0(&mut self, e: LinExpr) {
        let n = e.neg();
        self.add_ge0(e);
        self.add_ge0(n);
    }

    fn rows(&self) -> Vec<Row> {
        self.facts
            .iter()
            .filter_map(|f| Row::from_expr(f, false))
            .collect()
    }

    fn replace_rows(&mut self, rows: Vec<Row>) {
        self.facts.clear();
        for r in rows {
            self.add_row(r);
        }
    }

    /// Whether some rational point satisfies every fact. Exact, unless a
    /// cap is hit, in which case it may answer `true` for an empty set.
    pub fn is_feasible(&self) -> bool {
        !self.bottom && fourier_motzkin(self.rows(), &|_| true).is_some()
    }

    /// Whether every rational point of the set satisfies `e ≥ 0` (an empty
    /// set entails everything). Exact, unless a cap is hit, in which case it
    /// may answer `false` for an entailed fact — never `true` for one that
    /// is not.
    pub fn entails_ge0(&self, e: &LinExpr) -> bool {
        if self.bottom {
            return true;
        }
        let Some(goal) = Row::from_expr(e, false) else {
            return false;
        };
        if goal.coeffs.is_empty() {
            return goal.constant >= Rational::ZERO || !self.is_feasible();
        }
        let g = goal.to_expr();
        if let Ok(i) = self.facts.binary_search_by(|f| f.coeffs.cmp(&g.coeffs)) {
            if self.facts[i].constant <= g.constant {
                return true;
            }
        }
        // Entailed iff the set together with `−e > 0` is empty.
        let mut rows = self.rows();
        rows.push(Row {
            coeffs: goal.negated_coeffs(),
            constant: -goal.constant,
            strict: true,
        });
        fourier_motzkin(rows, &|_| true).is_none()
    }

    /// Whether every rational point of the set satisfies `e = 0`.
    pub fn entails_eq0(&self, e: &LinExpr) -> bool {
        self.entails_ge0(e) && self.entails_ge0(&e.neg())
    }

    /// Whether `self ⊆ other`: every fact of `other` is entailed (bottom is
    /// included in everything; only an empty set is included in bottom).
    pub fn entails(&self, other: &Constraints) -> bool {
        if other.bottom {
            return !self.is_feasible();
        }
        other.facts.iter().all(|f| self.entails_ge0(f))
    }

    /// The minimum and maximum of `e` over the set, `None` where unbounded.
    /// Exact over the rationals unless a cap is hit (then possibly looser).
    /// `(None, None)` for an empty set.
    pub fn bounds(&self, e: &LinExpr) -> (Option<Rational>, Option<Rational>) {
        // With every symbol eliminated, the bounds are constants.
        let (lower, upper) = self.bounds_over(e, &|_| false);
        let lo = lower.iter().map(|l| l.constant).max();
        let hi = upper.iter().map(|u| u.constant).min();
        match (lo, hi) {
            (Some(l), Some(h)) if l > h => (None, None),
            _ => (lo, hi),
        }
    }

    /// Linear lower and upper bounds of `e` over the set in terms of the
    /// symbols `keep` accepts: every other symbol is eliminated, and each
    /// remaining fact on `e` gives `e ≥ L` or `e ≤ U` with `L`, `U` over
    /// kept symbols. Empty lists where there is no such bound (or the set
    /// is empty).
    pub fn bounds_over(
        &self,
        e: &LinExpr,
        keep: &dyn Fn(Sym) -> bool,
    ) -> (Vec<LinExpr>, Vec<LinExpr>) {
        if self.bottom {
            return (Vec::new(), Vec::new());
        }
        let mut used = self.vars();
        used.extend(e.vars());
        let mut t = Sym::MAX;
        while used.contains(&t) {
            t -= 1;
        }
        let Some(def) = LinExpr::var(t).checked_add_scaled(e, -Rational::ONE) else {
            return (Vec::new(), Vec::new());
        };
        let (Some(up), Some(down)) = (
            Row::from_expr(&def, false),
            Row::from_expr(&def.neg(), false),
        ) else {
            return (Vec::new(), Vec::new());
        };
        let mut rows = self.rows();
        rows.push(up);
        rows.push(down);
        let Some(rows) = fourier_motzkin(rows, &|s| s != t && !keep(s)) else {
            return (Vec::new(), Vec::new());
        };
        let (mut lower, mut upper) = (Vec::new(), Vec::new());
        for r in &rows {
            let a = r.coeff(t);
            if a == 0 {
                continue;
            }
            // a·t + rest ≥ 0: t ≥ −rest/a (a > 0) or t ≤ rest/|a| (a < 0).
            let mut rest = r.to_expr();
            rest.coeffs.remove(&t);
            let k = Rational::new(1, a.abs());
            if a > 0 {
                lower.push(rest.scale(-k));
            } else {
                upper.push(rest.scale(k));
            }
        }
        (lower, upper)
    }

    /// Eliminates `s`: the result constrains the other symbols exactly as
    /// the projection of the set does (over the rationals, unless a cap is
    /// hit), and says nothing about `s`.
    pub fn project_out(&mut self, s: Sym) {
        if self.bottom || !self.mentions(s) {
            return;
        }
        let mut budget = MAX_COMBINATIONS;
        match tidy(self.rows()).and_then(|rows| eliminate_var(rows, s, &mut budget)) {
            Some(rows) => self.replace_rows(rows),
            None => self.set_bottom(),
        }
    }

    /// Forgets everything about `s` (the same as [`Constraints::project_out`]).
    pub fn forget(&mut self, s: Sym) {
        self.project_out(s);
    }

    /// The state after `s := e`. When `e` mentions `s` (an invertible
    /// update like `s := s + 3` or `s := 2·s`), the old value is expressed
    /// through the new one and substituted into every fact; otherwise `s`
    /// is projected out and `s = e` added.
    pub fn assign(&mut self, s: Sym, e: &LinExpr) {
        if self.bottom {
            return;
        }
        let c = e.coeff(s);
        if c.is_zero() {
            self.project_out(s);
            if let Some(d) = LinExpr::var(s).checked_add_scaled(e, -Rational::ONE) {
                self.add_eq0(d);
            }
            return;
        }
        // s_new = c·s_old + rest, so s_old = (s_new − rest)/c.
        let mut rest = e.clone();
        rest.coeffs.remove(&s);
        let inverse = LinExpr::zero()
            .checked_add_scaled(&LinExpr::var(s), Rational::new(c.den(), c.num()))
            .and_then(|x| x.checked_add_scaled(&rest, -Rational::new(c.den(), c.num())));
        let Some(inverse) = inverse else {
            self.project_out(s);
            return;
        };
        let old = std::mem::take(&mut self.facts);
        for f in old {
            // A fact that overflows is dropped (sound).
            if let Some(g) = f.checked_substitute(s, &inverse) {
                self.add_ge0(g);
            }
        }
    }

    /// The conjunction of both sets.
    pub fn meet(&self, other: &Constraints) -> Constraints {
        if other.bottom {
            return Constraints::bottom();
        }
        let mut out = self.clone();
        for f in &other.facts {
            out.insert(f.clone());
        }
        out
    }

    /// Whether a stored fact states `f ≥ 0` or something tighter (same
    /// coefficients, smaller constant): a syntactic entailment check.
    fn has_tighter(&self, f: &LinExpr) -> bool {
        self.facts
            .binary_search_by(|g| g.coeffs.cmp(&f.coeffs))
            .is_ok_and(|i| self.facts[i].constant <= f.constant)
    }

    /// A convex over-approximation of the union. Each fact `f ≥ 0` of one
    /// side is kept when the other side entails it, and otherwise relaxed
    /// to `f − m ≥ 0` where `m < 0` is the minimum of `f` over the other
    /// side (dropped when unbounded) — so `{x = 0} ⊔ {x = 1}` is
    /// `{0 ≤ x ≤ 1}`. An empty side returns the other.
    pub fn join(&self, other: &Constraints) -> Constraints {
        if !self.is_feasible() {
            return if other.is_feasible() {
                other.clone()
            } else {
                Constraints::bottom()
            };
        }
        if !other.is_feasible() {
            return self.clone();
        }
        let mut out = Constraints::top();
        for (mine, theirs) in [(self, other), (other, self)] {
            for f in &mine.facts {
                if theirs.has_tighter(f) {
                    out.insert(f.clone());
                    continue;
                }
                match theirs.bounds(f).0 {
                    Some(m) if m >= Rational::ZERO => out.insert(f.clone()),
                    Some(m) => {
                        let mut g = f.clone();
                        if let Some(c) = g.constant.checked_add(-m) {
                            g.constant = c;
                            out.add_ge0(g);
                        }
                    }
                    None => {}
                }
            }
        }
        out
    }

    /// Standard widening for loop heads: the facts of `self` that `next`
    /// entails. The result contains both sets, and along any chain
    /// `xₖ₊₁ = xₖ.widen(yₖ)` the facts only ever shrink (once past bottom),
    /// so the chain stabilizes.
    ///
    /// Only facts already present in `self` can survive, so a relational
    /// invariant that the loop entry does not state (`n − i ≥ 0` for
    /// `i = 0; i < n; i++` entered with `i = 0 ∧ n ≥ 1`) is lost when the
    /// entry state is widened directly. Delay widening: join for the first
    /// iteration(s), then widen; the join states it (see the tests).
    pub fn widen(&self, next: &Constraints) -> Constraints {
        if self.bottom {
            return next.clone();
        }
        if !next.is_feasible() {
            return self.clone();
        }
        let mut out = Constraints::top();
        for f in &self.facts {
            if next.entails_ge0(f) {
                out.insert(f.clone());
            }
        }
        out
    }

    /// Tightens every fact for integer-valued symbols: the coefficients
    /// are already coprime integers, so `a·x + c ≥ 0` becomes
    /// `a·x + ⌊c⌋ ≥ 0` (e.g. `2x − 1 ≥ 0`, stored as `x − 1/2 ≥ 0`,
    /// becomes `x − 1 ≥ 0`). Only valid when every symbol takes integer
    /// values; callers decide.
    pub fn tighten_int(&mut self) {
        if self.bottom {
            return;
        }
        let old = std::mem::take(&mut self.facts);
        for mut f in old {
            if f.coeffs.values().all(|c| c.is_integer()) {
                f.constant = Rational::int(f.constant.floor());
            }
            self.add_ge0(f);
        }
    }

    /// The set printed with the given symbol names, e.g.
    /// `{i >= 0, n - i - 1 >= 0}`; `⊥` for bottom.
    pub fn to_string_with(&self, name: impl Fn(Sym) -> String) -> String {
        if self.bottom {
            return "⊥".to_string();
        }
        let facts: Vec<String> = self
            .facts
            .iter()
            .map(|f| format!("{} >= 0", f.to_string_with(&name)))
            .collect();
        format!("{{{}}}", facts.join(", "))
    }
}

impl fmt::Display for Constraints {
    /// Prints symbol `s` as `v{s}`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_string_with(|s| format!("v{s}")))
    }
}

#[cfg(test)]
mod tests;
