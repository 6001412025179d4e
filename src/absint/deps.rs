//! Thread dependence and uniformity (RaCUDA §6, "Logical conditions").
//!
//! For every variable at every program point: is its value the same in
//! every active lane of a warp (uniform, possibly a known constant), an
//! affine function `u + Σ c_d·threadIdx.d` of the thread index with uniform
//! `u`, or anything else. From it: whether each condition may diverge, and
//! the shape of each array index (what memory costs depend on).
//!
//! Inside a possibly divergent branch or loop, values stay uniform among the
//! lanes that execute it; after it, every variable the branch or loop writes
//! is varying (RaCUDA Fig. 4, `X \ W(s)`).

use std::collections::{BTreeSet, HashMap, HashSet};

use super::congruence::Cong;
use crate::cuda::ast::{BinOp, Space};
use crate::ir::structured::FlagKind;
use crate::ir::value::binary;
use crate::ir::{Builtin, Expr, ExprKind, Kernel, ScopeId, SiteId, Stmt, Unary, Value, VarId};
use crate::launch::Dims;

/// A coefficient of the thread index.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Coef {
    /// A known integer.
    Known(i64),
    /// Uniform across the warp but not known.
    Unknown,
}

impl Coef {
    fn add(self, o: Coef) -> Coef {
        match (self, o) {
            (Coef::Known(a), Coef::Known(b)) => a.checked_add(b).map_or(Coef::Unknown, Coef::Known),
            _ => Coef::Unknown,
        }
    }

    fn scale(self, k: Option<i64>) -> Coef {
        match (self, k) {
            (Coef::Known(0), _) | (_, Some(0)) => Coef::Known(0),
            (Coef::Known(a), Some(k)) => a.checked_mul(k).map_or(Coef::Unknown, Coef::Known),
            _ => Coef::Unknown,
        }
    }

    fn join(self, o: Coef) -> Coef {
        if self == o {
            self
        } else {
            Coef::Unknown
        }
    }
}

/// How a value depends on the lane.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dep {
    /// The same in every active lane, with what is known of its value
    /// (exactly, or modulo some number).
    Uniform(Cong),
    /// `u + Σ c_d·threadIdx.d` with `u` uniform and congruent as given
    /// (some `c_d` nonzero).
    Affine([Coef; 3], Cong),
    /// No structure known.
    Varying,
}

impl Dep {
    /// A uniform value nothing is known of.
    pub const UNIFORM: Dep = Dep::Uniform(Cong::ANY);

    /// The uniform constant `c`.
    pub fn constant_value(c: i64) -> Dep {
        Dep::Uniform(Cong::exact(c))
    }

    /// Whether the value is the same in every active lane.
    pub fn is_uniform(self) -> bool {
        matches!(self, Dep::Uniform(_))
    }

    /// The known constant value.
    pub fn constant(self) -> Option<i64> {
        match self {
            Dep::Uniform(c) => c.value(),
            _ => None,
        }
    }

    /// The thread-index coefficients and the congruence of the uniform
    /// part, if the value is affine in the thread index.
    pub fn affine_parts(self) -> Option<([Coef; 3], Cong)> {
        match self {
            Dep::Uniform(c) => Some(([Coef::Known(0); 3], c)),
            Dep::Affine(k, c) => Some((k, c)),
            Dep::Varying => None,
        }
    }

    fn affine(k: [Coef; 3], c: Cong) -> Dep {
        if k.iter().all(|x| *x == Coef::Known(0)) {
            Dep::Uniform(c)
        } else {
            Dep::Affine(k, c)
        }
    }

    /// Least upper bound.
    pub fn join(self, o: Dep) -> Dep {
        match (self.affine_parts(), o.affine_parts()) {
            (Some((x, a)), Some((y, b))) => Dep::affine(
                [x[0].join(y[0]), x[1].join(y[1]), x[2].join(y[2])],
                a.join(b),
            ),
            _ => Dep::Varying,
        }
    }

    /// Uniform (with nothing known of the value) if this is, else varying.
    fn opaque(self) -> Dep {
        if self.is_uniform() {
            Dep::UNIFORM
        } else {
            Dep::Varying
        }
    }
}

