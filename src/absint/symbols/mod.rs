//! The symbols of the linear domain and the linear forms of IR expressions.
//!
//! Linear facts are *per lane*: a fact holds in every active lane of a warp,
//! so a thread-dependent variable is as good a symbol as a uniform one. The
//! symbols are the kernel's integer variables, the components of
//! `blockIdx`, `gridDim`, `blockDim` and `threadIdx`, and *atoms*: integer
//! expressions over the kernel's inputs that are not linear (`n / 16`,
//! `w * h`, `n % 4`), each a symbol of its own with the facts that bound it
//! (`16·q ≤ n + 15`). Launch dimensions fixed by the configuration are
//! constants, not symbols.
//!
//! Arithmetic is read as mathematical integers: `int` overflow is undefined
//! in C and assumed not to happen. Where C's unsigned arithmetic can wrap
//! (a difference, a negative value converted to `unsigned`) an expression is
//! linear only when the context proves it stays nonnegative.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::congruence::Cong;
use super::deps::{Coef, Dep, LaunchFacts, State};
use super::linear::{Constraints, LinExpr, Sym};
use crate::ir::{Builtin, Expr, ExprKind, Kernel, Scalar, VarId};
use crate::launch::Dims;
use crate::poly::{Poly, Rational};

mod atoms;
mod linearize;
mod update;

use atoms::atom_facts;
pub(crate) use atoms::substitute;
pub use update::{Update, NEW};

/// Most atoms one kernel may have.
const MAX_ATOMS: usize = 32;

/// What a symbol stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SymKind {
    /// A variable.
    Var(VarId),
    /// `blockIdx.d`
    BlockIdx(u8),
    /// `gridDim.d`
    GridDim(u8),
    /// `blockDim.d`
    BlockDim(u8),
    /// `threadIdx.d`
    ThreadIdx(u8),
    /// An atom (index into [`Symbols::atoms`]).
    Atom(usize),
}

/// A nonlinear integer expression over the kernel's inputs.
#[derive(Clone, Debug, PartialEq)]
pub struct Atom {
    /// The expression (matched structurally).
    pub expr: Expr,
    /// The expression read through the locals holding values (matched
    /// too: `l / 2` after `int l = max(m, 100);` reads `max(n, 100) / 2`).
    pub read: Expr,
    /// Its shape.
    pub shape: AtomShape,
    /// How it prints: `n/16`.
    pub text: String,
}

/// The shape of an atom, over linear forms of inputs.
#[derive(Clone, Debug, PartialEq)]
pub enum AtomShape {
    /// `a / c` rounded toward zero (`c > 0`), or `a >> k` (`c = 2^k`,
    /// rounded down).
    Div {
        /// Dividend.
        a: LinExpr,
        /// Divisor.
        c: i128,
        /// Rounded down (a shift) rather than toward zero.
        floor: bool,
        /// The dividend is unsigned.
        unsigned: bool,
    },
    /// `a % c` (`c > 0`).
    Rem {
        /// Dividend.
        a: LinExpr,
        /// Divisor.
        c: i128,
        /// The dividend is unsigned.
        unsigned: bool,
    },
    /// `a & m` with a mask `m ≥ 0`.
    Mask {
        /// The mask.
        m: i128,
    },
    /// `a · b`.
    Product(LinExpr, LinExpr),
    /// `max(a, b)` (`max`) or `min(a, b)`.
    Extreme {
        /// The maximum rather than the minimum.
        max: bool,
        /// First operand.
        a: LinExpr,
        /// Second operand.
        b: LinExpr,
        /// Of an unsigned type.
        unsigned: bool,
        /// Each operand is an input parameter, a launch dimension or a
        /// constant: the atom's text names it exactly in a bound (see
        /// `bound::limit::extreme_value`).
        named: bool,
    },
}

/// The symbols of one kernel's analysis.
#[derive(Clone, Debug)]
pub struct Symbols {
    vars: u32,
    launch: LaunchFacts,
    /// Variables of each type, by id.
    types: Vec<Scalar>,
    /// Parameters and symbols, by variable id: `Some(true)` for one the kernel never
    /// assigns (an input), `Some(false)` for one it assigns.
    param_input: Vec<Option<bool>>,
    /// The atoms, in order of discovery.
    pub atoms: Vec<Atom>,
    /// Ranges (least, largest value) assumed of inputs, by variable (see
    /// [`Symbols::assume_range`]).
    assumed: BTreeMap<VarId, (Option<i128>, Option<i128>)>,
    /// The largest `gridDim` assumed along each dimension (see
    /// [`Symbols::assume_grid_at_most`]).
    grid_max: [Option<i128>; 3],
    /// The linear form of what each local holds (a copy of an input, or
    /// of a linear expression over inputs, assigned once before every
    /// read): reading the local is reading that form, so a chain of copies
    /// adds no symbols, forms or bases of its own.
    held: HashMap<VarId, LinExpr>,
}

