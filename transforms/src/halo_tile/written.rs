//! Recognizing a window written out: reads of an array at constant
//! offsets from the thread's own element, `in[i - 1] + in[i] + in[i + 1]`
//! or, for a row-major image, `in[idx - w] + in[idx + 1]` (`idx = y * w +
//! x`) and `in[(y - 1) * w + x]`, all in straight-line statements that
//! every thread reaching them runs, under bounds on the thread's indices
//! (`x > 0 && x < w - 1`, `if (i >= n) return;`) or conditions the same
//! in every thread. The radius along each axis is the largest offset; the
//! offsets read make up the boxes of [`Served::boxes`].

use std::collections::{BTreeMap, BTreeSet};

use copper::cuda::ast::{BinOp, Expr, ExprKind, Function, NodeId, Stmt, StmtKind, UnOp};
use copper::cuda::print;

use super::kernel::{value, Kernel};
use super::key::locals;
use super::key::Key;
use super::window::{split_conditions, Axis, Offset, Served, Window};
use super::window2d::Window2d;
use crate::ast_util::{self, expr, int, unconditional_in, Effects};
use crate::coop_load::Place;
use crate::Refusal;

mod clamp;

use clamp::AxisClamps;

/// A sum of products of names with integer coefficients, each product's
/// names sorted.
pub(super) type Poly = BTreeMap<Vec<String>, i64>;

/// A first and last offset along an axis.
type Range = (i64, i64);

/// What the reads of an array written out make, before it is a 1-D or a
/// 2-D window.
struct Recognized {
    /// The axes, rows first.
    axes: Vec<Axis>,
    /// The reads the tile serves.
    served: Served,
    /// Where the loads go, and when a thread reaches the reads.
    place: Place,
    /// The conditions on the way that are the same in every thread.
    uniform: Vec<Expr>,
    /// The row length of a 2-D index.
    stride: Option<String>,
    /// The bounds the reads clamp the position to along each axis, lower
    /// and upper.
    clamp: Vec<[Option<Expr>; 2]>,
}

