//! Row/column splits of a thread index: what an index built
//! from `q = x / n` and `r = x % n` (a run-time `n`) touches within a warp.
//!
//! [`super::deps`] knows an index only as `u + Σ c_d·threadIdx.d`; through
//! `/` and `%` by a run-time value it gives up (the worst case, every lane
//! in its own sector). This analysis follows an index through the locals
//! assigned once whose assignment dominates the access, as a polynomial
//! over the launch's builtins, the parameters and *atoms* `x / n`, `x % n`,
//! and proves three facts:
//!
//! - **The identity.** For `n ≠ 0`, `(x / n)·n + x % n = x` in C
//!   (division truncates toward zero, and `|(x / n)·n| ≤ |x|` never
//!   overflows). An index `row * n + col` with `row = idx / n` and
//!   `col = idx % n` is `idx` exactly: [`WarpIndex::Exact`] with the
//!   dependence of `idx`.
//! - **Quotients.** For `x = v + threadIdx.x` (`v` the same in every lane)
//!   and any `n ≠ 0`, `x / n` is monotone in `x` and moves by at most 1
//!   when `x` moves by 1, so the consecutive `x` of a warp give consecutive
//!   quotients: an index `u ± x / n` lies in one run of at most a warp's
//!   width of consecutive elements ([`WarpIndex::OneRun`]), or in two when
//!   the warp's `threadIdx.x` may form two runs (a row of the block that is
//!   not a multiple of the warp wraps into the next) or an unsigned `x`
//!   may wrap at its type's limit ([`WarpIndex::TwoRuns`]).
//! - **Remainders.** For such an `x` that is never negative (`v` a sum of
//!   builtins with nonnegative coefficients), `x % n` is `x − n·(x / n)`:
//!   when `|n| ≥ 32` the quotient takes at most two values over 32
//!   consecutive `x` (every stretch of one quotient is `|n|` long), so the
//!   remainders are at most two runs of consecutive values; when `|n| < 32`
//!   they all lie in `[0, |n|)`, one run. Either way [`WarpIndex::TwoRuns`].
//!
//! Like the rest of the analysis (`deps`), it assumes that index
//! arithmetic does not overflow its type (`blockIdx.x * blockDim.x +
//! threadIdx.x` fits an `int`). A conversion is followed only when it keeps
//! the value (widening, or a value built from builtins alone), so an atom's
//! `x` and `n` are the values the division sees.

use std::collections::HashMap;

use super::congruence::Cong;
use super::defs::{dominates, sublists, Defs, Position};
use super::deps::{Coef, Dep, LaunchFacts};
use super::memory;
use crate::cost::{Footprint, Hardware};
use crate::cuda::ast::BinOp;
use crate::ir::{Builtin, Expr, ExprKind, Kernel, SiteId, Stmt, Unary, VarId, VarKind};
use crate::launch::Dims;
use crate::poly::{Monomial, Poly, Rational};

/// What a warp's lanes access at one site, beyond its thread dependence.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WarpIndex {
    /// The index equals an expression without `/` or `%` whose thread
    /// dependence is this (the identity made the split disappear).
    Exact(Dep),
    /// The lanes' indices lie in one run of at most a warp's width of
    /// consecutive elements, placed anywhere.
    OneRun,
    /// … in two such runs whose lengths add up to at most a warp's width,
    /// each placed anywhere.
    TwoRuns,
}

impl WarpIndex {
    /// Worst-case global transactions of one warp request.
    pub fn transactions(self, fp: Footprint, hw: &Hardware, block: Option<Dims>) -> u64 {
        let warp = hw.warp_size as u64;
        let run = Dep::Affine([Coef::Known(1), Coef::Known(0), Coef::Known(0)], Cong::ANY);
        match self {
            WarpIndex::Exact(dep) => memory::transactions(dep, fp, hw, block),
            // One row of `warp` lanes, every start (any block for a warp
            // wider than a block can be).
            WarpIndex::OneRun => {
                memory::transactions(run, fp, hw, crate::launch::block([warp, 1, 1]).ok())
            }
            // Any block: one run, or two runs of k and warp − k anywhere.
            WarpIndex::TwoRuns => memory::transactions(run, fp, hw, None),
        }
    }
}

