//! Launch shapes read from `kernel<<<grid, block>>>` sites when literal.

use super::extract::Extracted;
use super::lex::{tokenize, TokKind};
use super::macros::{token_texts, MacroTable};
use crate::source::Span;

/// A launch site and its shape, when copper could read it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Launch {
    /// Kernel launched.
    pub kernel: String,
    /// Grid size (x, y, z) when it is a literal.
    pub grid: Option<[u64; 3]>,
    /// Block size (x, y, z) when it is a literal.
    pub block: Option<[u64; 3]>,
    /// Where the launch is in the file.
    #[serde(skip)]
    pub span: Span,
    /// Names in a shape that is not literal which look like macros but that
    /// nothing defines (`N` in `<<<N / 256, 256>>>` without `-DN=…`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub undefined: Vec<String>,
}

/// Resolves every launch site of a file.
pub fn resolve_launches(src: &str, ex: &Extracted, macros: &MacroTable) -> Vec<Launch> {
    ex.launches
        .iter()
        .map(|l| {
            let grid = shape(src, &l.grid, macros, l.span.start);
            let block = shape(src, &l.block, macros, l.span.start);
            let mut undefined = Vec::new();
            for (dims, text) in [(grid, &l.grid), (block, &l.block)] {
                if dims.is_none() {
                    undefined.extend(undefined_names(src, text, macros, l.span.start));
                }
            }
            undefined.dedup();
            Launch {
                kernel: l.kernel.clone(),
                grid,
                block,
                span: l.span,
                undefined,
            }
        })
        .collect()
}

/// The shape an argument denotes: an integer constant expression, `dim3(…)`
/// of them, or a variable initialized that way earlier in the file.
fn shape(src: &str, arg: &str, macros: &MacroTable, before: usize) -> Option<[u64; 3]> {
    let toks = expand_all(&token_texts(arg), macros)?;
    if let [name] = toks.as_slice() {
        if name
            .chars()
            .next()
            .is_some_and(|c| c.is_alphabetic() || c == '_')
        {
            return variable_shape(src, name, macros, before);
        }
    }
    dim3_of(&toks)
}

/// The names in a shape argument that look like macros (no lowercase) but
/// are neither macros nor declared before the launch.
fn undefined_names(src: &str, arg: &str, macros: &MacroTable, before: usize) -> Vec<String> {
    let mut out: Vec<String> = expand_all(&token_texts(arg), macros)
        .unwrap_or_default()
        .into_iter()
        .filter(|t| super::include::looks_like_macro(t) && macros.get(t).is_none())
        .collect();
    out.dedup();
    if out.is_empty() {
        return out;
    }
    // A name declared before the launch (`const int N = …;`) is a variable.
    let head = &src[..before.min(src.len())];
    let toks = tokenize(head);
    out.retain(|name| {
        !toks
            .windows(2)
            .any(|w| w[1].is(head, name) && w[0].kind == TokKind::Ident && !w[0].is(head, "return"))
    });
    out
}

fn dim3_of(toks: &[String]) -> Option<[u64; 3]> {
    let inner = match toks {
        [d, open, rest @ .., close] if d == "dim3" && open == "(" && close == ")" => rest,
        _ => return const_value(toks).map(|v| [v, 1, 1]),
    };
    let mut dims = [1u64; 3];
    let mut depth = 0;
    let mut start = 0;
    let mut k = 0;
    for (i, t) in inner.iter().enumerate() {
        match t.as_str() {
            "(" => depth += 1,
            ")" => depth -= 1,
            "," if depth == 0 => {
                *dims.get_mut(k)? = const_value(&inner[start..i])?;
                k += 1;
                start = i + 1;
            }
            _ => {}
        }
    }
    *dims.get_mut(k)? = const_value(&inner[start..])?;
    Some(dims)
}

