//! Ghost counters for loops whose trip count the launch fixes.
//!
//! A loop like `for (s = blockDim.x / 2; s > 0; s >>= 1)` has no linear
//! ranking function, but with a fixed block size every warp runs it the same
//! known number of times. Such a loop gets a ghost counter `iterations_N`:
//! set to 0 before the loop, incremented at the end of each iteration, and
//! known to stay below the trip count inside the body — a linear measure the
//! potential can pay for the loop with. Ghost assignments cost nothing.
//!
//! A loop whose counter grows or shrinks geometrically over a kernel input
//! `n` (`for (i = 1; i < n; i *= 2)`, `for (k = n; k > 0; k /= 3)`) runs at
//! most `1 + ⌊log2(max(1, n))⌋` times. Its ghost is bounded by a new input
//! variable named `log2(n)` ([`log_name`]), whose value a bound's evaluation
//! derives from `n` ([`log_value`]): such loops get logarithmic bounds.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::assumption::{InputAssumption, Subject};
use super::counter::{count_writes, single_update, top_level_updates};
use super::{limit, stride};
use crate::absint::defs::read_after_single_def;
use crate::absint::deps::{self, key, DepFacts, LaunchFacts};
use crate::absint::symbols::substitute;
use crate::absint::trips::Trips;
use crate::cuda::ast::BinOp;
use crate::ir::structured::FlagKind;
use crate::ir::value::{binary, wrap};
use crate::ir::{Builtin, Expr, ExprKind, Kernel, Scalar, Stmt, Unary, Value, Var, VarId, VarKind};
use crate::source::Span;

/// Most iterations counted by evaluating a loop's condition.
const MAX_TRIPS: u64 = 1 << 16;

/// What [`find`] learned about a loop: its trip count, or the name of the
/// input whose logarithm bounds it (a parameter, a symbol, or a launch
/// dimension such as `blockDim.x`) with the range of that input where its
/// signed counter cannot overflow, when that is not all of it.
#[derive(Clone)]
enum Found {
    Count(u64),
    Log(String, Option<InputAssumption>),
    /// At most `⌈n / stride⌉` for an input `n` and a stride of launch
    /// dimensions (see `stride`), under what it assumes.
    Quotient(stride::Strided),
}

/// The name of the input variable standing for `⌊log2(max(1, n))⌋` of
/// input `n`.
pub fn log_name(input: &str) -> String {
    format!("log2({input})")
}

/// Whether `name` is a variable named by [`log_name`].
pub fn is_log_name(name: &str) -> bool {
    name.starts_with("log2(") && name.ends_with(')')
}

/// The value of a variable named by [`log_name`] at the inputs `at`
/// (`None` for any other name, or when the input is missing).
pub fn log_value(name: &str, at: &BTreeMap<String, f64>) -> Option<f64> {
    let input = name.strip_prefix("log2(")?.strip_suffix(')')?;
    // A product of a block's dimensions (`blockDim.x·blockDim.y`).
    let mut n = 1.0;
    for factor in input.split('·') {
        n *= *at.get(factor)?;
    }
    Some(if n < 2.0 { 0.0 } else { n.log2().floor() })
}

/// Whether `name` is an input variable a bound's evaluation derives from
/// other inputs: a [`log_name`], a [`stride::quotient_name`], or a
/// counted loop's limit `max(n,k)` / `min(n,500)` (see `limit`).
pub fn is_derived_name(name: &str) -> bool {
    is_log_name(name) || stride::quotient_parts(name).is_some() || limit::is_extreme_name(name)
}

/// The value at the inputs `at` of an input variable derived from others
/// ([`is_derived_name`]); `None` for any other name, or when an input it
/// is derived from is missing.
pub fn derived_value(name: &str, at: &BTreeMap<String, f64>) -> Option<f64> {
    log_value(name, at)
        .or_else(|| stride::quotient_value(name, at))
        .or_else(|| limit::extreme_value(name, at))
}