/// What the analysis needs to know about the launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchFacts {
    /// `blockDim`, when fixed.
    pub block: Option<Dims>,
    /// `gridDim`, when fixed.
    pub grid: Option<Dims>,
    /// Warp size.
    pub warp: u64,
}

impl LaunchFacts {
    /// Whether `threadIdx.d` is the same in every lane of a warp: the block
    /// is fixed and the dimensions below `d` hold a whole number of warps
    /// (a 32×8 block runs one row per warp, so `threadIdx.y` is uniform).
    pub fn warp_uniform(&self, d: u8) -> bool {
        let Some(b) = self.block else {
            return false;
        };
        let below: u64 = b.to_array()[..d as usize].iter().product();
        d > 0 && below.is_multiple_of(self.warp)
    }
}

/// Dependence of every variable at a program point.
pub type State = Vec<Dep>;

/// Results of the dependence analysis.
#[derive(Clone, Debug, Default)]
pub struct DepFacts {
    /// State before each statement, keyed by the statement's address.
    pub before: HashMap<usize, State>,
    /// Whether each `if`/loop condition is uniform, keyed by the statement's
    /// address.
    pub uniform_cond: HashMap<usize, bool>,
    /// Dependence of each access site's index.
    pub index: HashMap<SiteId, Dep>,
    /// State at the head of each loop (before every test), keyed by the
    /// loop statement's address.
    pub head: HashMap<usize, State>,
    /// Loops and scopes that some lanes may leave (by `break`) while others
    /// go on: what they write differs between lanes afterwards.
    pub divergent_exit: HashSet<ScopeId>,
    /// Loops in which some lanes may `continue` while others finish the
    /// body, with the variables the body writes where continued lanes skip
    /// (they differ between lanes at the step).
    pub divergent_continue: HashMap<ScopeId, BTreeSet<VarId>>,
}

/// Key of a statement in the fact maps.
pub fn key(s: &Stmt) -> usize {
    s as *const Stmt as usize
}

/// Variables a statement list may write.
pub fn written(stmts: &[Stmt], out: &mut BTreeSet<VarId>) {
    crate::ir::visit_stmts(stmts, &mut |s| match s {
        Stmt::Assign { var, .. } => {
            out.insert(*var);
        }
        Stmt::Atomic {
            result: Some(r), ..
        } => {
            out.insert(*r);
        }
        _ => {}
    });
}

/// The variables `stmts` write inside guards that test `flag` (the parts
/// of an iteration a lane skips once it sets `flag`, as jump elimination
/// wraps them).
pub fn written_under_guard(stmts: &[Stmt], flag: VarId, out: &mut BTreeSet<VarId>) {
    for s in stmts {
        match s {
            Stmt::If {
                cond, then, els, ..
            } => {
                let mut tests_flag = false;
                cond.visit(&mut |e| tests_flag |= matches!(e.kind, ExprKind::Var(v) if v == flag));
                if tests_flag {
                    written(then, out);
                    written(els, out);
                } else {
                    written_under_guard(then, flag, out);
                    written_under_guard(els, flag, out);
                }
            }
            Stmt::Loop { body, step, .. } => {
                written_under_guard(body, flag, out);
                written_under_guard(step, flag, out);
            }
            Stmt::Scope { body, .. } => written_under_guard(body, flag, out),
            _ => {}
        }
    }
}

/// Runs the analysis over a kernel without jumps (or with jumps, which
/// are then ignored: see [`analyze_with_flags`]).
pub fn analyze(k: &Kernel, launch: &LaunchFacts) -> DepFacts {
    analyze_with_flags(k, launch, &[])
}

/// Runs the analysis over a kernel whose jumps became the flags `flags`
/// ([`crate::ir::structured::without_jumps`]).
///
/// Uniformity is then among the lanes still running, those whose flags are
/// all zero — the lanes the original kernel has active: a flag is `0` and
/// a guard `if (!flag)` is uniform for them. A flag set where some lanes
/// of its loop or scope may not set it (under a possibly divergent branch)
/// marks the loop or scope as exited divergently, or, for `continue`, as
/// reaching its step divergently.
pub fn analyze_with_flags(
    k: &Kernel,
    launch: &LaunchFacts,
    flags: &[(VarId, FlagKind)],
) -> DepFacts {
    run(k, launch, flags, false)
}

