//! Hoisting loop-invariant loads into registers (beyond COpPER): a load
//! `a[e]` that every iteration of a `for` loop evaluates, where nothing in
//! the loop writes `a` or anything `e` reads, is read once before the loop
//! into a local, and the loop uses the local.
//!
//! Correct by construction:
//! - the loop writes neither `a` (through any index, or by a call that may
//!   write memory) nor a variable of `e`, and `e` is pure, so every
//!   iteration's load reads the same element;
//! - the loop has no barrier, so another thread's write that the original
//!   load could see and the hoisted one cannot would race with it (the
//!   original's result would be undefined);
//! - the load is evaluated unconditionally at the top level of the body,
//!   before anything that may leave the iteration, so the original reads
//!   the element whenever the loop runs at all; the hoisted load runs
//!   under the loop's first test (`0 < h` for `for (int j = 0; j < h; …)`)
//!   and so never reads an element the original would not;
//! - `a` is a pointer parameter or a one-dimensional `__shared__` array,
//!   used only as `a[index]`, and no local pointer could reach it; a
//!   pointer parameter the loop does not write may still overlap one it
//!   writes, so the rewrite keeps the promise of [`crate::overlap`]
//!   (proved, or `__restrict__` in the code it writes).

use std::collections::BTreeSet;

use copper::cuda::ast::{BaseType, Expr, ExprKind, Function, Init, Space, Stmt, StmtKind, Type};

use crate::ast_util::{self, assign, decl, ident, int, stmt, Effects};
use crate::{overlap, Candidate, Context, Proposals, Skip, Transform};

/// Loop-invariant load hoisting.
pub struct HoistLoads;

impl Transform for HoistLoads {
    fn name(&self) -> &'static str {
        "load hoisting"
    }

    fn propose(&self, cx: &Context) -> Proposals {
        let f = cx.function;
        if has_local_pointer(f) {
            return Proposals::refused(
                f.meta.span,
                "no load is hoisted: a local pointer variable could alias an array",
            );
        }
        let mut out = Proposals::default();
        for p in f.params.iter().filter(|p| is_vector(&p.ty.base)) {
            out.skipped.push(Skip {
                span: p.meta.span,
                reason: format!(
                    "no load of `{}` is hoisted: its elements are `{}` vectors, and load hoisting handles scalar elements only",
                    p.name,
                    p.ty.base.c_name()
                ),
            });
        }
        let mut h = Hoister {
            cx,
            arrays: hoistable_arrays(f),
            taken: ast_util::names_in(f),
            changes: Vec::new(),
            skipped: Vec::new(),
            across: Vec::new(),
        };
        let body = ast_util::rewrite_bottom_up(f.body.clone(), &mut |s| h.rewrite(s));
        out.skipped.extend(h.skipped);
        if h.changes.is_empty() {
            return out;
        }
        let c = Candidate::new(
            self.name(),
            Function { body, ..f.clone() },
            h.changes.join("; "),
        );
        let why = (
            "no load is hoisted",
            "the loop writes one of them while the hoisted load reads the other",
        );
        overlap::offer(cx, c, &h.across, &mut out, f.meta.span, why);
        out
    }
}

/// The arrays a load may be hoisted from, with their element types:
/// pointer parameters and one-dimensional `__shared__` arrays.
/// Whether `b` is a CUDA vector type (`float4`, `int2`): its elements are
/// not scalars, and `T x = 0;` would not compile.
fn is_vector(b: &BaseType) -> bool {
    matches!(b, BaseType::Named(n) if copper::ir::record::Record::vector(n).is_some())
}

fn hoistable_arrays(f: &Function) -> Vec<(String, Type)> {
    let mut out: Vec<(String, Type)> = f
        .params
        .iter()
        .filter(|p| p.ty.pointers.len() == 1 && p.dims.is_empty())
        .filter(|p| p.ty.base.size_bytes().is_some() && !is_vector(&p.ty.base))
        .map(|p| (p.name.clone(), p.ty.base_only()))
        .collect();
    for s in &f.body {
        ast_util::visit_stmts(s, &mut |x| {
            if let StmtKind::Decl(ds) = &x.kind {
                out.extend(
                    ds.iter()
                        .filter(|d| d.space == Space::Shared && d.dims.len() == 1)
                        .filter(|d| !d.ty.is_pointer() && d.ty.base.size_bytes().is_some())
                        .filter(|d| !is_vector(&d.ty.base))
                        .map(|d| (d.name.clone(), d.ty.base_only())),
                );
            }
        });
    }
    // A name declared twice (shadowing) is ambiguous: leave it alone.
    let names: Vec<String> = out.iter().map(|(n, _)| n.clone()).collect();
    out.retain(|(n, _)| names.iter().filter(|m| *m == n).count() == 1);
    out.retain(|(n, _)| ast_util::array_uses(f, n).is_ok());
    out
}

