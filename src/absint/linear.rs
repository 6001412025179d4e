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

fn gcd(a: i128, b: i128) -> i128 {
    let (mut a, mut b) = (a.abs(), b.abs());
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

fn fits(r: Rational) -> bool {
    r.num().abs() <= MAX_MAGNITUDE && r.den() <= MAX_MAGNITUDE
}

// ---------------------------------------------------------------------------
// Linear expressions
// ---------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------
// Rows: the normalized, integer-coefficient form Fourier–Motzkin works on
// ---------------------------------------------------------------------------

/// `Σ coeffs·s + constant ≥ 0` (or `> 0` when `strict`), with coprime
/// integer coefficients sorted by symbol and no zero coefficient.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Row {
    coeffs: Vec<(Sym, i128)>,
    constant: Rational,
    strict: bool,
}

impl Row {
    /// Divides by the gcd of the coefficients; `None` when a number is
    /// beyond [`MAX_MAGNITUDE`] or the arithmetic overflows. A row without
    /// symbols is returned as is.
    fn normalized(mut coeffs: Vec<(Sym, i128)>, constant: Rational, strict: bool) -> Option<Row> {
        coeffs.retain(|&(_, c)| c != 0);
        if coeffs.is_empty() {
            return Some(Row {
                coeffs,
                constant,
                strict,
            });
        }
        let g = coeffs.iter().fold(0, |g, &(_, c)| gcd(g, c));
        let constant = if g > 1 {
            for (_, c) in &mut coeffs {
                *c /= g;
            }
            constant.checked_mul(Rational::new(1, g))?
        } else {
            constant
        };
        if coeffs.iter().any(|&(_, c)| c.abs() > MAX_MAGNITUDE) || !fits(constant) {
            return None;
        }
        Some(Row {
            coeffs,
            constant,
            strict,
        })
    }

    /// `e ≥ 0` (or `e > 0`) normalized; `None` on overflow.
    fn from_expr(e: &LinExpr, strict: bool) -> Option<Row> {
        let mut l: i128 = 1;
        for c in e.coeffs.values() {
            l = (l / gcd(l, c.den())).checked_mul(c.den())?;
        }
        let mut coeffs = Vec::with_capacity(e.coeffs.len());
        for (&s, c) in &e.coeffs {
            coeffs.push((s, c.num().checked_mul(l / c.den())?));
        }
        let constant = e.constant.checked_mul(Rational::int(l))?;
        Row::normalized(coeffs, constant, strict)
    }

    /// The form of the row (its strictness aside).
    fn to_expr(&self) -> LinExpr {
        LinExpr {
            coeffs: self
                .coeffs
                .iter()
                .map(|&(s, c)| (s, Rational::int(c)))
                .collect(),
            constant: self.constant,
        }
    }

    /// The coefficient of `s`.
    fn coeff(&self, s: Sym) -> i128 {
        match self.coeffs.binary_search_by_key(&s, |&(t, _)| t) {
            Ok(i) => self.coeffs[i].1,
            Err(_) => 0,
        }
    }

    /// For a row without symbols: whether it is false.
    fn is_contradiction(&self) -> bool {
        self.constant < Rational::ZERO || (self.strict && self.constant.is_zero())
    }

    /// The coefficients negated.
    fn negated_coeffs(&self) -> Vec<(Sym, i128)> {
        self.coeffs.iter().map(|&(s, c)| (s, -c)).collect()
    }

    /// `b·p + a·n` normalized (`a, b > 0`); `None` on overflow.
    fn combine(p: &Row, b: i128, n: &Row, a: i128) -> Option<Row> {
        let mut coeffs = Vec::with_capacity(p.coeffs.len() + n.coeffs.len());
        let (mut i, mut j) = (0, 0);
        while i < p.coeffs.len() || j < n.coeffs.len() {
            let (s, v) = match (p.coeffs.get(i), n.coeffs.get(j)) {
                (Some(&(s, x)), Some(&(t, y))) if s == t => {
                    i += 1;
                    j += 1;
                    (s, x.checked_mul(b)?.checked_add(y.checked_mul(a)?)?)
                }
                (Some(&(s, x)), Some(&(t, _))) if s < t => {
                    i += 1;
                    (s, x.checked_mul(b)?)
                }
                (Some(&(s, x)), None) => {
                    i += 1;
                    (s, x.checked_mul(b)?)
                }
                (_, Some(&(t, y))) => {
                    j += 1;
                    (t, y.checked_mul(a)?)
                }
                (None, None) => break,
            };
            if v != 0 {
                coeffs.push((s, v));
            }
        }
        let constant = p
            .constant
            .checked_mul(Rational::int(b))?
            .checked_add(n.constant.checked_mul(Rational::int(a))?)?;
        Row::normalized(coeffs, constant, p.strict || n.strict)
    }