/// Largest coefficient kept (products of two stay far inside `i128`).
const MAX_COEF: i128 = 1 << 62;
/// Most terms in one polynomial, and most atoms in a kernel.
const MAX_TERMS: usize = 64;
/// Deepest expression followed.
const MAX_DEPTH: usize = 64;

/// `x / n` or `x % n`.
#[derive(Clone, Debug, PartialEq)]
struct Atom {
    rem: bool,
    /// Whether the division is signed (an unsigned `x` may wrap).
    signed: bool,
    x: Poly,
    n: Poly,
}

/// The split facts of a kernel's access sites.
pub fn analyze(k: &Kernel, launch: &LaunchFacts) -> HashMap<SiteId, WarpIndex> {
    let mut a = Split {
        k,
        launch: *launch,
        defs: Defs::of(&k.body),
        memo: HashMap::new(),
        atoms: Vec::new(),
    };
    let mut found: HashMap<SiteId, Option<WarpIndex>> = HashMap::new();
    a.sites(&k.body, &mut Vec::new(), &mut found);
    found
        .into_iter()
        .filter_map(|(s, w)| Some((s, w?)))
        .collect()
}

struct Split<'k> {
    k: &'k Kernel,
    launch: LaunchFacts,
    /// Where the kernel assigns its variables.
    defs: Defs<'k>,
    /// The polynomial of each local in `defs`, once computed.
    memo: HashMap<VarId, Option<Poly>>,
    atoms: Vec<Atom>,
}

