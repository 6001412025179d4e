//! Kernels a macro defines: `UNARY(neg, -x[i])` at file scope, with
//! `#define UNARY(name, e) __global__ void name##_kernel(…) { … }`.
//! Each such invocation (in the file or a header it includes) is
//! expanded with the macros in force there, and the expansion is read as
//! text of its own ([`IncludedKind::Expansion`]) whose every position is
//! reported at the invocation. An invocation whose expansion cannot be
//! made (too large, too deep, past the file's expansion budget) gets an
//! error naming the kernels it defines: they are never dropped silently.

use std::collections::HashSet;

use super::lex::{tokenize, TokKind};
use super::limits::MAX_FILE_EXPANSION;
use super::macros::{MacroDef, MacroTable};
use super::timeline::Timeline;
use crate::diag::{Diagnostic, Severity};
use crate::source::{IncludedKind, SourceFile};

/// A file-scope invocation of a macro whose expansion defines a
/// `__global__` function with a body.
pub(super) struct Invocation {
    /// Offset of the macro's name.
    pub(super) offset: usize,
    /// The macro invoked.
    pub(super) name: String,
    /// The expansion's text (its tokens, spaced), or why there is none
    /// and the kernels it would define.
    pub(super) text: Result<String, (String, Vec<String>)>,
}

/// The file-scope invocations in the file and its headers of macros
/// whose expansion defines a kernel, outside `functions` (each the offset
/// of a function's name and its end: what precedes the name, such as
/// `LB(256) __global__ void k`, may be an invocation). Expansions share
/// the file's [`MAX_FILE_EXPANSION`] tokens.
pub(super) fn invocations(
    source: &SourceFile,
    macros: &Timeline,
    functions: &[(usize, usize)],
) -> Vec<Invocation> {
    let inside_function = |offset: usize| {
        functions
            .iter()
            .any(|&(name, end)| name <= offset && offset < end)
    };
    let headers = (source.included().files.iter())
        .filter(|f| f.kind == IncludedKind::Header)
        .map(|f| (f.text.as_str(), f.base));
    let mut left = MAX_FILE_EXPANSION;
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
            if !defines_kernel(&table, def) {
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
            let text = match table.expand_tokens(&words) {
                Ok(e) if e.len() > left => Err((
                    format!("macro expansions in this file are over {MAX_FILE_EXPANSION} tokens"),
                    kernel_names(&e),
                )),
                Ok(e) => {
                    left -= e.len();
                    Ok(e.join(" "))
                }
                Err(e) => Err((e.to_string(), Vec::new())),
            };
            out.push(Invocation {
                offset: base + t.start,
                name: def.name.clone(),
                text,
            });
            i = end.max(i);
        }
    }
    out
}

/// Adds the expansion of each invocation read to `source` and
/// `original` (its text before conditionals were compiled, which a parsed
/// file keeps) and to `macros` (seeing the macros at the invocation).
pub(super) fn add_expansions(
    invocations: &[Invocation],
    source: &mut SourceFile,
    original: &mut SourceFile,
    macros: &mut Timeline,
) {
    for inv in invocations {
        if let Ok(text) = &inv.text {
            let base = source.push_expansion(&inv.name, inv.offset, text.clone());
            original.push_expansion(&inv.name, inv.offset, text.clone());
            macros.expansion(base, base + text.len(), inv.offset);
        }
    }
}

/// An error for each invocation whose expansion could not be made, naming
/// the kernels it defines. (A kernel of an expansion made but not read is
/// reported as the file's own are.)
pub(super) fn unread(source: &SourceFile, invocations: &[Invocation]) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for inv in invocations {
        let Err((why, names)) = &inv.text else {
            continue;
        };
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
            inv.offset,
            format!(
                "{what} defined by the macro `{}` is not listed or analyzed: {why} \
                 (expand the macro by hand to analyze it)",
                inv.name
            ),
        ));
    }
    out
}

/// How deep [`defines_kernel`] follows macros invoked in macros' bodies.
const MAX_BODY_DEPTH: usize = 8;