    /// Order for dropping rows when over [`MAX_ROWS`]: simplest first.
    fn complexity(&self) -> (usize, i128) {
        let max = self.coeffs.iter().map(|&(_, c)| c.abs()).max().unwrap_or(0);
        (self.coeffs.len(), max)
    }
}

/// Drops rows without symbols (`None` when one of them is false), keeps
/// the tightest row per direction, detects two opposite rows that
/// contradict each other (`None`), caps the count at [`MAX_ROWS`], and
/// sorts by coefficients.
fn tidy(rows: Vec<Row>) -> Option<Vec<Row>> {
    let mut out = Vec::with_capacity(rows.len());
    for r in rows {
        if r.coeffs.is_empty() {
            if r.is_contradiction() {
                return None;
            }
        } else {
            out.push(r);
        }
    }
    // Within one direction, the smallest constant is the tightest; at equal
    // constants a strict row is tighter.
    out.sort_by(|a, b| {
        a.coeffs
            .cmp(&b.coeffs)
            .then(a.constant.cmp(&b.constant))
            .then(b.strict.cmp(&a.strict))
    });
    out.dedup_by(|later, earlier| later.coeffs == earlier.coeffs);
    for r in &out {
        let neg = r.negated_coeffs();
        if let Ok(j) = out.binary_search_by(|o| o.coeffs.cmp(&neg)) {
            let o = &out[j];
            if let Some(sum) = r.constant.checked_add(o.constant) {
                if sum < Rational::ZERO || (sum.is_zero() && (r.strict || o.strict)) {
                    return None;
                }
            }
        }
    }
    if out.len() > MAX_ROWS {
        out.sort_by(|a, b| {
            a.complexity()
                .cmp(&b.complexity())
                .then(a.coeffs.cmp(&b.coeffs))
        });
        out.truncate(MAX_ROWS);
        out.sort_by(|a, b| a.coeffs.cmp(&b.coeffs));
    }
    Some(out)
}

/// For tidy (sorted) rows: the index of each non-strict row whose exact
/// opposite is also present, i.e. one half of an equality, with the index
/// of that opposite.
fn equality_pairs(rows: &[Row]) -> Vec<(usize, usize)> {
    let mut pairs = Vec::new();
    for (i, r) in rows.iter().enumerate() {
        if r.strict {
            continue;
        }
        let neg = r.negated_coeffs();
        if let Ok(j) = rows.binary_search_by(|o| o.coeffs.cmp(&neg)) {
            let o = &rows[j];
            if !o.strict && o.constant == -r.constant {
                pairs.push((i, j));
            }
        }
    }
    pairs
}

/// The next symbol to eliminate among those `elim` accepts: one defined by
/// an equality if any (substitution never adds rows), else the one whose
/// elimination adds the fewest rows; ties go to the smallest symbol.
fn choose_var(rows: &[Row], elim: &dyn Fn(Sym) -> bool) -> Option<Sym> {
    let mut counts: BTreeMap<Sym, (usize, usize)> = BTreeMap::new();
    for r in rows {
        for &(s, c) in &r.coeffs {
            if elim(s) {
                let e = counts.entry(s).or_insert((0, 0));
                if c > 0 {
                    e.0 += 1;
                } else {
                    e.1 += 1;
                }
            }
        }
    }
    if counts.is_empty() {
        return None;
    }
    let mut eq_vars = BTreeSet::new();
    for (i, _) in equality_pairs(rows) {
        eq_vars.extend(rows[i].coeffs.iter().map(|&(s, _)| s));
    }
    let with_eq = counts
        .iter()
        .filter(|(s, _)| eq_vars.contains(s))
        .min_by_key(|(s, (p, n))| (p + n, **s));
    if let Some((&s, _)) = with_eq {
        return Some(s);
    }
    counts
        .iter()
        .min_by_key(|(s, (p, n))| ((p * n) as i128 - (p + n) as i128, **s))
        .map(|(&s, _)| s)
}

/// One elimination step: `rows` (tidy) with `v` eliminated, exactly unless
/// a cap is hit; `None` when the rows are found contradictory.
fn eliminate_var(rows: Vec<Row>, v: Sym, budget: &mut usize) -> Option<Vec<Row>> {
    // An equality mentioning `v` (the sparsest, then the first) defines it:
    // substitute instead of combining all pairs.
    let eq = equality_pairs(&rows)
        .into_iter()
        .filter(|&(i, _)| rows[i].coeff(v) != 0)
        .min_by_key(|&(i, _)| (rows[i].coeffs.len(), i));
    let mut keep = Vec::with_capacity(rows.len());
    if let Some((ei, ni)) = eq {
        let e = rows[ei].clone();
        let ne = rows[ni].clone();
        let ev = e.coeff(v);
        for (i, r) in rows.into_iter().enumerate() {
            if i == ei || i == ni {
                continue;
            }
            let rv = r.coeff(v);
            if rv == 0 {
                keep.push(r);
                continue;
            }
            let (q, qv) = if (rv > 0) != (ev > 0) {
                (&e, ev)
            } else {
                (&ne, -ev)
            };
            if let Some(x) = Row::combine(&r, qv.abs(), q, rv.abs()) {
                keep.push(x);
            }
        }
        return tidy(keep);
    }
    let mut pos = Vec::new();
    let mut neg = Vec::new();
    for r in rows {
        match r.coeff(v) {
            0 => keep.push(r),
            c if c > 0 => pos.push((c, r)),
            c => neg.push((-c, r)),
        }
    }
    'pairs: for (pa, p) in &pos {
        for (na, n) in &neg {
            if *budget == 0 {
                break 'pairs;
            }
            *budget -= 1;
            if let Some(x) = Row::combine(p, *na, n, *pa) {
                keep.push(x);
            }
        }
    }
    tidy(keep)
}

