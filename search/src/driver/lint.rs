//! The lint driver of `copper lint`, per file: parse, its kernels, each
//! kernel's launch shape, the lint, inline suppressions and `--allow`,
//! each finding placed in the file or header it is about. It returns what
//! it found ([`FileLint`]); printing is the command's. One kernel's lint
//! ([`lint_kernel`]) is also `copper annotate --html`'s, at the launch it
//! annotates.

use copper::launch::Dims;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use copper::bound::Config;
use copper::cuda::include::Preprocess;
use copper::cuda::parse::{parse_path_with, ParsedFile};
use copper::diag::{Diagnostic, Severity};
use copper::ir::lower::{lower_kernel, symbol_notes};
use copper::ir::Kernel;
use copper::lint::suppress::{Problem, Suppressions};
use copper::lint::witness::{self, Witness};
use copper::lint::{
    lint_kernel_within, races, shape_findings, stop_note, BlockSize, Code, Finding,
};
use copper::sim::work::Work;

use copper::sim::params::LaunchSpec;

use crate::launch::{kernel_shape, KnownShape, Params};

/// What to lint each file with.
pub struct Request<'a> {
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
    /// The analysis (its launch shape is each kernel's own).
    pub analysis: Config,
    /// The codes not reported.
    pub allowed: &'a BTreeSet<Code>,
    /// The search for bank-conflict witnesses, when asked for.
    pub witness: Option<WitnessSearch>,
}

/// How far to search for bank-conflict witnesses.
pub struct WitnessSearch {
    /// The number of transactions to reach (default: the analysis bound).
    pub target: Option<u64>,
    /// Most branch-and-bound nodes per witness MILP.
    pub nodes: u64,
}

/// A finding with its place, ready to print.
pub struct Located {
    /// The kernel it is in.
    pub kernel: String,
    /// The finding.
    pub finding: Finding,
    /// The file of the code it is about: the user's file or a header.
    pub file: PathBuf,
    /// Its line in `file`.
    pub line: usize,
    /// Its column.
    pub col: usize,
    /// The text of its line.
    pub source_line: String,
    /// `line:col` of each inlined call that reaches the place.
    pub calls: Vec<(usize, usize)>,
    /// With [`Request::witness`], the bank-conflict witness searched for.
    pub witness: Option<Witness>,
    /// The assumed block it was found for, when the analysis for any
    /// block does not find it.
    pub assumed_block: Option<String>,
}

/// One kernel's verdict and timing.
pub struct KernelRow {
    /// The kernel.
    pub name: String,
    /// The file it is defined in: the user's file or a header.
    pub file: PathBuf,
    /// The line it starts on in `file`.
    pub line: usize,
    /// Its column.
    pub col: usize,
    /// The block-size verdict.
    pub block_size: BlockSize,
    /// The line of the race, when the verdict is one.
    pub race_line: Option<usize>,
    /// The block copper assumed, and why (no launch shape was given).
    pub assumed: Option<String>,
    /// What the work limit stopped, when it did ([`stop_note`]).
    pub stopped: Option<String>,
    /// Seconds its lint took.
    pub seconds: f64,
}

/// One file's results.
pub struct FileLint {
    /// The file, as given.
    pub path: PathBuf,
    /// Errors: an unreadable file, kernels copper cannot read.
    pub errors: Vec<Diagnostic>,
    /// The findings not suppressed nor allowed, kernel by kernel.
    pub findings: Vec<Located>,
    /// The kernels linted, in file order.
    pub kernels: Vec<KernelRow>,
    /// Notes on the kernels' undefined identifiers, rendered.
    pub notes: Vec<String>,
    /// Warnings about the file (a header not found), rendered.
    pub warnings: Vec<String>,
    /// Suppressions that silence nothing, or name no code (warnings).
    pub problems: Vec<Problem>,
}

impl FileLint {
    /// Errors: the file's own, and error findings.
    pub fn error_count(&self) -> usize {
        self.errors.len()
            + self
                .findings
                .iter()
                .filter(|x| x.finding.code.severity() == Severity::Error)
                .count()
    }

    /// Warnings: warning findings, suppression problems and warnings
    /// about the file (a header not found).
    pub fn warning_count(&self) -> usize {
        self.findings.len() + self.problems.len() + self.warnings.len() + self.errors.len()
            - self.error_count()
    }
}

