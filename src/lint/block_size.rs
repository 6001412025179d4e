//! Block-size independence (BSI): a kernel without barriers or shared
//! memory computes the same results for any block size (with the grid
//! resized to keep the threads) when every value it computes depends on
//! the thread only through the global index `g_d = blockIdx.d·blockDim.d +
//! threadIdx.d` and on the launch only through the total thread count
//! `gridDim.d·blockDim.d`.
//!
//! Every value is evaluated symbolically as a polynomial over the builtins
//! (locals assigned once are replaced by their value, evaluated once per
//! kernel however often they are used; anything else is an opaque
//! symbol), `threadIdx.d` is rewritten as `g_d − blockIdx.d·blockDim.d`,
//! and what remains must not mention `blockIdx` and must mention
//! `blockDim.d` only as often as `gridDim.d` in every term (the symbolic
//! multipliers of the paper). The check looks at every condition, index,
//! stored value and value assigned to a variable assigned more than once.
//! A sum or product whose polynomial would pass [`MAX_TERMS`] terms or
//! degree [`MAX_DEGREE`] (a chain of products doubles the degree at every
//! step) is treated like any other non-polynomial operation: its operands
//! are checked and its value is an opaque symbol, so the work stays in
//! proportion to the kernel.
//!
//! Variables assigned only in straight-line code (the kernel's body and the
//! scopes directly in it, never under an `if` or in a loop) are followed
//! flow-sensitively: each use sees the value of the last assignment before
//! it, so `g = blockIdx.x * blockDim.x; g += threadIdx.x;` is the global
//! index. Every thread that reaches a statement there has run every
//! earlier one, since a jump leaves the scope altogether.
//!
//! Barriers and shared memory (beyond BSI, which verifies only
//! synchronization-free kernels): the indices of every shared array, and
//! with a barrier of every global array the kernel both reads and writes,
//! are recorded instead of checked. An array whose every access is at the
//! thread's own element (`s[threadIdx.x]`, `out[g]`, the same index
//! everywhere; its linear form over the dimensions the kernel names)
//! carries no value between threads, so a barrier around it only stages
//! data and the proof goes on, with the values stored there checked as
//! usual. Any other such array exchanges values between the threads of a
//! block (a block reduction): a dependence found elsewhere (the result
//! written at `out[blockIdx.x]`) makes the verdict "depends"; without one
//! the kernel is not checked, naming the array.
//!
//! The proof assumes the kernel has no data race: a kernel that races
//! computes results that depend on the schedule, and so on the block
//! shape. [`super::races`] looks for races by simulation; atomics whose
//! outcome depends on the order of the threads ([`super::atomics`]) make
//! the verdict "depends".

use std::collections::{HashMap, HashSet};

use crate::ir::{
    visit_exprs, visit_stmts, ArrayId, Builtin, Expr, ExprKind, Kernel, Scalar, Stmt, VarId,
    VarKind,
};
use crate::poly::{Poly, Rational};
use crate::source::Span;

use super::BlockSize;

const DIMS: [&str; 3] = ["x", "y", "z"];

/// The most terms a value's polynomial may have before it is opaque.
pub const MAX_TERMS: usize = 64;

/// The highest degree a value's polynomial may have before it is opaque.
pub const MAX_DEGREE: u32 = 8;

struct Eval<'k> {
    k: &'k Kernel,
    /// Locals assigned exactly once, with their value.
    once: HashMap<VarId, &'k Expr>,
    /// The once-assigned locals evaluated so far: the polynomial and the
    /// first dependence found inside it (reported where it is used).
    values: HashMap<VarId, (Poly, Option<String>)>,
    /// The once-assigned locals being evaluated (a value that reads
    /// itself, in a loop, is a symbol there).
    evaluating: HashSet<VarId>,
    /// Straight-line locals, with the value of their last assignment so
    /// far.
    current: HashMap<VarId, Poly>,
    /// Fresh opaque symbols made so far.
    fresh: usize,
    /// The first problem: why, and the statement where.
    problem: Option<(String, Span)>,
    /// The statement being checked.
    at: Span,
    /// Depth of local substitution (guards against cycles).
    depth: usize,
    /// Arrays whose indices are recorded rather than checked: shared
    /// arrays, and with a barrier the global arrays both read and written.
    deferred: HashSet<ArrayId>,
    /// The indices of the deferred arrays' accesses, with where.
    indices: HashMap<ArrayId, Vec<(Poly, Span)>>,
    /// Whether the statement being checked writes global memory.
    at_store: bool,
    /// The first problem in a statement that writes global memory.
    store_problem: Option<(String, Span)>,
}

