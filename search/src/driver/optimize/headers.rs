//! Kernels defined in a header, searched as the header's own: the header
//! is read as the file given (its text the one a rewrite changes, its
//! diff and `--write` its own), after the file that includes it.
//!
//! A header is shared by every file that includes it, so the launches of
//! the file given do not describe all its callers: a header's kernel is
//! searched with no launch of it licensing a block (the block is only
//! assumed, so a rewrite written for one runs under the block guard), unless
//! the user named the block (`--block`, a parameter file). Only a header in
//! the project is rewritten: inside the current directory's tree or the
//! given file's directory, not reached through a symbolic link, not a
//! system header. A template stays with its includer (its instantiations
//! are the includer's), as does a kernel that does not read on its own.

use copper::launch::Dims;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use copper::cuda::ast::Function;
use copper::cuda::include::{in_user_file, is_system_header, Preprocess};
use copper::cuda::parse::{parse_path_with, ParsedFile};
use copper::ir::lower::lower_kernel;
use copper::shown::Shown;
use copper::source::IncludedKind;

use crate::launch::{Includer, KnownShape};

/// A header whose kernels are searched in it.
pub(super) struct HeaderRun {
    /// The header as found (relative to the current directory when its
    /// `-I` directory or includer was).
    pub(super) path: PathBuf,
    /// The header read as a file of its own.
    pub(super) parsed: ParsedFile,
    /// The kernels searched in it.
    pub(super) kernels: BTreeSet<String>,
}

/// What the headers of one file given come to: the headers searched as
/// files, and why each other header's kernel stays unrewritten.
#[derive(Default)]
pub(super) struct Headers {
    /// Headers whose kernels are searched in them, in include order.
    pub(super) runs: Vec<HeaderRun>,
    /// Kernels of a header left in their includer, and why no rewrite.
    pub(super) refused: Vec<(String, String)>,
}

impl Headers {
    /// Every kernel moved to a header's run.
    pub(super) fn moved(&self) -> BTreeSet<String> {
        self.runs.iter().flat_map(|h| h.kernels.clone()).collect()
    }
}

/// The headers of `parsed` (the file at `path`) that define the kernels
/// `selected` picks, each read as a file; headers in `seen` (given as
/// files, or searched with an earlier one: the value) keep their kernels
/// in this file, unrewritten, and those searched here are added.
pub(super) fn header_runs(
    parsed: &ParsedFile,
    path: &Path,
    preprocess: &Preprocess,
    selected: &dyn Fn(&Function) -> bool,
    seen: &mut BTreeMap<PathBuf, PathBuf>,
) -> Headers {
    let mut out = Headers::default();
    let included = parsed.source.included();
    for header in included
        .files
        .iter()
        .filter(|f| f.kind == IncludedKind::Header)
    {
        let span = header.span();
        let kernels: Vec<&Function> = parsed
            .kernels()
            .filter(|f| selected(f))
            .filter(|f| {
                parsed
                    .item(&f.name)
                    .is_some_and(|i| i.span.start >= span.start && i.span.end <= span.end)
            })
            .collect();
        if kernels.is_empty() {
            continue;
        }
        let shown = header.path.as_path().shown();
        if let Err(why) = writable(&header.path, &header.name, path) {
            for k in &kernels {
                out.refused.push((k.name.clone(), format!(
                    "`{}` is defined in the header {shown}, which {why}: copper rewrites only headers of the project, so no rewrite is proposed",
                    k.name
                )));
            }
            continue;
        }
        let key = header.path.canonicalize().unwrap_or(header.path.clone());
        if let Some(first) = seen.get(&key) {
            for k in &kernels {
                out.refused.push((
                    k.name.clone(),
                    format!(
                        "`{}` is defined in the header {shown}, which is searched once, with {}",
                        k.name,
                        first.as_path().shown()
                    ),
                ));
            }
            continue;
        }
        // The includer's instantiations of the header's templates are
        // instantiated in the header read alone, as `--instantiate` would.
        let mut instantiating = preprocess.clone();
        instantiating.instantiate.extend(
            kernels
                .iter()
                .filter(|f| f.template.is_some())
                .map(|f| f.name.clone()),
        );
        let Ok(alone) = parse_path_with(&header.path, &instantiating) else {
            continue;
        };
        let reads = |name: &str| {
            alone
                .item(name)
                .is_some_and(|i| in_user_file(i.span) && lower_kernel(&alone, name).is_ok())
        };
        // A template moves with all its instantiations or stays whole.
        let template_reads = |f: &Function| {
            kernels
                .iter()
                .filter(|g| g.meta.span == f.meta.span)
                .all(|g| reads(&g.name))
        };
        let own: BTreeSet<String> = kernels
            .iter()
            .filter(|f| reads(&f.name) && (f.template.is_none() || template_reads(f)))
            .map(|f| f.name.clone())
            .collect();
        if own.is_empty() {
            continue;
        }
        seen.insert(key, path.to_path_buf());
        out.runs.push(HeaderRun {
            path: header.path.clone(),
            parsed: alone,
            kernels: own,
        });
    }
    out
}