/// Eliminates every symbol `elim` accepts; `None` when the rows are found
/// contradictory (then they certainly are).
fn fourier_motzkin(rows: Vec<Row>, elim: &dyn Fn(Sym) -> bool) -> Option<Vec<Row>> {
    let mut rows = tidy(rows)?;
    let mut budget = MAX_COMBINATIONS;
    while let Some(v) = choose_var(&rows, elim) {
        rows = eliminate_var(rows, v, &mut budget)?;
    }
    Some(rows)
}

// ---------------------------------------------------------------------------
// Constraint sets
// ---------------------------------------------------------------------------

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
mod tests {
    use super::*;

    const I: Sym = 0;
    const N: Sym = 1;
    const X: Sym = 2;
    const Y: Sym = 3;

    fn r(n: i128) -> Rational {
        Rational::int(n)
    }

    fn v(s: Sym) -> LinExpr {
        LinExpr::var(s)
    }

    fn k(n: i128) -> LinExpr {
        LinExpr::int(n)
    }

    /// `Σ cᵢ·sᵢ + c`.
    fn lin(terms: &[(i128, Sym)], c: i128) -> LinExpr {
        terms
            .iter()
            .fold(k(c), |e, &(a, s)| e.add(&LinExpr::term(s, r(a))))
    }

    fn name(s: Sym) -> String {
        match s {
            I => "i".into(),
            N => "n".into(),
            X => "x".into(),
            Y => "y".into(),
            _ => format!("v{s}"),
        }
    }

    /// `0 ≤ i ≤ n − 1`.
    fn loop_body() -> Constraints {
        let mut c = Constraints::top();
        c.add_ge0(v(I));
        c.add_ge0(lin(&[(1, N), (-1, I)], -1));
        c
    }

    #[test]
    fn linexpr_arithmetic_and_display() {
        let e = v(N).sub(&v(I)).sub(&k(1));
        assert_eq!(e.to_string_with(name), "n - i - 1");
        assert_eq!(e.coeff(I), r(-1));
        assert_eq!(e.coeff(X), Rational::ZERO);
        assert!(!e.is_constant());
        assert_eq!(e.vars().collect::<Vec<_>>(), vec![I, N]);
        assert!(e.add(&v(I)).sub(&v(N)).is_constant());
        assert_eq!(e.add(&v(I)).coeffs.len(), 1, "no zero coefficients kept");
        assert_eq!(e.neg().to_string_with(name), "i - n + 1");
        assert_eq!(
            e.scale(Rational::new(1, 2)).to_string_with(name),
            "1/2*n - 1/2*i - 1/2"
        );
        assert_eq!(e.scale(Rational::ZERO), LinExpr::zero());
        assert_eq!(LinExpr::term(X, Rational::ZERO), LinExpr::zero());
        assert_eq!(format!("{}", LinExpr::zero()), "0");
        assert_eq!(format!("{}", lin(&[(2, X), (-3, Y)], 4)), "2*v2 - 3*v3 + 4");
        // i := 2x + 1 in n − i − 1 gives n − 2x − 2.
        let s = e.substitute(I, &lin(&[(2, X)], 1));
        assert_eq!(s.to_string_with(name), "n - 2*x - 2");
        assert_eq!(e.checked_substitute(I, &lin(&[(2, X)], 1)), Some(s));
        assert_eq!(e.substitute(Y, &k(7)), e);
        let env = |s: Sym| if s == N { r(10) } else { r(3) };
        assert_eq!(e.eval(env), r(6));
    }