fn builtin_name(b: Builtin) -> String {
    match b {
        Builtin::ThreadIdx(d) => format!("threadIdx.{}", DIMS[d as usize]),
        Builtin::BlockIdx(d) => format!("blockIdx.{}", DIMS[d as usize]),
        Builtin::BlockDim(d) => format!("blockDim.{}", DIMS[d as usize]),
        Builtin::GridDim(d) => format!("gridDim.{}", DIMS[d as usize]),
        Builtin::WarpSize => "warpSize".into(),
    }
}

impl Eval<'_> {
    fn opaque(&mut self) -> Poly {
        self.fresh += 1;
        Poly::var(&format!("#{}", self.fresh))
    }

    /// The value of `e` as a polynomial; operands of non-polynomial
    /// operations are checked on the way.
    fn eval(&mut self, e: &Expr) -> Poly {
        use crate::cuda::ast::BinOp;
        match &e.kind {
            ExprKind::Const(v) if !e.ty.is_float() => {
                Poly::constant(Rational::int(v.as_i64() as i128))
            }
            ExprKind::Const(_) => self.opaque(),
            ExprKind::Var(v) if self.current.contains_key(v) => self.current[v].clone(),
            ExprKind::Var(v) => match self.value_of(*v) {
                Some((p, why)) => {
                    if let Some(why) = why {
                        self.flag(why);
                    }
                    p
                }
                None => Poly::var(&format!("v{v}")),
            },
            ExprKind::Builtin(Builtin::WarpSize) => Poly::var("warpSize"),
            ExprKind::Call(f, args) if f.is_warp() => {
                if self.problem.is_none() {
                    self.problem = Some((
                        "it exchanges values between the lanes of a warp (shuffle or vote), and which threads share a warp depends on the block shape".into(),
                        self.at,
                    ));
                }
                for a in args {
                    self.eval(a);
                }
                self.opaque()
            }
            ExprKind::Builtin(b) => Poly::var(&builtin_name(*b)),
            ExprKind::Unary(crate::ir::Unary::Neg, x) => {
                let x = self.eval(x);
                self.arith(BinOp::Sub, Poly::zero(), x)
            }
            ExprKind::Convert { value, .. } if keeps_value(value, e.ty) => self.eval(value),
            // A narrowing conversion keeps the value only modulo the new
            // width, which breaks `blockIdx·blockDim + (unsigned char)
            // threadIdx`: the converted value must be independent itself.
            ExprKind::Convert { value, .. } => {
                self.check(value);
                self.opaque()
            }
            ExprKind::Binary(op @ (BinOp::Add | BinOp::Sub | BinOp::Mul), a, b)
                if !e.ty.is_float() =>
            {
                let (a, b) = (self.eval(a), self.eval(b));
                self.arith(*op, a, b)
            }
            _ => {
                let mut parts = Vec::new();
                match &e.kind {
                    ExprKind::Unary(_, x) => parts.push(x.as_ref()),
                    ExprKind::Binary(_, a, b) | ExprKind::And(a, b) | ExprKind::Or(a, b) => {
                        parts.extend([a.as_ref(), b.as_ref()])
                    }
                    ExprKind::Select(c, a, b) => parts.extend([c.as_ref(), a.as_ref(), b.as_ref()]),
                    ExprKind::Load(a) if self.deferred.contains(&a.array) => {
                        self.defer(a.array, &a.index)
                    }
                    ExprKind::Load(a) => parts.push(&a.index),
                    ExprKind::Call(_, args) => parts.extend(args),
                    _ => {}
                }
                for p in parts {
                    self.check(p);
                }
                self.opaque()
            }
        }
    }

    /// The value of once-assigned local `v` and the first dependence
    /// inside it, evaluated the first time it is asked for and kept, so
    /// that a chain of locals each using the previous one several times
    /// costs one evaluation per local; `None` for any other variable, for
    /// a value that reads itself and past a nesting of 64.
    fn value_of(&mut self, v: VarId) -> Option<(Poly, Option<String>)> {
        if let Some(known) = self.values.get(&v) {
            return Some(known.clone());
        }
        let value = *self.once.get(&v)?;
        if self.depth >= 64 || !self.evaluating.insert(v) {
            return None;
        }
        // Evaluated on its own: what is found inside is the value's, and
        // is reported at each statement that uses it.
        let outer = (
            self.problem.take(),
            self.store_problem.take(),
            self.at_store,
        );
        self.at_store = false;
        self.depth += 1;
        let p = self.eval(value);
        self.depth -= 1;
        let why = self.problem.take().map(|(why, _)| why);
        (self.problem, self.store_problem, self.at_store) = outer;
        self.evaluating.remove(&v);
        self.values.insert(v, (p.clone(), why.clone()));
        Some((p, why))
    }

    /// `a op b` for `+`, `−` and `×`; past [`MAX_TERMS`] terms, degree
    /// [`MAX_DEGREE`] or a coefficient overflow, the operands are checked
    /// and the value is opaque (as for a non-polynomial operation).
    fn arith(&mut self, op: crate::cuda::ast::BinOp, a: Poly, b: Poly) -> Poly {
        use crate::cuda::ast::BinOp;
        let r = match op {
            BinOp::Add => a.checked_add(&b),
            BinOp::Sub => a.checked_sub(&b),
            _ => a.bounded_mul(&b, MAX_TERMS, MAX_DEGREE),
        };
        match r {
            Some(p) if p.len() <= MAX_TERMS && p.degree() <= MAX_DEGREE => p,
            _ => {
                self.check_poly(&a);
                self.check_poly(&b);
                self.opaque()
            }
        }
    }

    /// Records a dependence found in the statement being checked.
    fn flag(&mut self, why: String) {
        if self.at_store && self.store_problem.is_none() {
            self.store_problem = Some((why.clone(), self.at));
        }
        self.problem.get_or_insert((why, self.at));
    }

    /// Records the index of an access to a deferred array (what it reads
    /// decides whether the array is the thread's own, not a dependence).
    fn defer(&mut self, array: ArrayId, index: &Expr) {
        let before = (self.problem.take(), self.store_problem.take());
        let p = self.eval(index);
        (self.problem, self.store_problem) = before;
        let at = self.at;
        self.indices.entry(array).or_default().push((p, at));
    }

    /// Checks that `e` depends on the thread and launch only as allowed.
    fn check(&mut self, e: &Expr) {
        let p = self.eval(e);
        self.check_poly(&p);
    }

    /// Checks that the value `p` depends on the thread and launch only as
    /// allowed.
    fn check_poly(&mut self, p: &Poly) {
        if self.problem.is_some() && (self.store_problem.is_some() || !self.at_store) {
            return;
        }
        if let Some(why) = dependence(p) {
            self.flag(why);
        }
    }
}

