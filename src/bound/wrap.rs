//! Loop counters that may wrap around, and the assumptions on the kernel's
//! inputs and launch that rule it out.
//!
//! A grid-stride loop `for (size_t i = …; i < n; i += stride)` ends only
//! if `i + stride` never passes the counter type's maximum. For `n` within
//! `stride` of that maximum the counter wraps around to a small value and
//! the loop goes on (on the GPU as in the simulator), so no bound holds for
//! every `n`. What copper can give is a bound under an assumption
//! ([`InputAssumption`]): `n` at most half the counter type's range
//! (`n ≤ 2^63 − 1` for a `size_t` counter, `n ≤ 2^31 − 1` for an
//! `unsigned` one); `0 ≤ n` for an `int n` compared with an unsigned
//! counter (C converts `n`: a negative one becomes huge); and, where the
//! launch is not known, a grid small enough that the stride
//! (`blockDim.x * gridDim.x`, 32-bit, wraps to 0 at 2^32 threads) keeps the
//! counter in range (`gridDim.x ≤ 2^21`). The assumptions are made only
//! where they let the analysis prove more loops' counters stay in range,
//! the grid's as large as that allows, each one dropped that is not
//! needed; they are reported with every bound found under them.

use std::collections::{BTreeMap, BTreeSet};

use super::assumption::{InputAssumption, Subject};
use crate::absint::deps::{self, key};
use crate::absint::facts::LinFacts;
use crate::absint::linear::{Constraints, LinExpr};
use crate::absint::symbols::{SymKind, Symbols, Update};
use crate::ir::{Builtin, Expr, ExprKind, Kernel, Stmt, VarId};

/// The counters of loop `s`: the variables its guard facts mention that
/// its body or step writes (jump flags excluded).
pub(super) fn counters(
    lin: &LinFacts,
    syms: &Symbols,
    flags: &[VarId],
    s: &Stmt,
) -> BTreeSet<VarId> {
    let Stmt::Loop { body, step, .. } = s else {
        return BTreeSet::new();
    };
    let guards = lin.guards.get(&key(s)).cloned().unwrap_or_default();
    let mut written = BTreeSet::new();
    deps::written(body, &mut written);
    deps::written(step, &mut written);
    guards
        .iter()
        .flat_map(|g| g.vars())
        .filter_map(|sym| match syms.kind(sym) {
            SymKind::Var(v) if written.contains(&v) && !flags.contains(&v) => Some(v),
            _ => None,
        })
        .collect()
}

/// The linear updates `c := l` of the `counters` of loop `s` in its body
/// or step, each with the facts before it.
fn counter_updates<'l>(
    lin: &'l LinFacts,
    syms: &Symbols,
    counters: &BTreeSet<VarId>,
    s: &Stmt,
) -> Vec<(VarId, LinExpr, &'l Constraints)> {
    let Stmt::Loop { body, step, .. } = s else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for stmts in [body, step] {
        crate::ir::visit_stmts(stmts, &mut |s| {
            let Stmt::Assign { var, value, .. } = s else {
                return;
            };
            let Some(ctx) = lin.before.get(&key(s)).filter(|_| counters.contains(var)) else {
                return;
            };
            if let Update::Linear(l) = syms.unwrapped_update(value, ctx) {
                found.push((*var, l, ctx));
            }
        });
    }
    found
}

/// The `counters` of loop `s` that some assignment in its body or step
/// moves by a linear step that may leave the counter's type's range.
pub(super) fn wrapping(
    k: &Kernel,
    lin: &LinFacts,
    syms: &Symbols,
    counters: &BTreeSet<VarId>,
    s: &Stmt,
) -> BTreeSet<VarId> {
    counter_updates(lin, syms, counters, s)
        .into_iter()
        .filter(|(var, l, ctx)| !syms.fits(k.vars[*var].ty, l, ctx, &[]))
        .map(|(var, ..)| var)
        .collect()
}

