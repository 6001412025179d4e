//! Flattens structured IR into a linear code a warp can be suspended in (at
//! `__syncthreads()`) and resumed, with SIMT reconvergence markers.

use crate::ir::{Access, AtomicOp, Expr, Kernel, ScopeId, Stmt, VarId};
use crate::source::Span;

/// One instruction of the flattened kernel.
#[derive(Clone, Copy, Debug)]
pub enum Ins<'k> {
    /// `var = value`
    Assign {
        var: VarId,
        value: &'k Expr,
        span: Span,
    },
    /// `array[index] = value`
    Store {
        access: &'k Access,
        value: &'k Expr,
        span: Span,
    },
    /// An atomic read-modify-write.
    Atomic {
        op: AtomicOp,
        access: &'k Access,
        value: &'k Expr,
        compare: Option<&'k Expr>,
        result: Option<VarId>,
        span: Span,
    },
    /// Start of an `if`: lanes where `cond` fails go to `else_pc`.
    If {
        cond: &'k Expr,
        else_pc: usize,
        join_pc: usize,
        span: Span,
    },
    /// End of a then-branch.
    Else,
    /// Reconvergence after an `if`.
    Join,
    /// Loop entry: pushes the loop frame.
    LoopEnter {
        scope: ScopeId,
        exit_pc: usize,
        step_pc: usize,
    },
    /// Loop test: lanes where `cond` fails leave the loop; the others go on
    /// at `back_pc` (or the next instruction).
    LoopTest {
        cond: Option<&'k Expr>,
        back_pc: Option<usize>,
        span: Span,
    },
    /// Start of the step: lanes that executed `continue` rejoin here.
    LoopStep,
    /// Unconditional jump (loop back edge).
    Goto(usize),
    /// Scope entry: pushes the scope frame.
    ScopeEnter { scope: ScopeId, exit_pc: usize },
    /// Scope end: lanes that left the scope rejoin here.
    ScopeExit,
    /// `break` (or leaving a scope).
    Break(ScopeId),
    /// `continue`.
    Continue(ScopeId),
    /// `return` from the kernel.
    Return,
    /// `__syncthreads()`.
    Sync { span: Span },
}

/// Flattens a kernel's body.
pub fn compile(k: &Kernel) -> Vec<Ins<'_>> {
    let mut code = Vec::new();
    emit(&k.body, &mut code);
    code
}

fn emit<'k>(stmts: &'k [Stmt], code: &mut Vec<Ins<'k>>) {
    for s in stmts {
        match s {
            Stmt::Assign { var, value, span } => code.push(Ins::Assign {
                var: *var,
                value,
                span: *span,
            }),
            Stmt::Store {
                access,
                value,
                span,
            } => code.push(Ins::Store {
                access,
                value,
                span: *span,
            }),
            Stmt::Atomic {
                op,
                access,
                value,
                compare,
                result,
                span,
            } => code.push(Ins::Atomic {
                op: *op,
                access,
                value,
                compare: compare.as_ref(),
                result: *result,
                span: *span,
            }),
            Stmt::If {
                cond,
                then,
                els,
                span,
            } => {
                let at = code.len();
                code.push(Ins::Else);
                emit(then, code);
                code.push(Ins::Else);
                let else_pc = code.len();
                emit(els, code);
                let join_pc = code.len();
                code.push(Ins::Join);
                code[at] = Ins::If {
                    cond,
                    else_pc,
                    join_pc,
                    span: *span,
                };
            }
            Stmt::Loop {
                scope,
                cond,
                body,
                step,
                test_first,
                span,
            } => {
                let enter = code.len();
                code.push(Ins::Join);
                let step_pc;
                if *test_first {
                    let test_pc = code.len();
                    code.push(Ins::LoopTest {
                        cond: cond.as_ref(),
                        back_pc: None,
                        span: *span,
                    });
                    emit(body, code);
                    step_pc = code.len();
                    code.push(Ins::LoopStep);
                    emit(step, code);
                    code.push(Ins::Goto(test_pc));
                } else {
                    let body_pc = code.len();
                    emit(body, code);
                    step_pc = code.len();
                    code.push(Ins::LoopStep);
                    emit(step, code);
                    code.push(Ins::LoopTest {
                        cond: cond.as_ref(),
                        back_pc: Some(body_pc),
                        span: *span,
                    });
                }
                let exit_pc = code.len();
                code[enter] = Ins::LoopEnter {
                    scope: *scope,
                    exit_pc,
                    step_pc,
                };
            }
            Stmt::Scope { scope, body } => {
                let enter = code.len();
                code.push(Ins::Join);
                emit(body, code);
                code.push(Ins::ScopeExit);
                let exit_pc = code.len();
                code[enter] = Ins::ScopeEnter {
                    scope: *scope,
                    exit_pc,
                };
            }
            Stmt::Jump { kind, scope, .. } => code.push(match kind {
                crate::ir::JumpKind::Break => Ins::Break(*scope),
                crate::ir::JumpKind::Continue => Ins::Continue(*scope),
            }),
            Stmt::Return { .. } => code.push(Ins::Return),
            Stmt::Sync { span } => code.push(Ins::Sync { span: *span }),
        }
    }
}
