//! `copper optimize`: the search on every kernel of the given files (or of
//! every `.cu`/`.cuh` below the given directories), kernels in parallel; the
//! winning kernels, a unified diff, the bounds before and after, and what
//! each applied transform bought.

use copper::shown::Shown;
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use copper::cuda::ast::{FnKind, Function};
use copper::cuda::excerpt::Excerpts;
use copper::cuda::parse::{parse_path_with, ParsedFile};
use copper::cuda::rewrite::transplant;
use copper::diag::Severity;
use copper::ir::lower::{lower_kernel, symbol_notes};
use copper::sim::params::ParamFile;
use copper::sim::work::Work;
use copper_search::launch::{assume_block, launch_shape, KnownShape, FIT_STEPS};
use copper_search::pipeline::{optimize_target, Cache, Settings as PipelineSettings, Target};
use copper_search::rank::Ranking;
use rayon::prelude::*;

use super::args::{OptFormat, OptimizeArgs};
use super::files::{
    match_line_endings, refuse_onto_input, replace_if_unchanged, write_atomically, ReplaceError,
};
use super::outcome::{file_diff, patch_base, FileError, FileRun, KernelError, KernelRun};
use super::output;
use super::report::{self, simulated};
use super::sarif::SarifRoot;
use super::settings::{Search, Settings};
use super::walk::{collect_files, outside_roots, start_workers};

/// Runs `copper optimize`.
pub fn run(a: &OptimizeArgs, s: &Settings) -> u8 {
    let fail = |e: &dyn std::fmt::Display| {
        eprintln!("copper: error: {e}");
        2
    };
    let Some(search) = &s.search else {
        return fail(&"internal error: no search settings");
    };
    let files = match collect_files(&a.paths, a.walk.no_ignore, !a.walk.no_follow) {
        Ok(found) => {
            for n in &found.notes {
                output::note(n);
            }
            found.files
        }
        Err(e) => return fail(&e),
    };
    if let Some(report) = &a.report {
        let inputs = s.inputs(&files);
        if let Err(e) = refuse_onto_input(report, inputs.iter().map(PathBuf::as_path)) {
            return fail(&e);
        }
    }
    start_workers(a.walk.jobs);
    let start = Instant::now();
    let runs = match optimize_files(&files, a, s, search) {
        Ok(runs) => runs,
        Err(e) => return fail(&e),
    };
    let elapsed = start.elapsed().as_secs_f64();
    if let Some(k) = &a.launch.kernel {
        if runs.iter().all(|f| f.kernels.is_empty()) {
            return fail(&format!("no kernel named `{k}` in the given files"));
        }
    }
    let mut failed = runs.iter().any(|f| f.write_failed);
    let unreadable = runs
        .iter()
        .any(|f| f.parsed.is_err() || f.kernels.iter().any(|k| k.result.is_err()));
    let improved = runs.iter().any(|f| f.rewritten.is_some());
    if let Some(path) = &a.report {
        let objects: Vec<_> = runs
            .iter()
            .flat_map(|f| report::kernel_objects(f, search))
            .collect();
        let lines: String = match path.extension().is_some_and(|e| e == "csv") {
            true => report::csv::rows(&objects),
            false => objects.iter().map(|o| format!("{o}\n")).collect(),
        };
        if let Err(e) = write_atomically(path, &lines) {
            eprintln!("copper: error: {}: {e}", path.shown());
            failed = true;
        }
    }
    if a.format != OptFormat::Github {
        report::errors(&runs);
    }
    // A bound below a simulated cost: exit status 2, like any internal error.
    failed |= report::internal_errors(&runs);
    if a.diff {
        let base = patch_base(&runs);
        for f in &runs {
            output::print_diff(&file_diff(f, &base));
        }
        if let Some(note) = &base.note {
            // Even under `--quiet`: the patch cannot be applied without it.
            eprintln!("copper: note: {note}");
        }
        // Even under `--quiet`: what the patch assumes of its callers.
        for f in &runs {
            for k in &f.kernels {
                for p in k
                    .result
                    .iter()
                    .filter(|x| x.improved())
                    .flat_map(|x| &x.preconditions)
                {
                    eprintln!("copper: note: {}: `{}`: {p}", f.path.shown(), k.name);
                }
            }
        }
    } else {
        match a.format {
            OptFormat::Text => report::text(&runs, search, a.explain, elapsed),
            OptFormat::Json => report::json(&runs, search, elapsed),
            OptFormat::Github => report::github(&runs, search),
            OptFormat::Sarif => match SarifRoot::new(a.sarif_root.as_deref()) {
                Ok(root) => report::sarif(&runs, search, &root),
                Err(e) => {
                    eprintln!("copper: error: {e}");
                    failed = true;
                }
            },
        }
    }
    output::batch_status(failed, improved && !search.exit_zero, unreadable)
}

