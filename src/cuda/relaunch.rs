//! Exchanging x and y of a kernel's launches in the host code, for a
//! rewrite that exchanges x and y of the kernel's thread and block indices
//! (thread remapping). At every `kernel<<<grid, block>>>` of the file, the
//! grid and the block are edited as text:
//!
//! - `dim3(a, b)` written at the launch becomes `dim3(b, a)`;
//! - a `dim3` variable declared in the launching function (`dim3 block(a,
//!   b);`, `dim3 block = dim3(a, b);`, `dim3 block{a, b};`) gets its
//!   arguments exchanged, and every `block.x` / `block.y` of that function
//!   becomes `block.y` / `block.x` (so `dim3 grid((n + block.x - 1) /
//!   block.x, …)` follows);
//! - anything else (`n`, `(n + 255) / 256`, a macro) becomes `dim3(1, …)`.
//!
//! The edit is refused, with the reason, when the kernel is not launched
//! in the file, a launch is in a header, a `dim3` variable is also used by
//! a launch of another kernel or otherwise than through `.x`/`.y`/`.z`, or
//! is declared more than once. Every edit is then checked: the host code
//! is evaluated again ([`super::host`]), and each launch of the kernel
//! must have exactly the grid and block of the original with x and y
//! exchanged (a launch whose shape copper cannot evaluate is refused).

use super::extract::LaunchSite;
use super::include::in_user_file;
use super::launch::Launch;
use super::lex::{tokenize, TokKind, Token};
use super::parse::{parse_source, ParsedFile};
use super::rewrite::splice;
use crate::source::Span;

/// A launch shape with x and y exchanged.
pub fn swapped(d: [u64; 3]) -> [u64; 3] {
    [d[1], d[0], d[2]]
}

/// The replacements in the text of `file` that exchange x and y of the
/// grid and the block at every launch of `kernel`, or why there are none.
pub fn swap_xy(file: &ParsedFile, kernel: &str) -> Result<Vec<(Span, String)>, String> {
    let src = &file.source.text;
    let sites: Vec<&LaunchSite> = file
        .extracted
        .launches
        .iter()
        .filter(|l| l.kernel == kernel)
        .collect();
    if sites.is_empty() {
        return Err(format!(
            "`{kernel}` is not launched in this file, so its grid and block cannot be exchanged with it"
        ));
    }
    let toks = tokenize(src);
    let host = Host {
        src,
        toks: &toks,
        kernel,
        sites: &sites,
        others: file
            .extracted
            .launches
            .iter()
            .filter(|l| l.kernel != kernel)
            .collect(),
    };
    let mut edits = Vec::new();
    for site in &sites {
        if !in_user_file(site.span) {
            return Err(format!(
                "a launch of `{kernel}` is in a header, which copper does not edit"
            ));
        }
        let (grid, block) = host.config_args(site)?;
        edits.extend(host.swap_arg(site, grid, "grid")?);
        edits.extend(host.swap_arg(site, block, "block")?);
    }
    edits.sort_by_key(|e| (e.at.start, e.at.end));
    edits.dedup();
    let edits = rendered(src, &edits)?;
    verify(file, &splice(src, &edits), kernel)?;
    Ok(edits)
}

/// One edit: the text at `at` replaced by `parts`.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Edit {
    at: Span,
    parts: Vec<Part>,
}

/// Part of an edit's new text.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Part {
    /// New text.
    Text(String),
    /// The text of the file there, with the edits inside it made (a `dim3`
    /// argument moved, with its `block.x` exchanged).
    Copy(Span),
}

impl Edit {
    fn text(at: Span, text: impl Into<String>) -> Edit {
        Edit {
            at,
            parts: vec![Part::Text(text.into())],
        }
    }
}

