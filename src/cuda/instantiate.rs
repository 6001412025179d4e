//! Template kernels instantiated from their launches and from
//! `--instantiate`: each distinct argument list is its own kernel, and
//! each launch is renamed to the instantiation it launches. A launch
//! inside a host function template is one launch per instantiation of
//! that template ([`super::host_templates`]).

use std::collections::{HashMap, HashSet};

use super::ast::{FnKind, Param, Template, TemplateParam};
use super::deduce;
use super::host;
use super::host_templates::HostTemplates;
use super::launch::Launch;
use super::parsed_function::ParsedFunction;
use super::template::{self, TemplateError};
use super::timeline::Timeline;
use crate::diag::{Diagnostic, Severity};
use crate::source::{SourceFile, Span};

/// Adds an instantiation of each template kernel for every distinct
/// argument list among the launches (`reduce<256><<<…>>>`), the file's
/// explicit instantiations (`explicit`: `template __global__ void
/// reduce<256>(…);`) and the requested `--instantiate` names, and renames
/// those launches to the instantiation (`reduce<BS>` with `BS` 256
/// launches `reduce<256>`).
pub(crate) fn instantiate(
    source: &SourceFile,
    explicit: &[String],
    macros: &Timeline,
    functions: &mut Vec<ParsedFunction>,
    launches: &mut Vec<Launch>,
    diagnostics: &mut Vec<Diagnostic>,
) {
    let offsets: Vec<usize> = launches.iter().map(|l| l.span.start).collect();
    let hosts = HostTemplates::read(&source.text, &offsets);
    let by_name = ByName::of(functions);
    // Explicit instantiations of template kernels in the file, and those
    // asked for on the command line.
    let is_template_kernel = |name: &str| {
        let base = template::split_name(name).map_or(name, |(b, _)| b);
        by_name.template_kernel(base).is_some()
    };
    let requested = explicit
        .iter()
        .filter(|n| is_template_kernel(n))
        .chain(&source.included().instantiate)
        .map(|n| (n.clone(), None));
    let launched = launches.iter().map(|l| (l.kernel.clone(), Some(l.span)));
    let wanted: Vec<(String, Option<Span>)> = requested.chain(launched).collect();
    let mut instances = Instances::default();
    // Per wanted name: the kernels it names (`None`: left as written).
    let mut names: Vec<Option<Vec<String>>> = Vec::new();
    for (wanted_name, at) in wanted {
        // A launch in a host template: one per instantiation of it.
        let variants = at
            .filter(|s| hosts.encloses(s.start))
            .and_then(|s| {
                hosts.substituted(s.start, &deduced_name(source, &by_name, &wanted_name, s))
            })
            .unwrap_or_else(|| vec![wanted_name.clone()]);
        let mut got = Some(Vec::new());
        for variant in variants {
            let one = instance(
                source,
                macros,
                &by_name,
                &mut instances,
                diagnostics,
                &variant,
                at,
            );
            match (one, &mut got) {
                (Some(n), Some(list)) => list.push(n),
                _ => got = None,
            }
        }
        names.push(got);
    }
    let skip = names.len() - launches.len();
    let mut renamed = Vec::new();
    for (l, name) in launches.drain(..).zip(names.into_iter().skip(skip)) {
        match name {
            Some(list) => renamed.extend(list.into_iter().map(|n| Launch {
                kernel: n,
                ..l.clone()
            })),
            None => renamed.push(l),
        }
    }
    *launches = renamed;
    functions.extend(instances.made);
}

/// The file's functions by name (several for a template and its explicit
/// specializations), so that each of thousands of launches finds its
/// kernel without a walk over every function.
struct ByName<'f>(HashMap<&'f str, Vec<&'f ParsedFunction>>);

impl<'f> ByName<'f> {
    fn of(functions: &'f [ParsedFunction]) -> ByName<'f> {
        let mut map: HashMap<&str, Vec<&ParsedFunction>> = HashMap::new();
        for f in functions {
            map.entry(f.item.name.as_str()).or_default().push(f);
        }
        ByName(map)
    }

    /// Whether a function is named `name`.
    fn has(&self, name: &str) -> bool {
        self.0.contains_key(name)
    }

    /// The template kernel named `base`.
    fn template_kernel(&self, base: &str) -> Option<&'f ParsedFunction> {
        (self.0.get(base)?.iter().copied())
            .find(|f| f.item.template.is_some() && f.item.kind == FnKind::Global)
    }
}

