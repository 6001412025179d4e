//! What a window's reads make of a position along one axis: the position
//! itself, a local copy of it, or a clamp of it with `min`, `max` or `?:`
//! against fixed `int`s ([`Key`]), and the axis of an offset loop whose
//! reads' indices are read as keys ([`Along`]).

use std::collections::BTreeSet;

use copper::cuda::ast::{BaseType, BinOp, Expr, ExprKind, Init, Stmt, StmtKind, UnOp};

use super::kernel::Kernel;
use crate::ast_util::{self, bin, equiv_expr, ident};
use crate::tiled_shared::redeclared;

/// What a read makes of a position along one axis: the position itself,
/// or a clamp of it (`min(max(p, 0), h - 1)`).
#[derive(Clone)]
pub(crate) enum Key {
    /// The position as it is.
    Position,
    /// The position, read through an index the original writes as an
    /// offset from the thread's own (`idx - w` with `idx = y * w + x`):
    /// the tile computes `Y * w + X` in `long long`, where it is the
    /// number the original computes without overflow.
    Offset,
    /// `call(inner, bound)` (`key_first`) or `call(bound, inner)`, `call`
    /// being `min` or `max` and `bound` a fixed `int`.
    Clamp {
        /// `min` or `max`.
        call: String,
        /// The key clamped.
        inner: Box<Key>,
        /// The fixed bound.
        bound: Expr,
        /// Whether the key is the first argument.
        key_first: bool,
    },
    /// `l op r ? then : els`, each of `l`, `r`, `then` and `els` a key or
    /// a fixed `int` (`xx < 0 ? 0 : xx`: a clamp written with `?:`, or
    /// with `if`s on a local, [`super::normalize`]): a function of the
    /// position all the same.
    Select {
        /// The comparison's operands and operator.
        cond: (Box<Key>, BinOp, Box<Key>),
        /// The value when the comparison holds.
        then: Box<Key>,
        /// The value when it does not.
        els: Box<Key>,
    },
    /// A fixed `int`, as an operand of a [`Key::Select`] only.
    Fixed(Expr),
}

impl Key {
    /// Whether the key is of a read written out (an offset, perhaps
    /// clamped), not of an offset loop's position.
    pub(crate) fn written(&self) -> bool {
        match self {
            Key::Offset => true,
            Key::Position | Key::Fixed(_) => false,
            Key::Clamp { inner, .. } => inner.written(),
            Key::Select { cond, then, els } => {
                cond.0.written() || cond.2.written() || then.written() || els.written()
            }
        }
    }

    /// The key of position `p`.
    pub(crate) fn at(&self, p: Expr) -> Expr {
        match self {
            Key::Position | Key::Offset => p,
            Key::Clamp {
                call,
                inner,
                bound,
                key_first,
            } => {
                let k = inner.at(p);
                let args = if *key_first {
                    vec![k, bound.clone()]
                } else {
                    vec![bound.clone(), k]
                };
                ast_util::expr(ExprKind::Call(call.clone(), args))
            }
            Key::Select { cond, then, els } => ast_util::expr(ExprKind::Cond(
                Box::new(bin(cond.1, cond.0.at(p.clone()), cond.2.at(p.clone()))),
                Box::new(then.at(p.clone())),
                Box::new(els.at(p)),
            )),
            Key::Fixed(e) => e.clone(),
        }
    }
}

/// One axis while it is being recognized: the thread index, the loop
/// counter and the locals that hold a key of the position.
pub(crate) struct Along<'a> {
    /// The thread's global index along the axis (`y`).
    pub(crate) index: &'a str,
    /// The top-level statement that declares the index.
    pub(crate) declared: usize,
    /// The offset loop's counter (`dy`).
    pub(crate) counter: String,
    /// Locals holding a key of the position (`int yy = y + dy;`).
    pub(crate) copies: Vec<(String, Key)>,
}