/// Whether `def`'s body, with those of the macros it names (to
/// [`MAX_BODY_DEPTH`]), holds `__global__` and a `{`: its expansion may
/// define a kernel (`BINARY(add, +)` with `#define BINARY(n, op)
/// ELEMENTWISE(n##_kernel, a[i] op b[i])`).
fn defines_kernel(table: &MacroTable, def: &MacroDef) -> bool {
    let (mut global, mut brace) = (false, false);
    let mut seen = HashSet::from([def.name.as_str()]);
    let mut level = vec![def];
    for _ in 0..MAX_BODY_DEPTH {
        let mut next = Vec::new();
        for d in level {
            for t in &d.body {
                global |= t == "__global__";
                brace |= t == "{";
                if let Some(inner) = table.get(t).filter(|i| seen.insert(i.name.as_str())) {
                    next.push(inner);
                }
            }
        }
        if global && brace {
            return true;
        }
        level = next;
    }
    false
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

    /// Each kernel read from an expansion: its name, the line and column
    /// it is reported at, whether it parsed.
    fn kernels(src: &str) -> Vec<(String, usize, usize, bool)> {
        let parsed = parse_source(SourceFile::new("m.cu", src));
        parsed
            .functions
            .iter()
            .map(|f| {
                let (_, line, col) = parsed.source.locate(f.item.name_offset);
                (f.item.name.clone(), line, col, f.result.is_ok())
            })
            .collect()
    }

    const UNARY: &str = "#define UNARY(name, e) \\\n  __global__ void name##_kernel(const float *x, float *y, int n) { \\\n    int i = threadIdx.x; if (i < n) y[i] = (e); }\n";

    #[test]
    fn kernels_a_macro_defines_are_read_at_the_invocation() {
        let src = format!(
            "{UNARY}UNARY(neg, -x[i])\nUNARY(twice, 2.0f * x[i])\n\
             __global__ void plain(float *y) {{ y[0] = 1; }}\n"
        );
        assert!(errors(&src).is_empty(), "{:?}", errors(&src));
        let mut k = kernels(&src);
        k.sort();
        assert_eq!(
            k,
            [
                ("neg_kernel".to_string(), 4, 1, true),
                ("plain".to_string(), 6, 17, true),
                ("twice_kernel".to_string(), 5, 1, true),
            ]
        );
    }

    #[test]
    fn a_macro_invoking_another_reads_the_kernels_it_defines() {
        let src = "#define IDX(i) (i)\n\
                   #define EW(k, e) __global__ void k(const float *a, float *c, int n) { int i = threadIdx.x; if (i < n) c[IDX(i)] = e; }\n\
                   #define SQUARE(name) EW(name##_sq, a[IDX(i)] * a[IDX(i)])\n\
                   SQUARE(f)\n";
        assert_eq!(kernels(src), [("f_sq".to_string(), 4, 1, true)]);
    }

    #[test]
    fn an_error_in_an_expansion_is_reported_at_the_invocation() {
        let src = "#define BAD(name) __global__ void name(float *a) { a[0] = ; }\n\nBAD(b)\n";
        let parsed = parse_source(SourceFile::new("m.cu", src));
        let d = parsed.all_diagnostics();
        assert!(
            d.iter().any(|d| d.line == 3
                && d.col == 1
                && d.message.contains("(in the expansion of `BAD`)")),
            "{d:?}"
        );
    }

    #[test]
    fn an_expansion_too_large_keeps_the_unread_error() {
        let src = "#define X4(a) a a a a\n#define X16(a) X4(X4(a))\n#define X256(a) X16(X16(a))\n\
                   #define K(name) __global__ void name(float *y) { X256(X16(y[0] += 1.0f;)) }\nK(huge)\n";
        let e = errors(src);
        assert_eq!(e.len(), 1, "{e:?}");
        assert!(
            e[0].contains("m.cu:5:1")
                && e[0].contains("defined by the macro `K` is not listed or analyzed")
                && e[0].contains("expands to more than"),
            "{e:?}"
        );
        assert!(kernels(src).is_empty());
    }

    #[test]
    fn qualifier_macros_and_calls_inside_kernels_are_not_flagged() {
        let src = "#define GLOBAL __global__\n#define LB(n) __launch_bounds__(n)\n\
                   #define BODY(v) { v[0] = 1; }\n\
                   LB(256) GLOBAL void k(float *y) { y[0] = 1; }\n";
        assert!(errors(src).is_empty(), "{:?}", errors(src));
    }
}
