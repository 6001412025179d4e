//! What the transforms need to know about AST fragments: structural
//! equality modulo commutative operators, complexity, the names a fragment
//! reads, writes and declares, and builders for new nodes.

use std::collections::BTreeSet;

use copper::cuda::ast::{
    BaseType, BinOp, Expr, ExprKind, Function, Init, Meta, NodeId, Stmt, StmtKind, Type, UnOp,
    VarDecl,
};
use copper::ir::half::is_half_function;
use copper::ir::math::is_math_function;
use copper::ir::sync::{is_barrier, BARRIER};

use crate::refusal::Refusal;

/// Whether a call of `name` has no side effects: a math function or a
/// 16-bit float intrinsic.
fn is_pure_function(name: &str) -> bool {
    is_math_function(name) || is_half_function(name)
}

pub use copper::cuda::visit::{
    children, children_mut, visit_expr, visit_stmt_exprs, visit_stmt_roots, visit_stmt_roots_mut,
    visit_stmts, visit_stmts_mut,
};

/// Whether two expressions are equal up to the order of the operands of
/// commutative operators.
pub fn equiv_expr(a: &Expr, b: &Expr) -> bool {
    use ExprKind as K;
    match (&a.kind, &b.kind) {
        (K::Binary(o1, l1, r1), K::Binary(o2, l2, r2)) if o1 == o2 => {
            (equiv_expr(l1, l2) && equiv_expr(r1, r2))
                || (o1.is_commutative() && equiv_expr(l1, r2) && equiv_expr(r1, l2))
        }
        (K::Unary(o1, x1), K::Unary(o2, x2)) => o1 == o2 && equiv_expr(x1, x2),
        (K::Assign(o1, l1, r1), K::Assign(o2, l2, r2)) => {
            o1 == o2 && equiv_expr(l1, l2) && equiv_expr(r1, r2)
        }
        (K::Cond(c1, a1, b1), K::Cond(c2, a2, b2)) => {
            equiv_expr(c1, c2) && equiv_expr(a1, a2) && equiv_expr(b1, b2)
        }
        (K::Cast(s1, t1, x1), K::Cast(s2, t2, x2)) => s1 == s2 && t1 == t2 && equiv_expr(x1, x2),
        (K::Call(f1, a1), K::Call(f2, a2)) => {
            f1 == f2 && a1.len() == a2.len() && a1.iter().zip(a2).all(|(x, y)| equiv_expr(x, y))
        }
        (K::Index(a1, i1), K::Index(a2, i2)) => equiv_expr(a1, a2) && equiv_expr(i1, i2),
        (K::Comma(x1), K::Comma(x2)) => {
            x1.len() == x2.len() && x1.iter().zip(x2).all(|(x, y)| equiv_expr(x, y))
        }
        (
            K::Member {
                base: b1,
                field: f1,
                arrow: a1,
            },
            K::Member {
                base: b2,
                field: f2,
                arrow: a2,
            },
        ) => f1 == f2 && a1 == a2 && equiv_expr(b1, b2),
        (K::SizeofExpr(x1), K::SizeofExpr(x2)) => equiv_expr(x1, x2),
        _ => a == b,
    }
}

/// Whether two statements are equal up to commutative operands.
pub fn equiv_stmt(a: &Stmt, b: &Stmt) -> bool {
    use StmtKind as S;
    let opt = |x: &Option<Expr>, y: &Option<Expr>| match (x, y) {
        (Some(x), Some(y)) => equiv_expr(x, y),
        (None, None) => true,
        _ => false,
    };
    let boxed = |x: &Option<Box<Stmt>>, y: &Option<Box<Stmt>>| match (x, y) {
        (Some(x), Some(y)) => equiv_stmt(x, y),
        (None, None) => true,
        _ => false,
    };
    let list = |x: &[Stmt], y: &[Stmt]| {
        x.len() == y.len() && x.iter().zip(y).all(|(p, q)| equiv_stmt(p, q))
    };
    match (&a.kind, &b.kind) {
        (S::Expr(x), S::Expr(y)) => equiv_expr(x, y),
        (S::Block(x), S::Block(y)) => list(x, y),
        (
            S::If {
                cond: c1,
                then: t1,
                els: e1,
            },
            S::If {
                cond: c2,
                then: t2,
                els: e2,
            },
        ) => equiv_expr(c1, c2) && equiv_stmt(t1, t2) && boxed(e1, e2),
        (
            S::For {
                init: i1,
                cond: c1,
                step: s1,
                body: b1,
            },
            S::For {
                init: i2,
                cond: c2,
                step: s2,
                body: b2,
            },
        ) => boxed(i1, i2) && opt(c1, c2) && opt(s1, s2) && equiv_stmt(b1, b2),
        (S::While { cond: c1, body: b1 }, S::While { cond: c2, body: b2 })
        | (S::DoWhile { cond: c1, body: b1 }, S::DoWhile { cond: c2, body: b2 }) => {
            equiv_expr(c1, c2) && equiv_stmt(b1, b2)
        }
        _ => a == b,
    }
}

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

