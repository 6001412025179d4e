//! The search driver of `copper optimize`: files → parse → kernels →
//! template instantiations → the search of each kernel ([`optimize_target`],
//! kernels in parallel) → the rewrites of template instantiations adopted →
//! each file rewritten. It returns what it found ([`FileRun`] per file);
//! reading the command line, writing files and printing are its caller's
//! ([`Caller`]).

use copper::launch::Dims;
use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use copper::cuda::ast::Function;
use copper::cuda::excerpt::Excerpts;
use copper::cuda::include::Preprocess;
use copper::cuda::parse::{parse_path_with, ParsedFile};
use copper::diag::{Diagnostic, Severity};
use copper::ir::lower::{lower_kernel, symbol_notes};
use copper::sim::params::ParamFile;
use copper::sim::work::Work;
use rayon::prelude::*;

use crate::launch::{kernel_shape, launch_shape, Params, FIT_STEPS};
use crate::pipeline::{optimize_target, Cache, Settings, Target};
use crate::rank::Ranking;
use at_names::check_at_names;
use finish::{finish_file, Finished};
use headers::{header_runs, header_shape, includer, includes};
use simulated::at_test_launch;
use templates::instances;

mod at_names;
mod finish;
mod headers;
mod outcome;
mod simulated;
mod templates;

pub use at_names::UnknownAt;
pub use outcome::{Defined, FileError, FileRun, KernelError, KernelRun};
pub use simulated::Simulated;

/// What to search.
pub struct Request<'a> {
    /// The files, in the order of the results.
    pub files: &'a [PathBuf],
    /// Only the kernel of this name (or template instantiation), if given.
    pub kernel: Option<&'a str>,
    /// How files are preprocessed.
    pub preprocess: &'a Preprocess,
    /// Where each file's parameter file comes from.
    pub params: &'a Params,
    /// The block given for every kernel, if any (over the host code's).
    pub block: Option<Dims>,
    /// The grid given, as the block.
    pub grid: Option<Dims>,
    /// The search.
    pub pipeline: &'a Settings,
    /// Whether to simulate each kernel searched, the original and the best
    /// version, on its test launch ([`KernelRun::simulated`]).
    pub simulate: bool,
}

/// What the driver asks of the command that runs it. Called from the
/// search's worker threads.
pub trait Caller: Sync {
    /// Told after each kernel's search: `done` of `total` searched, the
    /// last one `kernel` of `path`.
    fn searched(&self, done: usize, total: usize, path: &Path, kernel: &str);

    /// Given a file as soon as its kernels are all done and any improved:
    /// `rewritten` is its whole new text. Returns true when the caller
    /// failed to write it (and reported why).
    fn finished(&self, path: &Path, parsed: &ParsedFile, rewritten: &str) -> bool;
}

