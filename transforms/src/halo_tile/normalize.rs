//! Window loops as the recognizers read them. Students write a window's
//! bounds and clamps as statements on a local of the position:
//!
//! ```c
//! int xx = x + dx;
//! if (xx < 0) xx = 0;                    // or xx = xx < 0 ? 0 : …;
//! if (xx >= w) xx = w - 1;               // or xx = min(max(xx, 0), w - 1);
//! if (yy < 0 || yy >= h) continue;
//! s += in[yy * w + xx];
//! ```
//!
//! The recognizers ([`super::window`], [`super::window2d`]) read a body
//! where each local holds its final value from its declaration on and the
//! reads stand under `if`s. [`function`] gives the kernel in that form,
//! only for recognizing the window; the rewrite is made on the kernel as
//! written (its loops and reads keep their node ids, and the tile serves
//! the same reads), so the student's code stays as it was.
//!
//! What makes the two forms read the same elements under the same
//! conditions, in each `for` loop's body (its own statements, not those of
//! nested blocks):
//!
//! - **Updates folded into the declaration.** `int xx = e;` followed
//!   directly by statements that only assign `xx` from `xx` and other
//!   values (`xx = E;`, `if (C) xx = D;`, `if (C) xx = D; else xx = D2;`,
//!   blocks of those), each pure, becomes `int xx = E[xx := e];`, the
//!   updates composed in order (`if (C) xx = D;` is `xx = C ? D : xx`).
//!   Nothing else runs between the declaration and the updates, and
//!   they assign `xx` only, so every other name they mention (none of the
//!   same declaration's other locals, which may have been updated) has the
//!   value it had at the declaration: the value of `xx` after them is the
//!   folded expression. A local a later declarator of the same statement
//!   copies (`int xx = x + dx, c = xx;`) is left alone.
//! - **A `continue` guard as the guard of the rest.** `if (C) continue;`
//!   (no `else`, `C` pure) at the top level of the body, followed by the
//!   rest `S` of the body, becomes `if (!C) { S }`: with no statement
//!   after `S` in the body, skipping to the next iteration and skipping
//!   `S` are the same. `!(a || b)` is written `!a && !b` and a negated
//!   comparison as its opposite (`xx < 0 || xx >= w` becomes `xx >= 0 &&
//!   xx < w`), the bounds the recognizers read.
//!
//! What the loop reads is then what the recognizers prove of the normal
//! form: a clamp through a local is a key of the position like
//! `min(max(x + dx, 0), w - 1)` (or the `?:` the student wrote, with the
//! local replaced by the position), a guard through `continue` a bound on
//! the reads.

use copper::cuda::ast::{BaseType, BinOp, Expr, ExprKind, Function, Init, Stmt, StmtKind, UnOp};

use super::key::names;
use crate::ast_util::{
    self, bin, equiv_expr, expr, ident, is_pure, replace_expr, rewrite_bottom_up, Jump,
};

/// Kernel `f` with the bodies of its `for` loops in normal form.
pub(crate) fn function(f: &Function) -> Function {
    let body = rewrite_bottom_up(f.body.clone(), &mut |mut s| {
        if let StmtKind::For { body, .. } = &mut s.kind {
            let stmts = ast_util::branch_stmts(body);
            let meta = body.meta.clone();
            **body = Stmt {
                meta,
                kind: StmtKind::Block(without_continue(fold_updates(stmts))),
            };
        }
        vec![s]
    });
    Function { body, ..f.clone() }
}

/// The statements `stmts` with the updates of each local right after its
/// declaration folded into the declaration (the same values in every
/// local after them, see the module's documentation).
pub(crate) fn fold_updates(mut stmts: Vec<Stmt>) -> Vec<Stmt> {
    let mut at = 0;
    while at < stmts.len() {
        while at + 1 < stmts.len() && fold_into(&mut stmts, at) {
            stmts.remove(at + 1);
        }
        at += 1;
    }
    stmts
}

