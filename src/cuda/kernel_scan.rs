//! The safety net behind extraction: a plain token scan for `__global__`
//! function definitions, so that a kernel extraction misses is reported
//! (with its name and place) instead of vanishing from the listing.

use super::extract::{macro_named, matching};
use super::lex::{tokenize, TokKind, Token};
use super::qualifier_macros::QualifierMacros;

/// A `__global__` function definition the scan found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelDefinition {
    /// The function's name (without template arguments).
    pub name: String,
    /// Offset of the name in the scanned text.
    pub offset: usize,
}

/// Words followed by a parenthesized argument that are not the name.
const ATTRIBUTES: &[&str] = &[
    "__launch_bounds__",
    "__attribute__",
    "__declspec",
    "alignas",
    "__align__",
    "__cluster_dims__",
    "__maxnreg__",
];

/// Every `__global__` function definition in `text` (`__global__` written
/// or through a macro of `qualifiers`): the identifier before the first
/// parenthesis of the declaration, when a `{` follows its parameters.
pub fn kernel_definitions(text: &str, qualifiers: &QualifierMacros) -> Vec<KernelDefinition> {
    let toks = tokenize(text);
    let mut found = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        if toks[i].kind == TokKind::Ident
            && qualifiers.of(toks[i].text(text)).contains(&"__global__")
        {
            if let Some(named) = macro_named(text, &toks, i, qualifiers) {
                // `KERNEL(foo)(float *a) {…}`: a definition when the
                // parameters are followed by a body.
                let params = named.close + 1;
                let body = toks
                    .get(params)
                    .filter(|t| t.is(text, "("))
                    .and_then(|_| matching(text, &toks, params).and_then(|c| toks.get(c + 1)));
                if body.is_some_and(|b| b.is(text, "{")) {
                    found.push(KernelDefinition {
                        name: toks[named.name].text(text).to_string(),
                        offset: toks[named.name].start,
                    });
                }
                i = params;
                continue;
            }
            if let Some((def, next)) = definition_after(text, &toks, i + 1) {
                found.extend(def);
                i = next;
                continue;
            }
        }
        i += 1;
    }
    found
}

/// Reads the declaration after a `__global__` at token `from`: the
/// definition (if it is one) and the index to scan on from.
fn definition_after(
    text: &str,
    toks: &[Token],
    from: usize,
) -> Option<(Option<KernelDefinition>, usize)> {
    let mut j = from;
    while j < toks.len() {
        match toks[j].text(text) {
            ";" | "{" | "}" => return Some((None, j)),
            "(" => {
                let before = j.checked_sub(1).map(|p| toks[p].text(text));
                if before.is_some_and(|w| ATTRIBUTES.contains(&w)) {
                    j = matching(text, toks, j)? + 1;
                    continue;
                }
                let name = name_before(text, toks, j)?;
                let close = matching(text, toks, j)?;
                let body = toks[close + 1..]
                    .iter()
                    .position(|t| matches!(t.text(text), "{" | ";"))
                    .map(|p| close + 1 + p)?;
                let def = toks[body].is(text, "{").then(|| KernelDefinition {
                    name: toks[name].text(text).to_string(),
                    offset: toks[name].start,
                });
                return Some((def, body));
            }
            _ => j += 1,
        }
    }
    None
}

/// The name token before the `(` at `paren`: the identifier there, or
/// the one before a template argument list (`k<float>(`).
fn name_before(text: &str, toks: &[Token], paren: usize) -> Option<usize> {
    let mut k = paren.checked_sub(1)?;
    if toks[k].is(text, ">") {
        let mut depth = 0i32;
        loop {
            match toks[k].text(text) {
                ">" => depth += 1,
                ">>" => depth += 2,
                "<" => depth -= 1,
                _ => {}
            }
            if depth == 0 {
                break;
            }
            k = k.checked_sub(1)?;
        }
        k = k.checked_sub(1)?;
    }
    (toks[k].kind == TokKind::Ident).then_some(k)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_definitions_not_declarations() {
        let src = "// __global__ void c() {}\n__global__ void decl(int);\n\
                   __global__ void __launch_bounds__(256) a(int *x) { x[0] = 0; }\n\
                   template <> __global__ void s<float>(float *x) {}\n\
                   extern \"C\" __global__ void b(int n) {}\n";
        let names: Vec<_> = kernel_definitions(src, &QualifierMacros::default())
            .into_iter()
            .map(|d| d.name)
            .collect();
        assert_eq!(names, ["a", "s", "b"]);
    }

    #[test]
    fn a_kernel_named_through_a_macro_argument() {
        use crate::cuda::extract::extract;
        use crate::cuda::macros::MacroTable;
        let src = "#define KERNEL(n) __global__ void n\n\
                   KERNEL(scale)(float *a) { a[0] = 1; }\n\
                   KERNEL(decl)(float *a);\n";
        let q = QualifierMacros::from_table(&MacroTable::new(&extract(src).macros));
        let defs = kernel_definitions(src, &q);
        assert_eq!(defs.len(), 1, "{defs:?}");
        assert_eq!(defs[0].name, "scale");
        assert_eq!(&src[defs[0].offset..defs[0].offset + 5], "scale");
    }
}
