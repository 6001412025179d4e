//! A rewritten function as an edit of the text it came from: every
//! statement the rewrite kept is copied from the file byte for byte (with
//! the comments and blank lines before it, its indentation, tabs and line
//! endings), compound statements whose head is unchanged keep their head
//! and are edited inside, and only new or changed statements are printed,
//! in the file's own indentation and line endings. A reviewer's diff then
//! shows what the rewrite changed and nothing else.
//!
//! The caller re-parses the result and compares it with the rewritten AST
//! (see `copper_transforms::check::materialize`); [`super::print`] stays the
//! fallback and the style of `copper fmt`.

use super::ast::{Function, Stmt, StmtKind};
use super::lex::tokenize;
use super::print;
use crate::source::Span;

/// How the file lays out its code.
struct Style {
    /// One level of indentation (`"\t"`, `"    "`, `"  "`).
    unit: String,
    /// `"\r\n"` or `"\n"`.
    newline: &'static str,
}

impl Style {
    fn of(src: &str) -> Style {
        let newline = if src.contains("\r\n") { "\r\n" } else { "\n" };
        let mut tabs = 0;
        let mut smallest_spaces = usize::MAX;
        for line in src.lines() {
            let indent: String = line
                .chars()
                .take_while(|c| *c == ' ' || *c == '\t')
                .collect();
            if indent.starts_with('\t') {
                tabs += 1;
            } else if !indent.is_empty() && indent.len() < line.len() {
                smallest_spaces = smallest_spaces.min(indent.len());
            }
        }
        let unit = if tabs > 0 && smallest_spaces == usize::MAX {
            "\t".to_string()
        } else if (2..=8).contains(&smallest_spaces) {
            " ".repeat(smallest_spaces)
        } else {
            "    ".to_string()
        };
        Style { unit, newline }
    }
}

/// The text of `candidate`, a rewrite of `original` (a function of `src`),
/// edited from `original`'s text. Falls back to printing the whole
/// function when its signature changed or its body cannot be located.
pub fn function_text(src: &str, original: &Function, candidate: &Function) -> String {
    let span = original.meta.span;
    let same_head = original.kind == candidate.kind
        && original.qualifiers == candidate.qualifiers
        && original.ret == candidate.ret
        && original.name == candidate.name
        && original.params == candidate.params;
    let style = Style::of(src);
    let Some(open) = body_open(src, span).filter(|_| same_head && !span.is_synthetic()) else {
        return reprinted(candidate, &style);
    };
    let close = span.end - 1;
    if src.as_bytes().get(close) != Some(&b'}') {
        return reprinted(candidate, &style);
    }
    let e = Editor { src, style };
    let mut out = src[span.start..=open].to_string();
    let indent = e.line_indent(span.start) + &e.style.unit;
    e.list(
        &mut out,
        &original.body,
        &candidate.body,
        open + 1,
        close,
        &indent,
    );
    out.push_str(&src[close..span.end]);
    out
}

/// The whole function printed in copper's style, in the file's line
/// endings.
fn reprinted(f: &Function, style: &Style) -> String {
    print::function(f).replace('\n', style.newline)
}

/// The offset of the `{` opening the body of the function at `span`: the
/// first `{` outside parentheses (comments and strings skipped).
fn body_open(src: &str, span: Span) -> Option<usize> {
    let text = src.get(span.start..span.end)?;
    let mut depth = 0i32;
    for t in tokenize(text) {
        match t.text(text) {
            "(" => depth += 1,
            ")" => depth -= 1,
            "{" if depth == 0 => return Some(span.start + t.start),
            _ => {}
        }
    }
    None
}

struct Editor<'a> {
    src: &'a str,
    style: Style,
}

