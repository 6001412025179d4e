//! Redundant work (`redundant-work`): a loop that every thread of a block
//! runs identically, so the block does the same work once per thread
//! where once per block would do (each thread summing a whole array to
//! write one element, each thread copying the same row).
//!
//! The test is the dependence analysis asked across the whole block
//! ([`crate::absint::deps::analyze_block_wide`]) on the jump-free kernel.
//! A loop is reported when
//! - its condition is the same in every thread of a block and no thread
//!   leaves it early while others go on (same trip count);
//! - every array index in it is the same in every thread (same
//!   addresses), it reads global memory at least once, and every
//!   variable it writes and every value it stores is the same in every
//!   thread (values independent of the thread);
//! - it holds no barrier, atomic or warp primitive (those make threads
//!   cooperate, not repeat each other);
//! - the threads that reach it may be many: no enclosing condition that
//!   differs between threads other than a range test (`i < n`), and no
//!   earlier `return` under one (`if (tid != 0) return;` leaves one
//!   thread, which repeats nothing).
//!
//! The outermost such loop is reported once; the factor is the number of
//! threads per block when the block is known (the work is done that many
//! times where once per block would do).

use std::collections::BTreeSet;

use crate::absint::deps::{key, written, DepFacts, State};
use crate::bound::Prepared;
use crate::cuda::ast::BinOp;
use crate::ir::structured::FlagKind;
use crate::ir::{Builtin, Expr, ExprKind, Kernel, Stmt, VarId};
use crate::launch::Dims;
use crate::source::Span;

use super::{Code, Finding};

/// The findings of the loops of the kernel `prep` analyzed that every
/// thread of a block runs identically; `block` the launch's block, when
/// known.
pub fn findings(prep: &Prepared, block: Option<Dims>) -> Vec<Finding> {
    let deps = prep.block_wide_deps();
    let mut out = Vec::new();
    let mut walk = Walk {
        kernel: &prep.kernel,
        deps: &deps,
        threads: block.map(Dims::count),
        returns: prep
            .flags()
            .iter()
            .filter(|(_, k)| *k == FlagKind::Return)
            .map(|(v, _)| *v)
            .collect(),
        few: false,
        out: &mut out,
    };
    walk.stmts(&prep.kernel.body, false);
    out
}

struct Walk<'a> {
    kernel: &'a Kernel,
    deps: &'a DepFacts,
    /// Threads per block, when known.
    threads: Option<u64>,
    /// The flags the jump-free kernel sets where a thread returns.
    returns: Vec<VarId>,
    /// Whether an earlier `return` may have left only a few threads.
    few: bool,
    out: &'a mut Vec<Finding>,
}

