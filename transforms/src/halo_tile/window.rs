//! Recognizing a sliding window: the thread's 1-D global index `i`, a
//! loop `for (int k = S; k <= E; k++)` every thread that reaches it runs
//! over the same constant range, reading `a[i + k]` (or one clamp of it,
//! a [`Key`], through a local or not) under bounds on `i + k` only, and
//! the conditions under which a thread reaches it
//! (`i < n`, or the same in every thread of the block).

use std::collections::BTreeSet;

use copper::cuda::ast::{
    BaseType, BinOp, Expr, ExprKind, Function, Init, NodeId, Stmt, StmtKind, UnOp,
};
use copper::cuda::print;

use super::kernel::{value, Atom, Kernel};
use super::key::{locals, names, Along, Key};
use crate::ast_util::{self, bin, equiv_expr, expr, ident, is_pure, unconditional_in, Effects};
use crate::coop_load::Place;
use crate::tiled_shared::{loop_body, uniform, Header};
use crate::Refusal;

/// One axis of a window: the thread's global index along it, the range
/// of its offsets, when a thread reaches the reads by its bounds on the
/// index, and the bounds on the position every read stands under.
pub(crate) struct Axis {
    /// The thread's global index (`i`).
    pub(crate) index: String,
    /// The first offset `S` (a loop counter's first value).
    pub(crate) first: i64,
    /// `S` as written (`-R`).
    pub(crate) start: Expr,
    /// The last offset `E`.
    pub(crate) last: i64,
    /// The `n` of each `i < n` a thread passes on the way to the loop.
    pub(crate) below: Vec<Expr>,
    /// The `m` of each `i >= m` a thread passes on the way to the loop.
    pub(crate) from: Vec<Expr>,
    /// The bounds on `i + k` under which every read of the array stands.
    pub(crate) guard: Vec<Atom>,
}

impl Axis {
    /// `E - S`: how many more positions the block reads than it has
    /// threads along the axis.
    pub(crate) fn halo(&self) -> u64 {
        self.last.abs_diff(self.first)
    }
}

/// A read's offset from the thread's own element along one axis.
#[derive(Clone)]
pub(crate) enum Offset {
    /// A window loop's counter (`k` of `a[i + k]`).
    Counter(String),
    /// A constant written in the index (`-1` of `a[i - 1]`).
    Const(i64),
}

/// The reads a tile serves: where they stand, each one's offsets, and
/// the offsets a thread reads as boxes.
pub(crate) struct Served {
    /// The window loop whose body holds the reads, or the straight-line
    /// statements that hold them.
    pub(crate) targets: Vec<NodeId>,
    /// Each read of the array as written, with its offset along each
    /// axis (rows first).
    pub(crate) reads: Vec<(Expr, Vec<Offset>)>,
    /// Boxes of offsets, the first and last along each axis, whose union
    /// is the set of offsets every thread reads: one box for a loop, a
    /// few for reads written out (a 5-point cross is a row and a column).
    pub(crate) boxes: Vec<Vec<(i64, i64)>>,
}

impl Served {
    /// The reads along `axis` (`a`) in words: the counter and its range
    /// for a loop, the offsets' range for reads written out.
    pub(crate) fn along(&self, axis: usize, a: &Axis) -> String {
        match self.reads.first().and_then(|(_, o)| o.get(axis)) {
            Some(Offset::Counter(c)) => format!("`{c}` from {} to {}", a.first, a.last),
            _ => format!("offsets from {} to {}", a.first, a.last),
        }
    }
}

/// A sliding window over one array, as the original reads it.
pub(crate) struct Window {
    /// The window's only axis.
    pub(crate) axis: Axis,
    /// Where the loads go, and when a thread reaches the reads.
    pub(crate) place: Place,
    /// The conditions on the way that are the same in every thread.
    pub(crate) uniform: Vec<Expr>,
    /// The reads the tile serves.
    pub(crate) served: Served,
    /// What the reads make of the position: itself, or a clamp of it
    /// (`max(i - 1, 0)`, `min(max(j, 0), n - 1)` with `int j = i + k;`).
    pub(crate) key: Key,
}

/// The conjuncts of `e` (`a && b && c`).
pub(crate) fn conjuncts(e: &Expr) -> Vec<&Expr> {
    match &e.kind {
        ExprKind::Binary(BinOp::And, a, b) => {
            let mut v = conjuncts(a);
            v.extend(conjuncts(b));
            v
        }
        _ => vec![e],
    }
}