/// The outermost edits as replacements, the edits inside the text they
/// copy made there. Fails when two edits overlap without one holding the
/// other.
fn rendered(src: &str, edits: &[Edit]) -> Result<Vec<(Span, String)>, String> {
    let inside =
        |outer: Span, e: &Edit| e.at != outer && outer.start <= e.at.start && e.at.end <= outer.end;
    let top: Vec<&Edit> = edits
        .iter()
        .filter(|e| !edits.iter().any(|o| inside(o.at, e) && o != *e))
        .collect();
    if top.windows(2).any(|w| w[0].at.end > w[1].at.start) {
        return Err("two launches of the kernel need different edits of the same text".into());
    }
    top.iter()
        .map(|e| {
            let mut text = String::new();
            for p in &e.parts {
                match p {
                    Part::Text(t) => text.push_str(t),
                    Part::Copy(s) => {
                        let within: Vec<Edit> = edits
                            .iter()
                            .filter(|x| inside(*s, x))
                            .map(|x| Edit {
                                at: Span::new(x.at.start - s.start, x.at.end - s.start),
                                parts: x
                                    .parts
                                    .iter()
                                    .map(|p| match p {
                                        Part::Copy(c) => Part::Text(src[c.start..c.end].into()),
                                        t => t.clone(),
                                    })
                                    .collect(),
                            })
                            .collect();
                        let inner = rendered(&src[s.start..s.end], &within)?;
                        text.push_str(&splice(&src[s.start..s.end], &inner));
                    }
                }
            }
            Ok((e.at, text))
        })
        .collect()
}

/// Checks that the launches of `kernel` in `text` (the file edited) have
/// the original's grids and blocks with x and y exchanged.
fn verify(file: &ParsedFile, text: &str, kernel: &str) -> Result<(), String> {
    let after = parse_source(file.source.with_text(text.to_string()));
    let of = |f: &ParsedFile| -> Vec<Launch> {
        f.launches
            .iter()
            .filter(|l| l.kernel == kernel)
            .cloned()
            .collect()
    };
    let (old, new) = (of(file), of(&after));
    if old.len() != new.len() {
        return Err("the edited host code launches the kernel a different number of times".into());
    }
    for (o, n) in old.iter().zip(&new) {
        let (Some(grid), Some(block)) = (o.grid, o.block) else {
            return Err(format!(
                "the grid or block of the launch at line {} is not known to copper, so the exchanged launch cannot be checked",
                o.line
            ));
        };
        if n.grid != Some(swapped(grid)) || n.block != Some(swapped(block)) {
            return Err(format!(
                "the launch at line {} could not be edited to exchange x and y of its grid and block",
                o.line
            ));
        }
    }
    Ok(())
}

/// The host code of a file, tokenized, and the launches of one kernel.
struct Host<'a> {
    src: &'a str,
    toks: &'a [Token],
    kernel: &'a str,
    sites: &'a [&'a LaunchSite],
    /// Launches of other kernels.
    others: Vec<&'a LaunchSite>,
}

/// Token indices `from..to`.
type Range = (usize, usize);

/// Assignment operators: a whole `dim3` assigned is not followed.
const ASSIGN: &[&str] = &[
    "=", "+=", "-=", "*=", "/=", "%=", "<<=", ">>=", "&=", "|=", "^=", "++", "--",
];

impl<'a> Host<'a> {
    fn text(&self, i: usize) -> &str {
        self.toks[i].text(self.src)
    }

    fn line(&self, offset: usize) -> usize {
        self.src[..offset.min(self.src.len())].matches('\n').count() + 1
    }

    /// The token ranges of the grid and the block of a launch.
    fn config_args(&self, site: &LaunchSite) -> Result<(Range, Range), String> {
        let open = self
            .toks
            .iter()
            .position(|t| t.start >= site.span.start && t.is(self.src, "<<<"));
        let close =
            open.and_then(|o| (o..self.toks.len()).find(|&i| self.toks[i].is(self.src, ">>>")));
        let (Some(open), Some(close)) = (open, close) else {
            return Err(format!(
                "the launch at line {} could not be read",
                self.line(site.span.start)
            ));
        };
        let args = split_commas(self.src, self.toks, open + 1, close);
        match args.as_slice() {
            [grid, block, ..] => Ok((*grid, *block)),
            _ => Err(format!(
                "the launch at line {} could not be read",
                self.line(site.span.start)
            )),
        }
    }