impl Walk<'_> {
    /// Walks `stmts`; `selective` when an enclosing condition may let only
    /// a few threads through.
    fn stmts(&mut self, stmts: &[Stmt], selective: bool) {
        for s in stmts {
            self.stmt(s, selective);
        }
    }

    fn uniform(&self, s: &Stmt) -> bool {
        self.deps
            .uniform_cond
            .get(&key(s))
            .copied()
            .unwrap_or(false)
    }

    fn stmt(&mut self, s: &Stmt, selective: bool) {
        match s {
            Stmt::If {
                cond, then, els, ..
            } => {
                let here = selective || (!self.uniform(s) && !range_test(cond));
                self.stmts(then, here);
                self.stmts(els, here);
            }
            Stmt::Loop {
                scope,
                body,
                step,
                span,
                ..
            } => {
                if !selective && !self.few && self.redundant(s) {
                    self.out.push(self.finding(*span, body, step));
                    return;
                }
                let here =
                    selective || !self.uniform(s) || self.deps.divergent_exit.contains(scope);
                self.stmts(body, here);
                self.stmts(step, here);
            }
            Stmt::Scope { body, .. } => self.stmts(body, selective),
            Stmt::Return { .. } => self.few |= selective,
            Stmt::Assign { var, .. } if self.returns.contains(var) => self.few |= selective,
            _ => {}
        }
    }

    /// Whether every thread of a block runs the loop `s` identically.
    fn redundant(&self, s: &Stmt) -> bool {
        let Stmt::Loop {
            scope,
            cond,
            body,
            step,
            ..
        } = s
        else {
            return false;
        };
        if !self.uniform(s) || self.deps.divergent_exit.contains(scope) {
            return false;
        }
        let Some(head) = self.deps.head.get(&key(s)) else {
            return false;
        };
        let inner = [body.as_slice(), step.as_slice()];
        let mut cooperates = false;
        let mut stores_vary = false;
        for part in inner {
            crate::ir::visit_stmts(part, &mut |x| match x {
                Stmt::Sync { .. } | Stmt::Atomic { .. } | Stmt::Return { .. } => cooperates = true,
                Stmt::Store { value, .. } => {
                    let st = self.deps.before.get(&key(x));
                    stores_vary |= st.is_none_or(|st| !self.same_everywhere(value, st));
                }
                _ => {}
            });
        }
        if cooperates || stores_vary {
            return false;
        }
        // Every index the same, no warp primitive, some global read.
        let mut all_uniform = true;
        let mut reads_global = false;
        let mut visit = |e: &Expr| {
            e.visit(&mut |x| match &x.kind {
                ExprKind::Load(a) => {
                    reads_global |= self.kernel.arrays[a.array].is_global();
                }
                ExprKind::Call(f, _) if f.is_warp() => all_uniform = false,
                _ => {}
            });
        };
        if let Some(c) = cond {
            visit(c);
        }
        crate::ir::visit_exprs(body, &mut visit);
        crate::ir::visit_exprs(step, &mut visit);
        let mut sites = Vec::new();
        let mut collect = |e: &Expr| {
            e.visit(&mut |x| {
                if let ExprKind::Load(a) = &x.kind {
                    sites.push(a.site);
                }
            })
        };
        if let Some(c) = cond {
            collect(c);
        }
        crate::ir::visit_exprs(body, &mut collect);
        crate::ir::visit_exprs(step, &mut collect);
        crate::ir::visit_stmts(body, &mut |x| {
            if let Stmt::Store { access, .. } = x {
                sites.push(access.site);
            }
        });
        all_uniform &= sites
            .iter()
            .all(|site| self.deps.index.get(site).is_some_and(|d| d.is_uniform()));
        // Every variable the loop writes is the same in every thread at
        // its head (after every iteration).
        let mut vars = BTreeSet::new();
        written(body, &mut vars);
        written(step, &mut vars);
        all_uniform &= vars
            .iter()
            .all(|v| head.get(*v).is_some_and(|d| d.is_uniform()));
        all_uniform && reads_global
    }

    /// Whether `e` has the same value in every thread of the block in the
    /// state `st`: variables uniform there, no thread index, loads at
    /// uniform indices, no warp primitive.
    fn same_everywhere(&self, e: &Expr, st: &State) -> bool {
        let mut same = true;
        e.visit(&mut |x| match &x.kind {
            ExprKind::Var(v) => same &= st.get(*v).is_some_and(|d| d.is_uniform()),
            ExprKind::Builtin(Builtin::ThreadIdx(_)) => same = false,
            ExprKind::Load(a) => {
                same &= self.deps.index.get(&a.site).is_some_and(|d| d.is_uniform())
            }
            ExprKind::Call(f, _) if f.is_warp() => same = false,
            _ => {}
        });
        same
    }

    /// The finding for the loop at `span`.
    fn finding(&self, span: Span, body: &[Stmt], step: &[Stmt]) -> Finding {
        let mut read = BTreeSet::new();
        let mut stores = false;
        for part in [body, step] {
            crate::ir::visit_exprs(part, &mut |e| {
                e.visit(&mut |x| {
                    if let ExprKind::Load(a) = &x.kind {
                        let array = &self.kernel.arrays[a.array];
                        if array.is_global() {
                            read.insert(format!("`{}`", array.name));
                        }
                    }
                })
            });
            crate::ir::visit_stmts(part, &mut |x| stores |= matches!(x, Stmt::Store { .. }));
        }
        let read: Vec<String> = read.into_iter().collect();
        let what = if stores {
            "every thread writes the same values to the same elements"
        } else {
            "every thread computes the same values"
        };
        let (times, worst) = match self.threads {
            Some(n) => (
                format!("{n} times per block (its {n} threads)"),
                Some(n as f64),
            ),
            None => ("once per thread of the block".to_string(), None),
        };
        Finding {
            code: Code::RedundantWork,
            span,
            message: format!(
                "every thread of a block runs this loop identically: {what}, so its work (reading {}) is done {times} where once per block would do",
                read.join(", ")
            ),
            why: "its trip count, every address it accesses and every value it computes are the same in every thread of the block (the dependence analysis across the block)".into(),
            help: Some("compute it once per block: split the loop among the block's threads (a strided loop and a block reduction into `__shared__` memory, then `__syncthreads()`), or once for all blocks before the launch and pass the result".into()),
            worst,
            site: None,
            calls: Vec::new(),
        }
    }
}

