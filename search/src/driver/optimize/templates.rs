//! Template kernels in the driver: which instantiation a template is
//! searched through (its lead), and the lead's rewrite given to the others.

use copper::cuda::ast::Function;
use copper::cuda::parse::ParsedFile;

use super::outcome::KernelRun;
use crate::pipeline::Settings;

/// For an instantiation `f` of a template, the template's other
/// instantiations when `f` leads them (the search checks its rewrites for
/// each), or why the template is not rewritten through `f`; no others for
/// a kernel that is no instantiation. Of the instantiations `selected`,
/// the one the file launches with the most threads per block leads (the
/// first of those, in the file's order).
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
    // The widest launch leads: a rewrite that needs whole warps (the
    // shuffles of a reduction's tail) is found for it, and checked for
    // the narrower instantiations, where it keeps their code.
    let lead = (same.iter().rev())
        .filter(|g| selected(g))
        .max_by_key(|g| widest_block(parsed, &g.name));
    match lead {
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

/// The most threads per block of a launch of `kernel` whose block the
/// file determines (0 when none does).
fn widest_block(parsed: &ParsedFile, kernel: &str) -> u64 {
    (parsed.launches.iter())
        .filter(|l| l.kernel == kernel)
        .filter_map(|l| l.block)
        .map(|b| b.iter().fold(1, |n: u64, d| n.saturating_mul(*d)))
        .max()
        .unwrap_or(0)
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
