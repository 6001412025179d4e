//! The member functions of a file-scope `struct`: `__device__` ones become
//! device functions of their struct (read with an implicit `this`), and
//! every function-like member is a hole the struct's C text leaves out.

use super::{cuda_declaration, matching, Declaration, Extracted, QualifierMacros};
use crate::cuda::lex::{TokKind, Token};
use crate::source::Span;

/// A member of a struct copper does not read, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnsupportedMember {
    /// File offset of the member's first token.
    pub offset: usize,
    /// The struct it is a member of.
    pub owner: String,
    /// The construct, as a phrase (`constructors`).
    pub what: String,
    /// Whether it is a constructor: a local of the struct is then built
    /// by code copper does not read.
    pub constructor: bool,
}

/// Where a struct body is and how to read its members.
pub(super) struct Body<'a> {
    /// The `{` opening it.
    pub open: usize,
    /// The `}` closing it.
    pub close: usize,
    /// The struct's tag.
    pub owner: &'a str,
    /// The namespaces the struct is in (`a::b`; empty at file scope).
    pub namespace: &'a str,
    /// Macros standing for qualifiers.
    pub qualifiers: &'a QualifierMacros,
}

/// Scans the members of a struct body: records its `__device__` member
/// functions (owned by the struct) and its unsupported function-like
/// members in `out`, and returns the spans of all function-like members.
pub(super) fn scan(src: &str, toks: &[Token], body: &Body, out: &mut Extracted) -> Vec<Span> {
    let mut holes = Vec::new();
    let mut j = body.open + 1;
    while j < body.close {
        let start = j;
        let mut paren = None;
        let mut end = None;
        while j < body.close {
            match toks[j].text(src) {
                ";" => {
                    end = Some(j);
                    break;
                }
                "=" if paren.is_none() => {
                    // A data member's initializer: runs to its `;`.
                    j = skip_initializer(src, toks, j, body.close);
                    end = Some(j);
                    break;
                }
                "(" => {
                    paren.get_or_insert(j);
                    j = matching(src, toks, j).unwrap_or(body.close);
                }
                "{" if paren.is_some() => {
                    let close = matching(src, toks, j).unwrap_or(body.close);
                    let semi = toks.get(close + 1).is_some_and(|t| t.is(src, ";"));
                    end = Some(if semi { close + 1 } else { close });
                    break;
                }
                "{" | "[" => j = matching(src, toks, j).unwrap_or(body.close),
                _ => {}
            }
            j += 1;
        }
        let end = end
            .unwrap_or(body.close.saturating_sub(1))
            .min(body.close - 1);
        j = end + 1;
        let Some(paren) = paren else {
            continue;
        };
        if end < start {
            continue;
        }
        holes.push(Span::new(toks[start].start, toks[end].end));
        member(src, toks, body, (start, paren, end), out);
    }
    holes
}

/// Index of the `;` ending an initializer starting at `from` (inside the
/// body, before `close`).
fn skip_initializer(src: &str, toks: &[Token], mut from: usize, close: usize) -> usize {
    while from < close {
        match toks[from].text(src) {
            ";" => return from,
            "(" | "[" | "{" => from = matching(src, toks, from).unwrap_or(close),
            _ => {}
        }
        from += 1;
    }
    close.saturating_sub(1)
}

/// One function-like member (tokens `start..=end`, its parameter list
/// opening at `paren`): a `__device__` member function, or a construct
/// recorded as unsupported; host-only member functions are left alone.
fn member(src: &str, toks: &[Token], body: &Body, at: (usize, usize, usize), out: &mut Extracted) {
    let (start, paren, end) = at;
    let words: Vec<&str> = toks[start..paren].iter().map(|t| t.text(src)).collect();
    let device = toks[start..paren]
        .iter()
        .any(|t| body.qualifiers.of(t.text(src)).contains(&"__device__"));
    let has_body = toks[end].is(src, "}") || toks[end].is(src, ";") && toks[end - 1].is(src, "}");
    let name = paren
        .checked_sub(1)
        .map(|p| toks[p])
        .filter(|t| t.kind == TokKind::Ident)
        .map(|t| t.text(src));
    let what = if words.contains(&"operator") {
        Some("operators declared in a struct (write them as `__device__` functions)")
    } else if words.contains(&"virtual") {
        Some("virtual member functions")
    } else if words.contains(&"static") {
        Some("static member functions")
    } else if words.contains(&"~") {
        Some("destructors")
    } else if name == Some(body.owner) {
        Some("constructors (initialize the struct with `{…}`)")
    } else if words.contains(&"template") {
        Some("member function templates")
    } else if device && !has_body {
        Some("member functions defined outside their struct")
    } else {
        None
    };
    if let Some(what) = what {
        if device || name == Some(body.owner) {
            out.unsupported_members.push(UnsupportedMember {
                offset: toks[start].start,
                owner: body.owner.to_string(),
                what: what.to_string(),
                constructor: name == Some(body.owner),
            });
        }
        return;
    }
    if !device {
        return;
    }
    let namespace = match body.namespace {
        "" => body.owner.to_string(),
        ns => format!("{ns}::{}", body.owner),
    };
    let decl = Declaration {
        start,
        namespace: &namespace,
        qualifiers: body.qualifiers,
    };
    let before = out.functions.len();
    cuda_declaration(src, toks, &decl, out);
    for f in &mut out.functions[before..] {
        f.owner = Some(body.owner.to_string());
    }
}