/// The analysis of [`analyze_with_flags`] with uniformity asked across
/// the whole block instead of one warp: a value is uniform when every
/// running thread of the block has it. `threadIdx` varies along every
/// dimension longer than 1, and so do the warp index (`threadIdx.x / 32`)
/// and the results of warp-level primitives (each warp has its own).
pub fn analyze_block_wide(
    k: &Kernel,
    launch: &LaunchFacts,
    flags: &[(VarId, FlagKind)],
) -> DepFacts {
    run(k, launch, flags, true)
}

fn run(
    k: &Kernel,
    launch: &LaunchFacts,
    flags: &[(VarId, FlagKind)],
    block_wide: bool,
) -> DepFacts {
    let mut a = Analysis {
        k,
        launch: *launch,
        block_wide,
        facts: DepFacts::default(),
        flags: flags.iter().copied().collect(),
        divergence: 0,
        entered: HashMap::new(),
        continued: HashSet::new(),
        visits: 0,
    };
    let init: State = k
        .vars
        .iter()
        .map(|v| match v.kind {
            crate::ir::VarKind::Param(_) | crate::ir::VarKind::Symbol => Dep::UNIFORM,
            crate::ir::VarKind::Local => Dep::constant_value(0),
        })
        .collect();
    a.stmts(&k.body, init);
    a.facts
}

/// The dependence of an expression's value in a given state.
pub fn dep_of(k: &Kernel, launch: &LaunchFacts, e: &Expr, st: &State) -> Dep {
    dep_of_in(k, launch, e, st, false)
}

/// [`dep_of`] across the whole block ([`analyze_block_wide`]'s states):
/// the lane index `threadIdx.x % 32` is then no affine value.
pub fn dep_of_block_wide(k: &Kernel, launch: &LaunchFacts, e: &Expr, st: &State) -> Dep {
    dep_of_in(k, launch, e, st, true)
}

fn dep_of_in(k: &Kernel, launch: &LaunchFacts, e: &Expr, st: &State, block_wide: bool) -> Dep {
    let mut a = Analysis {
        k,
        launch: *launch,
        block_wide,
        facts: DepFacts::default(),
        flags: HashMap::new(),
        divergence: 0,
        entered: HashMap::new(),
        continued: HashSet::new(),
        visits: 0,
    };
    a.expr(e, st)
}

struct Analysis<'k> {
    k: &'k Kernel,
    launch: LaunchFacts,
    /// Uniformity across the block instead of the warp
    /// ([`analyze_block_wide`]).
    block_wide: bool,
    facts: DepFacts,
    /// The jump flags.
    flags: HashMap<VarId, FlagKind>,
    /// How many possibly divergent branches and loops enclose the point
    /// being analyzed.
    divergence: usize,
    /// The divergence inside each loop or scope, by scope id.
    entered: HashMap<ScopeId, usize>,
    /// Loops with a divergent `continue`.
    continued: HashSet<ScopeId>,
    /// Statements visited so far.
    visits: usize,
}

/// Statement visits before every further loop gives up its fixpoint
/// iteration and makes what it writes varying at once: nested loops
/// multiply their rounds, and this keeps deep nests linear.
const MAX_VISITS: usize = 50_000;

fn join_states(a: &State, b: &State) -> State {
    a.iter().zip(b).map(|(x, y)| x.join(*y)).collect()
}

impl<'k> Analysis<'k> {
    fn stmts(&mut self, ss: &'k [Stmt], mut st: State) -> State {
        for s in ss {
            st = self.stmt(s, st);
        }
        st
    }

    fn record_before(&mut self, s: &Stmt, st: &State) {
        let e = self
            .facts
            .before
            .entry(key(s))
            .or_insert_with(|| st.clone());
        *e = join_states(e, st);
    }

    fn record_cond(&mut self, s: &Stmt, uniform: bool) {
        let e = self.facts.uniform_cond.entry(key(s)).or_insert(true);
        *e = *e && uniform;
    }