/// A read's index with its clamps taken off: the index inside, and the
/// lower (`max`) and upper (`min`) bounds.
pub(super) type Unclamped<'e> = (&'e Expr, [Option<&'e Expr>; 2]);

/// What the recognizer knows of the kernel for reads written out.
pub(crate) struct Written<'a, 'f> {
    /// What the recognizer knows of the kernel.
    pub(crate) k: &'a Kernel<'f>,
    /// The `int` locals never assigned, each with its value.
    locals: BTreeMap<String, Expr>,
}

/// An index `Y * w + X` at constant offsets `(dy, dx)` from the thread's
/// `(y, x)`, with its row length `w`; `w` is `None` in 1-D.
type Offsets = (Option<String>, Vec<i64>);

impl<'a, 'f> Written<'a, 'f> {
    /// The recognizer for kernel `k`.
    pub(crate) fn new(k: &'a Kernel<'f>) -> Self {
        let mut decls = Vec::new();
        for s in &k.f.body {
            ast_util::visit_stmts(s, &mut |x| {
                if matches!(x.kind, StmtKind::Decl(_)) {
                    decls.push(x.clone());
                }
            });
        }
        let locals = locals(k, &decls).into_iter().collect();
        Written { k, locals }
    }

    /// `e` as a sum of products of the `symbols`, the fixed `int`
    /// parameters, the local constants and copies of them (`const int W =
    /// width;`), literals folded and the `int` locals never assigned
    /// replaced by their values. The local constants stay names, so that
    /// one may be a row length (`y * W`); [`Written::fold`] gives their
    /// values.
    fn poly(&self, e: &Expr, symbols: &[&str], depth: u32) -> Option<Poly> {
        if let Some(v) = value(e, &BTreeMap::new()) {
            return Some(BTreeMap::from([(Vec::new(), v)]));
        }
        let k = self.k;
        match &e.kind {
            ExprKind::Ident(n) if symbols.contains(&n.as_str()) || k.int_operand(e) => {
                Some(BTreeMap::from([(vec![n.clone()], 1)]))
            }
            ExprKind::Ident(n) if depth < 8 => self.poly(self.locals.get(n)?, symbols, depth + 1),
            ExprKind::Unary(UnOp::Neg, x) => {
                let p = self.poly(x, symbols, depth)?;
                p.into_iter()
                    .map(|(m, c)| Some((m, c.checked_neg()?)))
                    .collect()
            }
            ExprKind::Binary(op @ (BinOp::Add | BinOp::Sub | BinOp::Mul), a, b) => {
                let (a, b) = (self.poly(a, symbols, depth)?, self.poly(b, symbols, depth)?);
                let mut out = Poly::new();
                let mut add = |m: Vec<String>, c: i64| -> Option<()> {
                    let v = out.entry(m).or_insert(0);
                    *v = v.checked_add(c)?;
                    Some(())
                };
                match op {
                    BinOp::Mul => {
                        for (ma, ca) in &a {
                            for (mb, cb) in &b {
                                let mut m = ma.clone();
                                m.extend(mb.iter().cloned());
                                m.sort();
                                add(m, ca.checked_mul(*cb)?)?;
                            }
                        }
                    }
                    _ => {
                        let sign = if *op == BinOp::Sub { -1 } else { 1 };
                        for (m, c) in a {
                            add(m, c)?;
                        }
                        for (m, c) in b {
                            add(m, c.checked_mul(sign)?)?;
                        }
                    }
                }
                out.retain(|_, c| *c != 0);
                Some(out)
            }
            _ => None,
        }
    }

    /// `p` with every local constant but `keep` replaced by its value.
    fn fold(&self, p: Poly, keep: Option<&str>) -> Option<Poly> {
        let mut out = Poly::new();
        for (m, mut c) in p {
            let mut names = Vec::new();
            for n in m {
                match self.k.consts.get(&n) {
                    Some(&(_, v)) if Some(n.as_str()) != keep => c = c.checked_mul(v)?,
                    _ => names.push(n),
                }
            }
            let v = out.entry(names).or_insert(0);
            *v = v.checked_add(c)?;
        }
        out.retain(|_, c| *c != 0);
        Some(out)
    }

    /// The offsets of index `i` from the thread's own element: `i + c`
    /// for the 1-D index `axes = [i]`, `(y + dy) * w + (x + dx)` for
    /// `axes = [y, x]` with `w` a fixed `int` parameter, a local constant
    /// or a `const int` copy of a fixed `int`.
    pub(crate) fn offsets(&self, i: &Expr, axes: &[&str]) -> Option<Offsets> {
        // `i - 1u` wraps where `i - 1` does not.
        let mut suffixed = false;
        ast_util::visit_expr(i, &mut |e| {
            suffixed |= matches!(&e.kind, ExprKind::Int { text, .. } if text.contains(['u', 'U', 'l', 'L']));
        });
        if suffixed {
            return None;
        }
        let p = self.poly(i, axes, 0)?;
        match axes {
            [x] => {
                let mut p = self.fold(p, None)?;
                let constant = p.remove(&Vec::new()).unwrap_or(0);
                (p == BTreeMap::from([(vec![x.to_string()], 1)])).then(|| (None, vec![constant]))
            }
            [y, x] => {
                let row = p
                    .iter()
                    .find(|(m, c)| **c == 1 && m.len() == 2 && m.iter().any(|n| n == y))?;
                let w = row.0.iter().find(|n| n != y)?.clone();
                if axes.contains(&w.as_str()) {
                    return None;
                }
                let mut p = self.fold(p, Some(&w))?;
                let constant = p.remove(&Vec::new()).unwrap_or(0);
                if p.remove(&vec![x.to_string()]) != Some(1) {
                    return None;
                }
                let mut row = vec![w.clone(), y.to_string()];
                row.sort();
                if p.remove(&row) != Some(1) {
                    return None;
                }
                let dy = p.remove(&vec![w.clone()]).unwrap_or(0);
                p.is_empty().then(|| (Some(w), vec![dy, constant]))
            }
            _ => None,
        }
    }

    /// Whether some read of `array` in the kernel is at a constant offset
    /// other than 0 from the thread's element along `axes`: a window
    /// written out, worth a reason when it is left alone.
    pub(crate) fn looks_like_window(&self, array: &str, axes: &[&str]) -> bool {
        let mut found = false;
        for s in &self.k.f.body {
            ast_util::visit_stmt_exprs(s, &mut |e| {
                if let Some(i) = read_of(e, array) {
                    let i = match self
                        .unclamp_axes(self.k, i, axes)
                        .filter(|_| axes.len() > 1)
                    {
                        Some((i, _)) => i,
                        None => self.unclamp(self.k, i, axes).0.clone(),
                    };
                    found |= self
                        .offsets(&i, axes)
                        .is_some_and(|(_, o)| o.iter().any(|&c| c != 0));
                }
            });
        }
        found
    }

    /// The 1-D window the kernel's reads of `array` written out make, `i`
    /// the global index declared at top-level statement `.0`.
    pub(crate) fn window(&self, array: &str, i: (usize, &str)) -> Result<Window, Refusal> {
        let mut r = self.recognize(array, &[i])?;
        Ok(Window {
            axis: r.axes.remove(0),
            place: r.place,
            uniform: r.uniform,
            served: r.served,
            key: clamped_key(&r.clamp.pop().unwrap_or([None, None])),
        })
    }

    /// The 2-D window the kernel's reads of `array` written out make, `y`
    /// and `x` the global row and column declared at top-level statements
    /// `.0`.
    pub(crate) fn window_2d(
        &self,
        array: &str,
        y: (usize, &str),
        x: (usize, &str),
    ) -> Result<Window2d, Refusal> {
        let mut r = self.recognize(array, &[y, x])?;
        let (Some(w), 2, 2) = (&r.stride, r.axes.len(), r.clamp.len()) else {
            return Err("copper lost track of the window".into());
        };
        Ok(Window2d {
            stride: ast_util::ident(w),
            rows: r.axes.remove(0),
            cols: r.axes.remove(0),
            row_key: clamped_key(&r.clamp[0]),
            col_key: clamped_key(&r.clamp[1]),
            place: r.place,
            uniform: r.uniform,
            served: r.served,
        })
    }

    /// The axes, reads, place, conditions the same in every thread and
    /// row length of the window the reads of `array` make along `axes`.
    fn recognize(&self, array: &str, axes: &[(usize, &str)]) -> Result<Recognized, Refusal> {
        let f = self.k.f;
        let (targets, reads) = straight_line(f, array)?;
        let Some(&first) = targets.first() else {
            return Err(format!("the kernel does not read `{array}`").into());
        };
        let place = Place::of(&f.body, first)?;
        let k = &self.k.before(place.at);
        let names: Vec<&str> = axes.iter().map(|(_, n)| *n).collect();
        let mut stride: Option<String> = None;
        let mut found = Vec::new();
        // The clamps of each read along each axis.
        let mut clamps: Vec<AxisClamps> = Vec::new();
        for r in &reads {
            let Some(i) = read_of(r, array) else {
                continue;
            };
            let (whole, clamp) = self.unclamp(k, i, &names);
            let not_offset = || -> Refusal {
                format!(
                    "its index `{}` is not the thread's own element plus a constant",
                    print::expression(whole)
                )
                .into()
            };
            let (i, clamp) = match names.len() {
                1 => (whole.clone(), vec![clamp]),
                _ if clamp.iter().any(Option::is_some) => {
                    return Err(format!(
                        "its index `{}` is clamped as a whole (`min`/`max`), which is not done for a 2-D index",
                        print::expression(whole)
                    )
                    .into())
                }
                _ => self.unclamp_axes(k, i, &names).ok_or_else(not_offset)?,
            };
            clamps.push(clamp);
            let Some((w, o)) = self.offsets(&i, &names) else {
                return Err(not_offset());
            };
            if w.is_some()
                && stride.get_or_insert_with(|| w.clone().unwrap_or_default())
                    != &w.unwrap_or_default()
            {
                return Err(
                    format!("its reads of `{array}` take rows of different lengths").into(),
                );
            }
            found.push((r.clone(), o));
        }
        if let Some(w) = stride.as_deref().filter(|w| {
            self.k
                .declared_at(w)
                .is_some_and(|declared| declared >= place.at)
        }) {
            return Err(format!(
                "its row length `{w}` is declared after a statement that may return, so the tile cannot be loaded before it"
            )
            .into());
        }
        for (at, index) in axes {
            if *at >= place.at {
                return Err(format!(
                    "`{index}` is declared after a statement that may return, so the tile cannot be loaded before it"
                )
                .into());
            }
        }
        let (bounds, uniform) = split_conditions(k, &place.conds, &names)?;
        let mut built = Vec::new();
        for (n, (below, from)) in bounds.into_iter().enumerate() {
            let along: BTreeSet<i64> = found
                .iter()
                .filter_map(|(_, o)| o.get(n).copied())
                .collect();
            let (Some(&first), Some(&last)) = (along.first(), along.last()) else {
                return Err("copper lost track of the window".into());
            };
            built.push(Axis {
                index: names[n].to_string(),
                first,
                start: signed(first),
                last,
                below,
                from,
                guard: Vec::new(),
            });
        }
        let mut clamp = Vec::new();
        for (n, a) in built.iter().enumerate() {
            let along: Vec<[Option<&Expr>; 2]> = clamps.iter().map(|c| c[n]).collect();
            clamp.push(self.clamp_of(a, n, &found, &along)?);
        }
        let offsets: BTreeSet<Vec<i64>> = found.iter().map(|(_, o)| o.clone()).collect();
        let served = Served {
            targets,
            boxes: boxes(&filled(&offsets)),
            reads: found
                .into_iter()
                .map(|(r, o)| (r, o.into_iter().map(Offset::Const).collect()))
                .collect(),
        };
        Ok(Recognized {
            axes: built,
            served,
            place,
            uniform,
            stride,
            clamp,
        })
    }
}

/// What a read written out makes of a position clamped to `bounds`
/// (lower, upper): the position, perhaps clamped.
fn clamped_key(bounds: &[Option<Expr>; 2]) -> Key {
    let mut key = Key::Offset;
    for (call, bound) in ["max", "min"].into_iter().zip(bounds) {
        if let Some(b) = bound {
            key = Key::Clamp {
                call: call.to_string(),
                inner: Box::new(key),
                bound: b.clone(),
                key_first: true,
            };
        }
    }
    key
}

/// The index of `e` when it reads `array` (`array[i]`).
fn read_of<'e>(e: &'e Expr, array: &str) -> Option<&'e Expr> {
    match &e.kind {
        ExprKind::Index(base, i) if matches!(&base.kind, ExprKind::Ident(n) if n == array) => {
            Some(i)
        }
        _ => None,
    }
}