/// Folds statement `at + 1` into the declaration at `at` when it only
/// updates one of its locals (see the module's documentation).
fn fold_into(stmts: &mut [Stmt], at: usize) -> bool {
    let StmtKind::Decl(ds) = &stmts[at].kind else {
        return false;
    };
    let declared: Vec<&str> = ds.iter().map(|d| d.name.as_str()).collect();
    let found = ds.iter().enumerate().find_map(|(n, d)| {
        let scalar = d.ty.base == BaseType::Int && !d.ty.is_pointer() && d.dims.is_empty();
        let Some(Init::Expr(init)) = &d.init.as_ref().filter(|_| scalar) else {
            return None;
        };
        let new = update(&stmts[at + 1], &d.name)?;
        let others = names(&new);
        let copied_later = ds[n + 1..].iter().any(|later| match &later.init {
            Some(Init::Expr(e)) => names(e).contains(&d.name),
            _ => true,
        });
        let mentions_others = declared.iter().any(|o| *o != d.name && others.contains(*o));
        if copied_later || mentions_others {
            return None;
        }
        let mut folded = new;
        replace_expr(&mut folded, &ident(&d.name), init);
        Some((n, folded))
    });
    let Some((n, folded)) = found else {
        return false;
    };
    if let StmtKind::Decl(ds) = &mut stmts[at].kind {
        ds[n].init = Some(Init::Expr(folded));
    }
    true
}

/// The value statement `s` leaves in `name`, as an expression of the
/// value before it, when `s` only assigns `name` (by `=`) from pure
/// values, under pure conditions.
fn update(s: &Stmt, name: &str) -> Option<Expr> {
    update_as_written(s, name).map(min_max)
}

/// [`update`] with the `?:` of an `if` as it is.
fn update_as_written(s: &Stmt, name: &str) -> Option<Expr> {
    match &s.kind {
        StmtKind::Expr(e) => match &e.kind {
            ExprKind::Assign(None, target, value)
                if matches!(&target.kind, ExprKind::Ident(n) if n == name) && is_pure(value) =>
            {
                Some((**value).clone())
            }
            _ => None,
        },
        StmtKind::If { cond, then, els } if is_pure(cond) => {
            let then = update(then, name)?;
            let els = match els {
                Some(e) => update(e, name)?,
                None => ident(name),
            };
            Some(expr(ExprKind::Cond(
                Box::new(cond.clone()),
                Box::new(then),
                Box::new(els),
            )))
        }
        StmtKind::Block(b) if !b.is_empty() => {
            let mut value = ident(name);
            for s in b {
                let mut next = update(s, name)?;
                replace_expr(&mut next, &ident(name), &value);
                value = next;
            }
            Some(value)
        }
        _ => None,
    }
}

/// `e` with each `q < c ? c : q` written `max(q, c)` and each `q > c ?
/// c : q` (or `q >= c ? c - 1 : q`) written `min(q, c)`, the same `int`
/// (`<=` and `>=` alike; either operand of the comparison may be `q`).
fn min_max(e: Expr) -> Expr {
    let Expr { meta, kind } = e;
    let ExprKind::Cond(c, a, b) = kind else {
        return Expr { meta, kind };
    };
    let (a, b) = (min_max(*a), min_max(*b));
    let oriented = match &c.kind {
        ExprKind::Binary(op, l, r) if equiv_expr(l, &b) => Some((*op, &**r)),
        ExprKind::Binary(op, l, r) if equiv_expr(r, &b) => match op {
            BinOp::Lt => Some((BinOp::Gt, &**l)),
            BinOp::Le => Some((BinOp::Ge, &**l)),
            BinOp::Gt => Some((BinOp::Lt, &**l)),
            BinOp::Ge => Some((BinOp::Le, &**l)),
            _ => None,
        },
        _ => None,
    };
    let call = match oriented {
        Some((BinOp::Lt | BinOp::Le, bound)) if equiv_expr(&a, bound) => Some("max"),
        Some((BinOp::Gt | BinOp::Ge, bound)) if equiv_expr(&a, bound) => Some("min"),
        Some((BinOp::Ge, bound))
            if equiv_expr(&a, &bin(BinOp::Sub, bound.clone(), ast_util::int(1))) =>
        {
            Some("min")
        }
        _ => None,
    };
    match call {
        Some(call) => expr(ExprKind::Call(call.to_string(), vec![b, a])),
        None => Expr {
            meta,
            kind: ExprKind::Cond(c, Box::new(a), Box::new(b)),
        },
    }
}