/// Finds `dim3 name(…)`, `dim3 name = …` or `int name = …` before `before`.
fn variable_shape(src: &str, name: &str, macros: &MacroTable, before: usize) -> Option<[u64; 3]> {
    let head = &src[..before.min(src.len())];
    let toks = tokenize(head);
    let texts: Vec<&str> = toks.iter().map(|t| t.text(head)).collect();
    let pos = (1..texts.len()).rev().find(|&i| {
        texts[i] == name
            && toks[i].kind == TokKind::Ident
            && matches!(
                texts[i - 1],
                "dim3" | "int" | "unsigned" | "size_t" | "const"
            )
            && texts
                .get(i + 1)
                .is_some_and(|n| matches!(*n, "(" | "=" | "{"))
    })?;
    let is_dim3 = texts[..pos].iter().rev().take(3).any(|t| *t == "dim3");
    let end = (pos..texts.len()).find(|&i| texts[i] == ";")?;
    let mut init: Vec<String> = texts[pos + 1..end].iter().map(|s| s.to_string()).collect();
    if init.first().is_some_and(|t| t == "=") {
        init.remove(0);
    }
    let init = expand_all(&init, macros)?;
    if is_dim3 && init.first().is_some_and(|t| t == "(" || t == "{") {
        let mut call = vec!["dim3".to_string(), "(".to_string()];
        call.extend(init[1..init.len() - 1].iter().cloned());
        call.push(")".into());
        return dim3_of(&call);
    }
    dim3_of(&init)
}

pub(crate) fn expand_all(toks: &[String], macros: &MacroTable) -> Option<Vec<String>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        match macros.get(&toks[i]) {
            Some(def) if def.params.is_none() => {
                out.extend(macros.expand(def, &[]).ok()?);
            }
            _ => out.push(toks[i].clone()),
        }
        i += 1;
    }
    Some(out)
}

/// Value of an integer constant expression over `+ - * / ( )`.
pub(crate) fn const_value(toks: &[String]) -> Option<u64> {
    let mut pos = 0;
    let v = sum(toks, &mut pos)?;
    (pos == toks.len() && v > 0).then_some(v as u64)
}

fn sum(t: &[String], p: &mut usize) -> Option<i128> {
    let mut v = product(t, p)?;
    while let Some(op) = t
        .get(*p)
        .map(String::as_str)
        .filter(|o| matches!(*o, "+" | "-"))
    {
        *p += 1;
        let r = product(t, p)?;
        v = if op == "+" {
            v.checked_add(r)?
        } else {
            v.checked_sub(r)?
        };
    }
    Some(v)
}

fn product(t: &[String], p: &mut usize) -> Option<i128> {
    let mut v = atom(t, p)?;
    while let Some(op) = t
        .get(*p)
        .map(String::as_str)
        .filter(|o| matches!(*o, "*" | "/"))
    {
        *p += 1;
        let r = atom(t, p)?;
        v = if op == "*" {
            v.checked_mul(r)?
        } else {
            v.checked_div(r)?
        };
    }
    Some(v)
}

fn atom(t: &[String], p: &mut usize) -> Option<i128> {
    let tok = t.get(*p)?;
    *p += 1;
    if tok == "(" {
        let v = sum(t, p)?;
        (t.get(*p)? == ")").then_some(())?;
        *p += 1;
        return Some(v);
    }
    let digits = tok.trim_end_matches(['u', 'U', 'l', 'L']);
    if let Some(hex) = digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        return i128::from_str_radix(hex, 16).ok();
    }
    digits.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cuda::extract::extract;

    type Dims = Option<[u64; 3]>;

    fn shapes(src: &str) -> Vec<(Dims, Dims)> {
        let ex = extract(src);
        let m = MacroTable::new(&ex.macros);
        resolve_launches(src, &ex, &m)
            .into_iter()
            .map(|l| (l.grid, l.block))
            .collect()
    }

    #[test]
    fn undefined_macros_in_shapes_are_named() {
        let src = "#define B 64\nint main() {\n const int M = 8;\n k<<<N / B, B>>>(x);\n k<<<M, B>>>(x);\n}";
        let ex = extract(src);
        let l = resolve_launches(src, &ex, &MacroTable::new(&ex.macros));
        assert_eq!(l[0].undefined, ["N"]);
        assert!(l[1].undefined.is_empty());
    }

    #[test]
    fn literal_macro_and_variable_shapes() {
        let src = "#define B 128\nint main() {\n dim3 block(16, 16);\n dim3 grid = dim3(4, 2);\n int n = 64;\n\
                   k<<<(1024 + B - 1) / B, B>>>(x);\n k<<<grid, block>>>(x);\n k<<<n, 32, 0, s>>>(x);\n\
                   k<<<f(n), 32>>>(x);\n}";
        assert_eq!(
            shapes(src),
            [
                (Some([8, 1, 1]), Some([128, 1, 1])),
                (Some([4, 2, 1]), Some([16, 16, 1])),
                (Some([64, 1, 1]), Some([32, 1, 1])),
                (None, Some([32, 1, 1])),
            ]
        );
    }
}