    /// Makes `vars` varying, except the jump flags (zero in every running
    /// lane).
    fn vary(&self, st: &mut State, vars: impl IntoIterator<Item = VarId>) {
        for v in vars {
            if !self.flags.contains_key(&v) {
                st[v] = Dep::Varying;
            }
        }
    }

    /// A flag is set: record a divergent exit or continue when some lanes
    /// of the flag's loop or scope may not set it.
    fn flag_set(&mut self, kind: FlagKind) {
        let (scope, set) = match kind {
            FlagKind::Break(sc) => (sc, &mut self.facts.divergent_exit),
            FlagKind::Continue(sc) => (sc, &mut self.continued),
            FlagKind::Return => return,
        };
        if self.divergence > self.entered.get(&scope).copied().unwrap_or(0) {
            set.insert(scope);
        }
    }

    fn stmt(&mut self, s: &'k Stmt, mut st: State) -> State {
        self.visits += 1;
        self.record_before(s, &st);
        match s {
            Stmt::Assign { var, value, .. } => {
                match self.flags.get(var).copied() {
                    Some(kind) => {
                        if !matches!(value.kind, ExprKind::Const(Value::I(0))) {
                            self.flag_set(kind);
                        }
                    }
                    None => st[*var] = self.expr(value, &st),
                }
                st
            }
            Stmt::Store { access, value, .. } => {
                self.access(access, &st);
                self.expr(value, &st);
                st
            }
            Stmt::Atomic {
                access,
                value,
                compare,
                result,
                ..
            } => {
                self.access(access, &st);
                self.expr(value, &st);
                if let Some(c) = compare {
                    self.expr(c, &st);
                }
                if let Some(r) = result {
                    st[*r] = Dep::Varying;
                }
                st
            }
            Stmt::If {
                cond, then, els, ..
            } => {
                let uniform = self.expr(cond, &st).is_uniform();
                self.record_cond(s, uniform);
                self.divergence += !uniform as usize;
                let t = self.stmts(then, st.clone());
                let e = self.stmts(els, st);
                self.divergence -= !uniform as usize;
                let mut out = join_states(&t, &e);
                if !uniform {
                    let mut w = BTreeSet::new();
                    written(then, &mut w);
                    written(els, &mut w);
                    self.vary(&mut out, w);
                }
                out
            }
            Stmt::Loop {
                scope,
                cond,
                body,
                step,
                ..
            } => {
                let mut written_vars = BTreeSet::new();
                written(body, &mut written_vars);
                written(step, &mut written_vars);
                // Iterate to a fixpoint. Each variable's value can only rise
                // a few times in the lattice, so this settles; should it not,
                // every variable the loop writes becomes `Varying` (the top,
                // which is certainly a fixpoint).
                let mut head = st;
                let limit = 8 * (self.k.vars.len() + 2);
                for round in 0.. {
                    if self.visits > MAX_VISITS {
                        self.vary(&mut head, written_vars.iter().copied());
                        self.iteration(*scope, cond.as_ref(), body, step, head.clone());
                        break;
                    }
                    let after = self.iteration(*scope, cond.as_ref(), body, step, head.clone());
                    let next = join_states(&head, &after);
                    if next == head {
                        break;
                    }
                    head = next;
                    if round >= limit {
                        self.vary(&mut head, written_vars.iter().copied());
                        self.iteration(*scope, cond.as_ref(), body, step, head.clone());
                        break;
                    }
                }
                let uniform = cond
                    .as_ref()
                    .is_none_or(|c| self.expr(c, &head).is_uniform());
                self.record_cond(s, uniform);
                let e = self
                    .facts
                    .head
                    .entry(key(s))
                    .or_insert_with(|| head.clone());
                *e = join_states(e, &head);
                let mut out = head;
                if !uniform || self.facts.divergent_exit.contains(scope) {
                    self.vary(&mut out, written_vars);
                }
                out
            }
            Stmt::Scope { scope, body } => {
                self.entered.insert(*scope, self.divergence);
                let mut out = self.stmts(body, st);
                if self.facts.divergent_exit.contains(scope) {
                    let mut w = BTreeSet::new();
                    written(body, &mut w);
                    self.vary(&mut out, w);
                }
                out
            }
            Stmt::Sync { .. } | Stmt::Jump { .. } | Stmt::Return { .. } => st,
        }
    }

