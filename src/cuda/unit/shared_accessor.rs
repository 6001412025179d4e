//! `SharedMemory<T>()`, the samples' accessor of dynamic shared memory
//! (see [`crate::cuda::extract`]), read as the call
//! `__copper_dynamic_shared((T *)0)`: the launch's dynamic shared memory
//! as a `T *`. It is recorded as a macro use, so that the expression is
//! printed as written.

use super::{angle_close, collapse_ws, MacroUse, Tokens, Unit};
use crate::source::Span;

/// The builtin standing for the launch's dynamic shared memory: its one
/// argument is a null pointer cast to the pointer type wanted.
pub const DYNAMIC_SHARED: &str = "__copper_dynamic_shared";

impl Unit {
    /// Writes the accessor temporary `NAME<T>()` starting at identifier
    /// `i` as [`DYNAMIC_SHARED`]; returns the index of the next token,
    /// or `None` when `i` starts no such temporary.
    pub(super) fn shared_accessor(&mut self, tokens: Tokens, i: usize) -> Option<usize> {
        let Tokens {
            piece, toks, base, ..
        } = tokens;
        let close = angle_close(piece, toks, i + 1)?;
        let (open, end) = (toks.get(close + 1)?, toks.get(close + 2)?);
        if !open.is(piece, "(") || !end.is(piece, ")") {
            return None;
        }
        let elem = collapse_ws(&piece[toks[i + 1].end..toks[close].start]);
        let out_start = self.text.len();
        let (from, to) = (base + toks[i].start, base + end.end);
        self.push_expansion(&format!("{DYNAMIC_SHARED}(({elem} *)0)"), from, to);
        self.macro_uses.push(MacroUse {
            out: Span::new(out_start, self.text.len()),
            invocation: collapse_ws(&piece[toks[i].start..end.end]),
        });
        Some(close + 3)
    }
}
