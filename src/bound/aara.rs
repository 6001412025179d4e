//! Constraint generation for automatic amortized resource analysis
//! (RaCUDA Fig. 4), backward over the jump-free IR.
//!
//! Going backward, each statement turns the potential after it into the
//! potential before it: a cost `c` adds `c` to the constant, an assignment
//! moves potential between bases (exactly for `x := e` with `e` free of `x`,
//! amortized for `x := x + d`: a base that shrinks by at least `k` where the
//! facts show it is at least `k` releases `k` units per unit of coefficient).
//! Uniform conditionals start both branches from one template that covers
//! both (Q:If1); possibly divergent ones pay `if + div` and run the branches
//! in sequence, dropping the potential of variables they write (Q:If4).
//! Loop heads get templates that pay for the test and the body and are
//! restored by the back edge (Q:While1/2). A base carries potential only
//! where it has the same value in every active lane: templates only have
//! such bases, and the transfer keeps it so.
//!
//! Jump elimination's guards `if (!flag)` take their `then` side: the
//! lanes still running have every flag clear. A warp whose every lane set
//! a flag is elsewhere: where the jump goes in the original kernel (after
//! the loop or scope a `break` leaves, at the step of the loop a
//! `continue` goes on with, nowhere after a `return`), with its variables
//! as they were. So setting a flag starts from a template that covers both
//! the code after it (some lanes go on) and the jump's target (none does).

use std::collections::{BTreeSet, HashMap};
use std::sync::Mutex;

use super::base::Bases;
use super::lp::{Lin, Lp};
use super::potential::Pot;
use crate::absint::deps::{self, key, DepFacts, State};
use crate::absint::facts::LinFacts;
use crate::absint::linear::{Constraints, LinExpr, Sym};
use crate::absint::symbols::{int_bounds, Symbols, Update, NEW};
use crate::cost::CostTable;
use crate::ir::structured::FlagKind;
use crate::ir::{Access, Builtin, Expr, ExprKind, Kernel, SiteId, Stmt, Value, VarId, VarKind};
use crate::poly::Rational;

/// Generates the LP of one kernel under one cost table.
pub struct Aara<'a> {
    /// The kernel (jump-free, with ghost counters).
    pub k: &'a Kernel,
    /// Thread dependence.
    pub deps: &'a DepFacts,
    /// Linear facts.
    pub lin: &'a LinFacts,
    /// Symbols.
    pub syms: &'a Symbols,
    /// Base functions.
    pub bases: &'a Bases,
    /// The cost of each resource constant.
    pub cost: CostTable,
    /// Worst-case transactions (global) or conflict degree (shared) per
    /// access site.
    pub mem: &'a HashMap<SiteId, u64>,
    /// Ghost counters (assigning them is free).
    pub ghosts: &'a HashMap<VarId, crate::absint::trips::Trips>,
    /// The jump flags, and the jump each records.
    pub flags: &'a [(VarId, FlagKind)],
    /// The potential at each jump flag's target, recorded as the backward
    /// pass enters the flag's loop or scope (empty to start with).
    pub targets: HashMap<VarId, Pot>,
    /// Worst case for a site without a bound: every lane on its own.
    pub lanes: u64,
    /// The LP being built.
    pub lp: Lp,
    /// Transfer options per (assignment, base), shared by every metric.
    pub memo: &'a Mutex<TransferMemo>,
    /// Bases that carry no potential anywhere (empty but for the second
    /// solve of `bound::lexi`).
    pub excluded: BTreeSet<usize>,
}

/// Transfer options per (assignment statement key, base).
pub type TransferMemo = HashMap<(usize, usize), Vec<Transfer>>;

