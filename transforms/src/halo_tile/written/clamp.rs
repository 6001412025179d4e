//! Reads clamped at the ends (`in[max(i - 1, 0)]`, `in[min(n - 1, i +
//! 1)]`, `in[i + 1 < n ? i + 1 : n - 1]`): taking the clamps off an index,
//! and the proof that one tile element per position serves every read.

use copper::cuda::ast::{BinOp, Expr, ExprKind};
use copper::cuda::print;

use super::{Poly, Unclamped, Written};
use crate::ast_util::{self, int};
use crate::halo_tile::kernel::Kernel;
use crate::halo_tile::window::Axis;
use crate::Refusal;

impl Written<'_, '_> {
    /// Index `i` with its clamps against fixed `int` bounds of `k` taken
    /// off (`min(max(i - 1, 0), n - 1)`, `max(0, i - 1)`, `i > 0 ? i - 1 :
    /// 0`), one on each side at most; `symbols` are the thread's indices.
    pub(super) fn unclamp<'e>(
        &'e self,
        k: &Kernel,
        i: &'e Expr,
        symbols: &[&str],
    ) -> Unclamped<'e> {
        let mut found: Unclamped<'e> = (i, [None, None]);
        while let Some((side, inner, bound)) = self.clamp_at(k, found.0, symbols) {
            if found.1[side].is_some() {
                break;
            }
            found = (inner, found.1);
            found.1[side] = Some(bound);
        }
        found
    }

    /// `e` as a clamp of an index against a fixed `int` of `k`: the side
    /// (0 for `max`, 1 for `min`), the index and the bound. `max(e, lo)`
    /// and `min(e, hi)` (either order), or a conditional that picks the
    /// same: `c ? e : b` where `c` holds exactly when `e - b >= 0` (written
    /// `e >= b` or `e > b`, after constants and the thread's indices are
    /// compared: `i > 0 ? i - 1 : 0`) is `max(e, b)`, when `b - e >= 0` it
    /// is `min(e, b)`; `c ? b : e` the other way round. A local never
    /// assigned stands for its value.
    fn clamp_at<'e>(
        &'e self,
        k: &Kernel,
        e: &'e Expr,
        symbols: &[&str],
    ) -> Option<(usize, &'e Expr, &'e Expr)> {
        let split = |a: &'e Expr, b: &'e Expr| match (k.int_operand(a), k.int_operand(b)) {
            (false, true) => Some((a, b, true)),
            (true, false) => Some((b, a, false)),
            _ => None,
        };
        match &e.kind {
            ExprKind::Call(call, args) if call == "max" || call == "min" => {
                let [a, b] = args.as_slice() else {
                    return None;
                };
                let (inner, bound, _) = split(a, b)?;
                Some((usize::from(call == "min"), inner, bound))
            }
            // A local never assigned holding the clamp (`int left = i > 0
            // ? i - 1 : 0;`).
            ExprKind::Ident(n) => self.clamp_at(k, self.locals.get(n)?, symbols),
            ExprKind::Cond(c, a, b) => {
                let (inner, bound, inner_if_true) = split(a, b)?;
                // `c` as `Σ plus − Σ minus + d >= 0`.
                let ExprKind::Binary(op, l, r) = &c.kind else {
                    return None;
                };
                let (plus, minus, d) = match op {
                    BinOp::Ge => (l, r, 0),
                    BinOp::Gt => (l, r, -1),
                    BinOp::Le => (r, l, 0),
                    BinOp::Lt => (r, l, -1),
                    _ => return None,
                };
                // `c` against `e - b >= 0` (or `e - b > 0`, the same pick
                // at `e = b`): what is left is 0 or -1.
                let tight = |x: &Expr, y: &Expr| {
                    self.constant_in(&[plus, y], &[minus, x], d, symbols)
                        .is_some_and(|v| v == 0 || v == -1)
                };
                let side = match (tight(inner, bound), tight(bound, inner)) {
                    // `c` is `e >= b`: the index when it holds is `max`.
                    (true, _) => usize::from(!inner_if_true),
                    // `c` is `b >= e`: the index when it holds is `min`.
                    (_, true) => usize::from(inner_if_true),
                    _ => return None,
                };
                Some((side, inner, bound))
            }
            _ => None,
        }
    }

    /// `Σ plus − Σ minus + c` when it is a constant.
    fn constant(&self, plus: &[&Expr], minus: &[&Expr], c: i64) -> Option<i64> {
        self.constant_in(plus, minus, c, &[])
    }

    /// `Σ plus − Σ minus + c`, the thread's indices `symbols` as names,
    /// when it is a constant.
    fn constant_in(
        &self,
        plus: &[&Expr],
        minus: &[&Expr],
        c: i64,
        symbols: &[&str],
    ) -> Option<i64> {
        let mut total = Poly::from([(Vec::new(), c)]);
        for (es, sign) in [(plus, 1), (minus, -1)] {
            for e in es {
                for (m, v) in self.fold(self.poly(e, symbols, 0)?, None)? {
                    let t = total.entry(m).or_insert(0);
                    *t = t.checked_add(v.checked_mul(sign)?)?;
                }
            }
        }
        total.retain(|_, v| *v != 0);
        match total.len() {
            0 => Some(0),
            1 => total.get(&Vec::new()).copied(),
            _ => None,
        }
    }

    /// The bounds the reads `found` (each with its clamps `clamps` along
    /// axis `n`) clamp the position to along axis `a`, when one tile element per
    /// position serves them all: the tile loads `min(max(j, lo), hi)` at
    /// position `j`, which is what every read makes of `j` for every
    /// thread that reaches it. A read without the lower clamp needs `j >=
    /// lo`, one without the upper `j <= hi`; with both bounds, `lo <= hi`
    /// (so `min(max(j, lo), hi)` is `max(min(j, hi), lo)`, and a read
    /// clamped below only reads `max(j, lo) <= hi`). Proved from the
    /// thread's bounds: `i >= 0` (the global index) or `i >= m`, and `i <
    /// b`, as constant differences (`n - 1` against `i < n`).
    pub(super) fn clamp_of(
        &self,
        a: &Axis,
        n: usize,
        found: &[(Expr, Vec<i64>)],
        clamps: &[[Option<&Expr>; 2]],
    ) -> Result<[Option<Expr>; 2], Refusal> {
        let mut bounds: [Option<&Expr>; 2] = [None, None];
        for c in clamps {
            for side in 0..2 {
                match (bounds[side], c[side]) {
                    (Some(x), Some(y)) if !ast_util::equiv_expr(x, y) => {
                        return Err(format!(
                            "its reads are clamped to different bounds (`{}` and `{}`)",
                            print::expression(x),
                            print::expression(y)
                        )
                        .into())
                    }
                    (None, y) => bounds[side] = y,
                    _ => {}
                }
            }
        }
        let zero = int(0);
        let from: Vec<&Expr> = a.from.iter().chain([&zero]).collect();
        let at_least = |lo: &Expr, c: i64| {
            from.iter()
                .any(|m| self.constant(&[m], &[lo], c).is_some_and(|d| d >= 0))
        };
        let at_most = |hi: &Expr, c: i64| {
            a.below.iter().any(|b| {
                1i64.checked_sub(c)
                    .and_then(|one_less| self.constant(&[hi], &[b], one_less))
                    .is_some_and(|d| d >= 0)
            })
        };
        if let [Some(lo), Some(hi)] = bounds {
            let ordered = a.below.iter().any(|b| {
                from.iter()
                    .any(|m| self.constant(&[hi, m], &[lo, b], 1).is_some_and(|d| d >= 0))
            });
            if !ordered {
                return Err(format!(
                    "copper cannot show that the clamp's bounds `{}` and `{}` are in order for every thread that reads",
                    print::expression(lo),
                    print::expression(hi)
                )
                .into());
            }
        }
        for ((r, o), c) in found.iter().zip(clamps) {
            let off = o.get(n).copied().unwrap_or(0);
            let lower = match (bounds[0], c[0]) {
                (Some(lo), None) => at_least(lo, off),
                _ => true,
            };
            let upper = match (bounds[1], c[1]) {
                (Some(hi), None) => at_most(hi, off),
                _ => true,
            };
            if !(lower && upper) {
                return Err(format!(
                    "copper cannot show that `{}` reads what the clamp of the other reads makes of its position for every thread that reads it",
                    print::expression(r)
                )
                .into());
            }
        }
        Ok(bounds.map(|b| b.cloned()))
    }
}