/// Whether converting `value` to `to` keeps the polynomial's meaning:
/// integer arithmetic wraps modulo 2^width, which a polynomial respects as
/// long as the width never shrinks. A conversion to the same width (a sign
/// change reinterprets the same bits) or to a float does; one to a wider
/// integer does when the value cannot have wrapped (a variable, builtin or
/// constant, or a signed value, whose overflow C leaves undefined); one to
/// a narrower integer or to `bool` does not.
fn keeps_value(value: &Expr, to: Scalar) -> bool {
    let from = value.ty;
    if to.is_float() || from.is_float() {
        return true;
    }
    if to == Scalar::Bool {
        return false;
    }
    let leaf = matches!(
        value.kind,
        ExprKind::Var(_) | ExprKind::Builtin(_) | ExprKind::Const(_)
    );
    match to.size().cmp(&from.size()) {
        std::cmp::Ordering::Less => false,
        std::cmp::Ordering::Equal => true,
        std::cmp::Ordering::Greater => leaf || from.is_signed() || from == Scalar::Bool,
    }
}

/// Why `p` depends on the block size, if it does.
fn dependence(p: &Poly) -> Option<String> {
    match global_form(p) {
        Some(q) => dependence_of_global(&q),
        None => Some("its index arithmetic is too large to follow".into()),
    }
}