    #[test]
    fn normalization() {
        let mut c = Constraints::top();
        c.add_ge0(lin(&[(2, X)], -1));
        assert_eq!(
            c.facts(),
            &[lin(&[(1, X)], 0).sub(&LinExpr::constant(Rational::new(1, 2)))]
        );
        // A weaker parallel fact is dropped, a tighter one replaces it.
        c.add_ge0(lin(&[(4, X)], 0));
        assert_eq!(c.facts().len(), 1);
        assert_eq!(c.facts()[0].constant, Rational::new(-1, 2));
        c.add_ge0(lin(&[(3, X)], -6));
        assert_eq!(c.facts(), &[lin(&[(1, X)], -2)]);
        // Rational coefficients become coprime integers.
        c.add_ge0(
            v(Y).scale(Rational::new(2, 3))
                .sub(&v(X).scale(Rational::new(1, 3))),
        );
        assert_eq!(c.facts().len(), 2);
        assert!(c.facts().contains(&lin(&[(-1, X), (2, Y)], 0)));
        // Trivially true facts vanish; trivially false ones give bottom.
        c.add_ge0(k(0));
        c.add_ge0(k(3));
        assert_eq!(c.facts().len(), 2);
        assert!(!c.is_bottom());
        let mut d = c.clone();
        d.add_ge0(k(-1));
        assert!(d.is_bottom());
        assert!(d.facts().is_empty());
        d.add_ge0(v(X));
        assert!(d.is_bottom() && d.facts().is_empty());
        // Contradicting opposite facts give bottom at once.
        let mut e = Constraints::top();
        e.add_ge0(lin(&[(1, X)], -3));
        e.add_ge0(lin(&[(-1, X)], 2));
        assert!(e.is_bottom());
        // x ≥ 3 ∧ x ≤ 3 is fine.
        let mut e = Constraints::top();
        e.add_eq0(lin(&[(1, X)], -3));
        assert!(!e.is_bottom());
        assert_eq!(e.facts().len(), 2);
        assert_eq!(e.to_string_with(name), "{-x + 3 >= 0, x - 3 >= 0}");
        assert_eq!(Constraints::bottom().to_string(), "⊥");
        assert_eq!(Constraints::top().to_string(), "{}");
        assert!(Constraints::top().is_top());
        assert_eq!(Constraints::default(), Constraints::top());
    }

    #[test]
    fn entailment() {
        let c = loop_body();
        assert!(c.entails_ge0(&lin(&[(1, N)], -1)));
        assert!(!c.entails_ge0(&lin(&[(1, N)], -2)));
        assert!(c.entails_ge0(&v(I)));
        assert!(c.entails_ge0(&lin(&[(1, N), (-1, I)], 0)));
        assert!(c.entails_ge0(&lin(&[(2, N), (-1, I)], -1)));
        assert!(!c.entails_ge0(&lin(&[(1, I)], -1)));
        assert!(c.entails_ge0(&k(0)));
        assert!(!c.entails_ge0(&k(-1)));
        assert!(!c.entails_ge0(&v(X)));
        assert!(c.entails_eq0(&k(0)));
        assert!(!c.entails_eq0(&v(I)));
        // Chains through several facts.
        let mut d = Constraints::top();
        d.add_ge0(lin(&[(1, X)], -1));
        d.add_ge0(lin(&[(1, Y), (-2, X)], 0));
        d.add_ge0(lin(&[(1, N), (-1, Y), (-1, I)], 0));
        d.add_ge0(v(I));
        assert!(d.entails_ge0(&lin(&[(1, N)], -2)));
        assert!(!d.entails_ge0(&lin(&[(1, N)], -3)));
        // Equalities.
        let mut e = Constraints::top();
        e.add_eq0(lin(&[(1, X), (-1, Y)], -1));
        e.add_ge0(v(Y));
        assert!(e.entails_ge0(&lin(&[(1, X)], -1)));
        assert!(e.entails_eq0(&lin(&[(2, X), (-2, Y)], -2)));
        // An empty set entails everything.
        let mut f = Constraints::top();
        f.add_ge0(lin(&[(1, X), (-1, Y)], -1));
        f.add_ge0(lin(&[(1, Y), (-1, I)], 0));
        f.add_ge0(lin(&[(1, I), (-1, X)], 0));
        assert!(!f.is_bottom());
        assert!(!f.is_feasible());
        assert!(f.entails_ge0(&k(-5)));
        assert!(f.entails_ge0(&lin(&[(-1, N)], -100)));
        assert!(Constraints::bottom().entails_ge0(&k(-1)));
        // Set inclusion.
        assert!(c.entails(&Constraints::top()));
        assert!(!Constraints::top().entails(&c));
        assert!(d.entails(&d));
        assert!(f.entails(&Constraints::bottom()));
        assert!(!c.entails(&Constraints::bottom()));
        assert!(Constraints::bottom().entails(&c));
    }

    #[test]
    fn feasibility() {
        assert!(Constraints::top().is_feasible());
        assert!(!Constraints::bottom().is_feasible());
        assert!(loop_body().is_feasible());
        let mut c = Constraints::top();
        c.add_ge0(v(X));
        c.add_ge0(lin(&[(1, Y), (-1, X)], -1));
        assert!(c.is_feasible());
        c.add_ge0(lin(&[(-1, Y)], 0));
        assert!(!c.is_feasible());
        // Rational, not integer, feasibility: 0 < 2x < 2 ... here 1 ≤ 2x ≤ 1.
        let mut d = Constraints::top();
        d.add_ge0(lin(&[(2, X)], -1));
        d.add_ge0(lin(&[(-2, X)], 1));
        assert!(d.is_feasible());
        let mut t = d.clone();
        t.tighten_int();
        assert!(t.is_bottom());
    }

