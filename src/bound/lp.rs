//! Linear programs over nonnegative variables with exact rational
//! coefficients. They are solved in floating point through `good_lp`
//! (pure-Rust `microlp` by default, COIN-OR CBC with the `cbc` feature) on
//! an equilibrated copy (rows and columns scaled by powers of two, so a
//! potential of `1/1048576` per unit is as easy for the solver as one of
//! `1`), and the solution is then certified in exact arithmetic
//! ([`Lp::certify`], in `exact.rs`): only a solution that satisfies every
//! constraint exactly is ever turned into a bound.

use std::collections::BTreeMap;

use good_lp::{Expression, ProblemVariables, Solution, SolverModel, Variable};

use crate::poly::Rational;

/// An affine expression `Σ a_i·x_i + c` over LP variables, with exact
/// rational coefficients.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Lin {
    /// Coefficients by variable index (never zero).
    pub terms: BTreeMap<usize, Rational>,
    /// Constant.
    pub c: Rational,
    /// Whether building it overflowed `i128`: its coefficients are then
    /// not exact, and an LP holding it cannot be certified.
    pub overflow: bool,
}

impl Lin {
    /// The constant `c`.
    pub fn constant(c: Rational) -> Lin {
        Lin {
            c,
            ..Lin::default()
        }
    }

    /// The variable `x_i`.
    pub fn var(i: usize) -> Lin {
        Lin {
            terms: BTreeMap::from([(i, Rational::ONE)]),
            ..Lin::default()
        }
    }

    /// `self + k·o` (exactly; on overflow, [`Lin::overflow`] is set).
    pub fn add_scaled(&mut self, o: &Lin, k: Rational) {
        if k.is_zero() {
            return;
        }
        self.overflow |= o.overflow;
        for (i, a) in &o.terms {
            let e = self.terms.entry(*i).or_insert(Rational::ZERO);
            match a.checked_mul(k).and_then(|p| e.checked_add(p)) {
                Some(v) => *e = v,
                None => self.overflow = true,
            }
            if e.is_zero() {
                self.terms.remove(i);
            }
        }
        self.add_constant(o.c.checked_mul(k));
    }

    /// `self + c`; `None` (an overflow or a cost that is not a number)
    /// sets [`Lin::overflow`].
    pub fn add_constant(&mut self, c: Option<Rational>) {
        match c.and_then(|c| self.c.checked_add(c)) {
            Some(v) => self.c = v,
            None => self.overflow = true,
        }
    }

    /// `self + o`.
    pub fn plus(&self, o: &Lin) -> Lin {
        let mut r = self.clone();
        r.add_scaled(o, Rational::ONE);
        r
    }

    /// `self − o`.
    pub fn minus(&self, o: &Lin) -> Lin {
        let mut r = self.clone();
        r.add_scaled(o, -Rational::ONE);
        r
    }

    /// `k·self`.
    pub fn scaled(&self, k: Rational) -> Lin {
        let mut r = Lin::default();
        r.add_scaled(self, k);
        r
    }

    /// Whether it is the constant zero.
    pub fn is_zero(&self) -> bool {
        self.terms.is_empty() && self.c.is_zero() && !self.overflow
    }

    /// Value under a floating-point assignment of the variables.
    pub fn eval(&self, x: &[f64]) -> f64 {
        self.c.to_f64()
            + self
                .terms
                .iter()
                .map(|(i, a)| a.to_f64() * x[*i])
                .sum::<f64>()
    }

    /// Exact value under a rational assignment; `None` on overflow.
    pub fn eval_exact(&self, x: &[Rational]) -> Option<Rational> {
        if self.overflow {
            return None;
        }
        self.terms.iter().try_fold(self.c, |acc, (i, a)| {
            acc.checked_add(a.checked_mul(*x.get(*i)?)?)
        })
    }
}

/// Why an LP has no (certified) solution.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LpError {
    /// The constraints cannot all hold.
    Infeasible,
    /// The objective has no minimum.
    Unbounded,
    /// The solver failed.
    Solver(String),
    /// The solver's solution could not be verified in exact arithmetic.
    Uncertified(String),
}