const BUILTINS: u32 = 12;

impl Symbols {
    /// The symbols of a kernel analyzed under `launch`: every atom of its
    /// expressions is found here, once.
    pub fn new(k: &Kernel, launch: LaunchFacts) -> Symbols {
        let mut assigned = BTreeSet::new();
        super::deps::written(&k.body, &mut assigned);
        let mut s = Symbols {
            vars: k.vars.len() as u32,
            launch,
            types: k.vars.iter().map(|v| v.ty).collect(),
            param_input: k
                .vars
                .iter()
                .enumerate()
                .map(|(i, v)| v.kind.is_input().then(|| !assigned.contains(&i)))
                .collect(),
            atoms: Vec::new(),
            assumed: BTreeMap::new(),
            grid_max: [None; 3],
            held: HashMap::new(),
        };
        let held = s.held_values(k);
        let mut found = Vec::new();
        // An atom may read another (`max(n / 4, 10)` reads `n / 4`), found
        // after it: passes until one finds nothing new.
        loop {
            let before = found.len();
            crate::ir::visit_exprs(&k.body, &mut |e| {
                // A local read alone is a variable of the analysis already
                // (its value the atom it was assigned): no atom of its own.
                let local = matches!(e.kind, ExprKind::Var(_));
                if !local && s.atoms.len() + found.len() < MAX_ATOMS && !found.contains(e) {
                    let read = atoms::substitute(e, &held);
                    if let Some(shape) = s.atom_shape(&read) {
                        found.push(e.clone());
                        // A bound names a minimum or maximum over the
                        // inputs it reads, through the locals holding them.
                        let named = matches!(shape, AtomShape::Extreme { named: true, .. });
                        s.atoms.push(Atom {
                            expr: e.clone(),
                            text: s.expr_text(k, if named { &read } else { e }),
                            read,
                            shape,
                        });
                    }
                }
            });
            if found.len() == before {
                break;
            }
        }
        // After the atoms: a local may hold one (`int q = n / 4;`). A
        // constant stays a variable: the facts know its value already (and
        // a fixed launch's `blockDim.x * gridDim.x`, read as its own
        // symbol, keeps the strided loops' potentials in the range the LP
        // solutions are certified in).
        let linear: HashMap<VarId, LinExpr> = held
            .iter()
            .filter_map(|(&v, x)| Some((v, s.linearize(x, None)?)))
            .filter(|(_, l)| !l.is_constant())
            .collect();
        s.held = linear;
        s
    }

    /// Assumes input `v` lies between `min` and `max` (each when given):
    /// the analysis starts from it (`n ≥ 0` makes `(unsigned)n` linear) and
    /// checks whether a value's range is exceeded (whether an update may
    /// wrap around) under it. A bound found with the assumption holds only
    /// for inputs that satisfy it.
    pub fn assume_range(&mut self, v: VarId, min: Option<i128>, max: Option<i128>) {
        self.assumed.insert(v, (min, max));
    }

    /// Assumes `gridDim.d` is at most `max` (below the hardware's
    /// `2^31 − 1`), as [`Symbols::assume_range`] does for an input.
    pub fn assume_grid_at_most(&mut self, d: u8, max: i128) {
        self.grid_max[d as usize] = Some(max);
    }

    /// The upper bound assumed on variable `v`, if any.
    pub fn assumed_max(&self, v: VarId) -> Option<i128> {
        self.assumed.get(&v).and_then(|r| r.1)
    }

    /// The lower bound assumed on variable `v`, if any.
    pub fn assumed_min(&self, v: VarId) -> Option<i128> {
        self.assumed.get(&v).and_then(|r| r.0)
    }

    /// The facts `f ≥ 0` the assumptions on input `v` state (a bound
    /// beyond the linear domain's magnitudes is left out).
    pub fn assumed_facts(&self, v: VarId) -> Vec<LinExpr> {
        let x = LinExpr::var(self.var(v));
        let lo = self.assumed_min(v).map(|m| x.sub(&LinExpr::int(m)));
        let hi = self.assumed_max(v).map(|m| LinExpr::int(m).sub(&x));
        lo.into_iter()
            .chain(hi)
            .filter(|f| f.constant.num().abs() <= super::linear::MAX_MAGNITUDE)
            .collect()
    }

