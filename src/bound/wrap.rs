//! Loop counters that may wrap around, and the assumptions on the kernel's
//! inputs that rule it out.
//!
//! A grid-stride loop `for (size_t i = …; i < n; i += stride)` ends only
//! if `i + stride` never passes the counter type's maximum. For `n` within
//! `stride` of that maximum the counter wraps around to a small value and
//! the loop goes on (on the GPU as in the simulator), so no bound holds for
//! every `n`. What copper can give is a bound under an assumption on the
//! input: `n` at most half the counter type's range (`n ≤ 2^63 − 1` for a
//! `size_t` counter, `n ≤ 2^31 − 1` for an `unsigned` one). The assumption
//! is made only where it lets the analysis prove that the counter's updates
//! stay in range, and it is reported with every bound found under it.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use crate::absint::deps::{self, key};
use crate::absint::facts::LinFacts;
use crate::absint::symbols::{SymKind, Symbols, Update};
use crate::ir::{Kernel, Stmt, VarId};

/// An upper bound assumed on one integer parameter of a kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputAssumption {
    /// The parameter's name.
    pub param: String,
    /// Its variable.
    pub var: VarId,
    /// The largest value assumed.
    pub max: i128,
    /// The counters (listed) that could wrap around without it.
    pub counters: String,
}

impl InputAssumption {
    /// Whether the parameter's value `value` satisfies the assumption.
    pub fn holds(&self, value: f64) -> bool {
        value <= self.max as f64
    }

    /// Whether every assumption in `all` holds at `at` (values by name); a
    /// parameter without a value there is taken to satisfy it.
    pub fn all_hold(all: &[InputAssumption], at: &BTreeMap<String, f64>) -> bool {
        all.iter()
            .all(|a| at.get(&a.param).is_none_or(|&v| a.holds(v)))
    }

    /// Why it is made, for a report: "a larger `n` lets the counter `i`
    /// wrap around".
    pub fn why(&self) -> String {
        format!(
            "a larger `{}` lets the counter {} wrap around",
            self.param, self.counters
        )
    }

    /// The line a report prints for it.
    pub fn report_line(&self) -> String {
        format!(
            "assuming {self} ({}): the bounds hold only for such inputs",
            self.why()
        )
    }

    /// As JSON: `param`, `at_most`, `text` and `why`.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "param": self.param,
            "at_most": i64::try_from(self.max).ok(),
            "text": self.to_string(),
            "why": self.why(),
        })
    }
}

impl fmt::Display for InputAssumption {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let m = self.max;
        if m > 0 && (m + 1).count_ones() == 1 {
            write!(f, "{} ≤ 2^{} − 1", self.param, (m + 1).trailing_zeros())
        } else {
            write!(f, "{} ≤ {m}", self.param)
        }
    }
}

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

/// The `counters` of loop `s` that some assignment in its body or step
/// moves by a linear step that may leave the counter's type's range.
pub(super) fn wrapping(
    k: &Kernel,
    lin: &LinFacts,
    syms: &Symbols,
    counters: &BTreeSet<VarId>,
    s: &Stmt,
) -> BTreeSet<VarId> {
    let Stmt::Loop { body, step, .. } = s else {
        return BTreeSet::new();
    };
    let mut found = BTreeSet::new();
    for stmts in [body, step] {
        crate::ir::visit_stmts(stmts, &mut |s| {
            let Stmt::Assign { var, value, .. } = s else {
                return;
            };
            if !counters.contains(var) {
                return;
            }
            let Some(ctx) = lin.before.get(&key(s)) else {
                return;
            };
            if let Update::Linear(l) = syms.unwrapped_update(value, ctx) {
                if !syms.fits(k.vars[*var].ty, &l, ctx, &[]) {
                    found.insert(*var);
                }
            }
        });
    }
    found
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

/// How many loops of `k` have a counter that may wrap around.
pub(super) fn wrapping_loops(k: &Kernel, lin: &LinFacts, syms: &Symbols, flags: &[VarId]) -> usize {
    let mut all = Vec::new();
    loops(&k.body, &mut all);
    all.into_iter()
        .filter(|s| !wrapping(k, lin, syms, &counters(lin, syms, flags, s), s).is_empty())
        .count()
}

/// The assumptions that may keep the wrapping counters of `k` in range:
/// each integer input that a wrapping counter's loop guard compares it
/// with, at most half the counter type's range (where the input's own type
/// allows more).
pub(super) fn candidates(
    k: &Kernel,
    lin: &LinFacts,
    syms: &Symbols,
    flags: &[VarId],
) -> Vec<InputAssumption> {
    let mut all = Vec::new();
    loops(&k.body, &mut all);
    let mut found: BTreeMap<VarId, (i128, BTreeSet<String>)> = BTreeMap::new();
    for s in all {
        let wraps = wrapping(k, lin, syms, &counters(lin, syms, flags, s), s);
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
                let entry = found.entry(v).or_insert((max, BTreeSet::new()));
                entry.0 = entry.0.min(max);
                entry.1.insert(format!("`{}`", k.vars[c].name));
            }
        }
    }
    found
        .into_iter()
        .map(|(var, (max, counters))| InputAssumption {
            param: k.vars[var].name.clone(),
            var,
            max,
            counters: counters.into_iter().collect::<Vec<_>>().join(", "),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bound::{prepare, Config, Outcome};
    use crate::cost::Metric;
    use crate::cuda::parse::parse_source;
    use crate::ir::lower::lower_kernel;
    use crate::source::SourceFile;

    /// The assumptions and the steps bound of kernel `k` of `src` at a
    /// block of 256 and a grid of 64.
    fn analyzed(src: &str) -> (Vec<String>, Outcome) {
        let f = parse_source(SourceFile::new("t.cu", src));
        let k = lower_kernel(&f, "k").unwrap();
        let config = Config {
            block: Some([256, 1, 1]),
            grid: Some([64, 1, 1]),
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

    fn assumption(max: i128) -> InputAssumption {
        InputAssumption {
            param: "n".into(),
            var: 0,
            max,
            counters: "`i`".into(),
        }
    }

    #[test]
    fn assumptions_print_as_powers_of_two_and_check_values() {
        assert_eq!(assumption(i64::MAX as i128).to_string(), "n ≤ 2^63 − 1");
        assert_eq!(assumption(i32::MAX as i128).to_string(), "n ≤ 2^31 − 1");
        assert_eq!(assumption(1000).to_string(), "n ≤ 1000");
        let a = assumption(i32::MAX as i128);
        assert!(a.holds(2147483647.0) && !a.holds(2147483648.0));
        let at: BTreeMap<String, f64> = [("n".to_string(), 4e9)].into();
        assert!(!InputAssumption::all_hold(std::slice::from_ref(&a), &at));
        assert!(InputAssumption::all_hold(&[a], &BTreeMap::new()));
        assert_eq!(
            assumption(5).why(),
            "a larger `n` lets the counter `i` wrap around"
        );
    }
}