/// `v` as a literal (`-v` as written when negative).
fn signed(v: i64) -> Expr {
    match v {
        v if v < 0 => expr(ExprKind::Unary(UnOp::Neg, Box::new(int(v.unsigned_abs())))),
        v => int(v.unsigned_abs()),
    }
}

/// `offsets` with the gaps of each row and each column filled (the
/// center of a 5-point cross, `0` of `{-1, 1}`): an element a thread does
/// not read but whose index lies between two it reads, in the same
/// allocation (see the module docs of [`super`]).
fn filled(offsets: &BTreeSet<Vec<i64>>) -> BTreeSet<Vec<i64>> {
    let mut f = offsets.clone();
    loop {
        let mut next = f.clone();
        for a in &f {
            for b in &f {
                // Same row (or 1-D), or same column: what lies between.
                let along = match (a.as_slice(), b.as_slice()) {
                    ([x], [u]) => Some((0, *x, *u)),
                    ([y, x], [v, u]) if y == v => Some((1, *x, *u)),
                    ([y, x], [v, u]) if x == u => Some((0, *y, *v)),
                    _ => None,
                };
                let Some((n, lo, hi)) = along.filter(|(_, lo, hi)| lo < hi) else {
                    continue;
                };
                for c in lo + 1..hi {
                    let mut o = a.clone();
                    o[n] = c;
                    next.insert(o);
                }
            }
        }
        if next == f {
            return f;
        }
        f = next;
    }
}

