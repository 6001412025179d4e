//! `copper parse`: list the functions of each file.

use copper::shown::Shown;
use std::collections::HashMap;
use std::path::PathBuf;

use copper::cuda::ast::{FnKind, Function, Param};
use copper::cuda::include::{define_hint, in_user_file};
use copper::cuda::launch::Launch;
use copper::cuda::parse::{parse_path_with, ParsedFile};
use copper::cuda::print;
use copper::diag::Severity;
use copper::source::SourceFile;
use copper_search::launch::refused_shape;

use super::args::Format;
use super::output;
use super::settings::Settings;

mod schema;

/// Runs `copper parse` over `files`.
pub fn run(files: &[PathBuf], format: Format, s: &Settings) -> u8 {
    let mut status = 0;
    for path in files {
        match parse_path_with(path, &s.preprocess) {
            Err(d) => {
                output::diagnostic(&d);
                status = 2;
            }
            Ok(parsed) => {
                // Notes and warnings (a header read from outside the tree,
                // a header not found that nothing needed) do not fail; an
                // error or a kernel not read (or launched, its header not
                // found) does.
                let error = (parsed.all_diagnostics().iter())
                    .any(|d| d.severity == Severity::Error || d.code == "undefined-kernel");
                let unread = (parsed.functions.iter())
                    .any(|f| f.item.kind == FnKind::Global && f.result.is_err());
                if error || unread {
                    status = status.max(1);
                }
                match format {
                    Format::Text => print_text(&parsed),
                    Format::Json => println!("{}", output::json::line(&to_json(&parsed))),
                }
            }
        }
    }
    status
}

fn kind_word(k: FnKind) -> &'static str {
    match k {
        FnKind::Global => "kernel",
        FnKind::Device => "device function",
        FnKind::HostDevice => "host/device function",
    }
}

/// The type of parameter `p` as printed: as written for a cooperative
/// group (`cg::thread_block`), which copper reads as an `int` stand-in.
fn param_type(src: &SourceFile, p: &Param) -> String {
    let written: Vec<&str> = src.slice(p.meta.span).split_whitespace().collect();
    let written = written.join(" ");
    let group = ["thread_block", "thread_group", "grid_group", "auto"]
        .iter()
        .any(|g| {
            written
                .split(|c: char| !c.is_alphanumeric() && c != '_')
                .any(|w| w == *g)
        });
    match written.strip_suffix(p.name.as_str()) {
        Some(ty) if group && !p.name.is_empty() => ty.trim_end().to_string(),
        _ => print::type_name(&p.ty),
    }
}

/// `name(params)` as written; a member function of a struct `S` is
/// `S::name(params)`, without its object (`const` after it when the object
/// is `const`).
fn signature(src: &SourceFile, f: &Function, owner: Option<&str>) -> String {
    let (params, name, after) = match (owner, f.params.split_first()) {
        (Some(o), Some((this, rest))) => (
            rest,
            format!("{o}::{}", f.name),
            if this.ty.is_const { " const" } else { "" },
        ),
        _ => (f.params.as_slice(), f.name.clone(), ""),
    };
    let params: Vec<String> = params
        .iter()
        .map(|p| {
            let ty = param_type(src, p);
            let dims: String = p.dims.iter().map(|_| "[]").collect();
            format!("{ty} {}{dims}", p.name)
                .replace("* ", "*")
                .replace("& ", "&")
        })
        .collect();
    format!("{name}({}){after}", params.join(", "))
}

