//! Template kernels in the driver: which instantiation a template is
//! searched through (its lead), and the lead's rewrite given to the others.

use copper::cuda::ast::Function;
use copper::cuda::parse::ParsedFile;

use super::outcome::KernelRun;
use crate::pipeline::Settings;

/// For an instantiation `f` of a template, the template's other
/// instantiations when `f` is the first of them `selected` (the search
/// checks its rewrites for each), or why the template is not rewritten
/// through `f`; no others for a kernel that is no instantiation.
pub(super) fn instances(
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

/// Gives each instantiation of a template that was searched through
/// another one (its lead) the lead's rewrite of the template, when the
/// lead improved: the rewrite changes them all, and was checked for each.
pub(super) fn adopt_template_rewrites(kernels: &mut [KernelRun], settings: &Settings) {
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