/// The clamps of a 2-D read, one pair (lower, upper) per axis.
pub(super) type AxisClamps<'e> = Vec<[Option<&'e Expr>; 2]>;

impl Written<'_, '_> {
    /// Index `i` of a 2-D read along `axes` (`[y, x]`) with the clamps of
    /// its row and its column taken off (`max(y - 1, 0) * w + min(x + 1,
    /// w - 1)`, the clamps perhaps in locals never assigned: `yu * w +
    /// xr`):
    /// the index with each clamp replaced by the position it clamps
    /// (`(y - 1) * w + (x + 1)`), and the clamps of each axis. `None` when
    /// a clamp is not of the whole row or the whole column: the index must
    /// be `Y * w + X` with `Y` the row position or its clamp and `X` the
    /// column position or its clamp, checked on the index with each clamp
    /// as a name of its own (so `max(y - 1, 0) * 0 + (y - 1) * w` is not
    /// taken for a clamped row).
    pub(super) fn unclamp_axes<'e>(
        &'e self,
        k: &Kernel,
        i: &'e Expr,
        axes: &[&str],
    ) -> Option<(Expr, AxisClamps<'e>)> {
        let mut clamps: AxisClamps<'e> = vec![[None, None]; axes.len()];
        let mut seen = vec![false; axes.len()];
        let named = self.strip(k, i, axes, (&mut clamps, &mut seen), true, 0)?;
        let unclamped = self.strip(k, i, axes, (&mut Vec::new(), &mut Vec::new()), false, 0)?;
        if !seen.contains(&true) {
            return Some((unclamped, clamps));
        }
        let [y, x] = axes else {
            return None;
        };
        let (w, o) = self.offsets(&unclamped, axes)?;
        let w = w?;
        let (ny, nx) = (placeholder(0), placeholder(1));
        let symbols = [*y, *x, ny.as_str(), nx.as_str()];
        let part = |n: usize, pos: &str, c: i64| match seen[n] {
            true => ast_util::ident(&placeholder(n)),
            false => ast_util::bin(BinOp::Add, ast_util::ident(pos), super::signed(c)),
        };
        let canonical = ast_util::bin(
            BinOp::Add,
            ast_util::bin(BinOp::Mul, part(0, y, o[0]), ast_util::ident(&w)),
            part(1, x, o[1]),
        );
        let poly = |e: &Expr| self.fold(self.poly(e, &symbols, 0)?, Some(&w));
        (poly(&named)? == poly(&canonical)?).then_some((unclamped, clamps))
    }

    /// `e` with the clamps of a position along one of `axes` replaced by
    /// the position (`named` false) or by a name for the axis (`named`
    /// true, the clamps recorded in `found`, one per axis at most), the
    /// locals never assigned that may hold one replaced by their values.
    fn strip<'e>(
        &'e self,
        k: &Kernel,
        e: &'e Expr,
        axes: &[&str],
        found: (&mut AxisClamps<'e>, &mut Vec<bool>),
        named: bool,
        depth: u32,
    ) -> Option<Expr> {
        let (inner, clamp) = self.unclamp(k, e, axes);
        if clamp.iter().any(Option::is_some) {
            let n = axes
                .iter()
                .position(|a| self.offsets(inner, &[a]).is_some())?;
            if !named {
                return Some(inner.clone());
            }
            let (clamps, seen) = found;
            if seen[n] {
                return None;
            }
            seen[n] = true;
            clamps[n] = clamp;
            return Some(ast_util::ident(&placeholder(n)));
        }
        if let ExprKind::Ident(n) = &e.kind {
            let local = self
                .locals
                .get(n)
                .filter(|_| depth < 8 && !axes.contains(&n.as_str()) && !self.k.int_operand(e));
            return match local {
                Some(v) => self.strip(k, v, axes, found, named, depth + 1),
                None => Some(e.clone()),
            };
        }
        let (clamps, seen) = found;
        let mut sub =
            |x: &'e Expr| self.strip(k, x, axes, (&mut *clamps, &mut *seen), named, depth);
        Some(match &e.kind {
            ExprKind::Binary(op, a, b) => {
                let a = sub(a)?;
                ast_util::bin(*op, a, sub(b)?)
            }
            ExprKind::Unary(op, x) => ast_util::expr(ExprKind::Unary(*op, Box::new(sub(x)?))),
            _ => e.clone(),
        })
    }
}

/// The name standing for the clamp of axis `n` (not a C name, so it
/// meets none of the kernel's).
fn placeholder(n: usize) -> String {
    format!("@clamp{n}")
}
