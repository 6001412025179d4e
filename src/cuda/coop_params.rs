//! The kinds of cooperative-group parameters, found for a whole file: a
//! device function's `cg::thread_group` parameter (by value, `const` or
//! `&`), or an `auto` one that is passed groups, is the kind of group its
//! callers pass it: a variable holding a group, `cg::this_thread_block()`,
//! `cg::tiled_partition<N>(…)`, or a group parameter of the caller's own
//! (so kinds flow down call chains). When every call in the file passes
//! one kind, the function is read with it; when calls pass two kinds, or
//! a `thread_group` is passed something that is no group copper reads,
//! the function is refused with a message naming the parameter and the
//! calls: its cost would depend on which caller it is read for.

use std::collections::BTreeMap;

use super::coop_groups::{kind_name, CoopGroups, Group};
use super::extract::{matching, split_args, FunctionItem};
use super::lex::{tokenize, TokKind, Token};
use crate::source::SourceFile;

/// A parameter that can hold a group.
#[derive(Clone, Debug)]
struct Param {
    /// Its position in the parameter list.
    index: usize,
    /// Its name.
    name: String,
    /// The file offset of its declaration.
    offset: usize,
    /// Declared `auto` (a group only when callers pass one) rather than
    /// `thread_group`.
    is_auto: bool,
}

/// A call passing an argument to a group parameter: the argument's file
/// offset and its kind (`None`: not a group copper reads, or not known
/// yet).
type Site = (usize, Option<Group>);

/// The group parameters of a file's functions and the kinds their callers
/// pass.
#[derive(Clone, Debug, Default)]
pub(crate) struct GroupParams {
    /// By function name: its parameters that can hold groups.
    params: BTreeMap<String, Vec<Param>>,
    /// By (function, parameter index): the calls passing it something,
    /// in file order.
    sites: BTreeMap<(String, usize), Vec<Site>>,
}