/// The inputs an input variable derived from others is computed from
/// (`n` for `log2(n)`, `n`, `blockDim.x` and `gridDim.x` for
/// `⌈n/(blockDim.x·gridDim.x)⌉`, `n` and `k` for `max(n,k)`); any other
/// name by itself.
pub fn derived_from(name: &str) -> Vec<String> {
    if let Some(n) = name.strip_prefix("log2(").and_then(|r| r.strip_suffix(')')) {
        return n.split('·').map(str::to_string).collect();
    }
    if limit::is_extreme_name(name) {
        return limit::input_names(name)
            .into_iter()
            .map(str::to_string)
            .collect();
    }
    match stride::quotient_parts(name) {
        Some(q) => stride::quotient_inputs(q.input)
            .into_iter()
            .chain(q.dims)
            .map(str::to_string)
            .collect(),
        None => vec![name.to_string()],
    }
}

/// Adds a ghost counter to every `while`/`for` loop whose condition only
/// involves variables with constant values at the loop's entry, updated by
/// assignments at the top level of its body or step, and to every loop
/// whose counter grows or shrinks geometrically over an input
/// ([`geometric`]). Returns each ghost variable with its loop's trip count,
/// and what the inputs must satisfy for the signed counters of those loops
/// not to overflow (`n ≤ 2^30` for `int s` doubled while `s < n`): the
/// trip counts hold only there.
pub fn add_ghosts(
    k: &mut Kernel,
    launch: &LaunchFacts,
    flags: &[(VarId, FlagKind)],
) -> (HashMap<VarId, Trips>, Vec<InputAssumption>) {
    let facts = deps::analyze_with_flags(k, launch, flags);
    let mut assigned = BTreeSet::new();
    deps::written(&k.body, &mut assigned);
    let inputs: BTreeSet<VarId> = (0..k.vars.len())
        .filter(|v| k.vars[*v].kind.is_input() && !assigned.contains(v))
        .collect();
    let mut trips = Vec::new();
    let copies = copies_of_inputs(k, &inputs);
    let scan = Scan {
        facts: &facts,
        launch,
        flags,
        inputs: &inputs,
        copies: &copies,
        vars: &k.vars,
        all: &k.body,
    };
    find(&k.body, &scan, &mut trips);
    let mut ghosts = HashMap::new();
    let assumptions = trips
        .iter()
        .flat_map(|(_, found)| match found {
            Found::Log(_, assumed) => assumed.iter().cloned().collect(),
            Found::Quotient(q) => q.assumed.clone(),
            Found::Count(_) => Vec::new(),
        })
        .collect();
    if trips.is_empty() {
        return (ghosts, assumptions);
    }
    let mut body = std::mem::take(&mut k.body);
    let mut loops = trips.into_iter().peekable();
    let konst = |v| Expr {
        kind: ExprKind::Const(Value::I(v)),
        ty: Scalar::I64,
    };
    insert_ghosts(&mut body, k, &mut 0, &mut |k, here, span| {
        let (_, n) = loops.next_if(|(l, _)| *l == here)?;
        let var = new_ghost(k, format!("iterations_{here}"), span);
        let trips = match n {
            Found::Count(n) => Trips::Count(n),
            Found::Log(input, _) => Trips::Log(derived_var(k, &log_name(&input), span)),
            Found::Quotient(q) => Trips::Quotient(derived_var(k, &q.name(), span)),
        };
        ghosts.insert(var, trips);
        Some(GhostUpdate {
            var,
            init: konst(0),
            step: konst(1),
        })
    });
    k.body = body;
    (ghosts, assumptions)
}

/// What is known about a kernel while looking for ghost-counted loops.
struct Scan<'a> {
    facts: &'a DepFacts,
    launch: &'a LaunchFacts,
    flags: &'a [(VarId, FlagKind)],
    /// Inputs the kernel never assigns.
    inputs: &'a BTreeSet<VarId>,
    /// Locals that hold one of `inputs` wherever they are read
    /// ([`copies_of_inputs`]), with the input.
    copies: &'a HashMap<VarId, Expr>,
    vars: &'a [Var],
    /// The kernel's body.
    all: &'a [Stmt],
}

