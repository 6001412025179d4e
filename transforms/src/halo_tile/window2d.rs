//! Recognizing a 2-D window: the thread's global column `x` and row `y`,
//! two nested loops over the offsets `dy` and `dx` (either one outside)
//! with constant ranges, reading `a[Y * w + X]` where `Y` is the row
//! position `y + dy` and `X` the column position `x + dx`, each as it is,
//! copied into a local (`int yy = y + dy, xx = x + dx;`) or clamped with
//! `min`/`max` against fixed bounds (`min(max(y + dy, 0), h - 1)`), and
//! `w` a fixed `int`; the reads stand under bounds on the positions only,
//! and the conditions on the way bound `x` and `y` separately (`x < w &&
//! y < h`) or are the same in every thread.

use std::collections::BTreeSet;

use copper::cuda::ast::{BaseType, BinOp, Expr, ExprKind, Init, Stmt, StmtKind, UnOp};
use copper::cuda::print;

use super::window::{
    counter, header, range, split_conditions, Axis, AxisAtom, Kernel, Offset, Scan, Served,
};
use crate::ast_util::{self, bin, equiv_expr, ident};
use crate::coop_load::Place;
use crate::tiled_shared::{loop_body, redeclared, Header};
use crate::Refusal;

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

/// A 2-D sliding window over one array, as the original reads it.
pub(crate) struct Window2d {
    /// The rows: `y` and `dy`.
    pub(crate) rows: Axis,
    /// The columns: `x` and `dx`.
    pub(crate) cols: Axis,
    /// What the reads make of the row position.
    pub(crate) row_key: Key,
    /// What the reads make of the column position.
    pub(crate) col_key: Key,
    /// The row length `w` of the index `Y * w + X`.
    pub(crate) stride: Expr,
    /// Where the loads go, and when a thread reaches the reads.
    pub(crate) place: Place,
    /// The conditions on the way that are the same in every thread.
    pub(crate) uniform: Vec<Expr>,
    /// The reads the tile serves.
    pub(crate) served: Served,
}

/// One axis while it is being recognized: the thread index, the loop
/// counter and the locals that hold a key of the position.
struct Along<'a> {
    index: &'a str,
    /// The top-level statement that declares the index.
    declared: usize,
    counter: String,
    /// Locals holding a key of the position (`int yy = y + dy;`).
    copies: Vec<(String, Key)>,
}