impl GroupParams {
    /// Finds the group parameters of `functions` (spans in `source`) and
    /// the kinds the calls among them pass.
    pub(crate) fn find<'a>(
        source: &SourceFile,
        functions: impl Iterator<Item = &'a FunctionItem> + Clone,
    ) -> GroupParams {
        let mut found = GroupParams::default();
        for f in functions.clone() {
            let text = source.slice(f.span);
            if !text.contains("thread_group") && !text.contains("auto") {
                continue;
            }
            let name_at = f.name_offset.saturating_sub(f.span.start);
            let params = group_params(text, &tokenize(text), name_at)
                .into_iter()
                .map(|p| Param {
                    offset: p.offset + f.span.start,
                    ..p
                })
                .collect::<Vec<_>>();
            if !params.is_empty() {
                found.params.insert(f.name.clone(), params);
            }
        }
        if found.params.is_empty() {
            return found;
        }
        // Each round may settle the parameters one call deeper.
        for _ in 0..=found.params.values().map(Vec::len).sum::<usize>() {
            let mut sites: BTreeMap<(String, usize), Vec<Site>> = BTreeMap::new();
            for f in functions.clone() {
                let text = source.slice(f.span);
                if found.params.keys().any(|name| text.contains(name.as_str())) {
                    found.calls_in(source, f, &mut sites);
                }
            }
            if sites == found.sites {
                break;
            }
            found.sites = sites;
        }
        found
    }

    /// The kinds of `function`'s group parameters, by name, for reading
    /// it; an error (the parameter's file offset and a message) for a
    /// parameter whose calls disagree or pass something else (`at`
    /// locates a file offset as `file:line:col`).
    pub(crate) fn of(
        &self,
        function: &str,
        at: &dyn Fn(usize) -> String,
    ) -> Result<Vec<(String, Group)>, (usize, String)> {
        let mut kinds = Vec::new();
        for p in self.params.get(function).into_iter().flatten() {
            if let Some(g) = self.kind(function, p, at)? {
                kinds.push((p.name.clone(), g));
            }
        }
        Ok(kinds)
    }

    /// The kind of parameter `p` of `function`: `None` when no call
    /// passes it a group; an error (the parameter's offset and the
    /// message) when calls disagree.
    fn kind(
        &self,
        function: &str,
        p: &Param,
        at: &dyn Fn(usize) -> String,
    ) -> Result<Option<Group>, (usize, String)> {
        let sites = self
            .sites
            .get(&(function.to_string(), p.index))
            .map_or(&[][..], Vec::as_slice);
        let Some(&(first_at, Some(first))) = sites.iter().find(|s| s.1.is_some()) else {
            return Ok(None);
        };
        let what = if p.is_auto {
            "auto"
        } else {
            "cg::thread_group"
        };
        let fail = |message: String| Err((p.offset, message));
        for &(other_at, other) in sites {
            match other {
                Some(g) if g == first => {}
                Some(g) => {
                    return fail(format!(
                        "not supported: `{function}`'s `{what}` parameter `{}` is passed a `cg::{}` at {} and a `cg::{}` at {}: copper reads a group parameter as the one kind all its callers pass (write a function per kind, or take `cg::thread_block` / `cg::thread_block_tile<N>`)",
                        p.name,
                        kind_name(first),
                        at(first_at),
                        kind_name(g),
                        at(other_at)
                    ))
                }
                None => {
                    return fail(format!(
                        "not supported: `{function}`'s `{what}` parameter `{}` is passed a `cg::{}` at {} and something that is not a group copper reads at {}",
                        p.name,
                        kind_name(first),
                        at(first_at),
                        at(other_at)
                    ))
                }
            }
        }
        Ok(Some(first))
    }

    /// Records the arguments the calls in `f` pass to group parameters,
    /// with the kinds known so far for `f`'s own.
    fn calls_in(
        &self,
        source: &SourceFile,
        f: &FunctionItem,
        sites: &mut BTreeMap<(String, usize), Vec<Site>>,
    ) {
        let text = source.slice(f.span);
        let toks = tokenize(text);
        // What `f`'s parameters are so far (a disagreement leaves them
        // unknown: `f` is refused anyway).
        let own = self.of(&f.name, &|_| String::new()).unwrap_or_default();
        let mut groups = CoopGroups::with_params(&own);
        // `f`'s own name, followed by its parameters, is no call.
        let name_at = f.name_offset.saturating_sub(f.span.start);
        let mut i = 0;
        while i < toks.len() {
            if toks[i].kind != TokKind::Ident {
                i += 1;
                continue;
            }
            let name = toks[i].text(text);
            let callee = self
                .params
                .get(name)
                .filter(|_| toks[i].start != name_at)
                .filter(|_| toks.get(i + 1).is_some_and(|n| n.is(text, "(")))
                .filter(|_| i == 0 || !matches!(toks[i - 1].text(text), "." | "->"));
            if let Some(params) = callee {
                if let Some(close) = matching(text, &toks, i + 1) {
                    let args = split_args(text, &toks, i + 2, close);
                    for p in params {
                        let Some(&(a, b)) = args.get(p.index).filter(|(a, b)| a < b) else {
                            continue;
                        };
                        let kind = groups.kind_of(text, &toks, a, b);
                        // An `auto` parameter passed no group is no group.
                        if p.is_auto && kind.is_none() {
                            continue;
                        }
                        sites
                            .entry((name.to_string(), p.index))
                            .or_default()
                            .push((f.span.start + toks[a].start, kind));
                    }
                }
            }
            // The groups declared so far (a construct copper refuses is
            // reported when the function is read).
            i = match groups.at(text, &toks, i) {
                Ok(Some(d)) if d.next > i => d.next,
                _ => i + 1,
            };
        }
    }
}