impl<'k> Split<'k> {
    /// Every access site's fact, per statement; a site met in several
    /// statements (inlined code) keeps a fact only when all agree.
    fn sites(
        &mut self,
        stmts: &'k [Stmt],
        path: &mut Vec<(u32, u8)>,
        found: &mut HashMap<SiteId, Option<WarpIndex>>,
    ) {
        for (i, s) in stmts.iter().enumerate() {
            let at = (path.clone(), i as u32);
            let mut accesses: Vec<(SiteId, &'k Expr)> = Vec::new();
            let mut loads = |e: &'k Expr| loads_in(e, &mut accesses);
            match s {
                Stmt::Assign { value, .. } => loads(value),
                Stmt::Store { access, value, .. } => {
                    loads(&access.index);
                    loads(value);
                    if access.charged {
                        accesses.push((access.site, &access.index));
                    }
                }
                Stmt::Atomic {
                    access,
                    value,
                    compare,
                    ..
                } => {
                    loads(&access.index);
                    loads(value);
                    if let Some(c) = compare {
                        loads(c);
                    }
                    if access.charged {
                        accesses.push((access.site, &access.index));
                    }
                }
                Stmt::If { cond, .. }
                | Stmt::Loop {
                    cond: Some(cond), ..
                } => loads(cond),
                _ => {}
            }
            for (site, index) in accesses {
                let w = self.index(index, &at);
                let e = found.entry(site).or_insert(w);
                if *e != w {
                    *e = None;
                }
            }
            for (b, list) in sublists(s).into_iter().enumerate() {
                path.push((i as u32, b as u8));
                self.sites(list, path, found);
                path.pop();
            }
        }
    }

    /// The fact of an index evaluated at `at`.
    fn index(&mut self, e: &'k Expr, at: &Position) -> Option<WarpIndex> {
        let p = self.poly(e, at, 0)?;
        let p = self.simplify(p);
        if !p.variables().iter().any(|v| is_atom(v)) {
            return self.dep(&p).map(WarpIndex::Exact);
        }
        // `u ± atom` with `u` the same in every lane.
        let mut lane_terms = p.terms().filter(|(m, _)| !self.uniform_monomial(m));
        let (m, c) = lane_terms.next()?;
        if lane_terms.next().is_some() || c.abs() != Rational::ONE {
            return None;
        }
        let (name, 1) = m.factors().next()? else {
            return None;
        };
        if m.degree() != 1 {
            return None;
        }
        let atom = self.atoms.get(atom_index(name)?)?.clone();
        self.atom_runs(&atom)
    }

    /// What one atom's values over a warp are, when it varies.
    fn atom_runs(&self, atom: &Atom) -> Option<WarpIndex> {
        if !self.uniform(&atom.n) {
            return None;
        }
        // x = v + threadIdx.x, v the same in every lane.
        let Some(Dep::Affine([Coef::Known(1), Coef::Known(0), Coef::Known(0)], _)) =
            self.dep(&atom.x)
        else {
            return None;
        };
        let v = &atom.x - &Poly::var(&thread_name(0));
        let nonneg = nonnegative(&v);
        let one_run = self.lanes_in_one_run();
        match (atom.rem, one_run) {
            (false, true) if nonneg || atom.signed => Some(WarpIndex::OneRun),
            (false, _) => Some(WarpIndex::TwoRuns),
            (true, true) if nonneg => Some(WarpIndex::TwoRuns),
            _ => None,
        }
    }
}

/// The loads in `e` (nested ones too), with their indices.
fn loads_in<'e>(e: &'e Expr, out: &mut Vec<(SiteId, &'e Expr)>) {
    match &e.kind {
        ExprKind::Load(a) => {
            if a.charged {
                out.push((a.site, &a.index));
            }
            loads_in(&a.index, out);
        }
        ExprKind::Unary(_, x) | ExprKind::Convert { value: x, .. } => loads_in(x, out),
        ExprKind::Binary(_, a, b) | ExprKind::And(a, b) | ExprKind::Or(a, b) => {
            loads_in(a, out);
            loads_in(b, out);
        }
        ExprKind::Select(c, a, b) => {
            for x in [c, a, b] {
                loads_in(x, out);
            }
        }
        ExprKind::Call(_, args) => args.iter().for_each(|x| loads_in(x, out)),
        ExprKind::Const(_) | ExprKind::Var(_) | ExprKind::Builtin(_) => {}
    }
}

fn thread_name(d: u8) -> String {
    format!("threadIdx.{}", ["x", "y", "z"][d as usize])
}

fn is_atom(name: &str) -> bool {
    name.starts_with('#')
}

fn atom_index(name: &str) -> Option<usize> {
    name.strip_prefix("#q")
        .or_else(|| name.strip_prefix("#r"))?
        .parse()
        .ok()
}

/// Whether a polynomial is never negative: a constant ≥ 0 plus builtins
/// with nonnegative coefficients.
fn nonnegative(p: &Poly) -> bool {
    p.terms().all(|(m, c)| {
        c >= Rational::ZERO
            && m.factors().all(|(name, _)| {
                ["threadIdx", "blockIdx", "blockDim", "gridDim"]
                    .iter()
                    .any(|b| name.starts_with(b))
            })
    })
}

/// `p` when its coefficients stay small, so later products cannot
/// overflow.
fn small(p: Poly) -> Option<Poly> {
    let ok = p.len() <= MAX_TERMS
        && p.terms()
            .all(|(_, c)| c.is_integer() && c.num().abs() < MAX_COEF);
    ok.then_some(p)
}

impl<'k> Split<'k> {
    /// The polynomial of an integer expression evaluated at `at`.
    fn poly(&mut self, e: &'k Expr, at: &Position, depth: usize) -> Option<Poly> {
        if depth > MAX_DEPTH || e.ty.is_float() {
            return None;
        }
        let int = |c: i64| Poly::constant(Rational::int(c as i128));
        let p = match &e.kind {
            ExprKind::Const(v) => int(v.as_i64()),
            ExprKind::Builtin(b) => self.builtin(*b),
            ExprKind::Var(v) => match self.k.vars[*v].kind {
                VarKind::Param(_) | VarKind::Symbol if !self.defs.is_assigned(*v) => {
                    Poly::var(&format!("v{v}"))
                }
                VarKind::Local => {
                    let (value, def) = self.defs.single(*v)?;
                    let def = def.clone();
                    if !dominates(&def, at) {
                        return None;
                    }
                    if let Some(p) = self.memo.get(v) {
                        return p.clone();
                    }
                    let p = self.poly(value, &def, depth + 1);
                    self.memo.insert(*v, p.clone());
                    p?
                }
                _ => return None,
            },
            ExprKind::Convert { value, .. } => {
                let (from, to) = (value.ty, e.ty);
                let p = self.poly(value, at, depth + 1)?;
                let widens = to.size() >= from.size()
                    && (from.is_signed() == to.is_signed()
                        || !from.is_signed() && to.size() > from.size());
                let keeps = widens || to.size() >= from.size() && nonnegative(&p);
                if from.is_float() || !keeps {
                    return None;
                }
                p
            }
            ExprKind::Unary(Unary::Neg, x) if e.ty.is_signed() => -self.poly(x, at, depth + 1)?,
            ExprKind::Binary(op, l, r) => {
                let a = self.poly(l, at, depth + 1)?;
                let b = self.poly(r, at, depth + 1)?;
                match op {
                    BinOp::Add => a + b,
                    BinOp::Sub if l.ty.is_signed() || nonnegative(&(&a - &b)) => a - b,
                    BinOp::Mul if (&a * &b).degree() <= 4 => a * b,
                    BinOp::Shl => {
                        let k = b.as_constant().filter(|k| k.is_integer())?.num();
                        if !(0..31).contains(&k) {
                            return None;
                        }
                        a.scale(Rational::int(1 << k))
                    }
                    BinOp::Div | BinOp::Rem => {
                        let a = self.simplify(a);
                        self.divide(*op == BinOp::Rem, l.ty.is_signed(), a, b)?
                    }
                    _ => return None,
                }
            }
            _ => return None,
        };
        small(p)
    }

