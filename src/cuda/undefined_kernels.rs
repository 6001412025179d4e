//! Launches of kernels the file does not define: a kernel defined in
//! another `.cu` file (separate compilation), or in a header copper did
//! not read. Nothing is lost silently: each kernel launched but not
//! defined gets a diagnostic at its first launch, a warning naming the
//! skipped `#include <…>` when the file has one (the likely cause: a
//! project header reached through `-I`), else a note saying where to run
//! copper instead.

use std::collections::{BTreeMap, HashMap, HashSet};

use super::launch::Launch;
use super::parsed_function::ParsedFunction;
use super::template;
use crate::diag::{Diagnostic, Severity};
use crate::shown::Shown;
use crate::source::SourceFile;

/// The name a launch or definition is known by: without template
/// arguments or namespaces (`ns::k<float>` is `k`).
fn base_name(name: &str) -> &str {
    let plain = template::split_name(name).map_or(name, |(b, _)| b);
    plain.rsplit("::").next().unwrap_or(plain).trim()
}

/// One diagnostic per kernel launched in `launches` that is not among
/// `functions`, at its first launch.
pub(super) fn undefined_kernels(
    source: &SourceFile,
    functions: &[ParsedFunction],
    launches: &[Launch],
) -> Vec<Diagnostic> {
    let defined: HashSet<&str> = functions.iter().map(|f| base_name(&f.item.name)).collect();
    // Each undefined kernel's first launch and how many launches it has,
    // counted in one pass.
    let mut by_name: HashMap<&str, (usize, usize)> = HashMap::new();
    for l in launches {
        let name = base_name(&l.kernel);
        if !defined.contains(name) {
            by_name.entry(name).or_insert((l.span.start, 0)).1 += 1;
        }
    }
    let undefined: BTreeMap<usize, (&str, usize)> = by_name
        .into_iter()
        .map(|(name, (at, count))| (at, (name, count)))
        .collect();
    let skipped: Vec<String> = (source.included().skipped.iter())
        .map(|(at, name)| {
            let (file, line, _) = source.locate(*at);
            format!("`<{name}>` ({}:{line})", file.shown())
        })
        .collect();
    undefined
        .into_iter()
        .map(|(at, (name, count))| {
            let times = match count {
                1 => String::new(),
                n => format!(" (and {} more times)", n - 1),
            };
            if skipped.is_empty() {
                source.diagnostic(
                    Severity::Note,
                    "undefined-kernel",
                    at,
                    format!(
                        "`{name}` is launched here{times} but defined neither in this file nor in a header copper read; if another file defines it, run copper on that file"
                    ),
                )
            } else {
                source.diagnostic(
                    Severity::Warning,
                    "undefined-kernel",
                    at,
                    format!(
                        "`{name}` is launched here{times} but not defined in what copper read; {} {} not found in the -I directories: pass -I DIR if it defines `{name}`",
                        skipped.join(", "),
                        if skipped.len() == 1 { "was" } else { "were" }
                    ),
                )
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cuda::include::{load, Preprocess};
    use crate::cuda::parse::parse_source;

    fn diagnostics(text: &str) -> Vec<Diagnostic> {
        let file = load(SourceFile::new("m.cu", text), &Preprocess::default());
        parse_source(file)
            .diagnostics
            .into_iter()
            .filter(|d| d.code == "undefined-kernel")
            .collect()
    }

    #[test]
    fn a_kernel_launched_but_not_defined_gets_a_note_once() {
        let d = diagnostics(
            "int main() { int *d;\n  foo<<<1, 32>>>(d);\n  foo<<<2, 32>>>(d);\n  ns::bar<float><<<1, 32>>>(d); }\n",
        );
        assert_eq!(d.len(), 2, "{d:?}");
        assert_eq!(d[0].severity, Severity::Note);
        assert!(
            d[0].message
                .contains("`foo` is launched here (and 1 more times)"),
            "{}",
            d[0].message
        );
        assert_eq!(d[0].line, 2);
        assert!(d[1].message.contains("`bar`"), "{}", d[1].message);
    }

    #[test]
    fn a_skipped_library_header_is_named_as_the_likely_cause() {
        let d = diagnostics(
            "#include <cstdio>\n#include <ops/kernels.h>\nint main() { int *d; scale<<<1, 32>>>(d); }\n",
        );
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(d[0].severity, Severity::Warning);
        assert!(
            d[0].message
                .contains("`<ops/kernels.h>` (m.cu:2) was not found"),
            "{}",
            d[0].message
        );
        assert!(!d[0].message.contains("cstdio"), "{}", d[0].message);
    }

    #[test]
    fn defined_kernels_and_templates_are_not_reported() {
        let d = diagnostics(
            "template <typename T> __global__ void k(T *a) { a[0] = 1; }\n__global__ void g(int *a) { a[0] = 1; }\nint main() { int *d; k<int><<<1, 32>>>(d); g<<<1, 1>>>(d); }\n",
        );
        assert!(d.is_empty(), "{d:?}");
    }
}