/// Lints every kernel of the file `path` (the one [`Request::kernel`]
/// names, if it names one): each on its launch shape ([`kernel_shape`]),
/// its findings placed in the file or header they are about, less those
/// suppressed inline or allowed.
pub fn lint_file(path: &Path, r: &Request) -> FileLint {
    let mut out = FileLint {
        path: path.to_path_buf(),
        errors: Vec::new(),
        findings: Vec::new(),
        kernels: Vec::new(),
        notes: Vec::new(),
        warnings: Vec::new(),
        problems: Vec::new(),
    };
    let parsed = match parse_path_with(path, r.preprocess) {
        Ok(p) => p,
        Err(d) => {
            out.errors.push(d);
            return out;
        }
    };
    for d in parsed.all_diagnostics() {
        if d.is_error() {
            out.errors.push(d.clone());
        } else if d.severity == Severity::Warning {
            // A header not found (`pass -I DIR`), as `optimize` says.
            out.warnings.push(d.render());
        }
    }
    let params = match r.params.of(path) {
        Ok(p) => p,
        Err(e) => {
            out.errors.push(Diagnostic {
                code: "params",
                ..Diagnostic::file_error(path, e.to_string())
            });
            None
        }
    };
    let names: Vec<String> = parsed.kernels().map(|k| k.name.clone()).collect();
    let mut suppressions = Suppressions::of_parsed(&parsed);
    let only = r.kernel.map(|k| parsed.kernel_name(k));
    if let Some(k) = &only {
        if !names.contains(k) {
            out.errors.push(Diagnostic {
                code: "kernel",
                ..Diagnostic::file_error(
                    path,
                    format!("no kernel named `{k}` (kernels: {})", names.join(", ")),
                )
            });
        }
    }
    for name in names {
        if only.as_ref().is_some_and(|k| k != &name) {
            continue;
        }
        let kernel = match lower_kernel(&parsed, &name) {
            Ok(k) => k,
            Err(d) => {
                // Often the parse diagnostic already printed.
                if !out.errors.contains(&d) {
                    out.errors.push(d);
                }
                continue;
            }
        };
        for d in symbol_notes(&parsed, &kernel) {
            out.notes.push(d.render());
        }
        let spec = params.as_ref().and_then(|p| p.kernel.get(&name));
        // One allowance for every simulation of the kernel's lint: the
        // block fit, the test launch, the lock-step check, the race search.
        let work = Arc::new(Work::new(races::STEPS));
        let shape = kernel_shape(r.block, r.grid, &parsed, &parsed, &kernel, spec, &work);
        let checks = Checks {
            analysis: r.analysis,
            allowed: r.allowed,
            witness: r.witness.as_ref(),
        };
        let lint = lint_kernel(
            &parsed,
            &kernel,
            &shape,
            spec,
            &checks,
            &mut suppressions,
            &work,
        );
        out.findings.extend(lint.findings);
        out.kernels.extend(lint.row);
    }
    // With one kernel picked, the others' suppressions were not tried.
    if only.is_none() {
        out.problems = suppressions.unused();
    }
    out
}

/// What each kernel is linted with.
pub struct Checks<'a> {
    /// The analysis (its launch shape is the kernel's own).
    pub analysis: Config,
    /// The codes not reported.
    pub allowed: &'a BTreeSet<Code>,
    /// The search for bank-conflict witnesses, when asked for.
    pub witness: Option<&'a WitnessSearch>,
}

/// One kernel's lint: its findings not suppressed nor allowed, and its
/// row (none when the parse has no function of its name).
#[derive(Default)]
pub struct KernelLint {
    /// The findings, each placed in the file or header it is about.
    pub findings: Vec<Located>,
    /// Its verdict and timing.
    pub row: Option<KernelRow>,
}