/// `c` when `s` is `if (c) return;` or `if (c) { return; }` (no `else`,
/// no value).
pub fn early_exit(s: &Stmt) -> Option<&Expr> {
    let StmtKind::If {
        cond,
        then,
        els: None,
    } = &s.kind
    else {
        return None;
    };
    let body = branch_stmts(then);
    matches!(body.as_slice(), [r] if matches!(r.kind, StmtKind::Return(None))).then_some(cond)
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

/// Whether evaluating `e` changes nothing: no assignment, `++`/`--` or
/// call other than to a pure math function.
pub fn is_pure(e: &Expr) -> bool {
    let mut pure = true;
    visit_expr(e, &mut |x| match &x.kind {
        ExprKind::Assign(..) | ExprKind::Comma(_) => pure = false,
        ExprKind::Unary(UnOp::PreInc | UnOp::PreDec | UnOp::PostInc | UnOp::PostDec, _) => {
            pure = false
        }
        ExprKind::Call(name, _) => pure &= is_pure_function(name),
        _ => {}
    });
    pure
}

/// What a fragment of code touches, by name.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Effects {
    /// Names read (variables, and arrays read through an index).
    pub reads: BTreeSet<String>,
    /// Scalar variables assigned.
    pub writes: BTreeSet<String>,
    /// Arrays (or pointers) written through an index or dereference.
    pub array_writes: BTreeSet<String>,
    /// Arrays (or pointers) read through an index or dereference.
    pub array_reads: BTreeSet<String>,
    /// Names declared at the top level of the fragment.
    pub declares: BTreeSet<String>,
    /// Calls to functions that may have effects (device functions,
    /// atomics, `printf`).
    pub opaque_calls: bool,
    /// A `__syncthreads()` (or another barrier).
    pub sync: bool,
    /// A `break`, `continue` or `return` that may leave the fragment.
    pub jumps: bool,
}

impl Effects {
    /// The effects of a list of statements.
    pub fn of(stmts: &[Stmt]) -> Effects {
        let mut e = Effects::default();
        for s in stmts {
            if let StmtKind::Decl(ds) = &s.kind {
                e.declares.extend(ds.iter().map(|d| d.name.clone()));
            }
            e.add_stmt(s);
        }
        e
    }

    fn add_stmt(&mut self, s: &Stmt) {
        use StmtKind as S;
        self.jumps |= jumps_out(s, false, false);
        if let S::Decl(ds) = &s.kind {
            for d in ds {
                if d.init.is_some() {
                    self.writes.insert(d.name.clone());
                }
            }
        }
        visit_stmt_exprs(s, &mut |e| self.add_expr(e));
        if let S::For { .. }
        | S::While { .. }
        | S::DoWhile { .. }
        | S::Block(_)
        | S::If { .. }
        | S::Switch { .. } = &s.kind
        {
            let mut nested_decls = Vec::new();
            visit_stmts(s, &mut |x| {
                if let S::Decl(ds) = &x.kind {
                    nested_decls.extend(
                        ds.iter()
                            .filter(|d| d.init.is_some())
                            .map(|d| d.name.clone()),
                    );
                }
            });
            self.writes.extend(nested_decls);
        }
    }

    fn add_expr(&mut self, e: &Expr) {
        use ExprKind as K;
        match &e.kind {
            K::Ident(n) => {
                self.reads.insert(n.clone());
            }
            K::Assign(_, lhs, _) => self.add_target(lhs),
            K::Unary(UnOp::PreInc | UnOp::PreDec | UnOp::PostInc | UnOp::PostDec, x) => {
                self.add_target(x)
            }
            K::Index(..) | K::Unary(UnOp::Deref, _) => {
                if let Some(n) = root_name(e) {
                    self.array_reads.insert(n.to_string());
                }
            }
            K::Call(name, args) => {
                if is_barrier(name) {
                    self.sync = true;
                } else if !is_pure_function(name) {
                    self.opaque_calls = true;
                    for a in args {
                        // `atomicAdd(&a[i].m[k], v)` writes `a`.
                        let a = match &a.kind {
                            K::Unary(UnOp::AddrOf, x) => x,
                            _ => a,
                        };
                        if let Some(n) = root_name(a) {
                            self.array_writes.insert(n.to_string());
                        }
                    }
                }
            }
            _ => {}
        }
    }

