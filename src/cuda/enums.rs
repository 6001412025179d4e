//! File-scope enumerations (`enum Mode { ADD, MUL = 4 };`, `enum class
//! Op : int { Sum, Max };`): their values, which kernels use as constants,
//! and their names, which are `int`s to copper.

use super::ast::{BaseType, Expr, ExprKind, Init, Meta, NodeId, Space, Type, UnOp, VarDecl};
use super::lex::{TokKind, Token};
use crate::source::Span;

/// An enumeration declared at file scope.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EnumItem {
    /// Its name (`None` for an anonymous `enum { … }`).
    pub name: Option<String>,
    /// Each enumerator whose value copper could compute, in order.
    pub values: Vec<(String, i64)>,
    /// From `enum` through the final `;`.
    pub span: Span,
}

/// The enumerators of the file's enumerations, as `constexpr int`s (ids
/// from `first_id`).
pub fn constants(enums: &[EnumItem], first_id: u64) -> Vec<VarDecl> {
    let values = enums
        .iter()
        .flat_map(|e| e.values.iter().map(move |v| (e.span, v)));
    values
        .enumerate()
        .map(|(k, (span, (name, value)))| {
            let meta = |n: u64| Meta {
                id: NodeId(first_id + 3 * k as u64 + n),
                span,
                macro_text: None,
            };
            let literal = Expr {
                meta: meta(0),
                kind: ExprKind::Int {
                    value: value.unsigned_abs(),
                    text: value.unsigned_abs().to_string(),
                },
            };
            let init = if *value < 0 {
                Expr {
                    meta: meta(1),
                    kind: ExprKind::Unary(UnOp::Neg, Box::new(literal)),
                }
            } else {
                literal
            };
            VarDecl {
                meta: meta(2),
                space: Space::Local,
                is_extern: false,
                is_static: false,
                is_constexpr: true,
                ty: Type::scalar(BaseType::Int),
                name: name.clone(),
                dims: Vec::new(),
                init: Some(Init::Expr(init)),
            }
        })
        .collect()
}

/// The enumeration declared from token `i` (an `enum`) and the index of
/// the token after its `;`; `None` when it is no definition
/// (`enum Mode m;`, an opaque declaration).
pub fn enum_declaration(src: &str, toks: &[Token], i: usize) -> Option<(EnumItem, usize)> {
    let mut j = i + 1;
    if toks
        .get(j)
        .is_some_and(|t| t.is(src, "class") || t.is(src, "struct"))
    {
        j += 1;
    }
    let name = toks
        .get(j)
        .filter(|t| t.kind == TokKind::Ident)
        .map(|t| t.text(src).to_string());
    if name.is_some() {
        j += 1;
    }
    // `: int` — the underlying type.
    while toks
        .get(j)
        .is_some_and(|t| !t.is(src, "{") && !t.is(src, ";"))
    {
        j += 1;
    }
    toks.get(j).filter(|t| t.is(src, "{"))?;
    let close = closing_brace(src, toks, j)?;
    let end = close + 1;
    toks.get(end).filter(|t| t.is(src, ";"))?;
    let mut values: Vec<(String, i64)> = Vec::new();
    let mut next = 0i64;
    for (a, b) in enumerators(src, toks, j + 1, close) {
        let Some(first) = toks.get(a).filter(|t| t.kind == TokKind::Ident && a < b) else {
            continue;
        };
        let value = if b > a + 1 && toks[a + 1].is(src, "=") {
            match evaluate(src, &toks[a + 2..b], &values) {
                Some(v) => v,
                // Later enumerators count from a value copper lacks.
                None => break,
            }
        } else {
            next
        };
        values.push((first.text(src).to_string(), value));
        next = value.wrapping_add(1);
    }
    let item = EnumItem {
        name,
        values,
        span: Span::new(toks[i].start, toks[end].end),
    };
    Some((item, end + 1))
}

/// The index of the `}` closing the `{` at token `open`.
fn closing_brace(src: &str, toks: &[Token], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (k, t) in toks.iter().enumerate().skip(open) {
        match t.text(src) {
            "{" => depth += 1,
            "}" => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(k);
                }
            }
            _ => {}
        }
    }
    None
}

/// The token ranges between the top-level commas of `toks[from..to]`.
fn enumerators(src: &str, toks: &[Token], from: usize, to: usize) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0i32, from);
    for (k, t) in toks.iter().enumerate().take(to).skip(from) {
        match t.text(src) {
            "(" | "[" | "{" => depth += 1,
            ")" | "]" | "}" => depth -= 1,
            "," if depth == 0 => {
                out.push((start, k));
                start = k + 1;
            }
            _ => {}
        }
    }
    out.push((start, to));
    out
}