/// A linear program over nonnegative variables.
#[derive(Clone, Debug, Default)]
pub struct Lp {
    pub(super) vars: usize,
    pub(super) ge: Vec<Lin>,
    pub(super) eq: Vec<Lin>,
    /// Whether some constraint overflowed while it was built.
    pub(super) overflow: bool,
}

/// Powers of two that bring every row and column of the constraint
/// matrix near magnitude 1 (geometric-mean equilibration, a few passes).
pub(super) struct Scaling {
    /// Variable `x_j = col[j]·y_j`, where `y_j` is what the solver sees.
    pub col: Vec<f64>,
    /// Each row (in the order given) is multiplied by `row[i]`.
    pub row: Vec<f64>,
}

/// The power of two nearest `v` (clamped to `2^±60`).
fn pow2(v: f64) -> f64 {
    if !v.is_finite() || v <= 0.0 {
        return 1.0;
    }
    v.log2().round().clamp(-60.0, 60.0).exp2()
}

impl Scaling {
    pub(super) fn new(rows: &[&Lin], vars: usize) -> Scaling {
        let mut col = vec![1.0; vars];
        let mut row = vec![1.0; rows.len()];
        for _ in 0..4 {
            for (i, r) in rows.iter().enumerate() {
                let mags = r.terms.iter().map(|(j, a)| a.to_f64().abs() * col[*j]);
                let (lo, hi) = mags.fold((f64::INFINITY, 0.0f64), |(lo, hi), m| {
                    (lo.min(m), hi.max(m))
                });
                if hi > 0.0 {
                    row[i] = pow2(1.0 / (lo * hi).sqrt());
                }
            }
            let mut lo = vec![f64::INFINITY; vars];
            let mut hi = vec![0.0f64; vars];
            for (i, r) in rows.iter().enumerate() {
                for (j, a) in &r.terms {
                    let m = a.to_f64().abs() * row[i];
                    lo[*j] = lo[*j].min(m);
                    hi[*j] = hi[*j].max(m);
                }
            }
            for j in 0..vars {
                if hi[j] > 0.0 {
                    col[j] = pow2(1.0 / (lo[j] * hi[j]).sqrt());
                }
            }
        }
        Scaling { col, row }
    }

    /// `k·e` over the scaled variables, as a solver expression.
    fn expression(&self, e: &Lin, k: f64, vars: &[Variable]) -> Expression {
        let mut x = Expression::from(e.c.to_f64() * k);
        for (j, a) in &e.terms {
            x.add_mul(a.to_f64() * self.col[*j] * k, vars[*j]);
        }
        x
    }
}

impl Lp {
    /// A fresh variable `≥ 0`.
    pub fn new_var(&mut self) -> usize {
        self.vars += 1;
        self.vars - 1
    }

    /// Adds `e ≥ 0`, unless the variables' being `≥ 0` implies it (a
    /// nonnegative constant and positive coefficients, as where a template
    /// covers a base that the potential it covers does not carry): the
    /// feasible set is the same without the row.
    pub fn ge0(&mut self, e: Lin) {
        self.overflow |= e.overflow;
        let implied = e.c >= Rational::ZERO && e.terms.values().all(|a| *a > Rational::ZERO);
        if implied && !e.overflow {
            return;
        }
        self.ge.push(e);
    }

    /// Adds `e = 0`.
    pub fn eq0(&mut self, e: Lin) {
        self.overflow |= e.overflow;
        if e.is_zero() {
            return;
        }
        self.eq.push(e);
    }

    /// Number of variables.
    pub fn num_vars(&self) -> usize {
        self.vars
    }

    /// Number of constraints.
    pub fn num_constraints(&self) -> usize {
        self.ge.len() + self.eq.len()
    }

    /// The rows in the order [`Scaling`] numbers them: `≥` rows, `=` rows,
    /// then the caps' expressions.
    pub(super) fn rows<'a>(&'a self, caps: &'a [(Lin, Rational)]) -> Vec<&'a Lin> {
        self.ge
            .iter()
            .chain(&self.eq)
            .chain(caps.iter().map(|(e, _)| e))
            .collect()
    }