    /// The edits that exchange x and y of one launch argument.
    fn swap_arg(
        &self,
        site: &LaunchSite,
        (from, to): Range,
        what: &str,
    ) -> Result<Vec<Edit>, String> {
        if to == from {
            return Err(format!(
                "the launch at line {} has no {what}",
                self.line(site.span.start)
            ));
        }
        // `dim3(a, b)` at the launch.
        if to - from >= 3
            && self.text(from) == "dim3"
            && self.text(from + 1) == "("
            && matching(self.src, self.toks, from + 1) == Some(to - 1)
        {
            return self.swap_args(from + 2, to - 1, site);
        }
        // A `dim3` variable of the launching function.
        if to - from == 1 && self.toks[from].kind == TokKind::Ident {
            if let Some(edits) = self.swap_variable(site, from)? {
                return Ok(edits);
            }
        }
        // A function's result cannot be edited as text.
        if let Some(call) = (from..to.saturating_sub(1)).find(|&i| {
            self.toks[i].kind == TokKind::Ident
                && self.text(i + 1) == "("
                && !matches!(
                    self.text(i),
                    "dim3" | "sizeof" | "static_cast" | "min" | "max"
                )
        }) {
            return Err(format!(
                "the {what} of the launch at line {} is computed by `{}(…)`, which copper cannot edit",
                self.line(site.span.start),
                self.text(call)
            ));
        }
        // A number: `dim3(1, n)`.
        let span = Span::new(self.toks[from].start, self.toks[to - 1].end);
        Ok(vec![Edit {
            at: span,
            parts: vec![
                Part::Text("dim3(1, ".into()),
                Part::Copy(span),
                Part::Text(")".into()),
            ],
        }])
    }

    /// Exchanges the first two of the arguments between tokens `from` and
    /// `to` (a `dim3`'s); one argument `a` becomes `1, a`.
    fn swap_args(&self, from: usize, to: usize, site: &LaunchSite) -> Result<Vec<Edit>, String> {
        let span_of = |(a, b): Range| Span::new(self.toks[a].start, self.toks[b - 1].end);
        match split_commas(self.src, self.toks, from, to).as_slice() {
            [a] if a.1 > a.0 => {
                let s = span_of(*a);
                Ok(vec![Edit {
                    at: s,
                    parts: vec![Part::Text("1, ".into()), Part::Copy(s)],
                }])
            }
            [a, b] | [a, b, _] if a.1 > a.0 && b.1 > b.0 => {
                let (sa, sb) = (span_of(*a), span_of(*b));
                Ok(vec![
                    Edit {
                        at: sa,
                        parts: vec![Part::Copy(sb)],
                    },
                    Edit {
                        at: sb,
                        parts: vec![Part::Copy(sa)],
                    },
                ])
            }
            _ => Err(format!(
                "a `dim3` of the launch at line {} could not be read",
                self.line(site.span.start)
            )),
        }
    }

