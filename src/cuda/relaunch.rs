//! Editing a kernel's launches in the host code, for a rewrite that runs
//! on another launch than the original ([`Reshape`]): thread remapping
//! exchanges x and y of the kernel's thread and block indices, so its
//! launches exchange x and y of their grid and block; one warp per row
//! gives each row 32 threads, so its launches get 32 times the blocks in
//! x. At every `kernel<<<grid, block>>>` of the file, the grid and (for
//! the exchange) the block are edited as text:
//!
//! - `dim3(a, b)` written at the launch becomes `dim3(b, a)` (exchanged)
//!   or `dim3((a) * 32, b)` (scaled);
//! - a `dim3` variable declared in the launching function (`dim3 block(a,
//!   b);`, `dim3 block = dim3(a, b);`, `dim3 block{a, b};`) gets its
//!   arguments edited the same way; for the exchange, every `block.x` /
//!   `block.y` of that function becomes `block.y` / `block.x` (so `dim3
//!   grid((n + block.x - 1) / block.x, …)` follows); a scaled grid's `.x`
//!   used anywhere else in the function is refused;
//! - anything else (`n`, `(n + 255) / 256`, a macro) becomes `dim3(1, …)`
//!   (exchanged) or `(…) * 32` (scaled).
//!
//! The edit is refused, with the reason, when the kernel is not launched
//! in the file, a launch is in a header, a `dim3` variable is also used by
//! a launch of another kernel or otherwise than through `.x`/`.y`/`.z`, or
//! is declared more than once. Every edit is then checked: the host code
//! is evaluated again ([`super::host`]), and each launch of the kernel
//! must have exactly the grid and block of the original reshaped (a
//! launch whose shape copper cannot evaluate is refused, and so is a
//! scaled grid beyond the hardware's 2³¹ − 1 blocks in x).

use super::extract::LaunchSite;
use super::include::in_user_file;
use super::launch::Launch;
use super::lex::{tokenize, TokKind, Token};
use super::parse::{parse_source, ParsedFile};
use super::rewrite::splice;
use crate::source::Span;

/// Why the launches of a kernel cannot be exchanged.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RelaunchError {
    /// The file has no launch of the kernel.
    #[error("`{0}` is not launched in this file, so its launch cannot be changed with it")]
    NotLaunched(String),
    /// A launch is in a header.
    #[error("a launch of `{0}` is in a header, which copper does not edit")]
    InHeader(String),
    /// Two launches need different edits of the same text.
    #[error("two launches of the kernel need different edits of the same text")]
    Overlap,
    /// The edited file launches the kernel another number of times.
    #[error("the edited host code launches the kernel a different number of times")]
    LaunchCount,
    /// A launch whose shape copper cannot evaluate.
    #[error("the grid or block of the launch at line {0} is not known to copper, so the changed launch cannot be checked")]
    UnknownShape(usize),
    /// An edited launch without the intended shape.
    #[error("the launch at line {line} could not be edited so that {what}")]
    NotReshaped {
        /// The launch's line.
        line: usize,
        /// What the edit was to do ([`Reshape::what`]).
        what: &'static str,
    },
    /// A scaled grid beyond what the hardware launches.
    #[error("the launch at line {line} would need {blocks} blocks in x, more than the 2³¹ − 1 a grid has")]
    TooManyBlocks {
        /// The launch's line.
        line: usize,
        /// The blocks the scaled grid would have in x.
        blocks: u64,
    },
    /// A scaled grid variable whose `.x` is read elsewhere.
    #[error("`{name}.x` is read at line {line}, which would see the scaled grid")]
    ReadsScaled {
        /// The variable.
        name: String,
        /// The use's line.
        line: usize,
    },
    /// A `<<<…>>>` without a grid and a block.
    #[error("the launch at line {0} could not be read")]
    Unreadable(usize),
    /// An empty grid or block.
    #[error("the launch at line {line} has no {what}")]
    Missing {
        /// The launch's line.
        line: usize,
        /// `grid` or `block`.
        what: &'static str,
    },
    /// A grid or block that a function computes.
    #[error("the {what} of the launch at line {line} is computed by `{function}(…)`, which copper cannot edit")]
    Computed {
        /// `grid` or `block`.
        what: &'static str,
        /// The launch's line.
        line: usize,
        /// The function called.
        function: String,
    },
    /// A `dim3(…)` whose arguments cannot be read.
    #[error("a `dim3` of the launch at line {0} could not be read")]
    UnreadableDim3(usize),
    /// A `dim3` variable declared twice in the launching function.
    #[error("`{name}` is declared more than once in the function that launches `{kernel}`")]
    DeclaredTwice {
        /// The variable.
        name: String,
        /// The kernel.
        kernel: String,
    },
    /// A `dim3` declaration whose arguments cannot be read.
    #[error("the declaration of `{name}` at line {line} could not be read")]
    UnreadableDeclaration {
        /// The variable.
        name: String,
        /// The declaration's line.
        line: usize,
    },
    /// A `dim3` variable also giving the shape of another kernel's launch.
    #[error("`{name}` is also the shape of the launch of `{other}` at line {line}, which is not rewritten with `{kernel}`")]
    SharedShape {
        /// The variable.
        name: String,
        /// The other kernel.
        other: String,
        /// That launch's line.
        line: usize,
        /// The kernel rewritten.
        kernel: String,
    },
    /// A `dim3` variable assigned as a whole.
    #[error("`{name}` is assigned at line {line}, which copper does not follow")]
    Assigned {
        /// The variable.
        name: String,
        /// The assignment's line.
        line: usize,
    },
    /// A `dim3` variable used otherwise than through its fields.
    #[error("`{name}` is used as a whole at line {line}, which copper does not follow")]
    UsedWhole {
        /// The variable.
        name: String,
        /// The use's line.
        line: usize,
    },
}

