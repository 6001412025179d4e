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

mod comments;
mod editor;
mod emit;
#[cfg(test)]
mod tests;
mod text;

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};

use super::ast::Function;
use super::extract::MacroDef;
use super::print;
use super::visit::{visit_stmt_exprs, visit_stmts};
use editor::Editor;
use text::{body_open, invocations, param_spans, Style};

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
    let same_name = original.kind == candidate.kind
        && original.qualifiers == candidate.qualifiers
        && original.ret == candidate.ret
        && original.name == candidate.name;
    let style = Style::of(src);
    let Some(open) = body_open(src, span).filter(|_| same_name && !span.is_synthetic()) else {
        return Ok(reprinted(candidate, &style));
    };
    let Some(head) = head_text(src, span.start, open, original, candidate) else {
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
    let mut out = head;
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

/// The function's head up to its body's `{` (at `open`), as written, with
/// only the parameters the candidate changed printed anew; `None` when
/// the parameters cannot be matched with their text.
fn head_text(
    src: &str,
    start: usize,
    open: usize,
    original: &Function,
    candidate: &Function,
) -> Option<String> {
    if original.params == candidate.params {
        return Some(src[start..=open].to_string());
    }
    let spans = param_spans(src, start, open)?;
    if spans.len() != original.params.len() || spans.len() != candidate.params.len() {
        return None;
    }
    let mut out = String::new();
    let mut at = start;
    for ((from, to), (old, new)) in spans
        .iter()
        .zip(original.params.iter().zip(&candidate.params))
    {
        if old != new {
            out.push_str(&src[at..*from]);
            out.push_str(&print::param(new));
            at = *to;
        }
    }
    out.push_str(&src[at..=open]);
    Some(out)
}

/// The whole function printed in copper's style, in the file's line
/// endings.
fn reprinted(f: &Function, style: &Style) -> String {
    print::function(f).replace('\n', style.newline)
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
    /// The refusal with the invocation at `line`.
    pub fn at_line(&self, line: usize) -> EditRefused {
        EditRefused {
            name: self.name.clone(),
            line,
        }
    }
}

/// Why a rewrite cannot be made an edit, for people: a [`Refusal`] at the
/// line of the macro's invocation.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the rewrite changes code that macro `{name}` produces (line {line}): copper does not edit a macro's expansion at its use, so this candidate is refused")]
pub struct EditRefused {
    /// The macro's name.
    pub name: String,
    /// The line of its invocation.
    pub line: usize,
}

error_message!(EditRefused);