    /// `a / b` or `a % b` (`a` simplified): folded when both are
    /// constants, else an atom.
    fn divide(&mut self, rem: bool, signed: bool, a: Poly, b: Poly) -> Option<Poly> {
        if let (Some(x), Some(n)) = (a.as_constant(), b.as_constant()) {
            let (x, n) = (x.num(), n.num());
            if n == 0 || !signed && (x < 0 || n < 0) {
                return None;
            }
            return Some(Poly::constant(Rational::int(if rem {
                x % n
            } else {
                x / n
            })));
        }
        if b.is_zero() {
            return None;
        }
        let atom = Atom {
            rem,
            signed,
            x: a,
            n: b,
        };
        let i = match self.atoms.iter().position(|x| *x == atom) {
            Some(i) => i,
            None if self.atoms.len() < MAX_TERMS => {
                self.atoms.push(atom);
                self.atoms.len() - 1
            }
            None => return None,
        };
        Some(Poly::var(&format!("#{}{i}", if rem { 'r' } else { 'q' })))
    }

    fn builtin(&self, b: Builtin) -> Poly {
        let dims = |known: Option<Dims>, d: u8, name: &str| match known {
            Some(x) => Poly::constant(Rational::int(x[d as usize] as i128)),
            None => Poly::var(&format!("{name}.{}", ["x", "y", "z"][d as usize])),
        };
        let one_wide = |known: Option<Dims>, d: u8| known.is_some_and(|x| x[d as usize] == 1);
        match b {
            Builtin::ThreadIdx(d) if one_wide(self.launch.block, d) => Poly::zero(),
            Builtin::ThreadIdx(d) => Poly::var(&thread_name(d)),
            Builtin::BlockIdx(d) if one_wide(self.launch.grid, d) => Poly::zero(),
            Builtin::BlockIdx(d) => Poly::var(&format!("blockIdx.{}", ["x", "y", "z"][d as usize])),
            Builtin::BlockDim(d) => dims(self.launch.block, d, "blockDim"),
            Builtin::GridDim(d) => dims(self.launch.grid, d, "gridDim"),
            Builtin::WarpSize => Poly::constant(Rational::int(self.launch.warp as i128)),
        }
    }

    /// `p` with every remainder `x % n` that the identity removes written
    /// `x − n·(x / n)`: kept only when both atoms then cancel.
    fn simplify(&mut self, mut p: Poly) -> Poly {
        for i in 0..self.atoms.len() {
            let atom = self.atoms[i].clone();
            let name = format!("#r{i}");
            if !atom.rem || !p.variables().contains(&name) {
                continue;
            }
            let Some(q) = self.divide(false, atom.signed, atom.x.clone(), atom.n.clone()) else {
                continue;
            };
            let value = &atom.x - &(&atom.n * &q);
            let mut out = Poly::zero();
            let mut linear = true;
            for (m, c) in p.terms() {
                match m.exponent(&name) {
                    0 => out.add_term(c, m.clone()),
                    1 => {
                        let rest = Poly::term(c, without(m, &name));
                        out += &rest * &value;
                    }
                    _ => linear = false,
                }
            }
            let gone = |v: &str| !out.variables().contains(v);
            let q_name = q.variables().into_iter().next().unwrap_or_default();
            if linear && gone(&name) && gone(&q_name) {
                if let Some(s) = small(out) {
                    p = s;
                }
            }
        }
        p
    }