impl Along<'_> {
    /// `y + dy`.
    fn position(&self) -> Expr {
        bin(BinOp::Add, ident(self.index), ident(&self.counter))
    }

    /// The position and the locals equal to it.
    fn positions(&self) -> Vec<Expr> {
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
    fn key(&self, k: &Kernel, e: &Expr) -> Option<Key> {
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

/// The terms of a sum (`a + b + c`).
fn terms(e: &Expr) -> Vec<&Expr> {
    match &e.kind {
        ExprKind::Binary(BinOp::Add, a, b) => {
            let mut v = terms(a);
            v.extend(terms(b));
            v
        }
        _ => vec![e],
    }
}

/// An index `Y * w + X` split into its row key, its row length and its
/// column key.
type Split = (Key, Expr, Key);

/// `i` as `Y * w + X` (terms in any order, `X` perhaps two terms `x` and
/// `dx`).
fn split(k: &Kernel, rows: &Along, cols: &Along, i: &Expr) -> Option<Split> {
    let ts = terms(i);
    let row_term = |t: &Expr| -> Option<(Key, Expr)> {
        let ExprKind::Binary(BinOp::Mul, a, b) = &t.kind else {
            return None;
        };
        if let (Some(key), true) = (rows.key(k, a), k.int_operand(b)) {
            return Some((key, (**b).clone()));
        }
        if let (Some(key), true) = (rows.key(k, b), k.int_operand(a)) {
            return Some((key, (**a).clone()));
        }
        None
    };
    let found: Vec<(usize, (Key, Expr))> = ts
        .iter()
        .enumerate()
        .filter_map(|(at, t)| Some((at, row_term(t)?)))
        .collect();
    let [(at, (row_key, stride))] = found.as_slice() else {
        return None;
    };
    let rest: Vec<Expr> = ts
        .iter()
        .enumerate()
        .filter(|(j, _)| j != at)
        .map(|(_, t)| (*t).clone())
        .collect();
    let col = rest.into_iter().reduce(|a, b| bin(BinOp::Add, a, b))?;
    Some((row_key.clone(), stride.clone(), cols.key(k, &col)?))
}

/// Whether two splits read the same element at every position.
fn same_split(a: &Split, b: &Split) -> bool {
    let p = || ident("p");
    equiv_expr(&a.0.at(p()), &b.0.at(p()))
        && equiv_expr(&a.1, &b.1)
        && equiv_expr(&a.2.at(p()), &b.2.at(p()))
}

/// The loop nested in `outer` as the last statement of its body, after
/// declarations only.
pub(crate) fn inner_loop(outer: &Stmt) -> Option<(Vec<Stmt>, Stmt)> {
    let mut body = loop_body(outer);
    let last = body.pop()?;
    let decls_only = body.iter().all(|s| matches!(s.kind, StmtKind::Decl(_)));
    (matches!(last.kind, StmtKind::For { .. }) && decls_only).then_some((body, last))
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

/// Whether loops `outer` and the one in it read `array` at an index that
/// names one of their counters, a row index of `ys` and a column index of
/// `xs` (or locals computed from them): a 2-D window, perhaps one the
/// transform does not handle, worth a reason when it is left alone.
pub(crate) fn looks_like_window(outer: &Stmt, array: &str, ys: &[String], xs: &[String]) -> bool {
    let Some((decls, inner)) = inner_loop(outer) else {
        return false;
    };
    let (Some(c1), Some(c2)) = (counter(outer), counter(&inner)) else {
        return false;
    };
    let body = loop_body(&inner);
    // The names computed from `seeds` in the loops' declarations.
    let reach = |seeds: &[String]| {
        let mut found: BTreeSet<String> = seeds.iter().cloned().collect();
        for s in decls.iter().chain(&body) {
            if let StmtKind::Decl(ds) = &s.kind {
                for d in ds {
                    if let Some(Init::Expr(e)) = &d.init {
                        if !names(e).is_disjoint(&found) {
                            found.insert(d.name.clone());
                        }
                    }
                }
            }
        }
        found
    };
    let sets = [
        reach(&[c1.to_string(), c2.to_string()]),
        reach(ys),
        reach(xs),
    ];
    let mut found = false;
    for s in &body {
        ast_util::visit_stmt_exprs(s, &mut |e| {
            if let ExprKind::Index(base, i) = &e.kind {
                if matches!(&base.kind, ExprKind::Ident(n) if n == array) {
                    let used = names(i);
                    found |= sets.iter().all(|set| !used.is_disjoint(set));
                }
            }
        });
    }
    found
}

/// The 2-D window loops `outer` (and the loop in it) read of `array`,
/// with `y` and `x` the global row and column indices declared at their
/// top-level statements.
pub(crate) fn recognize(
    k: &Kernel,
    outer: &Stmt,
    array: &str,
    (y_at, y): (usize, &str),
    (x_at, x): (usize, &str),
) -> Result<Window2d, Refusal> {
    let k = &k.before(Place::of(&k.f.body, outer.meta.id).map_or(0, |p| p.at));
    let Some((decls, inner)) = inner_loop(outer) else {
        return Err(
            "its reads are not in a loop over one offset nested directly in a loop over the other"
                .into(),
        );
    };
    let (ho, hi) = (header(k, outer)?, header(k, &inner)?);
    let ((fo, lo), (fi, li)) = (range(k, &ho, outer)?, range(k, &hi, &inner)?);
    let mut copies = decls;
    copies.extend(loop_body(&inner));
    let locals = locals(k, &copies);
    let mut reads = Vec::new();
    for s in loop_body(&inner) {
        ast_util::visit_stmt_exprs(&s, &mut |e| {
            if let ExprKind::Index(base, _) = &e.kind {
                if matches!(&base.kind, ExprKind::Ident(n) if n == array) {
                    reads.push(e.clone());
                }
            }
        });
    }
    // The row offset may be either loop's.
    let mut first_why = None;
    for (row, col) in [
        ((&ho, fo, lo), (&hi, fi, li)),
        ((&hi, fi, li), (&ho, fo, lo)),
    ] {
        let along = |(declared, index), h: &Header| {
            let mut a = Along {
                index,
                declared,
                counter: h.var.clone(),
                copies: Vec::new(),
            };
            for (name, e) in &locals {
                if let Some(key) = a.key(k, e) {
                    a.copies.push((name.clone(), key));
                }
            }
            a
        };
        let (rows, cols) = (along((y_at, y), row.0), along((x_at, x), col.0));
        let mut splits = Vec::new();
        let mut why = None;
        for r in &reads {
            let ExprKind::Index(_, i) = &r.kind else {
                continue;
            };
            match split(k, &rows, &cols, i) {
                Some(s) => splits.push(s),
                None => {
                    why = Some(format!(
                        "its index `{}` is not a row `{}` times a fixed row length plus the column `{}`",
                        print::expression(i),
                        print::expression(&rows.position()),
                        print::expression(&cols.position())
                    ));
                    break;
                }
            }
        }
        if let Some(why) = why {
            first_why.get_or_insert(why);
            continue;
        }
        let Some(first) = splits.first().cloned() else {
            return Err(format!("the loop does not read `{array}`").into());
        };
        if !splits.iter().all(|s| same_split(s, &first)) {
            return Err(format!(
                "its reads of `{array}` take different elements at the same position"
            )
            .into());
        }
        let is_window = |_: &Expr| true;
        let scan = Scan {
            k,
            array,
            axes: vec![rows.positions(), cols.positions()],
            is_window: &is_window,
            expected: String::new(),
        };
        let guard = scan.guard(&loop_body(&inner))?;
        return finish(k, outer, (rows, cols), (row, col), first, guard, reads);
    }
    Err(first_why
        .unwrap_or_else(|| "copper lost track of the window".to_string())
        .into())
}

/// The window once its reads are known: where the loads go and when a
/// thread reaches the loops.
fn finish(
    k: &Kernel,
    outer: &Stmt,
    (rows, cols): (Along, Along),
    (row, col): ((&Header, i64, i64), (&Header, i64, i64)),
    (row_key, stride, col_key): Split,
    guard: Vec<AxisAtom>,
    reads: Vec<Expr>,
) -> Result<Window2d, Refusal> {
    let place = Place::of(&k.f.body, outer.meta.id)?;
    for (at, index) in [(rows.declared, rows.index), (cols.declared, cols.index)] {
        if at >= place.at {
            return Err(format!(
                "`{index}` is declared after a statement that may return, so the tile cannot be loaded before it"
            )
            .into());
        }
    }
    let (bounds, uniform) = split_conditions(k, &place.conds, &[rows.index, cols.index])?;
    let mut axes = bounds
        .into_iter()
        .zip([(rows, row), (cols, col)])
        .enumerate()
        .map(|(n, ((below, from), (along, (h, first, last))))| Axis {
            index: along.index.to_string(),
            first,
            start: h.start.clone(),
            last,
            below,
            from,
            guard: guard
                .iter()
                .filter(|(a, _)| *a == n)
                .map(|(_, atom)| atom.clone())
                .collect(),
        });
    let (Some(rows), Some(cols)) = (axes.next(), axes.next()) else {
        return Err("copper lost track of the window".into());
    };
    let inner = inner_loop(outer).map_or(outer.meta.id, |(_, l)| l.meta.id);
    let offsets = vec![
        Offset::Counter(row.0.var.clone()),
        Offset::Counter(col.0.var.clone()),
    ];
    let boxes = vec![vec![(rows.first, rows.last), (cols.first, cols.last)]];
    Ok(Window2d {
        rows,
        cols,
        row_key,
        col_key,
        stride,
        place,
        uniform,
        served: Served {
            targets: vec![inner],
            reads: reads.into_iter().map(|r| (r, offsets.clone())).collect(),
            boxes,
        },
    })
}