/// `p` with `threadIdx.d` written `g_d − blockIdx.d·blockDim.d`, or `None`
/// when a coefficient overflows.
fn global_form(p: &Poly) -> Option<Poly> {
    let mut q = Poly::zero();
    for (m, c) in p.terms() {
        let mut t = Poly::constant(c);
        for (name, exp) in m.factors() {
            let f = match DIMS.iter().find(|d| name == format!("threadIdx.{d}")) {
                Some(d) => Poly::var(&format!("g.{d}")).checked_sub(
                    &Poly::var(&format!("blockIdx.{d}"))
                        .checked_mul(&Poly::var(&format!("blockDim.{d}")))?,
                )?,
                None => Poly::var(name),
            };
            for _ in 0..exp {
                t = t.checked_mul(&f)?;
            }
        }
        q = q.checked_add(&t)?;
    }
    Some(q)
}

/// Why `q`, in the global form, depends on the block size, if it does.
fn dependence_of_global(q: &Poly) -> Option<String> {
    for (m, _) in q.terms() {
        for d in DIMS {
            let bid = format!("blockIdx.{d}");
            if m.exponent(&bid) > 0 {
                return Some(format!(
                    "`blockIdx.{d}` or `threadIdx.{d}` is used other than in blockIdx.{d}·blockDim.{d} + threadIdx.{d}"
                ));
            }
            let (bdim, gdim) = (format!("blockDim.{d}"), format!("gridDim.{d}"));
            if m.exponent(&bdim) != m.exponent(&gdim) {
                return Some(format!(
                    "`blockDim.{d}` or `gridDim.{d}` is used other than in the global index or the thread count gridDim.{d}·blockDim.{d}"
                ));
            }
        }
        if m.exponent("warpSize") > 0 {
            return Some("it uses `warpSize`".into());
        }
    }
    None
}

/// Whether `e` reads one of `vars`.
fn reads_any(e: &Expr, vars: &HashSet<VarId>) -> bool {
    let mut found = false;
    e.visit(&mut |x| found |= matches!(&x.kind, ExprKind::Var(v) if vars.contains(v)));
    found
}

/// The locals assigned in `stmts` outside straight-line code (under an
/// `if`, in a loop, or by an atomic).
fn branchy(stmts: &[Stmt], inside: bool, out: &mut HashSet<VarId>) {
    for s in stmts {
        match s {
            Stmt::Assign { var, .. } if inside => {
                out.insert(*var);
            }
            Stmt::Atomic {
                result: Some(r), ..
            } => {
                out.insert(*r);
            }
            Stmt::If { then, els, .. } => {
                branchy(then, true, out);
                branchy(els, true, out);
            }
            Stmt::Loop { body, step, .. } => {
                branchy(body, true, out);
                branchy(step, true, out);
            }
            Stmt::Scope { body, .. } => branchy(body, inside, out),
            _ => {}
        }
    }
}