/// The parameters of the function whose text is `text` that can hold a
/// group: `cg::thread_group` ones and `auto` ones (`name_at`: the
/// offset of the function's name in `text`; offsets are in `text`).
fn group_params(text: &str, toks: &[Token], name_at: usize) -> Vec<Param> {
    // The parameter list: the first parenthesis after the name.
    let Some(open) = (toks.iter()).position(|t| t.start >= name_at && t.is(text, "(")) else {
        return Vec::new();
    };
    let Some(close) = matching(text, toks, open) else {
        return Vec::new();
    };
    split_args(text, toks, open + 1, close)
        .into_iter()
        .enumerate()
        .filter_map(|(index, (a, b))| {
            let words: Vec<&str> = toks[a..b]
                .iter()
                .take_while(|t| !t.is(text, "="))
                .map(|t| t.text(text))
                .collect();
            let name = words.last().filter(|w| is_ident(w))?;
            let is_auto = words.iter().find(|w| **w != "const") == Some(&"auto");
            (is_auto || words.contains(&"thread_group")).then(|| Param {
                index,
                name: name.to_string(),
                offset: toks[a].start,
                is_auto,
            })
        })
        .collect()
}

/// Whether `w` is an identifier.
fn is_ident(w: &str) -> bool {
    w.chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_')
        && w.chars().all(|c| c.is_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cuda::extract::extract;

    /// The kinds of `function`'s group parameters in `src`.
    fn kinds(src: &str, function: &str) -> Result<Vec<(String, Group)>, (usize, String)> {
        let source = SourceFile::new("f.cu", src);
        let ex = extract(src);
        let found = GroupParams::find(&source, ex.functions.iter());
        let at = |o: usize| {
            let (l, c) = source.line_col(o);
            format!("f.cu:{l}:{c}")
        };
        found.of(function, &at)
    }

    const CHAIN: &str = "__device__ int inner(cg::thread_group g, int v) { return g.size() + v; }\n\
        __device__ int outer(const cg::thread_group &h, int v) { return inner(h, v); }\n\
        __global__ void k(int *a) {\n  auto t = cg::tiled_partition<16>(cg::this_thread_block());\n  a[0] = outer(t, 1);\n}\n";

    #[test]
    fn kinds_flow_down_call_chains() {
        assert_eq!(
            kinds(CHAIN, "outer"),
            Ok(vec![("h".into(), Group::Tile(16))])
        );
        assert_eq!(
            kinds(CHAIN, "inner"),
            Ok(vec![("g".into(), Group::Tile(16))])
        );
        assert_eq!(kinds(CHAIN, "k"), Ok(Vec::new()));
    }

    #[test]
    fn disagreeing_callers_are_named() {
        let src = format!(
            "{CHAIN}__global__ void b(int *a) {{\n  a[1] = inner(cg::this_thread_block(), 2);\n}}\n"
        );
        let (at, m) = kinds(&src, "inner").unwrap_err();
        assert_eq!(at, src.find("cg::thread_group g").unwrap_or(0));
        assert!(
            m.contains("`inner`'s `cg::thread_group` parameter `g` is passed a `cg::thread_block_tile<16>` at f.cu:2:")
                && m.contains("and a `cg::thread_block` at f.cu:8:16"),
            "{m}"
        );
        // `outer` itself is still read: only `inner` depends on the caller.
        assert!(kinds(&src, "outer").is_ok());
        let src = "__device__ int f(auto g, int v) { return v; }\n__global__ void k(int *a, int n) { a[0] = f(n, 1); a[1] = f(cg::this_grid(), 2); }\n";
        // An `auto` parameter is a group only where a group is passed.
        assert_eq!(kinds(src, "f"), Ok(vec![("g".into(), Group::Grid)]));
        let src = "__device__ int f(auto g, int v) { return v; }\n__global__ void k(int *a, int n) { a[0] = f(n, 1); }\n";
        assert_eq!(kinds(src, "f"), Ok(Vec::new()));
    }
}
