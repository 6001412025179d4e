//! Exact certificates for floating-point LP solutions.
//!
//! A solver's answer is a floating-point point near an optimal vertex. To
//! turn it into a bound that provably holds, the vertex is recovered in
//! exact rational arithmetic: the variables the solver put at zero are
//! zero, every equality and every inequality the solver left tight (up to
//! its tolerance, in the equilibrated scale it solved in) becomes an
//! equation, and the equations are solved by sparse Gaussian elimination;
//! variables no equation determines keep their value, read as the simplest
//! nearby rational. The point is then checked against every constraint
//! exactly. Nothing here trusts the solver: a wrong guess of which
//! constraints are tight only makes the check fail, never pass wrongly.

use std::collections::HashMap;

use super::lp::{Lin, Lp, LpError, Scaling};
use crate::poly::Rational;

/// A scaled value at most this is zero (round-off of a zero basic
/// variable; a potential of `2^-40` per unit, for a product of two strides
/// of `2^20`, is well above it once scaled).
const ZERO: f64 = 1e-13;
/// A scaled residual at most this is tight.
const TIGHT: f64 = 1e-9;

/// Equations `x_v = e` solved so far, in the order they were found: the
/// expression of each mentions no earlier pivot.
#[derive(Default)]
struct Elimination {
    pivots: Vec<(usize, Lin)>,
    index: HashMap<usize, usize>,
}

/// What adding an equation did.
enum Added {
    /// It determined a new variable.
    Pivot,
    /// It follows from the earlier ones.
    Redundant,
    /// It contradicts them.
    Inconsistent,
    /// Its arithmetic overflowed.
    Overflow,
}

impl Elimination {
    /// `e` with every pivot substituted (earliest first: substituting
    /// pivot `k` brings in only later pivots, so this ends).
    fn reduce(&self, mut e: Lin) -> Option<Lin> {
        loop {
            let next = e
                .terms
                .keys()
                .filter_map(|v| self.index.get(v).map(|&k| (k, *v)))
                .min();
            let Some((k, v)) = next else {
                return Some(e);
            };
            let a = e.terms.remove(&v)?;
            e.add_scaled(&self.pivots[k].1, a);
            if e.overflow {
                return None;
            }
        }
    }

    /// Adds the equation `e = 0`.
    fn add(&mut self, e: Lin) -> Added {
        let Some(mut e) = self.reduce(e) else {
            return Added::Overflow;
        };
        let Some((&v, &a)) = e.terms.iter().next_back() else {
            return if e.c.is_zero() {
                Added::Redundant
            } else {
                Added::Inconsistent
            };
        };
        e.terms.remove(&v);
        let Some(k) = Rational::ONE.checked_div(-a) else {
            return Added::Overflow;
        };
        let expr = e.scaled(k);
        if expr.overflow {
            return Added::Overflow;
        }
        self.index.insert(v, self.pivots.len());
        self.pivots.push((v, expr));
        Added::Pivot
    }
}

/// `e` without the variables in `zero` (which are 0).
fn without(e: &Lin, zero: &[bool]) -> Lin {
    let mut r = e.clone();
    r.terms.retain(|j, _| !zero[*j]);
    r
}

/// A power of two `2^k` (`|k| ≤ 60`, as [`Scaling`] makes them) exactly.
fn exact_pow2(v: f64) -> Option<Rational> {
    let k = v.log2().round();
    if k.abs() > 100.0 || v != k.exp2() {
        return None;
    }
    Some(if k >= 0.0 {
        Rational::int(1i128 << k as u32)
    } else {
        Rational::new(1, 1i128 << (-k) as u32)
    })
}

fn uncertified(why: &str) -> LpError {
    LpError::Uncertified(why.to_string())
}

impl Lp {
    /// [`Lp::certify`] the solution `x` of minimizing `obj` under `caps`;
    /// when that fails, refine it (a few rounds of
    /// [`Lp::solve_from`], which magnifies what the solver's tolerance
    /// hid: a potential of `2^-40` per unit that a chain of strides of
    /// `2^20` needs) and certify again.
    pub fn certified(
        &self,
        obj: &Lin,
        caps: &[(Lin, Rational)],
        x: &[f64],
    ) -> Result<Vec<Rational>, LpError> {
        let first = match self.certify(x, caps) {
            Ok(exact) => return Ok(exact),
            Err(e) => e,
        };
        let mut x = x.to_vec();
        for _ in 0..3 {
            let Ok(refined) = self.solve_from(obj, caps, 1e-12, Some(&x)) else {
                break;
            };
            x = refined;
            if let Ok(exact) = self.certify(&x, caps) {
                return Ok(exact);
            }
        }
        Err(first)
    }