/// Parses every file and searches every kernel, kernels in parallel.
/// Results in file and kernel order. Each file is handed to
/// [`Caller::finished`] as soon as its last kernel is done, so a long
/// batch loses nothing already found.
pub fn optimize_files<'a, C: Caller>(
    r: &Request<'a>,
    caller: &C,
) -> Result<Vec<FileRun>, UnknownAt> {
    let given: Vec<(FileRun, Option<Cow<'a, ParamFile>>)> = r
        .files
        .par_iter()
        .map(|path| {
            let read = parse_path_with(path, r.preprocess)
                .map_err(FileError::Parse)
                .and_then(|parsed| Ok((parsed, r.params.of(path)?)));
            let (parsed, params) = match read {
                Ok((p, params)) => (Ok(p), params),
                Err(e) => (Err(e), None),
            };
            let diagnostics = parsed.as_ref().map(notes).unwrap_or_default();
            (FileRun::new(path.clone(), parsed, diagnostics), params)
        })
        .collect();
    // Each file given, then the headers whose kernels are searched in them.
    let mut runs = Vec::new();
    let mut scopes = Vec::new();
    // A header given as a file is searched as one: not again as a header.
    let mut seen: BTreeMap<PathBuf, PathBuf> = r
        .files
        .iter()
        .map(|p| (p.canonicalize().unwrap_or(p.clone()), p.clone()))
        .collect();
    for (run, params) in given {
        let headers = match &run.parsed {
            Ok(parsed) => {
                let selected =
                    |f: &Function| r.kernel.is_none_or(|k| parsed.kernel_name(k) == f.name);
                header_runs(parsed, &run.path, r.preprocess, &selected, &mut seen)
            }
            Err(_) => Default::default(),
        };
        let headers_moved = headers.moved();
        let found: Vec<_> = headers
            .runs
            .into_iter()
            .map(|h| {
                let header = FileRun {
                    header: true,
                    ..FileRun::new(h.path, Ok(h.parsed), Vec::new())
                };
                let scope = Scope::Header {
                    kernels: h.kernels,
                    includer: runs.len(),
                    also: Vec::new(),
                };
                ((header, params.clone()), scope)
            })
            .collect();
        runs.push((run, params));
        scopes.push(Scope::Given {
            moved: headers_moved,
            refused: headers.refused,
        });
        for (run, scope) in found {
            runs.push(run);
            scopes.push(scope);
        }
    }
    // The other files given that include each header searched.
    for (i, scope) in scopes.iter_mut().enumerate() {
        if let Scope::Header { includer, also, .. } = scope {
            *also = (0..runs.len())
                .filter(|j| *j != *includer)
                .filter(|j| {
                    let (run, _) = &runs[*j];
                    run.parsed
                        .as_ref()
                        .is_ok_and(|p| r.files.contains(&run.path) && includes(p, &runs[i].0.path))
                })
                .collect();
        }
    }
    let mut jobs = Vec::new();
    for (i, (run, _)) in runs.iter().enumerate() {
        let Ok(parsed) = &run.parsed else {
            continue;
        };
        let selected = |f: &Function| {
            r.kernel.is_none_or(|k| parsed.kernel_name(k) == f.name) && scopes[i].searches(&f.name)
        };
        for f in parsed.kernels().filter(|f| selected(f)) {
            jobs.push((i, f.name.clone(), instances(parsed, f, selected)));
        }
    }
    if let Ranking::At { values, .. } = &r.pipeline.ranking {
        let searched = jobs
            .iter()
            .filter_map(|(i, name, ..)| runs[*i].0.parsed.as_ref().ok()?.function(name));
        check_at_names(values, searched)?;
    }
    let pending: Vec<Mutex<Vec<KernelRun>>> = runs.iter().map(|_| Mutex::default()).collect();
    let remaining: Vec<AtomicUsize> = runs.iter().map(|_| AtomicUsize::new(0)).collect();
    for (i, ..) in &jobs {
        remaining[*i].fetch_add(1, Ordering::Relaxed);
    }
    let finished: Vec<Mutex<Option<(Finished, bool)>>> =
        runs.iter().map(|_| Mutex::default()).collect();
    let excerpts: Vec<Option<Excerpts>> = runs
        .iter()
        .map(|(run, _)| run.parsed.as_ref().ok().map(Excerpts::new))
        .collect();
    let cache = Cache::default();
    let done = AtomicUsize::new(0);
    let total = jobs.len();
    let finish = |run: &FileRun, scope: &Scope, kernels: Vec<KernelRun>| -> (Finished, bool) {
        let Ok(parsed) = &run.parsed else {
            let f = Finished {
                kernels,
                rewritten: None,
            };
            return (f, false);
        };
        let mut f = finish_file(parsed, kernels, r.kernel, r.pipeline);
        f.kernels.retain(|k| scope.searches(&k.name));
        let failed = f
            .rewritten
            .as_ref()
            .is_some_and(|text| caller.finished(&run.path, parsed, text));
        (f, failed)
    };
    jobs.into_par_iter().for_each(|(i, name, others)| {
        let (run, params) = &runs[i];
        let Ok(parsed) = &run.parsed else {
            return;
        };
        // The kernel's excerpt of its file: a search costs what the kernel
        // costs, however many kernels the file has. A template's rewrite
        // is checked for its other instantiations: the whole file.
        let excerpt = match &others {
            Ok(o) if !o.is_empty() => None,
            _ => excerpts[i].as_ref().and_then(|e| e.kernel(&name)),
        };
        let file = excerpt.as_ref().unwrap_or(parsed);
        let target = |name: &str| {
            let spec = params.as_ref().and_then(|p| p.kernel.get(name)).cloned();
            // A header's kernel: its includer's launches steer the block
            // and give the test launch and sizes; a block the user names
            // (`--block`, the parameter file's) is its shape, whatever the
            // includer launches (the header alone has no launches).
            let header = matches!(scopes[i], Scope::Header { .. });
            let named =
                header && (r.block.is_some() || spec.as_ref().is_some_and(|s| s.shape().is_ok()));
            let launched = match named {
                true => parsed,
                false => scopes[i].launched(&runs, parsed),
            };
            // Without a launch shape, the block inferred from the kernel,
            // as if given with --block (a kernel that does not lower fails
            // in the search with its diagnostic).
            let shape = match lower_kernel(file, name) {
                Ok(k) => {
                    let work = Arc::new(Work::new(FIT_STEPS));
                    kernel_shape(r.block, r.grid, launched, file, &k, spec.as_ref(), &work)
                }
                Err(_) => launch_shape(r.block, r.grid, launched, spec.as_ref(), name),
            };
            let (shape, includer) = match &scopes[i] {
                Scope::Header {
                    includer: at, also, ..
                } => {
                    let of = |j: &usize| {
                        let (run, _) = &runs[*j];
                        run.parsed
                            .as_ref()
                            .ok()
                            .map(|p| includer(&run.path, p, name))
                    };
                    let others: Vec<_> = also.iter().filter_map(of).collect();
                    match of(at) {
                        Some(first) => (
                            header_shape(shape, name, &first, &others, named),
                            Some(first),
                        ),
                        None => (shape, None),
                    }
                }
                Scope::Given { .. } => (shape, None),
            };
            Target {
                name: name.to_string(),
                spec,
                shape,
                includer,
            }
        };
        let kernel = target(&name);
        let others = others.map(|o| o.iter().map(|n| target(n)).collect::<Vec<_>>());
        let mut result = optimize_target(
            file,
            parsed,
            &kernel,
            others.as_deref().map_err(Clone::clone),
            r.pipeline,
            &cache,
        );
        if let (Scope::Given { refused, .. }, Ok(x)) = (&scopes[i], &mut result) {
            // A header copper may not write: the reason, in place of the
            // search's own (that the kernel is in a header).
            if let Some((_, why)) = refused.iter().find(|(k, _)| *k == name) {
                x.not_rewritten = Some(why.clone());
            }
        }
        let n = done.fetch_add(1, Ordering::Relaxed) + 1;
        caller.searched(n, total, &run.path, &name);
        let start = parsed.function(&name).map(|f| f.meta.span.start);
        let at = start.map_or((0, 0), |s| parsed.source.line_col(s));
        let defined = start.map_or_else(
            || Defined {
                file: run.path.clone(),
                line: 0,
                col: 0,
            },
            |s| Defined::at(parsed, s),
        );
        let simulated = match (&result, r.simulate) {
            (Ok(x), true) => Some(at_test_launch(
                scopes[i].launched(&runs, parsed),
                x,
                kernel.spec.as_ref(),
                r.pipeline,
            )),
            _ => None,
        };
        let kernel = KernelRun {
            name,
            at,
            defined,
            shape: kernel.shape,
            result: result.map_err(KernelError::from),
            readable: true,
            simulated,
        };
        lock(&pending[i]).push(kernel);
        if remaining[i].fetch_sub(1, Ordering::AcqRel) == 1 {
            let kernels = std::mem::take(&mut *lock(&pending[i]));
            *lock(&finished[i]) = Some(finish(run, &scopes[i], kernels));
        }
    });
    for (i, (run, _)) in runs.iter_mut().enumerate() {
        let (f, write_failed) = lock(&finished[i])
            .take()
            .unwrap_or_else(|| finish(run, &scopes[i], Vec::new()));
        run.kernels = f.kernels;
        run.rewritten = f.rewritten;
        run.write_failed = write_failed;
    }
    Ok(runs.into_iter().map(|(run, _)| run).collect())
}

/// Which kernels of a file are searched in it.
enum Scope {
    /// A file given: every kernel but those `moved` to their header's
    /// run; those of a header not rewritten say why (`refused`).
    Given {
        moved: BTreeSet<String>,
        refused: Vec<(String, String)>,
    },
    /// A header: only these `kernels` (the rest are its `includer`'s, an
    /// index in the runs; `also` the other files given that include it).
    Header {
        kernels: BTreeSet<String>,
        includer: usize,
        also: Vec<usize>,
    },
}

impl Scope {
    /// The file whose launches a kernel of this scope has, `own` the
    /// scope's file: for a header, its includer (in `runs`).
    fn launched<'a, P>(&self, runs: &'a [(FileRun, P)], own: &'a ParsedFile) -> &'a ParsedFile {
        match self {
            Scope::Header { includer, .. } => runs[*includer].0.parsed.as_ref().unwrap_or(own),
            Scope::Given { .. } => own,
        }
    }

    /// Whether the kernel (or template) `name` is searched in this file.
    fn searches(&self, name: &str) -> bool {
        match self {
            Scope::Given { moved, .. } => !moved.contains(name),
            Scope::Header { kernels, .. } => kernels.contains(name),
        }
    }
}

/// The diagnostics of a parsed file, then the notes on its kernels'
/// undefined identifiers (symbols) and on the template kernels it never
/// instantiates (not searched).
fn notes(p: &ParsedFile) -> Vec<Diagnostic> {
    let mut all = p.all_diagnostics();
    for k in p.kernels() {
        if let Ok(kernel) = lower_kernel(p, &k.name) {
            all.extend(symbol_notes(p, &kernel));
        }
    }
    for t in p.uninstantiated() {
        let at = p.item(&t.name).map_or(t.meta.span.start, |i| i.span.start);
        all.push(p.source.diagnostic(
            Severity::Note,
            "template",
            at,
            format!(
                "template kernel `{}` is never instantiated in the file, so it is not searched: copper rewrites a template only when it can check the rewrite for each instantiation; pass --instantiate '{}<…>'",
                t.name, t.name
            ),
        ));
    }
    all
}

/// The mutex's value, also when another thread panicked holding it.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
