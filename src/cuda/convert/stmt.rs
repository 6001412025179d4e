//! Statements: blocks with their `#pragma` lines re-inserted, and each
//! statement kind, `switch` bodies split into cases.

use super::*;

impl Converter<'_> {
    /// Inserts the pragmas that come before file offset `before`.
    fn take_pragmas(&mut self, before: usize, out: &mut Vec<Stmt>) {
        while self.pragmas.front().is_some_and(|(o, _)| *o < before) {
            if let Some((o, text)) = self.pragmas.pop_front() {
                let id = NodeId(self.next_id);
                self.next_id += 1;
                out.push(Stmt {
                    meta: Meta {
                        id,
                        span: Span::new(o, o),
                        macro_text: None,
                    },
                    kind: StmtKind::Pragma(text),
                });
            }
        }
    }

    pub(super) fn block_items(
        &mut self,
        items: &[Node<c::BlockItem>],
        span: lang_c::span::Span,
    ) -> Result<Vec<Stmt>> {
        let mut out = Vec::new();
        for item in items {
            let start = self.file_span(item.span).start;
            self.take_pragmas(start, &mut out);
            match &item.node {
                c::BlockItem::Declaration(d) => {
                    let meta = self.meta(d.span);
                    let decls = self.declaration(d)?;
                    out.push(Stmt {
                        meta,
                        kind: StmtKind::Decl(decls),
                    });
                }
                c::BlockItem::Statement(s) => out.push(self.stmt(s)?),
                c::BlockItem::StaticAssert(s) => {
                    return self.unsupported(s.span, "static assertions")
                }
            }
        }
        let end = self.file_span(span).end;
        self.take_pragmas(end, &mut out);
        Ok(out)
    }

    fn boxed(&mut self, s: &Node<c::Statement>) -> Result<Box<Stmt>> {
        self.stmt(s).map(Box::new)
    }

    /// Converts a statement.
    pub fn stmt(&mut self, s: &Node<c::Statement>) -> Result<Stmt> {
        let meta = self.meta(s.span);
        let kind = match &s.node {
            c::Statement::Compound(items) => StmtKind::Block(self.block_items(items, s.span)?),
            c::Statement::Expression(None) => StmtKind::Empty,
            c::Statement::Expression(Some(e)) => StmtKind::Expr(self.expr(e)?),
            c::Statement::If(i) => StmtKind::If {
                cond: self.expr(&i.node.condition)?,
                then: self.boxed(&i.node.then_statement)?,
                els: match &i.node.else_statement {
                    Some(e) => Some(self.boxed(e)?),
                    None => None,
                },
            },
            c::Statement::While(w) => StmtKind::While {
                cond: self.expr(&w.node.expression)?,
                body: self.boxed(&w.node.statement)?,
            },
            c::Statement::DoWhile(w) => StmtKind::DoWhile {
                body: self.boxed(&w.node.statement)?,
                cond: self.expr(&w.node.expression)?,
            },
            c::Statement::For(f) => {
                let init = match &f.node.initializer.node {
                    c::ForInitializer::Empty => None,
                    c::ForInitializer::Expression(e) => {
                        let m = self.meta(f.node.initializer.span);
                        Some(Box::new(Stmt {
                            meta: m,
                            kind: StmtKind::Expr(self.expr(e)?),
                        }))
                    }
                    c::ForInitializer::Declaration(d) => {
                        let m = self.meta(d.span);
                        Some(Box::new(Stmt {
                            meta: m,
                            kind: StmtKind::Decl(self.declaration(d)?),
                        }))
                    }
                    c::ForInitializer::StaticAssert(a) => {
                        return self.unsupported(a.span, "static assertions")
                    }
                };
                StmtKind::For {
                    init,
                    cond: match &f.node.condition {
                        Some(e) => Some(self.expr(e)?),
                        None => None,
                    },
                    step: match &f.node.step {
                        Some(e) => Some(self.expr(e)?),
                        None => None,
                    },
                    body: self.boxed(&f.node.statement)?,
                }
            }
            c::Statement::Switch(sw) => StmtKind::Switch {
                cond: self.expr(&sw.node.expression)?,
                cases: self.switch_body(&sw.node.statement)?,
            },
            c::Statement::Break => StmtKind::Break,
            c::Statement::Continue => StmtKind::Continue,
            c::Statement::Return(e) => StmtKind::Return(match e {
                Some(e) => Some(self.expr(e)?),
                None => None,
            }),
            c::Statement::Goto(_) => return self.unsupported(s.span, "`goto` statements"),
            c::Statement::Asm(_) => return self.unsupported(s.span, "inline assembly statements"),
            c::Statement::Labeled(l) => match l.node.label.node {
                c::Label::Identifier(_) => return self.unsupported(s.span, "statement labels"),
                _ => {
                    return self.unsupported(
                        s.span,
                        "`case` labels outside the top level of a `switch` body",
                    )
                }
            },
        };
        Ok(Stmt { meta, kind })
    }

    /// The cases of a switch whose body is a block with labels at its top level.
    fn switch_body(&mut self, body: &Node<c::Statement>) -> Result<Vec<SwitchCase>> {
        let c::Statement::Compound(items) = &body.node else {
            return self.unsupported(body.span, "`switch` statements without a `{ … }` body");
        };
        let mut cases: Vec<SwitchCase> = Vec::new();
        for item in items {
            let mut stmt = match &item.node {
                c::BlockItem::Statement(s) => s,
                c::BlockItem::Declaration(d) => {
                    return self.unsupported(d.span, "declarations directly inside a `switch` body")
                }
                c::BlockItem::StaticAssert(a) => {
                    return self.unsupported(a.span, "static assertions")
                }
            };
            while let c::Statement::Labeled(l) = &stmt.node {
                let label = match &l.node.label.node {
                    c::Label::Case(e) => Some(self.expr(e)?),
                    c::Label::Default => None,
                    c::Label::CaseRange(_) => return self.unsupported(l.span, "case ranges"),
                    c::Label::Identifier(_) => return self.unsupported(l.span, "statement labels"),
                };
                match cases.last_mut() {
                    Some(last) if last.body.is_empty() => last.labels.push(label),
                    _ => {
                        let meta = self.meta(l.span);
                        cases.push(SwitchCase {
                            meta,
                            labels: vec![label],
                            body: Vec::new(),
                        });
                    }
                }
                stmt = &l.node.statement;
            }
            let converted = self.stmt(stmt)?;
            match cases.last_mut() {
                Some(last) => last.body.push(converted),
                None => {
                    return self.unsupported(
                        stmt.span,
                        "statements before the first `case` of a `switch`",
                    )
                }
            }
        }
        Ok(cases)
    }
}
