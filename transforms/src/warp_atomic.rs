//! Every thread adding to one global counter (`atomicAdd(total, x)`)
//! becomes one atomic per warp: each thread keeps its term in a register
//! (the identity, 0, when a guard keeps it from the atomic), the warp sums
//! the terms with `__shfl_down_sync`, and its first lane adds the sum
//! unless it is 0 (a warp none of whose threads reach the atomic leaves the
//! array untouched, as the original does).
//!
//! ```text
//! int i = blockIdx.x * blockDim.x + threadIdx.x;   if (blockDim.x * blockDim.y * blockDim.z % 32 == 0) {
//! if (i < n) atomicAdd(total, in[i]);                   int warp_total = 0;
//!                                                       if (i < n) warp_total += (int)(in[i]);
//!                                                       warp_total += __shfl_down_sync(0xffffffff, warp_total, 16);
//!                                                       … 8, 4, 2, 1
//!                                                       if (first lane && warp_total != 0) atomicAdd(total, warp_total);
//!                                                   } else {
//!                                                       if (i < n) atomicAdd(total, in[i]);
//!                                                   }
//! ```
//!
//! Why the results stay the same, on every launch:
//! - the rewrite is generic in the block: the warp's first lane is found
//!   from the linear thread index, and blocks whose threads do not fill
//!   whole warps (the shuffles' full mask would name lanes that do not
//!   exist) run the original statement, by a test every thread of a block
//!   evaluates alike;
//! - every thread reaches the shuffles: the statement is one of the
//!   kernel's body, nothing before it or in it returns, and the atomic is
//!   inside `if`s only (no loop runs it twice), whose conditions are
//!   evaluated as before;
//! - the atomic's result is not used, its address names only parameters,
//!   launch builtins and constants (the same value after the statement as
//!   at it), and the array it adds to is used nowhere else in the kernel,
//!   so adding later and once per warp changes no value the kernel reads;
//! - integer sums wrap and do not depend on the order; a floating-point
//!   sum in another order may differ in its last bits, so it is rewritten
//!   only with `--allow-reassociation` (checked within
//!   [`crate::check::reassociation_tolerance`]);
//! - a guard that already keeps all but one thread of a warp (`==` in a
//!   condition: `if (tid == 0)`) is left alone: there is nothing to save.

use crate::check::CHECKED_WITHIN;
use copper::cuda::ast::{BinOp, CastStyle, Expr, ExprKind, Function, Stmt, StmtKind, Type, UnOp};
use copper::ir::Scalar;

use crate::ast_util::{self, bin, decl, expr, ident, if_else, int, stmt};
use crate::{Candidate, Context, Proposals, Skip, Transform};

/// One atomic per warp instead of one per thread.
pub struct WarpAtomic;

impl Transform for WarpAtomic {
    fn name(&self) -> &'static str {
        "warp-aggregated atomic"
    }

    fn propose(&self, cx: &Context) -> Proposals {
        let mut out = Proposals::default();
        let f = cx.function;
        for (at, s) in f.body.iter().enumerate() {
            let mut calls = Vec::new();
            ast_util::visit_stmt_exprs(s, &mut |e| {
                if matches!(&e.kind, ExprKind::Call(n, _) if n == "atomicAdd") {
                    calls.push(e.clone());
                }
            });
            if calls.is_empty() {
                continue;
            }
            let line = cx.line(calls[0].meta.span);
            match plan(cx, at, calls.len()) {
                Ok(p) => {
                    let order = if p.integers {
                        "integer sums wrap, so the new order gives the same result".to_string()
                    } else {
                        format!("the summation order changes, so the floating-point result may differ in the last bits (allowed by --allow-reassociation; {CHECKED_WITHIN})")
                    };
                    let description = format!(
                        "every thread's `atomicAdd` on `{}` at line {line} becomes one per warp: each thread keeps its term (0 where its guard keeps it from the atomic), the warp sums the terms with `__shfl_down_sync`, and its first lane adds the sum when it is not 0 (32× fewer atomics on one address, which the cost model does not price as contention); blocks whose threads do not fill whole warps run the original statement; {order}",
                        p.array
                    );
                    out.candidates.push(Candidate {
                        reassociates: !p.integers,
                        contention: Some(format!(
                            "it adds to `{}` once per warp instead of once per thread",
                            p.array
                        )),
                        ..Candidate::new(self.name(), rewrite(f, at, &p), description)
                    });
                }
                Err(why) => out.skipped.push(Skip {
                    span: s.meta.span,
                    reason: format!("the `atomicAdd` at line {line} stays one per thread: {why}"),
                }),
            }
        }
        out
    }
}

/// What the rewrite of the statement needs.
struct Plan {
    /// The address the atomic adds to (`total`, `&sums[blockIdx.x]`).
    address: Expr,
    /// The array it points into.
    array: String,
    /// The element type, as the parameter declares it.
    ty: Type,
    /// Whether the elements are integers.
    integers: bool,
}