/// Whether `e` is `blockIdx.x * blockDim.x + threadIdx.x` (operands in
/// any order), or the same along `axis` (`"y"`).
fn is_global(e: &Expr, axis: &str) -> bool {
    let is = |e: &Expr, base: &str| {
        matches!(&e.kind, ExprKind::Member { base: b, field, arrow: false }
            if field == axis && matches!(&b.kind, ExprKind::Ident(n) if n == base))
    };
    let is_block_start = |e: &Expr| match &e.kind {
        ExprKind::Binary(BinOp::Mul, a, b) => {
            (is(a, "blockIdx") && is(b, "blockDim")) || (is(a, "blockDim") && is(b, "blockIdx"))
        }
        _ => false,
    };
    match &e.kind {
        ExprKind::Binary(BinOp::Add, a, b) => {
            (is_block_start(a) && is(b, "threadIdx")) || (is(a, "threadIdx") && is_block_start(b))
        }
        _ => false,
    }
}

/// The `int` variables the kernel body declares at its top level as the
/// global index along `axis` (`int i = blockIdx.x * blockDim.x +
/// threadIdx.x;` for `"x"`), with the position of their declaration, when
/// nothing assigns them.
pub(crate) fn global_indices(f: &Function, axis: &str) -> Vec<(usize, String)> {
    let redeclared = crate::tiled_shared::redeclared(f);
    let mut found = Vec::new();
    for (at, s) in f.body.iter().enumerate() {
        let StmtKind::Decl(ds) = &s.kind else {
            continue;
        };
        let mut rest = f.body.clone();
        rest.remove(at);
        let effects = Effects::of(&rest);
        for d in ds {
            let is_int = d.ty.base == BaseType::Int && !d.ty.is_pointer() && d.dims.is_empty();
            let Some(Init::Expr(e)) = &d.init else {
                continue;
            };
            if is_int
                && is_global(e, axis)
                && !effects.writes.contains(&d.name)
                && !redeclared.contains(&d.name)
            {
                found.push((at, d.name.clone()));
            }
        }
    }
    found
}

/// The window loop `l` reads of `array`, with `index` the global index
/// declared at top-level statement `declared`.
pub(crate) fn recognize(
    k: &Kernel,
    l: &Stmt,
    array: &str,
    (declared, index): (usize, &str),
) -> Result<Window, Refusal> {
    // The local constants the loads may use: those declared before them.
    let k = &k.before(Place::of(&k.f.body, l.meta.id).map_or(0, |p| p.at));
    let h = header(k, l)?;
    let body = loop_body(l);
    let along = Along::new(k, (declared, index), &h.var, &locals(k, &body));
    let element = along.position();
    let mut reads = Vec::new();
    for s in &body {
        ast_util::visit_stmt_exprs(s, &mut |e| {
            if let ExprKind::Index(base, i) = &e.kind {
                if matches!(&base.kind, ExprKind::Ident(n) if n == array) {
                    reads.push((e.clone(), along.key(k, i)));
                }
            }
        });
    }
    let is_window = |i: &Expr| along.key(k, i).is_some();
    let scan = Scan {
        k,
        array,
        axes: vec![along.positions()],
        is_window: &is_window,
        expected: format!(
            "the window index `{}`, a copy of it or a clamp of it with `min`, `max` or `?:`",
            print::expression(&element)
        ),
    };
    let guard = scan.guard(&body)?.into_iter().map(|(_, a)| a).collect();
    let (first, last) = range(k, &h, l)?;
    let place = Place::of(&k.f.body, l.meta.id)?;
    if declared >= place.at {
        return Err(format!(
            "`{index}` is declared after a statement that may return, so the tile cannot be loaded before it"
        )
        .into());
    }
    let (mut bounds, uniform) = split_conditions(k, &place.conds, &[index])?;
    let (below, from) = bounds.remove(0);
    let offset = vec![Offset::Counter(h.var.clone())];
    // Every read is of the window (the scan checked it): the same key of
    // the position in all of them, else no one tile element serves them.
    let keys: Vec<Key> = reads.iter().filter_map(|(_, key)| key.clone()).collect();
    let Some(key) = keys.first().cloned() else {
        return Err(format!("the loop does not read `{array}`").into());
    };
    let p = || ident("p");
    if !keys.iter().all(|x| equiv_expr(&x.at(p()), &key.at(p()))) {
        return Err(
            format!("its reads of `{array}` take different elements at the same position").into(),
        );
    }
    Ok(Window {
        axis: Axis {
            index: index.to_string(),
            first,
            start: h.start.clone(),
            last,
            below,
            from,
            guard,
        },
        place,
        uniform,
        served: Served {
            targets: vec![l.meta.id],
            reads: reads
                .into_iter()
                .map(|(r, _)| (r, offset.clone()))
                .collect(),
            boxes: vec![vec![(first, last)]],
        },
        key,
    })
}