/// Whether the kernel declares a pointer variable of its own.
fn has_local_pointer(f: &Function) -> bool {
    let mut found = false;
    for s in &f.body {
        ast_util::visit_stmts(s, &mut |x| {
            if let StmtKind::Decl(ds) = &x.kind {
                found |= ds.iter().any(|d| d.ty.is_pointer());
            }
        });
    }
    found
}

struct Hoister<'a, 'c> {
    cx: &'a Context<'c>,
    arrays: Vec<(String, Type)>,
    taken: BTreeSet<String>,
    changes: Vec<String>,
    skipped: Vec<Skip>,
    /// (hoisted array, array its loop writes): the pairs that must not
    /// overlap.
    across: Vec<(String, String)>,
}

impl Hoister<'_, '_> {
    /// A statement whose nested statements are rewritten already: a `for`
    /// loop may come back with loads hoisted out of it in front.
    fn rewrite(&mut self, s: Stmt) -> Vec<Stmt> {
        if matches!(s.kind, StmtKind::For { .. }) {
            self.hoist_from(s)
        } else {
            vec![s]
        }
    }

    /// The loads hoisted out of loop `l`, then `l` using them.
    fn hoist_from(&mut self, mut l: Stmt) -> Vec<Stmt> {
        let line = self.cx.line(l.meta.span);
        let StmtKind::For {
            init,
            cond,
            step,
            body,
        } = &mut l.kind
        else {
            return vec![l];
        };
        let stmts = ast_util::branch_stmts(body);
        let candidates = self.invariant_loads(&stmts);
        if candidates.is_empty() {
            return vec![l];
        }
        let mut loop_effects = Effects::of(std::slice::from_ref(&**body));
        if let Some(st) = step {
            let e = Effects::of(&[stmt(StmtKind::Expr(st.clone()))]);
            loop_effects.writes.extend(e.writes);
        }
        let skip = |why: String| Skip {
            span: l.meta.span,
            reason: format!("no load is hoisted out of the loop at line {line}: {why}"),
        };
        if loop_effects.sync {
            self.skipped.push(skip("it has a barrier".into()));
            return vec![l];
        }
        if loop_effects.opaque_calls {
            self.skipped
                .push(skip("it calls a function that may write memory".into()));
            return vec![l];
        }
        let Some(first_test) =
            ast_util::loop_first_test(init.as_deref(), cond.as_ref(), step.as_ref(), body)
        else {
            self.skipped.push(skip(
                "its first test is not known before it starts (it needs `for (int j = start; cond; …)` with `cond` over `j` and values the loop does not change)".into(),
            ));
            return vec![l];
        };
        let mut before = Vec::new();
        let mut loads = Vec::new();
        let mut hoisted = Vec::new();
        for (load, array, ty) in candidates {
            let index = match &load.kind {
                ExprKind::Index(_, i) => i.as_ref(),
                _ => continue,
            };
            let mut index_reads = Effects::of(&[stmt(StmtKind::Expr(index.clone()))]).reads;
            index_reads.insert(array.clone());
            if loop_effects.array_writes.contains(&array)
                || loop_effects.declares.contains(&array)
                || index_reads.iter().any(|v| loop_effects.writes.contains(v))
            {
                continue;
            }
            let name = ast_util::fresh(&format!("{array}_elem"), &mut self.taken);
            before.push(decl(ty, &name, Some(int(0))));
            loads.push(assign(ident(&name), load.clone()));
            ast_util::visit_stmt_roots_mut(body, &mut |e| {
                ast_util::replace_expr(e, &load, &ident(&name))
            });
            hoisted.push(format!("`{}`", copper::cuda::print::expression(&load)));
            let written = loop_effects.array_writes.iter();
            self.across
                .extend(written.map(|w| (array.clone(), w.clone())));
        }
        if hoisted.is_empty() {
            return vec![l];
        }
        before.push(ast_util::if_else(first_test, loads, Vec::new()));
        self.changes.push(format!(
            "loaded {} once before the loop at line {line} instead of in every iteration",
            hoisted.join(" and ")
        ));
        before.push(l);
        before
    }

