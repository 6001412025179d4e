//! What a strided loop's counter stays below, read over the inputs.
//!
//! A grid-stride loop `i < L` (see `stride`) is counted by
//! `⌈max(0, L)/s⌉` for a limit `L` the kernel never changes. Besides an
//! input `n`, the limit may be
//! - `e / D` for a constant `D ≥ 1`: C's quotient is at most `⌈max(0,
//!   e)/D⌉` (and at most 0 for `e < 0`), and `⌈⌈x/D⌉/s⌉ = ⌈x/(D·s)⌉`, so
//!   `D` joins the stride's constant factor;
//! - `min(a, b)`: at most either operand, so the first one that is itself
//!   a limit counts for it;
//! - `max(a, b)` of limits: the quotient of the larger input, named
//!   `⌈max(n,k)/s⌉` ([`max_name`]) and evaluated from both
//!   ([`input_value`]); of two divisors the smaller one, and a constant
//!   written over the other's divisor ([`over_divisor`]).

use std::collections::{BTreeMap, BTreeSet};

use crate::cuda::ast::BinOp;
use crate::ir::{Expr, ExprKind, MathFn, Value, Var, VarId, VarKind};

mod operand;

/// A loop limit over the inputs: `max(p₁, p₂, …, c) / divisor`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Limit {
    /// The parameters whose largest the limit is at most (divided).
    pub params: Vec<VarId>,
    /// A constant at least 0 the maximum takes too (`max(n, 8)`).
    pub least: Option<i64>,
    /// The constant the largest parameter is divided by, at least 1.
    pub divisor: u64,
}

/// Most nested operations read in a limit.
const MAX_DEPTH: usize = 8;

/// `e` (of type `e.ty`, the counter's) as a [`Limit`]: a parameter of
/// `inputs` of that type, a quotient of a limit by a positive constant,
/// the minimum of two values one of which is a limit, or the maximum of
/// two limits (or of a limit and a constant at least 0). `None` for
/// anything else, and for a constant alone.
pub(super) fn limit(e: &Expr, inputs: &BTreeSet<VarId>, vars: &[Var]) -> Option<Limit> {
    read(e, inputs, vars, 0).filter(|l| !l.params.is_empty())
}

fn read(e: &Expr, inputs: &BTreeSet<VarId>, vars: &[Var], depth: usize) -> Option<Limit> {
    if depth > MAX_DEPTH {
        return None;
    }
    let same = |x: &Expr| x.ty == e.ty;
    match &e.kind {
        ExprKind::Var(n) if inputs.contains(n) && matches!(vars[*n].kind, VarKind::Param(_)) => {
            (vars[*n].ty == e.ty).then(|| Limit {
                params: vec![*n],
                least: None,
                divisor: 1,
            })
        }
        ExprKind::Const(Value::I(c)) if *c >= 0 => Some(Limit {
            params: Vec::new(),
            least: Some(*c),
            divisor: 1,
        }),
        ExprKind::Binary(BinOp::Div, a, b) if same(a) => {
            let ExprKind::Const(Value::I(d)) = b.kind else {
                return None;
            };
            let d = u64::try_from(d).ok().filter(|&d| d >= 1)?;
            let l = read(a, inputs, vars, depth + 1)?;
            Some(Limit {
                divisor: l.divisor.checked_mul(d)?,
                ..l
            })
        }
        // Either operand: one over the inputs first.
        ExprKind::Call(MathFn::Min, args) if args.len() == 2 && args.iter().all(same) => {
            let mut found: Vec<Limit> = args
                .iter()
                .filter_map(|a| read(a, inputs, vars, depth + 1))
                .collect();
            found.sort_by_key(|l| l.params.is_empty());
            found.into_iter().next()
        }
        ExprKind::Call(MathFn::Max, args) if args.len() == 2 && args.iter().all(same) => {
            let a = read(&args[0], inputs, vars, depth + 1)?;
            let b = read(&args[1], inputs, vars, depth + 1)?;
            let (da, db) = (a.divisor, b.divisor);
            let (a, b) = (over_divisor(a, db)?, over_divisor(b, da)?);
            let mut params = a.params;
            for p in b.params {
                if !params.contains(&p) {
                    params.push(p);
                }
            }
            Some(Limit {
                params,
                least: a.least.max(b.least),
                divisor: a.divisor.min(b.divisor),
            })
        }
        _ => None,
    }
}