/// Whether some update of the `counters` of loop `s` provably moves its
/// counter (by at least 1 either way): a stride that may be 0 does not.
fn moves(lin: &LinFacts, syms: &Symbols, counters: &BTreeSet<VarId>, s: &Stmt) -> bool {
    counter_updates(lin, syms, counters, s)
        .into_iter()
        .any(|(var, l, ctx)| {
            let by = l.sub(&LinExpr::var(syms.var(var)));
            let one = LinExpr::int(1);
            ctx.entails_ge0(&by.sub(&one)) || ctx.entails_ge0(&by.neg().sub(&one))
        })
}

/// The loops of `stmts`, outermost first.
fn loops<'k>(stmts: &'k [Stmt], out: &mut Vec<&'k Stmt>) {
    for s in stmts {
        match s {
            Stmt::Loop { body, step, .. } => {
                out.push(s);
                loops(body, out);
                loops(step, out);
            }
            Stmt::If { then, els, .. } => {
                loops(then, out);
                loops(els, out);
            }
            Stmt::Scope { body, .. } => loops(body, out),
            _ => {}
        }
    }
}

/// How many loops of `k` the facts `lin` leave unsettled: no counter their
/// condition bounds, one that may wrap around, or none that provably
/// moves.
fn unsettled_loops(k: &Kernel, lin: &LinFacts, syms: &Symbols, flags: &[VarId]) -> usize {
    let mut all = Vec::new();
    loops(&k.body, &mut all);
    all.into_iter()
        .filter(|s| unsettled(k, lin, syms, flags, s))
        .count()
}

/// Whether loop `s` is unsettled (see [`unsettled_loops`]).
fn unsettled(k: &Kernel, lin: &LinFacts, syms: &Symbols, flags: &[VarId], s: &Stmt) -> bool {
    let c = counters(lin, syms, flags, s);
    c.is_empty() || !wrapping(k, lin, syms, &c, s).is_empty() || !moves(lin, syms, &c, s)
}

/// The analysis of a kernel under assumptions: the facts found with
/// `syms` (made under the assumptions), `None` past the deadline.
pub(super) type Analyze<'a> = dyn Fn(&Symbols) -> Option<LinFacts> + 'a;

/// The assumptions under which the facts settle the most loops of `k`
/// (fewer than `first`, found with `syms` and none): the candidates
/// ([`candidates`]) with the largest grid that settles as many, less
/// each one not needed. Returns them with the symbols and facts made
/// under them; `None` when no assumption helps.
pub(super) fn assume(
    k: &Kernel,
    first: &LinFacts,
    syms: &Symbols,
    flags: &[VarId],
    analyze: &Analyze,
) -> Option<(Vec<InputAssumption>, Symbols, LinFacts)> {
    let unsettled = unsettled_loops(k, first, syms, flags);
    let mut set = candidates(k, first, syms, flags);
    if unsettled == 0 || set.is_empty() {
        return None;
    }
    let under = |set: &[InputAssumption]| {
        let mut s = syms.clone();
        for a in set {
            a.apply(&mut s);
        }
        let lin = analyze(&s)?;
        Some((unsettled_loops(k, &lin, &s, flags), s, lin))
    };
    let best = under(&set)?.0;
    if best >= unsettled {
        return None;
    }
    let with_grid = |set: &[InputAssumption], log: u32| -> Vec<InputAssumption> {
        let mut set = set.to_vec();
        for a in set
            .iter_mut()
            .filter(|a| matches!(a.subject, Subject::GridDim(_)))
        {
            a.max = Some(1 << log);
        }
        set
    };
    // The largest grid (a power of two) that settles as many loops.
    let (mut lo, mut hi) = (LEAST_GRID_LOG, 30);
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if under(&with_grid(&set, mid)).is_some_and(|r| r.0 == best) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    set = with_grid(&set, lo);
    // Each assumption not needed is dropped.
    let mut i = 0;
    while i < set.len() {
        let mut fewer = set.clone();
        fewer.remove(i);
        if under(&fewer).is_some_and(|r| r.0 == best) {
            set = fewer;
        } else {
            i += 1;
        }
    }
    let (_, s, lin) = under(&set)?;
    Some((set, s, lin))
}