    /// An exact solution near the floating-point solution `x` of
    /// [`Lp::solve`] (solved with `caps`, which guide the recovery but
    /// need not hold), verified against every constraint in rational
    /// arithmetic; [`LpError::Uncertified`] when there is none.
    pub fn certify(&self, x: &[f64], caps: &[(Lin, Rational)]) -> Result<Vec<Rational>, LpError> {
        if self.overflow {
            return Err(uncertified(
                "a coefficient overflowed 128-bit rational arithmetic",
            ));
        }
        if x.len() != self.vars || x.iter().any(|v| !v.is_finite()) {
            return Err(uncertified("the solver's solution is not finite"));
        }
        let rows = self.rows(caps);
        let sc = Scaling::new(&rows, self.vars);
        let zero: Vec<bool> = x.iter().zip(&sc.col).map(|(v, c)| v / c <= ZERO).collect();
        // Free variables keep the solver's value, read as the simplest
        // rational near it in the solver's scale (scales are powers of two,
        // so scaling back is exact).
        let near = |j: usize| {
            let y = x[j] / sc.col[j];
            let r =
                Rational::at_least(y, 1e-12 * (1.0 + y.abs()), 1e-9 * (1.0 + y.abs()), 1 << 24)?;
            r.checked_mul(exact_pow2(sc.col[j])?)
        };
        let (nge, neq) = (self.ge.len(), self.eq.len());
        // Every equality, then the tight inequalities and caps, tightest
        // first.
        let mut tight: Vec<(f64, usize)> = rows
            .iter()
            .enumerate()
            .filter(|(i, _)| *i < nge || *i >= nge + neq)
            .filter_map(|(i, e)| {
                let bound = if i < nge {
                    0.0
                } else {
                    caps[i - nge - neq].1.to_f64()
                };
                let slack = ((e.eval(x) - bound) * sc.row[i]).abs();
                (slack <= TIGHT).then_some((slack, i))
            })
            .collect();
        tight.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut elim = Elimination::default();
        for e in &self.eq {
            match elim.add(without(e, &zero)) {
                Added::Pivot | Added::Redundant => {}
                Added::Inconsistent => {
                    return Err(uncertified(
                        "the equalities have no exact solution with the solver's zero variables",
                    ))
                }
                Added::Overflow => {
                    return Err(uncertified(
                        "the exact solution overflowed 128-bit rational arithmetic",
                    ))
                }
            }
        }
        for (_, i) in tight {
            let mut e = without(rows[i], &zero);
            if i >= nge + neq {
                let (_, b) = &caps[i - nge - neq];
                e.add_constant(Some(-*b));
            }
            // A tight inequality the others contradict is left out: the
            // check below decides whether it holds anyway.
            if let Added::Overflow = elim.add(e) {
                return Err(uncertified(
                    "the exact solution overflowed 128-bit rational arithmetic",
                ));
            }
        }
        // Pivots follow the free variables, last first (each mentions
        // only later pivots and free variables).
        let mut value: Vec<Rational> = Vec::with_capacity(self.vars);
        for (j, &is_zero) in zero.iter().enumerate() {
            value.push(if is_zero || elim.index.contains_key(&j) {
                Rational::ZERO
            } else {
                near(j).ok_or_else(|| uncertified("the solver's solution is not finite"))?
            });
        }
        for (v, e) in elim.pivots.iter().rev() {
            value[*v] = e.eval_exact(&value).ok_or_else(|| {
                uncertified("the exact solution overflowed 128-bit rational arithmetic")
            })?;
        }
        self.check(&value)?;
        Ok(value)
    }

    /// Whether `x` satisfies every constraint exactly.
    fn check(&self, x: &[Rational]) -> Result<(), LpError> {
        if let Some(j) = x.iter().position(|v| *v < Rational::ZERO) {
            return Err(LpError::Uncertified(format!(
                "the exact solution makes variable {j} negative ({})",
                x[j]
            )));
        }
        let overflow =
            || uncertified("checking the solution overflowed 128-bit rational arithmetic");
        for e in &self.ge {
            let v = e.eval_exact(x).ok_or_else(overflow)?;
            if v < Rational::ZERO {
                return Err(LpError::Uncertified(format!(
                    "the solution violates an inequality by {}",
                    -v
                )));
            }
        }
        for e in &self.eq {
            let v = e.eval_exact(x).ok_or_else(overflow)?;
            if !v.is_zero() {
                return Err(LpError::Uncertified(format!(
                    "the solution violates an equality by {v}"
                )));
            }
        }
        Ok(())
    }
}
