//! Linear facts at every program point: a forward abstract interpretation
//! over [`Constraints`] (DESIGN §9 (a)).
//!
//! Facts are per lane (see [`super::symbols`]): the facts before a
//! statement hold in every lane that executes it. A conditional refines the
//! facts of each branch by its condition — in lock step a divergent warp
//! runs each branch with the lanes whose condition agrees — and joins them
//! afterwards. A loop head is the least fixpoint found by joining for two
//! rounds, then widening; its body starts from the head and the guard.
//! Every integer variable is tracked; floating-point values are not.

use std::collections::{BTreeSet, HashMap};

use super::deps::{self, key};
use super::linear::{Constraints, LinExpr};
use super::symbols::Symbols;
use crate::cuda::ast::BinOp;
use crate::ir::{Expr, ExprKind, Kernel, MathFn, Stmt, VarId, VarKind};
use crate::poly::Rational;

/// Rounds of a loop's fixpoint iteration before the loop falls back to
/// forgetting every variable it writes (widening normally settles long
/// before).
const MAX_ROUNDS: usize = 64;

/// Linear facts of a kernel, keyed by statement address ([`key`]).
#[derive(Clone, Debug, Default)]
pub struct LinFacts {
    /// Facts before each statement (joined over every visit).
    pub before: HashMap<usize, Constraints>,
    /// The invariant at each loop's head (before every test).
    pub head: HashMap<usize, Constraints>,
    /// The facts at the start of each loop's body.
    pub body: HashMap<usize, Constraints>,
    /// Each loop's guard facts (per lane, in the body): the linear
    /// conjuncts of its condition and the bounds of its ghost counters.
    pub guards: HashMap<usize, Vec<LinExpr>>,
    /// For each `if`: whether some lane can take the then branch, and
    /// whether some lane can take the else branch.
    pub branches: HashMap<usize, (bool, bool)>,
}

/// Runs the analysis. `ghosts` maps counter variables that the analysis
/// may assume below a trip count (see `bound::ghost`) to that count.
pub fn analyze(k: &Kernel, syms: &Symbols, ghosts: &HashMap<VarId, u64>) -> LinFacts {
    let mut a = Analysis {
        k,
        syms,
        ghosts,
        facts: LinFacts::default(),
    };
    a.stmts(&k.body, a.initial());
    a.facts
}

struct Analysis<'a> {
    k: &'a Kernel,
    syms: &'a Symbols,
    ghosts: &'a HashMap<VarId, u64>,
    facts: LinFacts,
}