/// The header of loop `l` over a window's offsets, its body free of
/// jumps.
pub(crate) fn header(k: &Kernel, l: &Stmt) -> Result<Header, Refusal> {
    let h = Header::of(l, &k.fixed)?;
    if Effects::of(&loop_body(l)).jumps {
        return Err(Refusal::Jumps {
            what: "its body may",
        });
    }
    Ok(h)
}

/// The first and last offsets of loop `l` with header `h`: constants,
/// the range not empty, the counter an `int`.
pub(crate) fn range(k: &Kernel, h: &Header, l: &Stmt) -> Result<(i64, i64), Refusal> {
    let (Some(first), Some(end)) = (value(&h.start, &k.consts), value(&h.end, &k.consts)) else {
        return Err(
            "its range is not fixed by constants (a radius from a parameter would need dynamic shared memory sized at every launch, which is not done)"
                .into(),
        );
    };
    if end <= first {
        return Err("its range is empty".into());
    }
    if !loop_counter_is_int(l) {
        return Err(format!("its counter `{}` is not an `int`", h.var).into());
    }
    Ok((first, end - 1))
}

/// The bounds on a thread index on the way to a window loop: the `n` of
/// each `index < n`, the `m` of each `index >= m`.
pub(crate) type Bounds = (Vec<Expr>, Vec<Expr>);

/// The conditions `conds` on the way to a window loop, split into the
/// bounds on each of the thread indices `indices` (for each, the `n` of
/// `index < n` and the `m` of `index >= m`) and the conditions that are
/// the same in every thread of the block; `!(a || b)` counts as `!a` and
/// `!b`.
pub(crate) fn split_conditions(
    k: &Kernel,
    conds: &[Expr],
    indices: &[&str],
) -> Result<(Vec<Bounds>, Vec<Expr>), Refusal> {
    let mut bounds = vec![(Vec::new(), Vec::new()); indices.len()];
    let mut same = Vec::new();
    let mut atoms: Vec<Expr> = conds.iter().flat_map(conjuncts).cloned().collect();
    while let Some(atom) = atoms.pop() {
        if let ExprKind::Unary(UnOp::Not, x) = &atom.kind {
            if let ExprKind::Binary(BinOp::Or, a, b) = &x.kind {
                for y in [a, b] {
                    atoms.push(expr(ExprKind::Unary(UnOp::Not, y.clone())));
                }
                continue;
            }
        }
        let bound = indices
            .iter()
            .enumerate()
            .find_map(|(at, i)| Some((at, thread_bound(k, &atom, &ident(i))?)));
        if let Some((at, (op, n))) = bound {
            match op {
                BinOp::Lt => bounds[at].0.insert(0, n),
                _ => bounds[at].1.insert(0, n),
            }
        } else if uniform(&atom, &k.fixed) && is_pure(&atom) {
            same.insert(0, atom);
        } else {
            let bounds: Vec<String> = indices.iter().map(|i| format!("`{i} < n`")).collect();
            return Err(format!(
                "the condition `{}` on the way to it is neither {} nor the same in every thread of the block",
                print::expression(&atom),
                bounds.join(" or ")
            )
            .into());
        }
    }
    Ok((bounds, same))
}

/// Whether the loop declares its counter `int`.
fn loop_counter_is_int(l: &Stmt) -> bool {
    let StmtKind::For {
        init: Some(init), ..
    } = &l.kind
    else {
        return false;
    };
    matches!(&init.kind, StmtKind::Decl(ds)
        if ds.iter().all(|d| d.ty.base == BaseType::Int && !d.ty.is_pointer()))
}

