//! Kernels a macro defines: `UNARY(neg, -x[i])` at file scope, with
//! `#define UNARY(name, e) __global__ void name##_kernel(…) { … }`.
//! copper reads the functions written in the file, not those a macro's
//! expansion writes, so each such invocation gets an error naming the
//! kernels it defines: they are never dropped silently.

use std::collections::HashSet;

use super::lex::{tokenize, TokKind};
use super::parsed_function::ParsedFunction;
use super::timeline::Timeline;
use crate::diag::{Diagnostic, Severity};
use crate::source::{IncludedKind, SourceFile};

/// One error per file-scope invocation (in the file or a header it
/// includes) of a macro whose expansion defines a `__global__` function
/// with a body, naming the kernels it defines that are not among
/// `functions`.
pub(super) fn macro_kernels(
    source: &SourceFile,
    macros: &Timeline,
    functions: &[ParsedFunction],
) -> Vec<Diagnostic> {
    let known: HashSet<&str> = functions.iter().map(|f| f.item.name.as_str()).collect();
    // From a function's name to its end: what precedes the name in its
    // span (`LB(256) __global__ void k…`) may be such an invocation.
    let inside_function = |offset: usize| {
        functions
            .iter()
            .any(|f| f.item.name_offset <= offset && offset < f.item.span.end)
    };
    let headers = (source.included().files.iter())
        .filter(|f| f.kind == IncludedKind::Header)
        .map(|f| (f.text.as_str(), f.base));
    let mut out = Vec::new();
    for (text, base) in std::iter::once((source.text.as_str(), 0)).chain(headers) {
        let toks = tokenize(text);
        let mut i = 0;
        while i < toks.len() {
            let t = toks[i];
            i += 1;
            if t.kind != TokKind::Ident || inside_function(base + t.start) {
                continue;
            }
            let table = macros.at(base + t.start);
            let Some(def) = table.get(t.text(text)) else {
                continue;
            };
            if !(def.body.iter().any(|b| b == "__global__") && def.body.iter().any(|b| b == "{")) {
                continue;
            }
            // The invocation: the name, and its arguments when the macro
            // takes some.
            let mut end = i;
            if def.params.is_some() && toks.get(i).is_some_and(|p| p.is(text, "(")) {
                let mut depth = 0usize;
                for (j, p) in toks.iter().enumerate().skip(i) {
                    match p.text(text) {
                        "(" => depth += 1,
                        ")" => depth = depth.saturating_sub(1),
                        _ => {}
                    }
                    if depth == 0 {
                        end = j + 1;
                        break;
                    }
                }
            }
            let words: Vec<String> = toks[i - 1..end]
                .iter()
                .map(|w| w.text(text).to_string())
                .collect();
            let names: Vec<String> = table
                .expand_tokens(&words)
                .map(|e| kernel_names(&e))
                .unwrap_or_default()
                .into_iter()
                .filter(|n| !known.contains(n.as_str()))
                .collect();
            let what = match names.as_slice() {
                [] => "a kernel".to_string(),
                [one] => format!("kernel `{one}`"),
                many => format!(
                    "kernels {}",
                    many.iter()
                        .map(|n| format!("`{n}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            };
            out.push(source.diagnostic(
                Severity::Error,
                "unread",
                base + t.start,
                format!(
                    "{what} defined by the macro `{}`: copper reads the functions written in the file, \
                     not those a macro's expansion defines, so it is not listed or analyzed \
                     (expand the macro by hand to analyze it)",
                    def.name
                ),
            ));
            i = end.max(i);
        }
    }
    out
}

/// The names of the `__global__` functions with a body in an expansion:
/// the identifier before the parameter list that follows `__global__`.
fn kernel_names(tokens: &[String]) -> Vec<String> {
    let mut names = Vec::new();
    for (g, _) in tokens
        .iter()
        .enumerate()
        .filter(|(_, t)| *t == "__global__")
    {
        let rest = &tokens[g + 1..];
        let Some(open) = rest.iter().position(|t| t == "(") else {
            continue;
        };
        let Some(name) = open.checked_sub(1).map(|k| &rest[k]) else {
            continue;
        };
        let body = rest[open..]
            .iter()
            .position(|t| t == "{" || t == ";")
            .is_some_and(|k| rest[open + k] == "{");
        let plain = name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_');
        if body && plain && !names.contains(name) {
            names.push(name.clone());
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cuda::parse::parse_source;

    fn errors(src: &str) -> Vec<String> {
        parse_source(SourceFile::new("m.cu", src))
            .diagnostics
            .iter()
            .filter(|d| d.code == "unread")
            .map(|d| d.to_string())
            .collect()
    }

    #[test]
    fn kernels_a_macro_defines_are_named_at_the_invocation() {
        let src = "#define UNARY(name, e) \\\n  __global__ void name##_kernel(const float *x, float *y, int n) { \\\n    int i = threadIdx.x; if (i < n) y[i] = (e); }\n\
                   UNARY(neg, -x[i])\nUNARY(twice, 2.0f * x[i])\n\
                   __global__ void plain(float *y) { y[0] = 1; }\n";
        let e = errors(src);
        assert_eq!(e.len(), 2, "{e:?}");
        assert!(
            e[0].contains("m.cu:4:1")
                && e[0].contains("kernel `neg_kernel` defined by the macro `UNARY`"),
            "{e:?}"
        );
        assert!(
            e[1].contains("m.cu:5:1") && e[1].contains("`twice_kernel`"),
            "{e:?}"
        );
    }

    #[test]
    fn qualifier_macros_and_calls_inside_kernels_are_not_flagged() {
        let src = "#define GLOBAL __global__\n#define LB(n) __launch_bounds__(n)\n\
                   #define BODY(v) { v[0] = 1; }\n\
                   LB(256) GLOBAL void k(float *y) { y[0] = 1; }\n";
        assert!(errors(src).is_empty(), "{:?}", errors(src));
    }
}