    /// One pass over a loop's body and step from head state `st`: the
    /// state after the step.
    fn iteration(
        &mut self,
        scope: ScopeId,
        cond: Option<&Expr>,
        body: &'k [Stmt],
        step: &'k [Stmt],
        st: State,
    ) -> State {
        let outer = self.divergence;
        let divergent_test = cond.is_some_and(|c| !self.expr(c, &st).is_uniform());
        self.divergence = outer + divergent_test as usize;
        self.entered.insert(scope, self.divergence);
        let mut after = self.stmts(body, st);
        if self.continued.contains(&scope) {
            // Lanes that continued skipped what the guards of their flag
            // wrap.
            let mut w = BTreeSet::new();
            for (&f, kind) in &self.flags {
                if *kind == FlagKind::Continue(scope) {
                    written_under_guard(body, f, &mut w);
                }
            }
            self.vary(&mut after, w.iter().copied());
            self.facts.divergent_continue.insert(scope, w);
        }
        let after = self.stmts(step, after);
        self.divergence = outer;
        after
    }

    /// The dependence of an access's index, joined into its site's fact
    /// when the access pays the site's cost (the other components of a
    /// vector view lie at the following elements, which the cost does not
    /// look at).
    fn access(&mut self, a: &crate::ir::Access, st: &State) -> Dep {
        let d = self.expr(&a.index, st);
        if a.charged {
            let e = self.facts.index.entry(a.site).or_insert(d);
            *e = e.join(d);
        }
        d
    }

    /// Dependence of an expression's value; records index facts of loads.
    fn expr(&mut self, e: &Expr, st: &State) -> Dep {
        match &e.kind {
            ExprKind::Const(Value::I(i)) => Dep::constant_value(*i),
            ExprKind::Const(Value::F(_)) => Dep::UNIFORM,
            ExprKind::Var(v) => st[*v],
            ExprKind::Builtin(b) => self.builtin(*b),
            ExprKind::Unary(op, x) => match (op, self.expr(x, st)) {
                (Unary::Not, d) => match d.constant() {
                    Some(c) => Dep::constant_value((c == 0) as i64),
                    None => d.opaque(),
                },
                (Unary::BitNot, d) if !e.ty.is_float() => match d.constant() {
                    Some(c) => Dep::constant_value(crate::ir::value::wrap(!c, e.ty).as_i64()),
                    None => d.opaque(),
                },
                (Unary::Neg, d) if !e.ty.is_float() => match d.affine_parts() {
                    Some((k, c)) => Dep::affine(k.map(|x| x.scale(Some(-1))), -c),
                    None => Dep::Varying,
                },
                (_, d) => d.opaque(),
            },
            ExprKind::Binary(op, l, r) => {
                let (a, b) = (self.expr(l, st), self.expr(r, st));
                self.binary(*op, a, b, l.ty)
            }
            ExprKind::And(l, r) | ExprKind::Or(l, r) => {
                let and = matches!(e.kind, ExprKind::And(..));
                let (a, b) = (self.expr(l, st), self.expr(r, st));
                // An operand that decides the result alone (`0 && x`,
                // `x || 1`) makes it a constant, as do two constants: a
                // guard on the launch shape (`blockDim.x == 256 &&
                // blockDim.y == 1`) takes one branch on a known block.
                match (a.constant(), b.constant()) {
                    (Some(0), _) | (_, Some(0)) if and => Dep::constant_value(0),
                    (Some(x), _) | (_, Some(x)) if !and && x != 0 => Dep::constant_value(1),
                    (Some(_), Some(y)) => Dep::constant_value((y != 0) as i64),
                    _ if a.is_uniform() && b.is_uniform() => Dep::UNIFORM,
                    _ => Dep::Varying,
                }
            }
            ExprKind::Select(c, a, b) => {
                let (c, a, b) = (self.expr(c, st), self.expr(a, st), self.expr(b, st));
                match (c, a, b) {
                    (Dep::Uniform(_), Dep::Uniform(x), Dep::Uniform(y)) => Dep::Uniform(x.join(y)),
                    _ => Dep::Varying,
                }
            }
            ExprKind::Convert { value, .. } => {
                let d = self.expr(value, st);
                match d {
                    _ if e.ty.is_float() || value.ty.is_float() => d.opaque(),
                    Dep::Uniform(c) => match c.value() {
                        Some(v) => Dep::constant_value(crate::ir::value::wrap(v, e.ty).as_i64()),
                        None => d,
                    },
                    other => other,
                }
            }
            // Lanes reading one element of global or shared memory read
            // one value; a local array is each thread's own.
            ExprKind::Load(a) if self.k.arrays[a.array].space == Space::Local => {
                self.access(a, st);
                Dep::Varying
            }
            ExprKind::Load(a) => self.access(a, st).opaque(),
            ExprKind::Call(f, args) => {
                let ds: Vec<Dep> = args.iter().map(|a| self.expr(a, st)).collect();
                if self.block_wide && f.is_warp() {
                    Dep::Varying
                } else if ds.iter().all(|d| d.is_uniform()) {
                    Dep::UNIFORM
                } else {
                    Dep::Varying
                }
            }
        }
    }

