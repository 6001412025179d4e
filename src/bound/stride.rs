//! Loops strided by launch dimensions the analysis does not know.
//!
//! A grid-stride loop
//! `for (i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)`
//! runs `⌈(n − start) / stride⌉ ≤ ⌈max(0, n) / stride⌉` times in every
//! lane whose start is at least 0, so a warp runs it at most that often.
//! With the block known the stride is a constant the linear facts divide
//! by; with it unknown the stride is a product of launch dimensions no
//! linear fact can divide by, and the bound would pay one iteration per
//! element. Such a loop gets a ghost counter bounded by a new input
//! variable named `⌈n/(blockDim.x·gridDim.x)⌉` ([`quotient_name`]), whose
//! value a bound's evaluation derives from `n` and the launch
//! ([`quotient_value`]).
//!
//! The count holds only while the counter cannot pass its type's maximum
//! (`i + stride` with `i < n`) and the stride and start are computed
//! without wrapping around. Where the largest block and grid allow that,
//! nothing is assumed; otherwise the loop gets its ghost under assumptions
//! on `n` and on the grid (`n ≤ 2^30` and `gridDim.x ≤ 2^20` for an
//! `int` counter and a grid stride, `n ≤ 2^31 − 2^10` for a block
//! stride), reported with every bound.

use std::collections::{BTreeMap, BTreeSet};

use super::assumption::{InputAssumption, Subject};
use super::counter::{count_writes, single_update, widens};
use crate::absint::deps::LaunchFacts;
use crate::cuda::ast::BinOp;
use crate::ir::{Builtin, Expr, ExprKind, Stmt, Value, Var, VarId, VarKind};
use crate::launch::{MAX_BLOCK_DIM, MAX_GRID_DIM};

/// The name of the input variable standing for `⌈max(0, n) / (d₁·d₂…)⌉`
/// of input `n` and launch dimensions `dims` (`blockDim.x`, …).
pub fn quotient_name(input: &str, dims: &[String]) -> String {
    match dims {
        [one] => format!("⌈{input}/{one}⌉"),
        _ => format!("⌈{input}/({})⌉", dims.join("·")),
    }
}

/// The input and the launch dimensions of a variable named by
/// [`quotient_name`].
pub fn quotient_parts(name: &str) -> Option<(&str, Vec<&str>)> {
    let inner = name.strip_prefix('⌈')?.strip_suffix('⌉')?;
    let (input, dims) = inner.split_once('/')?;
    let dims = dims
        .strip_prefix('(')
        .and_then(|d| d.strip_suffix(')'))
        .unwrap_or(dims);
    Some((input, dims.split('·').collect()))
}

/// The value of a variable named by [`quotient_name`] at the inputs `at`
/// (`None` for any other name, or when an input is missing).
pub fn quotient_value(name: &str, at: &BTreeMap<String, f64>) -> Option<f64> {
    let (input, dims) = quotient_parts(name)?;
    let n = at.get(input)?.max(0.0);
    let mut stride = 1.0;
    for d in dims {
        stride *= at.get(d)?.max(1.0);
    }
    Some((n / stride).ceil())
}

/// What [`strided`] found: the loop's bound input, the launch dimensions
/// of its stride, and what the inputs and the grid must satisfy for its
/// trip count to hold.
#[derive(Clone)]
pub(super) struct Strided {
    /// The input `n` the counter stays below.
    pub input: String,
    /// The stride's launch dimensions, by name, sorted.
    pub dims: Vec<String>,
    /// The ranges assumed (none when every launch and input allows it).
    pub assumed: Vec<InputAssumption>,
}

/// The largest grids (along `x`) tried, most first: all of them, then
/// those that keep a 32-bit stride of a full block in range.
const GRIDS: [i128; 3] = [MAX_GRID_DIM[0] as i128, 1 << 21, 1 << 20];

/// Most local variables followed through their single assignment.
const MAX_DEPTH: usize = 8;

