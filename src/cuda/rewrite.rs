//! Splices reprinted functions into the original file text; every byte
//! outside the replaced functions is kept.

use super::ast::{ExprKind, Function};
use super::coop_groups;
use super::edit::{self, EditRefused};
use super::include;
use super::lex::{tokenize, TokKind};
use super::parse::ParsedFile;
use super::print;
use super::template_structs;
use super::visit;
use crate::source::Span;

/// Why the function `name` of `file` cannot be rewritten, if it cannot: a
/// macro's expansion defines it (there is no text to edit), its
/// text is in a header (the edit would land in another file; `optimize`
/// searches a project header's kernels in the header, read as a file, and
/// those left to the includer are templates and kernels that do not read
/// there alone), it uses
/// cooperative groups (read as what they stand for), or it has `#if`
/// branches inside (a reprint would keep only the branch compiled).
pub fn refusal(file: &ParsedFile, name: &str) -> Option<String> {
    let f = file.functions.iter().find(|f| f.item.name == name)?;
    if let Some((macro_name, at)) = file.source.expansion_at(f.item.span.start) {
        let (path, line, _) = file.source.locate(at);
        return Some(format!(
            "`{name}` is defined by the macro `{macro_name}` at {}:{line}; apply the change in the macro by hand",
            path.display()
        ));
    }
    if !include::in_user_file(f.item.span) {
        let (path, line, _) = file.source.locate(f.item.span.start);
        return Some(format!(
            "`{name}` is defined in {}:{line}, a header: copper rewrites a header's kernel in the header only when it reads there on its own and is no template its includer instantiates, so no rewrite is proposed",
            path.display()
        ));
    }
    let text = file.source.slice(f.item.span);
    if let Some(t) = named_template_structs(file, text).first() {
        return Some(format!("`{name}` uses the template struct (or alias of an instance) `{t}`, whose instances the rewrites do not follow: no rewrite is proposed"));
    }
    if f.result.as_ref().is_ok_and(calls_members) {
        return Some(format!("`{name}` calls member functions of structs, which the rewrites do not follow: no rewrite is proposed"));
    }
    // An `#include` inside a function is refused when it is read.
    if coop_groups::uses_groups(text) {
        return Some(format!("`{name}` uses cooperative groups, which copper reads as the barriers, indices and shuffles they stand for: a reprint would write those, so no rewrite is proposed"));
    }
    has_conditionals(text).then(|| {
        format!("`{name}` has `#if` branches inside: a rewrite would keep only the branch compiled, so none is proposed")
    })
}

/// The template structs (`Complex`) and the aliases of their instances
/// (`FloatPair` for `using FloatPair = Complex<float>;`) that `text`, a
/// function of `file`, names: a reprint would write the instances' struct
/// names (`Complex__float`), so such a function is kept as written.
pub fn named_template_structs(file: &ParsedFile, text: &str) -> Vec<String> {
    let mut names: std::collections::HashSet<String> = std::collections::HashSet::new();
    let mut idents: std::collections::HashSet<&str> = std::collections::HashSet::new();
    for f in (file.source.included().files.iter())
        .filter(|f| f.kind == crate::source::IncludedKind::Expansion)
    {
        let (Some((name, _)), Some(ident)) = (
            f.name.split_once('<'),
            template_structs::struct_tag(&f.text),
        ) else {
            continue;
        };
        names.insert(name.to_string());
        idents.insert(ident);
    }
    for (alias, ty) in &file.typedefs {
        if matches!(&ty.base, super::ast::BaseType::Named(n) if idents.contains(n.as_str())) {
            names.insert(alias.clone());
        }
    }
    let mut found: Vec<String> = (tokenize(text).iter())
        .map(|t| t.text(text))
        .filter(|w| names.contains(*w))
        .map(str::to_string)
        .collect();
    found.sort();
    found.dedup();
    found
}

