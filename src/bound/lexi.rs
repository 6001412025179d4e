//! Solving a metric's LP: the entry potential minimized lexicographically,
//! highest degree first, certified in exact arithmetic, and solved again
//! without the bases of a top-degree monomial where that does better.
//!
//! The second solve is what keeps grid-stride loops linear at large
//! launches. A loop `i += S` pays `c` per iteration with `c/S` on the
//! linear base `n − i + S − 1`, or with `c/S²` on its square; with
//! `S = 2^20` the square's weight `2^-40` and the products `S² = 2^40` in
//! the same rows are beyond what equilibration by powers of two brings
//! near 1, and the floating-point solver returns a point that leaves the
//! loop unpaid by `2^-40` (within its tolerance) with the square's
//! coefficient at 0. The exact recovery then pays that deficit with the
//! square, and the bound grows as `(n + S)²`. So a bound of degree
//! `d ≥ 2` is solved again, for each of its degree-`d` monomials (`n²`),
//! without every base that has it, at any program point; the answer is
//! kept when it is lexicographically better.

use std::collections::{BTreeMap, BTreeSet};

use super::lp::{self, Lin, LpError};
use super::potential::Pot;
use super::{ghost, stride, Prepared};
use crate::cost::CostTable;
use crate::poly::{Monomial, Poly, Rational};

/// The degree of a monomial in the inputs: a logarithm of an input
/// (`log2(n)`, a ghost's bound) grows slower than any input and does not
/// count, so a logarithmic base wins over a linear one.
fn degree(m: &Monomial) -> u32 {
    let logs: u32 = m
        .factors()
        .filter(|(name, _)| ghost::is_log_name(name))
        .map(|(_, e)| e)
        .sum();
    m.degree() - logs
}

/// The highest [`degree`] of a polynomial's monomials.
fn top_degree(p: &Poly) -> u32 {
    p.terms().map(|(m, _)| degree(m)).max().unwrap_or(0)
}

/// The sum of the absolute coefficients of `p`'s monomials of degree `d`,
/// each divided per factor of a quotient (`⌈n/blockDim.x⌉`, a ghost's
/// bound) by twice its constant factor (2 for `⌈n/blockDim.x⌉`, 8 for
/// `⌈n/(4·blockDim.x)⌉`): a quotient grows as its input does, but is never
/// above it divided by its constant factor (plus 1), so of two bases that
/// pay for a loop alike the one over the quotient wins, even against a
/// linear one that knows the stride is at least that constant.
fn weight(p: &Poly, d: u32) -> Rational {
    p.terms()
        .filter(|(m, _)| degree(m) == d)
        .fold(Rational::ZERO, |w, (m, c)| {
            let divisor = m
                .factors()
                .filter_map(|(name, e)| Some((stride::quotient_parts(name)?, e)))
                .fold(1i128, |acc, (q, e)| {
                    let each = 2 * i128::from(q.factor.min(1 << 20));
                    acc.saturating_mul(each.saturating_pow(e.min(3)))
                        .min(1 << 60)
                });
            w + c.abs() / Rational::int(divisor)
        })
}

/// An LP value as an exact rational: the simplest one at most the solver's
/// error below it and a little above it.
fn snap(v: f64) -> Option<Rational> {
    Rational::at_least(v, 1e-10 * (1.0 + v.abs()), 1e-7 * (1.0 + v.abs()), 1 << 20)
}

/// Most LPs solved again, per cost table, without the bases of one
/// monomial.
const MAX_RESOLVES: usize = 8;

/// A certified solution: the entry potential it is of and the exact
/// values.
struct Solved {
    entry: Pot,
    x: Vec<Rational>,
}

impl Prepared {
    /// The LP of one cost table, with no potential on the bases of
    /// `excluded`, and the entry potential (the bases with a value at the
    /// kernel's start only: the others are required to carry nothing).
    pub(super) fn constraints(
        &self,
        cost: &CostTable,
        excluded: &BTreeSet<usize>,
    ) -> (lp::Lp, Pot) {
        let mut a = self.aara(cost);
        a.excluded = excluded.clone();
        let mut entry = a.stmts(&self.kernel.body, Pot::default());
        a.zero_nonuniform(&mut entry, &self.entry_state);
        let unknown: Vec<usize> = entry
            .support()
            .filter(|&i| self.entry[i].is_none())
            .collect();
        for i in unknown {
            if let Some(q) = entry.coef.remove(&i) {
                a.lp.eq0(q);
            }
        }
        (a.lp, entry)
    }

