//! Branch distribution (COpPER §5.1): code both branches of a possibly
//! divergent `if` run is run once, by every lane, outside the `if`.
//!
//! Two rewrites:
//! - **Common blocks.** Bottom-up over the kernel, at each divergent
//!   `if … else`, the most complex common code block of the two branches
//!   (dynamic programming like longest common substring, weighted by
//!   complexity: statements 1, loops 3× their body) is factored out:
//!   `if (c) {P1; X; S1} else {P2; X; S2}` becomes
//!   `cond = c; if (cond) {P1} else {P2}; X; if (cond) {S1} else {S2}`,
//!   repeatedly while a common block reaches the cutoff.
//! - **Common loads.** When both branches start with a statement reading the
//!   same array elements (`B[k] += A[i]` and `B[k] -= A[i]`), the elements
//!   are loaded once, by every lane, before the `if`.
//!
//! Each thread still runs its own statements in its own order; what
//! changes is the interleaving of lanes that took different branches.
//! A block moves only when that cannot matter: it writes no array, reads no
//! array a branch writes, has no barrier, jump or call with effects, does
//! not write what the condition reads, and uses no name declared in the
//! code it crosses. A load moves only from the first statement of each
//! branch, when every write to its array in the `if` is to the same
//! element and that element differs from lane to lane.

use std::collections::BTreeSet;

use copper::cuda::ast::{Expr, ExprKind, Function, Stmt, StmtKind, Type, UnOp};
use copper::source::Span;

use crate::ast_util::{
    self, branch_stmts, complexity, equiv_expr, equiv_stmt, fresh, ident, if_else, Effects,
};
use crate::{overlap, Candidate, Context, Proposals, Refusal, Skip, Transform};

/// Branch distribution.
pub struct BranchDistribution;

impl Transform for BranchDistribution {
    fn name(&self) -> &'static str {
        "branch distribution"
    }

    fn propose(&self, cx: &Context) -> Proposals {
        // Common blocks, for a spread of cutoffs: everything, half the
        // largest block, only the largest.
        let probe = Distributor::new(cx, u32::MAX).run();
        let mut out = Proposals {
            skipped: probe.skipped,
            ..Proposals::default()
        };
        let largest = probe.largest;
        if largest > 0 {
            let mut cutoffs = vec![1, largest.div_ceil(2), largest];
            cutoffs.dedup();
            let mut seen: Vec<Function> = Vec::new();
            for cutoff in cutoffs {
                let r = Distributor::new(cx, cutoff).run();
                if r.changes.is_empty() || seen.contains(&r.function) {
                    continue;
                }
                seen.push(r.function.clone());
                r.offer(self.name(), cx, &mut out);
            }
        }
        let loads = hoist_loads(cx);
        out.skipped.extend(loads.skipped.iter().cloned());
        if !loads.changes.is_empty() {
            loads.offer(self.name(), cx, &mut out);
        }
        out
    }
}

/// The outcome of one pass over a kernel.
struct Pass {
    function: Function,
    changes: Vec<String>,
    skipped: Vec<Skip>,
    /// The complexity of the largest movable common block seen.
    largest: u32,
    /// (array a moved statement reads, array a branch writes): the pairs
    /// that must not overlap.
    across: Vec<(String, String)>,
}

impl Pass {
    /// The pass's kernel as a candidate of `transform` in `out`, keeping
    /// the promise that the arrays it reads earlier than the original do
    /// not overlap those the branches write ([`overlap`]), or the reason
    /// it cannot.
    fn offer(self, transform: &'static str, cx: &Context, out: &mut Proposals) {
        let c = Candidate::new(transform, self.function, self.changes.join("; "));
        let why = (
            "nothing moves out of a branch",
            "a branch writes one of them while the moved code reads the other",
        );
        overlap::offer(cx, c, &self.across, out, cx.function.meta.span, why);
    }
}

/// The pairs (array `moved` reads, array `branches` write).
fn crossing(moved: &[Stmt], branches: &[&[Stmt]]) -> Vec<(String, String)> {
    let reads = Effects::of(moved).array_reads;
    let writes: BTreeSet<String> = branches
        .iter()
        .flat_map(|b| Effects::of(b).array_writes)
        .collect();
    reads
        .iter()
        .flat_map(|r| writes.iter().map(move |w| (r.clone(), w.clone())))
        .collect()
}

