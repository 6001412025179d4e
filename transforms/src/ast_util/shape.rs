//! Queries about the shape of a fragment: counted loops, early exits,
//! constant values, template parameters, the thread fields an index uses,
//! and every use of an array.

use std::collections::BTreeSet;

use copper::cuda::ast::{
    BaseType, BinOp, Expr, ExprKind, Function, Init, NodeId, Stmt, StmtKind, UnOp, VarDecl,
};
use copper::ir::sync::BARRIER;

use crate::refusal::Refusal;

use super::{
    children, ident, is_pure, reads_memory, replace_expr, stmt, visit_stmt_exprs, visit_stmt_roots,
    visit_stmts, Effects,
};

/// A `for` loop that declares exactly one variable in its initializer
/// and has a condition and a step: the declaration, condition, step and
/// body.
pub fn counted_for(s: &Stmt) -> Option<(&VarDecl, &Expr, &Expr, &Stmt)> {
    let StmtKind::For {
        init: Some(init),
        cond: Some(cond),
        step: Some(step),
        body,
    } = &s.kind
    else {
        return None;
    };
    let StmtKind::Decl(ds) = &init.kind else {
        return None;
    };
    let [decl] = ds.as_slice() else {
        return None;
    };
    Some((decl, cond, step, body))
}

/// The statements of a branch: a block's, or the statement itself.
pub fn branch_stmts(s: &Stmt) -> Vec<Stmt> {
    match &s.kind {
        StmtKind::Block(b) => b.clone(),
        StmtKind::Empty => Vec::new(),
        _ => vec![s.clone()],
    }
}

/// The jump of an `if (c) <jump>;` that [`guarded_jump`] matches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Jump {
    /// `return;` (no value).
    Return,
    /// `continue;`.
    Continue,
}

/// `c` when `s` is `if (c) <jump>;` or `if (c) { <jump>; }` (no `else`)
/// for the jump `jump`.
pub fn guarded_jump(s: &Stmt, jump: Jump) -> Option<&Expr> {
    let StmtKind::If {
        cond,
        then,
        els: None,
    } = &s.kind
    else {
        return None;
    };
    let is_jump = |r: &Stmt| match jump {
        Jump::Return => matches!(r.kind, StmtKind::Return(None)),
        Jump::Continue => matches!(r.kind, StmtKind::Continue),
    };
    matches!(branch_stmts(then).as_slice(), [r] if is_jump(r)).then_some(cond)
}

/// `c` when `s` is `if (c) return;` or `if (c) { return; }` (no `else`,
/// no value).
pub fn early_exit(s: &Stmt) -> Option<&Expr> {
    guarded_jump(s, Jump::Return)
}

/// Complexity (COpPER §5.1): a statement counts 1, a loop 3 times its
/// body, recursively.
pub fn complexity(s: &Stmt) -> u32 {
    use StmtKind as S;
    let sum = |v: &[Stmt]| v.iter().map(complexity).sum::<u32>();
    match &s.kind {
        S::Block(b) => sum(b),
        S::If { then, els, .. } => 1 + complexity(then) + els.as_ref().map_or(0, |e| complexity(e)),
        S::For { body, .. } | S::While { body, .. } | S::DoWhile { body, .. } => {
            3 * complexity(body).max(1)
        }
        S::Switch { cases, .. } => 1 + cases.iter().map(|c| sum(&c.body)).sum::<u32>(),
        S::Empty | S::Pragma(_) => 0,
        _ => 1,
    }
}

/// The value of a constant integer expression (`32`, `TILE + 1`, `4 * 8`).
pub fn const_value(e: &Expr) -> Option<u64> {
    value_with(e, &|_| None)
}

/// The value of an integer expression of literals, `+ - * / << >>` and
/// casts, whose other leaves (`blockDim.x`, a template parameter) have the
/// values `leaf` gives.
pub fn value_with(e: &Expr, leaf: &dyn Fn(&Expr) -> Option<u64>) -> Option<u64> {
    match &e.kind {
        ExprKind::Int { value, .. } => Some(*value),
        ExprKind::Binary(op, a, b) => {
            let (x, y) = (value_with(a, leaf)?, value_with(b, leaf)?);
            match op {
                BinOp::Add => x.checked_add(y),
                BinOp::Sub => x.checked_sub(y),
                BinOp::Mul => x.checked_mul(y),
                BinOp::Div => x.checked_div(y),
                BinOp::Shl if y < 64 => x.checked_shl(y as u32),
                BinOp::Shr if y < 64 => Some(x >> y),
                _ => None,
            }
        }
        ExprKind::Cast(_, _, x) => value_with(x, leaf),
        _ => leaf(e),
    }
}