/// The diagnostics of a parsed file, then the notes on its kernels'
/// undefined identifiers (symbols) and on the template kernels it never
/// instantiates (not searched), rendered.
fn notes(p: &ParsedFile) -> Vec<String> {
    let mut all = p.all_diagnostics();
    for k in p.kernels() {
        if let Ok(kernel) = lower_kernel(p, &k.name) {
            all.extend(symbol_notes(p, &kernel));
        }
    }
    for t in p.uninstantiated() {
        let at = p.item(&t.name).map_or(t.meta.span.start, |i| i.name_offset);
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
    let color = output::color_stderr();
    all.iter().map(|d| d.render_colored(color)).collect()
}

/// Parses every file and searches every kernel, kernels in parallel; a
/// progress line on a terminal. Results in file and kernel order. Each
/// file is finished (and, with `--write`, written) as soon as its last
/// kernel is done, so a long batch loses nothing already found.
fn optimize_files<'s>(
    files: &[PathBuf],
    a: &OptimizeArgs,
    s: &'s Settings,
    search: &Search,
) -> Result<Vec<FileRun>, UnknownAt> {
    let mut runs: Vec<(FileRun, Option<Cow<'s, ParamFile>>)> = files
        .par_iter()
        .map(|path| {
            let read = parse_path_with(path, &s.preprocess)
                .map_err(FileError::Parse)
                .and_then(|parsed| Ok((parsed, s.params.of(path)?)));
            let (parsed, params) = match read {
                Ok((p, params)) => (Ok(p), params),
                Err(e) => (Err(e), None),
            };
            let diagnostics = parsed.as_ref().map(notes).unwrap_or_default();
            let run = FileRun {
                path: path.clone(),
                parsed,
                kernels: Vec::new(),
                diagnostics,
                rewritten: None,
                write_failed: false,
            };
            (run, params)
        })
        .collect();
    let mut jobs = Vec::new();
    for (i, (run, _)) in runs.iter().enumerate() {
        let Ok(parsed) = &run.parsed else {
            continue;
        };
        let selected = |f: &Function| {
            a.launch
                .kernel
                .as_ref()
                .is_none_or(|k| parsed.kernel_name(k) == f.name)
        };
        for f in parsed.kernels().filter(|f| selected(f)) {
            jobs.push((i, f.name.clone(), instances(parsed, f, selected)));
        }
    }
    if let Ranking::At { values, .. } = &search.pipeline.ranking {
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
    let finished: Vec<Mutex<Option<Finished>>> = runs.iter().map(|_| Mutex::default()).collect();
    let excerpts: Vec<Option<Excerpts>> = runs
        .iter()
        .map(|(run, _)| run.parsed.as_ref().ok().map(Excerpts::new))
        .collect();
    let cache = Cache::default();
    let done = AtomicUsize::new(0);
    let total = jobs.len();
    let terminal = std::io::stderr().is_terminal() && !output::quiet();
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
            let shape = launch_shape(s.block, s.grid, parsed, spec.as_ref(), name);
            // Without a launch shape, the block inferred from the kernel,
            // as if given with --block (a kernel that does not lower fails
            // in the search with its diagnostic).
            let shape = match lower_kernel(file, name) {
                Ok(k) => assume_block(file, &k, shape, &Arc::new(Work::new(FIT_STEPS))),
                Err(_) => shape,
            };
            Target {
                name: name.to_string(),
                spec,
                shape,
            }
        };
        let kernel = target(&name);
        let others = others.map(|o| o.iter().map(|n| target(n)).collect::<Vec<_>>());
        let result = optimize_target(
            file,
            parsed,
            &kernel,
            others.as_deref().map_err(Clone::clone),
            &search.pipeline,
            &cache,
        );
        if terminal {
            let n = done.fetch_add(1, Ordering::Relaxed) + 1;
            eprint!("\r\x1b[2K[{n}/{total}] {}: {name}", run.path.shown());
            if n == total {
                eprint!("\r\x1b[2K");
            }
        }
        let at = parsed
            .function(&name)
            .map(|f| parsed.source.line_col(f.meta.span.start))
            .unwrap_or((0, 0));
        let simulated = match (&a.report, &result) {
            (Some(_), Ok(x)) => Some(simulated::at_test_launch(
                parsed,
                x,
                kernel.spec.as_ref(),
                s,
            )),
            _ => None,
        };
        let kernel = KernelRun {
            name,
            at,
            shape: kernel.shape,
            result: result.map_err(KernelError::from),
            readable: true,
            simulated,
        };
        lock(&pending[i]).push(kernel);
        if remaining[i].fetch_sub(1, Ordering::AcqRel) == 1 {
            let kernels = std::mem::take(&mut *lock(&pending[i]));
            *lock(&finished[i]) = Some(finish_file(run, kernels, a, &search.pipeline));
        }
    });
    for (i, (run, _)) in runs.iter_mut().enumerate() {
        let f = lock(&finished[i])
            .take()
            .unwrap_or_else(|| finish_file(run, Vec::new(), a, &search.pipeline));
        run.kernels = f.kernels;
        run.rewritten = f.rewritten;
        run.write_failed = f.write_failed;
    }
    Ok(runs.into_iter().map(|(run, _)| run).collect())
}