struct Distributor<'a, 'c> {
    cx: &'a Context<'c>,
    cutoff: u32,
    taken: BTreeSet<String>,
    changes: Vec<String>,
    skipped: Vec<Skip>,
    largest: u32,
    across: Vec<(String, String)>,
}

impl<'a, 'c> Distributor<'a, 'c> {
    fn new(cx: &'a Context<'c>, cutoff: u32) -> Self {
        Distributor {
            cx,
            cutoff,
            taken: ast_util::names_in(cx.function),
            changes: Vec::new(),
            skipped: Vec::new(),
            largest: 0,
            across: Vec::new(),
        }
    }

    fn run(mut self) -> Pass {
        let mut f = self.cx.function.clone();
        f.body = ast_util::rewrite_bottom_up(std::mem::take(&mut f.body), &mut |s| self.rewrite(s));
        Pass {
            function: f,
            changes: self.changes,
            skipped: self.skipped,
            largest: self.largest,
            across: self.across,
        }
    }

    /// A statement whose nested statements are rewritten already: a
    /// divergent `if` with an `else` has its common code factored out.
    fn rewrite(&mut self, s: Stmt) -> Vec<Stmt> {
        let span = s.meta.span;
        match s.kind {
            StmtKind::If {
                cond,
                then,
                els: Some(els),
            } => {
                let (t, e) = (branch_stmts(&then), branch_stmts(&els));
                if self.cx.analysis.uniform_at(span) == Some(false) {
                    return self.split(cond, t, e, span);
                }
                vec![Stmt {
                    meta: s.meta,
                    kind: StmtKind::If {
                        cond,
                        then: Box::new(ast_util::block(t)),
                        els: Some(Box::new(ast_util::block(e))),
                    },
                }]
            }
            kind => vec![Stmt { meta: s.meta, kind }],
        }
    }

    /// Factors the most complex movable common block out of a divergent
    /// `if`, and again out of what is left before and after it.
    fn split(&mut self, cond: Expr, t: Vec<Stmt>, e: Vec<Stmt>, span: Span) -> Vec<Stmt> {
        let Some(m) = self.mcccb(&cond, &t, &e, span) else {
            return vec![if_else(cond, t, e)];
        };
        self.largest = self.largest.max(m.complexity);
        if m.complexity < self.cutoff {
            return vec![if_else(cond, t, e)];
        }
        // Evaluate the condition once, unless it is already a variable the
        // branches leave alone.
        let mut out = Vec::new();
        let written = Effects::of(&t)
            .writes
            .union(&Effects::of(&e).writes)
            .cloned()
            .collect::<BTreeSet<_>>();
        let c = match &cond.kind {
            ExprKind::Ident(n) if !written.contains(n) => cond,
            _ => {
                let name = fresh("take_then", &mut self.taken);
                out.push(ast_util::decl(
                    Type::scalar(copper::cuda::ast::BaseType::Bool),
                    &name,
                    Some(cond),
                ));
                ident(&name)
            }
        };
        let x: Vec<Stmt> = t[m.i..m.i + m.len].to_vec();
        self.across.extend(crossing(&x, &[&t, &e]));
        let first = x.iter().map(|s| s.meta.span).find(|s| !s.is_synthetic());
        let what = match (x.len(), first) {
            (1, Some(at)) => format!("the statement at line {}", self.cx.line(at)),
            (n, Some(at)) => format!("{n} statements from line {}", self.cx.line(at)),
            (n, None) => format!("{n} statements"),
        };
        self.changes.push(format!(
            "moved {what} (complexity {}), common to both branches of the divergent `if` at line {}, out of it",
            m.complexity,
            self.cx.line(span)
        ));
        let (p1, s1) = (t[..m.i].to_vec(), t[m.i + m.len..].to_vec());
        let (p2, s2) = (e[..m.j].to_vec(), e[m.j + m.len..].to_vec());
        if !p1.is_empty() || !p2.is_empty() {
            out.extend(self.split(c.clone(), p1, p2, span));
        }
        out.extend(x);
        if !s1.is_empty() || !s2.is_empty() {
            out.extend(self.split(c, s1, s2, span));
        }
        out
    }