    /// The launch facts the symbols were made for.
    pub fn launch(&self) -> &LaunchFacts {
        &self.launch
    }

    /// Number of symbols.
    pub fn len(&self) -> u32 {
        self.vars + BUILTINS + self.atoms.len() as u32
    }

    /// Whether there are no symbols (never: the builtins are always there).
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The symbol of a variable.
    pub fn var(&self, v: VarId) -> Sym {
        v as Sym
    }

    /// The symbol of an atom.
    pub fn atom(&self, i: usize) -> Sym {
        self.vars + BUILTINS + i as u32
    }

    fn builtin_sym(&self, kind: u32, d: u8) -> Sym {
        self.vars + 3 * kind + d as u32
    }

    /// What a symbol stands for.
    pub fn kind(&self, s: Sym) -> SymKind {
        if s < self.vars {
            return SymKind::Var(s as VarId);
        }
        let b = s - self.vars;
        if b >= BUILTINS {
            return SymKind::Atom((b - BUILTINS) as usize);
        }
        let d = (b % 3) as u8;
        match b / 3 {
            0 => SymKind::BlockIdx(d),
            1 => SymKind::GridDim(d),
            2 => SymKind::BlockDim(d),
            _ => SymKind::ThreadIdx(d),
        }
    }

    /// A readable name: the variable's name, `blockIdx.x`, or the atom's
    /// expression.
    pub fn name(&self, k: &Kernel, s: Sym) -> String {
        let dim = |d: u8| ["x", "y", "z"][d as usize];
        match self.kind(s) {
            SymKind::Var(v) => k.vars[v].name.clone(),
            SymKind::BlockIdx(d) => format!("blockIdx.{}", dim(d)),
            SymKind::GridDim(d) => format!("gridDim.{}", dim(d)),
            SymKind::BlockDim(d) => format!("blockDim.{}", dim(d)),
            SymKind::ThreadIdx(d) => format!("threadIdx.{}", dim(d)),
            SymKind::Atom(i) => self.atoms[i].text.clone(),
        }
    }

    /// Whether `s` is a kernel input (a parameter the kernel never assigns,
    /// `gridDim`, `blockDim`) or an atom over inputs: its value is fixed for
    /// the whole launch.
    pub fn is_input(&self, s: Sym) -> bool {
        match self.kind(s) {
            SymKind::Var(v) => self.param_input[v] == Some(true),
            SymKind::GridDim(_) | SymKind::BlockDim(_) | SymKind::Atom(_) => true,
            SymKind::BlockIdx(_) | SymKind::ThreadIdx(_) => false,
        }
    }

    /// The facts that hold throughout a launch: launch dimensions are
    /// positive, `blockIdx` and `threadIdx` lie inside them, atoms are
    /// bounded by their definitions.
    pub fn launch_constraints(&self) -> Constraints {
        let mut c = self.builtin_constraints();
        // The atoms' definitions are read knowing the hardware's launch
        // limits too (a product of launch dimensions is at most 2^41).
        let mut limits = c.clone();
        for kind in 0..4 {
            for d in 0..3 {
                for f in self.range_facts(self.builtin_sym(kind, d)) {
                    limits.add_ge0(f);
                }
            }
        }
        for (i, a) in self.atoms.iter().enumerate() {
            let q = LinExpr::var(self.atom(i));
            let wraps_past = a.expr.ty.range().filter(|_| !a.expr.ty.is_signed());
            for f in atom_facts(&a.shape, &q, &limits, wraps_past.map(|r| r.1)) {
                limits.add_ge0(f.clone());
                c.add_ge0(f);
            }
        }
        c
    }

    /// The launch facts about the builtins alone.
    fn builtin_constraints(&self) -> Constraints {
        let mut c = Constraints::top();
        for d in 0..3u8 {
            let grid = self.builtin_lin(Builtin::GridDim(d));
            let block = self.builtin_lin(Builtin::BlockDim(d));
            c.add_ge0(grid.sub(&LinExpr::int(1)));
            if let Some(m) = self.grid_max[d as usize].filter(|_| !grid.is_constant()) {
                c.add_ge0(LinExpr::int(m).sub(&grid));
            }
            c.add_ge0(block.sub(&LinExpr::int(1)));
            let bi = self.builtin_lin(Builtin::BlockIdx(d));
            c.add_ge0(bi.clone());
            c.add_ge0(grid.sub(&bi).sub(&LinExpr::int(1)));
            let ti = self.builtin_lin(Builtin::ThreadIdx(d));
            c.add_ge0(ti.clone());
            c.add_ge0(block.sub(&ti).sub(&LinExpr::int(1)));
        }
        c
    }

