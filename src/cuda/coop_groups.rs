//! Cooperative groups, the common subset, read as what copper already
//! models: a `thread_block`'s `sync()` is `__syncthreads()`, its
//! `thread_rank()` the linear thread index; a `thread_block_tile<N>`'s
//! shuffles are `__shfl_*_sync` of width `N`, its `sync()` `__syncwarp()`;
//! `cg::reduce(tile, v, cg::plus<T>())` is the butterfly of `log2 N`
//! `__shfl_xor_sync`s it computes; a `grid_group`'s `size()` and
//! `thread_rank()` come from `gridDim`, `blockIdx` and the block's. A
//! `thread_group` variable is the group it is initialized with
//! (`cg::this_thread_block()`, `cg::tiled_partition(b, 32)` with a literal
//! size, another group variable).
//!
//! A `thread_group` (or `auto`) parameter of a device function is the
//! group its callers pass: [`super::coop_params`] finds that kind for the
//! whole file and the function is read with it ([`CoopGroups::with_params`]).
//!
//! A group variable or parameter is declared as an `int` (it holds
//! nothing copper needs); its kind is remembered by name for the method
//! calls on it. Anything else of `cg::` is an error naming it. Text is
//! produced for the parser as a head (tokens replaced) and later
//! replacements of single tokens or token ranges (a call's closing
//! parenthesis, the `;` after a reduction); the arguments in between are
//! read by the unit as usual.

use std::collections::HashMap;

use super::extract::matching;
use super::lex::{TokKind, Token};

/// What kind of group a name holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Group {
    /// `cg::thread_block`.
    Block,
    /// `cg::thread_block_tile<N>`.
    Tile(u32),
    /// `cg::grid_group`.
    Grid,
}

/// Text to write for a run of tokens: `head` for tokens `at..next`, then
/// each of `later` (from, to, text): tokens `from..=to` written as text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Desugared {
    /// The index of the first token after the head.
    pub next: usize,
    /// What the head's tokens are written as.
    pub head: String,
    /// Later token ranges and what they are written as.
    pub later: Vec<(usize, usize, String)>,
}

/// Why a cooperative-groups construct cannot be read: the byte offset in
/// the piece and the message.
pub(crate) type CoopError = (usize, String);

/// The groups declared so far in a function.
#[derive(Clone, Debug, Default)]
pub(crate) struct CoopGroups {
    groups: HashMap<String, Group>,
}

/// The linear index of a thread in its block.
const BLOCK_RANK: &str = "(threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z))";
/// Threads in a block.
const BLOCK_SIZE: &str = "(blockDim.x * blockDim.y * blockDim.z)";
/// The linear index of a block in the grid.
const GRID_BLOCK_RANK: &str = "(blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z))";
/// Blocks in the grid.
const GRID_BLOCKS: &str = "(gridDim.x * gridDim.y * gridDim.z)";

/// Names of the namespace (and its usual alias).
fn is_namespace(w: &str) -> bool {
    matches!(w, "cg" | "cooperative_groups")
}

/// Whether a function's text uses cooperative groups (a reprint would
/// write their desugared form).
pub fn uses_groups(text: &str) -> bool {
    [
        "cooperative_groups",
        "cg::",
        "this_thread_block",
        "tiled_partition",
        "this_grid",
    ]
    .iter()
    .any(|w| text.contains(w))
}

impl CoopGroups {
    /// The groups of a function whose group parameters (by name) are of
    /// the kinds given, as its callers pass them.
    pub(crate) fn with_params(params: &[(String, Group)]) -> CoopGroups {
        CoopGroups {
            groups: params.iter().cloned().collect(),
        }
    }