/// Lints `kernel` of `parsed` on `shape`, simulating `spec` (the race
/// search, witnesses) within the allowance `work`; its findings that
/// `suppressions` silence or `checks` allows are left out. `copper lint`
/// lints each kernel of a file so ([`lint_file`]); `copper annotate
/// --html` lints the kernel it annotates at the annotated launch.
pub fn lint_kernel(
    parsed: &ParsedFile,
    kernel: &Kernel,
    shape: &KnownShape,
    spec: Option<&LaunchSpec>,
    checks: &Checks,
    suppressions: &mut Suppressions,
    work: &Arc<Work>,
) -> KernelLint {
    let name = &kernel.name;
    let start = Instant::now();
    let config = copper::bound::Config {
        block: shape.block,
        grid: shape.grid,
        ..checks.analysis
    };
    let deadline = start + config.budget;
    let lint = lint_kernel_within(kernel, config, spec, work);
    let stopped = stop_note(&lint, races::STEPS);
    // With an assumed block, what the analysis for any block finds too
    // does not depend on the assumption.
    let any_block: Option<BTreeSet<(Code, usize, usize)>> = shape.assumed.then(|| {
        let config = copper::bound::Config {
            block: None,
            grid: None,
            budget: deadline.saturating_duration_since(Instant::now()),
            ..config
        };
        let prepared = copper::bound::prepare(kernel, config);
        shape_findings(kernel, &prepared, &checks.analysis.hw, None, None)
            .iter()
            .chain(&copper::lint::redundant::findings(&prepared, None))
            .map(|f| (f.code, f.span.start, f.span.end))
            .collect()
    });
    let seconds = start.elapsed().as_secs_f64();
    let Some(f) = parsed.function(name) else {
        return KernelLint::default();
    };
    let (kernel_file, line, col) = parsed.source.locate(f.meta.span.start);
    let kernel_file = kernel_file.to_path_buf();
    let race_line = match lint.block_size {
        BlockSize::Races(_) => lint
            .findings
            .iter()
            .find(|f| f.code == Code::DataRace)
            .map(|f| parsed.source.line_col(f.span.start).0),
        _ => None,
    };
    let mut findings = Vec::new();
    for mut finding in lint.findings {
        let (file, at_line, _) = parsed.source.locate(finding.span.start);
        if suppressions.silences(finding.code, file, at_line, (&kernel_file, line))
            || checks.allowed.contains(&finding.code)
        {
            continue;
        }
        let w = match (checks.witness, finding.code, finding.site) {
            (Some(search), Code::BankConflict, Some(site))
                if lint.prepared.index_dep(site).affine_parts().is_none() =>
            {
                // The witness replaces the advice to look for one.
                finding.help = None;
                let bound = finding.worst.unwrap_or(1.0) as u64;
                Some(match spec {
                    Some(spec) => witness::search(
                        kernel,
                        site,
                        bound,
                        search.target,
                        spec,
                        &checks.analysis.hw,
                        witness::Limits {
                            nodes: search.nodes,
                            ..witness::Limits::default()
                        },
                        deadline,
                    ),
                    None => Witness::NotFound(format!(
                        "no parameter file gives a launch of `{name}` to simulate"
                    )),
                })
            }
            _ => None,
        };
        let assumed_block = any_block
            .as_ref()
            .filter(|any| {
                finding.code != Code::DataRace
                    && finding.code != Code::DivergentBarrier
                    && finding.code != Code::BlockSizeDependent
                    && !any.contains(&(finding.code, finding.span.start, finding.span.end))
            })
            .map(|_| shape.source.clone());
        let mut located = locate(parsed, name, finding, w);
        located.assumed_block = assumed_block;
        findings.push(located);
    }
    KernelLint {
        findings,
        row: Some(KernelRow {
            name: name.to_string(),
            file: kernel_file,
            line,
            col,
            race_line,
            assumed: shape.assumed.then(|| shape.source.clone()),
            block_size: lint.block_size,
            stopped,
            seconds,
        }),
    }
}

/// `finding` of `kernel`, placed in the file or header it is about.
fn locate(
    parsed: &ParsedFile,
    kernel: &str,
    mut finding: Finding,
    witness: Option<Witness>,
) -> Located {
    if let Some((name, _)) = parsed.source.expansion_at(finding.span.start) {
        // Placed at the invocation, which has no line of the macro's body.
        finding
            .message
            .push_str(&format!(" (in the expansion of `{name}`)"));
    }
    // In the header the kernel is defined in, when it is.
    let d = parsed
        .source
        .diagnostic(Severity::Warning, "", finding.span.start, "");
    Located {
        kernel: kernel.to_string(),
        source_line: d.source_line.unwrap_or_default(),
        file: d.file,
        line: d.line,
        col: d.col,
        calls: finding
            .calls
            .iter()
            .map(|c| {
                let (_, l, c) = parsed.source.locate(c.start);
                (l, c)
            })
            .collect(),
        finding,
        witness,
        assumed_block: None,
    }
}
