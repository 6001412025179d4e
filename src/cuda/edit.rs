//! A rewritten function as an edit of the text it came from: every
//! statement the rewrite kept is copied from the file byte for byte (with
//! the comments and blank lines before it, its indentation, tabs and line
//! endings), compound statements whose head is unchanged keep their head
//! and are edited inside, and only new or changed statements are printed,
//! in the file's own indentation and line endings. A reviewer's diff then
//! shows what the rewrite changed and nothing else.
//!
//! The caller re-parses the result and compares it with the rewritten AST
//! (see `copper_transforms::check::materialize`); [`super::print`] stays the
//! fallback and the style of `copper fmt`.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};

use super::ast::{Expr, Function, Meta, Stmt, StmtKind};
use super::extract::MacroDef;
use super::lex::tokenize;
use super::print;
use super::visit::{children, visit_stmt_exprs, visit_stmt_roots, visit_stmts};
use crate::source::Span;

/// How the file lays out its code.
struct Style {
    /// One level of indentation (`"\t"`, `"    "`, `"  "`).
    unit: String,
    /// `"\r\n"` or `"\n"`.
    newline: &'static str,
}

impl Style {
    fn of(src: &str) -> Style {
        let newline = if src.contains("\r\n") { "\r\n" } else { "\n" };
        let mut tabs = 0;
        let mut smallest_spaces = usize::MAX;
        for line in src.lines() {
            let indent: String = line
                .chars()
                .take_while(|c| *c == ' ' || *c == '\t')
                .collect();
            if indent.starts_with('\t') {
                tabs += 1;
            } else if !indent.is_empty() && indent.len() < line.len() {
                smallest_spaces = smallest_spaces.min(indent.len());
            }
        }
        let unit = if tabs > 0 && smallest_spaces == usize::MAX {
            "\t".to_string()
        } else if (2..=8).contains(&smallest_spaces) {
            " ".repeat(smallest_spaces)
        } else {
            "    ".to_string()
        };
        Style { unit, newline }
    }
}

/// The text of `candidate`, a rewrite of `original` (a function of `src`),
/// edited from `original`'s text. Falls back to printing the whole
/// function when its signature changed or its body cannot be located.
/// `macros` are the file's macro definitions: an edit that would print
/// code a macro produces (its expansion over its use, or a changed
/// expansion as the unchanged invocation) is refused with the reason.
pub fn function_text(
    src: &str,
    original: &Function,
    candidate: &Function,
    macros: &[MacroDef],
) -> Result<String, Refusal> {
    let span = original.meta.span;
    let same_head = original.kind == candidate.kind
        && original.qualifiers == candidate.qualifiers
        && original.ret == candidate.ret
        && original.name == candidate.name
        && original.params == candidate.params;
    let style = Style::of(src);
    let Some(open) = body_open(src, span).filter(|_| same_head && !span.is_synthetic()) else {
        return Ok(reprinted(candidate, &style));
    };
    let close = span.end - 1;
    if src.as_bytes().get(close) != Some(&b'}') {
        return Ok(reprinted(candidate, &style));
    }
    let mut originals = HashMap::new();
    for s in &original.body {
        visit_stmts(s, &mut |s| {
            if !s.meta.span.is_synthetic() {
                originals.entry(s.meta.span).or_insert(s);
            }
        });
    }
    let mut used = HashSet::new();
    for s in &candidate.body {
        visit_stmts(s, &mut |s| {
            used.insert(s.meta.span);
        });
    }
    let mut expansions = HashMap::new();
    for s in &original.body {
        visit_stmt_exprs(s, &mut |e| {
            if e.meta.macro_text.is_some() {
                expansions.entry(e.meta.span).or_insert(e);
            }
        });
    }
    let e = Editor {
        src,
        style,
        invocations: invocations(src, span, macros),
        expansions,
        originals,
        used,
        refusal: RefCell::new(None),
        twins_taken: RefCell::new(HashSet::new()),
    };
    let mut out = src[span.start..=open].to_string();
    let indent = e.line_indent(span.start) + &e.style.unit;
    e.list(
        &mut out,
        &original.body,
        &candidate.body,
        open + 1,
        close,
        &indent,
    );
    out.push_str(&src[close..span.end]);
    match e.refusal.into_inner() {
        Some(why) => Err(why),
        None => Ok(out),
    }
}

