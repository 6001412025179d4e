//! Jump elimination: the analysis view of a kernel without `break`,
//! `continue`, scope exits or `return`.
//!
//! Each loop or scope that is jumped out of gets a flag variable; a jump
//! sets the flag, the rest of every enclosing statement list is guarded by
//! `if (!flags)`, loop tests become `!flags && cond`, and `for` steps are
//! skipped by lanes that left (not by lanes that continued: `continue` in
//! a `for` runs the step). The transformed kernel computes the same values,
//! and while some lane of a warp still runs, its warps execute the same
//! accesses with the same lanes plus extra guard tests. A warp whose every
//! lane set a flag skips the guarded code with its variables unchanged:
//! the bound engine pays for that path at the jump, as the jump's target
//! (`bound::aara`), since after a `continue` the loop goes on without the
//! update the guards skipped (the soundness property tests check bounds
//! against the simulator).

use std::collections::BTreeSet;

use super::*;

/// What a jump flag records: that the lane left a loop or scope (`break`),
/// skipped the rest of an iteration (`continue`), or returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlagKind {
    /// `break` out of this loop or scope.
    Break(ScopeId),
    /// `continue` in this loop.
    Continue(ScopeId),
    /// `return` from the kernel.
    Return,
}

/// The kernel with every jump replaced by flags and guards, and the flags
/// (new `int` locals named `left_N`). A lane whose flag is set takes no
/// further part in what the flag's loop, scope or kernel does: the flags
/// of the lanes still running are all zero.
pub fn without_jumps(k: &Kernel) -> (Kernel, Vec<(VarId, FlagKind)>) {
    let mut t = Transformer {
        k: k.clone(),
        flags: Vec::new(),
        kinds: Vec::new(),
    };
    let mut return_flag = None;
    if contains_return(&k.body) {
        let f = t.new_flag(k.span, FlagKind::Return);
        return_flag = Some(f);
    }
    t.flags = vec![None; k.scopes];
    let body = std::mem::take(&mut t.k.body);
    let (mut stmts, _) = t.seq(body, return_flag);
    if let Some(f) = return_flag {
        stmts.insert(0, assign_const(f, 0, k.span));
    }
    t.k.body = stmts;
    (t.k, t.kinds)
}

/// The flags of one loop or scope.
#[derive(Clone, Copy, Debug)]
struct ScopeFlags {
    brk: Option<VarId>,
    cont: Option<VarId>,
}

struct Transformer {
    k: Kernel,
    flags: Vec<Option<ScopeFlags>>,
    kinds: Vec<(VarId, FlagKind)>,
}

fn int_const(v: i64) -> Expr {
    Expr {
        kind: ExprKind::Const(Value::I(v)),
        ty: Scalar::I32,
    }
}

fn assign_const(var: VarId, v: i64, span: Span) -> Stmt {
    Stmt::Assign {
        var,
        value: int_const(v),
        span,
    }
}

/// `!(f1 || f2 || …)`
fn none_set(k: &Kernel, flags: &BTreeSet<VarId>) -> Option<Expr> {
    let any = flags
        .iter()
        .map(|&f| Expr {
            kind: ExprKind::Var(f),
            ty: k.vars[f].ty,
        })
        .reduce(|a, b| Expr {
            kind: ExprKind::Or(Box::new(a), Box::new(b)),
            ty: Scalar::I32,
        })?;
    Some(Expr {
        kind: ExprKind::Unary(Unary::Not, Box::new(any)),
        ty: Scalar::I32,
    })
}

fn contains_return(stmts: &[Stmt]) -> bool {
    stmts.iter().any(|s| match s {
        Stmt::Return { .. } => true,
        Stmt::If { then, els, .. } => contains_return(then) || contains_return(els),
        Stmt::Loop { body, step, .. } => contains_return(body) || contains_return(step),
        Stmt::Scope { body, .. } => contains_return(body),
        _ => false,
    })
}

fn jumps_to(stmts: &[Stmt], scope: ScopeId, kind: JumpKind) -> bool {
    stmts.iter().any(|s| match s {
        Stmt::Jump {
            kind: k, scope: t, ..
        } => *t == scope && *k == kind,
        Stmt::If { then, els, .. } => jumps_to(then, scope, kind) || jumps_to(els, scope, kind),
        Stmt::Loop { body, step, .. } => jumps_to(body, scope, kind) || jumps_to(step, scope, kind),
        Stmt::Scope { body, .. } => jumps_to(body, scope, kind),
        _ => false,
    })
}

impl Transformer {
    fn new_flag(&mut self, span: Span, kind: FlagKind) -> VarId {
        let n = self.k.vars.len();
        self.kinds.push((n, kind));
        self.k.vars.push(Var {
            name: format!("left_{n}"),
            ty: Scalar::I32,
            kind: VarKind::Local,
            span,
        });
        n
    }

