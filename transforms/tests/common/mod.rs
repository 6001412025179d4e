//! What the transforms' tests share: the crate's own fixtures
//! (`src/fixture.rs`: a transform's proposals for a small kernel, every
//! candidate checked against the original by differential simulation;
//! `check` and `check_not_applicable`), the same file its unit tests use.

#[path = "../../src/fixture.rs"]
mod fixture;

#[allow(unused_imports)]
pub use fixture::*;