/// Trip counts of the loops that get ghosts, by pre-order loop index.
fn find(stmts: &[Stmt], scan: &Scan, out: &mut Vec<(usize, Found)>) {
    fn walk(stmts: &[Stmt], scan: &Scan, index: &mut usize, out: &mut Vec<(usize, Found)>) {
        for (i, s) in stmts.iter().enumerate() {
            match s {
                Stmt::Loop {
                    cond,
                    body,
                    step,
                    test_first,
                    ..
                } => {
                    let here = *index;
                    *index += 1;
                    if let (Some(c), true, Some(st)) =
                        (cond, test_first, scan.facts.before.get(&key(s)))
                    {
                        // `i < m` with `m` a copy of `n` is `i < n`.
                        let c = &substitute(c, scan.copies);
                        let before = i.checked_sub(1).map(|j| &stmts[j]);
                        if let Some(n) = trip_count(c, body, step, st, scan.launch, scan.flags) {
                            out.push((here, Found::Count(n)));
                        } else if let Some((n, assumed)) =
                            geometric(c, body, step, st, before, scan.inputs, scan.vars)
                        {
                            out.push((here, Found::Log(n, assumed)));
                        } else if let Some(q) = stride::strided(
                            c,
                            body,
                            step,
                            &stmts[..i],
                            scan.all,
                            scan.inputs,
                            scan.vars,
                            scan.launch,
                        ) {
                            out.push((here, Found::Quotient(q)));
                        }
                    }
                    walk(body, scan, index, out);
                    walk(step, scan, index, out);
                }
                Stmt::If { then, els, .. } => {
                    walk(then, scan, index, out);
                    walk(els, scan, index, out);
                }
                Stmt::Scope { body, .. } => walk(body, scan, index, out),
                _ => {}
            }
        }
    }
    walk(stmts, scan, &mut 0, out);
}

/// The locals of `k` assigned once, by a copy of an input of the same
/// type (`int m = n;`, or of such a copy) or by a loop limit over the
/// inputs ([`limit::limit`]: `n / 4`, `min(n, k)`, `max(n, k)`, over
/// copies too), in a statement that runs before every read of them
/// ([`read_after_single_def`]): wherever one is read, it holds that value
/// (read as the input, of the same type, or as the limit).
fn copies_of_inputs(k: &Kernel, inputs: &BTreeSet<VarId>) -> HashMap<VarId, Expr> {
    let defs = read_after_single_def(k);
    let mut copies: HashMap<VarId, VarId> = HashMap::new();
    // A chain of copies resolves one link a round.
    for _ in 0..defs.len() {
        let before = copies.len();
        for (&m, value) in &defs {
            let ExprKind::Var(v) = value.kind else {
                continue;
            };
            let source = if inputs.contains(&v) {
                Some(v)
            } else {
                copies.get(&v).copied()
            };
            if let Some(n) =
                source.filter(|&n| k.vars[n].ty == k.vars[m].ty && value.ty == k.vars[m].ty)
            {
                copies.insert(m, n);
            }
        }
        if copies.len() == before {
            break;
        }
    }
    let mut held: HashMap<VarId, Expr> = copies
        .into_iter()
        .map(|(m, n)| {
            let read = Expr {
                kind: ExprKind::Var(n),
                ty: k.vars[n].ty,
            };
            (m, read)
        })
        .collect();
    // Locals holding a loop limit over the inputs (`int q = n / 4;`,
    // `int m = min(cp, k);` with `cp` a copy): read as that limit, one
    // link of a chain a round.
    for _ in 0..defs.len() {
        let before = held.len();
        for (&m, value) in &defs {
            if held.contains_key(&m) || value.ty != k.vars[m].ty {
                continue;
            }
            let value = substitute(value, &held);
            if limit::limit(&value, inputs, &k.vars).is_some() {
                held.insert(m, value);
            }
        }
        if held.len() == before {
            break;
        }
    }
    held
}