    /// Base `i`'s value at the kernel's start as one polynomial over the
    /// inputs (a constant factor counts where it is positive).
    fn entry_poly(&self, i: usize) -> Option<Poly> {
        let fs = self.entry.get(i)?.as_ref()?;
        let mut p = Poly::constant(Rational::ONE);
        for f in fs {
            p = p * match f.as_constant() {
                Some(c) => Poly::constant(c.max(Rational::ZERO)),
                None => f.clone(),
            };
        }
        Some(p)
    }

    /// Base `i` over the inputs alone: each linear factor with every
    /// symbol that has no value at the start (a loop counter's floor, a
    /// lane's index) taken as 0, so that a loop's bases over its counter
    /// have the monomials of the entry bases they become (`(n − i)²`
    /// gives `n²`). Only which bases are left out of a second solve
    /// depends on it.
    fn shape(&self, i: usize) -> Option<Poly> {
        let mut p = Poly::constant(Rational::ONE);
        for &f in self.bases.factors(i) {
            let l = &self.bases.linear[f];
            let mut q = Poly::constant(l.constant);
            for (&s, &a) in &l.coeffs {
                if let Some(b) = self.syms.entry_bound(&self.kernel, s, a > Rational::ZERO) {
                    q += b.scale(a);
                }
            }
            p = p * q;
        }
        Some(p)
    }

    /// The entry bases with a positive coefficient in `s`, with it.
    fn paid(&self, s: &Solved) -> Vec<(usize, Rational)> {
        s.entry
            .coef
            .iter()
            .filter_map(|(&i, q)| Some((i, q.eval_exact(&s.x)?)))
            .filter(|(_, c)| *c > Rational::ZERO)
            .collect()
    }

    /// The degree of the bound `s` gives, and the value of its objective
    /// stage of that degree.
    fn rank(&self, s: &Solved) -> (u32, Rational) {
        let paid: Vec<(Poly, Rational)> = self
            .paid(s)
            .into_iter()
            .filter_map(|(i, c)| Some((self.entry_poly(i)?, c)))
            .collect();
        let d = paid.iter().map(|(p, _)| top_degree(p)).max().unwrap_or(0);
        let stage = paid
            .iter()
            .fold(Rational::ZERO, |v, (p, c)| v + *c * weight(p, d));
        (d, stage)
    }

