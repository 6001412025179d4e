//! Why a transform leaves a kernel, a loop, an array or a branch alone.
//!
//! A transform's helpers return [`Refusal`]; the transform puts it in a
//! [`crate::Skip`] (often after "`a` stays in global memory: "), so each
//! `Display` is the message users see. The reasons several transforms
//! share have a variant of their own; the rest are one-off sentences about
//! one construct ([`Refusal::Other`]).

use crate::Context;
use copper::launch::Dims;

/// Why a rewrite is refused; its `Display` is the reason users see.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Refusal {
    /// The rewrite is written for one block size, and none is known;
    /// `needs` says what is sized from it (empty: nothing more to say).
    #[error("the block size is not known (give `--block`, a launch, or a parameter file){needs}")]
    UnknownBlock {
        /// ": a tile needs a fixed size", or empty.
        needs: &'static str,
    },
    /// The block does not have the shape the rewrite needs.
    #[error("the block ({block}) is not {wanted}")]
    BlockShape {
        /// The block.
        block: Dims,
        /// The shape needed: "2-D and flat".
        wanted: &'static str,
    },
    /// Code the rewrite would repeat, drop or move has side effects.
    #[error("{what} has side effects")]
    SideEffects {
        /// Which code: "the stored value".
        what: &'static str,
    },
    /// Code the rewrite would move may `break`, `continue` or `return`.
    #[error("{what} `break`, `continue` or `return`")]
    Jumps {
        /// "it has a", "the loop body may".
        what: &'static str,
    },
    /// An array is used other than element by element
    /// ([`crate::ast_util::array_uses`]).
    #[error("it is used other than as `a[index]` (as a pointer, passed to a function, or its address taken)")]
    NotElementwise,
    /// A launch in the file passes one array as two pointer parameters
    /// the rewrite needs apart.
    #[error("at line {line}, `{arg}` is passed as both `{first}` and `{second}`")]
    Aliased {
        /// The launch's line.
        line: usize,
        /// The argument as written.
        arg: String,
        /// One parameter.
        first: String,
        /// The other.
        second: String,
    },
    /// Any other reason, as a sentence about the construct refused.
    #[error("{0}")]
    Other(String),
}

impl From<String> for Refusal {
    fn from(why: String) -> Self {
        Refusal::Other(why)
    }
}

impl From<&str> for Refusal {
    fn from(why: &str) -> Self {
        Refusal::Other(why.to_string())
    }
}

impl Context<'_> {
    /// The block the kernel is launched with, or why a rewrite that
    /// `needs` it (": a tile needs a fixed size") is refused.
    pub fn fixed_block(&self, needs: &'static str) -> Result<Dims, Refusal> {
        self.block.ok_or(Refusal::UnknownBlock { needs })
    }
}