/// The input `n` whose logarithm bounds a loop's trip count: the loop's
/// condition compares a counter, written once per iteration at the top
/// level of its body or step and nowhere else, with either
/// - `i < n` or `i <= n`, `i` signed (overflow is undefined, so it cannot
///   wrap), at least 1 on entry, updated `i = i * m` (`m ≥ 2`) or
///   `i = i << s` (`s ≥ 1`): at most `1 + ⌊log2 n⌋` values `i·m^j ≤ n`;
/// - `k > c` (`c ≥ 0`) or `k >= c` (`c ≥ 1`), `k` set just before the loop
///   to at most `n` ([`at_most_input`]), updated `k = k / m` (`m ≥ 2`) or
///   `k = k >> s` (`s ≥ 1`): from `k ≤ n`, `n ≥ 1`, `k` stays positive at
///   most `⌊log_m n⌋ + 1 ≤ 1 + ⌊log2 n⌋` times, and from `k ≤ 0` the loop
///   does not run;
/// - `k != 0` with `k` as above and at least 0 on entry (unsigned, or set
///   from a launch dimension): then `k != 0` is `k > 0`.
///
/// `n` is an input (parameter or symbol) the kernel never assigns, of the
/// counter's type, or (for a shrinking counter) a launch dimension. Returns
/// the input's name, and for a growing counter the largest `n` it cannot
/// overflow below ([`no_overflow`]) where that is less than all of `n`'s
/// values.
fn geometric(
    cond: &Expr,
    body: &[Stmt],
    step: &[Stmt],
    entry: &deps::State,
    before: Option<&Stmt>,
    inputs: &BTreeSet<VarId>,
    vars: &[Var],
) -> Option<(String, Option<InputAssumption>)> {
    let ExprKind::Binary(op, l, r) = &cond.kind else {
        return None;
    };
    let var = |e: &Expr| match e.kind {
        ExprKind::Var(v) => Some(v),
        _ => None,
    };
    let konst = |e: &Expr| match &e.kind {
        ExprKind::Const(Value::I(c)) => Some(*c),
        _ => positive_const(e),
    };
    let counter = var(l)?;
    let update = single_update(body, step, counter)?;
    let ExprKind::Binary(uop, ul, ur) = &update.kind else {
        return None;
    };
    if var(ul) != Some(counter) {
        return None;
    }
    let by = konst(ur)?;
    let grows = matches!((uop, by), (BinOp::Mul, 2..) | (BinOp::Shl, 1..=62));
    let shrinks = matches!((uop, by), (BinOp::Div, 2..) | (BinOp::Shr, 1..=62));
    match op {
        BinOp::Lt | BinOp::Le if grows && entry[counter].constant()? >= 1 => {
            let n = at_most_input(r, l.ty, inputs, vars)?;
            // An unsigned counter doubles without wrapping only below a
            // launch dimension (under 2^31).
            let doubles = matches!((uop, by), (BinOp::Mul, 2) | (BinOp::Shl, 1));
            if !(l.ty.is_signed() || doubles && n.contains('.')) {
                return None;
            }
            let factor = if *uop == BinOp::Mul { by } else { 1 << by };
            let assumed = no_overflow(&n, *op, factor, l.ty, &vars[counter].name, inputs, vars);
            Some((n, assumed))
        }
        BinOp::Gt | BinOp::Ge if shrinks => {
            let c = konst(r)?;
            let positive = if *op == BinOp::Gt { c >= 0 } else { c >= 1 };
            let Some(Stmt::Assign { var: v, value, .. }) = before else {
                return None;
            };
            if !positive || *v != counter {
                return None;
            }
            at_most_input(value, l.ty, inputs, vars).map(|n| (n, None))
        }
        // `k != 0` is `k > 0` for a counter that starts at least 0 (an
        // unsigned one, or one set from a launch dimension) and shrinks by
        // division or shifting: it stays at least 0 and reaches 0.
        BinOp::Ne if shrinks && konst(r)? == 0 => {
            let Some(Stmt::Assign { var: v, value, .. }) = before else {
                return None;
            };
            if *v != counter {
                return None;
            }
            let n = at_most_input(value, l.ty, inputs, vars)?;
            (!l.ty.is_signed() || n.contains('.')).then_some((n, None))
        }
        _ => None,
    }
}