/// Checks the preconditions for the statement `f.body[at]`, which holds
/// `calls` atomics.
fn plan(cx: &Context, at: usize, calls: usize) -> Result<Plan, String> {
    let f = cx.function;
    let s = &f.body[at];
    if calls != 1 {
        return Err("the statement has more than one atomic".into());
    }
    if ast_util::returns(&f.body[..=at]) {
        return Err("a thread may return before it, so not every lane reaches the shuffles".into());
    }
    let address = find(s)?;
    let array = base_param(f, &address).ok_or(
        "its address is not a pointer parameter indexed by values every thread of the block shares",
    )?;
    let mut uses = 0;
    for x in &f.body {
        ast_util::visit_stmt_exprs(x, &mut |e| {
            uses += usize::from(matches!(&e.kind, ExprKind::Ident(n) if *n == array));
        });
    }
    if uses != 1 {
        return Err(format!("`{array}` is used elsewhere in the kernel"));
    }
    let param = f
        .params
        .iter()
        .find(|p| p.name == array)
        .ok_or("its array is not a parameter")?;
    let elem = cx
        .kernel
        .arrays
        .iter()
        .find(|a| a.name == array)
        .map(|a| a.elem)
        .ok_or("its array is not one the analysis knows")?;
    use Scalar as S;
    let integers = match elem {
        S::I32 | S::U32 | S::I64 | S::U64 => true,
        S::F32 | S::F64 if cx.allow_reassociation => false,
        S::F32 | S::F64 => {
            return Err("its floating-point sum would be added in another order (allowed by --allow-reassociation)".into())
        }
        other => {
            return Err(format!(
                "its elements are `{}`, which `__shfl_down_sync` does not take",
                other.c_name()
            ))
        }
    };
    Ok(Plan {
        address,
        array,
        ty: param.ty.base_only(),
        integers,
    })
}

/// The address of the one `atomicAdd(p, x);` in `s`, an expression
/// statement reached through `if`s and blocks only.
fn find(s: &Stmt) -> Result<Expr, String> {
    match &s.kind {
        StmtKind::Expr(e) => match &e.kind {
            ExprKind::Call(n, args) if n == "atomicAdd" => match args.as_slice() {
                [p, _] => Ok(p.clone()),
                _ => Err("it does not take two arguments".into()),
            },
            _ => Err("its result is used".into()),
        },
        StmtKind::Block(xs) => {
            let mut found = None;
            for x in xs {
                if has_atomic(x) {
                    found = Some(find(x)?);
                }
            }
            found.ok_or_else(|| "no atomic".into())
        }
        StmtKind::If { cond, then, els } => {
            let mut eq = false;
            copper::cuda::visit::visit_expr(cond, &mut |e| {
                eq |= matches!(&e.kind, ExprKind::Binary(BinOp::Eq, ..));
            });
            if eq {
                return Err("its guard (`==`) may already keep all but one lane of a warp".into());
            }
            if has_atomic_expr(cond) {
                return Err("its result is used".into());
            }
            match els {
                Some(e) if has_atomic(e) => find(e),
                _ => find(then),
            }
        }
        _ => Err("it is inside a loop or another statement that may run it other than once".into()),
    }
}

/// Whether `s` holds an `atomicAdd`.
fn has_atomic(s: &Stmt) -> bool {
    let mut found = false;
    ast_util::visit_stmt_exprs(s, &mut |e| found |= is_atomic(e));
    found
}

/// Whether `e` holds an `atomicAdd`.
fn has_atomic_expr(e: &Expr) -> bool {
    let mut found = false;
    copper::cuda::visit::visit_expr(e, &mut |x| found |= is_atomic(x));
    found
}

/// Whether `e` is a call of `atomicAdd`.
fn is_atomic(e: &Expr) -> bool {
    matches!(&e.kind, ExprKind::Call(n, _) if n == "atomicAdd")
}

