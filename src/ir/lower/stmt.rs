//! Statements: blocks, `if`, `return`, loops (`for`, `while`, `do`) and
//! `switch` become structured IR loops, scopes and jumps; the statement
//! budget of a kernel.

use super::*;
use crate::cuda::ast::StmtKind as S;
use crate::ir::fold;

/// Most IR statements one kernel may lower to.
const MAX_STATEMENTS: usize = 200_000;

pub(super) fn contains_jump_to(stmts: &[Stmt], scope: ScopeId) -> bool {
    stmts.iter().any(|s| match s {
        Stmt::Jump { scope: t, .. } => *t == scope,
        Stmt::If { then, els, .. } => contains_jump_to(then, scope) || contains_jump_to(els, scope),
        Stmt::Loop { body, step, .. } => {
            contains_jump_to(body, scope) || contains_jump_to(step, scope)
        }
        Stmt::Scope { body, .. } => contains_jump_to(body, scope),
        _ => false,
    })
}

impl Lowerer<'_> {
    pub(super) fn block(&mut self, stmts: &[ast::Stmt], out: &mut Vec<Stmt>) -> Result<()> {
        self.push_scope();
        let r = stmts.iter().try_for_each(|s| self.stmt(s, out));
        self.pop_scope();
        r
    }

    fn count(&mut self, span: Span) -> Result<()> {
        self.statements += 1;
        if self.statements > MAX_STATEMENTS {
            return fail(
                span,
                format!("kernel lowers to more than {MAX_STATEMENTS} statements"),
            );
        }
        Ok(())
    }

    pub(super) fn stmt(&mut self, s: &ast::Stmt, out: &mut Vec<Stmt>) -> Result<()> {
        let span = s.meta.span;
        self.count(span)?;
        match &s.kind {
            S::Decl(decls) => decls.iter().try_for_each(|d| self.decl(d, out)),
            S::Expr(e) => self.effect(e, out),
            S::Block(b) => self.block(b, out),
            S::If { cond, then, els } => {
                let mut pre = Vec::new();
                let c = self.expr(cond, &mut pre)?;
                if let (true, Some(v)) = (pre.is_empty(), fold::constant(&c)) {
                    // A condition fixed at compile time (`if (blockSize >=
                    // 64)` in an instantiation): only the branch taken is
                    // code, as nvcc compiles it.
                    return match (v.truthy(), els) {
                        (true, _) => self.branch(then, out),
                        (false, Some(els)) => self.branch(els, out),
                        (false, None) => Ok(()),
                    };
                }
                out.append(&mut pre);
                let mut t = Vec::new();
                self.branch(then, &mut t)?;
                let mut e = Vec::new();
                if let Some(els) = els {
                    self.branch(els, &mut e)?;
                }
                out.push(Stmt::If {
                    cond: c,
                    then: t,
                    els: e,
                    span,
                });
                Ok(())
            }
            S::While { cond, body } => {
                self.push_scope();
                let r = self.lower_loop(Some(cond), body, None, true, span, out);
                self.pop_scope();
                r
            }
            S::DoWhile { body, cond } => {
                self.push_scope();
                let r = self.lower_loop(Some(cond), body, None, false, span, out);
                self.pop_scope();
                r
            }
            S::For {
                init,
                cond,
                step,
                body,
            } => {
                self.push_scope();
                let r = (|| {
                    if let Some(i) = init {
                        self.stmt(i, out)?;
                    }
                    self.lower_loop(cond.as_ref(), body, step.as_ref(), true, span, out)
                })();
                self.pop_scope();
                r
            }
            S::Switch { cond, cases } => self.switch(cond, cases, span, out),
            S::Break => {
                let Some(t) = self.targets.last().copied() else {
                    return fail(span, "`break` outside a loop or switch");
                };
                out.push(Stmt::Jump {
                    kind: JumpKind::Break,
                    scope: t.scope,
                    span,
                });
                Ok(())
            }
            S::Continue => {
                let Some(t) = self.targets.iter().rev().find(|t| t.is_loop).copied() else {
                    return fail(span, "`continue` outside a loop");
                };
                out.push(Stmt::Jump {
                    kind: JumpKind::Continue,
                    scope: t.scope,
                    span,
                });
                Ok(())
            }
            S::Return(e) => self.ret(e.as_ref(), span, out),
            S::Empty | S::Pragma(_) => Ok(()),
        }
    }

    /// A branch body in its own lexical scope.
    fn branch(&mut self, s: &ast::Stmt, out: &mut Vec<Stmt>) -> Result<()> {
        self.push_scope();
        let r = self.stmt(s, out);
        self.pop_scope();
        r
    }

    fn ret(&mut self, e: Option<&ast::Expr>, span: Span, out: &mut Vec<Stmt>) -> Result<()> {
        match self.frames.last().cloned() {
            None => {
                if e.is_some() {
                    return fail(span, "a kernel cannot return a value");
                }
                out.push(Stmt::Return { span });
            }
            Some(frame) => {
                match (e, frame.result) {
                    (Some(e), Returned::Record(rec, vars)) => {
                        self.record_return(e, &rec, vars, span, out)?
                    }
                    (Some(e), Returned::Scalar(r)) => {
                        let v = self.expr(e, out)?;
                        let ty = self.k.vars[r].ty;
                        out.push(Stmt::Assign {
                            var: r,
                            value: convert(v, ty),
                            span,
                        });
                    }
                    (None, Returned::Nothing) => {}
                    (Some(e), Returned::Nothing) => self.effect(e, out)?,
                    (None, _) => {
                        return fail(span, format!("`{}` must return a value", frame.name))
                    }
                }
                out.push(Stmt::Jump {
                    kind: JumpKind::Break,
                    scope: frame.scope,
                    span,
                });
            }
        }
        Ok(())
    }

    fn lower_loop(
        &mut self,
        cond: Option<&ast::Expr>,
        body: &ast::Stmt,
        step: Option<&ast::Expr>,
        test_first: bool,
        span: Span,
        out: &mut Vec<Stmt>,
    ) -> Result<()> {
        let scope = self.new_scope();
        self.targets.push(Target {
            scope,
            is_loop: true,
        });
        let r = (|| {
            let mut pre = Vec::new();
            let c = match cond {
                Some(c) => Some(self.expr(c, &mut pre)?),
                None => None,
            };
            let mut b = Vec::new();
            self.branch(body, &mut b)?;
            let mut st = Vec::new();
            if let Some(s) = step {
                self.effect(s, &mut st)?;
            }
            let cond = if pre.is_empty() {
                c
            } else {
                // A condition with side effects: evaluate it at the top of the
                // body and leave when it fails.
                let c = c.unwrap_or_else(|| int(1, Scalar::I32));
                let not_c = Expr {
                    kind: ExprKind::Unary(Unary::Not, Box::new(c)),
                    ty: Scalar::I32,
                };
                pre.push(Stmt::If {
                    cond: not_c,
                    then: vec![Stmt::Jump {
                        kind: JumpKind::Break,
                        scope,
                        span,
                    }],
                    els: Vec::new(),
                    span,
                });
                if !test_first {
                    // do { body } while (effects; c): run the test after the body.
                    b.extend(std::mem::take(&mut st));
                    st = pre;
                    pre = Vec::new();
                }
                pre.extend(b);
                b = pre;
                None
            };
            out.push(Stmt::Loop {
                scope,
                cond,
                body: b,
                step: st,
                test_first,
                span,
            });
            Ok(())
        })();
        self.targets.pop();
        r
    }

    fn switch(
        &mut self,
        cond: &ast::Expr,
        cases: &[ast::SwitchCase],
        span: Span,
        out: &mut Vec<Stmt>,
    ) -> Result<()> {
        let c = self.expr(cond, out)?;
        let ty = c.ty.promote();
        let sel = self.temp(ty, span);
        out.push(Stmt::Assign {
            var: sel,
            value: convert(c, ty),
            span,
        });
        let scope = self.new_scope();
        self.targets.push(Target {
            scope,
            is_loop: false,
        });
        let r = (|| {
            let ends_in_jump = |c: &ast::SwitchCase| {
                matches!(
                    c.body.last().map(|s| &s.kind),
                    Some(S::Break | S::Return(_) | S::Continue)
                )
            };
            let fallthrough = cases.iter().rev().skip(1).any(|c| !ends_in_jump(c));
            let mut bodies = Vec::new();
            for case in cases {
                let mut b = Vec::new();
                self.push_scope();
                let n = case.body.len();
                let r = case.body.iter().enumerate().try_for_each(|(i, s)| {
                    if !fallthrough && i + 1 == n && matches!(s.kind, S::Break) {
                        Ok(())
                    } else {
                        self.stmt(s, &mut b)
                    }
                });
                self.pop_scope();
                r?;
                let mut tests = Vec::new();
                let mut is_default = false;
                for l in &case.labels {
                    match l {
                        None => is_default = true,
                        Some(e) => match self.const_value(e) {
                            Some(v) => tests.push(v.convert(ty)),
                            None => return fail(e.meta.span, "`case` label is not a constant"),
                        },
                    }
                }
                bodies.push((tests, is_default, b, case.meta.span));
            }
            let eq = |v: Value| {
                bin(
                    BinOp::Eq,
                    var_expr(&self.k, sel),
                    Expr {
                        kind: ExprKind::Const(v),
                        ty,
                    },
                    ty,
                )
            };
            let test = |tests: &[Value]| -> Option<Expr> {
                tests
                    .iter()
                    .map(|v| Expr {
                        ty: Scalar::I32,
                        ..eq(*v)
                    })
                    .reduce(|a, b| Expr {
                        kind: ExprKind::Or(Box::new(a), Box::new(b)),
                        ty: Scalar::I32,
                    })
            };
            let mut body = Vec::new();
            if !fallthrough {
                // if (sel == a || sel == b) … else if … else default
                let mut chain: Vec<Stmt> = bodies
                    .iter()
                    .find(|(_, d, _, _)| *d)
                    .map(|(_, _, b, _)| b.clone())
                    .unwrap_or_default();
                for (tests, is_default, b, span) in bodies.into_iter().rev() {
                    if is_default && tests.is_empty() {
                        continue;
                    }
                    let Some(t) = test(&tests) else { continue };
                    let t = if is_default {
                        Expr {
                            kind: ExprKind::Const(Value::I(1)),
                            ty: Scalar::I32,
                        }
                    } else {
                        t
                    };
                    chain = vec![Stmt::If {
                        cond: t,
                        then: b,
                        els: chain,
                        span,
                    }];
                }
                body = chain;
            } else {
                // k = index of the first matching case (default if none);
                // case i runs when k <= i, so control falls through.
                let n = bodies.len() as i64;
                let default_index = bodies
                    .iter()
                    .position(|(_, d, _, _)| *d)
                    .map_or(n, |i| i as i64);
                let mut k_expr = int(default_index, Scalar::I32);
                for (i, (tests, _, _, _)) in bodies.iter().enumerate().rev() {
                    if let Some(t) = test(tests) {
                        k_expr = Expr {
                            kind: ExprKind::Select(
                                Box::new(t),
                                Box::new(int(i as i64, Scalar::I32)),
                                Box::new(k_expr),
                            ),
                            ty: Scalar::I32,
                        };
                    }
                }
                let kv = self.temp(Scalar::I32, span);
                body.push(Stmt::Assign {
                    var: kv,
                    value: k_expr,
                    span,
                });
                for (i, (_, _, b, span)) in bodies.into_iter().enumerate() {
                    let c = bin(
                        BinOp::Le,
                        var_expr(&self.k, kv),
                        int(i as i64, Scalar::I32),
                        Scalar::I32,
                    );
                    body.push(Stmt::If {
                        cond: Expr {
                            ty: Scalar::I32,
                            ..c
                        },
                        then: b,
                        els: Vec::new(),
                        span,
                    });
                }
            }
            out.push(Stmt::Scope { scope, body });
            Ok(())
        })();
        self.targets.pop();
        r
    }
}