/// What input `n` must satisfy for a signed counter of type `ty`, which
/// grows by `factor` while `counter < n` (`op` `<`) or `counter <= n`, not
/// to overflow: when it grows it is at most `n − 1` (or `n`), so `n ≤
/// max / factor + 1` (or `max / factor`). `None` when every `n` keeps it in
/// range (a block dimension, at most 1024) or the counter is unsigned
/// (only doubled below a launch dimension, under 2^31).
fn no_overflow(
    n: &str,
    op: BinOp,
    factor: i64,
    ty: Scalar,
    counter: &str,
    inputs: &BTreeSet<VarId>,
    vars: &[Var],
) -> Option<InputAssumption> {
    if !ty.is_signed() {
        return None;
    }
    let (_, max) = ty.range()?;
    let largest = max / i128::from(factor) + i128::from(op == BinOp::Lt);
    let subject = match n.strip_prefix("gridDim.") {
        Some(d) => Subject::GridDim(["x", "y", "z"].iter().position(|x| *x == d)? as u8),
        None if n.starts_with("blockDim.") => return None,
        None => Subject::Param(*inputs.iter().find(|v| vars[**v].name == n)?),
    };
    let limit = match subject {
        Subject::GridDim(_) => i128::from(i32::MAX),
        Subject::Param(v) => vars[v].ty.range()?.1,
    };
    (largest < limit).then(|| InputAssumption {
        param: n.to_string(),
        subject,
        min: None,
        max: Some(largest),
        counters: format!("`{counter}`"),
        cause: Default::default(),
    })
}

/// A ghost variable's value before its loop and the amount added to it at
/// the end of each iteration.
pub(super) struct GhostUpdate {
    pub var: VarId,
    pub init: Expr,
    pub step: Expr,
}

/// A new ghost variable `name` of the loop at `span` (an `i64` local).
pub(super) fn new_ghost(k: &mut Kernel, name: String, span: Span) -> VarId {
    new_var(k, name, Scalar::I64, VarKind::Local, span)
}

/// Adds a variable to `k`.
fn new_var(k: &mut Kernel, name: String, ty: Scalar, kind: VarKind, span: Span) -> VarId {
    k.vars.push(Var {
        name,
        ty,
        kind,
        span,
    });
    k.vars.len() - 1
}

/// Walks the loops of `stmts` in pre-order (`index` counts them) and gives
/// each one the ghost `ghost` makes for it from its index and span, if
/// any: `g = init` before the loop, `g = g + step` at the end of its step.
pub(super) fn insert_ghosts(
    stmts: &mut Vec<Stmt>,
    k: &mut Kernel,
    index: &mut usize,
    ghost: &mut dyn FnMut(&mut Kernel, usize, Span) -> Option<GhostUpdate>,
) {
    let mut i = 0;
    while i < stmts.len() {
        let mut init = None;
        match &mut stmts[i] {
            Stmt::Loop {
                body, step, span, ..
            } => {
                let here = *index;
                *index += 1;
                insert_ghosts(body, k, index, ghost);
                insert_ghosts(step, k, index, ghost);
                if let Some(g) = ghost(k, here, *span) {
                    let var = Expr {
                        kind: ExprKind::Var(g.var),
                        ty: Scalar::I64,
                    };
                    step.push(Stmt::Assign {
                        var: g.var,
                        value: Expr {
                            kind: ExprKind::Binary(BinOp::Add, Box::new(var), Box::new(g.step)),
                            ty: Scalar::I64,
                        },
                        span: *span,
                    });
                    init = Some(Stmt::Assign {
                        var: g.var,
                        value: g.init,
                        span: *span,
                    });
                }
            }
            Stmt::If { then, els, .. } => {
                insert_ghosts(then, k, index, ghost);
                insert_ghosts(els, k, index, ghost);
            }
            Stmt::Scope { body, .. } => insert_ghosts(body, k, index, ghost),
            _ => {}
        }
        if let Some(s) = init {
            stmts.insert(i, s);
            i += 1;
        }
        i += 1;
    }
}

