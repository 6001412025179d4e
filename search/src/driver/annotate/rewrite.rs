//! The rewrite beside the original: the search `copper optimize` runs,
//! for one kernel, and the best version annotated on the launch the
//! original was annotated on (its x and y exchanged when the rewrite
//! exchanges them in the launch too), so that the two read line by line.

use copper::launch::Dims;
use std::sync::Arc;

use copper::bound::Config;
use copper::cost::Metric;
use copper::cuda::diff::unified;
use copper::cuda::parse::ParsedFile;
use copper::cuda::relaunch::Reshape;
use copper::ir::Kernel;
use copper::sim::params::LaunchSpec;
use copper::sim::work::Work;

use super::{annotate, AnnotateError, Annotation};
use crate::launch::{kernel_shape, FIT_STEPS};
use crate::pipeline::{self, optimize_kernel, Cache, SearchError};

/// The best version found, annotated.
pub struct Rewrite {
    /// What each applied transform changed, and why it helps.
    pub applied: Vec<String>,
    /// The unified diff of the kernel's text.
    pub diff: String,
    /// What the rewrite assumes or changes outside the kernel's text.
    pub notes: Vec<String>,
    /// The rewritten kernel, annotated.
    pub annotation: Annotation,
}

/// What to search and annotate the rewrite with.
pub struct RewriteSearch<'a> {
    /// The block given for every kernel, if any (over the host code's).
    pub block: Option<Dims>,
    /// The grid given, as the block.
    pub grid: Option<Dims>,
    /// The search.
    pub pipeline: &'a pipeline::Settings,
    /// The analysis the rewrite is annotated under.
    pub analysis: Config,
    /// The metrics annotated.
    pub metrics: &'a [Metric],
}

/// Why there is no rewrite to show.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RewriteError {
    /// The search failed.
    #[error(transparent)]
    Search(#[from] SearchError),
    /// The rewrite could not be annotated.
    #[error(transparent)]
    Annotate(#[from] AnnotateError),
    /// The kernel is not among the file's items.
    #[error("not listed")]
    NotListed,
    /// The kernel's span is not in its file's text.
    #[error("the kernel's text is not in its file")]
    NotInFile,
}

/// The rewrite of `kernel` (of `parsed`, with the parameter file's launch
/// `spec`), annotated on `annotated` (the launch the original was
/// annotated on): `Ok(None)` when nothing better was found, `Err` when the
/// search failed or the rewrite could not be annotated.
pub fn search(
    parsed: &ParsedFile,
    kernel: &Kernel,
    spec: Option<&LaunchSpec>,
    annotated: &LaunchSpec,
    r: &RewriteSearch,
    cache: &Cache,
) -> Result<Option<Rewrite>, RewriteError> {
    let name = &kernel.name;
    let shape = kernel_shape(
        r.block,
        r.grid,
        parsed,
        parsed,
        kernel,
        spec,
        &Arc::new(Work::new(FIT_STEPS)),
    );
    let result = optimize_kernel(parsed, parsed, name, spec, &shape, r.pipeline, cache)?;
    if !result.improved() {
        return Ok(None);
    }
    let best = &result.best;
    let mut launch = annotated.clone();
    let mut notes = result.preconditions.clone();
    if let Some(r) = best.lineage.reshape() {
        r.lists(&mut launch.grid, &mut launch.block);
        notes.push(format!(
            "the launch changes too ({}): `copper optimize --diff` shows the host code's edit",
            r.what()
        ));
    }
    let (mut annotation, _) = annotate(
        &best.file,
        &best.kernel,
        Some(&launch),
        r.analysis,
        r.metrics,
    )?;
    annotation.assumptions = vec![match best.lineage.reshape() {
        Some(Reshape::SwapXy) => "on the original's launch, x and y exchanged".into(),
        Some(Reshape::ScaleGridX(k)) => {
            format!("on the original's launch, {k} times the blocks in x")
        }
        None => "on the original's launch".into(),
    }];
    // The whole file with the kernel's text replaced, so that the diff's
    // line numbers are the file's.
    let text = &parsed.source.text;
    let span = parsed
        .item(name)
        .map(|i| i.span)
        .ok_or(RewriteError::NotListed)?;
    let (Some(head), Some(tail)) = (text.get(..span.start), text.get(span.end..)) else {
        return Err(RewriteError::NotInFile);
    };
    let diff = unified(
        parsed.source.path.to_string_lossy().as_bytes(),
        text,
        &format!("{head}{}{tail}", result.best_text()),
    );
    Ok(Some(Rewrite {
        applied: result
            .applied
            .iter()
            .map(|a| format!("{}: {} ({})", a.transform, a.description, a.why))
            .collect(),
        diff,
        notes,
        annotation,
    }))
}
