//! Why a kernel cannot be searched, why its candidates cannot be checked,
//! and why it gets no read-only suggestion; each `Display` is the reason
//! users see.

use copper::shown::Shown;
use std::path::PathBuf;

use copper_transforms::check::CheckError;
use copper_transforms::Refusal;

use crate::launch::LaunchError;

/// Why a kernel cannot be searched at all.
#[derive(Clone, Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SearchError {
    /// The file has no such kernel.
    #[error("no kernel named `{0}`")]
    NoKernel(String),
    /// The kernel does not lower (its diagnostic, rendered).
    #[error("{0}")]
    NotLowered(String),
    /// The parameter file's launch of it cannot run.
    #[error("the parameter file's launch cannot run: {0}")]
    Launch(#[source] LaunchError),
}

/// Why no candidate of a kernel can be checked.
#[derive(Clone, Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Unchecked {
    /// copper does not rewrite the kernel (the reason).
    #[error("{0}")]
    NotRewritten(String),
    /// The original does not run cleanly on enough test launches.
    #[error(
        "{source}; to check it, write the launch it runs on: `copper params {} > {}` and edit it{}",
        path.shown(),
        path.with_extension("toml").shown(),
        if *with_params { "" } else { ", or give `--block X,Y`" }
    )]
    Original {
        /// Why.
        source: CheckError,
        /// The kernel's file.
        path: PathBuf,
        /// Whether a parameter file gave the launch.
        with_params: bool,
    },
    /// The search stopped at its wall-clock safety net (the message).
    #[error("{0}")]
    Late(String),
    /// A bound of the original is below a simulated cost (the internal
    /// error's message).
    #[error("{0}")]
    SelfCheck(String),
    /// Another instantiation of the kernel's template cannot be checked,
    /// so no rewrite of the template can be.
    #[error("`{name}`, another instantiation of the template, cannot be checked: {source}")]
    Instance {
        /// The other instantiation.
        name: String,
        /// Why.
        source: Box<Unchecked>,
    },
}

/// Why the best version gets no read-only data path suggestion.
#[derive(Clone, Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReadOnlyError {
    /// The suggestion cannot be made (the reason).
    #[error(transparent)]
    Refused(Refusal),
    /// It changes results.
    #[error("the suggestion failed its check: {0}")]
    Failed(#[source] CheckError),
    /// The kernel's candidates cannot be checked.
    #[error("it could not be checked: {0}")]
    Unchecked(#[source] Unchecked),
}