/// The loop `cond`/`body`/`step`, entered after `before` (the statements
/// before it in its list) of kernel `all`, as a loop strided by an unknown
/// block: its condition is `i < n` for an input `n` the kernel never
/// assigns, of the counter's type or converted to it without changing its
/// value, its counter `i` is updated once per iteration
/// at the top level as `i = i + s` with `s` a product of launch
/// dimensions one of which is a block dimension the launch does not fix,
/// and it is last set before the loop to a value at least 0.
#[allow(clippy::too_many_arguments)]
pub(super) fn strided(
    cond: &Expr,
    body: &[Stmt],
    step: &[Stmt],
    before: &[Stmt],
    all: &[Stmt],
    inputs: &BTreeSet<VarId>,
    vars: &[Var],
    launch: &LaunchFacts,
) -> Option<Strided> {
    let ExprKind::Binary(BinOp::Lt, l, r) = &cond.kind else {
        return None;
    };
    let ExprKind::Var(counter) = l.kind else {
        return None;
    };
    // `n`, or `n` converted to a type that holds all its values, or (a
    // signed `n` compared with an unsigned counter) all of them from 0 on:
    // then `0 ≤ n` is assumed, as C makes a negative `n` huge.
    let (n_expr, nonnegative) = match &r.kind {
        ExprKind::Convert { value, .. } if widens(value.ty, r.ty) => (&**value, false),
        ExprKind::Convert { value, .. }
            if value.ty.is_signed()
                && !r.ty.is_signed()
                && value
                    .ty
                    .range()
                    .zip(r.ty.range())
                    .is_some_and(|(v, c)| v.1 <= c.1) =>
        {
            (&**value, true)
        }
        _ => (&**r, false),
    };
    let ExprKind::Var(n) = n_expr.kind else {
        return None;
    };
    if !inputs.contains(&n) || r.ty != l.ty || !matches!(vars[n].kind, VarKind::Param(_)) {
        return None;
    }
    let update = single_update(body, step, counter)?;
    let stride = added_to(update, counter)?;
    let scan = Scan { all, vars, launch };
    let mut dims = Vec::new();
    scan.dims(stride, 0, &mut dims)?;
    let unknown_block = dims
        .iter()
        .any(|b| matches!(b, Builtin::BlockDim(_)) && launch.block.is_none());
    if !unknown_block {
        return None;
    }
    let start = last_set(before, counter)?;
    let (_, counter_max) = l.ty.range()?;
    let (_, n_max) = vars[n].ty.range()?;
    let counter_name = &vars[counter].name;
    for grid_x in GRIDS {
        let caps = Caps { launch, grid_x };
        let Some(stride_max) = scan.max(stride, &caps, 0) else {
            continue;
        };
        // The start is at least 0 and in the counter's range: computed
        // without wrapping around, or of an unsigned type the counter
        // holds every value of.
        let start_fits = scan
            .max(start, &caps, 0)
            .map_or_else(|| unsigned_within(start, counter_max), |m| m <= counter_max);
        // `i ≤ n − 1` before the update: `n − 1 + stride` must stay in
        // range.
        let largest_n = counter_max + 1 - stride_max;
        if !start_fits || largest_n < 1 {
            continue;
        }
        let mut assumed = Vec::new();
        if grid_x < GRIDS[0] && launch.grid.is_none() && scan.reads_grid_x(stride, start) {
            assumed.push(InputAssumption {
                param: "gridDim.x".into(),
                subject: Subject::GridDim(0),
                min: None,
                max: Some(grid_x),
                counters: format!("`{counter_name}`"),
            });
        }
        if n_max > largest_n || nonnegative {
            assumed.push(InputAssumption {
                param: vars[n].name.clone(),
                subject: Subject::Param(n),
                min: nonnegative.then_some(0),
                max: (n_max > largest_n).then_some(largest_n),
                counters: format!("`{counter_name}`"),
            });
        }
        let mut names: Vec<String> = dims.iter().map(|b| dim_name(*b)).collect();
        names.sort();
        return Some(Strided {
            input: vars[n].name.clone(),
            dims: names,
            assumed,
        });
    }
    None
}