/// `atom` as a bound `i < n` or `i >= m` on `me` (written also `n > i`,
/// `!(i >= n)`, `i <= c` for `i < c + 1`, `i > c` for `i >= c + 1`),
/// `n` and `m` fixed: `c + 1` folded when `c` is a constant, otherwise
/// computed in `long long`, where it cannot overflow.
fn thread_bound(k: &Kernel, atom: &Expr, me: &Expr) -> Option<Atom> {
    let (op, e) = match &atom.kind {
        ExprKind::Unary(UnOp::Not, x) => {
            let (op, e) = k.bound_on(x, me)?;
            let negated = match op {
                BinOp::Lt => BinOp::Ge,
                BinOp::Ge => BinOp::Lt,
                BinOp::Le => BinOp::Gt,
                _ => BinOp::Le,
            };
            (negated, e)
        }
        _ => k.bound_on(atom, me)?,
    };
    let plus_one = |e: Expr| match value(&e, &k.consts).and_then(|v| v.checked_add(1)) {
        Some(v) if v >= 0 => ast_util::int(v.unsigned_abs()),
        _ => bin(BinOp::Add, ast_util::long_long(e), ast_util::int(1)),
    };
    match op {
        BinOp::Lt | BinOp::Ge => Some((op, e)),
        BinOp::Le => Some((BinOp::Lt, plus_one(e))),
        _ => Some((BinOp::Ge, plus_one(e))),
    }
}

/// The walk over a loop body that finds every read of the array and the
/// bounds on the window's positions it stands under.
pub(crate) struct Scan<'a> {
    /// What the recognizer knows of the kernel.
    pub(crate) k: &'a Kernel<'a>,
    /// The array read.
    pub(crate) array: &'a str,
    /// For each axis, its position (`i + k`) and the locals equal to it.
    pub(crate) axes: Vec<Vec<Expr>>,
    /// Whether an index is the window's.
    pub(crate) is_window: &'a dyn Fn(&Expr) -> bool,
    /// The window's index in words, for refusals.
    pub(crate) expected: String,
}

/// A bound on the position along axis `.0`.
pub(crate) type AxisAtom = (usize, Atom);

impl Scan<'_> {
    /// The bounds every read of the array in `body` stands under, the
    /// same for all of them.
    pub(crate) fn guard(&self, body: &[Stmt]) -> Result<Vec<AxisAtom>, Refusal> {
        let mut reads = Vec::new();
        self.stmts(body, &[], &mut reads)?;
        let a = self.array;
        let Some(guard) = reads.first().cloned() else {
            return Err(format!("the loop does not read `{a}`").into());
        };
        let same_guard = |g: &Vec<AxisAtom>| {
            g.len() == guard.len()
                && g.iter()
                    .zip(&guard)
                    .all(|(a, b)| a.0 == b.0 && a.1 .0 == b.1 .0 && equiv_expr(&a.1 .1, &b.1 .1))
        };
        if !reads.iter().all(same_guard) {
            return Err(format!(
                "its reads of `{a}` stand under different bounds on `{}`",
                self.positions()
            )
            .into());
        }
        Ok(guard)
    }

    /// The positions of the axes, for refusals (`y + dy` or `x + dx`).
    fn positions(&self) -> String {
        let ps: Vec<String> = self
            .axes
            .iter()
            .filter_map(|a| a.first().map(print::expression))
            .collect();
        ps.join("` or `")
    }

    /// Whether `s` mentions the array.
    fn mentions(&self, s: &Stmt) -> bool {
        Effects::of(std::slice::from_ref(s))
            .reads
            .contains(self.array)
    }

    fn stmts(
        &self,
        stmts: &[Stmt],
        guard: &[AxisAtom],
        out: &mut Vec<Vec<AxisAtom>>,
    ) -> Result<(), Refusal> {
        let a = self.array;
        for s in stmts {
            if !self.mentions(s) {
                continue;
            }
            match &s.kind {
                StmtKind::Block(b) => self.stmts(b, guard, out)?,
                StmtKind::If { cond, then, els } => {
                    let cond_stmt = ast_util::stmt(StmtKind::Expr(cond.clone()));
                    if self.mentions(&cond_stmt) {
                        return Err(format!("`{a}` is read in the condition of an `if`").into());
                    }
                    if els.as_ref().is_some_and(|e| self.mentions(e)) {
                        return Err(format!("`{a}` is read in an `else` branch").into());
                    }
                    let mut inner = guard.to_vec();
                    for atom in conjuncts(cond) {
                        let Some(b) = self.axes.iter().enumerate().find_map(|(at, xs)| {
                            xs.iter()
                                .find_map(|x| self.k.bound_on(atom, x))
                                .map(|b| (at, b))
                        }) else {
                            return Err(format!(
                                "`{a}` is read under a condition (`{}`) that is not a bound on `{}`",
                                print::expression(atom),
                                self.positions()
                            )
                            .into());
                        };
                        inner.push(b);
                    }
                    self.stmts(&ast_util::branch_stmts(then), &inner, out)?;
                }
                StmtKind::Expr(e) => self.reads(e, guard, out)?,
                StmtKind::Decl(ds) => {
                    for d in ds {
                        match &d.init {
                            Some(Init::Expr(e)) => self.reads(e, guard, out)?,
                            Some(Init::List(_)) => {
                                return Err(format!("`{a}` is read in an initializer list").into())
                            }
                            None => {}
                        }
                    }
                }
                _ => {
                    return Err(
                        format!("`{a}` is read in a nested loop, a `switch` or a `return`").into(),
                    )
                }
            }
        }
        Ok(())
    }

    fn reads(
        &self,
        root: &Expr,
        guard: &[AxisAtom],
        out: &mut Vec<Vec<AxisAtom>>,
    ) -> Result<(), Refusal> {
        let mut bad = None;
        ast_util::visit_expr(root, &mut |e| {
            let ExprKind::Index(base, i) = &e.kind else {
                return;
            };
            if !matches!(&base.kind, ExprKind::Ident(n) if n == self.array) {
                return;
            }
            if !(self.is_window)(i) {
                bad.get_or_insert(format!(
                    "its index `{}` is not {}",
                    print::expression(i),
                    self.expected
                ));
            } else if !unconditional_in(root, e.meta.id) {
                bad.get_or_insert(
                    "a read of it is conditional within its expression (`&&`, `||` or `?:`)"
                        .to_string(),
                );
            } else {
                out.push(guard.to_vec());
            }
        });
        match bad {
            Some(why) => Err(why.into()),
            None => Ok(()),
        }
    }
}