/// The value of an enumerator's initializer: a number, a character, an
/// earlier enumerator, `-` of one, or two of them joined by `+`, `-`, `*`,
/// `|`, `&` or `<<`.
fn evaluate(src: &str, toks: &[Token], known: &[(String, i64)]) -> Option<i64> {
    let operand = |ts: &[Token]| -> Option<i64> {
        match ts {
            [t] => atom(src, *t, known),
            [m, t] if m.is(src, "-") => atom(src, *t, known).map(i64::wrapping_neg),
            [o, inner @ .., c] if o.is(src, "(") && c.is(src, ")") => evaluate(src, inner, known),
            _ => None,
        }
    };
    if let Some(v) = operand(toks) {
        return Some(v);
    }
    let op = (1..toks.len().saturating_sub(1))
        .rev()
        .find(|&k| matches!(toks[k].text(src), "+" | "-" | "*" | "|" | "&" | "<<"))?;
    let (l, r) = (operand(&toks[..op])?, operand(&toks[op + 1..])?);
    Some(match toks[op].text(src) {
        "+" => l.wrapping_add(r),
        "-" => l.wrapping_sub(r),
        "*" => l.wrapping_mul(r),
        "|" => l | r,
        "&" => l & r,
        _ => l.checked_shl(u32::try_from(r).ok()?)?,
    })
}

/// A number, character or earlier enumerator.
fn atom(src: &str, t: Token, known: &[(String, i64)]) -> Option<i64> {
    let s = t.text(src);
    match t.kind {
        TokKind::Ident => known.iter().rev().find(|(n, _)| n == s).map(|(_, v)| *v),
        TokKind::Char => {
            let inner = s.strip_prefix('\'')?.strip_suffix('\'')?;
            let mut chars = inner.chars();
            let c = chars.next()?;
            (chars.next().is_none() && c.is_ascii()).then_some(c as i64)
        }
        TokKind::Number => {
            let lower = s.to_ascii_lowercase();
            let digits = lower.trim_end_matches(['u', 'l']);
            match digits.strip_prefix("0x") {
                Some(h) => i64::from_str_radix(h, 16).ok(),
                None if digits.len() > 1 && digits.starts_with('0') => {
                    i64::from_str_radix(&digits[1..], 8).ok()
                }
                None => digits.parse().ok(),
            }
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cuda::lex::tokenize;

    fn read(src: &str) -> Option<EnumItem> {
        enum_declaration(src, &tokenize(src), 0).map(|(e, _)| e)
    }

    #[test]
    fn values_count_on_from_the_last_one_given() {
        let e = read("enum Mode { ADD, MUL = 4, DIV, FLAG = 1 << 3, BOTH = MUL | FLAG };").unwrap();
        assert_eq!(e.name.as_deref(), Some("Mode"));
        let v: Vec<i64> = e.values.iter().map(|(_, v)| *v).collect();
        assert_eq!(v, [0, 4, 5, 8, 12]);
        let e = read("enum class Op : unsigned char { Sum = -1, Max, };").unwrap();
        assert_eq!(e.values, [("Sum".into(), -1), ("Max".into(), 0)]);
        assert!(read("enum Mode m;").is_none());
    }

    #[test]
    fn an_initializer_copper_cannot_compute_stops_the_count() {
        let e = read("enum { A = sizeof(int), B };").unwrap();
        assert!(e.values.is_empty());
    }

    #[test]
    fn kernels_use_enumerators_and_enum_types_as_ints() {
        let src = "enum Mode { ADD, MUL };\n\
                   namespace img { enum class Channel : int { Red, Green, Blue }; }\n\
                   __global__ void k(float *a, Mode m) {\n\
                   \x20   if (m == MUL) a[threadIdx.x] *= 2;\n\
                   \x20   a[threadIdx.x] += (int)img::Channel::Blue;\n\
                   }\n";
        let f = crate::cuda::parse::parse_source(crate::source::SourceFile::new("e.cu", src));
        let k = crate::ir::lower::lower_kernel(&f, "k").unwrap();
        assert!(k.symbols.is_empty(), "{:?}", k.symbols);
    }

    #[test]
    fn an_enumeration_is_the_type_of_a_template_value_parameter() {
        let src = "enum Op { ADD, MUL };\n\
                   template <Op O> __global__ void k(float *a) {\n\
                   \x20   a[threadIdx.x] = O == MUL ? 2 * a[threadIdx.x] : a[threadIdx.x] + 1;\n\
                   }\n\
                   int main() { float *a; k<MUL><<<1, 32>>>(a); }\n";
        let f = crate::cuda::parse::parse_source(crate::source::SourceFile::new("t.cu", src));
        let k = crate::ir::lower::lower_kernel(&f, "k<MUL>");
        assert!(k.is_ok(), "{:?}", k.err().map(|d| d.render()));
    }
}