/// Whether `cond` only compares (`i < n`, `i >= n && j < m`): a range test
/// that lets most threads through, not one that picks a few
/// (`tid == 0`, `tid % 32 == 0`).
fn range_test(cond: &Expr) -> bool {
    match &cond.kind {
        ExprKind::Binary(BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge, ..) => true,
        ExprKind::And(a, b) | ExprKind::Or(a, b) => range_test(a) && range_test(b),
        ExprKind::Convert { value, .. } => range_test(value),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use crate::bound::Config;
    use crate::cuda::parse::parse_source;
    use crate::ir::lower::lower_kernel;
    use crate::lint::{lint_kernel, Code, Finding};
    use crate::source::SourceFile;

    /// The `redundant-work` findings of kernel `k` in `src`, for `block`.
    fn found(src: &str, block: [u64; 3]) -> Vec<Finding> {
        let block = crate::launch::block(block).unwrap();
        let parsed = parse_source(SourceFile::new("t.cu", src));
        let name = parsed.kernels().next().expect("a kernel").name.clone();
        let kernel = lower_kernel(&parsed, &name).expect("kernel lowers");
        let config = Config {
            block: Some(block),
            grid: crate::launch::grid([4, 1, 1]).ok(),
            ..Config::default()
        };
        lint_kernel(&kernel, config, None)
            .findings
            .into_iter()
            .filter(|f| f.code == Code::RedundantWork)
            .collect()
    }

    const SUM_ALL: &str = "__global__ void k(const float *a, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float total = 0.0f;
        for (int k = 0; k < n; k++) total += a[k];
        out[i] = a[i] / total;
    }
}";

    #[test]
    fn each_thread_summing_the_whole_array_is_reported_with_the_factor() {
        let f = found(SUM_ALL, [128, 1, 1]);
        assert_eq!(f.len(), 1, "{f:#?}");
        assert_eq!(f[0].worst, Some(128.0));
        assert!(
            f[0].message
                .contains("every thread computes the same values")
                && f[0].message.contains("reading `a`")
                && f[0].message.contains("128 times per block"),
            "{}",
            f[0].message
        );
        // The outermost loop of a nest, once.
        let nest = SUM_ALL.replace(
            "for (int k = 0; k < n; k++) total += a[k];",
            "for (int r = 0; r < n; r++) for (int k = 0; k < n; k++) total += a[r * n + k];",
        );
        assert_eq!(found(&nest, [16, 16, 1]).len(), 1);
    }

    #[test]
    fn work_split_among_threads_or_done_by_one_is_not_reported() {
        for (from, to) in [
            // Each thread its own row: the addresses differ.
            ("total += a[k];", "total += a[i * n + k];"),
            // A strided loop: the trip count and addresses differ.
            (
                "int k = 0; k < n; k++",
                "int k = threadIdx.x; k < n; k += blockDim.x",
            ),
            // One thread does it.
            ("if (i < n) {", "if (threadIdx.x == 0) {"),
            // A loop that reads no global memory.
            ("total += a[k];", "total += k * 0.5f;"),
            // An atomic per iteration is counting, not repeating.
            ("total += a[k];", "atomicAdd(&out[k], 1.0f);"),
        ] {
            let src = SUM_ALL.replace(from, to);
            assert!(found(&src, [128, 1, 1]).is_empty(), "{src}");
        }
        let returns = SUM_ALL.replace("if (i < n) {", "if (threadIdx.x != 0) return;\n    {");
        assert!(found(&returns, [128, 1, 1]).is_empty(), "{returns}");
        // threadIdx.y varies in a 2-D block: no finding for rows per thread.
        let by_y = SUM_ALL.replace("total += a[k];", "total += a[threadIdx.y * n + k];");
        assert!(found(&by_y, [16, 16, 1]).is_empty());
    }
}