/// The instantiations made so far, and their names.
#[derive(Default)]
struct Instances {
    made: Vec<ParsedFunction>,
    names: HashSet<String>,
}

/// The name a launch at `at` of `wanted_name` instantiates, its template
/// arguments deduced where they can be (as written otherwise).
fn deduced_name(source: &SourceFile, by_name: &ByName, wanted_name: &str, at: Span) -> String {
    let (base, args) = template::split_name(wanted_name).unwrap_or((wanted_name, ""));
    let kernel = by_name.template_kernel(base);
    let Some(Ok(f)) = kernel.map(|k| &k.result) else {
        return wanted_name.to_string();
    };
    let Some(t) = &f.template else {
        return wanted_name.to_string();
    };
    match with_deduced(&t.params, &f.params, args, &source.text, at) {
        Ok(a) if !a.is_empty() => format!("{base}<{a}>"),
        _ => wanted_name.to_string(),
    }
}

/// The kernel `wanted_name` (launched at `at`, or requested) names: an
/// explicit specialization, or an instantiation made (into `instances`)
/// when it is not there yet. `None` when it names no template kernel or
/// its arguments are refused (with a diagnostic).
fn instance(
    source: &SourceFile,
    macros: &Timeline,
    by_name: &ByName,
    instances: &mut Instances,
    diagnostics: &mut Vec<Diagnostic>,
    wanted_name: &str,
    at: Option<Span>,
) -> Option<String> {
    let (base, args) = template::split_name(wanted_name).unwrap_or((wanted_name, ""));
    let spelled = template::instance_name(base, &template::split_args(args));
    if by_name.has(&spelled) {
        // An explicit specialization (`template <> … k<float>(…)`).
        return Some(spelled);
    }
    let Some(pf) = by_name.template_kernel(base) else {
        if at.is_none() {
            diagnostics.push(source.diagnostic(
                Severity::Error,
                "instantiate",
                0,
                format!("--instantiate `{wanted_name}`: no template kernel `{base}` in the file"),
            ));
        }
        return None;
    };
    let f = pf.result.as_ref().ok()?;
    let t = f.template.as_ref()?;
    let args = match at {
        Some(launch) => with_deduced(&t.params, &f.params, args, &source.text, launch),
        None => Ok(args.to_string()),
    };
    let macros = at.map_or_else(|| macros.at_end(), |s| macros.at(s.start));
    match args.and_then(|args| template::arguments(&t.params, &args, &macros)) {
        Ok(args) => {
            let name = template::instance_name(&t.name, &args);
            if instances.names.insert(name.clone()) {
                let mut g = f.clone();
                g.name = name.clone();
                g.template = Some(Template { args, ..t.clone() });
                let mut item = pf.item.clone();
                item.name = name.clone();
                instances.made.push(ParsedFunction {
                    item,
                    result: Ok(g),
                });
            }
            Some(name)
        }
        Err(e) => {
            diagnostics.push(source.diagnostic(
                Severity::Error,
                "instantiate",
                at.map_or(pf.item.name_offset, |s| s.start),
                format!("`{wanted_name}`: {e}"),
            ));
            None
        }
    }
}

/// The template arguments of the launch at `launch` in `text`: those
/// written (`args`), then each one left deduced from the call's arguments
/// ([`deduce`]), else its default, as far as one is known.
fn with_deduced(
    params: &[TemplateParam],
    kernel_params: &[Param],
    args: &str,
    text: &str,
    launch: Span,
) -> Result<String, TemplateError> {
    let mut given = template::split_args(args);
    if given.len() >= params.len() {
        return Ok(args.to_string());
    }
    let call = host::call_args(text, launch.end);
    let deduced = deduce::deduce(params, kernel_params, &call, &text[..launch.start])?;
    for (p, d) in params.iter().zip(deduced).skip(given.len()) {
        match d.or_else(|| p.default.clone()) {
            Some(a) => given.push(a),
            None => break,
        }
    }
    Ok(given.join(", "))
}
