//! What a ghost counter stands for: the trip count of a loop the bound
//! engine counts with a ghost (see `bound::ghost`), read by the linear
//! facts as an upper bound of that ghost.

use crate::ir::VarId;

/// How many times the body of a ghost-counted loop runs at most.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Trips {
    /// This many (the launch fixes it).
    Count(u64),
    /// `1 + L`, where `L` is the input variable `log2(n)` of an input `n`.
    Log(VarId),
    /// At most the input variable `⌈n/(blockDim.x·gridDim.x)⌉` (or
    /// another product of launch dimensions) of an input `n`.
    Quotient(VarId),
    /// Not a trip count: the ghost is a uniform lower bound of this
    /// counter in every lane, moved with it (see `bound::floor`).
    Floor(VarId),
}

impl Trips {
    /// The input variable the trip count is bounded by, if any (a
    /// logarithm's or a quotient's).
    pub fn bounding_input(self) -> Option<VarId> {
        match self {
            Trips::Log(v) | Trips::Quotient(v) => Some(v),
            Trips::Count(_) | Trips::Floor(_) => None,
        }
    }
}
