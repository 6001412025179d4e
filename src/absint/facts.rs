//! Linear facts at every program point: a forward abstract interpretation
//! over [`Constraints`] (linear constraints per lane, joined and widened at
//! loop heads).
//!
//! Facts are per lane (see [`super::symbols`]): the facts before a
//! statement hold in every lane that executes it. A conditional refines the
//! facts of each branch by its condition — in lock step a divergent warp
//! runs each branch with the lanes whose condition agrees — and joins them
//! afterwards. A loop head is the least fixpoint found by joining for two
//! rounds, then widening; its body starts from the head and the guard.
//! Every integer variable is tracked; floating-point values are not.

use std::collections::{BTreeSet, HashMap};
use std::time::Instant;

use super::deps::{self, key};
use super::linear::{Constraints, LinExpr};
use super::symbols::{Symbols, Update, NEW};
use super::trips::Trips;
use crate::ir::{Expr, Kernel, Stmt, VarId, VarKind};
use crate::poly::Rational;

/// Rounds of a loop's fixpoint iteration before the loop falls back to
/// forgetting every variable it writes (widening normally settles long
/// before).
const MAX_ROUNDS: usize = 64;

/// Statement visits before every further loop falls back at once: nested
/// loops multiply their rounds, and this keeps deep nests linear.
const MAX_VISITS: usize = 20_000;

/// Statement visits between two looks at the clock.
const DEADLINE_EVERY: usize = 16;

/// How far [`analyze`] may go.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Most statement visits (the deterministic work limit): past them the
    /// analysis stops, the same on every machine.
    pub steps: usize,
    /// Last-resort wall-clock safety net.
    pub deadline: Instant,
}

/// Why [`analyze`] stopped before its fixpoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cut {
    /// After this many statement visits ([`Limits::steps`]).
    Steps(usize),
    /// At the wall-clock safety net ([`Limits::deadline`]).
    WallClock,
}

/// Linear facts of a kernel, keyed by statement address ([`key`]).
#[derive(Clone, Debug, Default)]
pub struct LinFacts {
    /// Facts before each statement.
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
/// Stops at `limits` with why: facts from an unfinished fixpoint are not
/// invariants, so none are kept.
pub fn analyze(
    k: &Kernel,
    syms: &Symbols,
    ghosts: &HashMap<VarId, Trips>,
    limits: Limits,
) -> Result<LinFacts, Cut> {
    let mut a = Analysis {
        k,
        syms,
        ghosts,
        facts: LinFacts::default(),
        visits: 0,
        live: super::live::live_after(k),
        constants: unwritten_inputs(k),
        limits,
        expired: None,
    };
    a.stmts(&k.body, a.initial());
    match a.expired {
        None => Ok(a.facts),
        Some(cut) => Err(cut),
    }
}

/// The scalar inputs (parameters, symbols) `k` never assigns.
fn unwritten_inputs(k: &Kernel) -> BTreeSet<VarId> {
    let mut written = BTreeSet::new();
    deps::written(&k.body, &mut written);
    (0..k.vars.len())
        .filter(|v| matches!(k.vars[*v].kind, VarKind::Param(_) | VarKind::Symbol))
        .filter(|v| !written.contains(v))
        .collect()
}

struct Analysis<'a> {
    k: &'a Kernel,
    syms: &'a Symbols,
    ghosts: &'a HashMap<VarId, Trips>,
    facts: LinFacts,
    visits: usize,
    /// Variables live after each statement: the others are forgotten.
    live: HashMap<usize, BTreeSet<VarId>>,
    /// Inputs the kernel never writes: kept even where dead, since a
    /// local copied from one (`y = n` binding a device function's
    /// parameter) is known only through it.
    constants: BTreeSet<VarId>,
    limits: Limits,
    /// Set once a limit is reached: every statement is then skipped.
    expired: Option<Cut>,
}