    /// For a launch argument naming a `dim3` variable declared in the
    /// launching function: its declaration's arguments exchanged and its
    /// `.x`/`.y` exchanged wherever the function uses them; `None` when
    /// the name is not declared there as a `dim3`.
    fn swap_variable(&self, site: &LaunchSite, at: usize) -> Result<Option<Vec<Edit>>, String> {
        let name = self.text(at);
        let Some((open, close)) = self.enclosing_body(at) else {
            return Ok(None);
        };
        let decls: Vec<usize> = (open + 1..close)
            .filter(|&i| self.text(i) == name && i > 0 && self.text(i - 1) == "dim3")
            .collect();
        let decl = match decls.as_slice() {
            [] => return Ok(None),
            [d] => *d,
            _ => {
                return Err(format!(
                    "`{name}` is declared more than once in the function that launches `{}`",
                    self.kernel
                ))
            }
        };
        // The declaration's arguments: `(…)`, `{…}` or `= dim3(…)`.
        let args_open = match (
            self.text(decl + 1),
            self.toks.get(decl + 2).map(|_| self.text(decl + 2)),
        ) {
            ("(" | "{", _) => decl + 1,
            ("=", Some("dim3")) if self.toks.get(decl + 3).is_some_and(|t| t.is(self.src, "(")) => {
                decl + 3
            }
            _ => {
                return Err(format!(
                    "the declaration of `{name}` at line {} could not be read",
                    self.line(self.toks[decl].start)
                ))
            }
        };
        let Some(args_close) = matching(self.src, self.toks, args_open) else {
            return Ok(None);
        };
        let mut edits = self.swap_args(args_open + 1, args_close, site)?;
        // Its other uses: launches of this kernel, or `.x`/`.y`/`.z`.
        let in_launch = |i: usize, sites: &[&'a LaunchSite]| -> Option<&'a LaunchSite> {
            let off = self.toks[i].start;
            sites
                .iter()
                .find(|l| l.span.start <= off && off < l.span.end)
                .copied()
        };
        for i in open + 1..close {
            if i == decl || self.text(i) != name || self.toks[i].kind != TokKind::Ident {
                continue;
            }
            if i > 0 && matches!(self.text(i - 1), "." | "->" | "::") {
                continue;
            }
            let line = self.line(self.toks[i].start);
            if let Some(other) = in_launch(i, &self.others) {
                return Err(format!(
                    "`{name}` is also the shape of the launch of `{}` at line {line}, which is not rewritten with `{}`",
                    other.kernel, self.kernel
                ));
            }
            if in_launch(i, self.sites).is_some() && self.is_config_token(i) {
                continue;
            }
            let field = (self.toks.get(i + 2).is_some() && self.text(i + 1) == ".")
                .then(|| self.text(i + 2));
            match field {
                Some("x") => edits.push(Edit::text(span_of_token(&self.toks[i + 2]), "y")),
                Some("y") => edits.push(Edit::text(span_of_token(&self.toks[i + 2]), "x")),
                Some("z") => {}
                _ => {
                    let whole = self
                        .toks
                        .get(i + 1)
                        .is_some_and(|t| ASSIGN.contains(&t.text(self.src)));
                    return Err(if whole {
                        format!("`{name}` is assigned at line {line}, which copper does not follow")
                    } else {
                        format!("`{name}` is used as a whole at line {line}, which copper does not follow")
                    });
                }
            }
        }
        Ok(Some(edits))
    }

    /// Whether token `i` is inside a `<<<…>>>`.
    fn is_config_token(&self, i: usize) -> bool {
        let mut j = i;
        while j > 0 {
            j -= 1;
            match self.text(j) {
                "<<<" => return true,
                ">>>" | ";" | "{" | "}" => return false,
                _ => {}
            }
        }
        false
    }

    /// The `{`…`}` of the outermost block holding token `at` (the body of
    /// the function it is in).
    fn enclosing_body(&self, at: usize) -> Option<Range> {
        let mut stack: Vec<usize> = Vec::new();
        let mut outer = None;
        for (i, t) in self.toks.iter().enumerate() {
            if i == at {
                outer = stack.first().copied();
            }
            match t.text(self.src) {
                "{" => stack.push(i),
                "}" => {
                    let o = stack.pop();
                    if stack.is_empty() && o.is_some() && o == outer && i > at {
                        return o.map(|o| (o, i));
                    }
                }
                _ => {}
            }
        }
        None
    }
}

fn span_of_token(t: &Token) -> Span {
    Span::new(t.start, t.end)
}

/// The token ranges between top-level commas of tokens `from..to`.
fn split_commas(src: &str, toks: &[Token], from: usize, to: usize) -> Vec<Range> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut start = from;
    for (i, t) in toks.iter().enumerate().take(to).skip(from) {
        match t.text(src) {
            "(" | "[" | "{" => depth += 1,
            ")" | "]" | "}" => depth -= 1,
            "," if depth == 0 => {
                out.push((start, i));
                start = i + 1;
            }
            _ => {}
        }
    }
    if to > from {
        out.push((start, to));
    }
    out
}