    /// The most complex common block of `t` and `e` that may move.
    fn mcccb(&mut self, cond: &Expr, t: &[Stmt], e: &[Stmt], span: Span) -> Option<Common> {
        let (n, m) = (t.len(), e.len());
        // run[a][b]: how many statements end equal at t[a-1], e[b-1].
        let mut run = vec![vec![0usize; m + 1]; n + 1];
        let mut best: Option<Common> = None;
        let mut refused: Option<Refusal> = None;
        for a in 1..=n {
            for b in 1..=m {
                if !equiv_stmt(&t[a - 1], &e[b - 1]) {
                    continue;
                }
                run[a][b] = run[a - 1][b - 1] + 1;
                for len in (1..=run[a][b]).rev() {
                    let (i, j) = (a - len, b - len);
                    let cx: u32 = t[i..a].iter().map(complexity).sum();
                    if cx == 0 || best.as_ref().is_some_and(|bst| bst.complexity >= cx) {
                        continue;
                    }
                    match movable(cond, t, e, i, j, len, self.cx) {
                        Ok(()) => {
                            best = Some(Common {
                                i,
                                j,
                                len,
                                complexity: cx,
                            });
                            break;
                        }
                        Err(why) => refused = refused.or(Some(why)),
                    }
                }
            }
        }
        if best.is_none() {
            if let Some(why) = refused {
                self.skipped.push(Skip {
                    span,
                    reason: format!("common code of this `if` stays: {why}"),
                });
            }
        }
        best
    }
}

/// A common block: `t[i..i+len]` equals `e[j..j+len]`.
struct Common {
    i: usize,
    j: usize,
    len: usize,
    complexity: u32,
}

/// Whether `t[i..i+len]` (equal to `e[j..j+len]`) may move out of the `if`.
fn movable(
    cond: &Expr,
    t: &[Stmt],
    e: &[Stmt],
    i: usize,
    j: usize,
    len: usize,
    cx: &Context,
) -> Result<(), Refusal> {
    let x = Effects::of(&t[i..i + len]);
    if x.sync {
        return Err("it has a barrier".into());
    }
    if x.jumps {
        return Err(Refusal::Jumps { what: "it has a" });
    }
    if x.opaque_calls {
        return Err("it calls a function that may have effects".into());
    }
    if !x.array_writes.is_empty() {
        return Err(format!(
            "it writes `{}`, and lanes of the two branches would write in another order",
            x.array_writes.iter().next().expect("nonempty")
        )
        .into());
    }
    let c = Effects::of(&[ast_util::stmt(StmtKind::Expr(cond.clone()))]);
    if let Some(v) = x.writes.intersection(&c.reads).next() {
        return Err(format!("it writes `{v}`, which the condition reads").into());
    }
    let rest = [&t[..i], &t[i + len..], &e[..j], &e[j + len..]];
    for part in rest {
        let p = Effects::of(part);
        if let Some(a) = x.array_reads.intersection(&p.array_writes).next() {
            return Err(format!("it reads `{a}`, which a branch writes").into());
        }
    }
    for part in [&t[..i], &e[..j]] {
        let p = Effects::of(part);
        if let Some(n) = p.declares.intersection(&x.touched()).next() {
            return Err(format!("it uses `{n}`, declared before it in the branch").into());
        }
    }
    // Names it declares move to the enclosing scope: they must be used
    // nowhere else in the kernel.
    if !x.declares.is_empty() {
        let mut count = std::collections::BTreeMap::<String, usize>::new();
        for s in &cx.function.body {
            ast_util::visit_stmts(s, &mut |st| {
                if let StmtKind::Decl(ds) = &st.kind {
                    for d in ds {
                        *count.entry(d.name.clone()).or_default() += 1;
                    }
                }
            });
        }
        for d in &x.declares {
            // Declared once in each branch, nowhere else.
            if count.get(d).copied().unwrap_or(0) > 2 {
                return Err(
                    format!("it declares `{d}`, a name used elsewhere in the kernel").into(),
                );
            }
        }
    }
    Ok(())
}