/// The pointer parameter `address` points into (`p`, `&p[e]`, `p + e`),
/// when every name in it is a parameter the kernel never assigns or a
/// launch builtin (`blockIdx`, `blockDim`, `gridDim`), so it is the same in
/// every thread of the block and after the statement.
fn base_param(f: &Function, address: &Expr) -> Option<String> {
    let root = match &address.kind {
        ExprKind::Ident(n) => n.clone(),
        ExprKind::Unary(UnOp::AddrOf, x) => match &x.kind {
            ExprKind::Index(b, _) => ast_util::root_name(b)?.to_string(),
            _ => return None,
        },
        ExprKind::Binary(BinOp::Add, b, _) => ast_util::root_name(b)?.to_string(),
        _ => return None,
    };
    let param = f.params.iter().find(|p| p.name == root)?;
    if !param.ty.is_pointer() {
        return None;
    }
    let assigned = ast_util::assigned_names(&f.body);
    let mut uniform = true;
    copper::cuda::visit::visit_expr(address, &mut |e| match &e.kind {
        ExprKind::Ident(n) => {
            uniform &= ["blockIdx", "blockDim", "gridDim"].contains(&n.as_str())
                || (f.params.iter().any(|p| p.name == *n) && !assigned.contains(n));
        }
        ExprKind::Index(b, _) if !matches!(&b.kind, ExprKind::Ident(n) if *n == root) => {
            uniform = false
        }
        ExprKind::Call(..) | ExprKind::Assign(..) => uniform = false,
        ExprKind::Unary(UnOp::Deref, _) => uniform = false,
        _ => {}
    });
    uniform.then_some(root)
}

/// `s` with its `atomicAdd(p, x);` replaced by `v += (T)(x);`.
fn to_term(s: &Stmt, v: &str, ty: &Type) -> Stmt {
    let kind = match &s.kind {
        StmtKind::Expr(e) => match &e.kind {
            ExprKind::Call(n, args) if n == "atomicAdd" && args.len() == 2 => {
                let cast = expr(ExprKind::Cast(
                    CastStyle::C,
                    ty.clone(),
                    Box::new(args[1].clone()),
                ));
                StmtKind::Expr(expr(ExprKind::Assign(
                    Some(BinOp::Add),
                    Box::new(ident(v)),
                    Box::new(cast),
                )))
            }
            _ => s.kind.clone(),
        },
        StmtKind::Block(xs) => StmtKind::Block(xs.iter().map(|x| to_term(x, v, ty)).collect()),
        StmtKind::If { cond, then, els } => StmtKind::If {
            cond: cond.clone(),
            then: Box::new(to_term(then, v, ty)),
            els: els.as_ref().map(|e| Box::new(to_term(e, v, ty))),
        },
        other => other.clone(),
    };
    Stmt {
        meta: s.meta.clone(),
        kind,
    }
}

/// `blockDim.field` and the like.
fn member(base: &str, field: &str) -> Expr {
    expr(ExprKind::Member {
        base: Box::new(ident(base)),
        field: field.into(),
        arrow: false,
    })
}

/// `f` with the statement at `at` adding once per warp.
fn rewrite(f: &Function, at: usize, p: &Plan) -> Function {
    let v = ast_util::fresh("warp_total", &mut ast_util::names_in(f));
    let original = &f.body[at];
    let mut fast = vec![
        decl(p.ty.clone(), &v, Some(int(0))),
        to_term(original, &v, &p.ty),
    ];
    for off in [16, 8, 4, 2, 1] {
        let mask = expr(ExprKind::Int {
            value: 0xffff_ffff,
            text: "0xffffffff".into(),
        });
        let shfl = expr(ExprKind::Call(
            "__shfl_down_sync".into(),
            vec![mask, ident(&v), int(off)],
        ));
        fast.push(stmt(StmtKind::Expr(expr(ExprKind::Assign(
            Some(BinOp::Add),
            Box::new(ident(&v)),
            Box::new(shfl),
        )))));
    }
    // The linear thread index: lanes are numbered along it.
    let (bx, by) = (member("blockDim", "x"), member("blockDim", "y"));
    let linear = bin(
        BinOp::Add,
        bin(
            BinOp::Add,
            member("threadIdx", "x"),
            bin(BinOp::Mul, member("threadIdx", "y"), bx.clone()),
        ),
        bin(
            BinOp::Mul,
            member("threadIdx", "z"),
            bin(BinOp::Mul, bx.clone(), by.clone()),
        ),
    );
    let call = expr(ExprKind::Call(
        "atomicAdd".into(),
        vec![p.address.clone(), ident(&v)],
    ));
    // A warp none of whose threads reach the atomic leaves the array
    // untouched, as the original does (adding 0 changes nothing).
    let first_lane = bin(BinOp::Eq, bin(BinOp::Rem, linear, int(32)), int(0));
    fast.push(if_else(
        bin(BinOp::And, first_lane, bin(BinOp::Ne, ident(&v), int(0))),
        vec![stmt(StmtKind::Expr(call))],
        Vec::new(),
    ));
    let threads = bin(BinOp::Mul, bin(BinOp::Mul, bx, by), member("blockDim", "z"));
    let whole_warps = bin(BinOp::Eq, bin(BinOp::Rem, threads, int(32)), int(0));
    let guarded = if_else(whole_warps, fast, vec![original.clone()]);
    let mut body = f.body[..at].to_vec();
    body.push(guarded);
    body.extend(f.body[at + 1..].iter().cloned());
    Function { body, ..f.clone() }
}

#[cfg(test)]
mod tests;