impl Analysis<'_> {
    /// What holds when the kernel starts: the launch facts, locals are zero
    /// (as the simulator starts them), parameters are in their types' range
    /// (and the range assumed of them, if any).
    fn initial(&self) -> Constraints {
        let mut c = self.syms.launch_constraints();
        for (v, var) in self.k.vars.iter().enumerate() {
            if !self.syms.is_int_var(v) {
                continue;
            }
            match var.kind {
                VarKind::Local => c.add_eq0(LinExpr::var(self.syms.var(v))),
                VarKind::Param(_) | VarKind::Symbol => {
                    let assumed = self.syms.assumed_facts(v);
                    for f in self.syms.type_facts(v).into_iter().chain(assumed) {
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
        let mut after = self.transfer(s, c);
        // Dead variables say nothing about what follows, except the
        // logarithms and quotients that bound ghost counters (read by no statement, they
        // are needed wherever a ghost is incremented) and the inputs the
        // kernel never writes.
        if let Some(live) = self.live.get(&key(s)) {
            for v in 0..self.k.vars.len() {
                let bounds_ghost = self.ghosts.values().any(|t| t.bounding_input() == Some(v));
                let kept = bounds_ghost || self.constants.contains(&v);
                if !live.contains(&v) && self.syms.is_int_var(v) && !kept {
                    after.forget(self.syms.var(v));
                }
            }
        }
        after
    }

    fn transfer(&mut self, s: &Stmt, c: Constraints) -> Constraints {
        self.visits += 1;
        if self.expired.is_none() {
            if self.visits > self.limits.steps {
                self.expired = Some(Cut::Steps(self.limits.steps));
            } else if self.visits.is_multiple_of(DEADLINE_EVERY)
                && Instant::now() > self.limits.deadline
            {
                self.expired = Some(Cut::WallClock);
            }
        }
        if self.expired.is_some() {
            return c;
        }
        // The last visit is from the final pass over every enclosing loop,
        // whose heads are invariants: its facts hold for every visit.
        self.facts.before.insert(key(s), c.clone());
        match s {
            Stmt::Assign { var, value, .. } => {
                let mut after = self.assign(*var, value, c);
                if let Some(Trips::Floor(counter)) = self.ghosts.get(var) {
                    // Stated as a fact of its own (it is entailed), the
                    // floor's relation survives joins at the loop head.
                    let below = LinExpr::var(self.syms.var(*counter))
                        .sub(&LinExpr::var(self.syms.var(*var)));
                    if after.entails_ge0(&below) {
                        after.add_ge0(below);
                    }
                }
                after
            }
            Stmt::Atomic {
                result: Some(r), ..
            } => self.havoc(*r, c),
            Stmt::If {
                cond, then, els, ..
            } => {
                let ft = self.syms.cond_facts(cond, Some(&c), false);
                let fe = self.syms.cond_facts(cond, Some(&c), true);
                let ct = self.refine(&c, &ft);
                let ce = self.refine(&c, &fe);
                // A branch the condition adds nothing to is as reachable as
                // the if (assumed so: no check needed).
                let reach = (
                    ft.is_empty() || ct.is_feasible(),
                    fe.is_empty() || ce.is_feasible(),
                );
                self.facts.branches.insert(key(s), reach);
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
        let mut floors = Vec::new();
        for s in step {
            if let Stmt::Assign { var, .. } = s {
                // The ghost counts finished iterations: below the trip
                // count in the body.
                let last = match self.ghosts.get(var) {
                    Some(Trips::Count(n)) => LinExpr::int(*n as i128 - 1),
                    Some(Trips::Log(l)) => LinExpr::var(self.syms.var(*l)),
                    Some(Trips::Quotient(q)) => {
                        LinExpr::var(self.syms.var(*q)).sub(&LinExpr::int(1))
                    }
                    Some(Trips::Floor(c)) => {
                        floors.push((*var, *c));
                        continue;
                    }
                    None => continue,
                };
                g.push(last.sub(&LinExpr::var(self.syms.var(*var))));
            }
        }
        // A floor ghost `f ≤ c` (proved at the head) turns a guard fact
        // decreasing in the counter `c` into one over `f`, which holds too.
        for (f, c) in floors {
            let (f, c) = (self.syms.var(f), self.syms.var(c));
            if !head.entails_ge0(&LinExpr::var(c).sub(&LinExpr::var(f))) {
                continue;
            }
            let over_floor: Vec<LinExpr> = g
                .iter()
                .filter(|l| l.coeff(c) < Rational::ZERO && l.coeff(f).is_zero())
                .map(|l| l.substitute(c, &LinExpr::var(f)))
                .collect();
            g.extend(over_floor);
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
        // A loop nested in another is entered once per round of the outer
        // one: an invariant found before that still contains the entry
        // state is still an invariant, and otherwise a good start.
        let (mut head, mut settled) = match self.facts.head.get(&key(s)) {
            Some(h) if entry.entails(h) => (h.clone(), true),
            Some(h) => (h.join(&entry), false),
            None => (entry.clone(), false),
        };
        for round in 0..MAX_ROUNDS {
            if settled || self.expired.is_some() || self.visits > MAX_VISITS {
                break;
            }
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
        self.facts.head.insert(key(s), head.clone());
        self.facts.body.insert(key(s), body_in);
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
        if c.is_bottom() {
            return c;
        }
        match self.syms.update(var, value, &c) {
            Update::Linear(l) => {
                c.assign(self.syms.var(var), &l);
                c
            }
            Update::Relation(facts) => self.relate(var, &facts, c),
        }
    }

    /// `var` takes a new value `NEW` satisfying `facts` (over `NEW` and
    /// the state before).
    fn relate(&self, var: VarId, facts: &[LinExpr], mut c: Constraints) -> Constraints {
        for f in facts {
            c.add_ge0(f.clone());
        }
        let x = self.syms.var(var);
        c.forget(x);
        c.assign(x, &LinExpr::var(NEW));
        c.forget(NEW);
        c
    }

    /// Forgets a variable, keeping what its type guarantees.
    fn havoc(&self, var: VarId, c: Constraints) -> Constraints {
        let new = LinExpr::var(NEW);
        let facts: Vec<LinExpr> = self
            .syms
            .type_facts(var)
            .into_iter()
            .map(|f| f.substitute(self.syms.var(var), &new))
            .collect();
        self.relate(var, &facts, c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::absint::deps::LaunchFacts;
    use crate::cuda::parse::parse_source;
    use crate::ir::lower::lower_kernel;
    use crate::source::SourceFile;

    #[test]
    fn loop_invariants_and_guards() {
        let f = parse_source(SourceFile::new(
            "t.cu",
            "__global__ void k(int *a, int n) { int s = 0;\n\
             for (int i = 0; i < n; i += 2) { s += a[i]; }\n\
             a[0] = s; }",
        ));
        let k = lower_kernel(&f, "k").unwrap();
        let syms = Symbols::new(
            &k,
            LaunchFacts {
                block: crate::launch::block([32, 1, 1]).ok(),
                grid: None,
                warp: 32,
            },
        );
        let limits = Limits {
            steps: usize::MAX,
            deadline: Instant::now() + std::time::Duration::from_secs(3600),
        };
        let facts = analyze(&k, &syms, &HashMap::new(), limits).unwrap();
        let lp = k
            .body
            .iter()
            .find(|s| matches!(s, Stmt::Loop { .. }))
            .unwrap();
        let v = |name: &str| {
            LinExpr::var(syms.var(k.vars.iter().position(|x| x.name == name).unwrap()))
        };
        let (i, n) = (v("i"), v("n"));
        // In the body: 0 ≤ i ≤ n − 1; at the head: i ≥ 0 (and i is even in
        // truth, which a convex domain does not say).
        let body = &facts.body[&key(lp)];
        assert!(body.entails_ge0(&i));
        assert!(body.entails_ge0(&n.sub(&i).sub(&LinExpr::int(1))));
        assert!(facts.head[&key(lp)].entails_ge0(&i));
        assert_eq!(
            facts.guards[&key(lp)]
                .iter()
                .map(|g| g.to_string_with(|s| syms.name(&k, s)))
                .collect::<Vec<_>>(),
            vec!["n - i - 1"]
        );
        // After the loop its counter is dead and forgotten.
        let store = k.body.last().unwrap();
        assert!(!facts.before[&key(store)]
            .mentions(syms.var(k.vars.iter().position(|x| x.name == "i").unwrap())));
    }
}
