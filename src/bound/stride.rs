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
//! A loop up to `n` inclusive (`i <= n`, `n >= i`) runs
//! `⌊(n − start)/stride⌋ + 1 ≤ ⌈max(0, n + 1)/stride⌉` times, counted by
//! `⌈(n+1)/(blockDim.x·gridDim.x)⌉`. A stride with constant factors
//! (`2 * blockDim.x`) is that constant times the launch dimensions, all at
//! least 1: the quotient divides by the constant too
//! (`⌈n/(2·blockDim.x)⌉`). A loop up to `n / 4` divides by 4 more, one
//! up to `min(n, k)` counts as one up to `n`, and one up to `max(n, k)`
//! is counted by `⌈max(n,k)/(blockDim.x·gridDim.x)⌉` (see `limit`). A cooperative group's `size()` is lowered to
//! the product of the dimensions it stands for; a block's distinct
//! dimensions multiply to at most 1024 threads (CUDA's limit, which the
//! simulator enforces), which the ranges below use.
//!
//! The count holds only while the counter cannot pass its type's maximum
//! (`i + stride` with `i < n`, or `i ≤ n`) and the stride and start are
//! computed without wrapping around (every intermediate value of their
//! expressions is checked against its type at the largest launch allowed).
//! Where the largest block and grid allow that, nothing is assumed;
//! otherwise the loop gets its ghost under assumptions on `n` and on the
//! grid (`n ≤ 2^30` and `gridDim.x ≤ 2^20` for an `int` counter and a grid
//! stride, `n ≤ 2^31 − 2^10` for a block stride, `gridDim.y ≤ 1` and
//! `gridDim.z ≤ 1` where the stride is the whole grid's threads),
//! reported with every bound, saying whether a larger grid would wrap the
//! stride around or carry the counter past its maximum.

use std::collections::{BTreeMap, BTreeSet};

use super::assumption::{GridCause, InputAssumption, Subject};
use super::counter::{count_writes, single_update};
use super::limit;
use crate::absint::deps::LaunchFacts;
use crate::cuda::ast::BinOp;
use crate::ir::{Builtin, Expr, ExprKind, Stmt, Value, Var, VarId, VarKind};
use crate::launch::{MAX_BLOCK_DIM, MAX_BLOCK_THREADS, MAX_GRID_DIM};

/// A quotient input `⌈max(0, n + plus) / (factor·d₁·d₂…)⌉` of input `n`,
/// `plus` 0 or 1 (`i < n` or `i <= n`), a constant `factor` at least 1
/// and launch dimensions `dims` (`blockDim.x`, …): how [`quotient_name`]
/// writes it and [`quotient_parts`] reads it back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Quotient<'a> {
    /// The input `n`.
    pub input: &'a str,
    /// Whether `n + 1` is divided (the loop runs while `i <= n`).
    pub plus_one: bool,
    /// The constant factor of the divisor, at least 1.
    pub factor: u64,
    /// The launch dimensions of the divisor, by name.
    pub dims: Vec<&'a str>,
}

/// The name of the input variable standing for `⌈max(0, n) / (d₁·d₂…)⌉`
/// of input `n` and launch dimensions `dims` (`⌈n/(blockDim.x·gridDim.x)⌉`),
/// or for `⌈max(0, n + 1) / (c·d₁·d₂…)⌉` with `plus_one` and a constant
/// factor `c > 1` (`⌈(n+1)/(4·blockDim.x)⌉`).
pub fn quotient_name(input: &str, plus_one: bool, factor: u64, dims: &[String]) -> String {
    let top = if plus_one {
        format!("({input}+1)")
    } else {
        input.to_string()
    };
    let mut parts: Vec<String> = Vec::new();
    if factor > 1 {
        parts.push(factor.to_string());
    }
    parts.extend(dims.iter().cloned());
    match &parts[..] {
        [one] => format!("⌈{top}/{one}⌉"),
        _ => format!("⌈{top}/({})⌉", parts.join("·")),
    }
}