/// Whether `ty` is a type parameter of the template `f` instantiates
/// (`T`: the tile is declared `T` too).
pub fn is_type_param(f: &Function, ty: &BaseType) -> bool {
    let BaseType::Named(n) = ty else {
        return false;
    };
    f.template.as_ref().is_some_and(|t| {
        t.params
            .iter()
            .any(|p| p.value_type.is_none() && p.name == *n)
    })
}

/// The argument of the template value parameter `name` in the
/// instantiation `f` (`256` for `BLOCK` in `reduce<256>`), when it is an
/// integer literal (`32`, `32u`, `0x20`).
pub fn template_value(f: &Function, name: &str) -> Option<u64> {
    let t = f.template.as_ref()?;
    let (_, arg) = t
        .params
        .iter()
        .zip(&t.args)
        .find(|(p, _)| p.value_type.is_some() && p.name == name)?;
    let digits = arg.trim().trim_end_matches(['u', 'U', 'l', 'L']);
    match digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => digits.parse().ok(),
    }
}

/// The root name of an lvalue or array expression: `a` for `a`, `a[i]`,
/// `a[i][j]`, `*a`, `a.x`.
pub fn root_name(e: &Expr) -> Option<&str> {
    match &e.kind {
        ExprKind::Ident(n) => Some(n),
        ExprKind::Index(a, _) | ExprKind::Member { base: a, .. } => root_name(a),
        ExprKind::Unary(UnOp::Deref, a) => root_name(a),
        _ => None,
    }
}

/// Every identifier a function uses or declares (to pick fresh names).
pub fn names_in(f: &Function) -> BTreeSet<String> {
    let mut names = names_in_stmts(&f.body);
    names.extend(f.params.iter().map(|p| p.name.clone()));
    names
}

/// Every identifier `stmts` use or declare.
pub fn names_in_stmts(stmts: &[Stmt]) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for s in stmts {
        visit_stmts(s, &mut |x| {
            if let StmtKind::Decl(ds) = &x.kind {
                names.extend(ds.iter().map(|d| d.name.clone()));
            }
        });
        visit_stmt_exprs(s, &mut |e| {
            if let ExprKind::Ident(n) = &e.kind {
                names.insert(n.clone());
            }
        });
    }
    names
}

/// Every `name[e]` in the kernel's body; an error when `name` is used any
/// other way (as a pointer, passed to a function, its address taken).
pub fn array_uses(f: &Function, name: &str) -> Result<Vec<Expr>, Refusal> {
    // `under_addr`: `e` is the object path of a `&` (`&a[i]`,
    // `&a[i].field`, `&a[i].member[k]` all take an element's address).
    fn collect(e: &Expr, name: &str, under_addr: bool, uses: &mut Vec<Expr>) {
        match &e.kind {
            ExprKind::Index(base, index) => {
                if matches!(&base.kind, ExprKind::Ident(n) if n == name) && !under_addr {
                    uses.push(e.clone());
                } else {
                    collect(base, name, under_addr, uses);
                }
                collect(index, name, false, uses);
            }
            ExprKind::Unary(UnOp::AddrOf, x) => collect(x, name, true, uses),
            ExprKind::Member {
                base, arrow: false, ..
            } => collect(base, name, under_addr, uses),
            _ => children(e)
                .into_iter()
                .for_each(|c| collect(c, name, false, uses)),
        }
    }
    let mut uses = Vec::new();
    let mut mentions = 0;
    for s in &f.body {
        visit_stmt_exprs(s, &mut |e| {
            mentions += matches!(&e.kind, ExprKind::Ident(n) if n == name) as usize;
        });
        visit_stmt_roots(s, &mut |e| collect(e, name, false, &mut uses));
    }
    if mentions != uses.len() {
        return Err(Refusal::NotElementwise);
    }
    Ok(uses)
}