/// The name loop `l` declares as its counter (`k` of `for (int k = …`).
pub(crate) fn counter(l: &Stmt) -> Option<&str> {
    let StmtKind::For {
        init: Some(init), ..
    } = &l.kind
    else {
        return None;
    };
    match &init.kind {
        StmtKind::Decl(ds) => match ds.as_slice() {
            [d] => Some(&d.name),
            _ => None,
        },
        _ => None,
    }
}

/// Whether loop `l` reads `array` at an index that names both its
/// counter and one of the global `indices`: a window, perhaps one the
/// transform does not handle (`a[2 * i + k]`), worth a reason when it is
/// left alone.
pub(crate) fn looks_like_window(l: &Stmt, array: &str, indices: &[(usize, String)]) -> bool {
    let Some(k) = counter(l) else {
        return false;
    };
    let mut found = false;
    let body = loop_body(l);
    // The locals computed from the counter and a global index (`int j =
    // i + k;`, perhaps clamped).
    let mut copies: Vec<String> = Vec::new();
    for s in &body {
        if let StmtKind::Decl(ds) = &s.kind {
            for d in ds {
                if let Some(Init::Expr(e)) = &d.init {
                    let used = names(e);
                    if used.contains(k) && indices.iter().any(|(_, g)| used.contains(g)) {
                        copies.push(d.name.clone());
                    }
                }
            }
        }
    }
    for s in &body {
        ast_util::visit_stmt_exprs(s, &mut |e| {
            let ExprKind::Index(base, i) = &e.kind else {
                return;
            };
            if !matches!(&base.kind, ExprKind::Ident(n) if n == array) {
                return;
            }
            let mut names = BTreeSet::new();
            ast_util::visit_expr(i, &mut |x| {
                if let ExprKind::Ident(n) = &x.kind {
                    names.insert(n.as_str().to_string());
                }
            });
            found |= (names.contains(k) && indices.iter().any(|(_, g)| names.contains(g)))
                || copies.iter().any(|c| names.contains(c));
        });
    }
    found
}

/// The arrays loop `l` reads as `a[i + k]` (`i` one of `indices`, `k`
/// the loop's counter) that the kernel also writes.
pub(crate) fn written_windows(
    f: &Function,
    l: &Stmt,
    indices: &[(usize, String)],
    effects: &Effects,
) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let Some(k) = counter(l) else {
        return found;
    };
    let elements: Vec<Expr> = indices
        .iter()
        .map(|(_, i)| bin(BinOp::Add, ident(i), ident(k)))
        .collect();
    for s in loop_body(l) {
        ast_util::visit_stmt_exprs(&s, &mut |e| {
            if let ExprKind::Index(base, i) = &e.kind {
                if let ExprKind::Ident(n) = &base.kind {
                    if effects.array_writes.contains(n)
                        && f.params.iter().any(|p| &p.name == n && p.ty.is_pointer())
                        && elements.iter().any(|x| equiv_expr(x, i))
                    {
                        found.insert(n.clone());
                    }
                }
            }
        });
    }
    found
}
