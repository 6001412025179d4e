//! The CUDA samples' idiom for dynamic shared memory in template kernels:
//! a template struct (and its explicit specializations) whose only
//! members are conversion operators to a pointer, each declaring an
//! `extern __shared__` array and returning it cast (`template <class T>
//! struct SharedMemory { __device__ operator T *() { extern __shared__ int
//! __smem[]; return (T *)__smem; } … };`). `SharedMemory<T>()` is then the
//! launch's dynamic shared memory as a `T *`.

use super::{matching, Extracted, QualifierMacros};
use crate::cuda::lex::{TokKind, Token};

/// A file-scope `template <…> struct NAME {…};` (or a specialization
/// `template <> struct NAME<double> {…};`) at token `i`: when it is a
/// shared-memory accessor, records `NAME` in
/// [`Extracted::shared_accessors`] and returns the index after its `;`.
pub(super) fn template_struct(
    src: &str,
    toks: &[Token],
    i: usize,
    qualifiers: &QualifierMacros,
    out: &mut Extracted,
) -> Option<usize> {
    let head_close = angle_close(src, toks, i + 1)?;
    let keyword = toks.get(head_close + 1)?;
    if !keyword.is(src, "struct") && !keyword.is(src, "class") {
        return None;
    }
    let name = toks
        .get(head_close + 2)
        .filter(|t| t.kind == TokKind::Ident)?;
    let mut open = head_close + 3;
    if toks.get(open)?.is(src, "<") {
        open = angle_close(src, toks, open)? + 1;
    }
    if !toks.get(open)?.is(src, "{") {
        return None;
    }
    let close = matching(src, toks, open)?;
    if !toks.get(close + 1)?.is(src, ";") || !is_accessor(src, &toks[open + 1..close], qualifiers) {
        return None;
    }
    let name = name.text(src).to_string();
    if !out.shared_accessors.contains(&name) {
        out.shared_accessors.push(name);
    }
    Some(close + 2)
}

/// The index after the `;` of a template struct definition `template
/// <…> struct NAME {…};` (not a specialization) whose `template` is token
/// `i`.
pub(super) fn template_struct_end(src: &str, toks: &[Token], i: usize) -> Option<usize> {
    let head_close = angle_close(src, toks, i + 1)?;
    let keyword = toks.get(head_close + 1)?;
    if !keyword.is(src, "struct") && !keyword.is(src, "class") {
        return None;
    }
    toks.get(head_close + 2)
        .filter(|t| t.kind == TokKind::Ident)?;
    toks.get(head_close + 3).filter(|t| t.is(src, "{"))?;
    let close = matching(src, toks, head_close + 3)?;
    toks.get(close + 1).filter(|t| t.is(src, ";"))?;
    Some(close + 2)
}

/// The index of the `>` closing the `<` at token `open`.
fn angle_close(src: &str, toks: &[Token], open: usize) -> Option<usize> {
    toks.get(open).filter(|t| t.is(src, "<"))?;
    let mut depth = 0i32;
    for (j, t) in toks.iter().enumerate().skip(open) {
        match t.text(src) {
            "<" => depth += 1,
            ">" => depth -= 1,
            ">>" => depth -= 2,
            "{" | "}" | ";" => return None,
            _ => {}
        }
        if depth <= 0 {
            return (depth == 0).then_some(j);
        }
    }
    None
}

/// Whether the tokens of a struct body are conversion operators to a
/// pointer only, each returning a cast `extern __shared__` array (access
/// specifiers allowed), and at least one.
fn is_accessor(src: &str, body: &[Token], qualifiers: &QualifierMacros) -> bool {
    let shared = |t: &Token| qualifiers.of(t.text(src)).contains(&"__shared__");
    let mut operators = 0;
    let mut start = 0;
    let mut j = 0;
    while j < body.len() {
        match body[j].text(src) {
            ":" if j == start + 1 => start = j + 1,
            "{" => {
                let Some(end) = matching(src, body, j) else {
                    return false;
                };
                let head = &body[start..j];
                let code = &body[j..end];
                let converts = head.iter().any(|t| t.is(src, "operator"))
                    && head.iter().any(|t| t.is(src, "*"));
                let returns_shared = code.iter().any(|t| t.is(src, "extern"))
                    && code.iter().any(shared)
                    && code.iter().any(|t| t.is(src, "return"));
                if !converts || !returns_shared {
                    return false;
                }
                operators += 1;
                j = end + usize::from(body.get(end + 1).is_some_and(|t| t.is(src, ";")));
                start = j + 1;
            }
            ";" => return false,
            _ => {}
        }
        j += 1;
    }
    operators > 0 && start >= body.len()
}