/// The verdict for `kernel`, and where the first dependence is. An
/// independent verdict says no race check ran (see [`super::races`]).
pub fn verdict(kernel: &Kernel) -> (BlockSize, Option<Span>) {
    let mut syncs = false;
    let mut assigned: HashMap<VarId, Vec<Option<&Expr>>> = HashMap::new();
    visit_stmts(&kernel.body, &mut |s| match s {
        Stmt::Sync { .. } => syncs = true,
        Stmt::Assign { var, value, .. } => assigned.entry(*var).or_default().push(Some(value)),
        Stmt::Atomic {
            result: Some(r), ..
        } => assigned.entry(*r).or_default().push(None),
        _ => {}
    });
    let deferred = deferred_arrays(kernel, syncs);
    let dims = dimensions(kernel);
    let mut not_straight = HashSet::new();
    branchy(&kernel.body, false, &mut not_straight);
    let straight: HashSet<VarId> = assigned
        .keys()
        .filter(|v| !not_straight.contains(v))
        .copied()
        .collect();
    let changing: HashSet<VarId> = straight
        .iter()
        .filter(|v| assigned[v].len() > 1)
        .copied()
        .collect();
    // A local assigned once elsewhere is replaced by its value where it
    // is used, unless that value reads a straight-line variable that
    // changes (the use could see a later value).
    let once = assigned
        .iter()
        .filter(|(v, _)| kernel.vars[**v].kind == VarKind::Local && !straight.contains(v))
        .filter_map(|(v, vs)| match vs[..] {
            [Some(e)] if !reads_any(e, &changing) => Some((*v, e)),
            _ => None,
        })
        .collect();
    let mut ev = Eval {
        k: kernel,
        once,
        current: HashMap::new(),
        fresh: 0,
        problem: None,
        at: Span::new(0, 0),
        values: HashMap::new(),
        evaluating: HashSet::new(),
        depth: 0,
        deferred,
        indices: HashMap::new(),
        at_store: false,
        store_problem: None,
    };
    ev.walk(&kernel.body, &straight);
    // An array whose every access is at the thread's own element carries
    // no value between threads: a barrier around it only stages data.
    // Any other deferred array exchanges values between the threads of a
    // block; the indices of a global one are still checked.
    let mut exchanged = Vec::new();
    let mut ids: Vec<ArrayId> = ev.indices.keys().copied().collect();
    ids.sort_unstable();
    for a in ids {
        let shared = kernel.arrays[a].is_shared();
        let at = &ev.indices[&a];
        let first = &at[0].0;
        let own = at.iter().all(|(p, _)| p == first) && is_own_element(first, shared, dims);
        if own {
            continue;
        }
        exchanged.push(a);
        if !shared && ev.store_problem.is_none() {
            ev.store_problem = at
                .iter()
                .find_map(|(p, span)| dependence(p).map(|why| (why, *span)));
        }
    }
    // With values exchanged, a dependence counts where the kernel writes
    // its results (a reduction's `out[blockIdx.x]`); elsewhere it may be
    // block-cooperative code (`for (b = threadIdx.x; …; b += blockDim.x)`)
    // the proof does not cover.
    let problem = if exchanged.is_empty() {
        ev.problem
    } else {
        ev.store_problem
    };
    // An atomic whose outcome depends on the thread order makes the
    // results depend on the block shape wherever it is.
    let problem = problem.or_else(|| super::atomics::order_dependent(kernel));
    match (problem, exchanged.first()) {
        (Some((why, at)), _) => (BlockSize::Depends(why), Some(at)),
        (None, Some(&a)) => (
            BlockSize::NotChecked(format!(
                "the threads of a block exchange values through `{}` (not every access is at the thread's own element), which the proof does not cover",
                kernel.arrays[a].name
            )),
            None,
        ),
        (None, None) => (
            BlockSize::Independent {
                race_free_launches: None,
            },
            None,
        ),
    }
}

/// The arrays whose indices decide whether threads exchange values: the
/// shared ones, and with a barrier the global ones the kernel both reads
/// and writes (a barrier orders one thread's write before another's read
/// without a race).
fn deferred_arrays(kernel: &Kernel, syncs: bool) -> HashSet<ArrayId> {
    let mut read = HashSet::new();
    let mut written = HashSet::new();
    visit_exprs(&kernel.body, &mut |e| {
        if let ExprKind::Load(a) = &e.kind {
            read.insert(a.array);
        }
    });
    visit_stmts(&kernel.body, &mut |s| {
        if let Stmt::Store { access, .. } | Stmt::Atomic { access, .. } = s {
            written.insert(access.array);
        }
    });
    (0..kernel.arrays.len())
        .filter(|&a| {
            kernel.arrays[a].is_shared() || (syncs && read.contains(&a) && written.contains(&a))
        })
        .collect()
}

