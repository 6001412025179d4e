//! Completing a file whose kernels are all searched: the kernels that
//! could not be read, file order, the template rewrites adopted, and the
//! rewritten file.

use copper::cuda::ast::FnKind;
use copper::cuda::parse::ParsedFile;
use copper::cuda::rewrite::transplant;

use super::outcome::{Defined, KernelError, KernelRun};
use super::templates::adopt_template_rewrites;
use crate::launch::KnownShape;
use crate::pipeline::Settings;

/// A file's kernels, all done, and the file rewritten with the improved
/// ones (none when nothing improved).
pub(super) struct Finished {
    /// The kernels, in file order.
    pub(super) kernels: Vec<KernelRun>,
    /// The whole file with the improved kernels.
    pub(super) rewritten: Option<String>,
}

/// Completes a file whose kernels are all searched (`only`: the kernel
/// asked for, if one was): adds the kernels that could not be read, orders
/// them, gives template instantiations their lead's rewrite and assembles
/// the rewritten file.
pub(super) fn finish_file(
    parsed: &ParsedFile,
    mut kernels: Vec<KernelRun>,
    only: Option<&str>,
    settings: &Settings,
) -> Finished {
    let only = only.map(|k| parsed.kernel_name(k));
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
    // Launches changed with their kernels (thread remapping, one warp per
    // row).
    let host: Vec<_> = kernels
        .iter()
        .filter_map(|k| k.result.as_ref().ok())
        .filter(|k| k.improved())
        .filter_map(|k| k.best.lineage.relaunch.clone())
        .flat_map(|r| r.edits)
        .collect();
    let rewritten = (!best.is_empty())
        .then(|| match_line_endings(&parsed.source.text, transplant(parsed, &best, &host)));
    Finished { kernels, rewritten }
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
                defined: Defined::at(parsed, f.item.span.start),
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

/// `text` with the line endings of `original`: when every line of the
/// original ends in `\r\n`, so does every line of the result.
fn match_line_endings(original: &str, text: String) -> String {
    let lf = original.matches('\n').count();
    let crlf = original.matches("\r\n").count();
    if lf == 0 || crlf != lf {
        return text;
    }
    text.replace("\r\n", "\n").replace('\n', "\r\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_endings_follow_the_original() {
        assert_eq!(
            match_line_endings("a\r\nb\r\n", "a\nc\r\nd\n".into()),
            "a\r\nc\r\nd\r\n"
        );
        assert_eq!(match_line_endings("a\nb\r\n", "a\nc\n".into()), "a\nc\n");
        assert_eq!(match_line_endings("a", "a\n".into()), "a\n");
    }
}
