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
        .header(&quoted(&format!("a/{path}")), &quoted(&format!("b/{path}")))
        .to_string()
}

/// A patch header's file name as git writes it: in double quotes with C
/// escapes when it holds a control character, a quote, a backslash or a
/// byte outside ASCII; as it is otherwise.
pub fn quoted(name: &str) -> String {
    let plain = name
        .bytes()
        .all(|b| (0x20..0x7f).contains(&b) && b != b'"' && b != b'\\');
    if plain {
        return name.to_string();
    }
    let mut out = String::from("\"");
    for b in name.bytes() {
        match b {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            b'\n' => out.push_str("\\n"),
            b'\t' => out.push_str("\\t"),
            b'\r' => out.push_str("\\r"),
            0x20..=0x7e => out.push(b as char),
            _ => out.push_str(&format!("\\{b:03o}")),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_quoted_as_git_quotes_them() {
        assert_eq!(quoted("a/src/k.cu"), "a/src/k.cu");
        assert_eq!(quoted("a/my kernel.cu"), "a/my kernel.cu");
        assert_eq!(quoted("a/x\ny.cu"), "\"a/x\\ny.cu\"");
        assert_eq!(quoted("a/q\"b.cu"), "\"a/q\\\"b.cu\"");
        assert_eq!(quoted("a/é.cu"), "\"a/\\303\\251.cu\"");
    }
}
