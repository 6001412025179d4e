//! Linear programs over nonnegative variables, solved lexicographically
//! through `good_lp` (pure-Rust `microlp` by default, COIN-OR CBC with the
//! `cbc` feature).

use std::collections::BTreeMap;

use good_lp::{Expression, ProblemVariables, Solution, SolverModel, Variable};

/// An affine expression `Σ a_i·x_i + c` over LP variables.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Lin {
    /// Coefficients by variable index.
    pub terms: BTreeMap<usize, f64>,
    /// Constant.
    pub c: f64,
}

impl Lin {
    /// The constant `c`.
    pub fn constant(c: f64) -> Lin {
        Lin {
            terms: BTreeMap::new(),
            c,
        }
    }

    /// The variable `x_i`.
    pub fn var(i: usize) -> Lin {
        Lin {
            terms: BTreeMap::from([(i, 1.0)]),
            c: 0.0,
        }
    }

    /// `self + k·o`.
    pub fn add_scaled(&mut self, o: &Lin, k: f64) {
        if k == 0.0 {
            return;
        }
        for (i, a) in &o.terms {
            let e = self.terms.entry(*i).or_insert(0.0);
            *e += a * k;
            if *e == 0.0 {
                self.terms.remove(i);
            }
        }
        self.c += o.c * k;
    }

    /// `self + o`.
    pub fn plus(&self, o: &Lin) -> Lin {
        let mut r = self.clone();
        r.add_scaled(o, 1.0);
        r
    }

    /// `self − o`.
    pub fn minus(&self, o: &Lin) -> Lin {
        let mut r = self.clone();
        r.add_scaled(o, -1.0);
        r
    }

    /// `k·self`.
    pub fn scaled(&self, k: f64) -> Lin {
        let mut r = Lin::default();
        r.add_scaled(self, k);
        r
    }

    /// Value under an assignment of the variables.
    pub fn eval(&self, x: &[f64]) -> f64 {
        self.c + self.terms.iter().map(|(i, a)| a * x[*i]).sum::<f64>()
    }

    fn to_expression(&self, vars: &[Variable]) -> Expression {
        let mut e = Expression::from(self.c);
        for (i, a) in &self.terms {
            e.add_mul(*a, vars[*i]);
        }
        e
    }
}

/// Why an LP has no solution.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LpError {
    /// The constraints cannot all hold.
    Infeasible,
    /// The objective has no minimum.
    Unbounded,
    /// The solver failed.
    Solver(String),
}

/// A linear program over nonnegative variables.
#[derive(Clone, Debug, Default)]
pub struct Lp {
    vars: usize,
    ge: Vec<Lin>,
    eq: Vec<Lin>,
}

impl Lp {
    /// A fresh variable `≥ 0`.
    pub fn new_var(&mut self) -> usize {
        self.vars += 1;
        self.vars - 1
    }

    /// Adds `e ≥ 0`.
    pub fn ge0(&mut self, e: Lin) {
        if e.terms.is_empty() && e.c >= 0.0 {
            return;
        }
        self.ge.push(e);
    }

    /// Adds `e = 0`.
    pub fn eq0(&mut self, e: Lin) {
        if e.terms.is_empty() && e.c == 0.0 {
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

    /// Minimizes `obj` subject to the constraints and `e ≤ bound` for each
    /// `(e, bound)` of `caps`; returns the variable values.
    pub fn solve(&self, obj: &Lin, caps: &[(Lin, f64)]) -> Result<Vec<f64>, LpError> {
        let mut pv = ProblemVariables::new();
        let vars: Vec<Variable> = (0..self.vars)
            .map(|_| pv.add(good_lp::variable().min(0.0)))
            .collect();
        let objective = obj.to_expression(&vars);
        #[cfg(feature = "cbc")]
        let mut model = {
            let mut m = pv.minimise(objective).using(good_lp::coin_cbc);
            m.set_parameter("log", "0");
            m
        };
        #[cfg(not(feature = "cbc"))]
        let mut model = pv.minimise(objective).using(good_lp::microlp);
        for e in &self.ge {
            model = model.with(e.to_expression(&vars).geq(0.0));
        }
        for e in &self.eq {
            model = model.with(e.to_expression(&vars).eq(0.0));
        }
        for (o, bound) in caps {
            model = model.with(o.to_expression(&vars).leq(*bound));
        }
        match model.solve() {
            Ok(sol) => Ok(vars.iter().map(|v| sol.value(*v)).collect()),
            Err(good_lp::ResolutionError::Infeasible) => Err(LpError::Infeasible),
            Err(good_lp::ResolutionError::Unbounded) => Err(LpError::Unbounded),
            Err(e) => Err(LpError::Solver(e.to_string())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minimization_with_caps() {
        // x + y >= 2, x - y >= -1; minimize x with y capped at 0, then
        // without the cap.
        let mut lp = Lp::default();
        let x = lp.new_var();
        let y = lp.new_var();
        lp.ge0(Lin::var(x).plus(&Lin::var(y)).minus(&Lin::constant(2.0)));
        lp.ge0(Lin::var(x).minus(&Lin::var(y)).plus(&Lin::constant(1.0)));
        let v = lp.solve(&Lin::var(x), &[(Lin::var(y), 0.0)]).unwrap();
        assert!(
            (v[y] - 0.0).abs() < 1e-6 && (v[x] - 2.0).abs() < 1e-6,
            "{v:?}"
        );
        let v = lp.solve(&Lin::var(x), &[]).unwrap();
        assert!((v[x] - 0.5).abs() < 1e-6, "{v:?}");
        let mut bad = Lp::default();
        let z = bad.new_var();
        bad.ge0(Lin::constant(-1.0).minus(&Lin::var(z)));
        assert_eq!(bad.solve(&Lin::var(z), &[]), Err(LpError::Infeasible));
    }
}
