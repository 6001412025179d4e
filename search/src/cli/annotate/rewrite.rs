//! The rewrite beside the original: the search `copper optimize` runs,
//! for one kernel, and the best version annotated on the launch the
//! original was annotated on (its x and y exchanged when the rewrite
//! exchanges them in the launch too), so that the two read line by line.

use std::sync::Arc;

use copper::cuda::diff::unified;
use copper::cuda::parse::ParsedFile;
use copper::ir::Kernel;
use copper::sim::params::LaunchSpec;
use copper::sim::work::Work;
use copper_search::launch::{kernel_shape, FIT_STEPS};
use copper_search::pipeline::{optimize_kernel, Cache};

use crate::cli::settings::Settings;
use copper_search::driver::annotate::{annotate, Annotation};

/// The best version found, annotated.
pub(super) struct Rewrite {
    /// What each applied transform changed, and why it helps.
    pub applied: Vec<String>,
    /// The unified diff of the kernel's text.
    pub diff: String,
    /// What the rewrite assumes or changes outside the kernel's text.
    pub notes: Vec<String>,
    /// The rewritten kernel, annotated.
    pub annotation: Annotation,
}

/// The rewrite of `kernel` (of `parsed`, with the parameter file's launch
/// `spec`), annotated on `annotated` (the launch the original was
/// annotated on): `Ok(None)` when nothing better was found, `Err` when the
/// search failed or the rewrite could not be annotated.
pub(super) fn search(
    parsed: &ParsedFile,
    kernel: &Kernel,
    spec: Option<&LaunchSpec>,
    annotated: &LaunchSpec,
    s: &Settings,
    cache: &Cache,
) -> Result<Option<Rewrite>, String> {
    let search = s.search.as_ref().ok_or("no search settings")?;
    let name = &kernel.name;
    let shape = kernel_shape(
        s.block,
        s.grid,
        parsed,
        parsed,
        kernel,
        spec,
        &Arc::new(Work::new(FIT_STEPS)),
    );
    let result = optimize_kernel(parsed, parsed, name, spec, &shape, &search.pipeline, cache)
        .map_err(|e| e.to_string())?;
    if !result.improved() {
        return Ok(None);
    }
    let best = &result.best;
    let mut launch = annotated.clone();
    let mut notes = result.preconditions.clone();
    if best.lineage.relaunch.is_some() {
        for dims in [&mut launch.grid, &mut launch.block] {
            dims.resize(dims.len().max(2), 1);
            dims.swap(0, 1);
        }
        notes.push(
            "the launch changes too (x and y of the grid and block exchanged): `copper optimize --diff` shows the host code's edit".into(),
        );
    }
    let (mut annotation, _) = annotate(
        &best.file,
        &best.kernel,
        Some(&launch),
        s.analysis,
        &s.metrics,
    )
    .map_err(|e| e.to_string())?;
    annotation.assumptions = vec![match best.lineage.relaunch {
        Some(_) => "on the original's launch, x and y exchanged".into(),
        None => "on the original's launch".into(),
    }];
    // The whole file with the kernel's text replaced, so that the diff's
    // line numbers are the file's.
    let text = &parsed.source.text;
    let span = parsed.item(name).map(|i| i.span).ok_or("not listed")?;
    let (Some(head), Some(tail)) = (text.get(..span.start), text.get(span.end..)) else {
        return Err("the kernel's text is not in its file".into());
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
