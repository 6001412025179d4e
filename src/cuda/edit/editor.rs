//! The editor: the original function's statements and macro expansions,
//! where each statement's text lies in the file, the refusal of code a
//! macro produces, and new code printed in the file's style.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};

use super::text::Style;
use super::Refusal;
use crate::cuda::ast::{Expr, Stmt};
use crate::cuda::print;
use crate::cuda::visit::{children, visit_stmt_roots, visit_stmts};
use crate::source::Span;

/// The state of one function's edit.
pub(super) struct Editor<'a> {
    pub(super) src: &'a str,
    pub(super) style: Style,
    /// The macro invocations in the original function's text.
    pub(super) invocations: Vec<(Span, String)>,
    /// The original's expressions that are one macro expansion each
    /// (printed as the invocation), by span.
    pub(super) expansions: HashMap<Span, &'a Expr>,
    /// Every statement of the original function, by span.
    pub(super) originals: HashMap<Span, &'a Stmt>,
    /// The spans of the candidate's statements: an original statement
    /// whose span is used somewhere else moved there.
    pub(super) used: HashSet<Span>,
    /// Why the edit cannot be made, once known.
    pub(super) refusal: RefCell<Option<Refusal>>,
    /// Removed statements whose comments went with a moved copy of them.
    pub(super) twins_taken: RefCell<HashSet<Span>>,
}

impl Editor<'_> {
    /// The whitespace that starts the line holding `offset`.
    pub(super) fn line_indent(&self, offset: usize) -> String {
        let line_start = self.src[..offset].rfind('\n').map_or(0, |i| i + 1);
        self.src[line_start..]
            .chars()
            .take_while(|c| *c == ' ' || *c == '\t')
            .collect()
    }

    /// Refuses the edit (once) for the reason `why`.
    fn refuse(&self, at: usize, name: &str) {
        self.refusal.borrow_mut().get_or_insert(Refusal {
            at,
            name: name.to_string(),
        });
    }

    /// The macro invocation the code at `span` comes from, if it lies
    /// inside one (or is one).
    fn invocation_at(&self, span: Span) -> Option<&(Span, String)> {
        if span.is_synthetic() {
            return None;
        }
        self.invocations
            .iter()
            .find(|(m, _)| m.start <= span.start && span.end <= m.end)
    }

    /// Refuses the edit when printing `e` would print code a macro
    /// produces: an expression from inside an expansion, or an expansion
    /// printed as its invocation that the rewrite changed.
    pub(super) fn check_expr(&self, e: &Expr) {
        if e.meta.macro_text.is_some() && !e.meta.span.is_synthetic() {
            let whole = self
                .invocation_at(e.meta.span)
                .is_none_or(|(m, _)| *m == e.meta.span);
            if whole && self.expansions.get(&e.meta.span) == Some(&e) {
                return;
            }
        }
        if let Some((m, name)) = self.invocation_at(e.meta.span) {
            return self.refuse(m.start, name);
        }
        for c in children(e) {
            self.check_expr(c);
        }
    }

    /// [`Self::check_expr`] for every statement and expression of `s`,
    /// which is about to be printed.
    pub(super) fn check_printed(&self, s: &Stmt) {
        visit_stmts(s, &mut |x| {
            if let Some((m, name)) = self.invocation_at(x.meta.span) {
                self.refuse(m.start, name);
            }
        });
        visit_stmt_roots(s, &mut |e| self.check_expr(e));
    }

    /// Where the text of `s` starts and ends: its span, widened to the
    /// CUDA qualifiers written before it (`__shared__`, kept out of the
    /// span by the parser) and narrowed to leave out trailing whitespace.
    pub(super) fn bounds(&self, s: &Stmt) -> (usize, usize) {
        const QUALIFIERS: [&str; 6] = [
            "__shared__",
            "__constant__",
            "__device__",
            "__managed__",
            "static",
            "extern",
        ];
        let (mut start, end) = (s.meta.span.start, s.meta.span.end);
        loop {
            let before = self.src[..start].trim_end_matches([' ', '\t']);
            match QUALIFIERS.iter().find(|q| {
                before.ends_with(*q)
                    && !before[..before.len() - q.len()]
                        .ends_with(|c: char| c.is_alphanumeric() || c == '_')
            }) {
                Some(q) => start = before.len() - q.len(),
                None => break,
            }
        }
        let end = start + self.src[start..end].trim_end().len();
        (start, end)
    }

    /// Where the text that belongs to statement `s` ends: after it, the rest
    /// of its line when that holds only a comment (`x = 1; // why`).
    pub(super) fn own_end(&self, s: &Stmt) -> usize {
        let end = self.bounds(s).1;
        let rest = &self.src[end..];
        let line = &rest[..rest.find(['\r', '\n']).unwrap_or(rest.len())];
        let t = line.trim();
        if t.is_empty() || t.starts_with("//") || (t.starts_with("/*") && t.ends_with("*/")) {
            end + line.len()
        } else {
            end
        }
    }

    /// The original statement that `c` is, moved from another place.
    pub(super) fn moved_from(&self, c: &Stmt) -> Option<&Stmt> {
        if c.meta.span.is_synthetic() {
            return None;
        }
        self.originals.get(&c.meta.span).copied()
    }

    /// Whether `c` holds a statement moved from elsewhere in the original.
    pub(super) fn holds_moved(&self, c: &Stmt) -> bool {
        let mut found = false;
        visit_stmts(c, &mut |s| found |= self.moved_from(s).is_some());
        found
    }

    /// `s` printed by copper's printer, its first line unindented and the
    /// others indented from `indent` in the file's unit.
    pub(super) fn printed(&self, s: &Stmt, indent: &str) -> String {
        self.check_printed(s);
        let text = print::statement(s);
        let mut out = String::new();
        for (i, line) in text.lines().enumerate() {
            if i > 0 {
                out.push_str(self.style.newline);
                if !line.is_empty() {
                    let spaces = line.len() - line.trim_start_matches(' ').len();
                    out.push_str(indent);
                    out.push_str(&self.style.unit.repeat(spaces / 4));
                    out.push_str(&" ".repeat(spaces % 4));
                }
            }
            out.push_str(line.trim_start_matches(' '));
        }
        out
    }
}