    fn builtin(&self, b: Builtin) -> Dep {
        let known = |dims: Option<Dims>, d: u8| match dims {
            Some(x) => Dep::constant_value(x[d as usize] as i64),
            None => Dep::UNIFORM,
        };
        match b {
            Builtin::ThreadIdx(d) => {
                if self.launch.block.is_some_and(|bd| bd[d as usize] == 1) {
                    Dep::constant_value(0)
                } else if !self.block_wide && self.launch.warp_uniform(d) {
                    Dep::UNIFORM
                } else {
                    let mut c = [Coef::Known(0); 3];
                    c[d as usize] = Coef::Known(1);
                    Dep::Affine(c, Cong::exact(0))
                }
            }
            Builtin::BlockDim(d) => known(self.launch.block, d),
            Builtin::GridDim(d) => known(self.launch.grid, d),
            Builtin::BlockIdx(d) => {
                if self.launch.grid.is_some_and(|g| g[d as usize] == 1) {
                    Dep::constant_value(0)
                } else {
                    Dep::UNIFORM
                }
            }
            Builtin::WarpSize => Dep::constant_value(self.launch.warp as i64),
        }
    }

    fn binary(&self, op: BinOp, a: Dep, b: Dep, ty: crate::ir::Scalar) -> Dep {
        if let (Dep::Uniform(x), Dep::Uniform(y)) = (a, b) {
            if ty.is_float() {
                return Dep::UNIFORM;
            }
            if let (Some(x), Some(y)) = (x.value(), y.value()) {
                return match binary(op, Value::I(x), Value::I(y), ty) {
                    Ok(v) => Dep::constant_value(v.as_i64()),
                    Err(_) => Dep::UNIFORM,
                };
            }
            return Dep::Uniform(match op {
                BinOp::Add => x + y,
                BinOp::Sub => x + -y,
                BinOp::Mul => x * y,
                BinOp::Shl => match y.value() {
                    Some(k) if (0..32).contains(&k) => x.scale(1 << k),
                    _ => Cong::ANY,
                },
                _ => Cong::ANY,
            });
        }
        if ty.is_float() {
            return Dep::Varying;
        }
        let (Some((ka, ca)), Some((kb, cb))) = (a.affine_parts(), b.affine_parts()) else {
            return Dep::Varying;
        };
        match op {
            BinOp::Add | BinOp::Sub => {
                let (kb, cb) = if op == BinOp::Sub {
                    (kb.map(|c| c.scale(Some(-1))), -cb)
                } else {
                    (kb, cb)
                };
                Dep::affine(
                    [ka[0].add(kb[0]), ka[1].add(kb[1]), ka[2].add(kb[2])],
                    ca + cb,
                )
            }
            BinOp::Mul => match (a, b) {
                (Dep::Affine(k, c), Dep::Uniform(m)) | (Dep::Uniform(m), Dep::Affine(k, c)) => {
                    Dep::affine(k.map(|x| x.scale(m.value())), c * m)
                }
                _ => Dep::Varying,
            },
            BinOp::Shl => match (a, b.constant()) {
                (Dep::Affine(k, c), Some(s)) if (0..32).contains(&s) => {
                    Dep::affine(k.map(|x| x.scale(Some(1 << s))), c.scale(1 << s))
                }
                _ => Dep::Varying,
            },
            BinOp::Div | BinOp::Rem | BinOp::Shr | BinOp::BitAnd => {
                self.lane_split(op, a, b, ty).unwrap_or(Dep::Varying)
            }
            _ => Dep::Varying,
        }
    }