/// For an instantiation `f` of a template, the template's other
/// instantiations when `f` is the first of them `selected` (the search
/// checks its rewrites for each), or why the template is not rewritten
/// through `f`; no others for a kernel that is no instantiation.
fn instances(
    parsed: &ParsedFile,
    f: &Function,
    selected: impl Fn(&Function) -> bool,
) -> Result<Vec<String>, String> {
    let Some(t) = &f.template else {
        return Ok(Vec::new());
    };
    let same: Vec<&Function> = parsed
        .kernels()
        .filter(|g| {
            g.meta.span == f.meta.span && g.template.as_ref().is_some_and(|u| u.name == t.name)
        })
        .collect();
    match same.iter().find(|g| selected(g)) {
        Some(lead) if lead.name != f.name => Err(format!(
            "`{}` is an instantiation of the template `{}`, which is searched once, through `{}`: every rewrite of the template is checked for `{}` too",
            f.name, t.name, lead.name, f.name
        )),
        _ => Ok(same
            .iter()
            .filter(|g| g.name != f.name)
            .map(|g| g.name.clone())
            .collect()),
    }
}

/// `--at` names that are no scalar parameter of the kernels searched.
#[derive(Debug, thiserror::Error)]
#[error("--at: {names} is not a scalar parameter of the kernels searched (parameters: {known})")]
struct UnknownAt {
    /// The names, quoted.
    names: String,
    /// The kernels' scalar parameters (or "none").
    known: String,
}

/// Refuses `--at` names that are no scalar parameter of any kernel
/// searched (nor a launch dimension such as `blockDim.x`): a misspelled
/// name would leave every bound unevaluated, and nothing would improve.
fn check_at_names<'a>(
    values: &BTreeMap<String, f64>,
    searched: impl Iterator<Item = &'a Function>,
) -> Result<(), UnknownAt> {
    let mut known: Vec<String> = Vec::new();
    let mut any = false;
    for f in searched {
        any = true;
        known.extend(
            f.params
                .iter()
                .filter(|p| p.ty.pointers.is_empty() && p.dims.is_empty())
                .map(|p| p.name.clone()),
        );
    }
    known.sort();
    known.dedup();
    let launch_dimension = |n: &str| {
        ["blockDim.", "gridDim."].iter().any(|p| {
            n.strip_prefix(p)
                .is_some_and(|c| ["x", "y", "z"].contains(&c))
        })
    };
    let unknown: Vec<&str> = values
        .keys()
        .map(String::as_str)
        .filter(|n| !known.iter().any(|k| k == n) && !launch_dimension(n))
        .collect();
    if unknown.is_empty() || !any {
        return Ok(());
    }
    Err(UnknownAt {
        names: unknown
            .iter()
            .map(|n| format!("`{n}`"))
            .collect::<Vec<_>>()
            .join(", "),
        known: if known.is_empty() {
            "none".to_string()
        } else {
            known.join(", ")
        },
    })
}

/// A file whose kernels are all done.
struct Finished {
    kernels: Vec<KernelRun>,
    rewritten: Option<String>,
    write_failed: bool,
}

