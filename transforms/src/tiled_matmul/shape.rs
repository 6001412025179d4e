//! The kernel shape the tiled matrix multiply rewrites, found
//! syntactically, and which thread index each index expression depends
//! on.
//!
//! The shape: scalar declarations, then either the reduction loop with
//! what follows it, or one `if (G) { declarations; loop; … }` without
//! `else` and nothing after it. Every local the guard, the loop bound or
//! a tiled index reads is declared among those declarations with a value
//! computed from indices, and never assigned afterwards, so it is a
//! function of `threadIdx.x`, `threadIdx.y` and block-uniform values only.

use std::collections::{BTreeMap, BTreeSet};

use copper::cuda::ast::{
    BaseType, BinOp, Expr, ExprKind, Function, Init, Stmt, StmtKind, Type, UnOp,
};

use crate::ast_util::{self, is_pure, reads_memory};
use crate::Refusal;

/// Which of `threadIdx.x` and `threadIdx.y` a value depends on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Dep {
    /// Depends on `threadIdx.x`.
    pub x: bool,
    /// Depends on `threadIdx.y`.
    pub y: bool,
}

impl Dep {
    fn or(self, o: Dep) -> Dep {
        Dep {
            x: self.x || o.x,
            y: self.y || o.y,
        }
    }

    /// Whether the value depends on the axis `axis` (`"x"` or `"y"`).
    pub fn on(self, axis: &str) -> bool {
        if axis == "x" {
            self.x
        } else {
            self.y
        }
    }
}

/// The reduction loop `for (T k = 0; k < K; k++) body`.
pub(super) struct Reduction {
    /// The loop statement.
    pub stmt: Stmt,
    /// The counter's type.
    pub ty: Type,
    /// The counter's name.
    pub var: String,
    /// The loop's test, `k < K`.
    pub cond: Expr,
    /// The body.
    pub body: Stmt,
}

/// A local declared once and never assigned.
#[derive(Clone, Debug)]
pub(super) struct Fixed {
    /// What its value depends on.
    pub dep: Dep,
    /// Its value.
    pub init: Expr,
    /// Its type.
    pub ty: Type,
}

/// A kernel of the shape the rewrite handles.
pub(super) struct Shape {
    /// The declarations before the guard (or the loop), and those inside
    /// the guard before the loop, in order.
    pub decls: Vec<Stmt>,
    /// How many of the last `decls` were inside the guard (the rewrite
    /// runs them in every thread).
    pub hoisted: usize,
    /// The guard `G`, when the loop is inside `if (G)`.
    pub guard: Option<Expr>,
    /// The loop.
    pub reduction: Reduction,
    /// What follows the loop (inside the guard when there is one).
    pub post: Vec<Stmt>,
    /// Each local declared in `decls` that is never assigned, with what it
    /// depends on.
    pub fixed: BTreeMap<String, Fixed>,
    /// Scalar parameters never assigned.
    pub params: BTreeSet<String>,
}

/// Why a kernel is not of the shape at all.
pub(super) fn not_the_shape() -> Refusal {
    "its body is not index declarations followed by a loop `for (k = 0; k < K; k++)` (alone or inside one `if` without `else`)".into()
}

impl Shape {
    /// The shape of `f`, or why it has none.
    pub fn of(f: &Function) -> Result<Shape, Refusal> {
        let body: Vec<&Stmt> = f
            .body
            .iter()
            .filter(|s| !matches!(s.kind, StmtKind::Empty))
            .collect();
        let first = body
            .iter()
            .position(|s| !matches!(s.kind, StmtKind::Decl(_)))
            .ok_or_else(not_the_shape)?;
        let mut decls: Vec<Stmt> = body[..first].iter().map(|s| (*s).clone()).collect();
        let rest = &body[first..];
        let (guard, inner): (Option<Expr>, Vec<&Stmt>) = match rest {
            [s] if matches!(&s.kind, StmtKind::If { els: None, .. }) => {
                let StmtKind::If { cond, then, .. } = &s.kind else {
                    return Err(not_the_shape());
                };
                let inner = match &then.kind {
                    StmtKind::Block(b) => b
                        .iter()
                        .filter(|s| !matches!(s.kind, StmtKind::Empty))
                        .collect(),
                    _ => vec![&**then],
                };
                (Some(cond.clone()), inner)
            }
            _ => (None, rest.to_vec()),
        };
        let at = inner
            .iter()
            .position(|s| !matches!(s.kind, StmtKind::Decl(_)))
            .ok_or_else(not_the_shape)?;
        let hoisted = if guard.is_some() { at } else { 0 };
        decls.extend(inner[..at].iter().map(|s| (*s).clone()));
        let reduction = Reduction::of(inner[at]).ok_or_else(not_the_shape)?;
        let post: Vec<Stmt> = inner[at + 1..].iter().map(|s| (*s).clone()).collect();
        let assigned = ast_util::assigned_names(&f.body);
        let mut declared = BTreeSet::new();
        for s in &decls {
            let StmtKind::Decl(ds) = &s.kind else {
                return Err(not_the_shape());
            };
            for d in ds {
                let plain = d.is_plain_local();
                let computed =
                    matches!(&d.init, Some(Init::Expr(e)) if is_pure(e) && !reads_memory(e));
                if !plain || !computed {
                    return Err(format!(
                        "`{}` is not a scalar computed from indices (no memory read, no side effect)",
                        d.name
                    )
                    .into());
                }
                if !declared.insert(d.name.clone()) || d.name == reduction.var {
                    return Err(format!(
                        "`{}` is declared twice, or also names the loop counter",
                        d.name
                    )
                    .into());
                }
            }
        }
        let params: BTreeSet<String> = f
            .params
            .iter()
            .filter(|p| !p.ty.is_pointer() && !p.ty.is_ref && p.dims.is_empty())
            .map(|p| p.name.clone())
            .filter(|n| !assigned.contains(n) && !declared.contains(n))
            .collect();
        let mut shape = Shape {
            decls,
            hoisted,
            guard,
            reduction,
            post,
            fixed: BTreeMap::new(),
            params,
        };
        for s in shape.decls.clone() {
            if let StmtKind::Decl(ds) = &s.kind {
                for d in ds {
                    let Some(Init::Expr(e)) = &d.init else {
                        continue;
                    };
                    if assigned.contains(&d.name) {
                        continue;
                    }
                    if let Some(dep) = shape.dep(e) {
                        shape.fixed.insert(
                            d.name.clone(),
                            Fixed {
                                dep,
                                init: e.clone(),
                                ty: d.ty.clone(),
                            },
                        );
                    }
                }
            }
        }
        Ok(shape)
    }