    fn add_target(&mut self, lhs: &Expr) {
        match &lhs.kind {
            ExprKind::Ident(n) => {
                self.writes.insert(n.clone());
            }
            _ => {
                if let Some(n) = root_name(lhs) {
                    self.array_writes.insert(n.to_string());
                }
            }
        }
    }

    /// Everything this fragment reads or writes, by name.
    pub fn touched(&self) -> BTreeSet<String> {
        let mut t = self.reads.clone();
        t.extend(self.writes.iter().cloned());
        t.extend(self.array_writes.iter().cloned());
        t.extend(self.array_reads.iter().cloned());
        t
    }
}

/// Whether a `break`, `continue` or `return` in `s` may leave it (a
/// `break` inside a nested loop or switch, a `continue` inside a nested
/// loop, stay inside).
fn jumps_out(s: &Stmt, in_loop: bool, in_switch: bool) -> bool {
    use StmtKind as S;
    match &s.kind {
        S::Return(_) => true,
        S::Break => !in_loop && !in_switch,
        S::Continue => !in_loop,
        S::Block(b) => b.iter().any(|x| jumps_out(x, in_loop, in_switch)),
        S::If { then, els, .. } => {
            jumps_out(then, in_loop, in_switch)
                || els
                    .as_ref()
                    .is_some_and(|e| jumps_out(e, in_loop, in_switch))
        }
        S::For { body, .. } | S::While { body, .. } | S::DoWhile { body, .. } => {
            jumps_out(body, true, in_switch)
        }
        S::Switch { cases, .. } => cases
            .iter()
            .any(|c| c.body.iter().any(|x| jumps_out(x, in_loop, true))),
        _ => false,
    }
}

