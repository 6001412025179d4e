//! Reading the original text: the file's indentation and line endings,
//! where a function's body and a parenthesized head are, the macro
//! invocations in a function, and small text helpers of the edit.

use crate::cuda::ast::{Stmt, StmtKind};
use crate::cuda::extract::MacroDef;
use crate::cuda::lex::tokenize;
use crate::cuda::visit::visit_stmts;
use crate::source::Span;

/// How the file lays out its code.
pub(super) struct Style {
    /// One level of indentation (`"\t"`, `"    "`, `"  "`).
    pub(super) unit: String,
    /// `"\r\n"` or `"\n"`.
    pub(super) newline: &'static str,
}

impl Style {
    pub(super) fn of(src: &str) -> Style {
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

/// The lines of `theirs` that `ours` lacks (counted with multiplicity),
/// in order.
pub(super) fn missing<'s>(theirs: &[&'s str], ours: &[&str]) -> Vec<&'s str> {
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
pub(super) fn body_open(src: &str, span: Span) -> Option<usize> {
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
pub(super) fn parens(text: &str, from: usize) -> Option<(usize, usize)> {
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

/// The text of each parameter in the head `src[start..open]` of a
/// function (`open` is its body's `{`), as offsets without the spaces
/// around it: the last parenthesized group before the body, split at its
/// top-level commas. `None` when that group is not directly before the
/// body.
pub(super) fn param_spans(src: &str, start: usize, open: usize) -> Option<Vec<(usize, usize)>> {
    let head = src.get(start..open)?;
    let tokens = tokenize(head);
    let (last, rest) = tokens.split_last()?;
    if last.text(head) != ")" {
        return None;
    }
    let mut depth = 0i32;
    let mut list_open = None;
    for (i, t) in rest.iter().enumerate().rev() {
        match t.text(head) {
            ")" => depth += 1,
            "(" if depth == 0 => {
                list_open = Some(i);
                break;
            }
            "(" => depth -= 1,
            _ => {}
        }
    }
    let inner = &rest[list_open? + 1..];
    let mut spans = Vec::new();
    let mut depth = 0i32;
    let mut from: Option<usize> = None;
    let mut to = 0;
    for t in inner {
        match t.text(head) {
            "(" | "[" | "<" => depth += 1,
            ")" | "]" | ">" => depth -= 1,
            "," if depth == 0 => {
                spans.push((start + from?, start + to));
                from = None;
                continue;
            }
            _ => {}
        }
        from.get_or_insert(t.start);
        to = t.start + t.text(head).len();
    }
    if let Some(f) = from {
        spans.push((start + f, start + to));
    }
    Some(spans)
}

/// Whether `s` holds no other statement.
pub(super) fn is_simple(s: &Stmt) -> bool {
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
pub(super) fn shares_statements(o: &Stmt, c: &Stmt) -> bool {
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
pub(super) fn invocations(src: &str, span: Span, macros: &[MacroDef]) -> Vec<(Span, String)> {
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
pub(super) fn reindent(text: &str, from: &str, to: &str) -> String {
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