    #[test]
    fn bounds() {
        let mut c = loop_body();
        assert_eq!(c.bounds(&v(I)), (Some(r(0)), None));
        c.add_ge0(lin(&[(-1, N)], 10));
        assert_eq!(c.bounds(&v(I)), (Some(r(0)), Some(r(9))));
        assert_eq!(c.bounds(&v(N)), (Some(r(1)), Some(r(10))));
        assert_eq!(c.bounds(&v(N).sub(&v(I))), (Some(r(1)), Some(r(10))));
        assert_eq!(
            c.bounds(&lin(&[(2, I), (1, N)], 3)),
            (Some(r(4)), Some(r(31)))
        );
        assert_eq!(c.bounds(&k(7)), (Some(r(7)), Some(r(7))));
        assert_eq!(c.bounds(&v(X)), (None, None));
        assert_eq!(c.bounds(&v(X).add(&v(I))), (None, None));
        let mut d = Constraints::top();
        d.add_ge0(lin(&[(-2, X)], 1));
        d.add_ge0(lin(&[(3, X)], 1));
        assert_eq!(
            d.bounds(&v(X)),
            (Some(Rational::new(-1, 3)), Some(Rational::new(1, 2)))
        );
        assert_eq!(d.bounds(&v(X).scale(r(6))), (Some(r(-2)), Some(r(3))));
        assert_eq!(Constraints::bottom().bounds(&v(X)), (None, None));
        assert_eq!(Constraints::top().bounds(&k(2)), (Some(r(2)), Some(r(2))));
        let mut e = Constraints::top();
        e.add_ge0(lin(&[(1, X)], -1));
        e.add_ge0(lin(&[(-1, Y)], 0));
        e.add_ge0(lin(&[(1, Y), (-1, X)], 0));
        assert_eq!(e.bounds(&v(X)), (None, None), "infeasible");
        // Equality: x = y + 1, 0 ≤ y ≤ 4.
        let mut f = Constraints::top();
        f.add_eq0(lin(&[(1, X), (-1, Y)], -1));
        f.add_ge0(v(Y));
        f.add_ge0(lin(&[(-1, Y)], 4));
        assert_eq!(f.bounds(&v(X)), (Some(r(1)), Some(r(5))));
        assert_eq!(f.bounds(&v(X).sub(&v(Y))), (Some(r(1)), Some(r(1))));
    }

    #[test]
    fn bounds_over_kept_symbols() {
        // 0 ≤ i ≤ n − 1, x = 4·i + 2: x between 2 and 4n − 2.
        let mut c = loop_body();
        c.add_eq0(lin(&[(1, X), (-4, I)], -2));
        let (lo, hi) = c.bounds_over(&v(X), &|s| s == N);
        assert_eq!(lo, vec![k(2)]);
        assert_eq!(hi, vec![lin(&[(4, N)], -2)]);
        assert_eq!(c.bounds_over(&v(Y), &|s| s == N), (vec![], vec![]));
    }

    #[test]
    fn projection() {
        let mut c = loop_body();
        c.project_out(I);
        assert_eq!(c.facts(), &[lin(&[(1, N)], -1)]);
        let mut c = loop_body();
        c.forget(N);
        assert_eq!(c.facts(), &[v(I)]);
        // Projecting a symbol not mentioned changes nothing.
        let mut c = loop_body();
        c.project_out(X);
        assert_eq!(c, loop_body());
        // Through an equality: x = y + 1, y ≥ 0, y ≤ n.
        let mut d = Constraints::top();
        d.add_eq0(lin(&[(1, X), (-1, Y)], -1));
        d.add_ge0(v(Y));
        d.add_ge0(lin(&[(1, N), (-1, Y)], 0));
        d.project_out(Y);
        assert!(d.entails_ge0(&lin(&[(1, X)], -1)));
        assert!(d.entails_ge0(&lin(&[(1, N), (-1, X)], 1)));
        assert!(!d.entails_ge0(&lin(&[(1, N), (-1, X)], 0)));
        assert!(!d.mentions(Y));
        // Projection of an empty set finds it empty.
        let mut e = Constraints::top();
        e.add_ge0(lin(&[(1, X)], -1));
        e.add_ge0(lin(&[(1, Y), (-1, X)], 0));
        e.add_ge0(lin(&[(-1, Y)], 0));
        e.project_out(X);
        assert!(e.is_bottom());
        // A symbol bounded on one side only just disappears.
        let mut f = loop_body();
        f.add_ge0(lin(&[(1, X), (-1, I)], 0));
        f.project_out(X);
        assert_eq!(f, loop_body());
    }