/// Whether index `p` is the thread's own element, the same for no two
/// threads of a launch: the thread's linear index in its block (shared
/// memory) or in the grid (global memory), plus a constant, over the
/// dimensions it names (`threadIdx.x`; `threadIdx.y·blockDim.x +
/// threadIdx.x`; …) — the form for the `dims` dimensions the kernel
/// names, so that no two threads of its launches share it.
fn is_own_element(p: &Poly, shared: bool, dims: usize) -> bool {
    let v = |n: &str| Poly::var(n);
    let index = |d: &str| {
        if shared {
            v(&format!("threadIdx.{d}"))
        } else {
            v(&format!("blockIdx.{d}")) * v(&format!("blockDim.{d}")) + v(&format!("threadIdx.{d}"))
        }
    };
    let extent = |d: &str| {
        if shared {
            v(&format!("blockDim.{d}"))
        } else {
            v(&format!("blockDim.{d}")) * v(&format!("gridDim.{d}"))
        }
    };
    let mut linear = p.clone();
    for (m, c) in p.terms() {
        if m.factors().next().is_none() {
            linear = linear - Poly::constant(c);
        }
    }
    let x = index("x");
    let xy = index("y") * extent("x") + index("x");
    let xyz = (index("z") * extent("y") + index("y")) * extent("x") + index("x");
    [x, xy, xyz][dims.clamp(1, 3) - 1] == linear
}

/// How many dimensions of the launch the kernel names (1 to 3).
fn dimensions(kernel: &Kernel) -> usize {
    let mut most = 1;
    visit_exprs(&kernel.body, &mut |e| {
        if let ExprKind::Builtin(
            Builtin::ThreadIdx(d)
            | Builtin::BlockIdx(d)
            | Builtin::BlockDim(d)
            | Builtin::GridDim(d),
        ) = e.kind
        {
            most = most.max(d as usize + 1);
        }
    });
    most
}

impl<'k> Eval<'k> {
    /// Checks the statements in order; `straight` locals are followed
    /// through their assignments, other locals assigned more than once
    /// have every assigned value checked.
    fn walk(&mut self, stmts: &'k [Stmt], straight: &HashSet<VarId>) {
        for s in stmts {
            match s {
                Stmt::Assign { var, value, .. } if straight.contains(var) => {
                    let p = self.eval(value);
                    self.current.insert(*var, p);
                }
                Stmt::Scope { body, .. } => self.walk(body, straight),
                _ => visit_stmts(std::slice::from_ref(s), &mut |s| self.statement(s)),
            }
        }
    }

    /// Checks the expressions of one statement (not the ones inside it).
    /// A variable that is neither replaced by its only value nor followed
    /// through straight-line code is an opaque symbol, so every value
    /// assigned to it is checked.
    fn statement(&mut self, s: &Stmt) {
        self.at_store = match s {
            Stmt::Store { access, .. } | Stmt::Atomic { access, .. } => {
                !self.k.arrays[access.array].is_shared()
            }
            _ => false,
        };
        let (span, exprs): (Span, Vec<&Expr>) = match s {
            Stmt::Assign { var, value, span } => {
                if self.once.contains_key(var) {
                    // Evaluated here, in order, so that a long chain of
                    // locals is never followed from its end.
                    self.at = *span;
                    self.value_of(*var);
                    return;
                }
                (*span, vec![value])
            }
            Stmt::Store {
                access,
                value,
                span,
            } => {
                self.at = *span;
                if self.deferred.contains(&access.array) {
                    self.defer(access.array, &access.index);
                    (*span, vec![value])
                } else {
                    (*span, vec![&access.index, value])
                }
            }
            Stmt::Atomic {
                access,
                value,
                compare,
                span,
                ..
            } => {
                self.at = *span;
                let mut v = vec![value];
                if self.deferred.contains(&access.array) {
                    self.defer(access.array, &access.index);
                } else {
                    v.push(access.index.as_ref());
                }
                v.extend(compare);
                (*span, v)
            }
            Stmt::If { cond, span, .. } => (*span, vec![cond]),
            Stmt::Loop {
                cond: Some(c),
                span,
                ..
            } => (*span, vec![c]),
            _ => return,
        };
        self.at = span;
        for e in exprs {
            self.check(e);
        }
    }
}