    /// Transforms a statement list; returns it and the flags it may set
    /// that are still meaningful after it.
    fn seq(&mut self, stmts: Vec<Stmt>, ret: Option<VarId>) -> (Vec<Stmt>, BTreeSet<VarId>) {
        let mut out = Vec::new();
        let mut set = BTreeSet::new();
        let mut iter = stmts.into_iter();
        while let Some(s) = iter.next() {
            let (mut t, f) = self.stmt(s, ret);
            out.append(&mut t);
            if !f.is_empty() {
                let rest: Vec<Stmt> = iter.by_ref().collect();
                let (rest, rf) = self.seq(rest, ret);
                set.extend(f.iter().copied());
                set.extend(rf);
                if !rest.is_empty() {
                    let span = self.k.span;
                    if let Some(cond) = none_set(&self.k, &f) {
                        out.push(Stmt::If {
                            cond,
                            then: rest,
                            els: Vec::new(),
                            span,
                        });
                    }
                }
                break;
            }
        }
        (out, set)
    }

    fn stmt(&mut self, s: Stmt, ret: Option<VarId>) -> (Vec<Stmt>, BTreeSet<VarId>) {
        match s {
            Stmt::Jump { kind, scope, span } => {
                let flags = self.flags[scope].unwrap_or(ScopeFlags {
                    brk: None,
                    cont: None,
                });
                let flag = match kind {
                    JumpKind::Break => flags.brk,
                    JumpKind::Continue => flags.cont,
                };
                match flag {
                    Some(f) => (vec![assign_const(f, 1, span)], BTreeSet::from([f])),
                    None => (Vec::new(), BTreeSet::new()),
                }
            }
            Stmt::Return { span } => match ret {
                Some(f) => (vec![assign_const(f, 1, span)], BTreeSet::from([f])),
                None => (Vec::new(), BTreeSet::new()),
            },
            Stmt::If {
                cond,
                then,
                els,
                span,
            } => {
                let (then, f1) = self.seq(then, ret);
                let (els, f2) = self.seq(els, ret);
                (
                    vec![Stmt::If {
                        cond,
                        then,
                        els,
                        span,
                    }],
                    &f1 | &f2,
                )
            }
            Stmt::Scope { scope, body } => {
                let mut out = Vec::new();
                let brk = jumps_to(&body, scope, JumpKind::Break)
                    .then(|| self.new_flag(self.k.span, FlagKind::Break(scope)));
                self.flags[scope] = Some(ScopeFlags { brk, cont: None });
                if let Some(b) = brk {
                    out.push(assign_const(b, 0, self.k.span));
                }
                let (body, mut f) = self.seq(body, ret);
                if let Some(b) = brk {
                    f.remove(&b);
                }
                // The scope stays: where its `break`s go is after it.
                out.push(Stmt::Scope { scope, body });
                (out, f)
            }
            Stmt::Loop {
                scope,
                cond,
                body,
                step,
                test_first,
                span,
            } => {
                let brk = jumps_to(&body, scope, JumpKind::Break)
                    .then(|| self.new_flag(span, FlagKind::Break(scope)));
                let cont = jumps_to(&body, scope, JumpKind::Continue)
                    .then(|| self.new_flag(span, FlagKind::Continue(scope)));
                self.flags[scope] = Some(ScopeFlags { brk, cont });
                let (mut body, mut escaping) = self.seq(body, ret);
                let (step, step_flags) = self.seq(step, ret);
                escaping.extend(step_flags);
                if let Some(c) = cont {
                    escaping.remove(&c);
                    body.insert(0, assign_const(c, 0, span));
                }
                // Lanes that left skip the step and fail the test.
                let mut stop: BTreeSet<VarId> = escaping.clone();
                if let Some(b) = brk {
                    escaping.remove(&b);
                    stop.insert(b);
                }
                let step = match none_set(&self.k, &stop) {
                    Some(g) if !step.is_empty() => vec![Stmt::If {
                        cond: g,
                        then: step,
                        els: Vec::new(),
                        span,
                    }],
                    _ => step,
                };
                let cond = match (none_set(&self.k, &stop), cond) {
                    (None, c) => c,
                    (Some(g), None) => Some(g),
                    (Some(g), Some(c)) => Some(Expr {
                        kind: ExprKind::And(Box::new(g), Box::new(c)),
                        ty: Scalar::I32,
                    }),
                };
                let mut out = Vec::new();
                if let Some(b) = brk {
                    out.push(assign_const(b, 0, span));
                }
                if let Some(c) = cont {
                    out.push(assign_const(c, 0, span));
                }
                out.push(Stmt::Loop {
                    scope,
                    cond,
                    body,
                    step,
                    test_first,
                    span,
                });
                (out, escaping)
            }
            other => (vec![other], BTreeSet::new()),
        }
    }
}

/// Whether a statement list contains no jumps (what [`without_jumps`]
/// guarantees).
pub fn is_jump_free(stmts: &[Stmt]) -> bool {
    stmts.iter().all(|s| match s {
        Stmt::Jump { .. } | Stmt::Return { .. } => false,
        Stmt::If { then, els, .. } => is_jump_free(then) && is_jump_free(els),
        Stmt::Loop { body, step, .. } => is_jump_free(body) && is_jump_free(step),
        Stmt::Scope { body, .. } => is_jump_free(body),
        _ => true,
    })
}