impl<'a> Along<'a> {
    /// The axis of thread index `index` (declared at top-level statement
    /// `declared`) and loop counter `counter`, with those of the `int`
    /// locals `locals` (never assigned, with their values) that hold a
    /// key of the position.
    pub(crate) fn new(
        k: &Kernel,
        (declared, index): (usize, &'a str),
        counter: &str,
        locals: &[(String, Expr)],
    ) -> Self {
        let mut a = Along {
            index,
            declared,
            counter: counter.to_string(),
            copies: Vec::new(),
        };
        for (name, e) in locals {
            if let Some(key) = a.key(k, e) {
                a.copies.push((name.clone(), key));
            }
        }
        a
    }

    /// `y + dy`.
    pub(crate) fn position(&self) -> Expr {
        bin(BinOp::Add, ident(self.index), ident(&self.counter))
    }

    /// The position and the locals equal to it.
    pub(crate) fn positions(&self) -> Vec<Expr> {
        std::iter::once(self.position())
            .chain(
                self.copies
                    .iter()
                    .filter(|(_, k)| matches!(k, Key::Position))
                    .map(|(c, _)| ident(c)),
            )
            .collect()
    }

    /// The key `e` makes of the position, if it is one.
    pub(crate) fn key(&self, k: &Kernel, e: &Expr) -> Option<Key> {
        if equiv_expr(e, &self.position()) {
            return Some(Key::Position);
        }
        match &e.kind {
            ExprKind::Ident(n) => self
                .copies
                .iter()
                .find(|(c, _)| c == n)
                .map(|(_, key)| key.clone()),
            ExprKind::Call(call, args) if call == "min" || call == "max" => {
                let [a, b] = args.as_slice() else {
                    return None;
                };
                let clamp = |inner: Key, bound: &Expr, key_first: bool| Key::Clamp {
                    call: call.clone(),
                    inner: Box::new(inner),
                    bound: bound.clone(),
                    key_first,
                };
                match (self.key(k, a), self.key(k, b)) {
                    (Some(inner), None) if k.int_operand(b) => Some(clamp(inner, b, true)),
                    (None, Some(inner)) if k.int_operand(a) => Some(clamp(inner, a, false)),
                    _ => None,
                }
            }
            ExprKind::Cond(c, then, els) => {
                let ExprKind::Binary(
                    op @ (BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge | BinOp::Eq | BinOp::Ne),
                    l,
                    r,
                ) = &c.kind
                else {
                    return None;
                };
                let operand = |e: &Expr| {
                    self.key(k, e)
                        .or_else(|| k.int_operand(e).then(|| Key::Fixed(e.clone())))
                        .map(Box::new)
                };
                Some(Key::Select {
                    cond: (operand(l)?, *op, operand(r)?),
                    then: operand(then)?,
                    els: operand(els)?,
                })
            }
            _ => None,
        }
    }
}

/// The `int` locals declared in `decls` (one per name in the kernel,
/// never assigned) with their initial values.
pub(crate) fn locals(k: &Kernel, decls: &[Stmt]) -> Vec<(String, Expr)> {
    let redeclared = redeclared(k.f);
    // Declarations count as writes in `Effects`: only assignments and
    // increments count here.
    let mut written = BTreeSet::new();
    for s in &k.f.body {
        ast_util::visit_stmt_exprs(s, &mut |e| match &e.kind {
            ExprKind::Assign(_, x, _)
            | ExprKind::Unary(UnOp::PreInc | UnOp::PreDec | UnOp::PostInc | UnOp::PostDec, x) => {
                written.extend(assigned(x));
            }
            // A local whose address is taken may be written through it.
            ExprKind::Unary(UnOp::AddrOf, x) => written.extend(names(x)),
            _ => {}
        });
    }
    let mut found = Vec::new();
    for s in decls {
        let StmtKind::Decl(ds) = &s.kind else {
            continue;
        };
        for d in ds {
            let is_int = d.ty.base == BaseType::Int && !d.ty.is_pointer() && d.dims.is_empty();
            if let (true, Some(Init::Expr(e))) = (is_int, &d.init) {
                if !redeclared.contains(&d.name) && !written.contains(&d.name) {
                    found.push((d.name.clone(), e.clone()));
                }
            }
        }
    }
    found
}

/// The names an assignment to `target` may change: the variable of
/// `v`, `a[i]` or `s.f` (not the index `i`), every name under a `*`.
fn assigned(target: &Expr) -> BTreeSet<String> {
    match &target.kind {
        ExprKind::Ident(n) => BTreeSet::from([n.clone()]),
        ExprKind::Index(base, _) | ExprKind::Member { base, .. } => assigned(base),
        _ => names(target),
    }
}

/// The names `e` mentions.
pub(crate) fn names(e: &Expr) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    ast_util::visit_expr(e, &mut |x| {
        if let ExprKind::Ident(n) = &x.kind {
            found.insert(n.clone());
        }
    });
    found
}