/// Whether a `return` stands anywhere in `stmts`.
pub fn returns(stmts: &[Stmt]) -> bool {
    let mut found = false;
    for s in stmts {
        visit_stmts(s, &mut |x| found |= matches!(x.kind, StmtKind::Return(_)));
    }
    found
}

/// Whether `node` occurs in `e` where it is always evaluated when `e` is:
/// not in the second operand of `&&`/`||` or a branch of `?:`.
pub fn unconditional_in(e: &Expr, node: NodeId) -> bool {
    if e.meta.id == node {
        return true;
    }
    match &e.kind {
        ExprKind::Binary(BinOp::And | BinOp::Or, a, _) => unconditional_in(a, node),
        ExprKind::Cond(c, _, _) => unconditional_in(c, node),
        _ => children(e).into_iter().any(|c| unconditional_in(c, node)),
    }
}

/// A `for` loop's first test as it can be evaluated just before the loop:
/// for `for (int j = start; cond; step) body`, `cond` with `j` replaced by
/// `start`, when both have no effects and read no memory and neither the
/// body nor the step writes a variable `cond` reads other than `j`
/// (`0 < h` for `for (int j = 0; j < h; j += 2)`). The loop runs at least
/// once exactly when it holds.
pub fn loop_first_test(
    init: Option<&Stmt>,
    cond: Option<&Expr>,
    step: Option<&Expr>,
    body: &Stmt,
) -> Option<Expr> {
    let StmtKind::Decl(ds) = &init?.kind else {
        return None;
    };
    let [d] = ds.as_slice() else {
        return None;
    };
    let Some(Init::Expr(start)) = &d.init else {
        return None;
    };
    let cond = cond?;
    if !is_pure(cond) || !is_pure(start) || reads_memory(cond) || reads_memory(start) {
        return None;
    }
    let mut writes = Effects::of(std::slice::from_ref(body)).writes;
    if let Some(st) = step {
        writes.extend(Effects::of(&[stmt(StmtKind::Expr(st.clone()))]).writes);
    }
    let reads = Effects::of(&[stmt(StmtKind::Expr(cond.clone()))]).reads;
    if reads.iter().any(|v| *v != d.name && writes.contains(v)) {
        return None;
    }
    let mut first = cond.clone();
    replace_expr(&mut first, &ident(&d.name), start);
    Some(first)
}

/// Whether `s` is `__syncthreads();`.
pub fn is_sync(s: &Stmt) -> bool {
    matches!(&s.kind, StmtKind::Expr(e) if matches!(&e.kind, ExprKind::Call(n, a) if n == BARRIER && a.is_empty()))
}

/// `Some("x")` for `threadIdx.x`: the field of a `threadIdx` member.
pub fn thread_field(e: &Expr) -> Option<&str> {
    index_field(e, &["threadIdx"])
}

/// `Some("x")` for `threadIdx.x`, when `threadIdx` is one of `indices`
/// (names of built-in index variables: `threadIdx`, `blockIdx`, …).
pub fn index_field<'a>(e: &'a Expr, indices: &[&str]) -> Option<&'a str> {
    match &e.kind {
        ExprKind::Member {
            base,
            field,
            arrow: false,
        } if matches!(&base.kind, ExprKind::Ident(n) if indices.contains(&n.as_str())) => {
            Some(field)
        }
        _ => None,
    }
}

/// Whether `f` reads both `threadIdx.x` and `threadIdx.y` (a 1-D kernel
/// has no rows and columns to exchange).
pub fn reads_thread_xy(f: &Function) -> bool {
    let (mut x, mut y) = (false, false);
    for s in &f.body {
        visit_stmt_exprs(s, &mut |e| match thread_field(e) {
            Some("x") => x = true,
            Some("y") => y = true,
            _ => {}
        });
    }
    x && y
}

/// Every declaration of `name` in `f`'s body, at any depth, in the order
/// they are written (parameters are not declarations of the body).
pub fn declarations<'f>(f: &'f Function, name: &str) -> Vec<&'f VarDecl> {
    let mut found = Vec::new();
    for s in &f.body {
        visit_stmts(s, &mut |x: &'f Stmt| {
            if let StmtKind::Decl(ds) = &x.kind {
                found.extend(ds.iter().filter(|d| d.name == name));
            }
        });
    }
    found
}