/// The parts of a variable named by [`quotient_name`].
pub fn quotient_parts(name: &str) -> Option<Quotient<'_>> {
    let inner = name.strip_prefix('⌈')?.strip_suffix('⌉')?;
    let (top, divisor) = inner.split_once('/')?;
    let (input, plus_one) = match top.strip_prefix('(').and_then(|t| t.strip_suffix("+1)")) {
        Some(input) => (input, true),
        None => (top, false),
    };
    let divisor = divisor
        .strip_prefix('(')
        .and_then(|d| d.strip_suffix(')'))
        .unwrap_or(divisor);
    let mut factor = 1u64;
    let mut dims = Vec::new();
    for d in divisor.split('·') {
        match d.parse::<u64>() {
            Ok(c) if c >= 1 => factor = factor.checked_mul(c)?,
            Ok(_) => return None,
            Err(_) => dims.push(d),
        }
    }
    Some(Quotient {
        input,
        plus_one,
        factor,
        dims,
    })
}

/// The value of a variable named by [`quotient_name`] at the inputs `at`
/// (`None` for any other name, or when an input is missing).
pub fn quotient_value(name: &str, at: &BTreeMap<String, f64>) -> Option<f64> {
    let q = quotient_parts(name)?;
    let n = (limit::input_value(q.input, at)? + f64::from(u8::from(q.plus_one))).max(0.0);
    let mut stride = q.factor as f64;
    for d in q.dims {
        stride *= at.get(d)?.max(1.0);
    }
    Some((n / stride).ceil())
}

/// The inputs a quotient's input is the largest of (`n`, or `n` and `k`
/// for `max(n,k)`).
pub fn quotient_inputs(input: &str) -> Vec<&str> {
    limit::input_names(input)
}

/// What [`strided`] found: the loop's bound input, the constant factor
/// and launch dimensions of its stride, and what the inputs and the grid
/// must satisfy for its trip count to hold.
#[derive(Clone)]
pub(super) struct Strided {
    /// The input `n` the counter stays below (or at most at).
    pub input: String,
    /// Whether the loop runs while `i <= n` (else `i < n`).
    pub plus_one: bool,
    /// The stride's constant factor, at least 1.
    pub factor: u64,
    /// The stride's launch dimensions, by name, sorted.
    pub dims: Vec<String>,
    /// The ranges assumed (none when every launch and input allows it).
    pub assumed: Vec<InputAssumption>,
}

impl Strided {
    /// The name of the input variable bounding the loop's trip count.
    pub fn name(&self) -> String {
        quotient_name(&self.input, self.plus_one, self.factor, &self.dims)
    }
}

/// The largest grids (along `x`) tried, most first: all of them, then
/// powers of two from 2^21 (which keeps a 32-bit stride of a full block
/// in range) down to 2^10 (for strides of a constant times the grid's
/// threads).
const GRIDS: [i128; 13] = [
    MAX_GRID_DIM[0] as i128,
    1 << 21,
    1 << 20,
    1 << 19,
    1 << 18,
    1 << 17,
    1 << 16,
    1 << 15,
    1 << 14,
    1 << 13,
    1 << 12,
    1 << 11,
    1 << 10,
];

/// The largest grids along `y` and `z` tried, most first: all of them,
/// then none (a stride of the whole grid, `gridDim.x * gridDim.y *
/// gridDim.z * …`, is 32-bit only for a small grid).
const GRIDS_YZ: [i128; 2] = [MAX_GRID_DIM[1] as i128, 1];

/// The most threads a block has (CUDA's limit; the simulator refuses
/// larger blocks).
const BLOCK_THREADS: i128 = MAX_BLOCK_THREADS as i128;

/// Most local variables followed through their single assignment.
const MAX_DEPTH: usize = 8;

