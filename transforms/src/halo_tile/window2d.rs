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

use copper::cuda::ast::{BinOp, Expr, ExprKind, Init, Stmt, StmtKind};
use copper::cuda::print;

use super::kernel::Kernel;
use super::key::{locals, names, Along, Key};
use super::window::{
    counter, header, range, split_conditions, Axis, AxisAtom, Offset, Scan, Served,
};
use crate::ast_util::{self, bin, equiv_expr, ident};
use crate::coop_load::Place;
use crate::tiled_shared::{loop_body, Header};
use crate::Refusal;

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

/// The loop nested in `outer`: the declarations of its body, the loop
/// (the last statement, or the only statement of an `if (C)` without
/// `else` that is the last: a row skipped by `if (yy < 0 || yy >= h)
/// continue;` in normal form, [`super::normalize`]) and `C`, if any.
pub(crate) type Nest = (Vec<Stmt>, Stmt, Option<Expr>);

/// The loop nested in `outer` as the last statement of its body, after
/// declarations only, perhaps under an `if` (see [`Nest`]).
pub(crate) fn inner_loop(outer: &Stmt) -> Option<Nest> {
    let mut body = loop_body(outer);
    let last = body.pop()?;
    let decls_only = body.iter().all(|s| matches!(s.kind, StmtKind::Decl(_)));
    let (inner, cond) = match last.kind {
        StmtKind::If {
            cond,
            then,
            els: None,
        } => match ast_util::branch_stmts(&then).as_slice() {
            [l] => (l.clone(), Some(cond)),
            _ => return None,
        },
        _ => (last, None),
    };
    (matches!(inner.kind, StmtKind::For { .. }) && decls_only).then_some((body, inner, cond))
}

/// Whether loops `outer` and the one in it read `array` at an index that
/// names one of their counters, a row index of `ys` and a column index of
/// `xs` (or locals computed from them): a 2-D window, perhaps one the
/// transform does not handle, worth a reason when it is left alone.
pub(crate) fn looks_like_window(outer: &Stmt, array: &str, ys: &[String], xs: &[String]) -> bool {
    let Some((decls, inner, _)) = inner_loop(outer) else {
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
    let Some((decls, inner, cond)) = inner_loop(outer) else {
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
        let along = |at, h: &Header| Along::new(k, at, &h.var, &locals);
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
        // The reads stand under the outer loop's `if` too, when it has one.
        let reads_in = match &cond {
            Some(c) => vec![ast_util::if_else(c.clone(), loop_body(&inner), Vec::new())],
            None => loop_body(&inner),
        };
        let guard = scan.guard(&reads_in)?;
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
    let inner = inner_loop(outer).map_or(outer.meta.id, |(_, l, _)| l.meta.id);
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
