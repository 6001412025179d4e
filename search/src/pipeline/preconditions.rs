//! What a winning rewrite carries in its own code: the promises its
//! rewrites made and the block it is written for, as `// copper:` comments
//! at the top of its body, and, for a block copper only assumed or a
//! template's rewrite, the test of that block that keeps every other
//! launch on the original code.

use copper::launch::Dims;
use std::sync::Arc;

use copper_transforms::ast_util::FileConstants;
use copper_transforms::block_guard::{self, Dim};
use copper_transforms::check::materialize;

use super::{instances, launched, Analyzed, Applied, Env, Verdict};
use crate::rank::total::{compare_excused, Excuse};
use crate::rank::Comparison;
use copper::cuda::rewrite;

/// The best version `best` as it is offered, and what it assumes of its
/// callers, each also a `// copper:` comment at the top of its body: the
/// promises its rewrites made ([`Lineage::assumes`]), and the block it is
/// written for. A version written for a block copper only assumed, or a
/// template's (other code may instantiate and launch it), runs under a
/// test of that block, with the original's code for any other
/// ([`block_guard`]), a step added to `applied`; `others` (the other
/// instantiations' versions) become their guarded ones. `Err` says why
/// such a version cannot be guarded (it is then not offered).
pub(super) fn preconditions(
    original: &Arc<Analyzed>,
    best: Arc<Analyzed>,
    applied: &mut Vec<Applied>,
    others: &mut Vec<Arc<Analyzed>>,
    env: &Env,
) -> Result<(Arc<Analyzed>, Vec<String>), String> {
    let mut said = best.lineage.assumes.clone();
    let block = env.config.block.filter(|_| best.lineage.block_specific);
    let template = original.function.template.is_some();
    let written = match block {
        Some(b) if template => Some(template_block(original, b, others, env)?),
        Some(b) if env.shape.assumed => Some(block_guard::sizes(b)),
        _ => None,
    };
    let version = match &written {
        Some(w) => guarded(original, &best, w, others, env)?,
        None => best,
    };
    let name = &version.function.name;
    match (&written, block) {
        (Some(w), _) => {
            applied.push(Applied {
                transform: "block guard",
                description: block_guard::describe(w),
                why: "the test costs a constant per warp, and it keeps every launch with another block on the original code".into(),
            });
            let [x, y, z] = w;
            said.push(match template {
                true if env.shape.assumed => {
                    let t = original.function.template.as_ref();
                    format!(
                        "the fast path is written for blocks of {x}×{y}×{z}, the block copper assumed for each instantiation of the template ({}), and checked for each; any other block runs the original code",
                        why_assumed(env, t.map_or(name, |t| &t.name))
                    )
                }
                true => format!(
                    "the fast path is written for blocks of {x}×{y}×{z}, the block each instantiation of the template is launched with in the file, and checked for each; any other block runs the original code"
                ),
                false => format!(
                    "the fast path is written for blocks of {x}×{y}×{z}, the block copper assumed ({}); any other block runs the original code",
                    why_assumed(env, name)
                ),
            });
        }
        (None, Some(b)) => said.push(format!(
            "written for blocks of {} ({}); launch `{name}` with that block only",
            b, env.shape.source
        )),
        (None, None) => {}
    }
    if said.is_empty() {
        return Ok((version, said));
    }
    Ok((commented(&version, &said, env)?, said))
}

/// Why the block of kernel `name` is only assumed: nothing in its file
/// launches it, or its file is a header, which every file including it
/// may launch it from, with any block.
fn why_assumed(env: &Env, name: &str) -> String {
    let path = &env.host.source.path;
    let header = path
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| ["h", "hh", "hpp", "hxx", "cuh", "inl"].contains(&e));
    if header {
        format!("`{name}` is defined in a header, which every file that includes it may launch it from, with any block")
    } else {
        format!("nothing in the file launches `{name}`")
    }
}