/// A small nonnegative integer constant, possibly converted (which keeps
/// its value).
fn positive_const(e: &Expr) -> Option<i64> {
    match &e.kind {
        ExprKind::Const(Value::I(c)) if (0..1 << 30).contains(c) => Some(*c),
        ExprKind::Convert { value, .. } => positive_const(value),
        _ => None,
    }
}

/// The name of the input `n` that value `e`, assigned to a counter of type
/// `ty`, is at most, where `n ≥ 1` is all the counter's values need: `n`
/// itself (an input of type `ty` the kernel never assigns), or a launch
/// dimension (`blockDim.x`, at least 1 and below 2^31, so converting it to
/// a 32- or 64-bit `ty` keeps its value), either divided by a positive
/// constant or shifted right.
fn at_most_input(e: &Expr, ty: Scalar, inputs: &BTreeSet<VarId>, vars: &[Var]) -> Option<String> {
    match &e.kind {
        ExprKind::Var(v) if inputs.contains(v) && e.ty == ty => Some(vars[*v].name.clone()),
        ExprKind::Builtin(b) if ty.size() >= 4 => {
            let (what, d) = match b {
                Builtin::BlockDim(d) => ("blockDim", d),
                Builtin::GridDim(d) => ("gridDim", d),
                _ => return None,
            };
            Some(format!("{what}.{}", ["x", "y", "z"].get(*d as usize)?))
        }
        ExprKind::Convert { value, .. } if matches!(value.kind, ExprKind::Builtin(_)) => {
            at_most_input(value, ty, inputs, vars)
        }
        // A product of distinct block dimensions (a cooperative block's
        // `size()`): at least 1 and at most 1024, the threads of a block.
        ExprKind::Binary(BinOp::Mul, ..) if ty.size() >= 4 => block_product(e),
        // An input converted to a type that holds all its values (`int n`
        // compared with a `long long` counter) keeps its value.
        ExprKind::Convert { value, .. }
            if e.ty == ty && matches!(value.kind, ExprKind::Var(_)) && value.ty.widens_to(ty) =>
        {
            at_most_input(value, value.ty, inputs, vars)
        }
        // A launch dimension (or a quotient of one) converted to a type of
        // at least 32 bits keeps its value: it is below 2^31.
        ExprKind::Convert { value, .. } if ty.size() >= 4 => {
            let n = at_most_input(value, value.ty, inputs, vars)?;
            n.contains('.').then_some(n)
        }
        ExprKind::Binary(BinOp::Div | BinOp::Shr, a, b)
            if positive_const(b).is_some() && !a.ty.is_signed() =>
        {
            at_most_input(a, ty, inputs, vars)
        }
        _ => None,
    }
}

/// The name of `e` as a product of distinct block dimensions
/// (`blockDim.x·blockDim.y·blockDim.z`, sorted), whose value is at most
/// the threads of a block.
fn block_product(e: &Expr) -> Option<String> {
    fn dims(e: &Expr, out: &mut Vec<u8>) -> Option<()> {
        match &e.kind {
            ExprKind::Builtin(Builtin::BlockDim(d)) if *d < 3 && !out.contains(d) => out.push(*d),
            ExprKind::Binary(BinOp::Mul, a, b) => {
                dims(a, out)?;
                dims(b, out)?;
            }
            ExprKind::Convert { value, .. } if e.ty.size() >= 4 => dims(value, out)?,
            _ => return None,
        }
        Some(())
    }
    let mut out = Vec::new();
    dims(e, &mut out)?;
    out.sort_unstable();
    let names: Vec<String> = out
        .iter()
        .map(|d| format!("blockDim.{}", ["x", "y", "z"][usize::from(*d)]))
        .collect();
    Some(names.join("·"))
}