/// A range assumed (least, largest value) and the counters it is for.
type Range = (Option<i128>, Option<i128>, BTreeSet<String>);

/// The smallest grid assumed is `2^16` blocks: an assumption needing a
/// smaller one is not worth making.
const LEAST_GRID_LOG: u32 = 16;

/// The assumptions that may settle the loops of `k` (with the grid at its
/// smallest, `2^16`): each integer input that a wrapping counter's loop
/// guard compares it with, at most half the counter type's range (where
/// the input's own type allows more); each signed input that a loop's
/// condition converts to an unsigned type, at least 0; and where the grid
/// is not known, `gridDim` along each dimension the kernel reads it.
fn candidates(k: &Kernel, lin: &LinFacts, syms: &Symbols, flags: &[VarId]) -> Vec<InputAssumption> {
    let mut all = Vec::new();
    loops(&k.body, &mut all);
    let mut found: BTreeMap<Subject, Range> = BTreeMap::new();
    let name = |c: VarId| format!("`{}`", k.vars[c].name);
    let mut wrapped = BTreeSet::new();
    for &s in &all {
        let wraps = wrapping(k, lin, syms, &counters(lin, syms, flags, s), s);
        wrapped.extend(wraps.iter().map(|&c| name(c)));
        let guards = lin.guards.get(&key(s)).cloned().unwrap_or_default();
        for &c in &wraps {
            let Some((_, hi)) = k.vars[c].ty.range() else {
                continue;
            };
            let max = hi / 2;
            let inputs = guards
                .iter()
                .flat_map(|g| g.vars())
                .filter(|&sym| syms.is_input(sym));
            for sym in inputs {
                let SymKind::Var(v) = syms.kind(sym) else {
                    continue;
                };
                if k.vars[v].ty.range().is_none_or(|(_, top)| top <= max) {
                    continue;
                }
                let entry = found.entry(Subject::Param(v)).or_default();
                entry.1 = Some(entry.1.map_or(max, |m| m.min(max)));
                entry.2.insert(name(c));
            }
        }
        for (v, counters) in converted_inputs(k, syms, s) {
            let entry = found.entry(Subject::Param(v)).or_default();
            entry.0 = Some(0);
            entry.2.extend(counters.into_iter().map(name));
        }
    }
    // A grid-stride loop's stride (`blockDim.x * gridDim.x`, 32-bit) may
    // wrap around where the grid is not known, even to 0.
    if syms.launch().grid.is_none() {
        wrapped.extend(found.values().flat_map(|f| f.2.iter().cloned()));
        if wrapped.is_empty() {
            let stuck = all.iter().filter(|s| unsettled(k, lin, syms, flags, s));
            wrapped.extend(stuck.flat_map(|s| counters(lin, syms, flags, s)).map(name));
        }
        for d in 0..3u8 {
            if reads_grid(k, d) {
                found.insert(
                    Subject::GridDim(d),
                    (None, Some(1 << LEAST_GRID_LOG), wrapped.clone()),
                );
            }
        }
    }
    found
        .into_iter()
        .map(|(subject, (min, max, counters))| InputAssumption {
            param: match subject {
                Subject::Param(v) => k.vars[v].name.clone(),
                Subject::GridDim(d) => format!("gridDim.{}", ["x", "y", "z"][d as usize]),
            },
            subject,
            min,
            max,
            counters: counters.into_iter().collect::<Vec<_>>().join(", "),
            cause: Default::default(),
        })
        .collect()
}