    /// Minimizes `obj` in floating point subject to the constraints and
    /// `e ≤ bound·(1 + slack) + slack` for each `(e, bound)` of `caps`;
    /// returns the variable values (to be certified by [`Lp::certify`]
    /// before they are trusted).
    pub fn solve(
        &self,
        obj: &Lin,
        caps: &[(Lin, Rational)],
        slack: f64,
    ) -> Result<Vec<f64>, LpError> {
        self.solve_from(obj, caps, slack, None)
    }

    /// [`Lp::solve`], or with `from`, one round of iterative refinement:
    /// the LP is solved for a correction `z` of the point `from`, every
    /// residual magnified by `Δ` (a power of two, the inverse of the
    /// largest scaled violation, so what the solver's tolerance hid in the
    /// first solve becomes of order one), and `from + z/Δ` is returned.
    pub(super) fn solve_from(
        &self,
        obj: &Lin,
        caps: &[(Lin, Rational)],
        slack: f64,
        from: Option<&[f64]>,
    ) -> Result<Vec<f64>, LpError> {
        if self.overflow {
            return Err(LpError::Uncertified(
                "a coefficient overflowed 128-bit rational arithmetic".into(),
            ));
        }
        let rows = self.rows(caps);
        let sc = Scaling::new(&rows, self.vars);
        let (nge, neq) = (self.ge.len(), self.eq.len());
        let zeros = vec![0.0; self.vars];
        let x0 = from.unwrap_or(&zeros);
        // Each row's value at `x0`, less the cap's bound for caps.
        let residual: Vec<f64> = rows
            .iter()
            .enumerate()
            .map(|(i, e)| match i.checked_sub(nge + neq) {
                Some(c) => {
                    let b = caps[c].1.to_f64();
                    e.eval(x0) - (b + slack * (1.0 + b.abs()))
                }
                None => e.eval(x0),
            })
            .collect();
        let delta = match from {
            None => 1.0,
            Some(_) => {
                let worst = residual
                    .iter()
                    .enumerate()
                    .map(|(i, r)| {
                        let off = if i < nge || i >= nge + neq {
                            (-r).max(0.0)
                        } else {
                            r.abs()
                        };
                        off * sc.row[i]
                    })
                    .chain(x0.iter().zip(&sc.col).map(|(v, c)| (-v / c).max(0.0)))
                    .fold(1e-12f64, f64::max);
                pow2(1.0 / worst).clamp(1.0, 2f64.powi(40))
            }
        };
        let mut pv = ProblemVariables::new();
        let vars: Vec<Variable> = x0
            .iter()
            .zip(&sc.col)
            .map(|(v, c)| pv.add(good_lp::variable().min(-delta * v / c)))
            .collect();
        let top = obj
            .terms
            .iter()
            .map(|(j, a)| a.to_f64().abs() * sc.col[*j])
            .fold(0.0f64, f64::max);
        let linear = Lin {
            c: Rational::ZERO,
            ..obj.clone()
        };
        let objective = sc.expression(&linear, pow2(1.0 / top), &vars);
        #[cfg(feature = "cbc")]
        let mut model = {
            let mut m = pv.minimise(objective).using(good_lp::coin_cbc);
            m.set_parameter("log", "0");
            m
        };
        #[cfg(not(feature = "cbc"))]
        let mut model = pv.minimise(objective).using(good_lp::microlp);
        for (i, e) in rows.iter().enumerate() {
            let linear = Lin {
                c: Rational::ZERO,
                ..(*e).clone()
            };
            // `row·(terms·z + Δ·residual)`, compared with 0.
            let x = sc.expression(&linear, sc.row[i], &vars) + sc.row[i] * delta * residual[i];
            model = if i < nge {
                model.with(x.geq(0.0))
            } else if i < nge + neq {
                model.with(x.eq(0.0))
            } else {
                model.with(x.leq(0.0))
            };
        }
        match model.solve() {
            Ok(sol) => Ok(vars
                .iter()
                .zip(&sc.col)
                .zip(x0)
                .map(|((v, c), x)| x + sol.value(*v) * c / delta)
                .collect()),
            Err(good_lp::ResolutionError::Infeasible) => Err(LpError::Infeasible),
            Err(good_lp::ResolutionError::Unbounded) => Err(LpError::Unbounded),
            Err(e) => Err(LpError::Solver(e.to_string())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int(n: i128) -> Rational {
        Rational::int(n)
    }

    #[test]
    fn minimization_with_caps() {
        // x + y >= 2, x - y >= -1; minimize x with y capped at 0, then
        // without the cap.
        let mut lp = Lp::default();
        let x = lp.new_var();
        let y = lp.new_var();
        lp.ge0(Lin::var(x).plus(&Lin::var(y)).minus(&Lin::constant(int(2))));
        lp.ge0(Lin::var(x).minus(&Lin::var(y)).plus(&Lin::constant(int(1))));
        let caps = [(Lin::var(y), Rational::ZERO)];
        let v = lp.solve(&Lin::var(x), &caps, 1e-12).unwrap();
        assert!(
            (v[y] - 0.0).abs() < 1e-6 && (v[x] - 2.0).abs() < 1e-6,
            "{v:?}"
        );
        assert_eq!(lp.certify(&v, &caps).unwrap(), vec![int(2), int(0)]);
        let v = lp.solve(&Lin::var(x), &[], 0.0).unwrap();
        assert!((v[x] - 0.5).abs() < 1e-6, "{v:?}");
        assert_eq!(
            lp.certify(&v, &[]).unwrap(),
            vec![Rational::new(1, 2), Rational::new(3, 2)]
        );
        let mut bad = Lp::default();
        let z = bad.new_var();
        bad.ge0(Lin::constant(int(-1)).minus(&Lin::var(z)));
        assert_eq!(bad.solve(&Lin::var(z), &[], 0.0), Err(LpError::Infeasible));
    }

    #[test]
    fn tiny_potentials_are_found_and_certified_exactly() {
        // A loop of stride 2^20 paying 14 per iteration: q·2^20 ≥ 14,
        // minimize q: exactly 14/2^20, which a solver without scaling
        // rounds to nothing.
        for stride in [1i128 << 17, 1 << 19, 1 << 20, 3 << 20] {
            let mut lp = Lp::default();
            let q = lp.new_var();
            let k = lp.new_var();
            lp.ge0(
                Lin::var(q)
                    .scaled(int(stride))
                    .minus(&Lin::constant(int(14))),
            );
            lp.ge0(
                Lin::var(k)
                    .minus(&Lin::var(q))
                    .minus(&Lin::constant(int(3))),
            );
            let obj = Lin::var(k).plus(&Lin::var(q).scaled(int(100)));
            let v = lp.solve(&obj, &[], 0.0).unwrap();
            let x = lp.certify(&v, &[]).unwrap();
            assert_eq!(x[q], Rational::new(14, stride), "stride {stride}");
            assert_eq!(x[k], int(3) + Rational::new(14, stride));
        }
    }

    #[test]
    fn rows_the_nonnegative_variables_imply_are_left_out() {
        let mut lp = Lp::default();
        let x = lp.new_var();
        let y = lp.new_var();
        // x ≥ 0 and 2x + y + 1 ≥ 0 hold for every x, y ≥ 0.
        lp.ge0(Lin::var(x));
        lp.ge0(
            Lin::var(x)
                .scaled(int(2))
                .plus(&Lin::var(y))
                .plus(&Lin::constant(int(1))),
        );
        assert_eq!(lp.num_constraints(), 0);
        // x − y ≥ 0 and x − 1 ≥ 0 do not.
        lp.ge0(Lin::var(x).minus(&Lin::var(y)));
        lp.ge0(Lin::var(x).minus(&Lin::constant(int(1))));
        assert_eq!(lp.num_constraints(), 2);
    }

    #[test]
    fn a_solution_that_misses_a_constraint_is_not_certified() {
        let mut lp = Lp::default();
        let x = lp.new_var();
        lp.ge0(Lin::var(x).minus(&Lin::constant(Rational::new(1, 3))));
        // Far below 1/3: no exact solution near it satisfies x ≥ 1/3.
        assert!(matches!(
            lp.certify(&[0.25], &[]),
            Err(LpError::Uncertified(_))
        ));
        // Near it: 1/3 exactly.
        assert_eq!(
            lp.certify(&[0.333_333_333_3], &[]),
            Ok(vec![Rational::new(1, 3)])
        );
    }
}
