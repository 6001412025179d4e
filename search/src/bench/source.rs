//! The user's file as the benchmark program carries it: every byte kept
//! (host helpers, classes, macros, globals and device functions all still
//! compile as they did), the file's own `main` renamed so the program's
//! `main` can take its place, and each optimized kernel printed right
//! after its original, where the same macros and declarations are in scope.

use copper::cuda::ast::Function;
use copper::cuda::lex::{tokenize, TokKind};
use copper::cuda::parse::ParsedFile;
use copper::cuda::print;
use copper::cuda::rewrite::splice;
use copper::source::Span;

use super::error::BenchError;

/// What the file's own `main` is renamed to.
pub const RENAMED_MAIN: &str = "copper_original_main";

/// The file's text with `main` renamed and, for each `(original, f)` of
/// `insertions`, the function `f` (already renamed) inserted after the
/// kernel called `original`.
pub fn program_source(
    parsed: &ParsedFile,
    insertions: &[(&str, &Function)],
) -> Result<String, BenchError> {
    let text = &parsed.source.text;
    let mut edits: Vec<(Span, String)> = main_names(text)
        .into_iter()
        .map(|s| (s, RENAMED_MAIN.to_string()))
        .collect();
    for (original, f) in insertions {
        let item = parsed
            .extracted
            .functions
            .iter()
            .find(|i| i.name == *original)
            .ok_or_else(|| BenchError::NoKernel(original.to_string()))?;
        let end = item.span.end;
        edits.push((
            Span::new(end, end),
            format!(
                "\n\n// {}: `{original}` as `copper optimize` rewrote it.\n{}",
                f.name,
                print::function(f)
            ),
        ));
    }
    Ok(splice(text, &edits))
}

/// Where the name of every file-scope `main` function is (its definition
/// and any declaration).
fn main_names(text: &str) -> Vec<Span> {
    let toks = tokenize(text);
    let mut depth = 0usize;
    let mut out = Vec::new();
    for (i, t) in toks.iter().enumerate() {
        match t.text(text) {
            "{" => depth += 1,
            "}" => depth = depth.saturating_sub(1),
            "main"
                if depth == 0
                    && t.kind == TokKind::Ident
                    && toks.get(i + 1).is_some_and(|n| n.is(text, "(")) =>
            {
                out.push(Span::new(t.start, t.end));
            }
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use copper::cuda::parse::parse_source;
    use copper::source::SourceFile;

    fn parsed(text: &str) -> ParsedFile {
        parse_source(SourceFile::new("k.cu", text))
    }

    #[test]
    fn renames_main_only_at_file_scope() {
        let text = "int main(int argc, char **argv);\nstruct S { int main(); };\n\
                    // main( in a comment\nint main(int argc, char **argv) { return main2(); }\n";
        let out = program_source(&parsed(text), &[]).unwrap();
        assert_eq!(out.matches(RENAMED_MAIN).count(), 2, "{out}");
        assert!(out.contains("struct S { int main(); };"));
        assert!(out.contains("// main( in a comment"));
        assert!(out.contains("main2()"));
    }

    #[test]
    fn inserts_the_optimized_kernel_after_the_original() {
        let text = "#define N 4\n__global__ void k(int *a) { a[threadIdx.x] = N; }\nint main() { return 0; }\n";
        let p = parsed(text);
        let mut f = p.function("k").unwrap().clone();
        f.name = "k_copper".into();
        let out = program_source(&p, &[("k", &f)]).unwrap();
        let original = out.find("void k(").unwrap();
        let optimized = out.find("void k_copper(").unwrap();
        let main = out.find(RENAMED_MAIN).unwrap();
        assert!(original < optimized && optimized < main, "{out}");
        assert!(program_source(&p, &[("nope", &f)]).is_err());
    }
}
