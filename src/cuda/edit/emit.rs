//! Emitting the edited function: a block's statements kept, replaced,
//! inserted or moved; a statement whose head or children changed edited
//! inside its original text.

use super::editor::Editor;
use super::text::{is_simple, missing, parens, reindent, shares_statements};
use crate::cuda::ast::{Meta, Stmt, StmtKind};
use crate::cuda::lex::tokenize;
use crate::cuda::print;
use crate::source::Span;

impl Editor<'_> {
    /// Emits the statements `cand` of a block whose original statements
    /// were `orig`, between `start` (after its `{`) and `end` (its `}`).
    pub(super) fn list(
        &self,
        out: &mut String,
        orig: &[Stmt],
        cand: &[Stmt],
        start: usize,
        end: usize,
        indent: &str,
    ) {
        if orig.iter().any(|s| s.meta.span.is_synthetic()) {
            // Not text we can locate: every statement is new here.
            for c in cand {
                out.push_str(self.style.newline);
                out.push_str(indent);
                self.new_statement(out, c, indent);
            }
            out.push_str(self.style.newline);
            out.push_str(&self.line_indent(end));
            return;
        }
        let indent = match orig.first() {
            Some(s) => self.line_indent(self.bounds(s).0),
            None => indent.to_string(),
        };
        let same_span =
            |c: &Stmt, o: &Stmt| !c.meta.span.is_synthetic() && c.meta.span == o.meta.span;
        let kept: Vec<bool> = orig
            .iter()
            .map(|o| cand.iter().any(|c| same_span(c, o)))
            .collect();
        // A new statement replaces the next removed original statement of
        // the same kind (with nothing kept between them, not moved
        // elsewhere; a compound one only when it holds some of the old
        // one's statements), and keeps its comments;
        // other new statements are inserted.
        let mut cursor = 0;
        // Where the first statement's comments and blank lines start: after
        // the rest of the `{` line once a new statement went before it.
        let mut first_lead = start;
        for c in cand {
            let place = match orig.iter().position(|o| same_span(c, o)) {
                Some(i) => Some(i),
                None if self.moved_from(c).is_some() => None,
                None => (cursor..orig.len()).take_while(|&j| !kept[j]).find(|&j| {
                    std::mem::discriminant(&orig[j].kind) == std::mem::discriminant(&c.kind)
                        && !self.used.contains(&orig[j].meta.span)
                        && (is_simple(c) || shares_statements(&orig[j], c))
                }),
            };
            match place {
                Some(i) => {
                    // Its own comments and blank lines come along.
                    let lead = if i == 0 {
                        first_lead
                    } else {
                        self.own_end(&orig[i - 1])
                    };
                    let (s, e) = self.bounds(&orig[i]);
                    out.push_str(&self.src[lead.min(s)..s]);
                    self.statement(out, &orig[i], c, &indent);
                    out.push_str(&self.src[e..self.own_end(&orig[i])]);
                    cursor = i + 1;
                }
                None => {
                    if cursor == 0 && first_lead == start {
                        // Keep what ends the `{` line on that line.
                        let rest = &self.src[start..end];
                        let line = &rest[..rest.find(['\r', '\n']).unwrap_or(0)];
                        out.push_str(line);
                        first_lead = start + line.len();
                    }
                    out.push_str(self.style.newline);
                    out.push_str(&indent);
                    self.new_statement(out, c, &indent);
                }
            }
        }
        let tail = orig
            .last()
            .map_or(start, |s| self.own_end(s))
            .clamp(start, end);
        let trailing = &self.src[tail..end];
        if trailing.trim().is_empty() && !trailing.contains('\n') && !cand.is_empty() {
            // The original block was empty or on one line: close it on a
            // line of its own.
            out.push_str(self.style.newline);
            out.push_str(&self.line_indent(end));
        } else {
            out.push_str(trailing);
        }
    }

    /// Emits `c`, a statement with no place in this block of the
    /// original, at `indent`: a statement moved from elsewhere keeps its
    /// text, the comments above it (re-indented) and the one after it on
    /// its last line; a new compound
    /// statement holding moved ones is laid out around them; anything
    /// else is printed.
    pub(super) fn new_statement(&self, out: &mut String, c: &Stmt, indent: &str) {
        if let Some(o) = self.moved_from(c) {
            let (start, end) = self.bounds(o);
            let twin = self.twin(o);
            let mut comments = self.comments_above(start);
            if let Some(t) = twin {
                comments.extend(missing(&self.comments_above(self.bounds(t).0), &comments));
            }
            for comment in comments {
                out.push_str(comment);
                out.push_str(self.style.newline);
                out.push_str(indent);
            }
            let from = self.line_indent(start);
            let mut text = String::new();
            match twin {
                Some(t) if o == c => text = self.with_twin_comments(o, t, start, end),
                _ => self.statement(&mut text, o, c, &from),
            }
            out.push_str(&reindent(&text, &from, indent));
            // A comment after it on its last line goes with it.
            let trailing = &self.src[end..self.own_end(o)];
            if !trailing.trim().is_empty() {
                out.push_str(trailing);
            }
            return;
        }
        if !self.holds_moved(c) {
            out.push_str(&self.printed(c, indent));
            return;
        }
        let inner = format!("{indent}{}", self.style.unit);
        let block = |out: &mut String, s: &Stmt| match &s.kind {
            StmtKind::Block(b) => {
                out.push('{');
                for x in b {
                    out.push_str(self.style.newline);
                    out.push_str(&inner);
                    self.new_statement(out, x, &inner);
                }
                out.push_str(self.style.newline);
                out.push_str(indent);
                out.push('}');
            }
            _ => {
                out.push_str(self.style.newline);
                out.push_str(&inner);
                self.new_statement(out, s, &inner);
            }
        };
        let head = print::head(c).unwrap_or_default();
        match &c.kind {
            StmtKind::Block(_) => block(out, c),
            StmtKind::If { then, els, .. }
                if els.is_none() || matches!(then.kind, StmtKind::Block(_)) =>
            {
                out.push_str(&format!("if {head} "));
                block(out, then);
                if let Some(e) = els {
                    out.push_str(" else ");
                    match e.kind {
                        StmtKind::If { .. } => self.new_statement(out, e, indent),
                        _ => block(out, e),
                    }
                }
            }
            StmtKind::For { body, .. } | StmtKind::While { body, .. } => {
                let word = if matches!(c.kind, StmtKind::For { .. }) {
                    "for"
                } else {
                    "while"
                };
                out.push_str(&format!("{word} {head} "));
                block(out, body);
            }
            _ => out.push_str(&self.printed(c, indent)),
        }
    }

    /// Emits `c`, which stands where `o` stood: `o`'s text when they are
    /// the same, else `o`'s text with its changed head and children edited.
    pub(super) fn statement(&self, out: &mut String, o: &Stmt, c: &Stmt, indent: &str) {
        let (start, end) = self.bounds(o);
        let span = Span::new(start, end);
        if o == c {
            out.push_str(&self.src[start..end]);
            return;
        }
        let same_head = print::head(o) == print::head(c);
        let mark = out.len();
        let mut at = span.start;
        match (&o.kind, &c.kind) {
            (StmtKind::Block(os), StmtKind::Block(cs)) => {
                out.push('{');
                let inner = format!("{indent}{}", self.style.unit);
                self.list(out, os, cs, span.start + 1, span.end - 1, &inner);
                out.push('}');
                return;
            }
            (
                StmtKind::If {
                    then: ot, els: oe, ..
                },
                StmtKind::If {
                    then: ct, els: ce, ..
                },
            ) => {
                if !same_head && !self.head(out, &mut at, end, c) {
                    return self.replaced(out, c, indent);
                }
                self.child(out, &mut at, ot, ct, indent);
                match (oe, ce) {
                    (Some(oe), Some(ce)) => self.child(out, &mut at, oe, ce, indent),
                    (None, Some(ce)) => {
                        out.push_str(" else ");
                        out.push_str(&self.printed(ce, indent));
                    }
                    (Some(_), None) => at = end,
                    (None, None) => {}
                }
            }
            (
                StmtKind::For {
                    init: oi,
                    cond: Some(oc),
                    step: os,
                    body: ob,
                },
                StmtKind::For {
                    init: ci,
                    cond: Some(cc),
                    step: cs,
                    body: cb,
                },
            ) if !same_head && oi == ci && os == cs && self.located(oc, start, end) => {
                // Only the condition changed: only its text is replaced
                // (`for (unsigned s = …` keeps its spelling).
                self.check_expr(cc);
                out.push_str(&self.src[at..oc.meta.span.start]);
                out.push_str(&print::expression(cc));
                at = oc.meta.span.end;
                self.child(out, &mut at, ob, cb, indent);
            }
            (StmtKind::For { body: ob, .. }, StmtKind::For { body: cb, .. })
            | (StmtKind::While { body: ob, .. }, StmtKind::While { body: cb, .. }) => {
                if !same_head && !self.head(out, &mut at, end, c) {
                    return self.replaced(out, c, indent);
                }
                self.child(out, &mut at, ob, cb, indent);
            }
            (StmtKind::DoWhile { body: ob, .. }, StmtKind::DoWhile { body: cb, .. }) => {
                self.child(out, &mut at, ob, cb, indent);
                if !same_head && !self.head(out, &mut at, end, c) {
                    out.truncate(mark);
                    return self.replaced(out, c, indent);
                }
            }
            (StmtKind::Switch { cases: ocs, .. }, StmtKind::Switch { cases: ccs, .. })
                if ocs.len() == ccs.len()
                    && ocs.iter().zip(ccs).all(|(a, b)| a.labels == b.labels)
                    && ocs.iter().all(|k| !k.body.is_empty()) =>
            {
                if !same_head && !self.head(out, &mut at, end, c) {
                    return self.replaced(out, c, indent);
                }
                let inner = ocs
                    .first()
                    .map(|k| self.line_indent(self.bounds(&k.body[0]).0))
                    .unwrap_or_default();
                for (k, (ok, ck)) in ocs.iter().zip(ccs).enumerate() {
                    let first = self.bounds(&ok.body[0]).0;
                    // The body starts after the last label's `:`.
                    let Some(colon) = tokenize(&self.src[at..first])
                        .iter()
                        .rev()
                        .find(|t| t.is(&self.src[at..first], ":"))
                        .map(|t| at + t.end)
                    else {
                        out.truncate(mark);
                        return self.replaced(out, c, indent);
                    };
                    let next = match ocs.get(k + 1) {
                        Some(n) => n.meta.span.start,
                        None => end - 1,
                    };
                    out.push_str(&self.src[at..colon]);
                    self.list(out, &ok.body, &ck.body, colon, next, &inner);
                    at = next;
                }
            }
            _ => return self.replaced(out, c, indent),
        }
        out.push_str(&self.src[at..span.end]);
    }

    /// Whether `e`'s text lies between `start` and `end`, outside any
    /// macro invocation, and parses as `e` alone (its span is its text).
    fn located(&self, e: &crate::cuda::ast::Expr, start: usize, end: usize) -> bool {
        let span = e.meta.span;
        !span.is_synthetic()
            && e.meta.macro_text.is_none()
            && start < span.start
            && span.end < end
            && self
                .src
                .get(span.start..span.end)
                .is_some_and(|t| t.trim() == t && !t.is_empty())
            && !self
                .invocations
                .iter()
                .any(|(m, _)| m.start < span.end && span.start < m.end)
    }

    /// Emits `c` printed in place of `o`'s text.
    fn replaced(&self, out: &mut String, c: &Stmt, indent: &str) {
        out.push_str(&self.printed(c, indent));
    }

    /// Emits the original text from `at` up to the parenthesized head
    /// after it, then `c`'s head in its place; `at` moves past it. False
    /// (and nothing emitted) when there is no head before `end`.
    fn head(&self, out: &mut String, at: &mut usize, end: usize, c: &Stmt) -> bool {
        let (Some((open, close)), Some(new)) = (parens(self.src, *at), print::head(c)) else {
            return false;
        };
        if close >= end {
            return false;
        }
        let mut shallow = c.clone();
        match &mut shallow.kind {
            StmtKind::If { then: b, els, .. } => {
                *els = None;
                **b = Stmt {
                    meta: Meta::synthetic(Default::default()),
                    kind: StmtKind::Empty,
                };
            }
            StmtKind::For { body: b, .. }
            | StmtKind::While { body: b, .. }
            | StmtKind::DoWhile { body: b, .. } => {
                **b = Stmt {
                    meta: Meta::synthetic(Default::default()),
                    kind: StmtKind::Empty,
                }
            }
            StmtKind::Switch { cases, .. } => cases.clear(),
            _ => {}
        }
        self.check_printed(&shallow);
        out.push_str(&self.src[*at..open]);
        out.push_str(&new);
        *at = close + 1;
        true
    }

    /// Emits the original text from `at` up to child `o`, then `c` in its
    /// place; `at` moves past `o`.
    fn child(&self, out: &mut String, at: &mut usize, o: &Stmt, c: &Stmt, indent: &str) {
        if o.meta.span.is_synthetic() {
            out.push_str(&self.printed(c, indent));
            return;
        }
        let (start, end) = self.bounds(o);
        let span = Span::new(start, end);
        if span.start < *at {
            // Not located: print the child (keeps the result parseable).
            out.push_str(&self.printed(c, indent));
            return;
        }
        out.push_str(&self.src[*at..span.start]);
        let both_blocks = matches!((&o.kind, &c.kind), (StmtKind::Block(_), StmtKind::Block(_)));
        if c.meta.span == o.meta.span || both_blocks {
            self.statement(out, o, c, indent);
        } else {
            self.new_statement(out, c, indent);
        }
        *at = span.end;
    }
}