    /// `a / W`, `a >> s`, `a % W` and `a & (W − 1)` for `a = u + threadIdx.x`
    /// and `W` a multiple of the warp size (`2^s` for a shift or mask),
    /// when every warp holds consecutive `threadIdx.x` starting at a
    /// multiple of the warp size (the block is fixed and its `x` extent is a
    /// whole number of warps) and `u` is a nonnegative multiple of the warp
    /// size (an unsigned operation, or `u` known exactly). Then in one warp
    /// `a = 32·M + lane` with `M` uniform and `0 ≤ lane < 32`, so the
    /// quotient `⌊a / W⌋` is uniform (the warp index `threadIdx.x / 32`) and
    /// the remainder `a − W·⌊a / W⌋` is `threadIdx.x` plus a uniform
    /// multiple of `W` (the lane index `threadIdx.x % 32`).
    fn lane_split(&self, op: BinOp, a: Dep, b: Dep, ty: crate::ir::Scalar) -> Option<Dep> {
        if self.block_wide {
            return None;
        }
        let warp = self.launch.warp as i64;
        let whole_warps = self
            .launch
            .block
            .is_some_and(|bd| warp > 0 && bd[0] % self.launch.warp == 0);
        let Dep::Affine([Coef::Known(1), Coef::Known(0), Coef::Known(0)], u) = a else {
            return None;
        };
        let aligned = match u.value() {
            Some(v) => v >= 0 && v % warp == 0,
            None => !ty.is_signed() && u.modulus() % warp == 0 && u.residue() % warp == 0,
        };
        let ok = whole_warps && aligned;
        let c = b.constant()?;
        let w = match op {
            BinOp::Shr if (0..32).contains(&c) => 1i64 << c,
            BinOp::BitAnd if c >= 0 && (c + 1).count_ones() == 1 => c + 1,
            _ => c,
        };
        if !ok || w <= 0 || w % warp != 0 {
            return None;
        }
        // The uniform part moves by multiples of `W`; an unsigned `a` may
        // have wrapped by 2^32, so only a `W` dividing 2^32 is kept (else
        // the warp size).
        let m = if w.count_ones() == 1 { w } else { warp };
        Some(match op {
            BinOp::Div | BinOp::Shr => Dep::UNIFORM,
            _ => Dep::affine(
                [Coef::Known(1), Coef::Known(0), Coef::Known(0)],
                u + Cong::new(m, 0),
            ),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cuda::parse::parse_source;
    use crate::ir::lower::lower_kernel;
    use crate::source::SourceFile;

    fn index_deps(src: &str, block: [u64; 3]) -> Vec<Dep> {
        let f = parse_source(SourceFile::new("t.cu", src));
        let k = lower_kernel(&f, "k").unwrap();
        let facts = analyze(
            &k,
            &LaunchFacts {
                block: crate::launch::block(block).ok(),
                grid: None,
                warp: 32,
            },
        );
        (0..k.sites.len()).map(|s| facts.index[&s]).collect()
    }

    /// A local array is each thread's own: an element read at a uniform
    /// index differs between lanes (a struct local with an array member
    /// is one, `Cell c = cells[i]; c.n`).
    #[test]
    fn local_array_loads_vary() {
        let deps = index_deps(
            "struct Cell { float v[2]; int n; };\n\
             __global__ void k(int *a, Cell *cells) { float t[2]; t[0] = threadIdx.x;\n\
             a[(int)t[0]] = 1; Cell c = cells[threadIdx.x]; a[c.n] = 2; }",
            [32, 1, 1],
        );
        // sites: t[0] store, t[0] load, a[(int)t[0]], the copy (3 reads,
        // 3 stores), c.n, a[c.n].
        assert_eq!(deps[1], Dep::constant_value(0));
        assert_eq!(deps[2], Dep::Varying);
        assert_eq!(deps[9], Dep::constant_value(0));
        assert_eq!(deps[10], Dep::Varying);
    }

    #[test]
    fn affine_indices_and_uniform_loads() {
        let deps = index_deps(
            "__global__ void k(int *a, int w) { int j = blockIdx.x * blockDim.x + threadIdx.x;\n\
             for (int i = 0; i < w; i++) { a[j * w + i] = a[i] + a[2 * j + 1] + a[a[0]] + a[j % 2]; } }",
            [256, 1, 1],
        );
        // sites: a[i], a[2*j+1], a[0], a[a[0]], a[j%2], store a[j*w+i]
        assert_eq!(deps[0], Dep::UNIFORM);
        // j = blockIdx.x·256 + threadIdx.x: 2j + 1 ≡ 1 (mod 512).
        assert_eq!(
            deps[1],
            Dep::Affine(
                [Coef::Known(2), Coef::Known(0), Coef::Known(0)],
                Cong::new(512, 1)
            )
        );
        assert_eq!(deps[2], Dep::constant_value(0));
        assert_eq!(deps[3], Dep::UNIFORM);
        assert_eq!(deps[4], Dep::Varying);
        assert_eq!(
            deps[5],
            Dep::Affine([Coef::Unknown, Coef::Known(0), Coef::Known(0)], Cong::ANY)
        );
    }

    #[test]
    fn divergent_branches_make_written_variables_varying() {
        let src = "__global__ void k(int *a, int n) { int x = 0; int y = 0;\n\
                   if (threadIdx.x < 5) { x = 1; } if (n > 3) { y = 2; } a[x] = 0; a[y] = 0; }";
        let deps = index_deps(src, [64, 1, 1]);
        assert_eq!(deps[0], Dep::Varying);
        // y is 0 or 2: uniform and even.
        assert_eq!(deps[1], Dep::Uniform(Cong::new(2, 0)));
    }

    #[test]
    fn two_d_blocks_and_constant_loops() {
        let deps = index_deps(
            "__global__ void k(float *a) { int r = threadIdx.y; int c = threadIdx.x;\n\
             for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) { a[r * 16 + c + s] = 0.0f; } }",
            [16, 16, 1],
        );
        assert_eq!(
            deps[0],
            Dep::Affine([Coef::Known(1), Coef::Known(16), Coef::Known(0)], Cong::ANY)
        );
    }

    #[test]
    fn lane_and_warp_indices_of_whole_warps() {
        let src = "__global__ void k(float *a, int cols) {\n\
             int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;\n\
             int lane = threadIdx.x % 32; int l2 = threadIdx.x & 31; int l8 = threadIdx.x % 8;\n\
             a[row] = 0.0f; a[row * cols + lane] = 0.0f; a[l2] = 0.0f; a[l8] = 0.0f; }";
        let lane = Dep::Affine(
            [Coef::Known(1), Coef::Known(0), Coef::Known(0)],
            Cong::new(32, 0),
        );
        let deps = index_deps(src, [128, 1, 1]);
        assert_eq!(deps[0], Dep::UNIFORM);
        assert_eq!(
            deps[1],
            Dep::Affine([Coef::Known(1), Coef::Known(0), Coef::Known(0)], Cong::ANY)
        );
        assert_eq!(deps[2], lane);
        // Groups of 8 lanes repeat within a warp: no affine form.
        assert_eq!(deps[3], Dep::Varying);
        // In a 33×2 block a warp spans two rows: its `threadIdx.x` are not
        // consecutive, so neither is uniform nor affine.
        let deps = index_deps(src, [33, 2, 1]);
        assert_eq!(deps[0], Dep::Varying);
        assert_eq!(deps[2], Dep::Varying);
    }
}