/// Boxes (a first and last offset per axis) whose union is `offsets`
/// exactly, `offsets` filled as [`filled`] leaves them: chosen greedily
/// among the runs of each row and each column (consecutive rows or
/// columns with the same run merged), the one covering most of what is
/// left first.
fn boxes(offsets: &BTreeSet<Vec<i64>>) -> Vec<Vec<(i64, i64)>> {
    let mut candidates: Vec<Vec<(i64, i64)>> = Vec::new();
    for n in 0..offsets.first().map_or(0, Vec::len) {
        // Runs along axis `n` for each value of the other axis.
        let mut runs: BTreeMap<Vec<i64>, Vec<(i64, i64)>> = BTreeMap::new();
        for o in offsets {
            let mut rest = o.clone();
            let v = rest.remove(n);
            let row = runs.entry(rest).or_default();
            match row.last_mut() {
                Some(run) if run.1 + 1 == v => run.1 = v,
                _ => row.push((v, v)),
            }
        }
        // Consecutive values of the other axis with the same runs merged.
        let mut open: Vec<(Option<Range>, Range)> = Vec::new();
        for (rest, row) in runs {
            for run in row {
                let other = rest.first().copied();
                let merged = open.iter_mut().find(|(o, r)| {
                    *r == run && matches!((o, other), (Some(o), Some(v)) if o.1 + 1 == v)
                });
                match (merged, other) {
                    (Some((Some(o), _)), Some(v)) => o.1 = v,
                    _ => open.push((other.map(|v| (v, v)), run)),
                }
            }
        }
        for (other, run) in open {
            let mut b = vec![run];
            if let Some(o) = other {
                b.insert(1 - n, o);
            }
            candidates.push(b);
        }
    }
    let covers =
        |b: &Vec<(i64, i64)>, o: &Vec<i64>| b.iter().zip(o).all(|(r, v)| r.0 <= *v && *v <= r.1);
    let mut left: Vec<&Vec<i64>> = offsets.iter().collect();
    let mut found = Vec::new();
    while !left.is_empty() {
        let best = candidates.iter().max_by_key(|b| {
            (
                left.iter().filter(|o| covers(b, o)).count(),
                std::cmp::Reverse((*b).clone()),
            )
        });
        let Some(best) = best.cloned() else {
            break;
        };
        left.retain(|o| !covers(&best, o));
        found.push(best);
    }
    found
}