    /// Whether a value is the same in every lane of a warp.
    fn uniform(&self, p: &Poly) -> bool {
        p.terms().all(|(m, _)| self.uniform_monomial(m))
    }

    fn uniform_monomial(&self, m: &Monomial) -> bool {
        m.factors().all(|(name, _)| match atom_index(name) {
            Some(i) => self
                .atoms
                .get(i)
                .is_some_and(|a| self.uniform(&a.x) && self.uniform(&a.n)),
            None => match thread_dim(name) {
                Some(d) => self.launch.warp_uniform(d),
                None => true,
            },
        })
    }

    /// The thread dependence of a polynomial (its atoms must be uniform).
    fn dep(&self, p: &Poly) -> Option<Dep> {
        let mut coefs = [Coef::Known(0); 3];
        let mut cong = Cong::exact(0);
        for (m, c) in p.terms() {
            let c = i64::try_from(c.num()).ok().filter(|_| c.is_integer())?;
            let lane: Vec<(u8, u32)> = m
                .factors()
                .filter_map(|(name, e)| {
                    thread_dim(name)
                        .filter(|&d| !self.launch.warp_uniform(d))
                        .map(|d| (d, e))
                })
                .collect();
            let rest_uniform = self.uniform_monomial(&without_threads(m, &self.launch));
            match lane.as_slice() {
                _ if !rest_uniform => return None,
                [] if m.is_one() => cong = cong + Cong::exact(c),
                [] => cong = cong + Cong::new(c.abs(), 0),
                [(d, 1)] => {
                    let k = if m.degree() == 1 {
                        Coef::Known(c)
                    } else {
                        Coef::Unknown
                    };
                    let slot = &mut coefs[*d as usize];
                    *slot = match (*slot, k) {
                        (Coef::Known(a), Coef::Known(b)) => {
                            a.checked_add(b).map_or(Coef::Unknown, Coef::Known)
                        }
                        _ => Coef::Unknown,
                    };
                }
                _ => return None,
            }
        }
        Some(if coefs.iter().all(|c| *c == Coef::Known(0)) {
            Dep::Uniform(cong)
        } else {
            Dep::Affine(coefs, cong)
        })
    }