impl Aara<'_> {
    /// A template: a fresh variable for the constant and for each base of
    /// `wanted` whose value is the same in every active lane in state `st`.
    fn template_over(&mut self, st: &State, wanted: &BTreeSet<usize>) -> Pot {
        let mut p = Pot {
            konst: Lin::var(self.lp.new_var()),
            ..Pot::default()
        };
        for &i in wanted {
            if !self.excluded.contains(&i) && self.uniform_base(i, st) {
                p.coef.insert(i, Lin::var(self.lp.new_var()));
            }
        }
        p
    }

    /// Whether base `i` has one value across the active lanes in `st`.
    pub fn uniform_base(&self, i: usize, st: &State) -> bool {
        self.bases
            .factors(i)
            .iter()
            .all(|&f| self.syms.is_uniform(&self.bases.linear[f], st))
    }

    /// `a ≥ b`, coefficient by coefficient.
    fn ge(&mut self, a: &Pot, b: &Pot) {
        self.lp.ge0(a.konst.minus(&b.konst));
        let keys: BTreeSet<usize> = a.support().chain(b.support()).collect();
        let zero = Lin::default();
        for i in keys {
            let x = a.coef.get(&i).unwrap_or(&zero);
            let y = b.coef.get(&i).unwrap_or(&zero);
            self.lp.ge0(x.minus(y));
        }
    }

    /// Requires the bases over any of `vars` to carry nothing in `p`.
    fn zero_on(&mut self, p: &mut Pot, vars: &BTreeSet<VarId>) {
        let hit: Vec<usize> = p
            .support()
            .filter(|&i| {
                vars.iter()
                    .any(|&v| self.bases.mentions(i, self.syms.var(v)))
            })
            .collect();
        for i in hit {
            if let Some(q) = p.coef.remove(&i) {
                self.lp.eq0(q);
            }
        }
    }

    /// Requires the bases over what `stmts` writes to carry nothing in `p`.
    fn zero_written(&mut self, p: &mut Pot, stmts: &[Stmt]) {
        let mut w = BTreeSet::new();
        deps::written(stmts, &mut w);
        self.zero_on(p, &w);
    }

    /// Requires the bases not uniform in `st` to carry nothing in `p`.
    pub fn zero_nonuniform(&mut self, p: &mut Pot, st: &State) {
        let hit: Vec<usize> = p.support().filter(|&i| !self.uniform_base(i, st)).collect();
        for i in hit {
            if let Some(q) = p.coef.remove(&i) {
                self.lp.eq0(q);
            }
        }
    }

    /// Cost of evaluating an expression: every operand and operator, as if
    /// every lane took every side of `&&`, `||` and `?:`.
    pub fn expr_cost(&self, e: &Expr) -> f64 {
        let c = &self.cost;
        match &e.kind {
            ExprKind::Const(_) => c.konst,
            ExprKind::Var(v) => match self.k.vars[*v].kind {
                VarKind::Param(_) => c.param,
                VarKind::Local => c.var,
                // What the literal a `-D` would give costs.
                VarKind::Symbol => c.konst,
            },
            ExprKind::Builtin(Builtin::ThreadIdx(_)) => c.var,
            ExprKind::Builtin(_) => c.param,
            ExprKind::Unary(_, x) => c.op + self.expr_cost(x),
            ExprKind::Binary(_, a, b) | ExprKind::And(a, b) | ExprKind::Or(a, b) => {
                c.op + self.expr_cost(a) + self.expr_cost(b)
            }
            ExprKind::Select(x, a, b) => {
                c.op + self.expr_cost(x) + self.expr_cost(a) + self.expr_cost(b)
            }
            ExprKind::Convert { value, explicit } => {
                self.expr_cost(value) + if *explicit { c.op } else { 0.0 }
            }
            ExprKind::Load(a) => self.expr_cost(&a.index) + self.access_cost(a, false),
            ExprKind::Call(_, args) => c.op + args.iter().map(|a| self.expr_cost(a)).sum::<f64>(),
        }
    }

    /// Cost of the memory access itself (nothing for the components of a
    /// vector access after the first, which pays for all of them).
    fn access_cost(&self, a: &Access, write: bool) -> f64 {
        if !a.charged {
            return 0.0;
        }
        let arr = &self.k.arrays[a.array];
        let n = self.mem.get(&a.site).copied().unwrap_or(self.lanes);
        let c = &self.cost;
        match (arr.is_shared(), arr.is_global(), write) {
            (true, _, true) => c.swrite.of(n),
            (true, _, false) => c.sread.of(n),
            (_, true, true) => c.gwrite.of(n),
            (_, true, false) => c.gread.of(n),
            (_, _, true) => c.vwrite,
            (_, _, false) => c.var,
        }
    }

    /// Cost of one run of a statement that is not control flow (an
    /// assignment, store, atomic or barrier; 0 for anything else): ghost
    /// counters are free.
    fn simple_cost(&self, s: &Stmt) -> f64 {
        match s {
            Stmt::Assign { var, .. } if self.ghosts.contains_key(var) => 0.0,
            Stmt::Assign { value, .. } => self.cost.vwrite + self.expr_cost(value),
            Stmt::Store { access, value, .. } => {
                self.expr_cost(&access.index)
                    + self.expr_cost(value)
                    + self.access_cost(access, true)
            }
            Stmt::Atomic {
                access,
                value,
                compare,
                result,
                ..
            } => {
                self.expr_cost(&access.index)
                    + self.expr_cost(value)
                    + self.access_cost(access, true)
                    + compare.as_ref().map_or(0.0, |x| self.expr_cost(x))
                    + if result.is_some() {
                        self.cost.vwrite
                    } else {
                        0.0
                    }
            }
            Stmt::Sync { .. } => self.cost.sync,
            _ => 0.0,
        }
    }

    /// Worst-case cost of one run of loop-free statements, `None` when they
    /// contain a loop: what one side of a branch costs per execution.
    /// Nested branches cost their test and, where they may diverge, the
    /// divergence and both sides, else the dearer side.
    pub fn straight_cost(&self, stmts: &[Stmt]) -> Option<f64> {
        let mut total = 0.0;
        for s in stmts {
            total += match s {
                Stmt::If {
                    cond, then, els, ..
                } => {
                    let (t, e) = (self.straight_cost(then)?, self.straight_cost(els)?);
                    let test = self.expr_cost(cond) + self.cost.test;
                    if self.uniform_cond(s) {
                        test + t.max(e)
                    } else {
                        test + self.cost.div + t + e
                    }
                }
                Stmt::Loop { .. } => return None,
                Stmt::Scope { body, .. } => self.straight_cost(body)?,
                _ => self.simple_cost(s),
            };
        }
        Some(total)
    }

    /// A cost every warp certainly incurs running `stmts` from the start
    /// with its lanes together: the statements outside any branch or loop
    /// body, the test of every `if`, and the first test of every loop that
    /// tests first (after jump elimination, code past a `return` is inside
    /// a branch). A bound below it is wrong.
    pub fn certain_cost(&self, stmts: &[Stmt]) -> f64 {
        stmts
            .iter()
            .map(|s| match s {
                Stmt::If { cond, .. } => self.expr_cost(cond) + self.cost.test,
                Stmt::Loop {
                    cond: Some(c),
                    test_first: true,
                    ..
                } => self.expr_cost(c) + self.cost.test,
                Stmt::Loop { .. } => 0.0,
                Stmt::Scope { body, .. } => self.certain_cost(body),
                _ => self.simple_cost(s),
            })
            .sum()
    }

    /// The potential before `stmts`, given the potential after.
    pub fn stmts(&mut self, stmts: &[Stmt], mut post: Pot) -> Pot {
        for s in stmts.iter().rev() {
            post = self.stmt(s, post);
        }
        post
    }

    /// The dependence state recorded for `s`, or all-varying if none was
    /// (nothing is then assumed uniform).
    fn state(&self, map: &HashMap<usize, State>, s: &Stmt) -> State {
        map.get(&key(s))
            .cloned()
            .unwrap_or_else(|| vec![deps::Dep::Varying; self.k.vars.len()])
    }

    fn uniform_cond(&self, s: &Stmt) -> bool {
        self.deps
            .uniform_cond
            .get(&key(s))
            .copied()
            .unwrap_or(false)
    }

    /// The potential before `s`, given the potential after.
    pub fn stmt(&mut self, s: &Stmt, post: Pot) -> Pot {
        match s {
            Stmt::Assign { var, value, .. } => {
                let mut pre = match self.jump_kind(*var, value) {
                    Some(kind) => self.jump(s, *var, kind, post),
                    None => self.assign(s, *var, value, post),
                };
                pre.add_const(self.simple_cost(s));
                pre
            }
            Stmt::Store { .. } | Stmt::Sync { .. } => {
                let mut pre = post;
                pre.add_const(self.simple_cost(s));
                pre
            }
            Stmt::Atomic { result, .. } => {
                let mut pre = post;
                if let Some(r) = result {
                    self.zero_on(&mut pre, &BTreeSet::from([*r]));
                }
                pre.add_const(self.simple_cost(s));
                pre
            }
            Stmt::If {
                cond, then, els, ..
            } => self.conditional(s, cond, then, els, post),
            Stmt::Loop {
                cond,
                body,
                step,
                test_first,
                ..
            } => self.lp_loop(s, cond.as_ref(), body, step, *test_first, post),
            Stmt::Scope { scope, body } => {
                let mut post = post;
                if self.deps.divergent_exit.contains(scope) {
                    // Lanes leave the scope at different points.
                    self.zero_written(&mut post, body);
                }
                self.record_target(FlagKind::Break(*scope), &post);
                self.stmts(body, post)
            }
            Stmt::Jump { .. } | Stmt::Return { .. } => post,
        }
    }

    /// The jump that `var := value` makes when it sets a jump flag;
    /// `None` for any other assignment.
    fn jump_kind(&self, var: VarId, value: &Expr) -> Option<FlagKind> {
        if matches!(value.kind, ExprKind::Const(Value::I(0))) {
            return None;
        }
        let (_, kind) = self.flags.iter().find(|(f, _)| *f == var)?;
        Some(*kind)
    }

    /// The potential before `s`, which sets jump flag `flag`: enough for
    /// the code after it (`post`, where some lanes go on) and for the
    /// jump's target (where the warp is when every lane jumped; nothing
    /// follows a `return`). A target not recorded (the backward pass
    /// records it on entering the flag's loop or scope) makes the LP
    /// infeasible: no bound rather than a wrong one.
    fn jump(&mut self, s: &Stmt, flag: VarId, kind: FlagKind, post: Pot) -> Pot {
        let target = match kind {
            FlagKind::Return => Some(Pot::default()),
            _ => self.targets.get(&flag).cloned(),
        };
        let Some(target) = target else {
            self.lp.ge0(Lin::constant(-Rational::ONE));
            return post;
        };
        let st = self.state(&self.deps.before, s);
        let used: BTreeSet<usize> = post.support().chain(target.support()).collect();
        let pre = self.template_over(&st, &used);
        self.ge(&pre, &post);
        self.ge(&pre, &target);
        pre
    }

    /// Records `target` as the potential where the jumps of `kind` go.
    fn record_target(&mut self, kind: FlagKind, target: &Pot) {
        for (f, k) in self.flags {
            if *k == kind {
                self.targets.insert(*f, target.clone());
            }
        }
    }

    fn conditional(
        &mut self,
        s: &Stmt,
        cond: &Expr,
        then: &[Stmt],
        els: &[Stmt],
        post: Pot,
    ) -> Pot {
        let test = self.expr_cost(cond) + self.cost.test;
        let (mut some_then, mut some_else) = self
            .lin
            .branches
            .get(&key(s))
            .copied()
            .unwrap_or((true, true));
        // A condition with one value in every running lane (a guard
        // `if (!flag)` of jump elimination) takes one branch.
        let before = self.state(&self.deps.before, s);
        match deps::dep_of(self.k, self.syms.launch(), cond, &before).constant() {
            Some(0) => some_then = false,
            Some(_) => some_else = false,
            None => {}
        }
        if !some_then || !some_else {
            // Only one branch can run (Q:If2/3), and no lane can diverge.
            let mut pre = match (some_then, some_else) {
                (true, false) => self.stmts(then, post),
                (false, true) => self.stmts(els, post),
                _ => post,
            };
            pre.add_const(test);
            return pre;
        }
        if self.uniform_cond(s) {
            let tp = self.stmts(then, post.clone());
            let ep = self.stmts(els, post);
            if tp == ep {
                let mut pre = tp;
                pre.add_const(test);
                return pre;
            }
            let st = self.state(&self.deps.before, s);
            // Components the branches never use are zero in the template.
            let used: BTreeSet<usize> = tp.support().chain(ep.support()).collect();
            let mut t = self.template_over(&st, &used);
            self.ge(&t, &tp);
            self.ge(&t, &ep);
            t.add_const(test);
            return t;
        }
        // Q:If4: then, then else, in sequence.
        let mut w_then = BTreeSet::new();
        deps::written(then, &mut w_then);
        let mut w = w_then.clone();
        deps::written(els, &mut w);
        let mut post = post;
        self.zero_on(&mut post, &w);
        let mut ep = self.stmts(els, post);
        self.zero_on(&mut ep, &w_then);
        let mut tp = self.stmts(then, ep);
        tp.add_const(test + self.cost.div);
        tp
    }

    fn lp_loop(
        &mut self,
        s: &Stmt,
        cond: Option<&Expr>,
        body: &[Stmt],
        step: &[Stmt],
        test_first: bool,
        post: Pot,
    ) -> Pot {
        let mut test = match cond {
            Some(c) => self.expr_cost(c) + self.cost.test,
            None => 0.0,
        };
        let mut post = post;
        let Stmt::Loop { scope, .. } = s else {
            return post;
        };
        let divergent_test = !self.uniform_cond(s);
        if divergent_test {
            // Q:While2: each test may diverge.
            test += self.cost.div;
        }
        if divergent_test || self.deps.divergent_exit.contains(scope) {
            // Lanes leave at different iterations: what the loop writes is
            // not uniform afterwards.
            let mut w = BTreeSet::new();
            deps::written(body, &mut w);
            deps::written(step, &mut w);
            self.zero_on(&mut post, &w);
        }
        let skipped = self.deps.divergent_continue.get(scope).cloned();
        // A `break` goes on after the loop, without its test.
        self.record_target(FlagKind::Break(*scope), &post);
        let mut exit = post;
        exit.add_const(test);
        let body_runs = self.lin.body.get(&key(s)).is_none_or(|c| c.is_feasible());
        if test_first && !body_runs {
            return exit;
        }
        let st = self.state(&self.deps.head, s);
        // The head carries what the loop changes and what comes after it.
        let mut w = BTreeSet::new();
        deps::written(body, &mut w);
        deps::written(step, &mut w);
        let wanted: BTreeSet<usize> = (0..self.bases.len())
            .filter(|&i| {
                exit.coef.contains_key(&i)
                    || w.iter().any(|&v| self.bases.mentions(i, self.syms.var(v)))
            })
            .collect();
        let head = self.template_over(&st, &wanted);
        if test_first {
            let mut after_body = self.stmts(step, head.clone());
            if let Some(w) = &skipped {
                // Lanes that continued skipped writing these.
                self.zero_on(&mut after_body, w);
            }
            // A `continue` goes on with the step.
            self.record_target(FlagKind::Continue(*scope), &after_body);
            let bp = self.stmts(body, after_body);
            let mut bp = match self.lin.body.get(&key(s)) {
                Some(ctx) => self.weaken(bp, ctx, &st, &wanted),
                None => bp,
            };
            bp.add_const(test);
            self.ge(&head, &bp);
            if cond.is_some() {
                self.ge(&head, &exit);
            }
            head
        } else {
            // `head` is before the body, `t` before the test.
            let t = self.template_over(&st, &wanted);
            let mut back = head.clone();
            back.add_const(test);
            self.ge(&t, &back);
            if cond.is_some() {
                self.ge(&t, &exit);
            }
            let mut after_body = self.stmts(step, t);
            if let Some(w) = &skipped {
                self.zero_on(&mut after_body, w);
            }
            self.record_target(FlagKind::Continue(*scope), &after_body);
            let bp = self.stmts(body, after_body);
            self.ge(&head, &bp);
            head
        }
    }

    /// Weakening (Q:WEAK) where the facts `ctx` give a linear base a lower
    /// bound `k ≥ 1`, as at the start of a loop body: `max(0, L) ≥
    /// max(0, L − k) + k`, so potential on a base containing `L` may pay
    /// for the same base with `L − k` plus `k` times the rest — the loop
    /// pays for an iteration as it starts rather than when its counter
    /// moves. The LP decides how much moves (`w ≥ 0` per rewrite); only the
    /// bases of `wanted` (those the loop head carries) are rewritten.
    fn weaken(
        &mut self,
        need: Pot,
        ctx: &Constraints,
        st: &State,
        wanted: &BTreeSet<usize>,
    ) -> Pot {
        let mut pre = need;
        // Only bases the head may carry can pay: their linear factors.
        let factors: BTreeSet<usize> = wanted
            .iter()
            .flat_map(|&p| self.bases.factors(p).iter().copied())
            .collect();
        for a in factors {
            let la = self.bases.linear[a].clone();
            if !self.syms.is_uniform(&la, st) {
                continue;
            }
            let Some(k) = int_bounds(ctx, &la).0.filter(|k| *k >= Rational::ONE) else {
                continue;
            };
            let Some((partner, scale)) = self.bases.find_linear(&la.sub(&LinExpr::constant(k)))
            else {
                continue;
            };
            for &p in wanted {
                let factors = self.bases.factors(p);
                if self.excluded.contains(&p) {
                    continue;
                }
                let Some(pos) = factors.iter().position(|&f| f == a) else {
                    continue;
                };
                if !self.uniform_base(p, st) {
                    continue;
                }
                let mut rest = factors.to_vec();
                rest.remove(pos);
                let mut shifted = rest.clone();
                shifted.push(partner);
                let (Some(shifted), rest) = (self.bases.find(&shifted), self.bases.find(&rest))
                else {
                    continue;
                };
                if rest.is_none() && factors.len() > 1 {
                    continue;
                }
                let w = Lin::var(self.lp.new_var());
                pre.add(p, &w, Rational::ONE);
                pre.add(shifted, &w, -scale);
                match rest {
                    Some(r) => pre.add(r, &w, -k),
                    None => pre.konst.add_scaled(&w, -k),
                }
            }
        }
        pre
    }

    /// Moves potential across `var := value` (Q:VWRITE1/2). Where both
    /// the exact substitution and the amortized shift apply, the LP splits
    /// each coefficient between them.
    fn assign(&mut self, s: &Stmt, var: VarId, value: &Expr, post: Pot) -> Pot {
        let x = self.syms.var(var);
        let affected: Vec<usize> = post
            .support()
            .filter(|&i| self.bases.mentions(i, x))
            .collect();
        if affected.is_empty() {
            return post;
        }
        // What the bases over `x` carry after the assignment moves into
        // `moved`, kept apart until every one has moved: a base that
        // receives potential from another (`n − i` from `n − i + 1` under
        // `i := i + 1`) may itself be over `x`, and what it received is
        // already potential before the assignment, not to be moved again.
        let mut pre = post;
        let mut moved = Pot::default();
        let mut found = None;
        for i in affected {
            let Some(q) = pre.coef.remove(&i) else {
                continue;
            };
            // The options depend on the statement and base only, not on the
            // metric: computed once per kernel.
            let cached = self
                .memo
                .lock()
                .ok()
                .and_then(|m| m.get(&(key(s), i)).cloned());
            let options = match cached {
                Some(o) => o,
                None => {
                    let (ctx, st, update) = found.get_or_insert_with(|| {
                        let ctx = self.lin.before.get(&key(s)).cloned().unwrap_or_default();
                        let st = self.state(&self.deps.before, s);
                        let update = self.syms.update(var, value, &ctx);
                        (ctx, st, update)
                    });
                    let o = self.options(i, x, ctx, st, update);
                    if let Ok(mut m) = self.memo.lock() {
                        m.insert((key(s), i), o.clone());
                    }
                    o
                }
            };
            match options.as_slice() {
                // No way to express the base after the assignment through
                // bases before it: it carries nothing there.
                [] => self.lp.eq0(q),
                [only] => self.apply(&mut moved, &q, only),
                [first, second, ..] => {
                    let part = Lin::var(self.lp.new_var());
                    self.apply(&mut moved, &part, first);
                    self.apply(&mut moved, &q.minus(&part), second);
                }
            }
        }
        pre.konst.add_scaled(&moved.konst, Rational::ONE);
        for (i, q) in &moved.coef {
            pre.add(*i, q, Rational::ONE);
        }
        pre
    }

    /// The ways base `i`'s potential after `x`'s update can be paid before
    /// it: for an increment, the exact substitution and the amortized shift
    /// (the LP splits between them); for a new value, the substitution, or
    /// else the shift.
    fn options(
        &self,
        i: usize,
        x: Sym,
        ctx: &Constraints,
        st: &State,
        update: &Update,
    ) -> Vec<Transfer> {
        match update {
            // An increment: both the exact move and the amortized one.
            Update::Linear(le) if le.coeff(x) == Rational::ONE => [
                self.substitution(i, x, le),
                self.shift(i, x, le, ctx, ctx, st),
            ]
            .into_iter()
            .flatten()
            .collect(),
            // A new value: the exact move where there is one.
            Update::Linear(le) => self
                .substitution(i, x, le)
                .or_else(|| self.shift(i, x, le, ctx, ctx, st))
                .into_iter()
                .collect(),
            // Facts about the new value: its change from the old one, or
            // a constant ceiling on the factors it enters.
            Update::Relation(facts) => {
                let mut rel = ctx.clone();
                for f in facts {
                    rel.add_ge0(f.clone());
                }
                [
                    self.shift(i, x, &LinExpr::var(NEW), &rel, ctx, st),
                    self.ceiling(i, x, &rel),
                ]
                .into_iter()
                .flatten()
                .collect()
            }
        }
    }

    /// Adds `q·coef` to each term of a transfer; an inequality transfer
    /// needs `q ≥ 0`.
    fn apply(&mut self, pre: &mut Pot, q: &Lin, t: &Transfer) {
        if t.inequality {
            self.lp.ge0(q.clone());
        }
        for (b, coef) in &t.terms {
            match b {
                Some(b) => pre.add(*b, q, *coef),
                None => pre.konst.add_scaled(q, *coef),
            }
        }
    }

    /// `x` becomes `new` (a form over the state before, or [`NEW`] with
    /// facts in `rel`): each factor `L` of base `i` changes by
    /// `δ = L[x := new] − L`; an upper bound `h` of `δ` under `rel` gives
    /// `max(0, L + δ) ≤ max(0, L) + r` — a release `r = −min(lb L, −h)`
    /// when `h ≤ 0` (with `lb L` from the facts `ctx` before), a payment
    /// `r = h` otherwise — and the product of the factors expands. `None`
    /// when some change is unbounded or a factor is not uniform before.
    fn shift(
        &self,
        i: usize,
        x: Sym,
        new: &LinExpr,
        rel: &Constraints,
        ctx: &Constraints,
        st: &State,
    ) -> Option<Transfer> {
        let factors = self.bases.factors(i);
        let mut r = Vec::with_capacity(factors.len());
        for &f in factors {
            let l = &self.bases.linear[f];
            if l.coeff(x).is_zero() {
                r.push(Rational::ZERO);
                continue;
            }
            if !self.syms.is_uniform(l, st) {
                return None;
            }
            let delta = l.substitute(x, new).sub(l);
            let Some(h) = int_bounds(rel, &delta).1 else {
                r.push(by_sign(rel, l, &l.substitute(x, new))?);
                continue;
            };
            match h {
                hi if hi <= Rational::ZERO => {
                    let lb = int_bounds(ctx, l).0.unwrap_or(Rational::ZERO);
                    r.push(-lb.max(Rational::ZERO).min(-hi));
                }
                hi => r.push(hi),
            }
        }
        // Π (M_f + r_f) = Σ over subsets S of Π_{f∈S} M_f · Π_{f∉S} r_f.
        let mut terms = Vec::new();
        for mask in 0..(1u32 << factors.len()) {
            let mut coef = Rational::ONE;
            let mut sub = Vec::new();
            for (j, &f) in factors.iter().enumerate() {
                if mask & (1 << j) != 0 {
                    sub.push(f);
                } else {
                    coef = coef * r[j];
                }
            }
            if coef.is_zero() {
                continue;
            }
            if sub.is_empty() {
                terms.push((None, coef));
            } else {
                terms.push((Some(self.bases.find(&sub)?), coef));
            }
        }
        Some(Transfer {
            terms,
            inequality: r.iter().any(|x| !x.is_zero()),
        })
    }

    /// `x` becomes [`NEW`] with facts `rel`: each factor `L` of base `i`
    /// that mentions `x` is at most a constant `c` afterwards
    /// (`max(0, L[x := NEW]) ≤ max(0, c)`), so the base is paid by the
    /// product of those constants times the other factors. `None` when a
    /// factor has no constant ceiling.
    fn ceiling(&self, i: usize, x: Sym, rel: &Constraints) -> Option<Transfer> {
        let mut scale = Rational::ONE;
        let mut rest = Vec::new();
        for &f in self.bases.factors(i) {
            let l = &self.bases.linear[f];
            if l.coeff(x).is_zero() {
                rest.push(f);
                continue;
            }
            let hi = int_bounds(rel, &l.substitute(x, &LinExpr::var(NEW))).1?;
            scale = scale * hi.max(Rational::ZERO);
        }
        let terms = match (scale.is_zero(), rest.is_empty()) {
            (true, _) => Vec::new(),
            (false, true) => vec![(None, scale)],
            (false, false) => vec![(Some(self.bases.find(&rest)?), scale)],
        };
        Some(Transfer {
            terms,
            inequality: true,
        })
    }

    /// `x := e`: each factor `L` of base `i` becomes `L[x := e]`, exactly:
    /// a constant, or a positive multiple of another linear base. `None`
    /// when the result is not a base.
    fn substitution(&self, i: usize, x: Sym, e: &LinExpr) -> Option<Transfer> {
        let mut scale = Rational::ONE;
        let mut sub = Vec::new();
        for &f in self.bases.factors(i) {
            let l = self.bases.linear[f].substitute(x, e);
            if l.is_constant() {
                scale = scale * l.constant.max(Rational::ZERO);
            } else {
                let (j, k) = self.bases.find_linear(&l)?;
                scale = scale * k;
                sub.push(j);
            }
        }
        let terms = if scale.is_zero() {
            Vec::new()
        } else if sub.is_empty() {
            vec![(None, scale)]
        } else {
            vec![(Some(self.bases.find(&sub)?), scale)]
        };
        Some(Transfer {
            terms,
            inequality: false,
        })
    }
}

/// How one base's potential after an assignment is paid before it: a
/// coefficient on bases (`None`: the constant) per unit, exactly or as an
/// upper bound (which holds for a nonnegative coefficient only).
#[derive(Clone, Debug)]
pub struct Transfer {
    terms: Vec<(Option<usize>, Rational)>,
    inequality: bool,
}

/// A payment `r ≥ 0` with `max(0, L′) ≤ max(0, L) + r` under `rel`, where
/// the change `L′ − L` has no ceiling (`m /= 4` moves a negative `m` up
/// without bound): a ceiling `h₊` of `L′ − L` where `L ≥ 0` and one `h₋`
/// of `L′` where `L ≤ 0` give `r = max(0, h₊, h₋)`. `None` when either
/// side has none.
fn by_sign(rel: &Constraints, l: &LinExpr, after: &LinExpr) -> Option<Rational> {
    let mut above = rel.clone();
    above.add_ge0(l.clone());
    let mut below = rel.clone();
    below.add_ge0(l.neg());
    let up = int_bounds(&above, &after.sub(l)).1?;
    let low = int_bounds(&below, after).1?;
    Some(up.max(low).max(Rational::ZERO))
}