    #[test]
    fn assignment() {
        // i ≥ 0; i := i + 1 gives i − 1 ≥ 0.
        let mut c = Constraints::top();
        c.add_ge0(v(I));
        c.assign(I, &lin(&[(1, I)], 1));
        assert_eq!(c.facts(), &[lin(&[(1, I)], -1)]);
        // 0 ≤ i ≤ n − 1; i := i + 1 gives 1 ≤ i ≤ n.
        let mut c = loop_body();
        c.assign(I, &lin(&[(1, I)], 1));
        assert!(c.entails_ge0(&lin(&[(1, I)], -1)));
        assert!(c.entails_ge0(&lin(&[(1, N), (-1, I)], 0)));
        assert!(!c.entails_ge0(&lin(&[(1, N), (-1, I)], -1)));
        // i := 2i − n: old i = (i + n)/2.
        let mut c = loop_body();
        c.assign(I, &lin(&[(2, I), (-1, N)], 0));
        assert_eq!(c.bounds(&v(I).add(&v(N))).0, Some(r(0)));
        assert!(c.entails_ge0(&lin(&[(1, N), (-1, I)], -2)));
        // i := −i.
        let mut c = loop_body();
        c.assign(I, &v(I).neg());
        assert!(c.entails_ge0(&v(I).neg()));
        assert!(c.entails_ge0(&lin(&[(1, N), (1, I)], -1)));
        // Non-invertible: i := n − 1 forgets the old i.
        let mut c = loop_body();
        c.add_ge0(lin(&[(1, X), (-1, I)], 0));
        c.assign(I, &lin(&[(1, N)], -1));
        assert!(c.entails_eq0(&lin(&[(1, I), (-1, N)], 1)));
        assert!(c.entails_ge0(&v(I)));
        assert!(c.entails_ge0(&lin(&[(1, X)], 0)), "x ≥ old i ≥ 0 survives");
        assert!(!c.entails_ge0(&lin(&[(1, X), (-1, I)], 0)));
        // i := 5.
        let mut c = loop_body();
        c.assign(I, &k(5));
        assert_eq!(c.bounds(&v(I)), (Some(r(5)), Some(r(5))));
        assert!(c.entails_ge0(&lin(&[(1, N)], -1)));
        // x := x (identity) keeps everything; bottom stays bottom.
        let mut c = loop_body();
        c.assign(I, &v(I));
        assert_eq!(c, loop_body());
        let mut b = Constraints::bottom();
        b.assign(I, &k(1));
        assert!(b.is_bottom());
    }

    #[test]
    fn join_and_meet() {
        let mut a = Constraints::top();
        a.add_eq0(v(X));
        let mut b = Constraints::top();
        b.add_eq0(lin(&[(1, X)], -1));
        let j = a.join(&b);
        assert_eq!(j.bounds(&v(X)), (Some(r(0)), Some(r(1))));
        assert!(!a.meet(&b).is_feasible());
        assert!(a.meet(&b).is_bottom());
        // Facts of both sides hold in the join.
        let c = loop_body();
        let mut d = loop_body();
        d.add_ge0(lin(&[(1, I)], -1));
        let j = c.join(&d);
        assert!(j.entails(&c) && c.entails(&j));
        // Relational facts survive when both sides keep them.
        let mut e = Constraints::top();
        e.add_eq0(lin(&[(1, X), (-1, Y)], 0));
        e.add_ge0(v(X));
        let mut f = Constraints::top();
        f.add_eq0(lin(&[(1, X), (-1, Y)], 0));
        f.add_ge0(lin(&[(1, X)], -5));
        let j = e.join(&f);
        assert!(j.entails_eq0(&lin(&[(1, X), (-1, Y)], 0)));
        assert!(j.entails_ge0(&v(Y)));
        assert!(!j.entails_ge0(&lin(&[(1, Y)], -1)));
        // Bottom is the identity.
        assert_eq!(c.join(&Constraints::bottom()), c);
        assert_eq!(Constraints::bottom().join(&c), c);
        let mut empty = Constraints::top();
        empty.add_ge0(lin(&[(1, X), (-1, Y)], -1));
        empty.add_ge0(lin(&[(1, Y), (-1, X)], 0));
        assert_eq!(empty.join(&c), c);
        assert_eq!(c.join(&empty), c);
        assert!(empty.join(&empty).is_bottom());
        assert!(c.join(&Constraints::top()).is_top());
        // Meet.
        let mut g = Constraints::top();
        g.add_ge0(lin(&[(-1, N)], 10));
        let m = c.meet(&g);
        assert_eq!(m.bounds(&v(I)), (Some(r(0)), Some(r(9))));
        assert!(c.meet(&Constraints::bottom()).is_bottom());
        assert!(Constraints::bottom().meet(&c).is_bottom());
    }