    /// Whether the `threadIdx.x` of every warp's lanes form one run of
    /// consecutive values (a known block whose rows are a whole number of
    /// warps, one row, or rows no wider than a warp).
    fn lanes_in_one_run(&self) -> bool {
        let Some(block) = self.launch.block else {
            return false;
        };
        memory::warps_of(block, self.launch.warp)
            .iter()
            .all(|lanes| {
                let xs = lanes.iter().map(|t| t[0]);
                let (lo, hi) = (xs.clone().min(), xs.max());
                let mut seen: Vec<i64> = lanes.iter().map(|t| t[0]).collect();
                seen.sort_unstable();
                seen.dedup();
                lo.zip(hi)
                    .is_none_or(|(lo, hi)| (hi - lo + 1) as usize == seen.len())
            })
    }
}

/// `d` for `threadIdx.d`.
fn thread_dim(name: &str) -> Option<u8> {
    ["threadIdx.x", "threadIdx.y", "threadIdx.z"]
        .iter()
        .position(|t| *t == name)
        .map(|d| d as u8)
}

/// `m` without the factor `name`.
fn without(m: &Monomial, name: &str) -> Monomial {
    m.factors()
        .filter(|(v, _)| *v != name)
        .fold(Monomial::one(), |acc, (v, e)| {
            acc.mul(&Monomial::power(v, e))
        })
}

/// `m` without its lane-varying `threadIdx` factors.
fn without_threads(m: &Monomial, launch: &LaunchFacts) -> Monomial {
    m.factors()
        .filter(|(v, _)| thread_dim(v).is_none_or(|d| launch.warp_uniform(d)))
        .fold(Monomial::one(), |acc, (v, e)| {
            acc.mul(&Monomial::power(v, e))
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cuda::parse::parse_source;
    use crate::ir::lower::lower_kernel;
    use crate::source::SourceFile;

    /// The fact of every site of kernel `k` (in site order) for `block`.
    fn facts(src: &str, block: Option<Dims>) -> Vec<Option<WarpIndex>> {
        let f = parse_source(SourceFile::new("t.cu", src));
        let k = lower_kernel(&f, "k").unwrap();
        let launch = LaunchFacts {
            block,
            grid: None,
            warp: 32,
        };
        let found = analyze(&k, &launch);
        (0..k.sites.len()).map(|s| found.get(&s).copied()).collect()
    }

    const SPLIT: &str = "__global__ void k(float *a, int n) {\n\
        int idx = blockIdx.x * blockDim.x + threadIdx.x;\n\
        int row = idx / n; int col = idx % n;\n";

    #[test]
    fn the_identity_gives_back_the_thread_index() {
        let src =
            format!("{SPLIT} a[row * n + col] = a[col * n + row] + a[(row + 1) * n + col]; }}");
        let f = facts(&src, crate::launch::block([256, 1, 1]).ok());
        let idx = Dep::Affine(
            [Coef::Known(1), Coef::Known(0), Coef::Known(0)],
            Cong::new(256, 0),
        );
        // Sites: the two loads, then the store.
        assert_eq!(f[0], None);
        assert!(matches!(f[1], Some(WarpIndex::Exact(Dep::Affine(..)))));
        assert_eq!(f[2], Some(WarpIndex::Exact(idx)));
        let hw = Hardware::default();
        let fp = Footprint::element(4);
        assert_eq!(
            f[2].unwrap()
                .transactions(fp, &hw, crate::launch::block([256, 1, 1]).ok()),
            4
        );
    }

    #[test]
    fn quotients_are_one_run_and_remainders_two() {
        let src = format!("{SPLIT} a[row] = a[col] + a[5 - row] + a[2 * col]; }}");
        let f = facts(&src, crate::launch::block([256, 1, 1]).ok());
        assert_eq!(f[0], Some(WarpIndex::TwoRuns));
        assert_eq!(f[1], Some(WarpIndex::OneRun));
        assert_eq!(f[2], None);
        assert_eq!(f[3], Some(WarpIndex::OneRun));
        // A block whose rows wrap inside a warp: two runs of `threadIdx.x`,
        // so two runs of quotients, and remainders are not followed.
        let f = facts(&src, crate::launch::block([40, 2, 1]).ok());
        assert_eq!(f[3], Some(WarpIndex::TwoRuns));
        assert_eq!(f[0], None);
        let hw = Hardware::default();
        let fp = Footprint::element(4);
        assert_eq!(WarpIndex::OneRun.transactions(fp, &hw, None), 5);
        assert_eq!(WarpIndex::TwoRuns.transactions(fp, &hw, None), 7);
    }

    #[test]
    fn what_is_not_followed() {
        // A negative thread index: remainders may have both signs.
        let neg = "__global__ void k(float *a, int n) {\n\
            int idx = blockIdx.x * blockDim.x + threadIdx.x - 40;\n\
            a[idx % n] = 0.0f; }";
        assert_eq!(
            facts(neg, crate::launch::block([256, 1, 1]).ok()),
            vec![None]
        );
        // A signed divisor converted to unsigned is not the value written.
        let conv = "__global__ void k(float *a, int n) {\n\
            unsigned idx = blockIdx.x * blockDim.x + threadIdx.x;\n\
            unsigned row = idx / n; unsigned col = idx % n;\n\
            a[row * n + col] = 0.0f; }";
        assert_eq!(
            facts(conv, crate::launch::block([256, 1, 1]).ok()),
            vec![None]
        );
        // A split assigned twice, or in a branch the access is not in.
        let twice = format!("{SPLIT} if (n > 4) {{ row = 0; }} a[row * n + col] = 0.0f; }}");
        assert_eq!(
            facts(&twice, crate::launch::block([256, 1, 1]).ok()),
            vec![None]
        );
        let branch = "__global__ void k(float *a, int n) {\n\
            int idx = blockIdx.x * blockDim.x + threadIdx.x; int row; int col;\n\
            if (n > 4) { row = idx / n; col = idx % n; }\n\
            a[row * n + col] = 0.0f; }";
        assert_eq!(
            facts(branch, crate::launch::block([256, 1, 1]).ok()),
            vec![None]
        );
        // A narrowing conversion changes the value.
        let narrow = "__global__ void k(float *a, int n) {\n\
            int idx = blockIdx.x * blockDim.x + threadIdx.x;\n\
            a[(unsigned char)idx / n] = 0.0f; }";
        assert_eq!(
            facts(narrow, crate::launch::block([256, 1, 1]).ok()),
            vec![None]
        );
    }
}
