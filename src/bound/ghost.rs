//! Ghost counters for loops whose trip count the launch fixes.
//!
//! A loop like `for (s = blockDim.x / 2; s > 0; s >>= 1)` has no linear
//! ranking function, but with a fixed block size every warp runs it the same
//! known number of times. Such a loop gets a ghost counter `iterations_N`:
//! set to 0 before the loop, incremented at the end of each iteration, and
//! known to stay below the trip count inside the body — a linear measure the
//! potential can pay for the loop with. Ghost assignments cost nothing.

use std::collections::{BTreeSet, HashMap};

use crate::absint::deps::{self, key, DepFacts, LaunchFacts};
use crate::cuda::ast::BinOp;
use crate::ir::structured::FlagKind;
use crate::ir::value::{binary, wrap};
use crate::ir::{Builtin, Expr, ExprKind, Kernel, Scalar, Stmt, Unary, Value, Var, VarId, VarKind};

/// Most iterations counted by evaluating a loop's condition.
const MAX_TRIPS: u64 = 1 << 16;

/// Adds a ghost counter to every `while`/`for` loop whose condition only
/// involves variables with constant values at the loop's entry, updated by
/// assignments at the top level of its body or step. Returns each ghost
/// variable with its loop's trip count.
pub fn add_ghosts(
    k: &mut Kernel,
    launch: &LaunchFacts,
    flags: &[(VarId, FlagKind)],
) -> HashMap<VarId, u64> {
    let facts = deps::analyze_with_flags(k, launch, flags);
    let mut trips = Vec::new();
    find(&k.body, &facts, launch, flags, &mut trips);
    let mut ghosts = HashMap::new();
    if trips.is_empty() {
        return ghosts;
    }
    let mut body = std::mem::take(&mut k.body);
    let mut loops = trips.into_iter().peekable();
    insert(&mut body, k, &mut loops, &mut ghosts, &mut 0);
    k.body = body;
    ghosts
}

/// Trip counts of the loops that get ghosts, by pre-order loop index.
fn find(
    stmts: &[Stmt],
    facts: &DepFacts,
    launch: &LaunchFacts,
    flags: &[(VarId, FlagKind)],
    out: &mut Vec<(usize, u64)>,
) {
    fn walk(
        stmts: &[Stmt],
        facts: &DepFacts,
        launch: &LaunchFacts,
        flags: &[(VarId, FlagKind)],
        index: &mut usize,
        out: &mut Vec<(usize, u64)>,
    ) {
        for s in stmts {
            match s {
                Stmt::Loop {
                    cond,
                    body,
                    step,
                    test_first,
                    ..
                } => {
                    let here = *index;
                    *index += 1;
                    if let (Some(c), true, Some(st)) = (cond, test_first, facts.before.get(&key(s)))
                    {
                        if let Some(n) = trip_count(c, body, step, st, launch, flags) {
                            out.push((here, n));
                        }
                    }
                    walk(body, facts, launch, flags, index, out);
                    walk(step, facts, launch, flags, index, out);
                }
                Stmt::If { then, els, .. } => {
                    walk(then, facts, launch, flags, index, out);
                    walk(els, facts, launch, flags, index, out);
                }
                Stmt::Scope { body, .. } => walk(body, facts, launch, flags, index, out),
                _ => {}
            }
        }
    }
    walk(stmts, facts, launch, flags, &mut 0, out);
}

/// Inserts the ghosts into the loops listed (by pre-order index).
fn insert(
    stmts: &mut Vec<Stmt>,
    k: &mut Kernel,
    loops: &mut std::iter::Peekable<std::vec::IntoIter<(usize, u64)>>,
    ghosts: &mut HashMap<VarId, u64>,
    index: &mut usize,
) {
    let mut i = 0;
    while i < stmts.len() {
        let mut init = None;
        match &mut stmts[i] {
            Stmt::Loop {
                body, step, span, ..
            } => {
                let here = *index;
                *index += 1;
                insert(body, k, loops, ghosts, index);
                insert(step, k, loops, ghosts, index);
                if let Some(&(_, n)) = loops.peek().filter(|(l, _)| *l == here) {
                    loops.next();
                    let var = k.vars.len();
                    k.vars.push(Var {
                        name: format!("iterations_{here}"),
                        ty: Scalar::I64,
                        kind: VarKind::Local,
                        span: *span,
                    });
                    let ghost = || Expr {
                        kind: ExprKind::Var(var),
                        ty: Scalar::I64,
                    };
                    let konst = |v| Expr {
                        kind: ExprKind::Const(Value::I(v)),
                        ty: Scalar::I64,
                    };
                    step.push(Stmt::Assign {
                        var,
                        value: Expr {
                            kind: ExprKind::Binary(
                                BinOp::Add,
                                Box::new(ghost()),
                                Box::new(konst(1)),
                            ),
                            ty: Scalar::I64,
                        },
                        span: *span,
                    });
                    init = Some(Stmt::Assign {
                        var,
                        value: konst(0),
                        span: *span,
                    });
                    ghosts.insert(var, n);
                }
            }
            Stmt::If { then, els, .. } => {
                insert(then, k, loops, ghosts, index);
                insert(els, k, loops, ghosts, index);
            }
            Stmt::Scope { body, .. } => insert(body, k, loops, ghosts, index),
            _ => {}
        }
        if let Some(s) = init {
            stmts.insert(i, s);
            i += 1;
        }
        i += 1;
    }
}

