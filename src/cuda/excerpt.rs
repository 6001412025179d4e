//! The part of a file one kernel needs: the kernel, the device functions
//! it may call (by name, transitively, also through macros), every macro
//! and `#undef` (in place, so each function sees the macros in force at its
//! position), `#pragma`, `#include`, type declaration, template struct
//! and device global. Searching a kernel of a
//! file with thousands works on its excerpt, so each candidate's re-parse
//! and each cached analysis costs what the kernel costs, not the file.
//! Positions in an excerpt are reported as lines of the original file
//! ([`SourceFile::excerpt`]).

use std::collections::{HashMap, HashSet};

use super::ast::FnKind;
use super::extract::FunctionItem;
use super::lex::is_identifier;
use super::parse::{parse_source, ParsedFile};
use crate::source::{SourceFile, Span};

/// Builds excerpts of one file (its index of device functions made once).
pub struct Excerpts<'a> {
    file: &'a ParsedFile,
    /// Device functions by name (overloads and namespaces share one).
    device: HashMap<&'a str, Vec<&'a FunctionItem>>,
    /// Identifiers of every macro body (a macro may call a function).
    macro_idents: Vec<&'a str>,
}

impl<'a> Excerpts<'a> {
    /// The index of `file`.
    pub fn new(file: &'a ParsedFile) -> Excerpts<'a> {
        let mut device: HashMap<&str, Vec<&FunctionItem>> = HashMap::new();
        for f in file
            .extracted
            .functions
            .iter()
            .filter(|f| f.kind != FnKind::Global)
        {
            device.entry(f.name.as_str()).or_default().push(f);
        }
        let macro_idents = file
            .extracted
            .macros
            .iter()
            .flat_map(|m| m.body.iter().map(String::as_str))
            .filter(|t| is_identifier(t))
            .collect();
        Excerpts {
            file,
            device,
            macro_idents,
        }
    }

    /// The excerpt of the file kernel `name` needs, parsed; `None` when
    /// there is no such kernel.
    pub fn kernel(&self, name: &str) -> Option<ParsedFile> {
        let ex = &self.file.extracted;
        let kernel = ex
            .functions
            .iter()
            .find(|f| f.name == name && f.kind == FnKind::Global)?;
        let text = &self.file.source.text;
        let mut spans: Vec<Span> = vec![kernel.span];
        // Macros apply from where they are defined to an `#undef`.
        spans.extend(ex.macros.iter().map(|m| m.span));
        spans.extend(ex.undefs.iter().copied());
        spans.extend(ex.pragmas.iter().map(|p| p.span));
        // What the file includes is entered where it is included.
        spans.extend(ex.includes.iter().copied());
        spans.extend(ex.scope_marks.iter().copied());
        spans.extend(ex.types.iter().map(|t| t.span));
        spans.extend(ex.globals.iter().map(|g| g.span));
        spans.extend(ex.enums.iter().map(|e| e.span));
        spans.extend(ex.template_structs.iter().copied());
        // Device functions reachable by name.
        let mut seen: HashSet<&str> = HashSet::new();
        let mut todo: Vec<&str> = identifiers(&text[kernel.span.start..kernel.span.end]);
        todo.extend(self.macro_idents.iter().copied());
        for s in ex
            .types
            .iter()
            .map(|t| t.span)
            .chain(ex.globals.iter().map(|g| g.span))
        {
            todo.extend(identifiers(&text[s.start..s.end]));
        }
        while let Some(id) = todo.pop() {
            let Some(fs) = self.device.get(id) else {
                continue;
            };
            if seen.insert(id) {
                for f in fs {
                    spans.push(f.span);
                    todo.extend(identifiers(&text[f.span.start..f.span.end]));
                }
            }
        }
        let (excerpt, line_map) = whole_lines(&self.file.source, &mut spans);
        let mut parsed = parse_source(self.file.source.excerpt(excerpt, line_map));
        // The host code is not in the excerpt: the kernel's launches, as
        // the whole file resolved them.
        parsed.launches = self
            .file
            .launches
            .iter()
            .filter(|l| l.kernel == name)
            .cloned()
            .collect();
        Some(parsed)
    }
}

/// The lines of the file the spans touch, in order, merged: the
/// excerpt's text and its line map (each region's first line there and
/// in the file, 0-based).
fn whole_lines(source: &SourceFile, spans: &mut [Span]) -> (String, Vec<(usize, usize)>) {
    let text = &source.text;
    spans.sort();
    let mut regions: Vec<(usize, usize)> = Vec::new();
    for s in spans.iter() {
        let (a, b) = (s.start.min(text.len()), s.end.min(text.len()));
        let start = text[..a].rfind('\n').map_or(0, |i| i + 1);
        let end = text[b..].find('\n').map_or(text.len(), |i| b + i + 1);
        match regions.last_mut() {
            Some(last) if start <= last.1 => last.1 = last.1.max(end),
            _ => regions.push((start, end)),
        }
    }
    let mut out = String::new();
    let mut map = Vec::new();
    let mut here = 0;
    for (start, end) in regions {
        map.push((here, source.line_col(start).0 - 1));
        let part = &text[start..end];
        out.push_str(part);
        if !part.ends_with('\n') {
            out.push('\n');
        }
        here += part.matches('\n').count() + usize::from(!part.ends_with('\n'));
    }
    (out, map)
}

/// The identifiers of a piece of source (a cheap scan; comments and
/// strings included, which at worst keeps a function more).
fn identifiers(text: &str) -> Vec<&str> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|t| is_identifier(t))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cuda::parse::parse_source;

    #[test]
    fn an_excerpt_holds_what_the_kernel_needs_at_its_lines() {
        let src = "#define N 4\n\
                   __device__ int twice(int x) { return 2 * x; }\n\
                   __device__ int unused(int x) { return x; }\n\
                   __global__ void a(int *p) { p[0] = 1; }\n\
                   \n\
                   __global__ void b(int *p) {\n    p[threadIdx.x] = twice(N);\n}\n";
        let file = parse_source(SourceFile::new("f.cu", src));
        let e = Excerpts::new(&file).kernel("b").unwrap();
        assert!(e.source.text.contains("twice"), "{}", e.source.text);
        assert!(!e.source.text.contains("unused"), "{}", e.source.text);
        assert!(!e.source.text.contains("void a("), "{}", e.source.text);
        let f = e.function("b").unwrap();
        assert_eq!(e.source.line_col(f.meta.span.start), (6, 1));
        assert_eq!(e.source.line_text(7), "    p[threadIdx.x] = twice(N);");
        assert!(crate::ir::lower::lower_kernel(&e, "b").is_ok());
    }

    #[test]
    fn an_excerpt_keeps_the_namespaces_of_what_it_holds() {
        let src = "namespace geo {\n\
                   constexpr int R = 2;\n\
                   __device__ int clamp(int i) { return i < R ? i : R; }\n\
                   }  // namespace geo\n\
                   __device__ int clamp(int i) { return 0; }\n\
                   __global__ void k(int *p) { p[threadIdx.x] = geo::clamp(threadIdx.x) + geo::R; }\n";
        let file = parse_source(SourceFile::new("f.cu", src));
        let e = Excerpts::new(&file).kernel("k").unwrap();
        assert!(e.all_diagnostics().is_empty(), "{:?}", e.all_diagnostics());
        let k = crate::ir::lower::lower_kernel(&e, "k");
        assert!(
            k.is_ok(),
            "{:?}\n{}",
            k.err().map(|d| d.message),
            e.source.text
        );
    }
}