/// The input variable `name` derived from other inputs (a
/// [`log_name`] or a [`stride::quotient_name`]), added to the kernel as
/// an input the kernel never assigns (unsigned: it is at least 0) when it
/// is not there yet.
fn derived_var(k: &mut Kernel, name: &str, span: Span) -> VarId {
    if let Some(v) = k.vars.iter().position(|v| v.name == name) {
        return v;
    }
    new_var(k, name.to_string(), Scalar::U32, VarKind::Symbol, span)
}

/// The number of times a loop's body runs, when its condition only reads
/// variables with known values at entry that the loop updates by top-level
/// assignments evaluable from known values.
fn trip_count(
    cond: &Expr,
    body: &[Stmt],
    step: &[Stmt],
    entry: &deps::State,
    launch: &LaunchFacts,
    flags: &[(VarId, FlagKind)],
) -> Option<u64> {
    // A set `break` or `return` flag only ends the loop sooner: counting
    // with every flag clear gives the most iterations (an update a
    // `continue` may skip is no update of every iteration).
    let mut tracked = BTreeSet::new();
    cond.visit(&mut |e| {
        if let ExprKind::Var(v) = e.kind {
            if !flags.iter().any(|(f, _)| *f == v) {
                tracked.insert(v);
            }
        }
    });
    let mut updates: Vec<(VarId, &Expr, &Stmt)> = Vec::new();
    top_level_updates(body, &tracked, flags, &mut updates);
    top_level_updates(step, &tracked, flags, &mut updates);
    let mut all_writes = BTreeSet::new();
    deps::written(body, &mut all_writes);
    deps::written(step, &mut all_writes);
    for v in &tracked {
        let top = updates.iter().filter(|(w, _, _)| w == v).count();
        if all_writes.contains(v) && count_writes(body, *v) + count_writes(step, *v) != top {
            return None;
        }
    }
    let mut env: HashMap<VarId, Value> = flags.iter().map(|(f, _)| (*f, Value::I(0))).collect();
    for v in &tracked {
        env.insert(*v, Value::I(entry[*v].constant()?));
    }
    let mut n = 0;
    while eval(cond, &env, launch)?.truthy() {
        n += 1;
        if n > MAX_TRIPS {
            return None;
        }
        for (v, e, _) in &updates {
            let val = eval(e, &env, launch)?;
            env.insert(*v, val);
        }
    }
    Some(n)
}

/// Evaluates an expression over known variable values, with C semantics.
fn eval(e: &Expr, env: &HashMap<VarId, Value>, launch: &LaunchFacts) -> Option<Value> {
    Some(match &e.kind {
        ExprKind::Const(v) => *v,
        ExprKind::Var(v) => *env.get(v)?,
        ExprKind::Builtin(Builtin::BlockDim(d)) => Value::I(launch.block?[*d as usize] as i64),
        ExprKind::Builtin(Builtin::GridDim(d)) => Value::I(launch.grid?[*d as usize] as i64),
        ExprKind::Builtin(Builtin::WarpSize) => Value::I(launch.warp as i64),
        ExprKind::Binary(op, l, r) => {
            binary(*op, eval(l, env, launch)?, eval(r, env, launch)?, l.ty).ok()?
        }
        ExprKind::Convert { value, .. } => eval(value, env, launch)?.convert_from(value.ty, e.ty),
        ExprKind::Unary(Unary::Not, x) => Value::I(!eval(x, env, launch)?.truthy() as i64),
        ExprKind::Unary(Unary::Neg, x) => match eval(x, env, launch)? {
            Value::I(i) => wrap(i.wrapping_neg(), e.ty),
            Value::F(f) => Value::F(-f),
        },
        ExprKind::And(a, b) => {
            Value::I((eval(a, env, launch)?.truthy() && eval(b, env, launch)?.truthy()) as i64)
        }
        ExprKind::Or(a, b) => {
            Value::I((eval(a, env, launch)?.truthy() || eval(b, env, launch)?.truthy()) as i64)
        }
        _ => return None,
    })
}
