//! Tells a syntax error that is really an unknown type name apart: in
//! `real_2_t *a` or `real_2_t x;` the parser, not knowing `real_2_t` as a
//! type, stops at the declarator. Such a name usually comes from a header
//! copper was not given or a `-D` it was not told.

/// C and CUDA words that may stand before a declarator without being a
/// type name someone forgot to declare.
const NOT_TYPE_NAMES: &[&str] = &[
    "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else",
    "enum", "extern", "float", "for", "goto", "if", "inline", "int", "long", "register",
    "restrict", "return", "short", "signed", "sizeof", "static", "struct", "switch", "typedef",
    "union", "unsigned", "void", "volatile", "while", "bool", "if",
];

/// When the syntax error at byte `at` of `text` is at or follows a name
/// that reads as an undeclared type (a name where a declaration starts,
/// then a declarator: another name, or `*`/`&` and a name), that name's
/// byte offset and text. The parser stops after the name in `real_t *a`
/// at a declaration's start, and at the name itself after `int n,`.
pub fn before_declarator(text: &str, at: usize) -> Option<(usize, &str)> {
    let head = text.get(..at)?.trim_end();
    let start = head
        .char_indices()
        .rev()
        .find(|(_, c)| !(c.is_ascii_alphanumeric() || *c == '_'))
        .map_or(0, |(i, c)| i + c.len_utf8());
    let after = text.get(at..)?;
    let len = after
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(after.len());
    unknown_type_at(text, start, head.len()).or_else(|| unknown_type_at(text, at, at + len))
}

/// The name at bytes `start..end` of `text` when it stands where a
/// declaration starts and a declarator follows it.
fn unknown_type_at(text: &str, start: usize, end: usize) -> Option<(usize, &str)> {
    let name = text.get(start..end)?;
    if !super::lex::is_identifier(name) || NOT_TYPE_NAMES.contains(&name) {
        return None;
    }
    // Where a declaration starts: after `;`, a brace, `(` or `,`, or
    // after a qualifier word (not after `.`, `->`, an operator).
    let before = text[..start].trim_end();
    let word_before = before
        .rsplit(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .next()
        .unwrap_or("");
    let starts_declaration = before.is_empty()
        || before.ends_with([';', '{', '}', '(', ','])
        || matches!(
            word_before,
            "const" | "volatile" | "static" | "register" | "extern"
        );
    let rest = text
        .get(end..)?
        .trim_start_matches(['*', '&', ' ', '\t', '\n', '\r']);
    let next_len = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    let next = &rest[..next_len];
    let declarator = super::lex::is_identifier(next) && !NOT_TYPE_NAMES.contains(&next);
    (starts_declaration && declarator).then_some((start, name))
}

/// The message for an unknown type `name`.
pub fn message(name: &str) -> String {
    format!("unknown type `{name}`: pass `-D` or `-I` (as to nvcc)")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cuda::parse::parse_source;
    use crate::source::SourceFile;

    #[test]
    fn a_name_before_a_declarator_is_an_unknown_type() {
        assert_eq!(
            before_declarator("f(real_2_t *a)", 11),
            Some((2, "real_2_t"))
        );
        assert_eq!(before_declarator("{ vec3 v; }", 7), Some((2, "vec3")));
        assert_eq!(before_declarator("{ int 3x; }", 6), None);
        assert_eq!(before_declarator("{ const x; }", 8), None);
        // A missing `;` after a member is no type.
        assert_eq!(before_declarator("{ i = t.x\n if (i) {} }", 11), None);
        assert_eq!(before_declarator("(const vec3 *p)", 12), Some((7, "vec3")));
        // A character of several bytes before the name (a `-D` value).
        assert_eq!(before_declarator("'¡vec3 v;", 8), None);
        assert_eq!(before_declarator("{'¡;vec3 v;", 10), Some((5, "vec3")));
        assert_eq!(before_declarator("x = '¡ s;", 7), None);
        // The parser stops at the name itself after another parameter.
        assert_eq!(
            before_declarator("f(int n, real_t *a)", 9),
            Some((9, "real_t"))
        );
        assert_eq!(before_declarator("f(int n, a + b)", 9), None);
    }

    #[test]
    fn an_unknown_type_is_named_where_it_is_and_the_other_kernels_are_read() {
        let src = "__global__ void a(real_2_t *p, int n) {\n    p[0] = p[1];\n}\n\
                   __global__ void b(float *p) {\n    vec3_t v;\n    p[0] = 1;\n}\n\
                   __global__ void c(float *p) { p[threadIdx.x] = 2; }\n";
        let f = parse_source(SourceFile::new("u.cu", src));
        let shown: Vec<String> = f.all_diagnostics().iter().map(|d| d.render()).collect();
        let all = shown.join("\n");
        assert!(
            all.contains(
                "u.cu:1:19: error[syntax]: unknown type `real_2_t`: pass `-D` or `-I` (as to nvcc)"
            ),
            "{all}"
        );
        assert!(
            all.contains("u.cu:5:5: error[syntax]: unknown type `vec3_t`"),
            "{all}"
        );
        assert!(crate::ir::lower::lower_kernel(&f, "c").is_ok());
    }
}