/// The signed integer inputs that loop `s`'s condition converts to an
/// unsigned type (`i < n` with `unsigned i` and `int n`), each with the
/// variables of the condition the loop writes (its counters).
fn converted_inputs(k: &Kernel, syms: &Symbols, s: &Stmt) -> Vec<(VarId, BTreeSet<VarId>)> {
    let Stmt::Loop {
        cond: Some(cond),
        body,
        step,
        ..
    } = s
    else {
        return Vec::new();
    };
    let mut written = BTreeSet::new();
    deps::written(body, &mut written);
    deps::written(step, &mut written);
    let mut read = BTreeSet::new();
    let mut inputs = BTreeSet::new();
    cond.visit(&mut |e| match &e.kind {
        ExprKind::Var(v) => {
            read.insert(*v);
        }
        ExprKind::Convert { value, .. } if !e.ty.is_signed() && !e.ty.is_float() => {
            if let ExprKind::Var(v) = value.kind {
                let input = syms.is_input(syms.var(v));
                if input && value.ty.is_signed() && !value.ty.is_float() {
                    inputs.insert(v);
                }
            }
        }
        _ => {}
    });
    let counters: BTreeSet<VarId> = read.intersection(&written).copied().collect();
    if counters.is_empty() {
        return Vec::new();
    }
    inputs
        .into_iter()
        .filter(|&v| k.vars[v].ty.range().is_some())
        .map(|v| (v, counters.clone()))
        .collect()
}

/// Whether kernel `k` reads `gridDim.d`.
fn reads_grid(k: &Kernel, d: u8) -> bool {
    let mut found = false;
    crate::ir::visit_exprs(&k.body, &mut |e: &Expr| {
        found |= matches!(e.kind, ExprKind::Builtin(Builtin::GridDim(x)) if x == d);
    });
    found
}

#[cfg(test)]
mod tests {
    use crate::bound::{prepare, Config, Outcome};
    use crate::cost::Metric;
    use crate::cuda::parse::parse_source;
    use crate::ir::lower::lower_kernel;
    use crate::source::SourceFile;

    /// The assumptions and the steps bound of kernel `k` of `src` at a
    /// block of 256 and a grid of 64.
    fn analyzed(src: &str) -> (Vec<String>, Outcome) {
        analyzed_at(src, true)
    }

    /// The assumptions and the steps bound of kernel `k` of `src`, at a
    /// block of 256 and a grid of 64 (`launched`) or at any launch.
    fn analyzed_at(src: &str, launched: bool) -> (Vec<String>, Outcome) {
        let f = parse_source(SourceFile::new("t.cu", src));
        let k = lower_kernel(&f, "k").unwrap();
        let config = Config {
            block: crate::launch::block([256, 1, 1]).ok().filter(|_| launched),
            grid: crate::launch::grid([64, 1, 1]).ok().filter(|_| launched),
            ..Config::default()
        };
        let p = prepare(&k, config);
        let steps = p.bound(&Metric::builtin("steps").unwrap()).work;
        (p.assumptions.iter().map(|a| a.to_string()).collect(), steps)
    }

    #[test]
    fn grid_stride_loops_over_unsigned_counters_are_bounded_under_an_assumption() {
        let loops = [
            (
                "size_t",
                "size_t",
                "(size_t)blockDim.x * gridDim.x",
                "n ≤ 2^63 − 1",
            ),
            (
                "unsigned",
                "unsigned",
                "blockDim.x * gridDim.x",
                "n ≤ 2^31 − 1",
            ),
            (
                "long long",
                "unsigned",
                "blockDim.x * gridDim.x",
                "n ≤ 2^31 − 1",
            ),
            (
                "unsigned long",
                "size_t",
                "blockDim.x * gridDim.x",
                "n ≤ 2^63 − 1",
            ),
        ];
        for (n_type, i_type, stride, assumed) in loops {
            let src = format!(
                "__global__ void k({n_type} n, float *y) {{\n\
                 for ({i_type} i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += {stride}) {{ y[i] = 2.0f * y[i]; }} }}"
            );
            let (assumptions, steps) = analyzed(&src);
            assert_eq!(assumptions, vec![assumed.to_string()], "{src}");
            assert!(matches!(steps, Outcome::Bound(_)), "{src}: {steps:?}");
        }
    }