/// The token closing the bracket at `open`.
fn matching(src: &str, toks: &[Token], open: usize) -> Option<usize> {
    let mut depth = 0i32;
    for (i, t) in toks.iter().enumerate().skip(open) {
        match t.text(src) {
            "(" | "[" | "{" => depth += 1,
            ")" | "]" | "}" => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::SourceFile;

    const KERNEL: &str =
        "__global__ void k(float *a, int n) { a[threadIdx.x * n + threadIdx.y] = 0; }\n";

    fn edited(host: &str) -> Result<String, String> {
        let src = format!("{KERNEL}{host}");
        let file = parse_source(SourceFile::new("t.cu", &src));
        swap_xy(&file, "k").map(|e| splice(&src, &e)[KERNEL.len()..].to_string())
    }

    #[test]
    fn dim3_variables_and_their_fields_are_exchanged() {
        let host = "void run(float *a) {\n  int rows = 100, cols = 70;\n  dim3 block(32, 8);\n  dim3 grid((rows + block.x - 1) / block.x, (cols + block.y - 1) / block.y);\n  k<<<grid, block>>>(a, cols);\n}\n";
        assert_eq!(
            edited(host).unwrap(),
            "void run(float *a) {\n  int rows = 100, cols = 70;\n  dim3 block(8, 32);\n  dim3 grid((cols + block.x - 1) / block.x, (rows + block.y - 1) / block.y);\n  k<<<grid, block>>>(a, cols);\n}\n"
        );
    }

    #[test]
    fn literal_dim3_and_numbers_at_the_launch() {
        assert_eq!(
            edited("void run(float *a) { k<<<dim3(4, 2), dim3(16, 32)>>>(a, 64); }\n").unwrap(),
            "void run(float *a) { k<<<dim3(2, 4), dim3(32, 16)>>>(a, 64); }\n"
        );
        assert_eq!(
            edited("void run(float *a) { k<<<4, dim3(16, 32)>>>(a, 64); }\n").unwrap(),
            "void run(float *a) { k<<<dim3(1, 4), dim3(32, 16)>>>(a, 64); }\n"
        );
    }

    #[test]
    fn unsafe_launches_are_refused_with_the_reason() {
        let err = edited("").unwrap_err();
        assert!(err.contains("not launched in this file"), "{err}");
        let shared = "__global__ void other(float *a) {}\nvoid run(float *a) {\n  dim3 block(32, 8);\n  k<<<4, block>>>(a, 64);\n  other<<<4, block>>>(a);\n}\n";
        let err = edited(shared).unwrap_err();
        assert!(
            err.contains("also the shape of the launch of `other`"),
            "{err}"
        );
        let computed =
            "dim3 pick(int n);\nvoid run(float *a, int n) { k<<<4, pick(n)>>>(a, n); }\n";
        let err = edited(computed).unwrap_err();
        assert!(err.contains("computed by `pick(…)`"), "{err}");
        let whole = "void run(float *a) {\n  dim3 block(32, 8);\n  dim3 b2 = block;\n  k<<<4, block>>>(a, 64);\n}\n";
        let err = edited(whole).unwrap_err();
        assert!(err.contains("used as a whole at line"), "{err}");
    }
}
