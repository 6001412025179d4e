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

use std::collections::BTreeSet;

use super::congruence::Cong;
use super::deps::{Coef, Dep, LaunchFacts, State};
use super::linear::{Constraints, LinExpr, Sym};
use crate::cuda::ast::BinOp;
use crate::ir::{Builtin, Expr, ExprKind, Kernel, MathFn, Scalar, Unary, Value, VarId};
use crate::poly::{Poly, Rational};

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
        };
        let mut found = Vec::new();
        crate::ir::visit_exprs(&k.body, &mut |e| {
            if s.atoms.len() + found.len() < MAX_ATOMS && !found.contains(e) {
                if let Some(shape) = s.atom_shape(e) {
                    found.push(e.clone());
                    s.atoms.push(Atom {
                        expr: e.clone(),
                        text: s.expr_text(k, e),
                        shape,
                    });
                }
            }
        });
        s
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
        for (i, a) in self.atoms.iter().enumerate() {
            let q = LinExpr::var(self.atom(i));
            for f in atom_facts(&a.shape, &q, &c) {
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
        let fixed = |dims: Option<[u64; 3]>, d: u8| dims.map(|x| x[d as usize]);
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

    /// The linear form of an integer expression, per lane, or `None` when
    /// it has none. `ctx` (the facts holding where `e` is evaluated) lets
    /// unsigned differences and conversions be linear when they provably
    /// do not wrap.
    pub fn linearize(&self, e: &Expr, ctx: Option<&Constraints>) -> Option<LinExpr> {
        if e.ty.is_float() {
            return None;
        }
        if let Some(i) = self.atoms.iter().position(|a| a.expr == *e) {
            return Some(LinExpr::var(self.atom(i)));
        }
        let nonneg = |l: &LinExpr| {
            l.is_constant() && l.constant >= Rational::ZERO || ctx.is_some_and(|c| c.entails_ge0(l))
        };
        match &e.kind {
            ExprKind::Const(Value::I(c)) => Some(LinExpr::int(*c as i128)),
            ExprKind::Const(Value::F(_)) => None,
            ExprKind::Var(v) => Some(LinExpr::var(self.var(*v))),
            ExprKind::Builtin(b) => Some(self.builtin_lin(*b)),
            ExprKind::Unary(Unary::Neg, x) => {
                let l = self.linearize(x, ctx)?.neg();
                (e.ty.is_signed() || l.is_constant() && l.constant.is_zero()).then_some(l)
            }
            ExprKind::Binary(op, l, r) => {
                let a = self.linearize(l, ctx)?;
                let b = self.linearize(r, ctx)?;
                match op {
                    BinOp::Add => Some(a.add(&b)),
                    BinOp::Sub => {
                        let d = a.sub(&b);
                        (l.ty.is_signed() || nonneg(&d)).then_some(d)
                    }
                    BinOp::Mul if a.is_constant() => Some(b.scale(a.constant)),
                    BinOp::Mul if b.is_constant() => Some(a.scale(b.constant)),
                    BinOp::Shl if b.is_constant() && (0..31).contains(&b.constant.num()) => b
                        .constant
                        .is_integer()
                        .then(|| a.scale(Rational::int(1 << b.constant.num()))),
                    _ if a.is_constant() && b.is_constant() => {
                        fold_constants(*op, a.constant, b.constant, e.ty.is_signed())
                            .map(LinExpr::int)
                    }
                    _ => None,
                }
            }
            ExprKind::Convert { value, .. } => {
                if value.ty.is_float() || e.ty == Scalar::Bool {
                    return None;
                }
                let l = self.linearize(value, ctx)?;
                // A negative value converted to an unsigned type wraps.
                (e.ty.is_signed() || !value.ty.is_signed() || nonneg(&l)).then_some(l)
            }
            _ => None,
        }
    }

    /// The shape of `e` if it is an atom: a nonlinear integer expression
    /// over inputs whose linear operands are known.
    fn atom_shape(&self, e: &Expr) -> Option<AtomShape> {
        if e.ty.is_float() || !self.over_inputs(e) {
            return None;
        }
        let ExprKind::Binary(op, l, r) = &e.kind else {
            return None;
        };
        let a = self.linearize(l, None)?;
        let b = self.linearize(r, None)?;
        let unsigned = !l.ty.is_signed();
        let c = (b.is_constant() && b.constant.is_integer()).then(|| b.constant.num());
        match (op, c) {
            (BinOp::Div, Some(c)) if c > 0 && !a.is_constant() => Some(AtomShape::Div {
                a,
                c,
                floor: false,
                unsigned,
            }),
            (BinOp::Shr, Some(k)) if (0..31).contains(&k) && !a.is_constant() => {
                Some(AtomShape::Div {
                    a,
                    c: 1 << k,
                    floor: true,
                    unsigned,
                })
            }
            (BinOp::Rem, Some(c)) if c > 0 && !a.is_constant() => {
                Some(AtomShape::Rem { a, c, unsigned })
            }
            (BinOp::BitAnd, Some(m)) if m >= 0 && !a.is_constant() => Some(AtomShape::Mask { m }),
            (BinOp::Mul, _) if !a.is_constant() && !b.is_constant() => {
                Some(AtomShape::Product(a, b))
            }
            _ => None,
        }
    }

    /// Whether every leaf of `e` is a constant, an input parameter or a
    /// launch dimension, with no loads, calls or floating point.
    fn over_inputs(&self, e: &Expr) -> bool {
        if e.ty.is_float() {
            return false;
        }
        match &e.kind {
            ExprKind::Const(Value::I(_)) => true,
            ExprKind::Var(v) => self.param_input[*v] == Some(true),
            ExprKind::Builtin(b) => !matches!(b, Builtin::ThreadIdx(_)),
            ExprKind::Unary(_, x) | ExprKind::Convert { value: x, .. } => self.over_inputs(x),
            ExprKind::Binary(_, a, b) => self.over_inputs(a) && self.over_inputs(b),
            _ => false,
        }
    }

    fn expr_text(&self, k: &Kernel, e: &Expr) -> String {
        let dim = |d: &u8| ["x", "y", "z"][*d as usize];
        match &e.kind {
            ExprKind::Const(v) => format!("{}", v.as_i64()),
            ExprKind::Var(v) => k.vars[*v].name.clone(),
            ExprKind::Builtin(b) => match b {
                Builtin::ThreadIdx(d) => format!("threadIdx.{}", dim(d)),
                Builtin::BlockIdx(d) => format!("blockIdx.{}", dim(d)),
                Builtin::BlockDim(d) => format!("blockDim.{}", dim(d)),
                Builtin::GridDim(d) => format!("gridDim.{}", dim(d)),
                Builtin::WarpSize => "warpSize".into(),
            },
            ExprKind::Convert { value, .. } => self.expr_text(k, value),
            ExprKind::Unary(Unary::Neg, x) => format!("-{}", self.expr_text(k, x)),
            ExprKind::Binary(op, a, b) => {
                let side = |x: &Expr| match x.kind {
                    ExprKind::Binary(..) => format!("({})", self.expr_text(k, x)),
                    _ => self.expr_text(k, x),
                };
                format!("{}{}{}", side(a), op.symbol(), side(b))
            }
            _ => "…".into(),
        }
    }

    /// Facts `f ≥ 0` holding in every lane where `cond` is true (`negate`:
    /// false): the linear comparisons among its conjuncts.
    pub fn cond_facts(&self, cond: &Expr, ctx: Option<&Constraints>, negate: bool) -> Vec<LinExpr> {
        match (&cond.kind, negate) {
            (ExprKind::And(a, b), false) | (ExprKind::Or(a, b), true) => {
                let mut f = self.cond_facts(a, ctx, negate);
                f.extend(self.cond_facts(b, ctx, negate));
                f
            }
            (ExprKind::Unary(Unary::Not, x), n) => self.cond_facts(x, ctx, !n),
            (ExprKind::Convert { value, .. }, n) if !value.ty.is_float() => {
                self.cond_facts(value, ctx, n)
            }
            (ExprKind::Binary(op, l, r), n) if op.is_comparison() => {
                if l.ty.is_float() {
                    return Vec::new();
                }
                let (Some(a), Some(b)) = (self.linearize(l, ctx), self.linearize(r, ctx)) else {
                    return Vec::new();
                };
                let op = if n { negated(*op) } else { *op };
                let one = LinExpr::int(1);
                match op {
                    BinOp::Lt => vec![b.sub(&a).sub(&one)],
                    BinOp::Le => vec![b.sub(&a)],
                    BinOp::Gt => vec![a.sub(&b).sub(&one)],
                    BinOp::Ge => vec![a.sub(&b)],
                    BinOp::Eq => vec![a.sub(&b), b.sub(&a)],
                    _ => Vec::new(),
                }
            }
            // `if (x)` / `if (!x)` on an integer: x ≠ 0 / x = 0.
            (_, true) if !cond.ty.is_float() => match self.linearize(cond, ctx) {
                Some(l) => vec![l.clone(), l.neg()],
                None => Vec::new(),
            },
            _ => Vec::new(),
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
            SymKind::Atom(i) => self.atom_bound(k, &self.atoms[i].shape, upper),
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

    fn atom_bound(&self, k: &Kernel, shape: &AtomShape, upper: bool) -> Option<Poly> {
        match shape {
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
        }
    }
}

/// The symbol standing for an assigned variable's new value in an
/// [`Update::Relation`].
pub const NEW: Sym = u32::MAX - 1;

/// What an assignment `x := e` tells about the new value of `x`, over the
/// state before it.
#[derive(Clone, Debug, PartialEq)]
pub enum Update {
    /// The new value is this linear form.
    Linear(LinExpr),
    /// Facts `f ≥ 0` relating the new value ([`NEW`]) to the state before:
    /// `2·NEW ≤ s ≤ 2·NEW + 1` for `s >>= 1`, the hull of both sides for
    /// `c ? a : b`, at least the range of the variable's type.
    Relation(Vec<LinExpr>),
}

impl Symbols {
    /// What `var := value` tells about the new value, given the facts `ctx`
    /// before it.
    ///
    /// The variable's type is modelled: a value that may not fit an
    /// unsigned type or one narrower than `int` (where it would wrap
    /// around, as `unsigned char c = c + 100` does past 255) tells only
    /// the type's range. Signed `int` and wider are assumed not to
    /// overflow (undefined behaviour, which the simulator reports).
    pub fn update(&self, var: VarId, value: &Expr, ctx: &Constraints) -> Update {
        if !self.is_int_var(var) {
            return Update::Relation(Vec::new());
        }
        let new = LinExpr::var(NEW);
        let typed: Vec<LinExpr> = self
            .type_facts(var)
            .into_iter()
            .map(|f| f.substitute(self.var(var), &new))
            .collect();
        let ty = self.types[var];
        match self.unwrapped_update(value, ctx) {
            Update::Linear(l) if self.fits(ty, &l, ctx, &[]) => Update::Linear(l),
            Update::Linear(_) => Update::Relation(typed),
            Update::Relation(derived) => {
                // A quotient, remainder or mask of a value of a type the
                // variable's holds stays in its range.
                let within = matches!(value.kind, ExprKind::Binary(..))
                    && matches!((value.ty.range(), ty.range()),
                        (Some((a, b)), Some((lo, hi))) if lo <= a && b <= hi);
                if derived.is_empty() || within || self.fits(ty, &new, ctx, &derived) {
                    Update::Relation(typed.into_iter().chain(derived).collect())
                } else {
                    Update::Relation(typed)
                }
            }
        }
    }

    /// Whether `l` (over the state before an assignment, or [`NEW`] with
    /// the facts `about_new`) provably lies in the range of `ty` under
    /// `ctx`, the hardware's launch limits and the ranges of the variables'
    /// types; always for a type that cannot wrap (signed `int` and wider:
    /// overflow is undefined) or is not an integer.
    pub fn fits(&self, ty: Scalar, l: &LinExpr, ctx: &Constraints, about_new: &[LinExpr]) -> bool {
        let Some((lo, hi)) = ty.range() else {
            return true;
        };
        if ty.is_signed() && ty.size() >= 4 {
            return true;
        }
        let mut cx = ctx.clone();
        for f in about_new {
            cx.add_ge0(f.clone());
        }
        let syms: BTreeSet<Sym> = l
            .vars()
            .chain(about_new.iter().flat_map(|f| f.vars()))
            .chain(ctx.vars())
            .filter(|&s| s < self.len())
            .collect();
        for s in syms {
            for f in self.range_facts(s) {
                cx.add_ge0(f);
            }
        }
        let (lo, hi) = (
            LinExpr::constant(Rational::int(lo)),
            LinExpr::constant(Rational::int(hi)),
        );
        cx.entails_ge0(&l.sub(&lo)) && cx.entails_ge0(&hi.sub(l))
    }

    /// The values symbol `s` can take whatever the program does: its
    /// type's range, or the hardware's launch limits (a block of at most
    /// 1024 threads, a grid of at most `2^31 − 1` blocks a side).
    fn range_facts(&self, s: Sym) -> Vec<LinExpr> {
        let x = LinExpr::var(s);
        let between = |lo: i128, hi: i128| {
            vec![
                x.sub(&LinExpr::constant(Rational::int(lo))),
                LinExpr::constant(Rational::int(hi)).sub(&x),
            ]
        };
        match self.kind(s) {
            SymKind::Var(v) => match self.types[v].range() {
                Some((lo, hi)) => between(lo, hi),
                None => Vec::new(),
            },
            SymKind::BlockDim(_) => between(1, 1024),
            SymKind::ThreadIdx(_) => between(0, 1023),
            SymKind::GridDim(_) => between(1, i32::MAX as i128),
            SymKind::BlockIdx(_) => between(0, i32::MAX as i128 - 1),
            SymKind::Atom(_) => Vec::new(),
        }
    }

    /// What `var := value` tells about the new value in unbounded integer
    /// arithmetic: a linear form when there is one, else facts about
    /// [`NEW`].
    pub fn unwrapped_update(&self, value: &Expr, ctx: &Constraints) -> Update {
        let new = LinExpr::var(NEW);
        let mut facts: Vec<LinExpr> = Vec::new();
        if let Some(l) = self.linearize(value, Some(ctx)) {
            return Update::Linear(l);
        }
        let lin = |e: &Expr| self.linearize(e, Some(ctx));
        match &value.kind {
            ExprKind::Select(c, a, b) => {
                if let (Some(la), Some(lb)) = (lin(a), lin(b)) {
                    // Each side under its outcome of the condition.
                    let side = |l: &LinExpr, taken: bool| {
                        let mut cx = ctx.clone();
                        for f in self.cond_facts(c, Some(ctx), !taken) {
                            cx.add_ge0(f);
                        }
                        cx.add_eq0(new.sub(l));
                        cx
                    };
                    let (ca, cb) = (side(&la, true), side(&lb, false));
                    facts.extend(ca.join(&cb).facts().iter().cloned());
                }
            }
            ExprKind::Call(f @ (MathFn::Min | MathFn::Max), args) if args.len() == 2 => {
                if let (Some(la), Some(lb)) = (lin(&args[0]), lin(&args[1])) {
                    let (x, y) = if *f == MathFn::Min {
                        (la.sub(&new), lb.sub(&new))
                    } else {
                        (new.sub(&la), new.sub(&lb))
                    };
                    facts.push(x);
                    facts.push(y);
                }
            }
            ExprKind::Binary(op, a, b) => {
                let (Some(la), Some(m)) = (
                    lin(a),
                    lin(b).filter(|l| l.is_constant() && l.constant.is_integer()),
                ) else {
                    return Update::Relation(facts);
                };
                let m = m.constant;
                let nonneg = !a.ty.is_signed() || ctx.entails_ge0(&la);
                let one = Rational::ONE;
                match op {
                    // c·NEW ≤ a ≤ c·NEW + c − 1 (a ≥ 0 or rounding down);
                    // |a − c·NEW| ≤ c − 1 otherwise.
                    BinOp::Div | BinOp::Shr if m > Rational::ZERO || *op == BinOp::Shr => {
                        let c = if *op == BinOp::Shr {
                            if !(0..31).contains(&m.num()) {
                                return Update::Relation(facts);
                            }
                            Rational::int(1 << m.num())
                        } else {
                            m
                        };
                        let cq = new.scale(c);
                        let slack = LinExpr::constant(c - one);
                        facts.push(slack.add(&cq).sub(&la));
                        if nonneg || *op == BinOp::Shr {
                            facts.push(la.sub(&cq));
                        } else {
                            facts.push(slack.add(&la).sub(&cq));
                        }
                    }
                    BinOp::Rem if m > Rational::ZERO => {
                        facts.push(LinExpr::constant(m - one).sub(&new));
                        if nonneg {
                            facts.push(new.clone());
                            facts.push(la.sub(&new));
                        } else {
                            facts.push(new.add(&LinExpr::constant(m - one)));
                        }
                    }
                    BinOp::BitAnd if m >= Rational::ZERO => {
                        facts.push(new.clone());
                        facts.push(LinExpr::constant(m).sub(&new));
                        if nonneg {
                            facts.push(la.sub(&new));
                        }
                    }
                    _ => {}
                }
            }
            _ => {}
        }
        Update::Relation(facts)
    }
}

/// The negation of a comparison.
fn negated(op: BinOp) -> BinOp {
    match op {
        BinOp::Lt => BinOp::Ge,
        BinOp::Le => BinOp::Gt,
        BinOp::Gt => BinOp::Le,
        BinOp::Ge => BinOp::Lt,
        BinOp::Eq => BinOp::Ne,
        BinOp::Ne => BinOp::Eq,
        other => other,
    }
}

/// Facts `f ≥ 0` bounding atom `q` by its definition, given the facts
/// `c` known about its operands.
fn atom_facts(shape: &AtomShape, q: &LinExpr, c: &Constraints) -> Vec<LinExpr> {
    match shape {
        AtomShape::Div {
            a,
            c,
            floor,
            unsigned,
        } => {
            let cq = q.scale(Rational::int(*c));
            let slack = LinExpr::int(c - 1);
            let mut f = vec![
                // a − c·q ≤ c − 1 and c·q − a ≤ c − 1
                slack.add(&cq).sub(a),
                slack.add(a).sub(&cq),
            ];
            if *floor || *unsigned {
                // Rounded down (or a nonnegative dividend): c·q ≤ a.
                f.push(a.sub(&cq));
            }
            if *unsigned {
                f.push(q.clone());
            }
            f
        }
        AtomShape::Rem { c, unsigned, .. } => {
            let top = LinExpr::int(c - 1).sub(q);
            let bottom = if *unsigned {
                q.clone()
            } else {
                q.add(&LinExpr::int(c - 1))
            };
            vec![top, bottom]
        }
        AtomShape::Mask { m } => vec![q.clone(), LinExpr::int(*m).sub(q)],
        AtomShape::Product(a, b) => {
            // McCormick: a ≥ la ≥ 0 and b ≥ lb ≥ 0 give
            // q = a·b ≥ la·b + lb·a − la·lb.
            match (int_bounds(c, a).0, int_bounds(c, b).0) {
                (Some(la), Some(lb)) if la >= Rational::ZERO && lb >= Rational::ZERO => {
                    vec![q
                        .sub(&b.scale(la))
                        .sub(&a.scale(lb))
                        .add(&LinExpr::constant(la * lb))]
                }
                _ => Vec::new(),
            }
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

/// `a op b` for integer constants with C semantics (division and `%`
/// toward zero), where the operator is not linear; `None` when undefined,
/// or for negative operands of an unsigned or bitwise operation.
fn fold_constants(op: BinOp, a: Rational, b: Rational, signed: bool) -> Option<i128> {
    if !a.is_integer() || !b.is_integer() {
        return None;
    }
    let (x, y) = (a.num(), b.num());
    let both_nonneg = x >= 0 && y >= 0;
    if !signed && !both_nonneg {
        return None;
    }
    match op {
        BinOp::Div if y != 0 => Some(x / y),
        BinOp::Rem if y != 0 => Some(x % y),
        BinOp::Shr if (0..31).contains(&y) && x >= 0 => Some(x >> y),
        BinOp::BitAnd if both_nonneg => Some(x & y),
        BinOp::BitOr if both_nonneg => Some(x | y),
        BinOp::BitXor if both_nonneg => Some(x ^ y),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cuda::parse::parse_source;
    use crate::ir::lower::lower_kernel;
    use crate::source::SourceFile;

    fn kernel(src: &str) -> Kernel {
        let f = parse_source(SourceFile::new("t.cu", src));
        lower_kernel(&f, "k").unwrap()
    }

    fn launch(block: Option<[u64; 3]>) -> LaunchFacts {
        LaunchFacts {
            block,
            grid: None,
            warp: 32,
        }
    }

    /// The value of every assignment to `name`, in order.
    fn values<'k>(k: &'k Kernel, name: &str) -> Vec<&'k Expr> {
        let v = k.vars.iter().position(|x| x.name == name).unwrap();
        let mut out = Vec::new();
        crate::ir::visit_stmts(&k.body, &mut |s| {
            if let crate::ir::Stmt::Assign { var, value, .. } = s {
                if *var == v {
                    out.push(value);
                }
            }
        });
        out
    }

    #[test]
    fn atoms_and_their_facts() {
        let k = kernel(
            "__global__ void k(int *a, int n, int m) { int q = n / 16; int p = n * m; int r = n % 4; a[0] = q + p + r; }",
        );
        let s = Symbols::new(&k, launch(Some([64, 1, 1])));
        let texts: Vec<&str> = s.atoms.iter().map(|a| a.text.as_str()).collect();
        assert_eq!(texts, vec!["n/16", "n*m", "n%4"]);
        let c = s.launch_constraints();
        let q = LinExpr::var(s.atom(0));
        let n = LinExpr::var(s.var(k.vars.iter().position(|v| v.name == "n").unwrap()));
        // 16·q within 15 of n.
        assert!(c.entails_ge0(&n.add(&LinExpr::int(15)).sub(&q.scale(Rational::int(16)))));
        assert!(c.entails_ge0(&q.scale(Rational::int(16)).sub(&n).add(&LinExpr::int(15))));
        // The remainder is within ±3.
        let r = LinExpr::var(s.atom(2));
        assert_eq!(
            c.bounds(&r),
            (Some(Rational::int(-3)), Some(Rational::int(3)))
        );
        // Entry bounds of n/16 over the inputs: (n ± 15)/16.
        let up = s.entry_bound(&k, s.atom(0), true).unwrap();
        assert_eq!(up.to_string(), "1/16·n + 15/16");
        // blockDim is a constant for a fixed block.
        assert_eq!(s.builtin_lin(Builtin::BlockDim(0)), LinExpr::int(64));
    }

    #[test]
    fn unsigned_wrap_needs_a_proof() {
        let k = kernel(
            "__global__ void k(int *a, unsigned int n, unsigned int i) { unsigned int d = n - i; int e = (int)n - 1; a[0] = d + e; }",
        );
        let s = Symbols::new(&k, launch(None));
        let d = values(&k, "d")[0];
        assert_eq!(s.linearize(d, Some(&Constraints::top())), None);
        let mut ctx = Constraints::top();
        let (n, i) = (
            LinExpr::var(s.var(k.vars.iter().position(|v| v.name == "n").unwrap())),
            LinExpr::var(s.var(k.vars.iter().position(|v| v.name == "i").unwrap())),
        );
        ctx.add_ge0(n.sub(&i));
        assert_eq!(s.linearize(d, Some(&ctx)), Some(n.sub(&i)));
        // A signed difference is linear anyway (no overflow assumed).
        assert!(s.linearize(values(&k, "e")[0], None).is_some());
    }

    #[test]
    fn updates_relate_new_and_old_values() {
        let k = kernel(
            "__global__ void k(int *a, unsigned int s, int x, int y) { s = s >> 1; x = min(x, y); a[0] = s + x; }",
        );
        let sy = Symbols::new(&k, launch(None));
        let sv = k.vars.iter().position(|v| v.name == "s").unwrap();
        let Update::Relation(facts) = sy.update(sv, values(&k, "s")[0], &Constraints::top()) else {
            panic!("a shift is a relation")
        };
        // 2·NEW ≤ s ≤ 2·NEW + 1, NEW ≥ 0: with s ≥ 1, NEW − s ≤ −1.
        let mut c = Constraints::top();
        for f in facts {
            c.add_ge0(f);
        }
        let s_lin = LinExpr::var(sy.var(sv));
        c.add_ge0(s_lin.sub(&LinExpr::int(1)));
        assert_eq!(
            int_bounds(&c, &LinExpr::var(NEW).sub(&s_lin)).1,
            Some(Rational::int(-1))
        );
        let xv = k.vars.iter().position(|v| v.name == "x").unwrap();
        let Update::Relation(facts) = sy.update(xv, values(&k, "x")[0], &Constraints::top()) else {
            panic!("min is a relation")
        };
        assert!(facts.contains(&LinExpr::var(sy.var(xv)).sub(&LinExpr::var(NEW))));
    }

    #[test]
    fn conditions_give_per_lane_facts() {
        let k = kernel(
            "__global__ void k(int *a, int n) { int i = threadIdx.x; int f = 0; if (i < n && !(i >= 8) && !f) { a[i] = 0; } }",
        );
        let s = Symbols::new(&k, launch(Some([64, 1, 1])));
        let mut cond = None;
        crate::ir::visit_stmts(&k.body, &mut |st| {
            if let crate::ir::Stmt::If { cond: c, .. } = st {
                cond = Some(c);
            }
        });
        let facts = s.cond_facts(cond.unwrap(), None, false);
        let text: Vec<String> = facts
            .iter()
            .map(|f| f.to_string_with(|x| s.name(&k, x)))
            .collect();
        assert_eq!(text, vec!["n - i - 1", "-i + 7", "f", "-f"]);
        // Negated, a conjunction says nothing.
        assert!(s.cond_facts(cond.unwrap(), None, true).is_empty());
    }
}