    /// What `e` depends on, when it reads only fixed locals, fixed
    /// scalar parameters, constants, launch builtins (`threadIdx` as `.x`
    /// or `.y` only) and the loop counter (which it does not count), and
    /// has no effect; `None` otherwise.
    pub fn dep(&self, e: &Expr) -> Option<Dep> {
        if !is_pure(e) || reads_memory(e) {
            return None;
        }
        self.dep_of(e)
    }

    fn dep_of(&self, e: &Expr) -> Option<Dep> {
        match &e.kind {
            ExprKind::Ident(n) => {
                if *n == self.reduction.var || self.params.contains(n) {
                    Some(Dep::default())
                } else {
                    self.fixed.get(n).map(|v| v.dep)
                }
            }
            ExprKind::Member {
                base,
                field,
                arrow: false,
            } => match &base.kind {
                ExprKind::Ident(b) if b == "threadIdx" => match field.as_str() {
                    "x" => Some(Dep { x: true, y: false }),
                    "y" => Some(Dep { x: false, y: true }),
                    _ => None,
                },
                ExprKind::Ident(b) if matches!(b.as_str(), "blockIdx" | "blockDim" | "gridDim") => {
                    Some(Dep::default())
                }
                _ => None,
            },
            ExprKind::Int { .. }
            | ExprKind::Float(_)
            | ExprKind::Char(_)
            | ExprKind::Bool(_)
            | ExprKind::SizeofType(_) => Some(Dep::default()),
            ExprKind::Str(_) | ExprKind::Assign(..) | ExprKind::Comma(_) => None,
            _ => ast_util::children(e)
                .into_iter()
                .try_fold(Dep::default(), |acc, c| Some(acc.or(self.dep_of(c)?))),
        }
    }

    /// Whether `e` mentions the loop counter.
    pub fn mentions_counter(&self, e: &Expr) -> bool {
        let mut found = false;
        ast_util::visit_expr(e, &mut |x| {
            found |= matches!(&x.kind, ExprKind::Ident(n) if *n == self.reduction.var);
        });
        found
    }

    /// Whether the guard's value for `threadIdx.axis = 0` holds whenever
    /// it holds for some `threadIdx.axis` in the block (the other index
    /// fixed): each of its conjuncts either does not depend on `axis`, or
    /// does not depend on the other axis and is `a < b` (or `<=`, or the
    /// mirrored `>`, `>=`) with `b` independent of `axis` and `a` the
    /// thread index plus a sum of products of launch builtins and
    /// constants, which is smallest at 0.
    pub fn first_thread_decides(&self, guard: &Expr, axis: &str) -> Result<(), Refusal> {
        let other = if axis == "x" { "y" } else { "x" };
        for c in conjuncts(guard) {
            let dep = self
                .dep(c)
                .ok_or("the guard reads something other than indices")?;
            if !dep.on(axis) {
                continue;
            }
            if dep.on(other) {
                return Err(format!(
                    "the guard's condition `{}` depends on both `threadIdx.x` and `threadIdx.y`",
                    copper::cuda::print::expression(c)
                )
                .into());
            }
            let (small, big) = match &c.kind {
                ExprKind::Binary(BinOp::Lt | BinOp::Le, a, b) => (a, b),
                ExprKind::Binary(BinOp::Gt | BinOp::Ge, b, a) => (a, b),
                _ => return Err(not_prefix(c)),
            };
            let big_free = self.dep(big).is_some_and(|d| !d.on(axis));
            if !big_free || !self.increasing(small, axis) {
                return Err(not_prefix(c));
            }
        }
        Ok(())
    }

