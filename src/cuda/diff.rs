//! Unified diffs that `git apply` and `patch -p1` accept.

use similar::TextDiff;

/// A unified diff turning `old` into `new` for the file at `path` (its
/// bytes, which need not be UTF-8), with `a/` and `b/` prefixes; empty
/// when the texts are equal.
pub fn unified(path: &[u8], old: &str, new: &str) -> String {
    if old == new {
        return String::new();
    }
    let path = path.strip_prefix(b"./").unwrap_or(path);
    let side = |prefix: &[u8]| quoted(&[prefix, path].concat());
    TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .header(&side(b"a/"), &side(b"b/"))
        .to_string()
}

/// Replacing bytes `start..end` of the old text with `text`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Replacement {
    /// First byte replaced.
    pub start: usize,
    /// One past the last byte replaced (`start` for an insertion).
    pub end: usize,
    /// What goes there.
    pub text: String,
}

/// The line-level replacements that turn `old` into `new`, in order and
/// not overlapping: what SARIF fixes and `--format json` edits carry, so
/// a tool applies exactly the lines the rewrite changed.
pub fn replacements(old: &str, new: &str) -> Vec<Replacement> {
    let starts = |s: &str| -> Vec<usize> {
        let mut v = vec![0];
        v.extend(s.split_inclusive('\n').scan(0, |at, l| {
            *at += l.len();
            Some(*at)
        }));
        v
    };
    let (old_at, new_at) = (starts(old), starts(new));
    TextDiff::from_lines(old, new)
        .ops()
        .iter()
        .filter(|op| !matches!(op.tag(), similar::DiffTag::Equal))
        .map(|op| {
            let (o, n) = (op.old_range(), op.new_range());
            Replacement {
                start: old_at[o.start],
                end: old_at[o.end],
                text: new[new_at[n.start]..new_at[n.end]].to_string(),
            }
        })
        .collect()
}

/// A patch header's file name as git writes it: in double quotes with C
/// escapes when it holds a control character, a quote, a backslash or a
/// byte outside ASCII (octal, byte by byte: a name that is not UTF-8
/// keeps its bytes); as it is otherwise.
pub fn quoted(name: &[u8]) -> String {
    let plain = name
        .iter()
        .all(|&b| (0x20..0x7f).contains(&b) && b != b'"' && b != b'\\');
    if plain {
        return name.iter().map(|&b| b as char).collect();
    }
    let mut out = String::from("\"");
    for &b in name {
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
    fn replacements_rebuild_the_new_text_and_touch_only_changed_lines() {
        let old = "a\r\nb\r\nc\r\nd\r\n\te\r\nf";
        let new = "a\r\nB\r\nc\r\nd\r\nx\r\n\te\r\ng";
        let r = replacements(old, new);
        let mut text = old.to_string();
        for x in r.iter().rev() {
            text.replace_range(x.start..x.end, &x.text);
        }
        assert_eq!(text, new);
        // `b` replaced, `x` inserted before the tab line, `f` replaced.
        assert_eq!(r.len(), 3, "{r:?}");
        assert_eq!(&old[r[0].start..r[0].end], "b\r\n");
        assert_eq!(
            (r[1].start, r[1].end, r[1].text.as_str()),
            (12, 12, "x\r\n")
        );
        assert_eq!(&old[r[2].start..r[2].end], "f");
        assert!(replacements(old, old).is_empty());
    }

    #[test]
    fn names_are_quoted_as_git_quotes_them() {
        assert_eq!(quoted(b"a/src/k.cu"), "a/src/k.cu");
        assert_eq!(quoted(b"a/my kernel.cu"), "a/my kernel.cu");
        assert_eq!(quoted(b"a/x\ny.cu"), "\"a/x\\ny.cu\"");
        assert_eq!(quoted(b"a/q\"b.cu"), "\"a/q\\\"b.cu\"");
        assert_eq!(quoted("a/é.cu".as_bytes()), "\"a/\\303\\251.cu\"");
        assert_eq!(quoted(b"a/\xff\x1b.cu"), "\"a/\\377\\033.cu\"");
    }
}
