//! Base functions of the potential: the terms the bound's polynomial is
//! built from.
//!
//! A linear base is `max(0, L)` for a linear form `L` over the symbols; a
//! base of degree `d` is a product of `d` linear ones. Linear forms come
//! from loop guards: a guard fact `F ≥ 0` (per lane) yields its
//! lane-independent part `U = F − Σ c·threadIdx` shifted so that it is at
//! least the counter's step inside the body (`n − i − 1 ≥ 0` with `i += 2`
//! gives `n − i + 1`), and the set is closed under the kernel's assignments
//! (`j := 0` turns `m − j` into `m`). Every base is nonnegative, so
//! comparing potentials coefficient by coefficient is sound.

use std::collections::{BTreeSet, HashMap};

use crate::absint::deps::{key, DepFacts};
use crate::absint::facts::LinFacts;
use crate::absint::linear::{Constraints, LinExpr, Sym};
use crate::absint::symbols::Symbols;
use crate::ir::{Kernel, Stmt, VarId};
use crate::poly::Rational;

/// Most linear bases.
const MAX_LINEAR: usize = 256;
/// Most bases of all degrees.
const MAX_BASES: usize = 2000;

/// The base functions of one analysis.
#[derive(Clone, Debug, Default)]
pub struct Bases {
    /// The linear forms `L` of the linear bases `max(0, L)`.
    pub linear: Vec<LinExpr>,
    /// Every base as the sorted indices of its linear factors.
    pub list: Vec<Vec<usize>>,
    index: HashMap<Vec<usize>, usize>,
}

impl Bases {
    /// The base with these linear factors (in any order).
    pub fn find(&self, factors: &[usize]) -> Option<usize> {
        let mut f = factors.to_vec();
        f.sort_unstable();
        self.index.get(&f).copied()
    }

    /// The linear factor with form `l` (up to a positive multiple): its
    /// index and the multiple (`l = k·linear[i]`).
    pub fn find_linear(&self, l: &LinExpr) -> Option<(usize, Rational)> {
        let (n, k) = normalize(l)?;
        self.linear.iter().position(|x| *x == n).map(|i| (i, k))
    }

    /// The linear factors of base `i`.
    pub fn factors(&self, i: usize) -> &[usize] {
        &self.list[i]
    }

    /// Whether base `i` depends on symbol `s`.
    pub fn mentions(&self, i: usize, s: Sym) -> bool {
        self.list[i]
            .iter()
            .any(|&f| !self.linear[f].coeff(s).is_zero())
    }

