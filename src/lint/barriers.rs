//! Divergent barriers: a `__syncthreads()` that only part of a block may
//! reach. CUDA requires every thread of the block to reach each barrier
//! (or none); one inside `if (row < n)` or in a loop whose trip count
//! differs between threads hangs the block or lets threads read shared
//! memory the others have not written yet.
//!
//! The test is the dependence analysis asked across the whole block
//! ([`crate::absint::deps::analyze_block_wide`]) on the jump-free kernel:
//! a barrier is divergent when an enclosing `if` or loop condition may
//! differ between the threads of one block, when an enclosing loop may be
//! left by `break` in some threads and not others, or when it is among
//! what a `continue` or `break` some threads take skips. Threads that
//! `return` early are gone, not waiting (the simulator agrees), so a
//! barrier after `if (i >= n) return;` is no finding.

use std::collections::HashMap;

use crate::absint::deps::{key, DepFacts};
use crate::bound::Prepared;
use crate::ir::structured::FlagKind;
use crate::ir::{ExprKind, Stmt, VarId};
use crate::source::Span;

use super::{Code, Finding};

/// Why the threads of a block may not all reach a barrier.
#[derive(Clone, Copy)]
enum Divergence {
    /// An `if` whose condition may differ between them.
    Branch,
    /// A loop whose condition may differ between them, or that some may
    /// leave by `break`.
    Loop,
    /// Code some of them skip after `continue` or `break`.
    Jump,
}

/// The findings of every barrier of the kernel `prep` analyzed that only
/// part of a block may reach.
pub fn findings(prep: &Prepared) -> Vec<Finding> {
    let deps = prep.block_wide_deps();
    let flags: HashMap<VarId, FlagKind> = prep.flags().iter().copied().collect();
    let mut out = Vec::new();
    let mut walk = Walk {
        deps: &deps,
        flags: &flags,
        out: &mut out,
    };
    walk.stmts(&prep.kernel.body, None);
    out
}

struct Walk<'a> {
    deps: &'a DepFacts,
    flags: &'a HashMap<VarId, FlagKind>,
    out: &'a mut Vec<Finding>,
}

impl Walk<'_> {
    fn stmts(&mut self, stmts: &[Stmt], within: Option<Divergence>) {
        for s in stmts {
            self.stmt(s, within);
        }
    }

    fn stmt(&mut self, s: &Stmt, within: Option<Divergence>) {
        let uniform = || {
            self.deps
                .uniform_cond
                .get(&key(s))
                .copied()
                .unwrap_or(false)
        };
        match s {
            Stmt::If {
                cond, then, els, ..
            } => {
                let here = if self.skips_after_jump(cond) {
                    Some(Divergence::Jump)
                } else if !uniform() {
                    Some(Divergence::Branch)
                } else {
                    None
                };
                self.stmts(then, here.or(within));
                self.stmts(els, here.or(within));
            }
            Stmt::Loop {
                scope, body, step, ..
            } => {
                let here = (!uniform() || self.deps.divergent_exit.contains(scope))
                    .then_some(Divergence::Loop);
                self.stmts(body, here.or(within));
                self.stmts(step, here.or(within));
            }
            Stmt::Scope { body, .. } => self.stmts(body, within),
            Stmt::Sync { span } => {
                if let Some(why) = within {
                    self.out.push(finding(*span, why));
                }
            }
            _ => {}
        }
    }

    /// Whether `cond` tests the flag of a `break` or `continue` that some
    /// threads of a block may take while others go on: what it guards is
    /// what those threads skip.
    fn skips_after_jump(&self, cond: &crate::ir::Expr) -> bool {
        let mut divergent = false;
        cond.visit(&mut |e| {
            let ExprKind::Var(v) = e.kind else { return };
            divergent |= match self.flags.get(&v) {
                Some(FlagKind::Break(sc)) => self.deps.divergent_exit.contains(sc),
                Some(FlagKind::Continue(sc)) => self.deps.divergent_continue.contains_key(sc),
                Some(FlagKind::Return) | None => false,
            };
        });
        divergent
    }
}

/// The finding for the barrier at `span`.
fn finding(span: Span, why: Divergence) -> Finding {
    let inside = match why {
        Divergence::Branch => {
            "it is inside an `if` whose condition may differ between the threads of a block"
        }
        Divergence::Loop => {
            "it is inside a loop that the threads of a block may run a different number of times"
        }
        Divergence::Jump => {
            "it comes after a `continue` or `break` that only some threads of a block may take"
        }
    };
    Finding {
        code: Code::DivergentBarrier,
        span,
        message: "`__syncthreads()` may be reached by only part of the block".into(),
        why: format!("{inside}; CUDA requires all of them to reach it or none (otherwise the block may hang, or read shared memory the others have not written)"),
        help: Some("move the barrier out of the branch or loop (test the condition around the work, not the barrier), or make the condition the same for every thread of the block".into()),
        worst: None,
        site: None,
        calls: Vec::new(),
    }
}