/// Whether a function calls a struct's member function (`a.dot(b)`).
fn calls_members(f: &Function) -> bool {
    let mut found = false;
    for s in &f.body {
        visit::visit_stmt_exprs(s, &mut |e| {
            found |= matches!(e.kind, ExprKind::Method { .. });
        });
    }
    found
}

/// Why a function whose text is `text` is kept as written by a reprint,
/// if it is: its `#if` branches not compiled would be dropped, or its
/// cooperative groups would be written as the barriers, indices and
/// shuffles copper reads them as.
pub fn kept_as_written(text: &str) -> Option<&'static str> {
    if has_conditionals(text) {
        Some("it has `#if` branches inside, and a reprint keeps only the branch compiled")
    } else if coop_groups::uses_groups(text) {
        Some("it uses cooperative groups, which a reprint would write as the barriers, indices and shuffles copper reads them as")
    } else {
        None
    }
}

/// Whether a function's text has `#if`/`#ifdef`/`#ifndef`/`#elif`/`#else`/
/// `#endif` lines: its AST holds only the branches compiled.
fn has_conditionals(text: &str) -> bool {
    has_directive(text, &["if", "elif", "else", "endif"])
}

/// Whether `text` has a preprocessor line starting with one of `words`.
fn has_directive(text: &str, words: &[&str]) -> bool {
    tokenize(text).iter().any(|t| {
        t.kind == TokKind::Directive && {
            let word = t.text(text)[1..].trim_start();
            words.iter().any(|w| word.starts_with(w))
        }
    })
}

/// The text of `file` with `lines` as `// copper: …` comments above the
/// first statement of function `name`'s body, indented as it is, in the
/// file's line endings: where a rewrite says what it assumes of its
/// callers. `None` when the body has no statement at the start of a line
/// of the file.
pub fn comment_body(file: &ParsedFile, name: &str, lines: &[String]) -> Option<String> {
    let first = file.function(name)?.body.first()?.meta.span;
    let text = &file.source.text;
    if first.is_synthetic() || first.start > text.len() {
        return None;
    }
    let line_start = text.get(..first.start)?.rfind('\n').map_or(0, |i| i + 1);
    let before = text.get(line_start..first.start)?;
    let indent = &before[..before.len() - before.trim_start_matches([' ', '\t']).len()];
    // The statement starts its line: only its own qualifiers
    // (`__shared__ `, which its place may leave out) stand before it.
    let qualifiers = &before[indent.len()..];
    if !qualifiers
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ' ' || c == '\t')
    {
        return None;
    }
    let eol = if text.contains("\r\n") { "\r\n" } else { "\n" };
    let comment: String = lines
        .iter()
        .map(|l| format!("{indent}// copper: {}{eol}", l.replace(['\r', '\n'], " ")))
        .collect();
    Some(splice(
        text,
        &[(Span::new(line_start, line_start), comment)],
    ))
}

/// Replaces each span of `text` by its new text. Spans must not overlap.
pub fn splice(text: &str, replacements: &[(Span, String)]) -> String {
    let mut sorted: Vec<&(Span, String)> = replacements.iter().collect();
    sorted.sort_by_key(|(s, _)| s.start);
    let mut out = String::with_capacity(text.len());
    let mut pos = 0;
    for (span, new) in sorted {
        debug_assert!(
            span.start >= pos && span.end <= text.len(),
            "overlapping replacement"
        );
        out.push_str(&text[pos..span.start]);
        out.push_str(new);
        pos = span.end;
    }
    out.push_str(&text[pos..]);
    out
}

/// The file text with each function in `changed` reprinted in place of the
/// function of the same name, in copper's style (`copper fmt --whole`).
/// Functions that are not in the file (in a header, say) are ignored: only
/// the user's file is ever rewritten. So are functions a reprint would not
/// give back as written ([`kept_as_written`], or naming a template
/// struct: [`named_template_structs`]). An
/// instantiation of a template replaces the template's text, unless an
/// earlier function of `changed` (the template, another instantiation)
/// did.
pub fn rewrite_functions(file: &ParsedFile, changed: &[Function]) -> String {
    let mut replacements: Vec<(Span, String)> = Vec::new();
    for f in changed {
        let Some(item) = file.item(&f.name).filter(|i| include::in_user_file(i.span)) else {
            continue;
        };
        let text = file.source.slice(item.span);
        if kept_as_written(text).is_some()
            || !named_template_structs(file, text).is_empty()
            || replacements.iter().any(|(s, _)| *s == item.span)
        {
            continue;
        }
        replacements.push((item.span, print::function(f)));
    }
    splice(&file.source.text, &replacements)
}

