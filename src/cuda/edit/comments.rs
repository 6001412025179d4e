//! The comments that travel with a statement: those above a moved one,
//! and those of a removed copy of it (its twin) that it lacks.

use super::editor::Editor;
use super::text::missing;
use crate::cuda::ast::{Stmt, StmtKind};
use crate::cuda::visit::visit_stmts;

impl Editor<'_> {
    /// The comment lines directly above the line at `offset` (no blank
    /// line between), trimmed, in order: the comments that go with a
    /// statement that moves.
    pub(super) fn comments_above(&self, offset: usize) -> Vec<&str> {
        let line_start = self.src[..offset].rfind('\n').map_or(0, |i| i + 1);
        let mut lines: Vec<&str> = Vec::new();
        for line in self.src[..line_start].lines().rev() {
            let t = line.trim();
            if t.starts_with("//") || (t.starts_with("/*") && t.ends_with("*/")) {
                lines.push(t);
            } else {
                break;
            }
        }
        lines.reverse();
        lines
    }

    /// A removed statement the same as `o`, moved, whose comments go with
    /// it: the copy that merging code common to two branches drops (the
    /// first such copy in the file, each taken once).
    pub(super) fn twin(&self, o: &Stmt) -> Option<&Stmt> {
        let mut taken = self.twins_taken.borrow_mut();
        let t = self
            .originals
            .iter()
            .filter(|(span, t)| {
                !self.used.contains(span)
                    && !taken.contains(span)
                    && **t == o
                    && *span != &o.meta.span
            })
            .min_by_key(|(span, _)| span.start)
            .map(|(_, t)| *t)?;
        taken.insert(t.meta.span);
        Some(t)
    }

    /// The comment lines between `from` and `to`, trimmed.
    fn comments_in(&self, from: usize, to: usize) -> Vec<&str> {
        self.src
            .get(from..to)
            .unwrap_or("")
            .lines()
            .map(str::trim)
            .filter(|t| t.starts_with("//") || (t.starts_with("/*") && t.ends_with("*/")))
            .collect()
    }

    /// The comment lines of block `b` (statements `stmts`) before its
    /// statement `k`, or before its `}` when `k` is past the last one.
    fn gap_comments(&self, b: &Stmt, stmts: &[Stmt], k: usize) -> Vec<&str> {
        let from = match k {
            0 => b.meta.span.start + 1,
            _ => self.own_end(&stmts[k - 1]),
        };
        let to = stmts
            .get(k)
            .map_or(b.meta.span.end - 1, |s| self.bounds(s).0);
        self.comments_in(from, to)
    }

    /// The text of `o` (from `start` to `end`, unchanged), with the
    /// comments inside its twin `t` that `o` lacks, each put before the
    /// statement (or the `}`) it precedes in `t`, on a line of its own.
    pub(super) fn with_twin_comments(
        &self,
        o: &Stmt,
        t: &Stmt,
        start: usize,
        end: usize,
    ) -> String {
        let (mut os, mut ts) = (Vec::new(), Vec::new());
        visit_stmts(o, &mut |s| os.push(s));
        visit_stmts(t, &mut |s| ts.push(s));
        // (offset in the file, indentation, comment lines to put there)
        let mut inserts: Vec<(usize, String, Vec<&str>)> = Vec::new();
        for (ob, tb) in os.iter().zip(&ts) {
            let (StmtKind::Block(ol), StmtKind::Block(tl)) = (&ob.kind, &tb.kind) else {
                continue;
            };
            if ob.meta.span.is_synthetic() || tb.meta.span.is_synthetic() {
                continue;
            }
            for k in 0..=ol.len() {
                let extra = missing(&self.gap_comments(tb, tl, k), &self.gap_comments(ob, ol, k));
                if extra.is_empty() {
                    continue;
                }
                let (at, indent) = match ol.get(k) {
                    Some(s) => (self.bounds(s).0, self.line_indent(self.bounds(s).0)),
                    None => {
                        let close = ob.meta.span.end - 1;
                        let indent = match ol.last() {
                            Some(s) => self.line_indent(self.bounds(s).0),
                            None => self.line_indent(close) + &self.style.unit,
                        };
                        (close, indent)
                    }
                };
                let line_start = self.src[..at].rfind('\n').map_or(0, |i| i + 1);
                // Only where the statement or `}` starts its line.
                if line_start > start && self.src[line_start..at].trim().is_empty() {
                    inserts.push((line_start, indent, extra));
                }
            }
        }
        inserts.sort_by_key(|(at, ..)| *at);
        let mut text = String::new();
        let mut pos = start;
        for (at, indent, lines) in inserts {
            text.push_str(&self.src[pos..at]);
            for l in lines {
                text.push_str(&indent);
                text.push_str(l);
                text.push_str(self.style.newline);
            }
            pos = at;
        }
        text.push_str(&self.src[pos..end]);
        text
    }
}