    #[test]
    fn widening_reaches_the_loop_invariant() {
        // for (i = 0; i < n; i++) with n ≥ 1.
        let mut entry = Constraints::top();
        entry.add_ge0(lin(&[(1, N)], -1));
        entry.assign(I, &k(0));
        let guard = lin(&[(1, N), (-1, I)], -1); // i < n ⇔ n − i − 1 ≥ 0
        let post = |head: &Constraints| {
            let mut body = head.clone();
            body.add_ge0(guard.clone());
            body.assign(I, &lin(&[(1, I)], 1));
            head.join(&body)
        };
        // Widening straight away loses `n − i ≥ 0`, which the entry does
        // not state; one delayed (joined) iteration keeps it.
        let direct = entry.widen(&post(&entry));
        assert!(!direct.entails_ge0(&lin(&[(1, N), (-1, I)], 0)));
        let mut head = post(&entry);
        let mut steps = 0;
        loop {
            steps += 1;
            assert!(steps < 10, "widening must converge");
            let next = head.widen(&post(&head));
            if next.entails(&head) {
                break;
            }
            head = next;
        }
        assert!(head.entails_ge0(&v(I)));
        assert!(head.entails_ge0(&lin(&[(1, N), (-1, I)], 0)));
        let mut body = head.clone();
        body.add_ge0(guard);
        assert!(body.entails_ge0(&lin(&[(1, N), (-1, I)], -1)));
        assert!(body.entails_ge0(&lin(&[(1, N)], -1)));
        // Widening keeps only facts of the old set that the new one entails.
        let mut a = Constraints::top();
        a.add_eq0(v(I));
        let mut b = Constraints::top();
        b.add_ge0(v(I));
        b.add_ge0(lin(&[(-1, I)], 1));
        let w = a.widen(&b);
        assert_eq!(w.facts(), &[v(I)]);
        assert_eq!(Constraints::bottom().widen(&b), b);
        assert_eq!(a.widen(&Constraints::bottom()), a);
    }

    #[test]
    fn tightening() {
        let mut c = Constraints::top();
        c.add_ge0(lin(&[(2, X)], -1));
        c.add_ge0(lin(&[(3, X), (6, Y)], 2));
        c.tighten_int();
        assert!(c.facts().contains(&lin(&[(1, X)], -1)));
        assert!(c.facts().contains(&lin(&[(1, X), (2, Y)], 0)));
        assert_eq!(c.facts().len(), 2);
        let mut b = Constraints::bottom();
        b.tighten_int();
        assert!(b.is_bottom());
    }

    #[test]
    fn huge_numbers_are_dropped_not_panicking() {
        let mut c = Constraints::top();
        let big = Rational::int(i128::MAX / 4);
        c.add_ge0(
            LinExpr::term(X, big)
                .add(&LinExpr::term(Y, r(3)))
                .add(&k(1)),
        );
        assert!(c.is_top());
        c.add_ge0(
            LinExpr::term(X, Rational::new(1, i128::MAX / 3))
                .add(&LinExpr::term(Y, Rational::new(1, i128::MAX / 5))),
        );
        assert!(c.is_top());
        assert!(!c.entails_ge0(&LinExpr::term(X, big).add(&LinExpr::term(Y, r(3)))));
        assert_eq!(
            c.bounds(&LinExpr::term(X, big).add(&LinExpr::term(Y, r(3)))),
            (None, None)
        );
        let mut d = loop_body();
        d.assign(I, &LinExpr::term(I, big).add(&k(1)));
        // `n − (i − 1)/big − 1 ≥ 0` is too large to keep and is dropped.
        assert!(d.entails_ge0(&lin(&[(1, I)], -1)));
        assert!(!d.entails_ge0(&lin(&[(1, N)], -1)));
    }

    /// A deterministic linear congruential generator.
    struct Lcg(u64);

    impl Lcg {
        fn next(&mut self) -> u64 {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            self.0 >> 33
        }

        /// Uniform in `lo..=hi`.
        fn range(&mut self, lo: i128, hi: i128) -> i128 {
            lo + (self.next() as i128) % (hi - lo + 1)
        }
    }

    fn random_expr(g: &mut Lcg, nvars: u32, cmax: i128, kmax: i128) -> LinExpr {
        let mut e = k(g.range(-kmax, kmax));
        for s in 0..nvars {
            if g.range(0, 2) > 0 {
                e = e.add(&LinExpr::term(s, r(g.range(-cmax, cmax))));
            }
        }
        e
    }

    fn random_system(g: &mut Lcg, nvars: u32) -> Constraints {
        let mut c = Constraints::top();
        for _ in 0..g.range(1, 5) {
            let e = random_expr(g, nvars, 3, 6);
            if g.range(0, 5) == 0 {
                c.add_eq0(e);
            } else {
                c.add_ge0(e);
            }
        }
        c
    }

    fn holds(c: &Constraints, p: &[i128]) -> bool {
        !c.is_bottom()
            && c.facts()
                .iter()
                .all(|f| f.eval(|s| r(p[s as usize])) >= Rational::ZERO)
    }