/// Whether `e` (converted to a counter of largest value `most`) is of an
/// unsigned type, before that conversion, whose every value the counter
/// holds: then it is at least 0 whatever it wraps around to.
fn unsigned_within(e: &Expr, most: i128) -> bool {
    let inner = match &e.kind {
        ExprKind::Convert { value, .. } => value,
        _ => e,
    };
    !inner.ty.is_signed() && inner.ty.range().is_some_and(|(_, m)| m <= most)
}

/// `s` where `update` is `counter + s` (or `s + counter`), possibly
/// converted: what is added to the counter.
fn added_to(update: &Expr, counter: VarId) -> Option<&Expr> {
    fn strip(e: &Expr) -> &Expr {
        match &e.kind {
            ExprKind::Convert { value, .. } => value,
            _ => e,
        }
    }
    let ExprKind::Binary(BinOp::Add, a, b) = &strip(update).kind else {
        return None;
    };
    let is_counter = |e: &Expr| matches!(strip(e).kind, ExprKind::Var(v) if v == counter);
    if is_counter(a) {
        Some(b)
    } else if is_counter(b) {
        Some(a)
    } else {
        None
    }
}

/// The value `counter` is last set to in `before`: `None` when a
/// statement other than a plain assignment may write it there.
fn last_set(before: &[Stmt], counter: VarId) -> Option<&Expr> {
    for s in before.iter().rev() {
        match s {
            Stmt::Assign { var, value, .. } if *var == counter => return Some(value),
            _ if count_writes(std::slice::from_ref(s), counter) > 0 => return None,
            _ => {}
        }
    }
    None
}

/// `threadIdx.x` … as a bound names it.
fn dim_name(b: Builtin) -> String {
    let (what, d) = match b {
        Builtin::BlockDim(d) => ("blockDim", d),
        Builtin::GridDim(d) => ("gridDim", d),
        Builtin::ThreadIdx(d) => ("threadIdx", d),
        Builtin::BlockIdx(d) => ("blockIdx", d),
        Builtin::WarpSize => return "warpSize".into(),
    };
    format!("{what}.{}", ["x", "y", "z"][usize::from(d.min(2))])
}

/// The largest launch a range is computed for: the launch's own
/// dimensions where it fixes them, else the largest CUDA allows, with at
/// most `grid_x` blocks along `x`.
struct Caps<'a> {
    launch: &'a LaunchFacts,
    grid_x: i128,
}

impl Caps<'_> {
    /// The largest value of a launch dimension.
    fn dim(&self, b: Builtin) -> i128 {
        match b {
            Builtin::BlockDim(d) => match self.launch.block {
                Some(block) => i128::from(block[usize::from(d)]),
                None => i128::from(MAX_BLOCK_DIM[usize::from(d.min(2))]),
            },
            Builtin::GridDim(d) => match self.launch.grid {
                Some(grid) => i128::from(grid[usize::from(d)]),
                None if d == 0 => self.grid_x,
                None => i128::from(MAX_GRID_DIM[usize::from(d.min(2))]),
            },
            Builtin::ThreadIdx(d) => self.dim(Builtin::BlockDim(d)) - 1,
            Builtin::BlockIdx(d) => self.dim(Builtin::GridDim(d)) - 1,
            Builtin::WarpSize => i128::from(self.launch.warp as u32),
        }
    }
}

/// The kernel a loop's start and stride are read in.
struct Scan<'a> {
    all: &'a [Stmt],
    vars: &'a [Var],
    launch: &'a LaunchFacts,
}

