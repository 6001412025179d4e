//! File-scope type declarations: `typedef …;` and `struct X { … };`
//! (with the member functions [`members::scan`] reads).

use super::{
    declared_names, matching, members, skip_to_semicolon, Declaration, Extracted, TypeDeclItem,
};
use crate::cuda::lex::{TokKind, Token};
use crate::source::Span;

/// A file-scope `typedef …;` or `struct X { … };` starting at token
/// `decl.start` (its member functions read by [`members::scan`]).
pub(super) fn type_declaration(
    src: &str,
    toks: &[Token],
    decl: &Declaration,
    out: &mut Extracted,
) -> Option<usize> {
    let i = decl.start;
    let end = skip_to_semicolon(src, toks, i);
    if end >= toks.len() {
        return None;
    }
    let body = &toks[i..=end];
    // `typedef Pair<float> FP;`: an instance of a template struct; in a
    // struct's braces (`Pair<float> p;`, `a < b` in a member function),
    // `<` is read too.
    let instance = body[0].is(src, "typedef") && body.get(2).is_some_and(|t| t.is(src, "<"));
    let mut depth = 0usize;
    if body.iter().any(|t| {
        match t.text(src) {
            "{" => depth += 1,
            "}" => depth = depth.saturating_sub(1),
            _ => {}
        }
        matches!(t.text(src), "::" | "template" | "class")
            || t.is(src, "<") && !instance && depth == 0
    }) {
        return Some(end + 1);
    }
    let mut names = Vec::new();
    let mut members = Vec::new();
    let is_struct = body.iter().take(2).any(|t| t.is(src, "struct"));
    let open = body.iter().position(|t| t.is(src, "{")).map(|p| i + p);
    if toks[i].is(src, "struct") {
        if let Some(tag) = body.get(1).filter(|t| t.kind == TokKind::Ident) {
            names.push(tag.text(src).to_string());
        }
        if open.is_none() {
            return Some(end + 1);
        }
    }
    let brace_end = body
        .iter()
        .rposition(|t| t.is(src, "}"))
        .map(|p| p + 1)
        .unwrap_or(0);
    names.extend(declared_names(src, &body[brace_end..]));
    if toks[i].is(src, "typedef") && brace_end == 0 {
        names = declared_names(src, &body[1..]);
        if let Some(fp) = body
            .windows(3)
            .find(|w| w[0].is(src, "(") && w[1].is(src, "*"))
        {
            names = vec![fp[2].text(src).to_string()];
        }
    }
    if let (true, Some(open), Some(owner)) = (is_struct, open, names.first()) {
        if let Some(close) = matching(src, toks, open) {
            let body = members::Body {
                open,
                close,
                owner,
                namespace: decl.namespace,
                qualifiers: decl.qualifiers,
            };
            members = members::scan(src, toks, &body, out);
        }
    }
    out.types.push(TypeDeclItem {
        names,
        span: Span::new(toks[i].start, toks[end].end),
        members,
    });
    Some(end + 1)
}
