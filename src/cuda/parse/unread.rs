//! Diagnostics for what a parse leaves unread: kernels whose declaration
//! copper could not read, and bytes that are not UTF-8 in code.

use std::collections::HashSet;

use super::super::kernel_scan::kernel_definitions;
use super::super::lex::{tokenize, TokKind};
use super::super::parsed_function::ParsedFunction;
use super::super::qualifier_macros::QualifierMacros;
use super::super::template;
use crate::diag::Diagnostic;
use crate::diag::Severity;
use crate::source::{IncludedKind, SourceFile};

/// An error for each `__global__` definition of the compiled text (the
/// file's and its headers') that is not among `functions`: no kernel
/// goes missing without a word.
pub(super) fn unread_kernels(
    source: &SourceFile,
    functions: &[ParsedFunction],
    qualifiers: &QualifierMacros,
) -> Vec<Diagnostic> {
    let known: HashSet<&str> = functions
        .iter()
        .map(|f| template::split_name(&f.item.name).map_or(f.item.name.as_str(), |(b, _)| b))
        .collect();
    let headers = (source.included().files.iter())
        .filter(|f| matches!(f.kind, IncludedKind::Header | IncludedKind::Expansion))
        .map(|f| (f.text.as_str(), f.base));
    std::iter::once((source.text.as_str(), 0))
        .chain(headers)
        .flat_map(|(text, base)| {
            kernel_definitions(text, qualifiers)
                .into_iter()
                .map(move |d| (d, base))
        })
        .filter(|(d, _)| !known.contains(d.name.as_str()))
        .map(|(d, base)| {
            source.diagnostic(
                Severity::Error,
                "unread",
                base + d.offset,
                format!(
                    "kernel `{}` is defined here but copper could not read its declaration: \
                     it is not listed or analyzed",
                    d.name
                ),
            )
        })
        .collect()
}

/// Diagnostics for bytes that were not UTF-8 and are in code (not in a
/// comment, string or character literal).
pub(super) fn invalid_bytes_in_code(source: &SourceFile) -> Vec<Diagnostic> {
    if source.invalid_utf8.is_empty() {
        return Vec::new();
    }
    let toks = tokenize(&source.text);
    source
        .invalid_utf8
        .iter()
        .filter(|&&o| {
            let i = toks.partition_point(|t| t.end <= o);
            toks.get(i).is_some_and(|t| {
                t.start <= o && !matches!(t.kind, TokKind::Str | TokKind::Char | TokKind::Directive)
            })
        })
        .take(1)
        .map(|&o| {
            source.diagnostic(
                Severity::Error,
                "encoding",
                o,
                "a byte that is not UTF-8 in code (shown as U+FFFD); copper reads such bytes only in comments and strings",
            )
        })
        .collect()
}