impl Editor<'_> {
    /// The whitespace that starts the line holding `offset`.
    fn line_indent(&self, offset: usize) -> String {
        let line_start = self.src[..offset].rfind('\n').map_or(0, |i| i + 1);
        self.src[line_start..]
            .chars()
            .take_while(|c| *c == ' ' || *c == '\t')
            .collect()
    }

    /// Where the text of `s` starts and ends: its span, widened to the
    /// CUDA qualifiers written before it (`__shared__`, kept out of the
    /// span by the parser) and narrowed to leave out trailing whitespace.
    fn bounds(&self, s: &Stmt) -> (usize, usize) {
        const QUALIFIERS: [&str; 6] = [
            "__shared__",
            "__constant__",
            "__device__",
            "__managed__",
            "static",
            "extern",
        ];
        let (mut start, end) = (s.meta.span.start, s.meta.span.end);
        loop {
            let before = self.src[..start].trim_end_matches([' ', '\t']);
            match QUALIFIERS.iter().find(|q| {
                before.ends_with(*q)
                    && !before[..before.len() - q.len()]
                        .ends_with(|c: char| c.is_alphanumeric() || c == '_')
            }) {
                Some(q) => start = before.len() - q.len(),
                None => break,
            }
        }
        let end = start + self.src[start..end].trim_end().len();
        (start, end)
    }

    /// Where the text that belongs to statement `s` ends: after it, the rest
    /// of its line when that holds only a comment (`x = 1; // why`).
    fn own_end(&self, s: &Stmt) -> usize {
        let end = self.bounds(s).1;
        let rest = &self.src[end..];
        let line = &rest[..rest.find(['\r', '\n']).unwrap_or(rest.len())];
        let t = line.trim();
        if t.is_empty() || t.starts_with("//") || (t.starts_with("/*") && t.ends_with("*/")) {
            end + line.len()
        } else {
            end
        }
    }

    /// Emits the statements `cand` of a block whose original statements
    /// were `orig`, between `start` (after its `{`) and `end` (its `}`).
    fn list(
        &self,
        out: &mut String,
        orig: &[Stmt],
        cand: &[Stmt],
        start: usize,
        end: usize,
        indent: &str,
    ) {
        if orig.iter().any(|s| s.meta.span.is_synthetic()) {
            // Not text we can locate: print every statement.
            for c in cand {
                out.push_str(self.style.newline);
                out.push_str(indent);
                out.push_str(&self.printed(c, indent));
            }
            out.push_str(self.style.newline);
            out.push_str(&self.line_indent(end));
            return;
        }
        let indent = match orig.first() {
            Some(s) => self.line_indent(self.bounds(s).0),
            None => indent.to_string(),
        };
        let same_span =
            |c: &Stmt, o: &Stmt| !c.meta.span.is_synthetic() && c.meta.span == o.meta.span;
        let kept: Vec<bool> = orig
            .iter()
            .map(|o| cand.iter().any(|c| same_span(c, o)))
            .collect();
        // A new statement replaces the next removed original statement of
        // the same kind (with nothing kept between them), and keeps its
        // comments; other new statements are inserted.
        let mut cursor = 0;
        for c in cand {
            let place = match orig.iter().position(|o| same_span(c, o)) {
                Some(i) => Some(i),
                None => (cursor..orig.len()).take_while(|&j| !kept[j]).find(|&j| {
                    std::mem::discriminant(&orig[j].kind) == std::mem::discriminant(&c.kind)
                }),
            };
            match place {
                Some(i) => {
                    // Its own comments and blank lines come along.
                    let lead = if i == 0 {
                        start
                    } else {
                        self.own_end(&orig[i - 1])
                    };
                    let (s, e) = self.bounds(&orig[i]);
                    out.push_str(&self.src[lead.min(s)..s]);
                    self.statement(out, &orig[i], c, &indent);
                    out.push_str(&self.src[e..self.own_end(&orig[i])]);
                    cursor = i + 1;
                }
                None => {
                    out.push_str(self.style.newline);
                    out.push_str(&indent);
                    out.push_str(&self.printed(c, &indent));
                }
            }
        }
        let tail = orig
            .last()
            .map_or(start, |s| self.own_end(s))
            .clamp(start, end);
        let trailing = &self.src[tail..end];
        if trailing.trim().is_empty() && !trailing.contains('\n') && !cand.is_empty() {
            // The original block was empty or on one line: close it on a
            // line of its own.
            out.push_str(self.style.newline);
            out.push_str(&self.line_indent(end));
        } else {
            out.push_str(trailing);
        }
    }

    /// Emits `c`, which stands where `o` stood: `o`'s text when they are
    /// the same, else `o`'s head with the changed parts edited.
    fn statement(&self, out: &mut String, o: &Stmt, c: &Stmt, indent: &str) {
        let (start, end) = self.bounds(o);
        let span = Span::new(start, end);
        if o == c {
            out.push_str(&self.src[start..end]);
            return;
        }
        match (&o.kind, &c.kind) {
            (StmtKind::Block(os), StmtKind::Block(cs)) => {
                out.push('{');
                let inner = format!("{indent}{}", self.style.unit);
                self.list(out, os, cs, span.start + 1, span.end - 1, &inner);
                out.push('}');
            }
            (
                StmtKind::If {
                    cond: oc,
                    then: ot,
                    els: oe,
                },
                StmtKind::If {
                    cond: cc,
                    then: ct,
                    els: ce,
                },
            ) if oc == cc && oe.is_some() == ce.is_some() => {
                let mut at = span.start;
                self.child(out, &mut at, ot, ct, indent);
                if let (Some(oe), Some(ce)) = (oe, ce) {
                    self.child(out, &mut at, oe, ce, indent);
                }
                out.push_str(&self.src[at..span.end]);
            }
            (
                StmtKind::For {
                    init: oi,
                    cond: oc,
                    step: os,
                    body: ob,
                },
                StmtKind::For {
                    init: ci,
                    cond: cc,
                    step: cs,
                    body: cb,
                },
            ) if oi == ci && oc == cc && os == cs => {
                let mut at = span.start;
                self.child(out, &mut at, ob, cb, indent);
                out.push_str(&self.src[at..span.end]);
            }
            (StmtKind::While { cond: oc, body: ob }, StmtKind::While { cond: cc, body: cb })
                if oc == cc =>
            {
                let mut at = span.start;
                self.child(out, &mut at, ob, cb, indent);
                out.push_str(&self.src[at..span.end]);
            }
            _ => out.push_str(&self.printed(c, indent)),
        }
    }

    /// Emits the original text from `at` up to child `o`, then `c` in its
    /// place; `at` moves past `o`.
    fn child(&self, out: &mut String, at: &mut usize, o: &Stmt, c: &Stmt, indent: &str) {
        if o.meta.span.is_synthetic() {
            out.push_str(&self.printed(c, indent));
            return;
        }
        let (start, end) = self.bounds(o);
        let span = Span::new(start, end);
        if span.start < *at {
            // Not located: print the child (keeps the result parseable).
            out.push_str(&self.printed(c, indent));
            return;
        }
        out.push_str(&self.src[*at..span.start]);
        let both_blocks = matches!((&o.kind, &c.kind), (StmtKind::Block(_), StmtKind::Block(_)));
        if c.meta.span == o.meta.span || both_blocks {
            self.statement(out, o, c, indent);
        } else {
            out.push_str(&self.printed(c, indent));
        }
        *at = span.end;
    }

    /// `s` printed by copper's printer, its first line unindented and the
    /// others indented from `indent` in the file's unit.
    fn printed(&self, s: &Stmt, indent: &str) -> String {
        let text = print::statement(s);
        let mut out = String::new();
        for (i, line) in text.lines().enumerate() {
            if i > 0 {
                out.push_str(self.style.newline);
                if !line.is_empty() {
                    let spaces = line.len() - line.trim_start_matches(' ').len();
                    out.push_str(indent);
                    out.push_str(&self.style.unit.repeat(spaces / 4));
                    out.push_str(&" ".repeat(spaces % 4));
                }
            }
            out.push_str(line.trim_start_matches(' '));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cuda::parse::parse_source;
    use crate::source::SourceFile;

    fn function(src: &str) -> Function {
        let p = parse_source(SourceFile::new("k.cu", src));
        p.functions[0].result.clone().expect("parses")
    }

    #[test]
    fn an_unchanged_function_is_its_own_text() {
        let src = "__global__ void k(int *a,\n\tint n) {\n\t// first\n\tint i = threadIdx.x;   // odd spacing\n\n\ta[i] = n;\n}\n";
        let f = function(src);
        assert_eq!(function_text(src, &f, &f), src.trim_end());
    }

    #[test]
    fn only_the_changed_statement_is_printed_in_the_file_style() {
        let src = "__global__ void k(int *a, int n)\r\n{\r\n\t/* keep me */\r\n\tint i = threadIdx.x;\r\n\tif (i < n) {\r\n\t\ta[i] = a[i]+1; // and me\r\n\t\ta[i]   *=  2;\r\n\t}\r\n}\r\n";
        let f = function(src);
        let mut c = f.clone();
        // Drop the last statement of the `if`.
        if let StmtKind::If { then, .. } = &mut c.body[1].kind {
            if let StmtKind::Block(b) = &mut then.kind {
                b.pop();
            }
        }
        let text = function_text(src, &f, &c);
        assert_eq!(
            text,
            "__global__ void k(int *a, int n)\r\n{\r\n\t/* keep me */\r\n\tint i = threadIdx.x;\r\n\tif (i < n) {\r\n\t\ta[i] = a[i]+1; // and me\r\n\t}\r\n}"
        );
        // A new statement is printed, indented with tabs, CRLF endings.
        let mut d = f.clone();
        let extra = d.body[0].clone();
        let mut moved = extra;
        moved.meta.span = Span::SYNTHETIC;
        if let StmtKind::If { then, .. } = &mut d.body[1].kind {
            if let StmtKind::Block(b) = &mut then.kind {
                b.insert(0, moved);
            }
        }
        let text = function_text(src, &f, &d);
        assert!(
            text.contains(
                "if (i < n) {\r\n\t\tint i = threadIdx.x;\r\n\t\ta[i] = a[i]+1; // and me"
            ),
            "{text:?}"
        );
    }

    #[test]
    fn a_replaced_statement_keeps_the_comments_of_the_one_it_replaces() {
        let src =
            "__global__ void k(int *a) {\n    // before\n    a[0] = 1; // why\n    a[1] = 2;\n}\n";
        let f = function(src);
        let mut c = f.clone();
        let mut new = f.body[1].clone();
        new.meta.span = Span::SYNTHETIC;
        c.body[0] = new;
        assert_eq!(
            function_text(src, &f, &c),
            "__global__ void k(int *a) {\n    // before\n    a[1] = 2; // why\n    a[1] = 2;\n}"
        );
    }

    #[test]
    fn a_changed_signature_reprints_the_function() {
        let src = "__global__ void k(int *a) { a[0] = 1; }\n";
        let f = function(src);
        let mut c = f.clone();
        c.name = "k2".into();
        assert!(function_text(src, &f, &c).starts_with("__global__ void k2(int *a) {"));
    }
}