error_message!(RelaunchError);

/// How a rewrite changes its kernel's launches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reshape {
    /// x and y of the grid and of the block exchanged (thread remapping).
    SwapXy,
    /// The grid's x multiplied by this factor, the block kept (one warp
    /// per row: 32).
    ScaleGridX(u64),
}

impl Reshape {
    /// The grid a launch with grid `d` gets.
    pub fn grid(self, d: [u64; 3]) -> [u64; 3] {
        match self {
            Reshape::SwapXy => [d[1], d[0], d[2]],
            Reshape::ScaleGridX(k) => [d[0].saturating_mul(k), d[1], d[2]],
        }
    }

    /// The block a launch with block `d` gets.
    pub fn block(self, d: [u64; 3]) -> [u64; 3] {
        match self {
            Reshape::SwapXy => [d[1], d[0], d[2]],
            Reshape::ScaleGridX(_) => d,
        }
    }

    /// [`Reshape::grid`] and [`Reshape::block`] of a launch written as
    /// lists (missing dimensions are 1).
    pub fn lists(self, grid: &mut Vec<u64>, block: &mut Vec<u64>) {
        let three =
            |v: &[u64]| -> [u64; 3] { std::array::from_fn(|i| v.get(i).copied().unwrap_or(1)) };
        let len = |v: &[u64]| v.len().max(2);
        let (g, b) = (self.grid(three(grid)), self.block(three(block)));
        *grid = g[..len(grid)].to_vec();
        *block = b[..len(block)].to_vec();
    }

    /// How many times the original launch's warps the reshaped launch
    /// runs: the grid's x scaled by `k` runs `k` times the blocks, each of
    /// the same block; exchanging x and y keeps the blocks and the threads
    /// of each block, so its warps too.
    pub fn warps(self) -> u64 {
        match self {
            Reshape::SwapXy => 1,
            Reshape::ScaleGridX(k) => k,
        }
    }

    /// What it does to a launch, for people.
    pub fn what(self) -> &'static str {
        match self {
            Reshape::SwapXy => "x and y of the grid and block are exchanged",
            Reshape::ScaleGridX(_) => "the grid has 32 times the blocks in x",
        }
    }
}

/// A rewrite's change of its kernel's launches: the reshape, and the
/// replacements in the host code's text that make it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Relaunch {
    /// What every launch of the kernel becomes.
    pub reshape: Reshape,
    /// The edits of the file's text.
    pub edits: Vec<(Span, String)>,
}