/// The whole function printed in copper's style, in the file's line
/// endings.
fn reprinted(f: &Function, style: &Style) -> String {
    print::function(f).replace('\n', style.newline)
}

/// The lines of `theirs` that `ours` lacks (counted with multiplicity),
/// in order.
fn missing<'s>(theirs: &[&'s str], ours: &[&str]) -> Vec<&'s str> {
    let mut rest = ours.to_vec();
    theirs
        .iter()
        .filter(|l| match rest.iter().position(|r| r == *l) {
            Some(i) => {
                rest.remove(i);
                false
            }
            None => true,
        })
        .copied()
        .collect()
}

/// The offset of the `{` opening the body of the function at `span`: the
/// first `{` outside parentheses (comments and strings skipped).
fn body_open(src: &str, span: Span) -> Option<usize> {
    let text = src.get(span.start..span.end)?;
    let mut depth = 0i32;
    for t in tokenize(text) {
        match t.text(text) {
            "(" => depth += 1,
            ")" => depth -= 1,
            "{" if depth == 0 => return Some(span.start + t.start),
            _ => {}
        }
    }
    None
}

/// The first parenthesized group of `text` from `from` on: the offsets of
/// its `(` and of the `)` that closes it.
fn parens(text: &str, from: usize) -> Option<(usize, usize)> {
    let rest = text.get(from..)?;
    let mut depth = 0usize;
    let mut open = None;
    for t in tokenize(rest) {
        match t.text(rest) {
            "(" => {
                open.get_or_insert(from + t.start);
                depth += 1;
            }
            ")" if depth > 0 => {
                depth -= 1;
                if depth == 0 {
                    return Some((open?, from + t.start));
                }
            }
            _ => {}
        }
    }
    None
}

/// Whether `s` holds no other statement.
fn is_simple(s: &Stmt) -> bool {
    !matches!(
        s.kind,
        StmtKind::Block(_)
            | StmtKind::If { .. }
            | StmtKind::For { .. }
            | StmtKind::While { .. }
            | StmtKind::DoWhile { .. }
            | StmtKind::Switch { .. }
    )
}

/// Whether `c` holds a statement from inside `o`'s text.
fn shares_statements(o: &Stmt, c: &Stmt) -> bool {
    let within = o.meta.span;
    let mut found = false;
    visit_stmts(c, &mut |x| {
        let s = x.meta.span;
        found |= !s.is_synthetic() && s != within && within.start <= s.start && s.end <= within.end;
    });
    found
}

/// The macro invocations in the text at `span`: an object-like macro's
/// name, a function-like macro's name with its arguments.
fn invocations(src: &str, span: Span, macros: &[MacroDef]) -> Vec<(Span, String)> {
    let text = &src[span.start..span.end];
    let tokens = tokenize(text);
    let mut out = Vec::new();
    for (i, t) in tokens.iter().enumerate() {
        let Some(m) = macros.iter().find(|m| t.is(text, &m.name)) else {
            continue;
        };
        let end = if m.params.is_some() {
            match tokens.get(i + 1) {
                Some(next) if next.is(text, "(") => match parens(text, next.start) {
                    Some((_, close)) => close + 1,
                    None => continue,
                },
                // A function-like macro's name alone is not an invocation.
                _ => continue,
            }
        } else {
            t.end
        };
        out.push((
            Span::new(span.start + t.start, span.start + end),
            m.name.clone(),
        ));
    }
    out
}