/// `l` made comparable with a limit divided by `other`: a constant alone
/// is written over that divisor (`8` as `32 / 4`: a constant `c / d` is
/// at most `⌈c/d⌉`, and `⌈⌈c/d⌉·D/D⌉ = ⌈c/d⌉`); otherwise `l` is kept, and
/// the maximum takes the smaller divisor, which only loosens the other
/// quotient (`⌈x/4⌉ ≤ x` for `x ≥ 0`: `max(n / 4, k)` counts as `max(n,
/// k)`). `None` when the constant overflows.
fn over_divisor(l: Limit, other: u64) -> Option<Limit> {
    if !l.params.is_empty() || l.divisor >= other {
        return Some(l);
    }
    let d = i64::try_from(l.divisor).ok()?;
    let other_i = i64::try_from(other).ok()?;
    Some(Limit {
        least: match l.least {
            Some(c) => Some(
                c.div_euclid(d)
                    .checked_add(i64::from(c.rem_euclid(d) != 0))?
                    .checked_mul(other_i)?,
            ),
            None => None,
        },
        divisor: other,
        ..l
    })
}

/// The name of the input a quotient divides: the parameter itself, or
/// `max(n,k)` for several (a constant among them by its value).
pub(super) fn max_name(names: &[&str]) -> String {
    match names {
        [one] => one.to_string(),
        _ => format!("max({})", names.join(",")),
    }
}

/// The function (`true` for `max`) and operands of a name written
/// `max(a,b,…)` or `min(a,b,…)`: a quotient's input ([`max_name`]) or a
/// counted loop's limit, an atom named by its inputs (`min(n,500)`,
/// `max(n,k)`, `max(n/4,10)`; see `absint::symbols`), each operand a
/// linear expression over inputs and constants (see `operand`).
fn extreme_parts(name: &str) -> Option<(bool, Vec<&str>)> {
    let (max, rest) = match name.strip_prefix("max(") {
        Some(r) => (true, r),
        None => (false, name.strip_prefix("min(")?),
    };
    let ops = operand::split(rest.strip_suffix(')')?)?;
    (ops.len() >= 2).then_some((max, ops))
}

/// The operands of a quotient's input ([`max_name`]): names and
/// constants.
fn operands(input: &str) -> Vec<&str> {
    match extreme_parts(input) {
        Some((true, list)) => list,
        _ => vec![input],
    }
}

/// The inputs named in a quotient's input ([`max_name`]) or a named
/// extreme ([`extreme_value`]), without its constants, each once.
pub(super) fn input_names(input: &str) -> Vec<&str> {
    let list = extreme_parts(input).map_or_else(|| vec![input], |(_, l)| l);
    let mut names: Vec<&str> = Vec::new();
    for n in list.into_iter().flat_map(operand::names) {
        if !names.contains(&n) {
            names.push(n);
        }
    }
    names
}

/// The value of a quotient's input ([`max_name`]) at the inputs `at`.
pub(super) fn input_value(input: &str, at: &BTreeMap<String, f64>) -> Option<f64> {
    operands(input)
        .into_iter()
        .map(|n| operand_value(n, at))
        .try_fold(f64::NEG_INFINITY, |m, v| Some(m.max(v?)))
}

/// The value of one operand at the inputs `at`: a plain name as the
/// input's value, anything else exactly (see `operand`).
fn operand_value(n: &str, at: &BTreeMap<String, f64>) -> Option<f64> {
    if operand::is_plain(n) && n.parse::<i64>().is_err() {
        return at.get(n).copied();
    }
    operand::value(n, at).map(|v| v as f64)
}

/// Whether `name` is a minimum or maximum of inputs and constants that a
/// bound names (`max(n,64)`, `min(n,500)`, `max(n/4,10)`: a counted
/// loop's limit, read as an atom by `absint::symbols`).
pub(super) fn is_extreme_name(name: &str) -> bool {
    extreme_parts(name).is_some()
}

/// The value of a name [`is_extreme_name`] accepts at the inputs `at`,
/// exactly (negative where its operands are); `None` for another name or
/// a missing input.
pub(super) fn extreme_value(name: &str, at: &BTreeMap<String, f64>) -> Option<f64> {
    let (max, list) = extreme_parts(name)?;
    let values = list
        .into_iter()
        .map(|n| operand_value(n, at))
        .collect::<Option<Vec<f64>>>()?;
    let pick = if max { f64::max } else { f64::min };
    values.into_iter().reduce(pick)
}

/// Whether a name [`is_extreme_name`] accepts is never negative: a
/// maximum with an operand that never is (a constant at least 0 or a
/// launch dimension alone), a minimum whose operands all are.
pub(super) fn extreme_nonnegative(name: &str) -> bool {
    let Some((max, list)) = extreme_parts(name) else {
        return false;
    };
    let never = |o: &str| {
        o.parse::<i64>().is_ok_and(|c| c >= 0)
            || ["blockDim.", "gridDim."].iter().any(|p| {
                o.strip_prefix(p)
                    .is_some_and(|d| ["x", "y", "z"].contains(&d))
            })
    };
    if max {
        list.into_iter().any(never)
    } else {
        list.into_iter().all(never)
    }
}