/// Loads the array elements both branches of a divergent `if` read first
/// once, before the `if`.
fn hoist_loads(cx: &Context) -> Pass {
    let mut h = Hoister {
        cx,
        taken: ast_util::names_in(cx.function),
        changes: Vec::new(),
        skipped: Vec::new(),
        across: Vec::new(),
    };
    let mut f = cx.function.clone();
    f.body = ast_util::rewrite_bottom_up(std::mem::take(&mut f.body), &mut |s| h.rewrite(s));
    Pass {
        function: f,
        changes: h.changes,
        skipped: h.skipped,
        largest: 0,
        across: h.across,
    }
}

struct Hoister<'a, 'c> {
    cx: &'a Context<'c>,
    taken: BTreeSet<String>,
    changes: Vec<String>,
    skipped: Vec<Skip>,
    across: Vec<(String, String)>,
}

impl Hoister<'_, '_> {
    /// A statement whose nested statements are rewritten already: the
    /// loads both branches of a divergent `if` start with come before it.
    fn rewrite(&mut self, s: Stmt) -> Vec<Stmt> {
        let span = s.meta.span;
        match s.kind {
            StmtKind::If { cond, then, els } => {
                let mut t = branch_stmts(&then);
                let mut e = els.map(|x| branch_stmts(&x)).unwrap_or_default();
                let mut out = Vec::new();
                if !e.is_empty() && self.cx.analysis.uniform_at(span) == Some(false) {
                    out = self.hoist(&mut t, &mut e, span);
                }
                out.push(if_else(cond, t, e));
                out
            }
            kind => vec![Stmt { meta: s.meta, kind }],
        }
    }

    /// Declarations loading the common leading elements, with the
    /// branches' first statements rewritten to use them.
    fn hoist(&mut self, t: &mut [Stmt], e: &mut [Stmt], span: Span) -> Vec<Stmt> {
        let (Some(ft), Some(fe)) = (t.first(), e.first()) else {
            return Vec::new();
        };
        let (lt, le) = (first_reads(ft), first_reads(fe));
        let all: Vec<Stmt> = t.iter().chain(e.iter()).cloned().collect();
        let mut decls = Vec::new();
        let mut names = Vec::new();
        for load in lt.iter().filter(|l| le.iter().any(|m| equiv_expr(l, m))) {
            if let Err(why) = self.safe(load, &all) {
                self.skipped.push(Skip {
                    span,
                    reason: format!(
                        "`{}` stays in both branches: {why}",
                        copper::cuda::print::expression(load)
                    ),
                });
                continue;
            }
            let Some(ty) = self.elem_type(load) else {
                continue;
            };
            let arr = ast_util::root_name(load).unwrap_or("v");
            let name = fresh(&format!("{arr}_elem"), &mut self.taken);
            for first in [&mut t[0], &mut e[0]] {
                use_temp(first, load, &ident(&name));
            }
            names.push(format!("`{}`", copper::cuda::print::expression(load)));
            let moved = ast_util::stmt(StmtKind::Expr(load.clone()));
            self.across.extend(crossing(&[moved], &[&all]));
            decls.push(ast_util::decl(ty, &name, Some(load.clone())));
        }
        if !decls.is_empty() {
            self.changes.push(format!(
                "loaded {} once before the divergent `if` at line {} instead of in each branch",
                names.join(" and "),
                self.cx.line(span)
            ));
        }
        decls
    }