    /// Number of bases.
    pub fn len(&self) -> usize {
        self.list.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    fn push(&mut self, factors: Vec<usize>) {
        if !self.index.contains_key(&factors) {
            self.index.insert(factors.clone(), self.list.len());
            self.list.push(factors);
        }
    }
}

/// `l` scaled by a positive factor to coprime integer coefficients, and
/// the factor `k` with `l = k·result`; `None` for a constant.
fn normalize(l: &LinExpr) -> Option<(LinExpr, Rational)> {
    if l.is_constant() {
        return None;
    }
    let mut den: i128 = 1;
    for c in l.coeffs.values() {
        den = lcm(den, c.den());
    }
    let mut g: i128 = 0;
    for c in l.coeffs.values() {
        g = gcd(g, (c.num() * (den / c.den())).abs());
    }
    let k = Rational::new(g, den);
    Some((l.scale(Rational::ONE / k), k))
}

fn gcd(a: i128, b: i128) -> i128 {
    if b == 0 {
        a.abs()
    } else {
        gcd(b, a % b)
    }
}

fn lcm(a: i128, b: i128) -> i128 {
    a / gcd(a, b) * b
}

/// Collects the bases of a (jump-free, ghost-counted) kernel. Forms over
/// the jump flags `flags` (zero in every running lane) are no bases.
///
/// Every linear base remembers the loop it comes from; products only
/// combine bases of the same loop or of loops nested in one another (what
/// nested loops pay each other with), which keeps many sequential loops
/// from multiplying the bases.
pub fn collect(
    k: &Kernel,
    deps: &DepFacts,
    lin: &LinFacts,
    syms: &Symbols,
    degree: u32,
    flags: &[VarId],
) -> Bases {
    let loops = loop_tree(&k.body);
    // Each form with the loops it comes from.
    let mut linear: Vec<(LinExpr, BTreeSet<usize>)> = Vec::new();
    let add =
        |linear: &mut Vec<(LinExpr, BTreeSet<usize>)>, l: LinExpr, origin: &BTreeSet<usize>| {
            if flags.iter().any(|&f| !l.coeff(syms.var(f)).is_zero()) {
                return;
            }
            if let Some((n, _)) = normalize(&l) {
                match linear.iter().position(|(x, _)| *x == n) {
                    Some(i) => linear[i].1.extend(origin.iter().copied()),
                    None if linear.len() < MAX_LINEAR => linear.push((n, origin.clone())),
                    None => {}
                }
            }
        };
    let assigns = assignments(&k.body, deps, lin, syms);
    for (index, (s, _)) in loops.iter().enumerate() {
        let (Some(guards), Some(head), Some(body)) = (
            lin.guards.get(&key(s)),
            deps.head.get(&key(s)),
            lin.body.get(&key(s)),
        ) else {
            continue;
        };
        let Stmt::Loop {
            body: b, step: st, ..
        } = s
        else {
            continue;
        };
        let steps = counter_steps(b, st, deps, lin, syms);
        for f in guards {
            let Some(u) = syms.uniform_part(f, head) else {
                continue;
            };
            let Some(lb) = body.bounds(&u).0 else {
                continue;
            };
            // Shift 0 is the partner a loop body weakens the others to.
            let mut shifts = vec![Rational::ZERO, Rational::ONE];
            for (x, m) in &steps {
                let c = f.coeff(*x).abs() * *m;
                if !c.is_zero() && !shifts.contains(&c) {
                    shifts.push(c);
                }
            }
            for sh in shifts {
                add(
                    &mut linear,
                    u.sub(&LinExpr::constant(lb - sh)),
                    &BTreeSet::from([index]),
                );
            }
        }
    }
    // Closed until nothing changes: a chain of copies (`int cp = n; int
    // len = cp; int m = len;`, arguments bound to an inlined function's
    // parameters) takes one round a link, so no fixed number of rounds
    // reaches its input. The forms are at most `MAX_LINEAR` and each
    // remembers at most every loop, so each round that changes something
    // grows a bounded measure and the closure ends.
    loop {
        let before = linear.len();
        let origins_before: usize = linear.iter().map(|(_, o)| o.len()).sum();
        for a in &assigns {
            for (l, origin) in linear.clone() {
                if !l.coeff(a.target).is_zero() && a.value.coeff(a.target).is_zero() {
                    let l2 = l.substitute(a.target, &a.value);
                    if syms.is_uniform(&l2, &a.state) {
                        add(&mut linear, l2, &origin);
                    }
                }
            }
        }
        let origins_after: usize = linear.iter().map(|(_, o)| o.len()).sum();
        if linear.len() == before && origins_after == origins_before {
            break;
        }
    }
    // Loops related by nesting (or equal).
    let ancestor = |a: usize, mut b: usize| loop {
        if a == b {
            return true;
        }
        match loops[b].1 {
            Some(p) => b = p,
            None => return false,
        }
    };
    let origins: Vec<BTreeSet<usize>> = linear.iter().map(|(_, o)| o.clone()).collect();
    let related = |i: usize, j: usize| {
        origins[i]
            .iter()
            .any(|&a| origins[j].iter().any(|&b| ancestor(a, b) || ancestor(b, a)))
    };
    let mut bases = Bases {
        linear: linear.into_iter().map(|(l, _)| l).collect(),
        ..Bases::default()
    };
    let n = bases.linear.len();
    let mut layer: Vec<Vec<usize>> = (0..n).map(|i| vec![i]).collect();
    for f in &layer {
        bases.push(f.clone());
    }
    for _ in 1..degree {
        let mut next = Vec::new();
        for f in &layer {
            let last = *f.last().unwrap_or(&0);
            for j in last..n {
                if bases.list.len() + next.len() >= MAX_BASES {
                    break;
                }
                if f.iter().all(|&i| related(i, j)) {
                    let mut g = f.clone();
                    g.push(j);
                    next.push(g);
                }
            }
        }
        for f in &next {
            bases.push(f.clone());
        }
        layer = next;
    }
    bases
}

/// Every loop in pre-order, with the index of the loop it is nested in.
fn loop_tree(stmts: &[Stmt]) -> Vec<(&Stmt, Option<usize>)> {
    fn go<'k>(stmts: &'k [Stmt], parent: Option<usize>, out: &mut Vec<(&'k Stmt, Option<usize>)>) {
        for s in stmts {
            match s {
                Stmt::Loop { body, step, .. } => {
                    let me = out.len();
                    out.push((s, parent));
                    go(body, Some(me), out);
                    go(step, Some(me), out);
                }
                Stmt::If { then, els, .. } => {
                    go(then, parent, out);
                    go(els, parent, out);
                }
                Stmt::Scope { body, .. } => go(body, parent, out),
                _ => {}
            }
        }
    }
    let mut out = Vec::new();
    go(stmts, None, &mut out);
    out
}

/// An assignment `target := value` with a linear value.
struct LinAssign {
    target: Sym,
    value: LinExpr,
    state: crate::absint::deps::State,
    ctx: Constraints,
}

/// Every assignment of a linear value, with the dependence state before it.
fn assignments(stmts: &[Stmt], deps: &DepFacts, lin: &LinFacts, syms: &Symbols) -> Vec<LinAssign> {
    let mut out = Vec::new();
    crate::ir::visit_stmts(stmts, &mut |s| {
        if let Stmt::Assign { var, value, .. } = s {
            let (Some(st), Some(ctx)) = (deps.before.get(&key(s)), lin.before.get(&key(s))) else {
                return;
            };
            if let Some(l) = syms.linearize(value, Some(ctx)) {
                out.push(LinAssign {
                    target: syms.var(*var),
                    value: l,
                    state: st.clone(),
                    ctx: ctx.clone(),
                });
            }
        }
    });
    out
}

/// The counters a loop moves by a uniform step `x := x + d`, with the
/// least magnitude of `d` the facts prove.
fn counter_steps(
    body: &[Stmt],
    step: &[Stmt],
    deps: &DepFacts,
    lin: &LinFacts,
    syms: &Symbols,
) -> Vec<(Sym, Rational)> {
    let mut out = Vec::new();
    for a in assignments(body, deps, lin, syms)
        .into_iter()
        .chain(assignments(step, deps, lin, syms))
    {
        if a.value.coeff(a.target) != Rational::ONE {
            continue;
        }
        let d = a.value.sub(&LinExpr::var(a.target));
        if !syms.is_uniform(&d, &a.state) {
            continue;
        }
        // A symbolic step counts with the least magnitude the facts prove.
        let m = match a.ctx.bounds(&d) {
            (Some(lo), _) if lo > Rational::ZERO => lo,
            (_, Some(hi)) if hi < Rational::ZERO => -hi,
            _ => continue,
        };
        if !m.is_zero() {
            out.push((a.target, m));
        }
    }
    out
}
