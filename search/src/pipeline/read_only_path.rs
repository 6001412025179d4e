//! The read-only data path suggestion (`__ldg`/`const __restrict__`)
//! offered beside the best version, checked like a candidate.

use copper::cuda::parse::ParsedFile;
use copper::sim::params::LaunchSpec;
use copper_transforms::check::materialize;
use copper_transforms::read_only::{self, Suggestion};

use super::{Analyzed, Env, ReadOnlyError};

/// The read-only data path suggestion for the best version (the launches
/// read from `file`, the file as given), checked like a candidate (it must
/// print, parse back and compute the same, on the exchanged launch when
/// the best version runs on one); none for a kernel copper does not
/// rewrite.
pub(super) fn suggest_read_only(
    file: &ParsedFile,
    best: &Analyzed,
    spec: Option<&LaunchSpec>,
    env: &Env,
    refused: bool,
) -> Option<Result<Suggestion, ReadOnlyError>> {
    if refused || best.function.template.is_some() {
        return None;
    }
    let s = read_only::suggest(file, &best.function, spec).transpose()?;
    Some(s.map_err(ReadOnlyError::Refused).and_then(|s| {
        match env.checker() {
            Ok(c) => materialize(&best.file, &s.function)
                .and_then(|(_, k)| c.check_kernel(&k, best.lineage.terms()))
                .map(|_| s)
                .map_err(ReadOnlyError::Failed),
            Err(why) => Err(ReadOnlyError::Unchecked(why.clone())),
        }
    }))
}