/// The statements `stmts` of a loop body with each top-level `if (C)
/// continue;` made the guard of the statements after it.
fn without_continue(mut stmts: Vec<Stmt>) -> Vec<Stmt> {
    let Some(at) = stmts.iter().position(|s| continue_guard(s).is_some()) else {
        return stmts;
    };
    let rest = without_continue(stmts.split_off(at + 1));
    let Some(guard) = stmts.pop().as_ref().and_then(continue_guard).map(negated) else {
        return stmts;
    };
    stmts.push(ast_util::if_else(guard, rest, Vec::new()));
    stmts
}

/// The condition of `if (C) continue;` (or `{ continue; }`), `C` pure.
fn continue_guard(s: &Stmt) -> Option<Expr> {
    ast_util::guarded_jump(s, Jump::Continue)
        .filter(|c| is_pure(c))
        .cloned()
}

/// `!c`, written as a conjunction of comparisons where `c` is a
/// disjunction of them.
fn negated(c: Expr) -> Expr {
    let flipped = |op: &BinOp| match op {
        BinOp::Lt => Some(BinOp::Ge),
        BinOp::Le => Some(BinOp::Gt),
        BinOp::Gt => Some(BinOp::Le),
        BinOp::Ge => Some(BinOp::Lt),
        BinOp::Eq => Some(BinOp::Ne),
        BinOp::Ne => Some(BinOp::Eq),
        _ => None,
    };
    match c.kind {
        ExprKind::Binary(BinOp::Or, a, b) => bin(BinOp::And, negated(*a), negated(*b)),
        ExprKind::Binary(op, a, b) if flipped(&op).is_some() => {
            let op = flipped(&op).unwrap_or(op);
            bin(op, *a, *b)
        }
        ExprKind::Unary(UnOp::Not, x) => *x,
        kind => expr(ExprKind::Unary(UnOp::Not, Box::new(Expr { kind, ..c }))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use copper::cuda::parse::parse_source;
    use copper::cuda::print;
    use copper::source::SourceFile;

    /// The body of the kernel in `src` in normal form, printed.
    fn normal(src: &str) -> String {
        let file = parse_source(SourceFile::new("t.cu", src));
        let f = function(file.kernels().next().expect("a kernel"));
        print::function(&f)
    }

    #[test]
    fn updates_of_a_local_fold_into_its_declaration() {
        let out = normal(
            "__global__ void k(const float *in, float *out, int n) {
                int i = blockIdx.x * blockDim.x + threadIdx.x;
                float s = 0.0f;
                for (int k = -2; k <= 2; k++) {
                    int j = i + k;
                    if (j < 0) j = 0;
                    if (j >= n) j = n - 1;
                    s += in[j];
                }
                out[i] = s;
            }",
        );
        assert!(out.contains("int j = min(max(i + k, 0), n - 1);"), "{out}");
        assert!(!out.contains("j = 0;"), "{out}");
    }

    #[test]
    fn a_continue_guard_guards_the_rest_of_the_body() {
        let out = normal(
            "__global__ void k(const float *in, float *out, int n) {
                int i = blockIdx.x * blockDim.x + threadIdx.x;
                float s = 0.0f;
                for (int k = -2; k <= 2; k++) {
                    int j = i + k;
                    if (j < 0 || j >= n) continue;
                    s += in[j];
                }
                out[i] = s;
            }",
        );
        assert!(out.contains("if (j >= 0 && j < n) {"), "{out}");
        assert!(!out.contains("continue"), "{out}");
    }

    #[test]
    fn a_local_copied_by_a_later_declarator_or_assigned_from_another_is_left_alone() {
        let out = normal(
            "__global__ void k(const float *in, float *out, int n) {
                int i = blockIdx.x * blockDim.x + threadIdx.x;
                float s = 0.0f;
                for (int k = -2; k <= 2; k++) {
                    int j = i + k, c = j;
                    j = j < 0 ? 0 : j;
                    int a = i, b = k;
                    a = a + b;
                    s += in[j] + in[c] + in[a];
                }
                out[i] = s;
            }",
        );
        assert!(out.contains("j = j < 0 ? 0 : j;"), "{out}");
        assert!(out.contains("a = a + b;"), "{out}");
    }
}