/// `text` with each line after the first that starts with `from` starting
/// with `to` instead: a statement moved to another depth.
fn reindent(text: &str, from: &str, to: &str) -> String {
    if from == to {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    for (i, line) in text.split_inclusive('\n').enumerate() {
        match line.strip_prefix(from) {
            Some(rest) if i > 0 => {
                out.push_str(to);
                out.push_str(rest);
            }
            _ => out.push_str(line),
        }
    }
    out
}

struct Editor<'a> {
    src: &'a str,
    style: Style,
    /// The macro invocations in the original function's text.
    invocations: Vec<(Span, String)>,
    /// The original's expressions that are one macro expansion each
    /// (printed as the invocation), by span.
    expansions: HashMap<Span, &'a Expr>,
    /// Every statement of the original function, by span.
    originals: HashMap<Span, &'a Stmt>,
    /// The spans of the candidate's statements: an original statement
    /// whose span is used somewhere else moved there.
    used: HashSet<Span>,
    /// Why the edit cannot be made, once known.
    refusal: RefCell<Option<Refusal>>,
    /// Removed statements whose comments went with a moved copy of them.
    twins_taken: RefCell<HashSet<Span>>,
}

impl Editor<'_> {
    /// The whitespace that starts the line holding `offset`.
    fn line_indent(&self, offset: usize) -> String {
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
    fn check_expr(&self, e: &Expr) {
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
    fn check_printed(&self, s: &Stmt) {
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
    fn bounds(&self, s: &Stmt) -> (usize, usize) {
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
    fn own_end(&self, s: &Stmt) -> usize {
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

    /// The comment lines directly above the line at `offset` (no blank
    /// line between), trimmed, in order: the comments that go with a
    /// statement that moves.
    fn comments_above(&self, offset: usize) -> Vec<&str> {
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

    /// The original statement that `c` is, moved from another place.
    fn moved_from(&self, c: &Stmt) -> Option<&Stmt> {
        if c.meta.span.is_synthetic() {
            return None;
        }
        self.originals.get(&c.meta.span).copied()
    }

    /// Whether `c` holds a statement moved from elsewhere in the original.
    fn holds_moved(&self, c: &Stmt) -> bool {
        let mut found = false;
        visit_stmts(c, &mut |s| found |= self.moved_from(s).is_some());
        found
    }

    /// Emits the statements `cand` of a block whose original statements
    /// were `orig`, between `start` (after its `{`) and `end` (its `}`).
    fn list(
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
    /// text and the comments above it (re-indented); a new compound
    /// statement holding moved ones is laid out around them; anything
    /// else is printed.
    fn new_statement(&self, out: &mut String, c: &Stmt, indent: &str) {
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

    /// A removed statement the same as `o`, moved, whose comments go with
    /// it: the copy that merging code common to two branches drops (the
    /// first such copy in the file, each taken once).
    fn twin(&self, o: &Stmt) -> Option<&Stmt> {
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
    fn with_twin_comments(&self, o: &Stmt, t: &Stmt, start: usize, end: usize) -> String {
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

    /// Emits `c`, which stands where `o` stood: `o`'s text when they are
    /// the same, else `o`'s text with its changed head and children edited.
    fn statement(&self, out: &mut String, o: &Stmt, c: &Stmt, indent: &str) {
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

    /// `s` printed by copper's printer, its first line unindented and the
    /// others indented from `indent` in the file's unit.
    fn printed(&self, s: &Stmt, indent: &str) -> String {
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

/// Why a rewrite cannot be made an edit: it changes code that a macro
/// produces.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// Offset of the macro's invocation in the file.
    pub at: usize,
    /// The macro's name.
    pub name: String,
}

impl Refusal {
    /// The reason, with the invocation at `line`.
    pub fn message(&self, line: usize) -> String {
        format!(
            "the rewrite changes code that macro `{}` produces (line {line}): copper does not edit a macro's expansion at its use, so this candidate is refused",
            self.name
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cuda::parse::parse_source;
    use crate::source::SourceFile;

    fn function(src: &str) -> Function {
        let p = parse_source(SourceFile::new("k.cu", src));
        p.functions[0].result.clone().expect("parses")
    }

    /// The edited text of `c`, which must be allowed.
    fn edit(src: &str, f: &Function, c: &Function) -> String {
        function_text(src, f, c, &[]).expect("an edit")
    }

    /// The text of `c` as an edit of the one-function file `src`, and
    /// that it parses back to `c`.
    fn edited(src: &str, c: &Function) -> Result<String, Refusal> {
        let p = parse_source(SourceFile::new("k.cu", src));
        let f = p.functions[0].result.clone().expect("parses");
        let t = function_text(src, &f, c, &p.extracted.macros)?;
        let again = parse_source(SourceFile::new("k.cu", &t));
        assert_eq!(again.functions[0].result.as_ref().ok(), Some(c), "{t}");
        Ok(t)
    }

    /// The first expression statement's expression of `s`, mutably.
    fn cond_of(s: &mut Stmt) -> &mut crate::cuda::ast::Expr {
        match &mut s.kind {
            StmtKind::If { cond, .. }
            | StmtKind::While { cond, .. }
            | StmtKind::DoWhile { cond, .. }
            | StmtKind::Switch { cond, .. } => cond,
            StmtKind::For { cond, .. } => cond.as_mut().expect("a condition"),
            _ => panic!("no condition"),
        }
    }

    #[test]
    fn a_changed_head_is_the_only_text_replaced() {
        let src = "__global__ void k(int *a, int n)\n{\n\tfor (int i = 0; i < n; i++)   {\n\t\t// keep\n\t\ta[i]  = 1;\n\t}\n\twhile (n > 4)\n\t\tn--;  /* odd */\n\tif (n) { a[0] = 2; }\n\telse { a[1] = 3; }\n}\n";
        let f = function(src);
        let other = function("__global__ void k(int *a, int n) { if (n < 8) { } }");
        let StmtKind::If { cond: new_cond, .. } = &other.body[0].kind else {
            panic!()
        };
        for i in 0..3 {
            let mut c = f.clone();
            *cond_of(&mut c.body[i]) = new_cond.clone();
            let t = edited(src, &c).unwrap();
            let changed: Vec<(&str, &str)> =
                src.lines().zip(t.lines()).filter(|(a, b)| a != b).collect();
            assert_eq!(changed.len(), 1, "{t}");
            assert!(changed[0].1.contains("n < 8"), "{t}");
            assert_eq!(src.lines().count(), t.lines().count());
        }
    }

    #[test]
    fn do_while_and_switch_bodies_are_edited_inside() {
        let src = "__global__ void k(int *a, int n) {\n  do {\n    // one\n    a[n] = 1;\n    a[n+1] = 2;\n  } while (--n > 0);\n  switch (n) {\n  case 0:  a[0] = 4;   // four\n    a[9] = 9;\n    break;\n  default:\n    a[1] = 5;\n  }\n}\n";
        let f = function(src);
        let mut c = f.clone();
        if let StmtKind::DoWhile { body, .. } = &mut c.body[0].kind {
            if let StmtKind::Block(b) = &mut body.kind {
                b.remove(1);
            }
        }
        if let StmtKind::Switch { cases, .. } = &mut c.body[1].kind {
            cases[0].body.remove(1);
        }
        let t = edited(src, &c).unwrap();
        let expected = src
            .replace("    a[n+1] = 2;\n", "")
            .replace("    a[9] = 9;\n", "");
        assert_eq!(t, expected.trim_end());
    }

    #[test]
    fn a_moved_statement_keeps_its_text_and_comment() {
        let src = "__global__ void k(int *a, int n) {\n\tif (n > 0) {\n\t\t// why\n\t\ta[(n)] = n*2;\n\t}\n}\n";
        let f = function(src);
        let mut c = f.clone();
        let StmtKind::If { then, .. } = &mut c.body[0].kind else {
            panic!()
        };
        let StmtKind::Block(b) = &mut then.kind else {
            panic!()
        };
        let moved = b.remove(0);
        c.body.push(moved);
        let t = edited(src, &c).unwrap();
        assert!(t.ends_with("\t}\n\t// why\n\ta[(n)] = n*2;\n}"), "{t:?}");
    }

    #[test]
    fn comments_of_a_merged_copy_go_with_the_copy_kept() {
        let src = "__global__ void k(int *a, int n) {\n    if (n > 0) {\n        for (int i = 0; i < n; i++) {\n            a[i] += 1;\n        }\n        a[0] = 1;\n    } else {\n        // walk\n        for (int i = 0; i < n; i++) {\n            // add one\n            a[i] += 1;\n            // done\n        }\n        a[0] = 2;\n    }\n}\n";
        let f = function(src);
        let mut c = f.clone();
        let StmtKind::If { then, els, .. } = &mut c.body[0].kind else {
            panic!()
        };
        let StmtKind::Block(t) = &mut then.kind else {
            panic!()
        };
        let moved = t.remove(0);
        let Some(StmtKind::Block(e)) = els.as_mut().map(|e| &mut e.kind) else {
            panic!()
        };
        e.remove(0);
        c.body.insert(0, moved);
        let t = edited(src, &c).unwrap();
        let expected = "    // walk\n    for (int i = 0; i < n; i++) {\n        // add one\n        a[i] += 1;\n        // done\n    }\n    if (n > 0) {";
        assert!(t.contains(expected), "{t}");
        assert_eq!(t.matches("// walk").count(), 1, "{t}");
    }

    #[test]
    fn a_new_compound_statement_does_not_take_an_unrelated_ones_place() {
        let src = "__global__ void k(int *a, int n) {\n    if (n > 0) {\n        a[0] = 1;\n        // after\n    }\n}\n";
        let f = function(src);
        let other = function("__global__ void k(int *a, int n) { if (n == 3) { a[2] = 2; } }");
        /// `s` with every statement made up (no place in the file).
        fn synthetic(s: &mut Stmt) {
            s.meta.span = Span::SYNTHETIC;
            match &mut s.kind {
                StmtKind::Block(b) => b.iter_mut().for_each(synthetic),
                StmtKind::If { then, .. } => synthetic(then),
                _ => {}
            }
        }
        let mut c = f.clone();
        c.body[0] = other.body[0].clone();
        synthetic(&mut c.body[0]);
        let t = edited(src, &c).unwrap();
        assert!(!t.contains("// after"), "{t}");
        // One that holds the old statement's code is edited in its place.
        let mut d = f.clone();
        *cond_of(&mut d.body[0]) = cond_of(&mut c.body[0]).clone();
        d.body[0].meta.span = Span::SYNTHETIC;
        let t = edited(src, &d).unwrap();
        assert_eq!(t, src.replace("(n > 0)", "(n == 3)").trim_end());
    }

    #[test]
    fn code_a_macro_produces_is_not_edited() {
        let src = "#define STORE(i) a[i] = 2 * (i);\n#define IDX(r) ((r) * 4)\n__global__ void k(int *a, int n) {\n    STORE(n)\n    a[IDX(n)] = 1;\n}\n";
        let p = parse_source(SourceFile::new("k.cu", src));
        let f = p.functions[0].result.clone().expect("parses");
        let macros = &p.extracted.macros;
        // A statement the macro produced, changed: refused.
        let mut c = f.clone();
        c.body[0] = c.body[1].clone();
        c.body[0].meta.span = f.body[0].meta.span;
        let why = function_text(src, &f, &c, macros).unwrap_err();
        assert_eq!(why.name, "STORE");
        assert_eq!(why.at, src.find("STORE(n)").unwrap());
        // Inside an expansion printed as its invocation: refused.
        let mut d = f.clone();
        if let StmtKind::Expr(e) = &mut d.body[1].kind {
            if let crate::cuda::ast::ExprKind::Assign(_, lhs, _) = &mut e.kind {
                if let crate::cuda::ast::ExprKind::Index(_, idx) = &mut lhs.kind {
                    assert_eq!(idx.meta.macro_text.as_deref(), Some("IDX(n)"));
                    if let crate::cuda::ast::ExprKind::Binary(_, l, _) = &mut idx.kind {
                        l.kind = crate::cuda::ast::ExprKind::Int {
                            value: 7,
                            text: "7".into(),
                        };
                    }
                }
            }
        }
        let why = function_text(src, &f, &d, macros).unwrap_err();
        assert_eq!(why.name, "IDX");
        // Dropping the macro's statement is no edit of its expansion.
        let mut e = f.clone();
        e.body.remove(0);
        assert!(function_text(src, &f, &e, macros).is_ok());
    }

    #[test]
    fn an_unchanged_function_is_its_own_text() {
        let src = "__global__ void k(int *a,\n\tint n) {\n\t// first\n\tint i = threadIdx.x;   // odd spacing\n\n\ta[i] = n;\n}\n";
        let f = function(src);
        assert_eq!(edit(src, &f, &f), src.trim_end());
    }

    #[test]
    fn only_the_changed_statement_is_printed_in_the_file_style() {
        let src = "__global__ void k(int *a, int n)\r\n{\r\n\t/* keep me */\r\n\tint i = threadIdx.x;\r\n\tif (i < n) {\r\n\t\ta[i] = a[i]+1; // and me\r\n\t\ta[i]   *=  2;\r\n\t}\r\n}\r\n";
        let f = function(src);
        let mut c = f.clone();
        // Drop the last statement of the `if`.
        if let StmtKind::If { then, .. } = &mut c.body[1].kind {
            if let StmtKind::Block(b) = &mut then.kind {
                b.pop();
            }
        }
        let text = edit(src, &f, &c);
        assert_eq!(
            text,
            "__global__ void k(int *a, int n)\r\n{\r\n\t/* keep me */\r\n\tint i = threadIdx.x;\r\n\tif (i < n) {\r\n\t\ta[i] = a[i]+1; // and me\r\n\t}\r\n}"
        );
        // A new statement is printed, indented with tabs, CRLF endings.
        let mut d = f.clone();
        let extra = d.body[0].clone();
        let mut moved = extra;
        moved.meta.span = Span::SYNTHETIC;
        if let StmtKind::If { then, .. } = &mut d.body[1].kind {
            if let StmtKind::Block(b) = &mut then.kind {
                b.insert(0, moved);
            }
        }
        let text = edit(src, &f, &d);
        assert!(
            text.contains(
                "if (i < n) {\r\n\t\tint i = threadIdx.x;\r\n\t\ta[i] = a[i]+1; // and me"
            ),
            "{text:?}"
        );
    }

    #[test]
    fn a_replaced_statement_keeps_the_comments_of_the_one_it_replaces() {
        let src =
            "__global__ void k(int *a) {\n    // before\n    a[0] = 1; // why\n    a[1] = 2;\n}\n";
        let f = function(src);
        let mut c = f.clone();
        let mut new = f.body[1].clone();
        new.meta.span = Span::SYNTHETIC;
        c.body[0] = new;
        assert_eq!(
            edit(src, &f, &c),
            "__global__ void k(int *a) {\n    // before\n    a[1] = 2; // why\n    a[1] = 2;\n}"
        );
    }

    #[test]
    fn a_changed_signature_reprints_the_function() {
        let src = "__global__ void k(int *a) { a[0] = 1; }\n";
        let f = function(src);
        let mut c = f.clone();
        c.name = "k2".into();
        assert!(edit(src, &f, &c).starts_with("__global__ void k2(int *a) {"));
    }
}
