//! What a rewrite that moves or caches loads of some pointer parameters
//! across stores through others relies on: that the arrays do not
//! overlap. CUDA lets a caller pass one array twice, and then the
//! original's loads see the stores the rewrite's no longer do.
//!
//! The promise is proved when, for every pair, either pointer is declared
//! `__restrict__`, or every launch in the file passes separate
//! `cudaMalloc` allocations, or the parameter file gives each its own
//! array. Otherwise the rewrite declares exactly those parameters
//! `__restrict__` in the code it writes, so the promise stands in the
//! diff for the reviewer and for nvcc, and its description says that
//! callers must pass arrays that do not overlap.

use crate::read_only::no_alias;
use copper::source::Span;

use crate::{Candidate, Context, Proposals, Refusal, Skip};

/// A promise a rewrite makes its callers keep.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Promise {
    /// Parameters (by position) the rewrite declares `__restrict__`.
    pub restrict: Vec<usize>,
    /// The pairs (read, written) of parameter names it is about.
    pub pairs: Vec<(String, String)>,
    /// What callers must do, for people.
    pub said: String,
}

/// What the rewrite of `cx.function` that moves loads of one array
/// across stores through another, for each pair `(read, written)` of
/// names (names that are not pointer parameters, and a name paired with
/// itself, are ignored), needs its callers to promise: `None` when no
/// pair needs it or copper has the proof; `Err` when a launch in the file
/// passes one array for a pair (the rewrite would be wrong there).
pub fn needed(cx: &Context, pairs: &[(String, String)]) -> Result<Option<Promise>, Refusal> {
    let f = cx.function;
    let position = |n: &String| {
        f.params
            .iter()
            .position(|p| &p.name == n && p.ty.pointers.len() == 1 && p.dims.is_empty())
    };
    let restrict = |i: usize| f.params[i].ty.pointers[0].is_restrict;
    let mut open: Vec<(usize, usize)> = pairs
        .iter()
        .filter_map(|(r, w)| Some((position(r)?, position(w)?)))
        .filter(|&(r, w)| r != w && !restrict(r) && !restrict(w))
        .collect();
    open.sort_unstable();
    open.dedup();
    if open.is_empty() {
        return Ok(None);
    }
    let (r, w): (Vec<usize>, Vec<usize>) = open.iter().copied().unzip();
    let why = match no_alias(cx.host, f, &dedup(r), &dedup(w), cx.params) {
        Ok(_) => return Ok(None),
        Err(aliased @ Refusal::Aliased { .. }) => return Err(aliased),
        Err(why) => why,
    };
    let mut restrict: Vec<usize> = open
        .iter()
        .flat_map(|&(r, w)| [r, w])
        .filter(|&i| !f.params[i].ty.pointers[0].is_restrict)
        .collect();
    restrict.sort_unstable();
    restrict.dedup();
    let names: Vec<String> = restrict
        .iter()
        .map(|&i| format!("`{}`", f.params[i].name))
        .collect();
    let listed = match names.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => String::new(),
    };
    Ok(Some(Promise {
        said: format!(
            "declares {listed} `__restrict__`: callers must pass arrays that do not overlap (copper cannot tell: {why})"
        ),
        restrict,
        pairs: open
            .iter()
            .map(|&(r, w)| (f.params[r].name.clone(), f.params[w].name.clone()))
            .collect(),
    }))
}

fn dedup(mut v: Vec<usize>) -> Vec<usize> {
    v.sort_unstable();
    v.dedup();
    v
}

/// `c` offered in `out` keeping the promise the pairs of [`needed`]
/// ask for; when a launch passes one array for a pair, a skip at `span`
/// instead: "`left_alone`: why, and `which` (the side that writes)".
pub fn offer(
    cx: &Context,
    mut c: Candidate,
    pairs: &[(String, String)],
    out: &mut Proposals,
    span: Span,
    (left_alone, which): (&str, &str),
) {
    match needed(cx, pairs) {
        Ok(promise) => {
            promise.into_iter().for_each(|p| keep(&mut c, p));
            out.candidates.push(c);
        }
        Err(why) => out.skipped.push(Skip {
            span,
            reason: format!("{left_alone}: {why}, and {which}"),
        }),
    }
}

/// `c` keeping `promise`: those parameters declared `__restrict__`, the
/// promise in its description and among what it assumes.
pub fn keep(c: &mut Candidate, promise: Promise) {
    for &i in &promise.restrict {
        if let Some(p) = c.function.params.get_mut(i) {
            if let Some(ptr) = p.ty.pointers.first_mut() {
                ptr.is_restrict = true;
            }
        }
    }
    c.description.push_str(&format!("; {}", promise.said));
    c.assumes.push(promise.said);
    c.promised_apart.extend(promise.pairs);
}