fn print_text(parsed: &ParsedFile) {
    let src = &parsed.source;
    let path = src.path.shown();
    if parsed.functions.is_empty() {
        println!("{path}: no kernels or device functions found");
    }
    let lookup = Lookup::of(parsed);
    for f in &parsed.functions {
        let (file, line, col) = src.locate(f.item.span.start);
        let header = !in_user_file(f.item.span);
        let from = match src.expansion_at(f.item.span.start) {
            // The text of an instance of a template struct (`Pair<float>`).
            Some((name, _)) if name.contains('<') => format!(" (of the instance `{name}`)"),
            Some((name, _)) => format!(" (from the macro `{name}`)"),
            None if header => " (from a header)".to_string(),
            None => String::new(),
        };
        match &f.result {
            Ok(func) => {
                let template = if func.is_uninstantiated() {
                    " template"
                } else {
                    ""
                };
                println!(
                    "{}:{line}:{col}: {}{template} {}{}",
                    file.shown(),
                    kind_word(func.kind),
                    signature(src, func, f.item.owner.as_deref()),
                    from
                );
                if lookup.never_instantiated(func) {
                    println!("    note: {}", never_instantiated(func));
                }
                for l in lookup.launches(func) {
                    let (ll, _) = src.line_col(l.span.start);
                    let show = |d: Option<[u64; 3]>| {
                        d.map(|[x, y, z]| format!("({x}, {y}, {z})"))
                            .unwrap_or_else(|| "(not literal)".into())
                    };
                    // A header's kernel is launched from the file given.
                    let place = if header {
                        format!("{path}:{ll}")
                    } else {
                        format!("line {ll}")
                    };
                    println!(
                        "    launched at {place}: grid {} block {}",
                        show(l.grid),
                        show(l.block)
                    );
                    if let Some(why) = refused_shape(l) {
                        println!("    note: CUDA refuses this launch: {why}");
                    }
                    for n in &l.undefined {
                        println!("    note: {}", define_hint(n));
                    }
                }
            }
            // A header's function that copper cannot read matters only
            // where a kernel calls it (the kernel's error says so).
            Err(_) if header && f.item.kind != FnKind::Global => {}
            Err(d) => output::diagnostic(d),
        }
    }
    for d in &parsed.diagnostics {
        output::diagnostic(d);
    }
}

/// What is looked up per function of a file, built once: a file may hold
/// thousands of functions and launches.
struct Lookup<'p> {
    uninstantiated: Vec<&'p Function>,
    launches: HashMap<&'p str, Vec<&'p Launch>>,
}

impl<'p> Lookup<'p> {
    fn of(parsed: &'p ParsedFile) -> Lookup<'p> {
        let mut launches: HashMap<&str, Vec<&Launch>> = HashMap::new();
        for l in &parsed.launches {
            launches.entry(l.kernel.as_str()).or_default().push(l);
        }
        Lookup {
            uninstantiated: parsed.uninstantiated(),
            launches,
        }
    }

    /// Whether `f` is a template kernel that nothing instantiates.
    fn never_instantiated(&self, f: &Function) -> bool {
        self.uninstantiated.iter().any(|u| std::ptr::eq(*u, f))
    }

    /// The launches of `f`, in file order.
    fn launches(&self, f: &Function) -> impl Iterator<Item = &'p Launch> + '_ {
        self.launches
            .get(f.name.as_str())
            .into_iter()
            .flatten()
            .copied()
    }
}

/// The note for a template kernel that nothing instantiates.
fn never_instantiated(f: &Function) -> String {
    format!(
        "template never instantiated in the file; pass --instantiate '{}<…>'",
        f.name
    )
}

fn to_json(parsed: &ParsedFile) -> schema::Document<'_> {
    let src = &parsed.source;
    let lookup = Lookup::of(parsed);
    let functions = parsed
        .functions
        .iter()
        .map(|f| {
            let (file, line, col) = src.locate(f.item.span.start);
            match &f.result {
                Ok(func) => schema::Function::Read(Box::new(schema::ReadFunction {
                    name: &func.name,
                    kind: func.kind,
                    template: func.is_uninstantiated(),
                    note: (lookup.never_instantiated(func)).then(|| never_instantiated(func)),
                    file,
                    line,
                    col,
                    signature: signature(src, func, f.item.owner.as_deref()),
                    params: func
                        .params
                        .iter()
                        .map(|p| schema::Param {
                            name: &p.name,
                            ty: param_type(src, p),
                        })
                        .collect(),
                    launches: lookup.launches(func).collect(),
                })),
                Err(d) => schema::Function::Unread {
                    name: &f.item.name,
                    file,
                    line,
                    col,
                    error: d,
                },
            }
        })
        .collect();
    schema::Document {
        file: &src.path,
        functions,
        diagnostics: &parsed.diagnostics,
    }
}