    /// The linear form of a builtin (a constant when the launch fixes it).
    fn builtin_lin(&self, b: Builtin) -> LinExpr {
        let fixed = |dims: Option<Dims>, d: u8| dims.map(|x| x[d as usize]);
        let (known, sym) = match b {
            Builtin::ThreadIdx(d) => (
                fixed(self.launch.block, d).filter(|&n| n == 1).map(|_| 0),
                self.builtin_sym(3, d),
            ),
            Builtin::BlockIdx(d) => (
                fixed(self.launch.grid, d).filter(|&n| n == 1).map(|_| 0),
                self.builtin_sym(0, d),
            ),
            Builtin::GridDim(d) => (fixed(self.launch.grid, d), self.builtin_sym(1, d)),
            Builtin::BlockDim(d) => (fixed(self.launch.block, d), self.builtin_sym(2, d)),
            Builtin::WarpSize => (Some(self.launch.warp), 0),
        };
        match known {
            Some(n) => LinExpr::int(n as i128),
            None => LinExpr::var(sym),
        }
    }

    /// The thread-index coefficients of a linear form in a dependence
    /// state: `L = u + Σ c_d·threadIdx.d` with `u` the same in every active
    /// lane. `None` when some symbol's dependence is unknown.
    pub fn thread_coefs(&self, l: &LinExpr, st: &State) -> Option<[Rational; 3]> {
        let mut c = [Rational::ZERO; 3];
        for (&s, &a) in &l.coeffs {
            let dep = match self.kind(s) {
                SymKind::Var(v) => st[v],
                SymKind::ThreadIdx(d) if !self.launch.warp_uniform(d) => {
                    let mut k = [Coef::Known(0); 3];
                    k[d as usize] = Coef::Known(1);
                    Dep::Affine(k, Cong::exact(0))
                }
                _ => Dep::UNIFORM,
            };
            let (k, _) = dep.affine_parts()?;
            for d in 0..3 {
                match k[d] {
                    Coef::Known(x) => c[d] = c[d] + a * Rational::int(x as i128),
                    Coef::Unknown => return None,
                }
            }
        }
        Some(c)
    }

    /// Whether a linear form has the same value in every active lane.
    pub fn is_uniform(&self, l: &LinExpr, st: &State) -> bool {
        self.thread_coefs(l, st)
            .is_some_and(|c| c.iter().all(|x| x.is_zero()))
    }

    /// The lane-independent part of a linear form: `L − Σ c_d·threadIdx.d`,
    /// uniform in `st`. `None` when the thread dependence is unknown or a
    /// varying dimension is fixed to one thread (then `L` is uniform).
    pub fn uniform_part(&self, l: &LinExpr, st: &State) -> Option<LinExpr> {
        let c = self.thread_coefs(l, st)?;
        let mut u = l.clone();
        for (d, cd) in c.iter().enumerate() {
            if !cd.is_zero() {
                let t = self.builtin_lin(Builtin::ThreadIdx(d as u8));
                if t.is_constant() {
                    return None;
                }
                u = u.add_scaled(&t, -*cd);
            }
        }
        Some(u)
    }

    /// Facts about a variable that hold whatever was assigned to it: the
    /// range of its type where that is narrower than `int`, `x ≥ 0` for
    /// unsigned types.
    pub fn type_facts(&self, v: VarId) -> Vec<LinExpr> {
        let x = LinExpr::var(self.var(v));
        let ty = self.types[v];
        let Some((lo, hi)) = ty.range() else {
            return Vec::new();
        };
        let mut f = Vec::new();
        if lo == 0 || ty.size() < 4 {
            f.push(x.sub(&LinExpr::int(lo)));
        }
        if ty.size() < 4 {
            f.push(LinExpr::int(hi).sub(&x));
        }
        f
    }

    /// Whether a variable has an integer type.
    pub fn is_int_var(&self, v: VarId) -> bool {
        !self.types[v].is_float()
    }