/// The mutex's value, also when another thread panicked holding it.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Completes a file whose kernels are all searched: adds the kernels that
/// could not be read, orders them, assembles the rewritten file and, with
/// `--write`, replaces the file when nobody changed it meanwhile.
fn finish_file(
    run: &FileRun,
    mut kernels: Vec<KernelRun>,
    a: &OptimizeArgs,
    settings: &PipelineSettings,
) -> Finished {
    let Ok(parsed) = &run.parsed else {
        return Finished {
            kernels,
            rewritten: None,
            write_failed: false,
        };
    };
    let only = a.launch.kernel.as_ref().map(|k| parsed.kernel_name(k));
    kernels.extend(unreadable_kernels(parsed, only.as_deref()));
    // Instantiations of one template start at the same place: file order
    // (the order of their launches) breaks the tie.
    let order = |name: &str| parsed.functions.iter().position(|f| f.item.name == name);
    kernels.sort_by_key(|k| (k.at, order(&k.name)));
    adopt_template_rewrites(&mut kernels, settings);
    // Each improved kernel as the search left it: an edit of this file's
    // text, moved over from its version of the file.
    let best: Vec<(&ParsedFile, &str)> = kernels
        .iter()
        .filter_map(|k| k.result.as_ref().ok())
        .filter(|k| k.improved())
        .map(|k| (&k.best.file, k.name.as_str()))
        .collect();
    // Launches exchanged with their kernels (thread remapping).
    let host: Vec<_> = kernels
        .iter()
        .filter_map(|k| k.result.as_ref().ok())
        .filter(|k| k.improved())
        .filter_map(|k| k.best.lineage.relaunch.clone())
        .flatten()
        .collect();
    let rewritten = (!best.is_empty())
        .then(|| match_line_endings(&parsed.source.text, transplant(parsed, &best, &host)));
    let mut write_failed = false;
    let not_utf8 = !parsed.source.invalid_utf8.is_empty();
    if let (true, Some(_), true) = (a.write, &rewritten, not_utf8) {
        // Its bytes that are not UTF-8 were read as U+FFFD: writing the
        // text back would change them.
        eprintln!(
            "copper: warning: {}: not rewritten: it holds bytes that are not UTF-8 (read as U+FFFD), which writing would change; apply the change by hand",
            run.path.shown()
        );
    } else if let (true, Some(text)) = (a.write, &rewritten) {
        match replace_if_unchanged(&run.path, &parsed.source.text, text) {
            Ok(()) => {
                output::note(format_args!("updated {}", run.path.shown()));
                if let Some(target) = outside_roots(&run.path, &a.paths) {
                    eprintln!(
                        "copper: note: {}: the file written is {}, outside the paths given (through a link; --no-follow skips links in directories)",
                        run.path.shown(),
                        target.shown()
                    );
                }
            }
            Err(ReplaceError::Changed(why)) => {
                eprintln!("copper: warning: {}: {why}", run.path.shown())
            }
            Err(ReplaceError::Refused(why)) => {
                eprintln!(
                    "copper: warning: {}: not rewritten: {why}",
                    run.path.shown()
                )
            }
            Err(e) => {
                eprintln!("copper: error: {}: cannot update: {e}", run.path.shown());
                write_failed = true;
            }
        }
    }
    Finished {
        kernels,
        rewritten,
        write_failed,
    }
}

/// Gives each instantiation of a template that was searched through
/// another one (its lead) the lead's rewrite of the template, when the
/// lead improved: the rewrite changes them all, and was checked for each.
fn adopt_template_rewrites(kernels: &mut [KernelRun], settings: &PipelineSettings) {
    let leads: Vec<usize> = (0..kernels.len())
        .filter(|&i| {
            kernels[i]
                .result
                .as_ref()
                .is_ok_and(|x| !x.instances.is_empty())
        })
        .collect();
    for lead in leads {
        let (before, rest) = kernels.split_at_mut(lead);
        let Some((Ok(lead), after)) = rest.split_first_mut().map(|(l, a)| (&l.result, a)) else {
            continue;
        };
        for k in before.iter_mut().chain(after) {
            if let Ok(x) = &mut k.result {
                x.adopt(lead, settings);
            }
        }
    }
}

/// The kernels of a file that could not be read, as failed runs.
fn unreadable_kernels(parsed: &ParsedFile, only: Option<&str>) -> Vec<KernelRun> {
    parsed
        .functions
        .iter()
        .filter(|f| f.item.kind == FnKind::Global && only.is_none_or(|k| k == f.item.name))
        .filter_map(|f| {
            let d = f.result.as_ref().err()?;
            Some(KernelRun {
                name: f.item.name.clone(),
                at: parsed.source.line_col(f.item.span.start),
                shape: KnownShape {
                    block: None,
                    grid: None,
                    source: "not read".into(),
                    assumed: false,
                },
                result: Err(KernelError::Unreadable {
                    line: d.line,
                    col: d.col,
                    message: d.message.clone(),
                }),
                readable: false,
                simulated: None,
            })
        })
        .collect()
}