/// The number of times a loop's body runs, when its condition only reads
/// variables with known values at entry that the loop updates by top-level
/// assignments evaluable from known values.
fn trip_count(
    cond: &Expr,
    body: &[Stmt],
    step: &[Stmt],
    entry: &deps::State,
    launch: &LaunchFacts,
    flags: &[(VarId, FlagKind)],
) -> Option<u64> {
    // A set jump flag only ends the loop sooner: counting with every flag
    // clear gives the most iterations.
    let mut tracked = BTreeSet::new();
    cond.visit(&mut |e| {
        if let ExprKind::Var(v) = e.kind {
            if !flags.iter().any(|(f, _)| *f == v) {
                tracked.insert(v);
            }
        }
    });
    let mut updates: Vec<(VarId, &Expr)> = Vec::new();
    top_level_updates(body, &tracked, flags, &mut updates);
    top_level_updates(step, &tracked, flags, &mut updates);
    let mut all_writes = BTreeSet::new();
    deps::written(body, &mut all_writes);
    deps::written(step, &mut all_writes);
    for v in &tracked {
        let top = updates.iter().filter(|(w, _)| w == v).count();
        if all_writes.contains(v) && count_writes(body, *v) + count_writes(step, *v) != top {
            return None;
        }
    }
    let mut env: HashMap<VarId, Value> = flags.iter().map(|(f, _)| (*f, Value::I(0))).collect();
    for v in &tracked {
        env.insert(*v, Value::I(entry[*v].constant()?));
    }
    let mut n = 0;
    while eval(cond, &env, launch)?.truthy() {
        n += 1;
        if n > MAX_TRIPS {
            return None;
        }
        for (v, e) in &updates {
            let val = eval(e, &env, launch)?;
            env.insert(*v, val);
        }
    }
    Some(n)
}

/// The assignments to `tracked` variables every iteration makes (with
/// every jump flag clear): those at the top level, and inside the guards
/// `if (!flags)` jump elimination wraps the rest of an iteration in.
fn top_level_updates<'k>(
    stmts: &'k [Stmt],
    tracked: &BTreeSet<VarId>,
    flags: &[(VarId, FlagKind)],
    out: &mut Vec<(VarId, &'k Expr)>,
) {
    let is_flag = |v: VarId| flags.iter().any(|(f, _)| *f == v);
    for s in stmts {
        match s {
            Stmt::Assign { var, value, .. } if tracked.contains(var) => out.push((*var, value)),
            Stmt::If {
                cond, then, els, ..
            } if els.is_empty() => {
                let mut only_flags = true;
                cond.visit(&mut |e| {
                    if let ExprKind::Var(v) = e.kind {
                        only_flags &= is_flag(v);
                    }
                });
                if only_flags {
                    top_level_updates(then, tracked, flags, out);
                }
            }
            _ => {}
        }
    }
}

/// How many assignments to `v` a statement list has, at any depth.
fn count_writes(stmts: &[Stmt], v: VarId) -> usize {
    let mut n = 0;
    crate::ir::visit_stmts(stmts, &mut |s| match s {
        Stmt::Assign { var, .. } if *var == v => n += 1,
        Stmt::Atomic {
            result: Some(r), ..
        } if *r == v => n += 1,
        _ => {}
    });
    n
}

/// Evaluates an expression over known variable values, with C semantics.
fn eval(e: &Expr, env: &HashMap<VarId, Value>, launch: &LaunchFacts) -> Option<Value> {
    Some(match &e.kind {
        ExprKind::Const(v) => *v,
        ExprKind::Var(v) => *env.get(v)?,
        ExprKind::Builtin(Builtin::BlockDim(d)) => Value::I(launch.block?[*d as usize] as i64),
        ExprKind::Builtin(Builtin::GridDim(d)) => Value::I(launch.grid?[*d as usize] as i64),
        ExprKind::Builtin(Builtin::WarpSize) => Value::I(launch.warp as i64),
        ExprKind::Binary(op, l, r) => {
            binary(*op, eval(l, env, launch)?, eval(r, env, launch)?, l.ty).ok()?
        }
        ExprKind::Convert { value, .. } => eval(value, env, launch)?.convert_from(value.ty, e.ty),
        ExprKind::Unary(Unary::Not, x) => Value::I(!eval(x, env, launch)?.truthy() as i64),
        ExprKind::Unary(Unary::Neg, x) => match eval(x, env, launch)? {
            Value::I(i) => wrap(i.wrapping_neg(), e.ty),
            Value::F(f) => Value::F(-f),
        },
        ExprKind::And(a, b) => {
            Value::I((eval(a, env, launch)?.truthy() && eval(b, env, launch)?.truthy()) as i64)
        }
        ExprKind::Or(a, b) => {
            Value::I((eval(a, env, launch)?.truthy() || eval(b, env, launch)?.truthy()) as i64)
        }
        _ => return None,
    })
}