/// Whether the header at `path` (included as `name` by the file at
/// `includer`) may be rewritten, or why not: a system header, one reached
/// through a symbolic link, or one outside both the current directory's
/// tree and the includer's directory.
fn writable(path: &Path, name: &str, includer: &Path) -> Result<(), String> {
    if is_system_header(name) {
        return Err("is a system header".into());
    }
    let linked = std::fs::symlink_metadata(path).map_err(|e| format!("cannot be read ({e})"))?;
    if linked.file_type().is_symlink() {
        return Err("is a symbolic link (copper does not write through links)".into());
    }
    let real = path
        .canonicalize()
        .map_err(|e| format!("cannot be read ({e})"))?;
    if !normalized_eq(path, &real) {
        return Err(
            "is reached through a symbolic link (copper does not write through links)".into(),
        );
    }
    let roots = [
        std::env::current_dir().ok(),
        includer.parent().map(|d| {
            if d.as_os_str().is_empty() {
                Path::new(".")
            } else {
                d
            }
            .to_path_buf()
        }),
    ];
    let inside = roots
        .iter()
        .flatten()
        .filter_map(|r| r.canonicalize().ok())
        .any(|r| real.starts_with(&r));
    if !inside || real.starts_with("/usr") {
        return Err("is outside the current directory's tree".into());
    }
    Ok(())
}

/// Whether `path`, made absolute with its `.` and `..` taken lexically,
/// is `real`: no link on the way.
fn normalized_eq(path: &Path, real: &Path) -> bool {
    let Ok(abs) = std::path::absolute(path) else {
        return false;
    };
    let mut parts: Vec<std::path::Component> = Vec::new();
    for c in abs.components() {
        match c {
            std::path::Component::ParentDir => {
                parts.pop();
            }
            std::path::Component::CurDir => {}
            other => parts.push(other),
        }
    }
    parts.iter().collect::<PathBuf>() == real
}

/// Whether `parsed` includes the header at `header` (its kernels are then
/// launched from it too).
pub(super) fn includes(parsed: &ParsedFile, header: &Path) -> bool {
    let key = |p: &Path| p.canonicalize().unwrap_or(p.to_path_buf());
    let header = key(header);
    parsed
        .source
        .included()
        .files
        .iter()
        .any(|f| f.kind == IncludedKind::Header && key(&f.path) == header)
}

/// The includer `path`'s launches of the kernel `name` in `parsed`.
pub(super) fn includer(path: &Path, parsed: &ParsedFile, name: &str) -> Includer {
    Includer {
        path: path.to_path_buf(),
        launches: parsed
            .launches
            .iter()
            .filter(|l| l.kernel == name)
            .cloned()
            .collect(),
    }
}