    /// The loads `a[e]` of a hoistable array with a pure index, evaluated
    /// unconditionally by a top-level statement of the body before anything
    /// that may leave the iteration; each once, in order.
    fn invariant_loads(&self, stmts: &[Stmt]) -> Vec<(Expr, String, Type)> {
        let mut out: Vec<(Expr, String, Type)> = Vec::new();
        for (i, s) in stmts.iter().enumerate() {
            if Effects::of(&stmts[..i]).jumps {
                break;
            }
            let roots: Vec<&Expr> = match &s.kind {
                StmtKind::Expr(e) => vec![e],
                StmtKind::Decl(ds) => ds
                    .iter()
                    .filter_map(|d| match &d.init {
                        Some(Init::Expr(e)) => Some(e),
                        _ => None,
                    })
                    .collect(),
                _ => Vec::new(),
            };
            for root in roots {
                ast_util::visit_expr(root, &mut |e| {
                    let ExprKind::Index(base, index) = &e.kind else {
                        return;
                    };
                    let ExprKind::Ident(a) = &base.kind else {
                        return;
                    };
                    let Some((_, ty)) = self.arrays.iter().find(|(n, _)| n == a) else {
                        return;
                    };
                    if ast_util::is_pure(index)
                        && !ast_util::reads_memory(index)
                        && ast_util::unconditional_in(root, e.meta.id)
                        && !out.iter().any(|(x, _, _)| ast_util::equiv_expr(x, e))
                    {
                        out.push((e.clone(), a.clone(), ty.clone()));
                    }
                });
            }
        }
        out
    }
}

/// The rewrite before and after, and the kernels it leaves alone with the
/// exact reason ([`crate::fixture`]).
#[cfg(test)]
mod tests {
    use super::HoistLoads;
    use crate::fixture::{check, check_not_applicable};

    #[test]
    fn a_row_factor_is_loaded_once_before_the_loop() {
        let desc = check(
            &HoistLoads,
            [64, 1, 1],
            r#"__global__ void scale_rows(float *m, const float *f, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        for (int c = 0; c < cols; c++) {
            m[r * cols + c] = m[r * cols + c] * f[r];
        }
    }
}
"#,
            r#"__global__ void scale_rows(float *__restrict__ m, const float *__restrict__ f, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        float f_elem = 0;
        if (0 < cols) {
            f_elem = f[r];
        }
        for (int c = 0; c < cols; c++) {
            m[r * cols + c] = m[r * cols + c] * f_elem;
        }
    }
}
"#,
        );
        assert_eq!(
            desc,
            "loaded `f[r]` once before the loop at line 4 instead of in every iteration; declares `m` and `f` `__restrict__`: callers must pass arrays that do not overlap (copper cannot tell: the file does not launch it, and there is no parameter file)"
        );
    }

    #[test]
    fn a_bias_under_a_macro_is_loaded_once_in_an_unsigned_loop() {
        let desc = check(
            &HoistLoads,
            [64, 1, 1],
            r#"#define BIAS 0.5f
__global__ void add_bias(const float *__restrict__ x, float *__restrict__ y, const float *__restrict__ b,
                         unsigned int batch, unsigned int dim) {
    unsigned int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j < dim) {
        for (unsigned int s = 0; s < batch; ++s) {
            y[s * dim + j] = x[s * dim + j] + b[j] * BIAS;
        }
    }
}
"#,
            r#"#define BIAS 0.5f
__global__ void add_bias(const float *__restrict__ x, float *__restrict__ y, const float *__restrict__ b,
                         unsigned int batch, unsigned int dim) {
    unsigned int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j < dim) {
        float b_elem = 0;
        if (0 < batch) {
            b_elem = b[j];
        }
        for (unsigned int s = 0; s < batch; ++s) {
            y[s * dim + j] = x[s * dim + j] + b_elem * BIAS;
        }
    }
}
"#,
        );
        assert_eq!(
            desc,
            "loaded `b[j]` once before the loop at line 6 instead of in every iteration"
        );
    }

    #[test]
    fn a_local_pointer_may_alias_every_array() {
        check_not_applicable(
            &HoistLoads,
            [64, 1, 1],
            r#"__global__ void accumulate(const float *src, float *dst, int n, int reps) {
    float *p = dst + blockIdx.x * blockDim.x;
    int i = threadIdx.x;
    for (int r = 0; r < reps; r++) {
        p[i] += src[blockIdx.x];
    }
}
"#,
            "no load is hoisted: a local pointer variable could alias an array",
        );
    }

    #[test]
    fn vector_elements_are_left_alone() {
        check_not_applicable(
        &HoistLoads,
        [64, 1, 1],
        r#"__global__ void norms(const float4 *v, float *out, int n, int reps) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float s = 0.0f;
        for (int r = 0; r < reps; r++) {
            s += v[i].x * v[i].x + v[i].y * v[i].y;
        }
        out[i] = s;
    }
}
"#,
        "no load of `v` is hoisted: its elements are `float4` vectors, and load hoisting handles scalar elements only",
    );
    }
}