impl Scan<'_> {
    /// The value of local `v` when the kernel assigns it exactly once.
    fn single_value(&self, v: VarId) -> Option<&Expr> {
        if self.vars[v].kind != VarKind::Local || count_writes(self.all, v) != 1 {
            return None;
        }
        let mut found = None;
        crate::ir::visit_stmts(self.all, &mut |s| {
            if let Stmt::Assign { var, value, .. } = s {
                if *var == v {
                    found = Some(value);
                }
            }
        });
        found
    }

    /// Pushes to `out` the launch dimensions whose product `e` is
    /// (through conversions to at least 32 bits and locals assigned
    /// once); `None` when it is anything else.
    fn dims(&self, e: &Expr, depth: usize, out: &mut Vec<Builtin>) -> Option<()> {
        match &e.kind {
            ExprKind::Builtin(b @ (Builtin::BlockDim(_) | Builtin::GridDim(_))) => out.push(*b),
            ExprKind::Binary(BinOp::Mul, a, b) => {
                self.dims(a, depth, out)?;
                self.dims(b, depth, out)?;
            }
            ExprKind::Convert { value, .. } if e.ty.size() >= 4 => self.dims(value, depth, out)?,
            ExprKind::Var(v) if depth < MAX_DEPTH => {
                self.dims(self.single_value(*v)?, depth + 1, out)?
            }
            _ => return None,
        }
        Some(())
    }

    /// The largest value of `e` at launches within `caps`, when `e` is
    /// at least 0 and computed without wrapping around there: sums,
    /// products and quotients of launch indices and dimensions, constants
    /// at least 0 and locals assigned once to such values.
    fn max(&self, e: &Expr, caps: &Caps, depth: usize) -> Option<i128> {
        let m = match &e.kind {
            ExprKind::Const(Value::I(c)) if *c >= 0 => i128::from(*c),
            ExprKind::Builtin(b) => caps.dim(*b),
            ExprKind::Binary(op, a, b) => {
                let x = self.max(a, caps, depth)?;
                match op {
                    BinOp::Add => x.checked_add(self.max(b, caps, depth)?)?,
                    BinOp::Mul => x.checked_mul(self.max(b, caps, depth)?)?,
                    // A quotient, remainder or right shift of a value at
                    // least 0 by one at least 0 is at most the value.
                    BinOp::Div | BinOp::Rem | BinOp::Shr => {
                        self.max(b, caps, depth)?;
                        x
                    }
                    _ => return None,
                }
            }
            ExprKind::Convert { value, .. } => self.max(value, caps, depth)?,
            ExprKind::Var(v) if depth < MAX_DEPTH => {
                self.max(self.single_value(*v)?, caps, depth + 1)?
            }
            _ => return None,
        };
        let (_, most) = e.ty.range()?;
        (m <= most).then_some(m)
    }

    /// Whether the stride or the start read `gridDim.x` or `blockIdx.x`
    /// (directly or through locals assigned once): only then does the
    /// grid's size matter to their ranges.
    fn reads_grid_x(&self, stride: &Expr, start: &Expr) -> bool {
        fn reads(scan: &Scan, e: &Expr, depth: usize) -> bool {
            let mut found = false;
            e.visit(&mut |x| match x.kind {
                ExprKind::Builtin(Builtin::GridDim(0) | Builtin::BlockIdx(0)) => found = true,
                ExprKind::Var(v) if depth < MAX_DEPTH => {
                    if let Some(value) = scan.single_value(v) {
                        found |= reads(scan, value, depth + 1);
                    }
                }
                _ => {}
            });
            found
        }
        self.launch.grid.is_none() && (reads(self, stride, 0) || reads(self, start, 0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotients_are_named_and_derived_from_the_launch() {
        let two = quotient_name("n", &["blockDim.x".into(), "gridDim.x".into()]);
        assert_eq!(two, "⌈n/(blockDim.x·gridDim.x)⌉");
        let one = quotient_name("n", &["blockDim.x".into()]);
        assert_eq!(one, "⌈n/blockDim.x⌉");
        assert_eq!(quotient_parts(&one), Some(("n", vec!["blockDim.x"])));
        let at: BTreeMap<String, f64> = [
            ("n".to_string(), 1000.0),
            ("blockDim.x".to_string(), 128.0),
            ("gridDim.x".to_string(), 4.0),
        ]
        .into();
        assert_eq!(quotient_value(&two, &at), Some(2.0));
        assert_eq!(quotient_value(&one, &at), Some(8.0));
        let negative: BTreeMap<String, f64> =
            [("n".to_string(), -5.0), ("blockDim.x".to_string(), 128.0)].into();
        assert_eq!(quotient_value(&one, &negative), Some(0.0));
        assert_eq!(quotient_value("log2(n)", &at), None);
        assert_eq!(quotient_value(&two, &negative), None);
    }
}