/// The loop `cond`/`body`/`step`, entered after `before` (the statements
/// before it in its list) of kernel `all`, as a loop strided by an unknown
/// block: its condition is `i < n` or `i <= n` (or `n > i`, `n >= i`) for
/// an input `n` the kernel never assigns, of the counter's type or
/// converted to it without changing its value, or `i < L` for a limit `L`
/// over such inputs (`n / 4`, `min(n, k)`, `max(n, k)`: see `limit`), its
/// counter `i` is updated
/// once per iteration at the top level as `i = i + s` with `s` a product
/// of launch dimensions, one of which is a block dimension the launch
/// does not fix, and constants at least 1, and it is last set before the
/// loop to a value at least 0.
///
/// From a start at least 0 the counter takes at most `⌈(n + 1)/s⌉` values
/// `≤ n` (at most `⌈n/s⌉` below `n`) — none for `n < 0` — as long as
/// `i + s` stays in its type: `n ≤ max − s` (or `max + 1 − s`) is
/// assumed where the largest stride allows a larger `n`.
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
    let (l, r, plus_one) = match &cond.kind {
        ExprKind::Binary(BinOp::Lt, l, r) => (l, r, false),
        ExprKind::Binary(BinOp::Le, l, r) => (l, r, true),
        ExprKind::Binary(BinOp::Gt, r, l) => (l, r, false),
        ExprKind::Binary(BinOp::Ge, r, l) => (l, r, true),
        _ => return None,
    };
    let ExprKind::Var(counter) = l.kind else {
        return None;
    };
    // `n`, or `n` converted to a type that holds all its values, or (a
    // signed `n` compared with an unsigned counter) all of them from 0 on:
    // then `0 ≤ n` is assumed, as C makes a negative `n` huge.
    let (n_expr, nonnegative) = match &r.kind {
        ExprKind::Convert { value, .. } if value.ty.widens_to(r.ty) => (&**value, false),
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
    if r.ty != l.ty {
        return None;
    }
    let limit = limit::limit(n_expr, inputs, vars)?;
    let plain = matches!(n_expr.kind, ExprKind::Var(_));
    // `i <= n / D` runs once for `-D < n < 0` (`n / D` is 0 there), past
    // `⌈(n+1)/(D·s)⌉`; a signed limit converted to an unsigned counter
    // is assumed at least 0 only as a plain parameter.
    if !plain && (nonnegative || (plus_one && limit.divisor > 1)) {
        return None;
    }
    let update = single_update(body, step, counter)?;
    let stride = added_to(update, counter)?;
    let scan = Scan { all, vars, launch };
    let product = scan.product(stride)?;
    let unknown_block = product
        .dims
        .iter()
        .any(|b| matches!(b, Builtin::BlockDim(_)) && launch.block.is_none());
    if !unknown_block {
        return None;
    }
    let start = last_set(before, counter)?;
    let (_, counter_max) = l.ty.range()?;
    let mut n_max = i128::MIN;
    for &p in &limit.params {
        n_max = n_max.max(vars[p].ty.range()?.1);
    }
    let counter_name = &vars[counter].name;
    // Why the last grid tried did not do (for the assumption's words).
    let mut cause_yz = GridCause::StrideWraps;
    for grid_yz in GRIDS_YZ {
        let mut cause_x = GridCause::StrideWraps;
        for grid_x in GRIDS {
            let caps = Caps {
                launch,
                grid: [grid_x, grid_yz, grid_yz],
            };
            let Some(stride_max) = scan.max(stride, &caps, 0) else {
                cause_x = GridCause::StrideWraps;
                continue;
            };
            // The start is at least 0 and in the counter's range: computed
            // without wrapping around, or of an unsigned type the counter
            // holds every value of.
            let start_fits = scan
                .max(start, &caps, 0)
                .map_or_else(|| unsigned_within(start, counter_max), |m| m <= counter_max);
            // `i ≤ n − 1` (or `i ≤ n`) before the update: `i + stride`
            // must stay in range.
            let largest_n = counter_max + i128::from(!plus_one) - stride_max;
            if !start_fits || largest_n < 1 {
                cause_x = if start_fits {
                    GridCause::PastMax
                } else {
                    GridCause::StartWraps
                };
                continue;
            }
            let mut assumed = Vec::new();
            for (d, cap, full, cause) in [
                (0, grid_x, GRIDS[0], cause_x),
                (1, grid_yz, GRIDS_YZ[0], cause_yz),
                (2, grid_yz, GRIDS_YZ[0], cause_yz),
            ] {
                if cap < full && launch.grid.is_none() && scan.reads_grid(d, stride, start) {
                    assumed.push(InputAssumption {
                        param: dim_name(Builtin::GridDim(d)),
                        subject: Subject::GridDim(d),
                        min: None,
                        max: Some(cap),
                        counters: format!("`{counter_name}`"),
                        cause,
                    });
                }
            }
            // `n ≤ D·L` keeps `n / D ≤ L`; a constant in the maximum
            // must be that small itself.
            let largest = largest_n.saturating_mul(i128::from(limit.divisor));
            if limit.least.is_some_and(|c| i128::from(c) > largest) {
                cause_x = GridCause::PastMax;
                continue;
            }
            for &n in &limit.params {
                if n_max > largest || nonnegative {
                    assumed.push(InputAssumption {
                        param: vars[n].name.clone(),
                        subject: Subject::Param(n),
                        min: nonnegative.then_some(0),
                        max: (n_max > largest).then_some(largest),
                        counters: format!("`{counter_name}`"),
                        cause: GridCause::default(),
                    });
                }
            }
            let mut names: Vec<String> = product.dims.iter().map(|b| dim_name(*b)).collect();
            names.sort();
            let least = limit.least.map(|c| c.to_string());
            let inputs: Vec<&str> = limit
                .params
                .iter()
                .map(|&p| vars[p].name.as_str())
                .chain(least.as_deref())
                .collect();
            return Some(Strided {
                input: limit::max_name(&inputs),
                plus_one,
                factor: product.factor.checked_mul(limit.divisor)?,
                dims: names,
                assumed,
            });
        }
        cause_yz = cause_x;
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
/// most `grid[d]` blocks along each dimension.
struct Caps<'a> {
    launch: &'a LaunchFacts,
    grid: [i128; 3],
}

impl Caps<'_> {
    /// The largest value of a launch dimension.
    fn dim(&self, b: Builtin) -> i128 {
        match b {
            Builtin::BlockDim(d) => match self.launch.block {
                Some(block) => i128::from(block[usize::from(d)]),
                None if d == 2 => i128::from(MAX_BLOCK_DIM[2]),
                None => BLOCK_THREADS,
            },
            Builtin::GridDim(d) => match self.launch.grid {
                Some(grid) => i128::from(grid[usize::from(d)]),
                None => self.grid[usize::from(d.min(2))],
            },
            Builtin::ThreadIdx(d) => self.dim(Builtin::BlockDim(d)) - 1,
            Builtin::BlockIdx(d) => self.dim(Builtin::GridDim(d)) - 1,
            Builtin::WarpSize => i128::from(self.launch.warp as u32),
        }
    }

    /// The largest value of a product of launch dimensions and a constant
    /// factor: a block holds at most [`BLOCK_THREADS`] threads, so the
    /// product of its distinct dimensions is at most that too.
    fn product(&self, p: &Product) -> Option<i128> {
        let mut block = 1i128;
        let mut rest = i128::from(p.factor);
        let mut seen = [false; 3];
        for b in &p.dims {
            let m = self.dim(*b);
            match b {
                Builtin::BlockDim(d) if !std::mem::replace(&mut seen[usize::from(*d)], true) => {
                    block = block.checked_mul(m)?;
                }
                _ => rest = rest.checked_mul(m)?,
            }
        }
        let block = match self.launch.block {
            Some(_) => block,
            None => block.min(BLOCK_THREADS),
        };
        rest.checked_mul(block)
    }
}