/// The file text with each function in `changed` (a rewrite of the
/// function of the same name; for an instantiation, of its template's
/// text, once) put in its place as an edit of its text:
/// what the rewrite kept stays byte for byte ([`edit`]). Fails with the
/// reason when an edit would print code a macro produces. Functions not
/// in the user's file (a header's, a macro expansion's) are left out.
pub fn edit_functions(file: &ParsedFile, changed: &[Function]) -> Result<String, EditRefused> {
    let mut replacements: Vec<(Span, String)> = Vec::new();
    for f in changed {
        // Text outside the user's file (a header, a macro's expansion)
        // is never edited.
        let Some(item) = file.item(&f.name).filter(|i| include::in_user_file(i.span)) else {
            continue;
        };
        if replacements.iter().any(|(s, _)| *s == item.span) {
            // Another instantiation of the same template.
            continue;
        }
        let text = match file.function(&f.name) {
            Some(original) if original.meta.span == item.span => {
                edit::function_text(&file.source.text, original, f, &file.extracted.macros)
                    .map_err(|r| r.at_line(file.source.line_col(r.at).0))?
            }
            _ => print::function(f),
        };
        replacements.push((item.span, text));
    }
    Ok(splice(&file.source.text, &replacements))
}

/// The file text with the functions named in `versions` replaced by their
/// text in another version of the file (`(file, name)`: where the search
/// left each kernel), and the replacements `host` of text outside the
/// functions made (launches exchanged with their kernels).
pub fn transplant(
    file: &ParsedFile,
    versions: &[(&ParsedFile, &str)],
    host: &[(Span, String)],
) -> String {
    let mut replacements: Vec<(Span, String)> = Vec::new();
    for (other, name) in versions {
        let (Some(item), Some(theirs)) = (file.item(name), other.item(name)) else {
            continue;
        };
        let Some(text) = other.source.text.get(theirs.span.start..theirs.span.end) else {
            continue;
        };
        // Instantiations of one template share its text: the first wins.
        if !replacements.iter().any(|(s, _)| *s == item.span) {
            replacements.push((item.span, text.to_string()));
        }
    }
    replacements.extend_from_slice(host);
    splice(&file.source.text, &replacements)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splice_keeps_other_bytes() {
        let t = "aa BB cc DD ee";
        let out = splice(
            t,
            &[
                (Span::new(9, 11), "dddd".into()),
                (Span::new(3, 5), "b".into()),
            ],
        );
        assert_eq!(out, "aa b cc dddd ee");
    }

    /// The comment goes above the body's first statement, in its
    /// indentation (tabs kept) and the file's line endings.
    #[test]
    fn a_comment_goes_above_the_first_statement() {
        let src = "// head\r\n__global__ void k(int *a) {\r\n\t\ta[0] = 1;\r\n}\r\n";
        let file = crate::cuda::parse::parse_source(crate::source::SourceFile::new("k.cu", src));
        let out = comment_body(&file, "k", &["assumes blocks of 32×1×1".into()]).unwrap();
        assert_eq!(
            out,
            "// head\r\n__global__ void k(int *a) {\r\n\t\t// copper: assumes blocks of 32×1×1\r\n\t\ta[0] = 1;\r\n}\r\n"
        );
        let empty = crate::cuda::parse::parse_source(crate::source::SourceFile::new(
            "e.cu",
            "__global__ void e() {}\n",
        ));
        assert_eq!(comment_body(&empty, "e", &["x".into()]), None);
    }
}