/// Every identifier a function uses or declares (to pick fresh names).
pub fn names_in(f: &Function) -> BTreeSet<String> {
    let mut names: BTreeSet<String> = f.params.iter().map(|p| p.name.clone()).collect();
    for s in &f.body {
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

/// A name starting with `base` that is not in `taken` (and records it).
pub fn fresh(base: &str, taken: &mut BTreeSet<String>) -> String {
    let mut name = base.to_string();
    let mut n = 1;
    while taken.contains(&name) {
        name = format!("{base}_{n}");
        n += 1;
    }
    taken.insert(name.clone());
    name
}

/// Metadata for a node a transform made.
pub fn meta() -> Meta {
    Meta::synthetic(NodeId(0))
}

/// An expression node.
pub fn expr(kind: ExprKind) -> Expr {
    Expr { meta: meta(), kind }
}

/// A statement node.
pub fn stmt(kind: StmtKind) -> Stmt {
    Stmt { meta: meta(), kind }
}

/// `name`
pub fn ident(name: &str) -> Expr {
    expr(ExprKind::Ident(name.to_string()))
}

/// An `int` literal.
pub fn int(v: u64) -> Expr {
    expr(ExprKind::Int {
        value: v,
        text: v.to_string(),
    })
}

/// `a op b`
pub fn bin(op: BinOp, a: Expr, b: Expr) -> Expr {
    expr(ExprKind::Binary(op, Box::new(a), Box::new(b)))
}

/// `ty name = init;` (a local).
pub fn decl(ty: Type, name: &str, init: Option<Expr>) -> Stmt {
    stmt(StmtKind::Decl(vec![VarDecl {
        meta: meta(),
        is_constexpr: false,
        space: copper::cuda::ast::Space::Local,
        is_extern: false,
        is_static: false,
        ty,
        name: name.to_string(),
        dims: Vec::new(),
        init: init.map(Init::Expr),
    }]))
}

/// `__shared__ T name[d0][d1]…;` (a scalar without `dims`).
pub fn shared_decl(ty: Type, name: &str, dims: Vec<Expr>) -> Stmt {
    stmt(StmtKind::Decl(vec![VarDecl {
        meta: meta(),
        is_constexpr: false,
        space: copper::cuda::ast::Space::Shared,
        is_extern: false,
        is_static: false,
        ty,
        name: name.to_string(),
        dims: dims.into_iter().map(Some).collect(),
        init: None,
    }]))
}

/// `lhs = rhs;`
pub fn assign(lhs: Expr, rhs: Expr) -> Stmt {
    stmt(StmtKind::Expr(expr(ExprKind::Assign(
        None,
        Box::new(lhs),
        Box::new(rhs),
    ))))
}

/// `array[i]`
pub fn index(array: &str, i: Expr) -> Expr {
    expr(ExprKind::Index(Box::new(ident(array)), Box::new(i)))
}

/// `{ stmts }`
pub fn block(stmts: Vec<Stmt>) -> Stmt {
    stmt(StmtKind::Block(stmts))
}

/// `if (cond) { then } else { els }` (no else when `els` is empty).
pub fn if_else(cond: Expr, then: Vec<Stmt>, els: Vec<Stmt>) -> Stmt {
    stmt(StmtKind::If {
        cond,
        then: Box::new(block(then)),
        els: (!els.is_empty()).then(|| Box::new(block(els))),
    })
}

/// Replaces every subexpression equal (structurally) to `from` by `to`.
pub fn replace_expr(e: &mut Expr, from: &Expr, to: &Expr) {
    use ExprKind as K;
    if equiv_expr(e, from) {
        *e = to.clone();
        return;
    }
    match &mut e.kind {
        K::Unary(_, x) | K::Cast(_, _, x) | K::SizeofExpr(x) => replace_expr(x, from, to),
        K::Binary(_, a, b) | K::Index(a, b) => {
            replace_expr(a, from, to);
            replace_expr(b, from, to);
        }
        K::Assign(_, a, b) => {
            // The target of an assignment is not a read: only its indices.
            if let K::Index(_, i) = &mut a.kind {
                replace_expr(i, from, to);
            }
            replace_expr(b, from, to);
        }
        K::Cond(c, a, b) => {
            replace_expr(c, from, to);
            replace_expr(a, from, to);
            replace_expr(b, from, to);
        }
        K::Call(_, args) | K::Comma(args) => {
            args.iter_mut().for_each(|a| replace_expr(a, from, to))
        }
        K::Member { base, .. } => replace_expr(base, from, to),
        _ => {}
    }
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

/// Rewrites statements bottom-up: the statements nested in each one first
/// (a nested statement that becomes several is wrapped in a block where one
/// statement is expected), then the statement itself by `f`, which may turn
/// it into several.
pub fn rewrite_bottom_up(stmts: Vec<Stmt>, f: &mut impl FnMut(Stmt) -> Vec<Stmt>) -> Vec<Stmt> {
    stmts
        .into_iter()
        .flat_map(|s| rewrite_stmt_bottom_up(s, f))
        .collect()
}

fn rewrite_stmt_bottom_up(mut s: Stmt, f: &mut impl FnMut(Stmt) -> Vec<Stmt>) -> Vec<Stmt> {
    use StmtKind as S;
    s.kind = match s.kind {
        S::Block(b) => S::Block(rewrite_bottom_up(b, f)),
        S::For {
            init,
            cond,
            step,
            body,
        } => S::For {
            init,
            cond,
            step,
            body: rewrite_nested(body, f),
        },
        S::While { cond, body } => S::While {
            cond,
            body: rewrite_nested(body, f),
        },
        S::DoWhile { body, cond } => S::DoWhile {
            body: rewrite_nested(body, f),
            cond,
        },
        S::If { cond, then, els } => S::If {
            cond,
            then: rewrite_nested(then, f),
            els: els.map(|e| rewrite_nested(e, f)),
        },
        S::Switch { cond, mut cases } => {
            for c in cases.iter_mut() {
                c.body = rewrite_bottom_up(std::mem::take(&mut c.body), f);
            }
            S::Switch { cond, cases }
        }
        other => other,
    };
    f(s)
}

/// A nested statement rewritten, as one statement.
fn rewrite_nested(s: Box<Stmt>, f: &mut impl FnMut(Stmt) -> Vec<Stmt>) -> Box<Stmt> {
    let mut v = rewrite_stmt_bottom_up(*s, f);
    Box::new(if v.len() == 1 {
        v.pop().expect("one statement")
    } else {
        block(v)
    })
}

/// Whether `e` reads memory (through an index or a dereference).
pub fn reads_memory(e: &Expr) -> bool {
    let mut found = false;
    visit_expr(e, &mut |x| {
        found |= matches!(
            x.kind,
            ExprKind::Index(..) | ExprKind::Unary(UnOp::Deref, _)
        )
    });
    found
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

/// `__syncthreads();`
pub fn sync() -> Stmt {
    stmt(StmtKind::Expr(expr(ExprKind::Call(
        BARRIER.into(),
        Vec::new(),
    ))))
}

/// The thread's index within the block, flattened.
pub fn linear_tid(block: [u64; 3]) -> Expr {
    let t = |d: &str| {
        expr(ExprKind::Member {
            base: Box::new(ident("threadIdx")),
            field: d.to_string(),
            arrow: false,
        })
    };
    let mut e = t("x");
    if block[1] > 1 || block[2] > 1 {
        e = bin(BinOp::Add, e, bin(BinOp::Mul, t("y"), int(block[0])));
    }
    if block[2] > 1 {
        e = bin(
            BinOp::Add,
            e,
            bin(BinOp::Mul, t("z"), int(block[0] * block[1])),
        );
    }
    e
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

/// `e` with `threadIdx.x` and `threadIdx.y` exchanged everywhere.
pub fn swap_thread_xy(e: &mut Expr) {
    swap_index_xy(e, &["threadIdx"]);
}

/// `e` with x and y of the built-in index variables `indices` exchanged
/// everywhere.
pub fn swap_index_xy(e: &mut Expr, indices: &[&str]) {
    if index_field(e, indices).is_some() {
        if let ExprKind::Member { field, .. } = &mut e.kind {
            *field = match field.as_str() {
                "x" => "y".into(),
                "y" => "x".into(),
                other => other.into(),
            };
        }
        return;
    }
    for c in children_mut(e) {
        swap_index_xy(c, indices);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use copper::cuda::parse::parse_source;
    use copper::source::SourceFile;

    fn body(src: &str) -> Vec<Stmt> {
        let f = parse_source(SourceFile::new(
            "t.cu",
            format!("__global__ void k(float *a, float *b, int n, int m) {{ {src} }}"),
        ));
        let body = f.kernels().next().expect("parses").body.clone();
        body
    }

    #[test]
    fn equality_modulo_commutativity() {
        let a = body("a[i + 1] = n * m + 2;");
        let b = body("a[1 + i] = 2 + m * n;");
        let c = body("a[1 + i] = 2 - m * n;");
        assert!(equiv_stmt(&a[0], &b[0]));
        assert!(!equiv_stmt(&a[0], &c[0]));
    }

    #[test]
    fn complexity_counts_loops_triple() {
        let s = body("for (int i = 0; i < n; i++) { a[i] = 0; a[i] += 1; } n = 1;");
        assert_eq!(complexity(&s[0]), 6);
        assert_eq!(complexity(&s[1]), 1);
    }

    #[test]
    fn effects_by_name() {
        let s = body("int t = a[n]; b[t] += 1.0f; m++; __syncthreads(); for (int j = 0; j < 2; j++) { if (j) break; }");
        let e = Effects::of(&s);
        assert!(e.array_reads.contains("a") && e.array_writes.contains("b"));
        assert!(e.writes.contains("m") && e.writes.contains("t") && e.declares.contains("t"));
        assert!(e.sync);
        assert!(!e.jumps, "the break stays in its loop");
        assert!(Effects::of(&body("if (n) return;")).jumps);
    }

    #[test]
    fn an_address_of_an_elements_field_is_no_plain_use() {
        let uses = |src: &str| -> Result<usize, Refusal> {
            let f = parse_source(SourceFile::new("t.cu", src));
            let k = f.kernels().next().expect("parses");
            Ok(array_uses(k, "c")?.len())
        };
        let head = "struct C { int n; float w; };\n__global__ void k(C *c) { ";
        assert_eq!(
            uses(&format!("{head}float x = c[0].w; c[1].n = 2; }}")),
            Ok(2)
        );
        assert!(uses(&format!("{head}atomicAdd(&c[0].n, 1); }}")).is_err());
    }

    #[test]
    fn template_arguments_read_as_integers() {
        let f = parse_source(SourceFile::new(
            "t.cu",
            "template <typename T, int A, unsigned B, int C> __global__ void k(T *a) { a[0] = A; }\n\
             void h(float *p) { k<float, 32, 16u, 0x20><<<1, 1>>>(p); }\n",
        ));
        let k = f.kernels().next().expect("the instantiation");
        assert_eq!(template_value(k, "A"), Some(32));
        assert_eq!(template_value(k, "B"), Some(16));
        assert_eq!(template_value(k, "C"), Some(32));
        assert_eq!(
            template_value(k, "T"),
            None,
            "a type parameter has no value"
        );
        assert_eq!(template_value(k, "D"), None);
    }
}