/// A product of launch dimensions (`blockDim.x`, `gridDim.x`, …) and
/// constants at least 1.
struct Product {
    /// The product of the constants.
    factor: u64,
    /// The launch dimensions, as often as they are multiplied.
    dims: Vec<Builtin>,
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

    /// `e` as a product of launch dimensions and constants at least 1
    /// (through conversions to at least 32 bits and locals assigned
    /// once); `None` when it is anything else.
    fn product(&self, e: &Expr) -> Option<Product> {
        let mut p = Product {
            factor: 1,
            dims: Vec::new(),
        };
        self.factors(e, 0, &mut p)?;
        Some(p)
    }

    /// Multiplies `p` by the factors of `e` (see [`Scan::product`]).
    fn factors(&self, e: &Expr, depth: usize, p: &mut Product) -> Option<()> {
        match &e.kind {
            ExprKind::Builtin(b @ (Builtin::BlockDim(_) | Builtin::GridDim(_))) => p.dims.push(*b),
            ExprKind::Const(Value::I(c)) if *c >= 1 => {
                p.factor = p.factor.checked_mul(u64::try_from(*c).ok()?)?;
            }
            ExprKind::Binary(BinOp::Mul, a, b) => {
                self.factors(a, depth, p)?;
                self.factors(b, depth, p)?;
            }
            ExprKind::Convert { value, .. } if e.ty.size() >= 4 => self.factors(value, depth, p)?,
            ExprKind::Var(v) if depth < MAX_DEPTH => {
                self.factors(self.single_value(*v)?, depth + 1, p)?
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
                    // A product of a block's dimensions is at most the
                    // threads a block holds.
                    BinOp::Mul => {
                        let m = x.checked_mul(self.max(b, caps, depth)?)?;
                        match self.product(e).and_then(|p| caps.product(&p)) {
                            Some(p) => m.min(p),
                            None => m,
                        }
                    }
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

    /// Whether the stride or the start read `gridDim` or `blockIdx` along
    /// dimension `d` (directly or through locals assigned once): only
    /// then does the grid's size along `d` matter to their ranges.
    fn reads_grid(&self, d: u8, stride: &Expr, start: &Expr) -> bool {
        fn reads(scan: &Scan, d: u8, e: &Expr, depth: usize) -> bool {
            let mut found = false;
            e.visit(&mut |x| match x.kind {
                ExprKind::Builtin(Builtin::GridDim(g) | Builtin::BlockIdx(g)) if g == d => {
                    found = true
                }
                ExprKind::Var(v) if depth < MAX_DEPTH => {
                    if let Some(value) = scan.single_value(v) {
                        found |= reads(scan, d, value, depth + 1);
                    }
                }
                _ => {}
            });
            found
        }
        self.launch.grid.is_none() && (reads(self, d, stride, 0) || reads(self, d, start, 0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bound::{prepare, Config, Outcome};
    use crate::cost::Metric;
    use crate::cuda::parse::parse_source;
    use crate::ir::lower::lower_kernel;
    use crate::source::SourceFile;

    /// Kernel `k`'s `steps` bound without a launch, its assumptions and
    /// why each is made.
    fn analyzed(src: &str) -> (String, Vec<String>, Vec<String>) {
        let f = parse_source(SourceFile::new("t.cu", src));
        let k = lower_kernel(&f, "k").expect("lowered");
        let p = prepare(&k, Config::default());
        let bound = match p.bound(&Metric::builtin("steps").expect("steps")).work {
            Outcome::Bound(e) => e.to_string(),
            Outcome::NoBound(why, _) => format!("no bound: {why}"),
        };
        let assumed = p.assumptions.iter().map(|a| a.to_string()).collect();
        let why = p.assumptions.iter().map(|a| a.why()).collect();
        (bound, assumed, why)
    }

    const GRID_START: &str = "blockIdx.x * blockDim.x + threadIdx.x";

    #[test]
    fn inclusive_and_reversed_conditions_divide_n_plus_one() {
        let loop_with = |cond: &str, ty: &str| {
            format!(
                "__global__ void k(float *y, {ty} n) {{\n\
                 for ({ty} i = {GRID_START}; {cond}; i += blockDim.x * gridDim.x) y[i] += 1.0f; }}"
            )
        };
        // `i <= n` runs once more than `i < n` where the stride is 1:
        // `⌈(n+1)/s⌉`, and `i + s` stays in range one `n` less.
        let (bound, assumed, _) = analyzed(&loop_with("i <= n", "int"));
        assert!(bound.contains("⌈(n+1)/(blockDim.x·gridDim.x)⌉"), "{bound}");
        assert_eq!(assumed, ["n ≤ 2^30 − 1", "gridDim.x ≤ 2^20"]);
        let (bound, assumed, _) = analyzed(&loop_with("n >= i", "int"));
        assert!(bound.contains("⌈(n+1)/(blockDim.x·gridDim.x)⌉"), "{bound}");
        assert_eq!(assumed, ["n ≤ 2^30 − 1", "gridDim.x ≤ 2^20"]);
        let (bound, assumed, _) = analyzed(&loop_with("n > i", "int"));
        assert!(bound.contains("⌈n/(blockDim.x·gridDim.x)⌉"), "{bound}");
        assert_eq!(assumed, ["n ≤ 2^30", "gridDim.x ≤ 2^20"]);
        // An unsigned counter up to `n` inclusive: `n = UINT_MAX` would
        // never end, and is assumed away.
        let (bound, assumed, _) = analyzed(&loop_with("i <= n", "unsigned"));
        assert!(bound.contains("⌈(n+1)/(blockDim.x·gridDim.x)⌉"), "{bound}");
        assert_eq!(assumed, ["n ≤ 2^31 − 1", "gridDim.x ≤ 2^21"]);
        // The value: `n = 0` runs once, `n = −1` never.
        let at = |n: f64| -> BTreeMap<String, f64> {
            [
                ("n".to_string(), n),
                ("blockDim.x".to_string(), 32.0),
                ("gridDim.x".to_string(), 2.0),
            ]
            .into()
        };
        let name = "⌈(n+1)/(blockDim.x·gridDim.x)⌉";
        assert_eq!(quotient_value(name, &at(0.0)), Some(1.0));
        assert_eq!(quotient_value(name, &at(-1.0)), Some(0.0));
        assert_eq!(quotient_value(name, &at(64.0)), Some(2.0));
        assert_eq!(quotient_value(name, &at(63.0)), Some(1.0));
    }

    #[test]
    fn constant_factors_of_the_stride_divide_too() {
        let stride = |step: &str, decl: &str| {
            format!(
                "__global__ void k(float *y, int n) {{\n{decl}\
                 for (int i = threadIdx.x; i < n; i += {step}) y[i] += 1.0f; }}"
            )
        };
        let (bound, assumed, _) = analyzed(&stride("2 * blockDim.x", ""));
        assert!(bound.contains("⌈n/(2·blockDim.x)⌉"), "{bound}");
        assert_eq!(assumed, ["n ≤ 2^31 − 2^11"]);
        // A constant times the grid's threads is 32-bit for smaller grids.
        let (bound, assumed, why) = analyzed(&stride(
            "stride",
            "const int stride = 4 * blockDim.x * gridDim.x;\n",
        ));
        assert!(bound.contains("⌈n/(4·blockDim.x·gridDim.x)⌉"), "{bound}");
        assert_eq!(assumed, ["n ≤ 2^30", "gridDim.x ≤ 2^18"]);
        assert_eq!(
            why[1],
            "a larger grid lets the stride of the counter `i` wrap around"
        );
        let (bound, _, _) = analyzed(&stride("blockDim.x * gridDim.x * 4", ""));
        assert!(bound.contains("⌈n/(4·blockDim.x·gridDim.x)⌉"), "{bound}");
        let at: BTreeMap<String, f64> =
            [("n".to_string(), 257.0), ("blockDim.x".to_string(), 32.0)].into();
        assert_eq!(quotient_value("⌈n/(2·blockDim.x)⌉", &at), Some(5.0));
        // A factor 0 or a negative one is no stride.
        let (bound, _, _) = analyzed(&stride("blockDim.x * 0", ""));
        assert!(!bound.contains('⌈'), "{bound}");
    }

    #[test]
    fn cooperative_group_sizes_are_products_of_launch_dimensions() {
        let cg = |decl: &str, start: &str, step: &str| {
            format!(
                "namespace cg = cooperative_groups;\n\
                 __global__ void k(float *y, int n) {{\n{decl}\n\
                 for (int i = {start}; i < n; i += {step}) y[i] += 1.0f; }}"
            )
        };
        // The grid's threads: a small grid along x, a flat one along y
        // and z (the 32-bit product wraps around otherwise); the block's
        // threads at most 1024.
        let (bound, assumed, _) = analyzed(&cg(
            "cg::grid_group grid = cg::this_grid();",
            "grid.thread_rank()",
            "grid.size()",
        ));
        assert!(
            bound.contains("⌈n/(blockDim.x·blockDim.y·blockDim.z·gridDim.x·gridDim.y·gridDim.z)⌉"),
            "{bound}"
        );
        assert_eq!(
            assumed,
            [
                "n ≤ 2^30",
                "gridDim.x ≤ 2^20",
                "gridDim.y ≤ 1",
                "gridDim.z ≤ 1"
            ]
        );
        for (decl, group) in [
            ("cg::thread_block block = cg::this_thread_block();", "block"),
            ("cg::thread_group block = cg::this_thread_block();", "block"),
        ] {
            let (bound, assumed, _) = analyzed(&cg(
                decl,
                &format!("{group}.thread_rank()"),
                &format!("{group}.size()"),
            ));
            assert!(
                bound.contains("⌈n/(blockDim.x·blockDim.y·blockDim.z)⌉"),
                "{bound}"
            );
            assert_eq!(assumed, ["n ≤ 2^31 − 2^10"]);
        }
        // The tree reduction over a group's size halves a product of the
        // block's dimensions: a logarithm of it.
        let tree = "namespace cg = cooperative_groups;\n\
                    __global__ void k(float *y) {\n\
                    cg::thread_group block = cg::this_thread_block();\n\
                    for (int s = block.size() / 2; s > 0; s /= 2) y[threadIdx.x] += 1.0f; }";
        let (bound, _, _) = analyzed(tree);
        let log = "log2(blockDim.x·blockDim.y·blockDim.z)";
        assert!(bound.contains(log), "{bound}");
        let at: BTreeMap<String, f64> = [
            ("blockDim.x".to_string(), 32.0),
            ("blockDim.y".to_string(), 4.0),
            ("blockDim.z".to_string(), 2.0),
        ]
        .into();
        assert_eq!(crate::bound::ghost::log_value(log, &at), Some(8.0));
        assert_eq!(crate::bound::ghost::derived_from(log).len(), 3);
    }

    #[test]
    fn grid_assumptions_say_what_a_larger_grid_does() {
        // An `int` counter: `blockDim.x * gridDim.x` (unsigned) fits for
        // 2^21 blocks, but carries `i` past `INT_MAX` for every `n`.
        let src = format!(
            "__global__ void k(float *y, int n) {{\n\
             for (int i = {GRID_START}; i < n; i += blockDim.x * gridDim.x) y[i] += 1.0f; }}"
        );
        let (_, assumed, why) = analyzed(&src);
        assert_eq!(assumed[1], "gridDim.x ≤ 2^20");
        assert_eq!(
            why[1],
            "a larger grid's stride carries the counter `i` past its type's maximum"
        );
        // An unsigned one: the stride itself wraps around past 2^21.
        let src = src
            .replace("int i", "unsigned i")
            .replace("int n", "unsigned n");
        let (_, assumed, why) = analyzed(&src);
        assert_eq!(assumed[1], "gridDim.x ≤ 2^21");
        assert_eq!(
            why[1],
            "a larger grid lets the stride of the counter `i` wrap around"
        );
        // A start eight blocks apart: the stride fits, the first index of
        // the last block does not.
        let src = "__global__ void k(float *y, int n) {\n\
             for (int i = blockIdx.x * blockDim.x * 8 + threadIdx.x; i < n; i += blockDim.x * gridDim.x) y[i] += 1.0f; }";
        let (_, assumed, why) = analyzed(src);
        assert_eq!(assumed[1], "gridDim.x ≤ 2^18");
        assert_eq!(
            why[1],
            "a larger grid's first index does not fit the counter `i`"
        );
    }

    #[test]
    fn quotients_are_named_and_derived_from_the_launch() {
        let two = quotient_name("n", false, 1, &["blockDim.x".into(), "gridDim.x".into()]);
        assert_eq!(two, "⌈n/(blockDim.x·gridDim.x)⌉");
        let one = quotient_name("n", false, 1, &["blockDim.x".into()]);
        assert_eq!(one, "⌈n/blockDim.x⌉");
        let parts = quotient_parts(&one).map(|q| (q.input, q.plus_one, q.factor, q.dims));
        assert_eq!(parts, Some(("n", false, 1, vec!["blockDim.x"])));
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
