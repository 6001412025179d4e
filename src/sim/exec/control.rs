//! Running one warp's instructions until it finishes or reaches a
//! barrier: the instruction dispatch, the step and time budgets, and the
//! SIMT reconvergence stack (branches, loops, `break`/`continue`/`return`).

use super::eval::truthy;
use super::{lanes_of, Block, SimError, Status, Warp};
use crate::cost::Counter;
use crate::ir::ScopeId;
use crate::sim::code::Ins;

/// Instructions a warp runs between two looks at the clock (when the
/// simulation has a deadline).
const DEADLINE_EVERY: u64 = 1 << 14;

/// Reconvergence frames of the SIMT stack.
#[derive(Clone, Debug)]
pub(super) enum Frame {
    If {
        else_pc: usize,
        join_pc: usize,
        else_mask: u32,
        then_done: u32,
        in_else: bool,
    },
    Loop {
        scope: ScopeId,
        exit_pc: usize,
        step_pc: usize,
        done: u32,
        continued: u32,
    },
    Scope {
        scope: ScopeId,
        exit_pc: usize,
        exited: u32,
    },
}

impl Block<'_> {
    /// Runs a warp until it finishes or reaches a barrier.
    pub(super) fn run_warp(&mut self, w: &mut Warp) -> Result<(), SimError> {
        let code = self.ctx.code;
        loop {
            if w.mask == 0 && !self.unwind(w) {
                w.status = Status::Done;
                return Ok(());
            }
            let Some(ins) = code.get(w.pc).copied() else {
                w.status = Status::Done;
                return Ok(());
            };
            w.steps += 1;
            w.work += 1;
            if w.steps.is_multiple_of(DEADLINE_EVERY)
                && self
                    .ctx
                    .deadline
                    .is_some_and(|d| std::time::Instant::now() > d)
            {
                let lane = lanes_of(w.mask).next().unwrap_or(0);
                return Err(self.error(w, lane, w.span, crate::sim::WALL_CLOCK.to_string()));
            }
            if w.steps > self.ctx.step_budget {
                let lane = lanes_of(w.mask).next().unwrap_or(0);
                return Err(self.error(
                    w,
                    lane,
                    w.span,
                    format!("step budget of {} instructions per warp exhausted (the kernel may not terminate; raise it with --max-steps)", self.ctx.step_budget),
                ));
            }
            if w.work > self.warp_cap {
                let lane = lanes_of(w.mask).next().unwrap_or(0);
                let limit = self.ctx.max_steps.unwrap_or(self.cap);
                return Err(self.error(w, lane, w.span, crate::sim::work_limit_message(limit)));
            }
            w.pc += 1;
            match ins {
                Ins::Assign { var, value, span } => {
                    w.span = span;
                    let v = self.eval(w, value, w.mask)?;
                    Self::charge(w, Counter::VWrite);
                    let slot = &mut w.vars[var];
                    for l in lanes_of(w.mask) {
                        slot[l] = v[l];
                    }
                }
                Ins::Store {
                    access,
                    value,
                    span,
                } => {
                    w.span = span;
                    self.store(w, access, value)?;
                }
                Ins::Atomic {
                    op,
                    access,
                    value,
                    compare,
                    result,
                    span,
                } => {
                    w.span = span;
                    self.atomic(w, op, access, value, compare, result)?;
                }
                Ins::If {
                    cond,
                    else_pc,
                    join_pc,
                    span,
                } => {
                    w.span = span;
                    let c = self.eval(w, cond, w.mask)?;
                    let t = lanes_of(w.mask)
                        .filter(|&l| truthy(c[l], cond.ty))
                        .fold(0u32, |m, l| m | 1 << l);
                    let f = w.mask & !t;
                    Self::charge(w, Counter::If);
                    if t != 0 && f != 0 {
                        Self::charge(w, Counter::Div);
                    }
                    if t != 0 {
                        w.frames.push(Frame::If {
                            else_pc,
                            join_pc,
                            else_mask: f,
                            then_done: 0,
                            in_else: false,
                        });
                        w.mask = t;
                    } else {
                        w.frames.push(Frame::If {
                            else_pc,
                            join_pc,
                            else_mask: 0,
                            then_done: 0,
                            in_else: true,
                        });
                        w.mask = f;
                        w.pc = else_pc;
                    }
                }
                Ins::Else => {
                    if let Some(Frame::If {
                        else_pc,
                        join_pc,
                        else_mask,
                        then_done,
                        in_else,
                    }) = w.frames.last_mut()
                    {
                        *then_done = w.mask;
                        if *else_mask != 0 {
                            w.mask = *else_mask;
                            *else_mask = 0;
                            *in_else = true;
                            w.pc = *else_pc;
                        } else {
                            w.pc = *join_pc;
                        }
                    }
                }
                Ins::Join => {
                    if let Some(Frame::If {
                        then_done, in_else, ..
                    }) = w.frames.pop()
                    {
                        w.mask = if in_else {
                            w.mask | then_done
                        } else {
                            then_done
                        };
                    }
                }
                Ins::LoopEnter {
                    scope,
                    exit_pc,
                    step_pc,
                } => {
                    w.frames.push(Frame::Loop {
                        scope,
                        exit_pc,
                        step_pc,
                        done: 0,
                        continued: 0,
                    });
                }
                Ins::LoopTest {
                    cond,
                    back_pc,
                    span,
                } => {
                    w.span = span;
                    let t = match cond {
                        None => w.mask,
                        Some(c) => {
                            let v = self.eval(w, c, w.mask)?;
                            Self::charge(w, Counter::If);
                            lanes_of(w.mask)
                                .filter(|&l| truthy(v[l], c.ty))
                                .fold(0u32, |m, l| m | 1 << l)
                        }
                    };
                    let f = w.mask & !t;
                    if t != 0 && f != 0 {
                        Self::charge(w, Counter::Div);
                    }
                    if let Some(Frame::Loop { done, exit_pc, .. }) = w.frames.last_mut() {
                        *done |= f;
                        if t == 0 {
                            w.mask = *done;
                            w.pc = *exit_pc;
                            w.frames.pop();
                            continue;
                        }
                    }
                    w.mask = t;
                    if let Some(b) = back_pc {
                        w.pc = b;
                    }
                }
                Ins::LoopStep => {
                    if let Some(Frame::Loop { continued, .. }) = w.frames.last_mut() {
                        w.mask |= *continued;
                        *continued = 0;
                    }
                }
                Ins::Goto(pc) => w.pc = pc,
                Ins::ScopeEnter { scope, exit_pc } => w.frames.push(Frame::Scope {
                    scope,
                    exit_pc,
                    exited: 0,
                }),
                Ins::ScopeExit => {
                    if let Some(Frame::Scope { exited, .. }) = w.frames.pop() {
                        w.mask |= exited;
                    }
                }
                Ins::Break(scope) => {
                    let m = w.mask;
                    for f in w.frames.iter_mut().rev() {
                        match f {
                            Frame::Loop { scope: s, done, .. } if *s == scope => {
                                *done |= m;
                                break;
                            }
                            Frame::Scope {
                                scope: s, exited, ..
                            } if *s == scope => {
                                *exited |= m;
                                break;
                            }
                            _ => {}
                        }
                    }
                    w.mask = 0;
                }
                Ins::Continue(scope) => {
                    let m = w.mask;
                    for f in w.frames.iter_mut().rev() {
                        if let Frame::Loop {
                            scope: s,
                            continued,
                            ..
                        } = f
                        {
                            if *s == scope {
                                *continued |= m;
                                break;
                            }
                        }
                    }
                    w.mask = 0;
                }
                Ins::Return => w.mask = 0,
                Ins::Sync { span } => {
                    w.span = span;
                    Self::charge(w, Counter::Sync);
                    let waiting = self.parked(w);
                    if waiting != 0 {
                        let lane = lanes_of(waiting).next().unwrap_or(0);
                        return Err(self.error(
                            w,
                            lane,
                            span,
                            "`__syncthreads()` reached by only part of the block (it is inside a branch or loop some threads of this warp did not take)".into(),
                        ));
                    }
                    w.status = Status::AtSync;
                    return Ok(());
                }
            }
        }
    }

    /// Lanes that are alive but not executing (waiting in a frame).
    fn parked(&self, w: &Warp) -> u32 {
        w.frames.iter().fold(0u32, |m, f| {
            m | match f {
                Frame::If {
                    else_mask,
                    then_done,
                    in_else,
                    ..
                } => *else_mask | if *in_else { *then_done } else { 0 },
                Frame::Loop {
                    done, continued, ..
                } => *done | *continued,
                Frame::Scope { exited, .. } => *exited,
            }
        })
    }

    /// After the active lanes all left (break, continue, return), finds the
    /// next lanes to run. Returns false when the warp is finished.
    fn unwind(&self, w: &mut Warp) -> bool {
        while let Some(f) = w.frames.last_mut() {
            match f {
                Frame::If {
                    else_pc,
                    else_mask,
                    then_done,
                    in_else,
                    ..
                } if !*in_else && *else_mask != 0 => {
                    w.mask = *else_mask;
                    *else_mask = 0;
                    *then_done = 0;
                    *in_else = true;
                    w.pc = *else_pc;
                    return true;
                }
                Frame::If {
                    join_pc,
                    then_done,
                    in_else: true,
                    ..
                } if *then_done != 0 => {
                    w.mask = *then_done;
                    w.pc = *join_pc + 1;
                    w.frames.pop();
                    return true;
                }
                Frame::If { .. } => {
                    w.frames.pop();
                }
                Frame::Loop {
                    continued, step_pc, ..
                } if *continued != 0 => {
                    w.mask = *continued;
                    *continued = 0;
                    w.pc = *step_pc + 1;
                    return true;
                }
                Frame::Loop { done, exit_pc, .. } => {
                    let (d, e) = (*done, *exit_pc);
                    w.frames.pop();
                    if d != 0 {
                        w.mask = d;
                        w.pc = e;
                        return true;
                    }
                }
                Frame::Scope {
                    exited, exit_pc, ..
                } => {
                    let (x, e) = (*exited, *exit_pc);
                    w.frames.pop();
                    if x != 0 {
                        w.mask = x;
                        w.pc = e;
                        return true;
                    }
                }
            }
        }
        false
    }
}
