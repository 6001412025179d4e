//! Unified diffs that `git apply` and `patch -p1` accept.

use similar::TextDiff;

/// A unified diff turning `old` into `new` for the file at `path`, with
/// `a/` and `b/` prefixes; empty when the texts are equal.
pub fn unified(path: &str, old: &str, new: &str) -> String {
    if old == new {
        return String::new();
    }
    let path = path.trim_start_matches("./");
    TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{path}"), &format!("b/{path}"))
        .to_string()
}