/// The statements holding every read of `array`, straight-line code at
/// one level of the kernel reached through `if`s (without `else`) and
/// blocks, and the reads: none conditional within its statement, none in
/// a loop, no `return` between them.
fn straight_line(f: &Function, array: &str) -> Result<(Vec<NodeId>, Vec<Expr>), Refusal> {
    let mentions = |s: &Stmt| Effects::of(std::slice::from_ref(s)).reads.contains(array);
    let mut level = f.body.clone();
    loop {
        let at: Vec<usize> = (0..level.len()).filter(|&n| mentions(&level[n])).collect();
        let (Some(&first), Some(&last)) = (at.first(), at.last()) else {
            return Err(format!("the kernel does not read `{array}`").into());
        };
        if first == last {
            let next = match &level[first].kind {
                StmtKind::Block(b) => Some(b.clone()),
                StmtKind::If { cond, then, els }
                    if !mentions(&ast_util::stmt(StmtKind::Expr(cond.clone())))
                        && !els.as_ref().is_some_and(|e| mentions(e)) =>
                {
                    Some(ast_util::branch_stmts(then))
                }
                _ => None,
            };
            if let Some(next) = next {
                level = next;
                continue;
            }
        }
        let mut targets = Vec::new();
        let mut reads = Vec::new();
        for s in &level[first..=last] {
            if Effects::of(std::slice::from_ref(s)).jumps {
                return Err(format!("a jump stands between its reads of `{array}`").into());
            }
            if !mentions(s) {
                continue;
            }
            if !matches!(s.kind, StmtKind::Expr(_) | StmtKind::Decl(_)) {
                return Err(format!(
                    "`{array}` is read in a loop, under a condition or in an `else` branch, not all in straight-line code every thread runs"
                )
                .into());
            }
            let mut conditional = false;
            ast_util::visit_stmt_roots(s, &mut |root| {
                ast_util::visit_expr(root, &mut |e| {
                    if read_of(e, array).is_some() {
                        conditional |= !unconditional_in(root, e.meta.id);
                        reads.push(e.clone());
                    }
                })
            });
            if conditional {
                return Err(
                    "a read of it is conditional within its expression (`&&`, `||` or `?:`)".into(),
                );
            }
            targets.push(s.meta.id);
        }
        return Ok((targets, reads));
    }
}