    /// Whether reading `load` before the `if` reads what each branch's first
    /// statement read.
    fn safe(&self, load: &Expr, branches: &[Stmt]) -> Result<(), Refusal> {
        let ExprKind::Index(_, index) = &load.kind else {
            return Err("not a plain array element".into());
        };
        let mut index_vars = BTreeSet::new();
        ast_util::visit_expr(index, &mut |x| {
            if let ExprKind::Ident(n) = &x.kind {
                index_vars.insert(n.clone());
            }
            if matches!(
                x.kind,
                ExprKind::Assign(..)
                    | ExprKind::Call(..)
                    | ExprKind::Unary(
                        UnOp::PostInc | UnOp::PreInc | UnOp::PostDec | UnOp::PreDec,
                        _
                    )
            ) {
                index_vars.insert("\u{0}effects".into());
            }
        });
        if index_vars.contains("\u{0}effects") {
            return Err(Refusal::SideEffects { what: "its index" });
        }
        let sites = self.cx.sites_of(load);
        let Some(&site) = sites.first() else {
            return Err("it is not an array copper understands".into());
        };
        let array = &self.cx.kernel.arrays[self.cx.kernel.sites[site].array];
        if !(array.is_global() || array.is_shared()) {
            return Err("a local array gains nothing".into());
        }
        // Writes to the array anywhere in the `if` must be to this element,
        // and each lane's element its own.
        let name = ast_util::root_name(load).unwrap_or_default();
        let mut other_write = false;
        let mut writes = false;
        for s in branches {
            ast_util::visit_stmt_exprs(s, &mut |x| {
                let target = match &x.kind {
                    ExprKind::Assign(_, lhs, _) => Some(&**lhs),
                    ExprKind::Unary(
                        UnOp::PostInc | UnOp::PreInc | UnOp::PostDec | UnOp::PreDec,
                        lhs,
                    ) => Some(&**lhs),
                    ExprKind::Call(..) => {
                        other_write = true;
                        None
                    }
                    _ => None,
                };
                if let Some(lhs) = target {
                    if ast_util::root_name(lhs) == Some(name) {
                        writes = true;
                        if !equiv_expr(lhs, load) {
                            other_write = true;
                        }
                    }
                    if let ExprKind::Ident(v) = &lhs.kind {
                        if index_vars.contains(v) {
                            other_write = true;
                        }
                    }
                }
            });
        }
        if other_write {
            return Err("a branch writes its array elsewhere, or its index".into());
        }
        if writes && !sites.iter().all(|&x| self.cx.analysis.lane_injective(x)) {
            return Err("lanes may share the element a branch writes".into());
        }
        Ok(())
    }

    /// The element type of the array `load` reads, as a C type.
    fn elem_type(&self, load: &Expr) -> Option<Type> {
        let name = ast_util::root_name(load)?;
        if let Some(p) = self.cx.function.params.iter().find(|p| p.name == name) {
            return crate::check::copyable(&p.ty.base).then(|| p.ty.base_only());
        }
        let mut found = None;
        for s in &self.cx.function.body {
            ast_util::visit_stmts(s, &mut |st| {
                if let StmtKind::Decl(ds) = &st.kind {
                    for d in ds.iter().filter(|d| d.name == name) {
                        if crate::check::copyable(&d.ty.base) {
                            found = Some(d.ty.base_only());
                        }
                    }
                }
            });
        }
        found
    }
}

/// Array elements a statement reads (a compound assignment's target
/// included), outermost first; `None` for statements that are not
/// expression statements.
fn first_reads(s: &Stmt) -> Vec<Expr> {
    let StmtKind::Expr(e) = &s.kind else {
        return Vec::new();
    };
    let mut out: Vec<Expr> = Vec::new();
    let mut push = |x: &Expr| {
        if matches!(x.kind, ExprKind::Index(..)) && !out.iter().any(|o| equiv_expr(o, x)) {
            out.push(x.clone());
        }
    };
    match &e.kind {
        ExprKind::Assign(op, lhs, rhs) => {
            if op.is_some() {
                push(lhs);
            }
            ast_util::visit_expr(rhs, &mut |x| push(x));
            if let ExprKind::Index(_, i) = &lhs.kind {
                ast_util::visit_expr(i, &mut |x| push(x));
            }
        }
        _ => ast_util::visit_expr(e, &mut |x| push(x)),
    }
    // Only reads with nothing nested that reads memory: `a[b[i]]` is left.
    out.retain(|x| {
        let ExprKind::Index(_, i) = &x.kind else {
            return false;
        };
        let mut nested = false;
        ast_util::visit_expr(i, &mut |y| nested |= matches!(y.kind, ExprKind::Index(..)));
        !nested
    });
    out
}