impl Analysis<'_> {
    /// What holds when the kernel starts: the launch facts, locals are zero
    /// (as the simulator starts them), parameters are in their types' range.
    fn initial(&self) -> Constraints {
        let mut c = self.syms.launch_constraints();
        for (v, var) in self.k.vars.iter().enumerate() {
            if !self.syms.is_int_var(v) {
                continue;
            }
            match var.kind {
                VarKind::Local => c.add_eq0(LinExpr::var(self.syms.var(v))),
                VarKind::Param(_) => {
                    for f in self.syms.type_facts(v) {
                        c.add_ge0(f);
                    }
                }
            }
        }
        c
    }

    fn stmts(&mut self, ss: &[Stmt], mut c: Constraints) -> Constraints {
        for s in ss {
            c = self.stmt(s, c);
        }
        c
    }

    fn refine(&self, c: &Constraints, facts: &[LinExpr]) -> Constraints {
        let mut out = c.clone();
        for f in facts {
            out.add_ge0(f.clone());
        }
        out.tighten_int();
        out
    }

    fn stmt(&mut self, s: &Stmt, c: Constraints) -> Constraints {
        join_into(&mut self.facts.before, key(s), c.clone());
        match s {
            Stmt::Assign { var, value, .. } => self.assign(*var, value, c),
            Stmt::Atomic {
                result: Some(r), ..
            } => self.havoc(*r, c),
            Stmt::If {
                cond, then, els, ..
            } => {
                let ct = self.refine(&c, &self.syms.cond_facts(cond, Some(&c), false));
                let ce = self.refine(&c, &self.syms.cond_facts(cond, Some(&c), true));
                let reach = (ct.is_feasible(), ce.is_feasible());
                let r = self.facts.branches.entry(key(s)).or_insert((false, false));
                r.0 |= reach.0;
                r.1 |= reach.1;
                let ct = if reach.0 { ct } else { Constraints::bottom() };
                let ce = if reach.1 { ce } else { Constraints::bottom() };
                let t = self.stmts(then, ct);
                let e = self.stmts(els, ce);
                t.join(&e)
            }
            Stmt::Loop {
                cond,
                body,
                step,
                test_first,
                ..
            } => self.lp(s, cond.as_ref(), body, step, *test_first, c),
            Stmt::Scope { body, .. } => self.stmts(body, c),
            _ => c,
        }
    }

    /// The guard facts of a loop whose head satisfies `head`.
    fn guard(&self, cond: Option<&Expr>, step: &[Stmt], head: &Constraints) -> Vec<LinExpr> {
        let mut g = match cond {
            Some(cd) => self.syms.cond_facts(cd, Some(head), false),
            None => Vec::new(),
        };
        for s in step {
            if let Stmt::Assign { var, .. } = s {
                if let Some(&trips) = self.ghosts.get(var) {
                    // The ghost counts finished iterations: below `trips` in
                    // the body.
                    g.push(LinExpr::int(trips as i128 - 1).sub(&LinExpr::var(self.syms.var(*var))));
                }
            }
        }
        g
    }

    fn lp(
        &mut self,
        s: &Stmt,
        cond: Option<&Expr>,
        body: &[Stmt],
        step: &[Stmt],
        test_first: bool,
        entry: Constraints,
    ) -> Constraints {
        let mut head = entry.clone();
        let mut settled = false;
        for round in 0..MAX_ROUNDS {
            let (_, after) = self.iterate(cond, body, step, test_first, &head);
            // States reaching the head again: after the step (and, for
            // `do … while`, past the test).
            let back = if test_first {
                after
            } else {
                self.refine(&after, &self.guard(cond, step, &after))
            };
            if back.entails(&head) {
                settled = true;
                break;
            }
            let joined = head.join(&back);
            head = if round < 2 {
                joined
            } else {
                head.widen(&joined)
            };
        }
        if !settled {
            // Forgetting what the loop writes gives a state every
            // iteration preserves.
            let mut w = BTreeSet::new();
            deps::written(body, &mut w);
            deps::written(step, &mut w);
            head = entry;
            for v in w {
                head.forget(self.syms.var(v));
            }
        }
        let (guard, after) = self.iterate(cond, body, step, test_first, &head);
        let body_in = if test_first {
            self.refine(&head, &guard)
        } else {
            head.clone()
        };
        // A loop inside another is visited once per outer round: keep the
        // join of its visits.
        join_into(&mut self.facts.head, key(s), head.clone());
        join_into(&mut self.facts.body, key(s), body_in);
        self.facts.guards.insert(key(s), guard);
        let exit_from = if test_first { head } else { after };
        match cond {
            Some(cd) => {
                let negated = self.syms.cond_facts(cd, Some(&exit_from), true);
                self.refine(&exit_from, &negated)
            }
            // Without a condition the loop never ends.
            None => Constraints::bottom(),
        }
    }

    /// One pass over a loop's body and step from the head state `head`:
    /// the guard used and the state after the step.
    fn iterate(
        &mut self,
        cond: Option<&Expr>,
        body: &[Stmt],
        step: &[Stmt],
        test_first: bool,
        head: &Constraints,
    ) -> (Vec<LinExpr>, Constraints) {
        let guard = self.guard(cond, step, head);
        let start = if test_first {
            self.refine(head, &guard)
        } else {
            head.clone()
        };
        let after = self.stmts(body, start);
        (guard, self.stmts(step, after))
    }

    /// `var := value`.
    fn assign(&mut self, var: VarId, value: &Expr, mut c: Constraints) -> Constraints {
        if !self.syms.is_int_var(var) || c.is_bottom() {
            return c;
        }
        let x = self.syms.var(var);
        let unsigned = !self.k.vars[var].ty.is_signed();
        if let Some(l) = self.syms.linearize(value, Some(&c)) {
            if !unsigned || c.entails_ge0(&l) {
                c.assign(x, &l);
                return c;
            }
        }
        // Two linear alternatives (`c ? a : b`, `min`, `max`): the hull of
        // assigning either.
        let alternatives = match &value.kind {
            ExprKind::Select(_, a, b) => Some((&**a, &**b)),
            ExprKind::Call(MathFn::Min | MathFn::Max, args) if args.len() == 2 => {
                Some((&args[0], &args[1]))
            }
            _ => None,
        };
        if let Some((a, b)) = alternatives {
            let la = self.syms.linearize(a, Some(&c));
            let lb = self.syms.linearize(b, Some(&c));
            if let (Some(la), Some(lb)) = (la, lb) {
                let mut ca = c.clone();
                ca.assign(x, &la);
                let mut cb = c.clone();
                cb.assign(x, &lb);
                let mut out = ca.join(&cb);
                for f in self.syms.type_facts(var) {
                    out.add_ge0(f);
                }
                return out;
            }
        }
        let mut out = self.havoc(var, c);
        for f in self.value_facts(value, &out) {
            out.add_ge0(f.substitute(u32::MAX, &LinExpr::var(x)));
        }
        out
    }

    /// Forgets a variable, keeping what its type guarantees.
    fn havoc(&self, var: VarId, mut c: Constraints) -> Constraints {
        c.forget(self.syms.var(var));
        for f in self.syms.type_facts(var) {
            c.add_ge0(f);
        }
        c
    }

    /// Facts about the value of a nonlinear expression, over the
    /// placeholder symbol `u32::MAX`: the range of `a % c` and `a & m`.
    fn value_facts(&self, e: &Expr, c: &Constraints) -> Vec<LinExpr> {
        let v = LinExpr::var(u32::MAX);
        let ExprKind::Binary(op, a, b) = &e.kind else {
            return Vec::new();
        };
        let Some(m) = self
            .syms
            .linearize(b, Some(c))
            .filter(|l| l.is_constant() && l.constant.is_integer())
            .map(|l| l.constant)
        else {
            return Vec::new();
        };
        let nonneg_dividend = !a.ty.is_signed()
            || self
                .syms
                .linearize(a, Some(c))
                .is_some_and(|l| c.entails_ge0(&l));
        match op {
            BinOp::Rem if m > Rational::ZERO => {
                let top = LinExpr::constant(m - Rational::ONE).sub(&v);
                let bottom = if nonneg_dividend {
                    v.clone()
                } else {
                    v.add(&LinExpr::constant(m - Rational::ONE))
                };
                vec![top, bottom]
            }
            BinOp::BitAnd if m >= Rational::ZERO => vec![v.clone(), LinExpr::constant(m).sub(&v)],
            _ => Vec::new(),
        }
    }
}

/// `map[k] := map[k] ⊔ c`.
fn join_into(map: &mut HashMap<usize, Constraints>, k: usize, c: Constraints) {
    match map.get_mut(&k) {
        Some(e) if *e != c => *e = e.join(&c),
        Some(_) => {}
        None => {
            map.insert(k, c);
        }
    }
}