    /// The degree-`d` monomials of the entry bases that `s` pays, in order.
    fn monomials(&self, s: &Solved, d: u32) -> BTreeSet<Monomial> {
        self.paid(s)
            .into_iter()
            .filter_map(|(i, _)| self.entry_poly(i))
            .flat_map(|p| {
                p.terms()
                    .filter(|(m, _)| degree(m) == d)
                    .map(|(m, _)| m.clone())
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    /// A certified solution of the lexicographic objective: that of the
    /// full LP `lp` (with entry potential `entry`), or, for each monomial
    /// `μ` of degree `d ≥ 2` that its bound of degree `d` pays (at most
    /// [`MAX_RESOLVES`] of them), that of the LP without every base whose
    /// [`Prepared::shape`] has `μ`, when it is lexicographically better
    /// (lower degree, or less on the degree-`d` stage). The full LP holds
    /// every solution of the smaller ones, so this only moves towards the
    /// true lexicographic optimum the floating-point solver missed; every
    /// answer is certified exactly. Deterministic: no budget decides it.
    pub(super) fn solve_lowest(
        &self,
        cost: &CostTable,
        lp: &lp::Lp,
        entry: Pot,
    ) -> Result<(Pot, Vec<Rational>), LpError> {
        let x = self.solve(lp, &entry)?;
        let mut best = Solved { entry, x };
        let mut excluded = BTreeSet::new();
        let mut tried = BTreeSet::new();
        for _ in 0..MAX_RESOLVES {
            let (d, stage) = self.rank(&best);
            if d < 2 {
                break;
            }
            let Some(mu) = self
                .monomials(&best, d)
                .into_iter()
                .find(|m| !tried.contains(m))
            else {
                break;
            };
            let mut trial = excluded.clone();
            trial.extend((0..self.bases.len()).filter(|&i| {
                self.shape(i)
                    .is_some_and(|p| p.terms().any(|(m, _)| degree(m) == d && *m == mu))
            }));
            tried.insert(mu);
            if trial == excluded {
                continue;
            }
            let (smaller, e) = self.constraints(cost, &trial);
            if smaller.num_vars() + smaller.num_constraints() > self.config.max_lp {
                continue;
            }
            let Ok(y) = self.solve(&smaller, &e) else {
                continue;
            };
            let next = Solved { entry: e, x: y };
            let (d2, stage2) = self.rank(&next);
            if d2 < d || (d2 == d && stage2 < stage) {
                best = next;
                excluded = trial;
            }
        }
        Ok((best.entry, best.x))
    }

    /// Minimizes the entry potential lexicographically, highest degree
    /// first: after each stage, every coefficient that stage minimized is
    /// capped at its optimum (rounded up to a simple rational), so later
    /// stages cannot trade it for lower-degree terms. The last stage's
    /// solution is certified in exact arithmetic ([`lp::Lp::certify`]);
    /// should that or a stage's solve fail, one stage minimizing every
    /// degree at once (a coarser bound, no caps to trip over) is tried
    /// before giving up.
    fn solve(&self, lp: &lp::Lp, entry: &Pot) -> Result<Vec<Rational>, LpError> {
        let mut caps: Vec<(Lin, Rational)> = Vec::new();
        let mut x = Vec::new();
        let stages = self.objectives(entry);
        let mut failed = None;
        for (objective, members) in &stages {
            // Tight caps keep later stages from shifting even a trace of a
            // coefficient; should the solver find them infeasible by its
            // own rounding, looser ones do.
            let solved = match lp.solve(objective, &caps, 1e-12) {
                Err(LpError::Infeasible) if !caps.is_empty() => lp.solve(objective, &caps, 1e-8),
                other => other,
            };
            x = match solved {
                Ok(x) => x,
                // A stage the solver fails on (a singular basis under the
                // caps) leaves the one-stage objective below to try.
                Err(e) => {
                    failed = Some(e);
                    break;
                }
            };
            for q in members {
                let v = q.eval(&x);
                let Some(r) = snap(v) else {
                    return Err(LpError::Uncertified("the LP solution is not finite".into()));
                };
                caps.push((q.clone(), r));
            }
        }
        let first = match failed {
            Some(e) => e,
            None => {
                let last = stages.last().map(|(o, _)| o.clone()).unwrap_or_default();
                match lp.certified(&last, &caps, &x) {
                    Ok(exact) => return Ok(exact),
                    Err(e) => e,
                }
            }
        };
        let mut all = Lin::default();
        for (d, (objective, _)) in stages.iter().enumerate() {
            // Higher degrees first: weigh each stage far above the next.
            let weight = Rational::int(1i128 << (20 * (stages.len() - 1 - d)).min(100));
            all.add_scaled(objective, weight);
        }
        lp.solve(&all, &[], 0.0)
            .and_then(|x| lp.certified(&all, &[], &x))
            .map_err(|_| first)
    }

    /// The stages of the lexicographic objective, highest degree first:
    /// each stage's objective weighs every entry coefficient by the sum of
    /// the absolute coefficients of its base's degree-`d` monomials at the
    /// start; with the coefficients the stage decides.
    fn objectives(&self, entry: &Pot) -> Vec<(Lin, Vec<Lin>)> {
        // Ordered, so the LP's cap rows do not depend on hashing.
        let polys: BTreeMap<usize, Poly> = entry
            .support()
            .filter_map(|i| Some((i, self.entry_poly(i)?)))
            .collect();
        let top = polys.values().map(top_degree).max().unwrap_or(0);
        (0..=top)
            .rev()
            .map(|d| {
                let mut o = Lin::default();
                let mut members = Vec::new();
                if d == 0 {
                    o.add_scaled(&entry.konst, Rational::ONE);
                }
                for (i, p) in &polys {
                    let w = weight(p, d);
                    if w > Rational::ZERO {
                        o.add_scaled(&entry.coef[i], w);
                        if top_degree(p) == d {
                            members.push(entry.coef[i].clone());
                        }
                    }
                }
                (o, members)
            })
            .collect()
    }
}