/// Rewrites a branch's first statement to read `temp` instead of `load`.
fn use_temp(s: &mut Stmt, load: &Expr, temp: &Expr) {
    let StmtKind::Expr(e) = &mut s.kind else {
        return;
    };
    // `load op= rhs` reads `load`: spell it out as `load = temp op rhs`.
    if let ExprKind::Assign(Some(op), lhs, rhs) = &mut e.kind {
        if equiv_expr(lhs, load) {
            let mut r = (**rhs).clone();
            ast_util::replace_expr(&mut r, load, temp);
            **rhs = ast_util::bin(*op, temp.clone(), r);
            e.kind = ExprKind::Assign(None, lhs.clone(), rhs.clone());
            return;
        }
    }
    ast_util::replace_expr(e, load, temp);
}

/// The rewrite before and after, and the kernels it leaves alone with the
/// exact reason ([`crate::fixture`]).
#[cfg(test)]
mod tests {
    use super::BranchDistribution;
    use crate::fixture::{check, check_not_applicable};

    #[test]
    fn a_loop_common_to_both_branches_runs_once_before_them() {
        let desc = check(
            &BranchDistribution,
            [32, 1, 1],
            r#"__global__ void odd_even(const float *a, float *b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float s = 0.0f;
    if (i % 2 == 0) {
        for (int j = 0; j < n; j++) {
            s += a[j];
        }
        b[i] = s + 1.0f;
    } else {
        for (int j = 0; j < n; j++) {
            s += a[j];
        }
        b[i] = s - 1.0f;
    }
}
"#,
            r#"__global__ void odd_even(const float *__restrict__ a, float *__restrict__ b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float s = 0.0f;
    bool take_then = i % 2 == 0;
    for (int j = 0; j < n; j++) {
        s += a[j];
    }
    if (take_then) {
        b[i] = s + 1.0f;
    } else {
        b[i] = s - 1.0f;
    }
}
"#,
        );
        assert_eq!(
        desc,
        "moved the statement at line 5 (complexity 3), common to both branches of the divergent `if` at line 4, out of it; declares `a` and `b` `__restrict__`: callers must pass arrays that do not overlap (copper cannot tell: the file does not launch it, and there is no parameter file)"
    );
    }

    #[test]
    fn the_first_load_of_both_branches_is_read_once() {
        let desc = check(
            &BranchDistribution,
            [32, 1, 1],
            r#"#define THRESHOLD 16
__global__ void clamp_scale(const int *__restrict__ in, int *__restrict__ out, unsigned int n) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int v;
        if (threadIdx.x < THRESHOLD) {
            v = in[i] * 2;
        } else {
            v = in[i] + 3;
        }
        out[i] = v;
    }
}
"#,
            r#"#define THRESHOLD 16
__global__ void clamp_scale(const int *__restrict__ in, int *__restrict__ out, unsigned int n) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int v;
        int in_elem = in[i];
        if (threadIdx.x < THRESHOLD) {
            v = in_elem * 2;
        } else {
            v = in_elem + 3;
        }
        out[i] = v;
    }
}
"#,
        );
        assert_eq!(
            desc,
            "loaded `in[i]` once before the divergent `if` at line 6 instead of in each branch"
        );
    }

    #[test]
    fn common_code_writing_what_the_condition_reads_stays() {
        check_not_applicable(
            &BranchDistribution,
            [32, 1, 1],
            r#"__global__ void countdown(const int *in, int *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int k = i % 3;
    if (k > 0) {
        k = k - 1;
        out[i] = in[i] + k;
    } else {
        k = k - 1;
        out[i] = in[i] - k;
    }
}
"#,
            "common code of this `if` stays: it writes `k`, which the condition reads",
        );
    }

    #[test]
    fn common_array_writes_stay_in_their_branches() {
        check_not_applicable(
        &BranchDistribution,
        [32, 1, 1],
        r#"__global__ void tagged(float *a, float *b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i % 2 == 0) {
        a[i] = 0.0f;
        b[i] = 1.0f;
    } else {
        a[i] = 0.0f;
        b[i] = 2.0f;
    }
}
"#,
        "common code of this `if` stays: it writes `a`, and lanes of the two branches would write in another order",
    );
    }
}