/// The block a template's rewrite, found through the instantiation
/// `original` with the block `block`, is written for, size by size: the
/// size every instantiation it was checked for (`others`) has, or a value
/// parameter of the template whose value in each instantiation is that
/// instantiation's size; or why a size is neither.
fn template_block(
    original: &Analyzed,
    block: Dims,
    others: &[Arc<Analyzed>],
    env: &Env,
) -> Result<[Dim; 3], String> {
    let refused = |why: String| format!("the template's rewrite is not offered: {why}");
    let args = |f: &Analyzed| {
        f.function
            .template
            .as_ref()
            .map_or_else(Vec::new, |t| t.args.clone())
    };
    let siblings = env.siblings.as_ref().map_err(|e| refused(e.to_string()))?;
    let mut each = vec![(block, args(original))];
    for (s, o) in siblings.iter().zip(others) {
        let b = s
            .block()
            .ok_or_else(|| refused(format!("`{}` has no known block", s.name)))?;
        each.push((b, args(o)));
    }
    let params: Vec<_> = original
        .function
        .template
        .iter()
        .flat_map(|t| &t.params)
        .collect();
    let dim = |d: usize| {
        if each.iter().all(|(b, _)| b[d] == block[d]) {
            return Ok(Dim::Size(block[d]));
        }
        let is_size = |i: usize| {
            each.iter().all(|(b, args)| {
                args.get(i).and_then(|a| a.trim().parse::<u64>().ok()) == Some(b[d])
            })
        };
        params
            .iter()
            .enumerate()
            .find(|(i, p)| p.value_type.is_some() && is_size(*i))
            .map(|(_, p)| Dim::Parameter(p.name.clone()))
            .ok_or_else(|| refused(format!("its instantiations are launched with blocks of different sizes in {}, and no value parameter of the template is each one's size, for a test of the block that keeps other blocks on the original code", ["x", "y", "z"][d])))
    };
    Ok([dim(0)?, dim(1)?, dim(2)?])
}

/// `best`, written for the blocks `written`, under a test of those
/// blocks with the original's code for any other: checked (for every
/// other instantiation of a template too, `others` then replaced by their
/// guarded versions), analyzed, and still better than the original; or
/// why it cannot be offered.
fn guarded(
    original: &Arc<Analyzed>,
    best: &Arc<Analyzed>,
    written: &[Dim; 3],
    others: &mut Vec<Arc<Analyzed>>,
    env: &Env,
) -> Result<Arc<Analyzed>, String> {
    let refused = |why: String| {
        let [x, y, z] = written;
        format!("the rewrite written for blocks of {x}×{y}×{z} is not offered: {why}")
    };
    if best.lineage.relaunch.is_some() {
        return Err(refused(
            "copper guards a rewrite for other blocks only in a kernel that keeps its launch"
                .into(),
        ));
    }
    let function = block_guard::guarded(
        &original.function,
        &original.file.source.text,
        &best.function,
        &best.file.source.text,
        written,
        &FileConstants::of(&original.file),
    )
    .map_err(refused)?;
    let checker = env.checker().map_err(|e| refused(e.to_string()))?;
    let (file, kernel) =
        materialize(&original.file, &function).map_err(|e| refused(e.to_string()))?;
    checker
        .check_kernel(&kernel, best.lineage.terms())
        .map_err(|e| refused(format!("its guarded form fails its check: {e}")))?;
    let name = &best.function.name;
    let excuse = Excuse {
        repairs: best.lineage.repairs.as_deref(),
        contention: None,
    };
    if !others.is_empty() {
        let siblings = env.siblings.as_ref().map_err(|e| refused(e.to_string()))?;
        let this = (name.as_str(), checker.launches());
        // Like the searched instantiation's, each one's guarded version
        // must beat its original.
        let originals: Vec<Arc<Analyzed>> = siblings.iter().map(|s| s.original().clone()).collect();
        let checked = instances::check(
            &file,
            this,
            siblings,
            &originals,
            &best.lineage,
            excuse,
            env,
        )
        .map_err(|v| match v {
            Verdict::Chosen(why)
            | Verdict::Outranked(why)
            | Verdict::NotBetter(why)
            | Verdict::Failed(why)
            | Verdict::Unchecked(why) => refused(format!("its guarded form: {why}")),
        })?;
        *others = checked.analyses;
    }
    let version = env
        .cache
        .analyze(
            file,
            name,
            Some(kernel),
            env.config,
            &env.settings.metrics,
            best.lineage.clone(),
        )
        .map_err(|e| refused(e.to_string()))?;
    let m = env.settings.rank_metric;
    if let Comparison::NotBetter(why) =
        compare_excused(env.ranker, version.work(m), original.work(m), excuse)
    {
        return Err(refused(format!(
            "with the test of the block that keeps other blocks on the original code, {why}"
        )));
    }
    Ok(version)
}

/// `version` with `said` as `// copper:` comments at the top of its body,
/// analyzed again (its lines moved).
fn commented(version: &Arc<Analyzed>, said: &[String], env: &Env) -> Result<Arc<Analyzed>, String> {
    let name = &version.function.name;
    let Some(text) = rewrite::comment_body(&version.file, name, said) else {
        return Ok(version.clone());
    };
    let file = copper::cuda::parse::parse_source(version.file.source.with_text(text));
    env.cache
        .analyze(
            file,
            name,
            None,
            &launched(env.config, version.lineage.reshape()),
            &env.settings.metrics,
            version.lineage.clone(),
        )
        .map_err(|e| e.to_string())
}