    /// The kind of group tokens `from..to` of `piece` denote, as a call's
    /// argument: a group variable, `cg::this_thread_block()`,
    /// `cg::this_grid()`, `cg::tiled_partition<N>(…)` or
    /// `cg::tiled_partition(parent, N)`; `None` for anything else.
    pub(crate) fn kind_of(
        &self,
        piece: &str,
        toks: &[Token],
        from: usize,
        to: usize,
    ) -> Option<Group> {
        let w = |j: usize| toks.get(j).map_or("", |t| t.text(piece));
        if to == from + 1 {
            return self.groups.get(w(from)).copied();
        }
        let at = if is_namespace(w(from)) && w(from + 1) == "::" {
            from + 2
        } else {
            from
        };
        // The call must be the whole argument.
        let whole =
            |open: usize| open < to && matching(piece, toks, open).is_some_and(|c| c + 1 == to);
        match w(at) {
            "this_thread_block" if whole(at + 1) => Some(Group::Block),
            "this_grid" if whole(at + 1) => Some(Group::Grid),
            "tiled_partition" => {
                if let Some((n, close)) = tile_size(piece, toks, at + 1) {
                    return whole(close + 1).then_some(Group::Tile(n));
                }
                if !whole(at + 1) {
                    return None;
                }
                match top_commas(piece, toks, at + 1, to - 1)[..] {
                    [c] if c + 3 == to => w(c + 1)
                        .trim_end_matches(['u', 'U'])
                        .parse::<u32>()
                        .ok()
                        .filter(|n| n.is_power_of_two() && *n <= 32)
                        .map(Group::Tile),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// Reads a cooperative-groups construct starting at identifier token
    /// `i` of `piece`; `None` when there is none.
    pub(crate) fn at(
        &mut self,
        piece: &str,
        toks: &[Token],
        i: usize,
    ) -> Result<Option<Desugared>, CoopError> {
        let w = |j: usize| toks.get(j).map_or("", |t| t.text(piece));
        let t = toks[i];
        if i > 0 && matches!(w(i - 1), "." | "->" | "::") {
            return Ok(None);
        }
        // `cg::word`, or a bare word after `using namespace`.
        let (word_at, qualified) =
            if w(i + 1) == "::" && toks.get(i + 2).is_some_and(|n| n.kind == TokKind::Ident) {
                (i + 2, is_namespace(t.text(piece)))
            } else {
                (i, false)
            };
        let word = w(word_at);
        if word_at == i + 2 && !qualified {
            return Ok(None);
        }
        let err = |what: String| Err((t.start, what));
        match word {
            "thread_block" | "grid_group" => {
                let g = if word == "grid_group" {
                    Group::Grid
                } else {
                    Group::Block
                };
                let name_at = self.declare(piece, toks, word_at + 1, g);
                return Ok(Some(simple(name_at, "int ")));
            }
            "thread_group" => {
                // A generic group: its kind is its initializer's (`=
                // cg::this_thread_block()`, `= cg::tiled_partition(b, 32)`,
                // `= tile`), a parameter's the one its callers pass (known
                // before the function is read).
                let name_at = (word_at + 1..toks.len())
                    .find(|&j| !matches!(w(j), "const" | "&" | "__restrict__"))
                    .unwrap_or(toks.len());
                let name = w(name_at);
                if matches!(w(name_at + 1), "," | ")") && self.groups.contains_key(name) {
                    return Ok(Some(simple(name_at, "int ")));
                }
                if matches!(w(name_at + 1), "," | ")") {
                    return err(format!("not supported: the `cg::thread_group` parameter `{name}`: no call in this file passes it a group copper reads (a variable holding `cg::this_thread_block()`, `cg::tiled_partition<N>(…)` or another group, or such a call), so its kind is unknown"));
                }
                let init = w(name_at + 2);
                if toks.get(name_at).is_none_or(|n| n.kind != TokKind::Ident)
                    || w(name_at + 1) != "="
                {
                    return err("not supported: a `cg::thread_group` that is not a variable initialized with a group or a function's parameter".into());
                }
                if let Some(&g) = self.groups.get(init).filter(|_| w(name_at + 3) == ";") {
                    self.groups.insert(w(name_at).to_string(), g);
                } else if !is_namespace(init) {
                    return err(format!("not supported: a `cg::thread_group` initialized with `{init}` (copper reads `cg::this_thread_block()`, `cg::tiled_partition(…)` and group variables)"));
                }
                return Ok(Some(simple(word_at + 1, "int")));
            }
            "tiled_partition" if w(word_at + 1) == "(" => {
                // `cg::tiled_partition(parent, N)`: the size given at run
                // time, read when it is a literal.
                let end = matching(piece, toks, word_at + 1)
                    .ok_or((t.start, "unclosed call".to_string()))?;
                let commas = top_commas(piece, toks, word_at + 1, end);
                let n = match commas[..] {
                    [c] if c + 2 == end => {
                        w(c + 1).trim_end_matches(['u', 'U']).parse::<u32>().ok()
                    }
                    _ => None,
                };
                let Some(n) = n.filter(|n| n.is_power_of_two() && *n <= 32) else {
                    return err("not supported: `cg::tiled_partition(parent, size)` with a size other than a literal 1, 2, 4, 8, 16 or 32".into());
                };
                self.bind_auto(piece, toks, i, Group::Tile(n));
                return Ok(Some(simple(end + 1, "0")));
            }
            "thread_block_tile" => {
                let (n, close) = tile_size(piece, toks, word_at + 1).ok_or((
                    t.start,
                    "cooperative groups: `thread_block_tile<N>` needs N a constant 1, 2, 4, 8, 16 or 32".to_string(),
                ))?;
                let name_at = self.declare(piece, toks, close + 1, Group::Tile(n));
                return Ok(Some(simple(name_at, "int ")));
            }
            "this_thread_block" | "this_grid" if w(word_at + 1) == "(" && w(word_at + 2) == ")" => {
                let g = if word == "this_grid" {
                    Group::Grid
                } else {
                    Group::Block
                };
                self.bind_auto(piece, toks, i, g);
                return Ok(Some(simple(word_at + 3, "0")));
            }
            "tiled_partition" if w(word_at + 1) == "<" => {
                let (n, close) = tile_size(piece, toks, word_at + 1).ok_or((
                    t.start,
                    "cooperative groups: `tiled_partition<N>` needs N a constant 1, 2, 4, 8, 16 or 32".to_string(),
                ))?;
                if w(close + 1) != "(" {
                    return err("not supported: `cg::tiled_partition` without a call".into());
                }
                let end = matching(piece, toks, close + 1)
                    .ok_or((t.start, "unclosed call".to_string()))?;
                self.bind_auto(piece, toks, i, Group::Tile(n));
                return Ok(Some(simple(end + 1, "0")));
            }
            "sync" if qualified && w(word_at + 1) == "(" => {
                // `cg::sync(g)`: the group's own `sync()`.
                let g = toks
                    .get(word_at + 2)
                    .map(|n| n.text(piece))
                    .and_then(|n| self.groups.get(n));
                let (Some(g), ")") = (g, w(word_at + 3)) else {
                    return err(
                        "not supported: `cg::sync` of something other than a group variable".into(),
                    );
                };
                return sync_of(*g, t.start).map(|s| Some(simple(word_at + 4, s)));
            }
            "reduce" if qualified => return self.reduce(piece, toks, i, word_at).map(Some),
            _ => {}
        }
        if qualified {
            return err(format!(
                "not supported: `cg::{word}` (copper reads `this_thread_block`, `tiled_partition<N>`, `tiled_partition(g, N)`, `this_grid`, `thread_block`, `thread_block_tile<N>`, `thread_group`, `grid_group`, `sync` and `reduce`)"
            ));
        }
        // `g.method(…)` on a group.
        let Some(&g) = self.groups.get(t.text(piece)) else {
            return Ok(None);
        };
        if w(i + 1) != "." || w(i + 3) != "(" {
            return Ok(None);
        }
        let method = w(i + 2);
        let call_end =
            matching(piece, toks, i + 3).ok_or((t.start, "unclosed call".to_string()))?;
        let no_args = call_end == i + 4;
        let name = t.text(piece);
        let unsupported = || -> Result<Option<Desugared>, CoopError> {
            Err((
                t.start,
                format!(
                    "not supported: `{name}.{method}` of a cooperative group (`cg::{}`)",
                    kind_name(g)
                ),
            ))
        };
        let value = |text: String| Ok(Some(simple(call_end + 1, &text)));
        match (g, method) {
            (_, "sync") if no_args => sync_of(g, t.start).map(|s| Some(simple(call_end + 1, s))),
            (Group::Block, "thread_rank") if no_args => value(BLOCK_RANK.into()),
            (Group::Block, "size" | "num_threads") if no_args => value(BLOCK_SIZE.into()),
            (Group::Block, "group_index") if no_args => value("blockIdx".into()),
            (Group::Block, "thread_index") if no_args => value("threadIdx".into()),
            (Group::Block, "group_dim" | "dim_threads") if no_args => value("blockDim".into()),
            (Group::Tile(n), "thread_rank") if no_args => value(format!("({BLOCK_RANK} % {n})")),
            (Group::Tile(n), "size" | "num_threads") if no_args => value(n.to_string()),
            (Group::Tile(n), "meta_group_rank") if no_args => {
                value(format!("({BLOCK_RANK} / {n})"))
            }
            (Group::Tile(n), "meta_group_size") if no_args => {
                value(format!("(({BLOCK_SIZE} + {}) / {n})", n - 1))
            }
            (Group::Tile(n), "shfl" | "shfl_down" | "shfl_up" | "shfl_xor") if !no_args => {
                let f = match method {
                    "shfl" => "__shfl_sync",
                    "shfl_down" => "__shfl_down_sync",
                    "shfl_up" => "__shfl_up_sync",
                    _ => "__shfl_xor_sync",
                };
                Ok(Some(Desugared {
                    next: i + 4,
                    head: format!("{f}(0xffffffff, "),
                    later: vec![(call_end, call_end, format!(", {n})"))],
                }))
            }
            (Group::Tile(32), "any" | "all" | "ballot") if !no_args => {
                let f = match method {
                    "any" => "__any_sync",
                    "all" => "__all_sync",
                    _ => "__ballot_sync",
                };
                Ok(Some(Desugared {
                    next: i + 4,
                    head: format!("{f}(0xffffffff, "),
                    later: Vec::new(),
                }))
            }
            (Group::Grid, "size" | "num_threads") if no_args => {
                value(format!("({GRID_BLOCKS} * {BLOCK_SIZE})"))
            }
            (Group::Grid, "thread_rank") if no_args => {
                value(format!("({GRID_BLOCK_RANK} * {BLOCK_SIZE} + {BLOCK_RANK})"))
            }
            _ => unsupported(),
        }
    }

    /// Records the name declared after a group type (token `from` on:
    /// `const`, `&` skipped) and returns the index of that name (`from`
    /// when there is none): the type's tokens up to it are written as
    /// `int ` (a group passed by reference holds nothing either; the
    /// space keeps `&t` from running into the type).
    fn declare(&mut self, piece: &str, toks: &[Token], from: usize, g: Group) -> usize {
        let at = (from..toks.len())
            .find(|&j| !matches!(toks[j].text(piece), "const" | "&" | "__restrict__"))
            .filter(|&j| toks[j].kind == TokKind::Ident);
        if let Some(j) = at {
            self.groups.insert(toks[j].text(piece).to_string(), g);
        }
        at.unwrap_or(from)
    }

    /// `auto NAME = cg::…()` with the call at token `i`: records NAME.
    fn bind_auto(&mut self, piece: &str, toks: &[Token], i: usize, g: Group) {
        if i >= 2 && toks[i - 1].is(piece, "=") && toks[i - 2].kind == TokKind::Ident {
            self.groups
                .entry(toks[i - 2].text(piece).to_string())
                .or_insert(g);
        }
    }

    /// `NAME = cg::reduce(tile, v, cg::op<T>());` (or a declaration of
    /// NAME so initialized), with `cg` at token `i` and `reduce` at
    /// `word_at`: NAME is set to `(v)`, then combined with
    /// `__shfl_xor_sync`s at distances N/2, …, 1 after the statement.
    fn reduce(
        &self,
        piece: &str,
        toks: &[Token],
        i: usize,
        word_at: usize,
    ) -> Result<Desugared, CoopError> {
        let at = toks[i].start;
        let w = |j: usize| toks.get(j).map_or("", |t| t.text(piece));
        let fail = |why: &str| Err((at, format!("not supported: `cg::reduce` {why}")));
        if w(word_at + 1) != "(" {
            return fail("without a call");
        }
        let target = (i >= 2 && w(i - 1) == "=" && toks[i - 2].kind == TokKind::Ident)
            .then(|| w(i - 2).to_string());
        let Some(target) = target else {
            return fail(
                "other than as `x = cg::reduce(tile, v, op)` or `T x = cg::reduce(tile, v, op)`",
            );
        };
        let open = word_at + 1;
        let Some(close) = matching(piece, toks, open) else {
            return fail("with an unclosed call");
        };
        let commas = top_commas(piece, toks, open, close);
        let [c1, c2] = commas[..] else {
            return fail("without three arguments");
        };
        let tile = w(open + 1);
        let Some(Group::Tile(n)) = (c1 == open + 2).then(|| self.groups.get(tile)).flatten() else {
            return fail("of something other than a `thread_block_tile<N>` variable");
        };
        // The operation: `cg::plus<T>()`, `cg::less<T>()`, …
        let op_at = if is_namespace(w(c2 + 1)) && w(c2 + 2) == "::" {
            c2 + 3
        } else {
            c2 + 1
        };
        let combine = |other: &str| -> Option<String> {
            Some(match w(op_at) {
                "plus" => format!("{target} += {other};"),
                "bit_and" => format!("{target} &= {other};"),
                "bit_or" => format!("{target} |= {other};"),
                "bit_xor" => format!("{target} ^= {other};"),
                "less" => format!("{target} = min({target}, {other});"),
                "greater" => format!("{target} = max({target}, {other});"),
                _ => return None,
            })
        };
        if w(close + 1) != ";" {
            return fail("inside a larger expression");
        }
        let mut steps = String::new();
        let mut d = n / 2;
        while d > 0 {
            let other = format!("__shfl_xor_sync(0xffffffff, {target}, {d}, {n})");
            let Some(s) = combine(&other) else {
                return fail(&format!(
                    "with `{}`: copper reads `cg::plus`, `cg::less`, `cg::greater`, `cg::bit_and`, `cg::bit_or` and `cg::bit_xor`",
                    w(op_at)
                ));
            };
            steps.push(' ');
            steps.push_str(&s);
            d /= 2;
        }
        Ok(Desugared {
            next: c1 + 1,
            head: "(".into(),
            later: vec![
                (c2, close, ")".into()),
                (close + 1, close + 1, format!(";{steps}")),
            ],
        })
    }
}

/// Replaces the head up to token `next` with `text`.
fn simple(next: usize, text: &str) -> Desugared {
    Desugared {
        next,
        head: text.to_string(),
        later: Vec::new(),
    }
}

/// What a group's `sync()` is.
fn sync_of(g: Group, at: usize) -> Result<&'static str, CoopError> {
    match g {
        Group::Block => Ok("__syncthreads()"),
        Group::Tile(_) => Ok("__syncwarp()"),
        Group::Grid => Err((
            at,
            "not supported: `grid_group::sync` (a grid-wide barrier needs a cooperative launch copper does not model)".into(),
        )),
    }
}

/// The type's name for messages.
pub(crate) fn kind_name(g: Group) -> String {
    match g {
        Group::Block => "thread_block".into(),
        Group::Tile(n) => format!("thread_block_tile<{n}>"),
        Group::Grid => "grid_group".into(),
    }
}

/// `<N>` at token `open`: N (a power of two up to 32) and the `>`'s index.
fn tile_size(piece: &str, toks: &[Token], open: usize) -> Option<(u32, usize)> {
    if !toks.get(open)?.is(piece, "<") || !toks.get(open + 2)?.is(piece, ">") {
        return None;
    }
    let n: u32 = toks[open + 1]
        .text(piece)
        .trim_end_matches(['u', 'U'])
        .parse()
        .ok()?;
    (n.is_power_of_two() && n <= 32).then_some((n, open + 2))
}

/// Indices of the top-level commas between tokens `open` and `close`.
fn top_commas(piece: &str, toks: &[Token], open: usize, close: usize) -> Vec<usize> {
    let mut depth = 0i32;
    let mut out = Vec::new();
    for (j, t) in toks.iter().enumerate().take(close).skip(open + 1) {
        match t.text(piece) {
            "(" | "[" | "{" => depth += 1,
            ")" | "]" | "}" => depth -= 1,
            "," if depth == 0 => out.push(j),
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cuda::lex::tokenize;

    /// The text `piece` is read as, token by token through the groups.
    fn desugar(piece: &str) -> Result<String, CoopError> {
        desugar_with(piece, &[])
    }

    /// The text `piece` is read as with group parameters `params`.
    fn desugar_with(piece: &str, params: &[(String, Group)]) -> Result<String, CoopError> {
        let toks = tokenize(piece);
        let mut cg = CoopGroups::with_params(params);
        let mut out = String::new();
        let mut later: Vec<(usize, usize, String)> = Vec::new();
        let mut i = 0;
        while i < toks.len() {
            if let Some(k) = later.iter().position(|l| l.0 == i) {
                let (_, to, text) = later.remove(k);
                out.push_str(&text);
                out.push(' ');
                i = to + 1;
                continue;
            }
            if toks[i].kind == TokKind::Ident {
                if let Some(d) = cg.at(piece, &toks, i)? {
                    out.push_str(&d.head);
                    out.push(' ');
                    later.extend(d.later);
                    i = d.next;
                    continue;
                }
            }
            out.push_str(toks[i].text(piece));
            out.push(' ');
            i += 1;
        }
        Ok(out.split_whitespace().collect::<Vec<_>>().join(" "))
    }

    #[test]
    fn blocks_and_tiles_become_barriers_indices_and_shuffles() {
        let got = desugar(
            "cg::thread_block b = cg::this_thread_block(); b.sync(); int r = b.thread_rank(); \
             auto t = cg::tiled_partition<16>(b); v = t.shfl_down(v, 8); int k = t.thread_rank();",
        );
        let got = got.unwrap_or_default();
        assert!(got.starts_with("int b = 0 ; __syncthreads() ;"), "{got}");
        assert!(got.contains(&format!("int r = {BLOCK_RANK} ;")), "{got}");
        assert!(got.contains("auto t = 0 ;"), "{got}");
        assert!(
            got.contains("__shfl_down_sync(0xffffffff, v , 8 , 16) ;"),
            "{got}"
        );
        assert!(
            got.contains(&format!("int k = ({BLOCK_RANK} % 16) ;")),
            "{got}"
        );
    }

    #[test]
    fn thread_groups_are_the_groups_they_are_initialized_with() {
        let got = desugar(
            "cg::thread_group g = cg::this_thread_block(); int s = g.size(); g.sync(); \
             cg::thread_group t = cg::tiled_partition(g, 16); int r = t.thread_rank(); \
             cg::thread_group u = t; u.sync(); int z = u.size();",
        )
        .unwrap_or_default();
        assert!(
            got.starts_with(&format!(
                "int g = 0 ; int s = {BLOCK_SIZE} ; __syncthreads() ;"
            )),
            "{got}"
        );
        assert!(got.contains("int t = 0 ;"), "{got}");
        assert!(
            got.contains(&format!("int r = ({BLOCK_RANK} % 16) ;")),
            "{got}"
        );
        assert!(
            got.ends_with("int u = t ; __syncwarp() ; int z = 16 ;"),
            "{got}"
        );
        let e = desugar("cg::thread_group t = cg::tiled_partition(g, n);").unwrap_err();
        assert!(
            e.1.contains("`cg::tiled_partition(parent, size)`"),
            "{}",
            e.1
        );
        let e = desugar("__device__ int f(cg::thread_group g, int v) { return g.size(); }")
            .unwrap_err();
        assert!(
            e.1.contains("no call in this file passes it a group"),
            "{}",
            e.1
        );
        let e = desugar("cg::thread_group g = make();").unwrap_err();
        assert!(e.1.contains("initialized with `make`"), "{}", e.1);
    }

    #[test]
    fn group_parameters_are_the_kinds_their_callers_pass() {
        let tile = [("t".to_string(), Group::Tile(16))];
        let got = desugar_with(
            "__device__ int f(const cg::thread_group &t, int v) { t.sync(); return v + t.thread_rank() * t.size(); }",
            &tile,
        )
        .unwrap_or_default();
        assert_eq!(
            got,
            format!("__device__ int f ( const int t , int v ) {{ __syncwarp() ; return v + ({BLOCK_RANK} % 16) * 16 ; }}")
        );
        let block = [("g".to_string(), Group::Block)];
        let got = desugar_with(
            "int f(cooperative_groups::thread_group g) { g.sync(); }",
            &block,
        )
        .unwrap_or_default();
        assert_eq!(got, "int f ( int g ) { __syncthreads() ; }");
        let got = desugar_with("int f(auto g) { return g.size(); }", &block).unwrap_or_default();
        assert_eq!(got, format!("int f ( auto g ) {{ return {BLOCK_SIZE} ; }}"));
        let e = desugar_with("int f(cg::thread_group h) { return 0; }", &block).unwrap_err();
        assert!(e.1.contains("parameter `h`: no call"), "{}", e.1);
    }

    #[test]
    fn arguments_name_their_kinds() {
        let mut cg = CoopGroups::default();
        let kind = |cg: &CoopGroups, text: &str| {
            let toks = tokenize(text);
            cg.kind_of(text, &toks, 0, toks.len())
        };
        assert_eq!(kind(&cg, "cg::this_thread_block()"), Some(Group::Block));
        assert_eq!(kind(&cg, "this_grid()"), Some(Group::Grid));
        assert_eq!(
            kind(&cg, "cg::tiled_partition<8>(cg::this_thread_block())"),
            Some(Group::Tile(8))
        );
        assert_eq!(kind(&cg, "cg::tiled_partition(b, 4)"), Some(Group::Tile(4)));
        assert_eq!(kind(&cg, "cg::tiled_partition(b, n)"), None);
        assert_eq!(kind(&cg, "cg::this_thread_block().x"), None);
        assert_eq!(kind(&cg, "b"), None);
        let text = "cg::thread_block b = cg::this_thread_block();";
        let toks = tokenize(text);
        assert!(cg.at(text, &toks, 0).is_ok_and(|d| d.is_some()));
        assert_eq!(kind(&cg, "b"), Some(Group::Block));
    }

    #[test]
    fn reduce_is_a_butterfly_of_the_tile_width() {
        let got = desugar(
            "cg::thread_block_tile<8> t = cg::tiled_partition<8>(cg::this_thread_block()); \
             float s = cg::reduce(t, a[i], cg::plus<float>());",
        )
        .unwrap_or_default();
        assert!(
            got.ends_with(
                "float s = ( a [ i ] ) ; s += __shfl_xor_sync(0xffffffff, s, 4, 8); s += __shfl_xor_sync(0xffffffff, s, 2, 8); s += __shfl_xor_sync(0xffffffff, s, 1, 8);"
            ),
            "{got}"
        );
    }

    #[test]
    fn other_constructs_are_named() {
        let e = desugar("auto g = cg::coalesced_threads();").unwrap_err();
        assert!(
            e.1.contains("not supported: `cg::coalesced_threads`"),
            "{}",
            e.1
        );
        let e = desugar("cg::grid_group g = cg::this_grid(); g.sync();").unwrap_err();
        assert!(e.1.contains("grid_group::sync"), "{}", e.1);
        let e = desugar(
            "cg::thread_block_tile<32> t = cg::tiled_partition<32>(b); x = t.match_any(v);",
        )
        .unwrap_err();
        assert!(e.1.contains("`t.match_any`"), "{}", e.1);
        let e = desugar("return cg::reduce(t, v, cg::plus<int>());").unwrap_err();
        assert!(e.1.contains("`cg::reduce`"), "{}", e.1);
    }
}
