//! Rows, the normalized integer-coefficient form of a fact, and
//! Fourier–Motzkin elimination over them, with the caps of the module
//! documentation.

use std::collections::{BTreeMap, BTreeSet};

use crate::poly::Rational;

use super::{LinExpr, Sym, MAX_COMBINATIONS, MAX_MAGNITUDE, MAX_ROWS};

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

/// `Σ coeffs·s + constant ≥ 0` (or `> 0` when `strict`), with coprime
/// integer coefficients sorted by symbol and no zero coefficient.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Row {
    pub(super) coeffs: Vec<(Sym, i128)>,
    pub(super) constant: Rational,
    pub(super) strict: bool,
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
    pub(super) fn from_expr(e: &LinExpr, strict: bool) -> Option<Row> {
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
    pub(super) fn to_expr(&self) -> LinExpr {
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
    pub(super) fn coeff(&self, s: Sym) -> i128 {
        match self.coeffs.binary_search_by_key(&s, |&(t, _)| t) {
            Ok(i) => self.coeffs[i].1,
            Err(_) => 0,
        }
    }

    /// For a row without symbols: whether it is false.
    pub(super) fn is_contradiction(&self) -> bool {
        self.constant < Rational::ZERO || (self.strict && self.constant.is_zero())
    }

    /// The coefficients negated.
    pub(super) fn negated_coeffs(&self) -> Vec<(Sym, i128)> {
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
pub(super) fn tidy(rows: Vec<Row>) -> Option<Vec<Row>> {
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
pub(super) fn eliminate_var(rows: Vec<Row>, v: Sym, budget: &mut usize) -> Option<Vec<Row>> {
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
pub(super) fn fourier_motzkin(rows: Vec<Row>, elim: &dyn Fn(Sym) -> bool) -> Option<Vec<Row>> {
    let mut rows = tidy(rows)?;
    let mut budget = MAX_COMBINATIONS;
    while let Some(v) = choose_var(&rows, elim) {
        rows = eliminate_var(rows, v, &mut budget)?;
    }
    Some(rows)
}