    /// An upper (`upper`) or lower bound of symbol `s` at the kernel's start
    /// over the inputs, as a polynomial in input names: locals are zero,
    /// `blockIdx` ranges over the grid, atoms are bounded by their
    /// definitions. `None` for the thread index (not one value per warp).
    pub fn entry_bound(&self, k: &Kernel, s: Sym, upper: bool) -> Option<Poly> {
        match self.kind(s) {
            SymKind::Var(v) => Some(if self.param_input[v].is_some() {
                Poly::var(&k.vars[v].name)
            } else {
                Poly::zero()
            }),
            SymKind::GridDim(_) | SymKind::BlockDim(_) => Some(Poly::var(&self.name(k, s))),
            SymKind::BlockIdx(d) => Some(if upper {
                self.entry_poly(k, &self.builtin_lin(Builtin::GridDim(d)), true)? - Poly::from(1)
            } else {
                Poly::zero()
            }),
            // One value per warp only where whole warps share it.
            SymKind::ThreadIdx(d) if self.launch.warp_uniform(d) => Some(if upper {
                self.entry_poly(k, &self.builtin_lin(Builtin::BlockDim(d)), true)? - Poly::from(1)
            } else {
                Poly::zero()
            }),
            SymKind::ThreadIdx(_) => None,
            SymKind::Atom(i) => self.atom_bound(k, &self.atoms[i], upper),
        }
    }

    /// An upper (or lower) bound of a linear form at the kernel's start.
    pub fn entry_poly(&self, k: &Kernel, l: &LinExpr, upper: bool) -> Option<Poly> {
        let mut p = Poly::constant(l.constant);
        for (&s, &a) in &l.coeffs {
            let up = upper == (a > Rational::ZERO);
            p += self.entry_bound(k, s, up)?.scale(a);
        }
        Some(p)
    }

    fn atom_bound(&self, k: &Kernel, atom: &Atom, upper: bool) -> Option<Poly> {
        match &atom.shape {
            AtomShape::Div { a, c, floor, .. } => {
                // |a − c·q| ≤ c − 1 (q ≤ a/c when rounding down).
                let slack = if upper && *floor { 0 } else { c - 1 };
                let pa = self.entry_poly(k, a, upper)?;
                let shift = if upper { slack } else { -slack };
                Some((pa + Poly::from(Rational::int(shift))).scale(Rational::new(1, *c)))
            }
            AtomShape::Rem { c, unsigned, .. } => Some(Poly::from(Rational::int(if upper {
                c - 1
            } else if *unsigned {
                0
            } else {
                1 - c
            }))),
            AtomShape::Mask { m } => Some(Poly::from(Rational::int(if upper { *m } else { 0 }))),
            AtomShape::Product(a, b) => {
                let (ua, la) = (self.entry_poly(k, a, true)?, self.entry_poly(k, a, false)?);
                let (ub, lb) = (self.entry_poly(k, b, true)?, self.entry_poly(k, b, false)?);
                if ua == la && ub == lb {
                    // Both factors are inputs: the product is exact.
                    return Some(ua * ub);
                }
                // Factors that range over the grid (`blockIdx.x·blockDim.x`)
                // but are never negative: the product of the ends.
                let launch = self.builtin_constraints();
                (launch.entails_ge0(a) && launch.entails_ge0(b)).then(|| {
                    if upper {
                        ua * ub
                    } else {
                        la * lb
                    }
                })
            }
            // Over inputs alone: the atom itself, a derived input of the
            // bound (`max(n,64)`), exact both ways.
            AtomShape::Extreme { named: true, .. } => Some(Poly::var(&atom.text)),
            // Otherwise the side an operand bounds: the minimum is at most
            // either operand (a constant first), the maximum at least.
            AtomShape::Extreme { max, a, b, .. } if *max != upper => {
                let first = if a.is_constant() { a } else { b };
                self.entry_poly(k, first, upper)
            }
            AtomShape::Extreme { .. } => None,
        }
    }
}

/// The bounds of an integer-valued linear form (integer coefficients):
/// the rational bounds rounded inward.
pub fn int_bounds(c: &Constraints, e: &LinExpr) -> (Option<Rational>, Option<Rational>) {
    let (lo, hi) = if e.is_constant() {
        (Some(e.constant), Some(e.constant))
    } else {
        c.bounds(e)
    };
    let integral = e.coeffs.values().all(|x| x.is_integer()) && e.constant.is_integer();
    if !integral {
        return (lo, hi);
    }
    (
        lo.map(|l| Rational::int(l.ceil())),
        hi.map(|h| Rational::int(h.floor())),
    )
}

#[cfg(test)]
mod tests;