    /// Whether `e` is `threadIdx.axis` plus a non-negative block-uniform
    /// sum (through fixed locals).
    fn increasing(&self, e: &Expr, axis: &str) -> bool {
        match &e.kind {
            ExprKind::Member { .. } => ast_util::thread_field(e) == Some(axis),
            ExprKind::Ident(n) => self
                .fixed
                .get(n)
                .is_some_and(|v| self.increasing(&v.init, axis)),
            ExprKind::Cast(_, ty, x) => ty.pointers.is_empty() && self.increasing(x, axis),
            ExprKind::Binary(BinOp::Add, a, b) => {
                (self.increasing(a, axis) && self.non_negative(b))
                    || (self.increasing(b, axis) && self.non_negative(a))
            }
            _ => false,
        }
    }

    /// Whether `e` is a sum of products of `blockIdx`, `blockDim`,
    /// `gridDim` fields and integer constants (through fixed locals).
    fn non_negative(&self, e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Int { .. } => true,
            ExprKind::Member { .. } => {
                ast_util::index_field(e, &["blockIdx", "blockDim", "gridDim"]).is_some()
            }
            ExprKind::Ident(n) => self
                .fixed
                .get(n)
                .is_some_and(|v| self.non_negative(&v.init)),
            ExprKind::Cast(_, ty, x) => ty.pointers.is_empty() && self.non_negative(x),
            ExprKind::Binary(BinOp::Add | BinOp::Mul, a, b) => {
                self.non_negative(a) && self.non_negative(b)
            }
            _ => false,
        }
    }
}

fn not_prefix(c: &Expr) -> Refusal {
    format!(
        "the guard's condition `{}` is not `index < bound` with the index growing with the thread index",
        copper::cuda::print::expression(c)
    )
    .into()
}

/// Whether `e` divides (or takes a remainder) by anything but a nonzero
/// constant: evaluated by a thread the original's guard kept from it, it
/// might divide by zero.
pub(super) fn divides_by_variable(e: &Expr) -> bool {
    let mut found = false;
    ast_util::visit_expr(e, &mut |x| {
        if let ExprKind::Binary(BinOp::Div | BinOp::Rem, _, d) = &x.kind {
            found |= ast_util::const_value(d).is_none_or(|v| v == 0);
        }
    });
    found
}

/// The operands of a chain of `&&`.
pub(super) fn conjuncts(e: &Expr) -> Vec<&Expr> {
    match &e.kind {
        ExprKind::Binary(BinOp::And, a, b) => {
            let mut v = conjuncts(a);
            v.extend(conjuncts(b));
            v
        }
        _ => vec![e],
    }
}

impl Reduction {
    /// `s` as `for (T k = 0; k < K; k++ | ++k | k += 1) body`.
    fn of(s: &Stmt) -> Option<Reduction> {
        let (d, cond, step, body) = ast_util::counted_for(s)?;
        let zero = matches!(&d.init, Some(Init::Expr(e)) if ast_util::const_value(e) == Some(0));
        if !zero || d.ty.is_pointer() || !d.dims.is_empty() || !is_integer(&d.ty) {
            return None;
        }
        let is_k = |e: &Expr| matches!(&e.kind, ExprKind::Ident(n) if *n == d.name);
        let tested = match &cond.kind {
            ExprKind::Binary(BinOp::Lt, a, _) => is_k(a),
            _ => false,
        };
        let steps = match &step.kind {
            ExprKind::Unary(UnOp::PostInc | UnOp::PreInc, x) => is_k(x),
            ExprKind::Assign(Some(BinOp::Add), x, one) => {
                is_k(x) && ast_util::const_value(one) == Some(1)
            }
            _ => false,
        };
        (tested && steps).then(|| Reduction {
            stmt: s.clone(),
            ty: d.ty.clone(),
            var: d.name.clone(),
            cond: cond.clone(),
            body: body.clone(),
        })
    }

    /// The loop's bound `K` in `k < K`.
    pub fn bound(&self) -> &Expr {
        match &self.cond.kind {
            ExprKind::Binary(_, _, b) => b,
            _ => &self.cond,
        }
    }
}

/// Whether `ty` is a plain integer type.
fn is_integer(ty: &Type) -> bool {
    use BaseType as B;
    ty.pointers.is_empty()
        && matches!(
            ty.base,
            B::Char
                | B::SChar
                | B::UChar
                | B::Short
                | B::UShort
                | B::Int
                | B::UInt
                | B::Long
                | B::ULong
                | B::LongLong
                | B::ULongLong
        )
}
