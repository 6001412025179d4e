//! What a winning rewrite carries in its own code: the promises its
//! rewrites made and the block it is written for, as `// copper:` comments
//! at the top of its body, and, for a block copper only assumed, the test
//! of that block that keeps every other launch on the original code.

use std::sync::Arc;

use copper_transforms::block_guard;
use copper_transforms::check::materialize;

use super::{launched, Analyzed, Applied, Env};
use crate::rank::{compare, Comparison};
use copper::cuda::rewrite;

/// The best version `best` as it is offered, and what it assumes of its
/// callers, each also a `// copper:` comment at the top of its body: the
/// promises its rewrites made ([`Lineage::assumes`]), and the block it is
/// written for. A version written for a block copper only assumed runs
/// under a test of that block, with the original's code for any other
/// ([`block_guard`]), a step added to `applied`. `Err` says why a version
/// written for an assumed block cannot be guarded (it is then not
/// offered).
pub(super) fn preconditions(
    original: &Arc<Analyzed>,
    best: Arc<Analyzed>,
    applied: &mut Vec<Applied>,
    others: &[Arc<Analyzed>],
    env: &Env,
) -> Result<(Arc<Analyzed>, Vec<String>), String> {
    let mut said = best.lineage.assumes.clone();
    let block = env.config.block.filter(|_| best.lineage.block_specific);
    let version = match block {
        Some(b) if env.shape.assumed => guarded(original, &best, b, others, env)?,
        _ => best,
    };
    let name = &version.function.name;
    match block {
        Some(b) if env.shape.assumed => {
            applied.push(Applied {
                transform: "block guard",
                description: block_guard::describe(b),
                why: "the test costs a constant per warp, and it keeps every launch with another block on the original code".into(),
            });
            said.push(format!(
                "the fast path is written for blocks of {}, the block copper assumed ({}); any other block runs the original code",
                crate::launch::dims(b),
                why_assumed(env, name)
            ));
        }
        Some(_) if !others.is_empty() => said.push(
            "written for the block each instantiation of the template is launched with in the file, and checked for each; launch each with its block only".into(),
        ),
        Some(b) => said.push(format!(
            "written for blocks of {} ({}); launch `{name}` with that block only",
            crate::launch::dims(b),
            env.shape.source
        )),
        None => {}
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

/// `best`, written for the `block` copper assumed, under a test of that
/// block with the original's code for any other: checked, analyzed, and
/// still better than the original; or why it cannot be offered.
fn guarded(
    original: &Arc<Analyzed>,
    best: &Arc<Analyzed>,
    block: [u64; 3],
    others: &[Arc<Analyzed>],
    env: &Env,
) -> Result<Arc<Analyzed>, String> {
    let refused = |why: String| {
        format!(
            "the rewrite written for the assumed block {} is not offered: {why}",
            crate::launch::dims(block)
        )
    };
    if !others.is_empty() || best.lineage.relaunch.is_some() {
        return Err(refused(
            "copper guards a rewrite for other blocks only in a kernel that is no template and keeps its launch".into(),
        ));
    }
    let function = block_guard::guarded(
        &original.function,
        &original.file.source.text,
        &best.function,
        &best.file.source.text,
        block,
    )
    .map_err(refused)?;
    let checker = env.checker().map_err(|e| refused(e.to_string()))?;
    let (file, kernel) =
        materialize(&original.file, &function).map_err(|e| refused(e.to_string()))?;
    checker
        .check_kernel(&kernel, best.lineage.terms())
        .map_err(|e| refused(format!("its guarded form fails its check: {e}")))?;
    let name = &best.function.name;
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
    let (new, old) = (&version.bounds[m].work, &original.bounds[m].work);
    if let Comparison::NotBetter(why) = compare(env.ranker, new, old) {
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
            &launched(env.config, version.lineage.relaunch.is_some()),
            &env.settings.metrics,
            version.lineage.clone(),
        )
        .map_err(|e| e.to_string())
}