/// The launch shape of a header's kernel, found from its `includer`'s
/// launches: the block they give is only assumed (other files may launch
/// it with another), the grid only reported (the analysis assumes none);
/// one the user named (`named`: `--block`, a parameter file) stands. The
/// `others` files given that include the header too are named, and whether
/// they launch the kernel otherwise: the includer's launch is used, as the
/// first of the files (in path order, as copper reads them).
pub(super) fn header_shape(
    mut shape: KnownShape,
    name: &str,
    includer: &Includer,
    others: &[Includer],
    named: bool,
) -> KnownShape {
    let shown = includer.path.as_path().shown();
    // "the launch at line 18" is the includer's: say whose.
    if let Some(l) = includer.launches.first() {
        let at = format!("the launch at line {}", l.line);
        shape.source = shape.source.replacen(&at, &format!("{at} of {shown}"), 1);
    }
    let shared = format!("`{name}` is defined in a header shared by every file that includes it (a rewrite changes the header)");
    if named {
        shape.source = format!("{}; {shared}: the block named licenses a rewrite for it, so every includer must launch `{name}` with that block", shape.source);
    } else if shape.assumed {
        shape.source = format!("{}; {shared}", shape.source);
    } else {
        shape.assumed = shape.block.is_some();
        let dims = |d: Option<Dims>, what: &str| d.map(|d| format!("{what} {d}"));
        let facts: Vec<String> = [dims(shape.block, "block"), dims(shape.grid, "grid")]
            .into_iter()
            .flatten()
            .collect();
        let from = match facts.is_empty() {
            true => String::new(),
            false => format!("{} from ", facts.join(", ")),
        };
        let grid = match shape.grid {
            Some(_) => " (and the grid only reported: the bounds hold for any grid)",
            None => "",
        };
        shape.source = format!("{from}{}; {shared}, and copper does not see every launch of it, so the block is only assumed{grid}", shape.source);
    }
    if let Some(note) = launched_elsewhere(name, includer, others) {
        shape.source = format!("{}; {note}", shape.source);
    }
    shape
}

/// What the `others` files given that include the header say of `name`'s
/// launch, beside the `includer` (the first of them): that they launch it
/// alike, or otherwise (the includer's launch is used); `None` when no
/// other file launches it.
fn launched_elsewhere(name: &str, includer: &Includer, others: &[Includer]) -> Option<String> {
    let facts = |i: &Includer| -> Vec<_> {
        i.launches
            .iter()
            .map(|l| {
                let args: Option<Vec<Option<i128>>> = l
                    .test
                    .as_ref()
                    .map(|t| t.host.args.iter().map(|a| a.value).collect());
                (l.block, l.grid, args)
            })
            .collect()
    };
    let first = facts(includer);
    let launching: Vec<&Includer> = others.iter().filter(|o| !o.launches.is_empty()).collect();
    if launching.is_empty() {
        return None;
    }
    let (alike, differ): (Vec<&Includer>, Vec<&Includer>) =
        launching.into_iter().partition(|o| facts(o) == first);
    // "a.cu launches", "a.cu, b.cu launch".
    let names = |v: &[&Includer]| {
        let listed = v
            .iter()
            .map(|o| o.path.as_path().shown().to_string())
            .collect::<Vec<_>>()
            .join(", ");
        let verb = if v.len() == 1 { "launches" } else { "launch" };
        format!("{listed} {verb}")
    };
    let shown = includer.path.as_path().shown();
    if first.is_empty() {
        return Some(format!(
            "{} `{name}`, {shown} (the first in path order that includes the header) does not: its test launch is not theirs",
            names(&differ)
        ));
    }
    match differ.is_empty() {
        true => Some(format!(
            "{} `{name}` alike",
            names(&alike)
        )),
        false => Some(format!(
            "the files given that include the header launch `{name}` differently ({} it otherwise than {shown}): the launches of {shown}, the first of them in path order, are used for the test launch and sizes",
            names(&differ)
        )),
    }
}
