//! Default arguments of device functions (`__device__ float scale(float x,
//! float s = 2.0f)`): found in the function's head, blanked before the C
//! parser sees the head, and read back as constant expressions that a call
//! with fewer arguments gets.

use std::ops::Range;

use super::ast::{Expr, ExprKind, Meta, NodeId, UnOp};
use super::extract::matching;
use super::lex::{tokenize, TokKind};

/// One default argument in a function's text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DefaultArg {
    /// The parameter's index.
    pub param: usize,
    /// Byte range of `= value` in the function's text.
    pub range: Range<usize>,
    /// The value as written, trimmed.
    pub value: String,
}

/// The default arguments of the function whose text is `text`, its name
/// at byte `name_at`: each `= value` at the top level of the parameter
/// list following the name.
pub fn find(text: &str, name_at: usize) -> Vec<DefaultArg> {
    let toks = tokenize(text);
    let Some(open) = toks
        .iter()
        .position(|t| t.start >= name_at && t.is(text, "("))
    else {
        return Vec::new();
    };
    let Some(close) = matching(text, &toks, open) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let (mut param, mut depth) = (0, 0i32);
    let mut start: Option<usize> = None;
    let mut finish = |start: &mut Option<usize>, param: usize, end: usize| {
        if let Some(s) = start.take() {
            out.push(DefaultArg {
                param,
                range: s..end,
                value: text[s + 1..end].trim().to_string(),
            });
        }
    };
    for t in &toks[open + 1..close] {
        match t.text(text) {
            "(" | "[" | "{" | "<" => depth += 1,
            ")" | "]" | "}" | ">" => depth -= 1,
            "," if depth == 0 => {
                finish(&mut start, param, t.start);
                param += 1;
            }
            "=" if depth == 0 && start.is_none() => start = Some(t.start),
            _ => {}
        }
    }
    finish(&mut start, param, toks[close].start);
    out
}

/// `text` with `ranges` (byte ranges: defaults' `= value`, a struct's
/// member functions) replaced by spaces, line breaks kept (same length, so
/// offsets still map to the file).
pub fn blanked(text: &str, ranges: &[Range<usize>]) -> String {
    let mut out = text.to_string();
    for r in ranges {
        let Some(piece) = text.get(r.clone()) else {
            continue;
        };
        let spaces: String = piece
            .bytes()
            .map(|c| if c == b'\n' { '\n' } else { ' ' })
            .collect();
        out.replace_range(r.clone(), &spaces);
    }
    out
}

/// A default value as an expression: a number (with an optional sign),
/// `true`/`false`, or a name (a constant or macro-free identifier), its
/// nodes numbered from `id` (two ids at most); `None` for anything else.
pub fn value(text: &str, id: u64) -> Option<Expr> {
    let toks = tokenize(text);
    let (neg, lit) = match toks.as_slice() {
        [t] => (false, *t),
        [sign, t] if sign.is(text, "-") => (true, *t),
        _ => return None,
    };
    let s = lit.text(text);
    let kind = match (lit.kind, s) {
        (_, "true") => ExprKind::Bool(true),
        (_, "false") => ExprKind::Bool(false),
        (TokKind::Ident, _) => ExprKind::Ident(s.to_string()),
        (TokKind::Number, _) => number(s)?,
        _ => return None,
    };
    let e = Expr {
        meta: Meta::synthetic(NodeId(id)),
        kind,
    };
    Some(if neg {
        Expr {
            meta: Meta::synthetic(NodeId(id + 1)),
            kind: ExprKind::Unary(UnOp::Neg, Box::new(e)),
        }
    } else {
        e
    })
}

/// An integer or floating literal.
fn number(s: &str) -> Option<ExprKind> {
    let lower = s.to_ascii_lowercase();
    let is_hex = lower.starts_with("0x");
    if !is_hex && (lower.contains('.') || lower.contains('e') || lower.ends_with('f')) {
        return Some(ExprKind::Float(s.to_string()));
    }
    let digits = lower.trim_end_matches(['u', 'l']);
    let value = match digits.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16).ok()?,
        None if digits.len() > 1 && digits.starts_with('0') => {
            u64::from_str_radix(&digits[1..], 8).ok()?
        }
        None => digits.parse().ok()?,
    };
    Some(ExprKind::Int {
        value,
        text: s.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_found_and_blanked_in_place() {
        let text = "__device__ float f(float x, float s = 2.0f, int k = -1) { return x; }";
        let d = find(text, text.find("f(").unwrap());
        assert_eq!(d.len(), 2);
        assert_eq!((d[0].param, d[0].value.as_str()), (1, "2.0f"));
        assert_eq!((d[1].param, d[1].value.as_str()), (2, "-1"));
        let ranges: Vec<_> = d.iter().map(|x| x.range.clone()).collect();
        let b = blanked(text, &ranges);
        assert_eq!(b.len(), text.len());
        assert!(b.contains("float s       , int k     )"), "{b}");
    }

    #[test]
    fn values_are_constants_or_names() {
        assert!(matches!(value("2.0f", 0).unwrap().kind, ExprKind::Float(_)));
        assert!(matches!(
            value("0x10", 0).unwrap().kind,
            ExprKind::Int { value: 16, .. }
        ));
        assert!(matches!(
            value("-1", 0).unwrap().kind,
            ExprKind::Unary(UnOp::Neg, _)
        ));
        assert!(matches!(value("TILE", 0).unwrap().kind, ExprKind::Ident(_)));
        assert!(value("a + b", 0).is_none());
    }

    #[test]
    fn a_call_without_them_gets_the_defaults_and_printing_keeps_them() {
        use crate::cuda::parse::parse_source;
        use crate::source::SourceFile;
        let src = "__device__ float f(float x, float s = 2.0f) { return x * s; }\n\
                   __global__ void k(float *a) { a[threadIdx.x] = f(a[threadIdx.x]); }\n\
                   __device__ int g(int x, int y = 1 + 2) { return x; }\n";
        let file = parse_source(SourceFile::new("d.cu", src));
        assert!(crate::ir::lower::lower_kernel(&file, "k").is_ok());
        let f = file.function("f").unwrap();
        let printed = crate::cuda::print::function(f);
        assert!(printed.contains("f(float x, float s = 2.0f)"), "{printed}");
        let g = file.functions.iter().find(|p| p.item.name == "g").unwrap();
        let d = g.result.as_ref().unwrap_err();
        assert!(
            d.message.starts_with("default argument `1 + 2`"),
            "{}",
            d.render()
        );
        assert_eq!((d.line, d.col), (3, 31));
    }
}
