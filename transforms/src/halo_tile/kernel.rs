//! What the window recognizers know of a kernel: its fixed `int` values
//! (scalar parameters never assigned, top-level local constants and
//! `const int` copies of fixed values), and bounds on a value read from
//! a comparison with one of them.

use std::collections::{BTreeMap, BTreeSet};

use copper::cuda::ast::{BaseType, BinOp, Expr, ExprKind, Function, Init, StmtKind, UnOp};

use crate::ast_util::equiv_expr;
use crate::coop_load::signed_value;

/// A bound `op e` on an `int` value, `e` an `int` the same in every
/// thread for the whole kernel.
pub(crate) type Atom = (BinOp, Expr);

/// What the recognizer knows of the kernel.
pub(crate) struct Kernel<'f> {
    /// The kernel.
    pub(crate) f: &'f Function,
    /// Scalar parameters never assigned nor redeclared, and the local
    /// constants of [`Kernel::consts`].
    pub(crate) fixed: BTreeSet<String>,
    /// The kernel's top-level `const int` locals with constant values,
    /// each with the position of its declaration and its value.
    pub(crate) consts: BTreeMap<String, (usize, i64)>,
    /// The kernel's top-level `const int` locals whose value is a fixed
    /// `int` but not a constant (`const int W = width;`), each with the
    /// position of its declaration.
    pub(crate) aliases: BTreeMap<String, usize>,
}

/// The value of a constant integer expression that may be negative
/// (`-R`, `2 * R`), the local constants `consts` included.
pub(crate) fn value(e: &Expr, consts: &BTreeMap<String, (usize, i64)>) -> Option<i64> {
    match &e.kind {
        ExprKind::Ident(n) => consts.get(n).map(|&(_, v)| v),
        ExprKind::Unary(UnOp::Neg, x) => value(x, consts)?.checked_neg(),
        ExprKind::Binary(op @ (BinOp::Add | BinOp::Sub | BinOp::Mul), a, b) => {
            let (x, y) = (value(a, consts)?, value(b, consts)?);
            match op {
                BinOp::Add => x.checked_add(y),
                BinOp::Sub => x.checked_sub(y),
                _ => x.checked_mul(y),
            }
        }
        _ => signed_value(e),
    }
}

/// The top-level `const int R = 3;` (or `constexpr`) locals of `f` whose
/// value is a constant (earlier ones included), never redeclared.
fn local_consts(f: &Function) -> BTreeMap<String, (usize, i64)> {
    let redeclared = crate::tiled_shared::redeclared(f);
    let mut found = BTreeMap::new();
    for (at, s) in f.body.iter().enumerate() {
        let StmtKind::Decl(ds) = &s.kind else {
            continue;
        };
        for d in ds {
            let int_const = (d.ty.is_const || d.is_constexpr)
                && d.ty.base == BaseType::Int
                && !d.ty.is_pointer()
                && d.dims.is_empty()
                && !redeclared.contains(&d.name);
            if let (true, Some(Init::Expr(e))) = (int_const, &d.init) {
                if let Some(v) = value(e, &found).filter(|v| i32::try_from(*v).is_ok()) {
                    found.insert(d.name.clone(), (at, v));
                }
            }
        }
    }
    found
}

impl<'f> Kernel<'f> {
    /// What the recognizer knows of kernel `f` whose scalar parameters
    /// never assigned nor redeclared are `fixed`: its local constants and
    /// the top-level `const int` copies of fixed `int` values.
    pub(crate) fn new(f: &'f Function, fixed: BTreeSet<String>) -> Self {
        let mut k = Kernel {
            f,
            fixed,
            consts: local_consts(f),
            aliases: BTreeMap::new(),
        };
        let redeclared = crate::tiled_shared::redeclared(f);
        for (at, s) in f.body.iter().enumerate() {
            let StmtKind::Decl(ds) = &s.kind else {
                continue;
            };
            for d in ds {
                let alias = d.ty.is_const
                    && d.ty.base == BaseType::Int
                    && !d.ty.is_pointer()
                    && d.dims.is_empty()
                    && !redeclared.contains(&d.name)
                    && !k.consts.contains_key(&d.name);
                if let (true, Some(Init::Expr(e))) = (alias, &d.init) {
                    // Earlier copies count: they are declared before `at`.
                    if k.int_operand(e) {
                        k.aliases.insert(d.name.clone(), at);
                    }
                }
            }
        }
        k
    }

    /// The kernel as seen before top-level statement `at`: the local
    /// constants and copies declared earlier count as fixed names, the
    /// others not.
    pub(crate) fn before(&self, at: usize) -> Kernel<'_> {
        let consts: BTreeMap<String, (usize, i64)> = self
            .consts
            .iter()
            .filter(|(_, &(p, _))| p < at)
            .map(|(n, v)| (n.clone(), *v))
            .collect();
        let aliases: BTreeMap<String, usize> = self
            .aliases
            .iter()
            .filter(|(_, &p)| p < at)
            .map(|(n, p)| (n.clone(), *p))
            .collect();
        let mut fixed = self.fixed.clone();
        fixed.extend(consts.keys().cloned());
        fixed.extend(aliases.keys().cloned());
        Kernel {
            f: self.f,
            fixed,
            consts,
            aliases,
        }
    }

    /// Where the local constant or copy `name` is declared (its top-level
    /// statement), `None` for a parameter or another name.
    pub(crate) fn declared_at(&self, name: &str) -> Option<usize> {
        self.consts
            .get(name)
            .map(|&(p, _)| p)
            .or_else(|| self.aliases.get(name).copied())
    }

    /// Whether `e` is an `int` value the same in every thread for the
    /// whole kernel: an `int` literal, a fixed `int` parameter, a local
    /// constant or a `const int` copy of one of those, or sums,
    /// differences and products of them.
    pub(crate) fn int_operand(&self, e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Int { value, text } => {
                *value <= i32::MAX as u64 && !text.contains(['u', 'U', 'l', 'L'])
            }
            ExprKind::Ident(n) => {
                self.consts.contains_key(n)
                    || self.aliases.contains_key(n)
                    || (self.fixed.contains(n)
                        && self.f.params.iter().any(|p| {
                            &p.name == n && !p.ty.is_pointer() && p.ty.base == BaseType::Int
                        }))
            }
            ExprKind::Unary(UnOp::Neg, x) => self.int_operand(x),
            ExprKind::Binary(BinOp::Add | BinOp::Sub | BinOp::Mul, a, b) => {
                self.int_operand(a) && self.int_operand(b)
            }
            _ => false,
        }
    }

    /// `x op e` (or `e op' x`) as the bound `op e` on `x`.
    pub(crate) fn bound_on(&self, atom: &Expr, x: &Expr) -> Option<Atom> {
        let ExprKind::Binary(op, a, b) = &atom.kind else {
            return None;
        };
        let flipped = match op {
            BinOp::Lt => BinOp::Gt,
            BinOp::Le => BinOp::Ge,
            BinOp::Gt => BinOp::Lt,
            BinOp::Ge => BinOp::Le,
            _ => return None,
        };
        if equiv_expr(a, x) && self.int_operand(b) {
            Some((*op, (**b).clone()))
        } else if equiv_expr(b, x) && self.int_operand(a) {
            Some((flipped, (**a).clone()))
        } else {
            None
        }
    }
}