    #[test]
    fn no_assumption_where_none_is_needed_or_none_helps() {
        // An `int` counter cannot wrap (overflow is undefined), and a
        // `size_t` one compared with an `unsigned` n stays below 2^32 + 2^40.
        for (n_type, i_type) in [("int", "int"), ("unsigned", "int"), ("unsigned", "size_t")] {
            let src = format!(
                "__global__ void k({n_type} n, float *y) {{\n\
                 for ({i_type} i = threadIdx.x; i < n; i += blockDim.x) {{ y[i] = 0.0f; }} }}"
            );
            let (assumptions, steps) = analyzed(&src);
            assert!(assumptions.is_empty(), "{src}: {assumptions:?}");
            assert!(matches!(steps, Outcome::Bound(_)), "{src}: {steps:?}");
        }
        // A step of a data-dependent size: no assumption on `n` helps.
        let src = "__global__ void k(unsigned n, unsigned *s, float *y) {\n\
                   for (unsigned i = threadIdx.x; i < n; i += s[0]) { y[i] = 0.0f; } }";
        let (assumptions, steps) = analyzed(src);
        assert!(assumptions.is_empty(), "{assumptions:?}");
        assert!(matches!(steps, Outcome::NoBound(..)), "{steps:?}");
    }

    #[test]
    fn an_int_bound_of_an_unsigned_counter_is_assumed_nonnegative() {
        let loops = [
            ("unsigned", "threadIdx.x", "blockDim.x"),
            ("size_t", "threadIdx.x", "blockDim.x"),
            (
                "unsigned int",
                "blockIdx.x * blockDim.x + threadIdx.x",
                "blockDim.x * gridDim.x",
            ),
        ];
        for (i_type, start, stride) in loops {
            let src = format!(
                "__global__ void k(int n, float *y) {{\n\
                 for ({i_type} i = {start}; i < n; i += {stride}) {{ y[i] = 0.0f; }} }}"
            );
            let (assumptions, steps) = analyzed(&src);
            assert_eq!(assumptions, ["0 ≤ n"], "{src}");
            assert!(matches!(steps, Outcome::Bound(_)), "{src}: {steps:?}");
        }
        // A signed counter compares signed: nothing to assume.
        let src = "__global__ void k(int n, float *y) {\n\
                   for (int i = threadIdx.x; i < n; i += blockDim.x) { y[i] = 0.0f; } }";
        let (assumptions, steps) = analyzed(src);
        assert!(assumptions.is_empty(), "{assumptions:?}");
        assert!(matches!(steps, Outcome::Bound(_)), "{steps:?}");
    }

    #[test]
    fn without_a_launch_only_a_32_bit_stride_needs_a_grid_assumption() {
        let loops: [(&str, &str, &str, &[&str]); 6] = [
            (
                "size_t",
                "size_t",
                "(size_t)blockDim.x * gridDim.x",
                &["n ≤ 2^63 − 1"],
            ),
            ("size_t", "size_t", "stride", &["n ≤ 2^63 − 1"]),
            (
                "unsigned",
                "unsigned",
                "blockDim.x * gridDim.x",
                &["n ≤ 2^31 − 1", "gridDim.x ≤ 2^21"],
            ),
            (
                "size_t",
                "size_t",
                "blockDim.x * gridDim.x",
                &["n ≤ 2^63 − 1", "gridDim.x ≤ 2^21"],
            ),
            (
                "int",
                "unsigned",
                "blockDim.x * gridDim.x",
                &["0 ≤ n", "gridDim.x ≤ 2^21"],
            ),
            // Even an `int` counter: the unsigned stride wraps to 0 at
            // 2^32 threads along x. Its trip count `⌈n/(blockDim.x·
            // gridDim.x)⌉` (see `stride`) holds where `i + stride` stays
            // below 2^31 too.
            (
                "int",
                "int",
                "blockDim.x * gridDim.x",
                &["n ≤ 2^30", "gridDim.x ≤ 2^20"],
            ),
        ];
        for (n_type, i_type, step, assumed) in loops {
            let src = format!(
                "__global__ void k({n_type} n, float *y) {{\n\
                 const size_t stride = (size_t)blockDim.x * gridDim.x;\n\
                 for ({i_type} i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += {step}) {{ y[i] = 0.0f; }} }}"
            );
            let (assumptions, steps) = analyzed_at(&src, false);
            assert_eq!(assumptions, assumed, "{src}");
            assert!(matches!(steps, Outcome::Bound(_)), "{src}: {steps:?}");
        }
    }
}