/// The replacements in the text of `file` that reshape the grid (and the
/// block) at every launch of `kernel` as `reshape` says, checked on the
/// host code evaluated again, or why there are none.
pub fn relaunch(
    file: &ParsedFile,
    kernel: &str,
    reshape: Reshape,
) -> Result<Relaunch, RelaunchError> {
    let src = &file.source.text;
    let sites: Vec<&LaunchSite> = file
        .extracted
        .launches
        .iter()
        .filter(|l| l.kernel == kernel)
        .collect();
    if sites.is_empty() {
        return Err(RelaunchError::NotLaunched(kernel.to_string()));
    }
    let toks = tokenize(src);
    let host = Host {
        src,
        toks: &toks,
        kernel,
        reshape,
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
            return Err(RelaunchError::InHeader(kernel.to_string()));
        }
        let (grid, block) = host.config_args(site)?;
        edits.extend(host.edit_arg(site, grid, "grid")?);
        if reshape == Reshape::SwapXy {
            edits.extend(host.edit_arg(site, block, "block")?);
        }
    }
    edits.sort_by_key(|e| (e.at.start, e.at.end));
    edits.dedup();
    let edits = rendered(src, &edits)?;
    verify(file, &splice(src, &edits), kernel, reshape)?;
    Ok(Relaunch { reshape, edits })
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
fn rendered(src: &str, edits: &[Edit]) -> Result<Vec<(Span, String)>, RelaunchError> {
    let inside =
        |outer: Span, e: &Edit| e.at != outer && outer.start <= e.at.start && e.at.end <= outer.end;
    let top: Vec<&Edit> = edits
        .iter()
        .filter(|e| !edits.iter().any(|o| inside(o.at, e) && o != *e))
        .collect();
    if top.windows(2).any(|w| w[0].at.end > w[1].at.start) {
        return Err(RelaunchError::Overlap);
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
/// the original's grids and blocks reshaped, within the hardware's grid.
fn verify(
    file: &ParsedFile,
    text: &str,
    kernel: &str,
    reshape: Reshape,
) -> Result<(), RelaunchError> {
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
        return Err(RelaunchError::LaunchCount);
    }
    for (o, n) in old.iter().zip(&new) {
        let (Some(grid), Some(block)) = (o.grid, o.block) else {
            return Err(RelaunchError::UnknownShape(o.line));
        };
        if n.grid != Some(reshape.grid(grid)) || n.block != Some(reshape.block(block)) {
            return Err(RelaunchError::NotReshaped {
                line: o.line,
                what: reshape.what(),
            });
        }
        let blocks = reshape.grid(grid)[0];
        if blocks > MAX_GRID_X {
            return Err(RelaunchError::TooManyBlocks {
                line: o.line,
                blocks,
            });
        }
    }
    Ok(())
}

/// The most blocks a grid has in x.
const MAX_GRID_X: u64 = (1 << 31) - 1;

/// The host code of a file, tokenized, and the launches of one kernel.
struct Host<'a> {
    src: &'a str,
    toks: &'a [Token],
    kernel: &'a str,
    reshape: Reshape,
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
    fn config_args(&self, site: &LaunchSite) -> Result<(Range, Range), RelaunchError> {
        let open = self
            .toks
            .iter()
            .position(|t| t.start >= site.span.start && t.is(self.src, "<<<"));
        let close =
            open.and_then(|o| (o..self.toks.len()).find(|&i| self.toks[i].is(self.src, ">>>")));
        let (Some(open), Some(close)) = (open, close) else {
            return Err(RelaunchError::Unreadable(self.line(site.span.start)));
        };
        let args = split_commas(self.src, self.toks, open + 1, close);
        match args.as_slice() {
            [grid, block, ..] => Ok((*grid, *block)),
            _ => Err(RelaunchError::Unreadable(self.line(site.span.start))),
        }
    }

    /// The edits that reshape one launch argument.
    fn edit_arg(
        &self,
        site: &LaunchSite,
        (from, to): Range,
        what: &'static str,
    ) -> Result<Vec<Edit>, RelaunchError> {
        if to == from {
            return Err(RelaunchError::Missing {
                line: self.line(site.span.start),
                what,
            });
        }
        // `dim3(a, b)` at the launch.
        if to - from >= 3
            && self.text(from) == "dim3"
            && self.text(from + 1) == "("
            && matching(self.src, self.toks, from + 1) == Some(to - 1)
        {
            return self.edit_args(from + 2, to - 1, site);
        }
        // A `dim3` variable of the launching function.
        if to - from == 1 && self.toks[from].kind == TokKind::Ident {
            if let Some(edits) = self.edit_variable(site, from)? {
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
            return Err(RelaunchError::Computed {
                what,
                line: self.line(site.span.start),
                function: self.text(call).to_string(),
            });
        }
        // A number: `dim3(1, n)` or `(n) * 32`.
        let span = Span::new(self.toks[from].start, self.toks[to - 1].end);
        let (before, after) = match self.reshape {
            Reshape::SwapXy => ("dim3(1, ".to_string(), ")".to_string()),
            Reshape::ScaleGridX(k) => ("(".to_string(), format!(") * {k}")),
        };
        Ok(vec![Edit {
            at: span,
            parts: vec![Part::Text(before), Part::Copy(span), Part::Text(after)],
        }])
    }

    /// The edits of the arguments between tokens `from` and `to` (a
    /// `dim3`'s) that reshape it: exchanged, or the first one scaled.
    fn edit_args(
        &self,
        from: usize,
        to: usize,
        site: &LaunchSite,
    ) -> Result<Vec<Edit>, RelaunchError> {
        let Reshape::ScaleGridX(k) = self.reshape else {
            return self.swap_args(from, to, site);
        };
        match split_commas(self.src, self.toks, from, to).first() {
            Some(&(a, b)) if b > a => {
                let s = Span::new(self.toks[a].start, self.toks[b - 1].end);
                Ok(vec![Edit {
                    at: s,
                    parts: vec![
                        Part::Text("(".into()),
                        Part::Copy(s),
                        Part::Text(format!(") * {k}")),
                    ],
                }])
            }
            _ => Err(RelaunchError::UnreadableDim3(self.line(site.span.start))),
        }
    }

    /// Exchanges the first two of the arguments between tokens `from` and
    /// `to` (a `dim3`'s); one argument `a` becomes `1, a`.
    fn swap_args(
        &self,
        from: usize,
        to: usize,
        site: &LaunchSite,
    ) -> Result<Vec<Edit>, RelaunchError> {
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
            _ => Err(RelaunchError::UnreadableDim3(self.line(site.span.start))),
        }
    }

    /// For a launch argument naming a `dim3` variable declared in the
    /// launching function: its declaration's arguments reshaped and, for
    /// the exchange, its `.x`/`.y` exchanged wherever the function uses
    /// them (a scaled grid's `.x` is refused there); `None` when the name
    /// is not declared there as a `dim3`.
    fn edit_variable(
        &self,
        site: &LaunchSite,
        at: usize,
    ) -> Result<Option<Vec<Edit>>, RelaunchError> {
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
                return Err(RelaunchError::DeclaredTwice {
                    name: name.to_string(),
                    kernel: self.kernel.to_string(),
                })
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
                return Err(RelaunchError::UnreadableDeclaration {
                    name: name.to_string(),
                    line: self.line(self.toks[decl].start),
                })
            }
        };
        let Some(args_close) = matching(self.src, self.toks, args_open) else {
            return Ok(None);
        };
        let mut edits = self.edit_args(args_open + 1, args_close, site)?;
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
                return Err(RelaunchError::SharedShape {
                    name: name.to_string(),
                    other: other.kernel.clone(),
                    line,
                    kernel: self.kernel.to_string(),
                });
            }
            if in_launch(i, self.sites).is_some() && self.is_config_token(i) {
                continue;
            }
            let field = (self.toks.get(i + 2).is_some() && self.text(i + 1) == ".")
                .then(|| self.text(i + 2));
            let swap = self.reshape == Reshape::SwapXy;
            match field {
                Some("x") if swap => edits.push(Edit::text(span_of_token(&self.toks[i + 2]), "y")),
                Some("y") if swap => edits.push(Edit::text(span_of_token(&self.toks[i + 2]), "x")),
                Some("x") => {
                    return Err(RelaunchError::ReadsScaled {
                        name: name.to_string(),
                        line,
                    })
                }
                Some("y" | "z") => {}
                _ => {
                    let whole = self
                        .toks
                        .get(i + 1)
                        .is_some_and(|t| ASSIGN.contains(&t.text(self.src)));
                    let name = name.to_string();
                    return Err(if whole {
                        RelaunchError::Assigned { name, line }
                    } else {
                        RelaunchError::UsedWhole { name, line }
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
mod tests;