    /// Every point of a small integer grid, for `n` symbols.
    fn grid(n: u32) -> Vec<Vec<i128>> {
        let mut pts = vec![vec![]];
        for _ in 0..n {
            pts = pts
                .into_iter()
                .flat_map(|p| {
                    (-5..=5).map(move |x| {
                        let mut q = p.clone();
                        q.push(x);
                        q
                    })
                })
                .collect();
        }
        pts
    }

    #[test]
    fn random_systems_are_never_answered_unsoundly() {
        let mut g = Lcg(0x5eed);
        let mut entailed = 0;
        let mut bounded = 0;
        for round in 0..400 {
            let nvars = g.range(1, 3) as u32;
            let c = random_system(&mut g, nvars);
            let other = random_system(&mut g, nvars);
            let e = random_expr(&mut g, nvars, 3, 6);
            let pts = grid(nvars);
            let sat: Vec<&Vec<i128>> = pts.iter().filter(|p| holds(&c, p)).collect();
            let at = |e: &LinExpr, p: &[i128]| e.eval(|s| r(p[s as usize]));
            let ctx = format!("round {round}: {c} ⊢ {e} ≥ 0");
            if !sat.is_empty() {
                assert!(c.is_feasible(), "{ctx}");
            }
            if c.entails_ge0(&e) {
                entailed += 1;
                for p in &sat {
                    assert!(at(&e, p) >= Rational::ZERO, "{ctx} at {p:?}");
                }
            }
            let (lo, hi) = c.bounds(&e);
            if lo.is_some() || hi.is_some() {
                bounded += 1;
            }
            for p in &sat {
                let x = at(&e, p);
                assert!(lo.is_none_or(|l| l <= x), "{ctx}: lo {lo:?} at {p:?}");
                assert!(hi.is_none_or(|h| x <= h), "{ctx}: hi {hi:?} at {p:?}");
            }
            // Exactness where the grid can tell: a bound attained on the
            // grid is the bound.
            if let (Some(l), Some(h)) = (lo, hi) {
                let vals: Vec<Rational> = sat.iter().map(|p| at(&e, p)).collect();
                if vals.contains(&l) && vals.contains(&h) {
                    assert!(c.entails_ge0(&e.sub(&LinExpr::constant(l))), "{ctx}");
                    assert!(
                        !c.entails_ge0(&e.sub(&LinExpr::constant(l + Rational::new(1, 7)))),
                        "{ctx}"
                    );
                }
            }
            // Projection and tightening keep every point.
            let mut proj = c.clone();
            proj.project_out(0);
            assert!(!proj.mentions(0));
            let mut tight = c.clone();
            tight.tighten_int();
            for p in &sat {
                assert!(holds(&proj, p), "{ctx}: projection {proj} loses {p:?}");
                assert!(holds(&tight, p), "{ctx}: tightening {tight} loses {p:?}");
            }
            // Assignment maps every point into the post-state.
            let s = g.range(0, nvars as i128 - 1) as Sym;
            let rhs = random_expr(&mut g, nvars, 2, 3);
            let mut post = c.clone();
            post.assign(s, &rhs);
            for p in &sat {
                let mut q = (*p).clone();
                let val = at(&rhs, p);
                if !val.is_integer() {
                    continue;
                }
                q[s as usize] = val.num();
                assert!(
                    holds(&post, &q),
                    "{ctx}: {s} := {rhs} gives {post}, loses {q:?}"
                );
            }
            // Join and widening contain both sides; meet contains the
            // common points.
            let j = c.join(&other);
            let w = c.widen(&other);
            let m = c.meet(&other);
            for p in &pts {
                let (in_c, in_o) = (holds(&c, p), holds(&other, p));
                if in_c || in_o {
                    assert!(holds(&j, p), "{ctx}: join {j} loses {p:?}");
                }
                if in_c || in_o {
                    assert!(holds(&w, p), "{ctx}: widen {w} loses {p:?}");
                }
                if in_c && in_o {
                    assert!(holds(&m, p), "{ctx}: meet {m} loses {p:?}");
                }
            }
            assert!(j.entails(&Constraints::top()));
        }
        assert!(entailed > 40, "only {entailed} entailed");
        assert!(bounded > 100, "only {bounded} bounded");
    }

    #[test]
    fn larger_systems_stay_bounded() {
        // 15 symbols, 40 dense constraints: the caps keep this quick.
        let mut g = Lcg(42);
        for _ in 0..3 {
            let mut c = Constraints::top();
            for s in 0..15 {
                c.add_ge0(lin(&[(1, s)], 20));
                c.add_ge0(lin(&[(-1, s)], 20));
            }
            for _ in 0..40 {
                c.add_ge0(random_expr(&mut g, 15, 5, 30));
            }
            let e = random_expr(&mut g, 15, 2, 5);
            let _ = c.is_feasible();
            let _ = c.entails_ge0(&e);
            let (lo, hi) = c.bounds(&e);
            if let (Some(l), Some(h)) = (lo, hi) {
                assert!(l <= h);
            }
            let mut d = c.clone();
            d.project_out(3);
            assert!(!d.mentions(3));
        }
    }
}
