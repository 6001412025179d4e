//! How copper shows text it did not write: file names and pieces of
//! source in its output. A name may hold a newline (a second line that
//! looks like a diagnostic or a GitHub annotation), an escape sequence
//! (which a terminal obeys), or bytes that are not UTF-8 (which a lossy
//! conversion would turn into U+FFFD, naming another file). Such a name
//! is shown with C escapes (`\n`, `\x1b`, `\xff`, and `\\` for a
//! backslash) so that every byte can be read back; any other name is
//! shown as it is.

use std::path::Path;

/// A path as copper shows it in any output (see the module doc).
pub trait Shown {
    /// The path, escaped when it holds a control character or a byte
    /// that is not UTF-8.
    fn shown(&self) -> String;
}

impl Shown for Path {
    fn shown(&self) -> String {
        escaped_bytes(self.as_os_str().as_encoded_bytes())
    }
}

/// `bytes` as text: as they are when they are UTF-8 without control
/// characters, else with C escapes for control characters, bytes that are
/// not UTF-8, and backslashes.
pub fn escaped_bytes(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(s) if !s.chars().any(char::is_control) => s.to_string(),
        _ => {
            let mut out = String::new();
            for chunk in bytes.utf8_chunks() {
                for c in chunk.valid().chars() {
                    push_char(&mut out, c);
                }
                for b in chunk.invalid() {
                    out.push_str(&format!("\\x{b:02x}"));
                }
            }
            out
        }
    }
}

/// `text` with its control characters other than newline and tab
/// escaped (an escape sequence or a carriage return in a source file or a
/// message cannot reach the terminal).
pub fn escaped_controls(text: &str) -> String {
    if !text
        .chars()
        .any(|c| c.is_control() && c != '\n' && c != '\t')
    {
        return text.to_string();
    }
    let mut out = String::new();
    for c in text.chars() {
        match c {
            '\n' | '\t' => out.push(c),
            c if c.is_control() => push_char(&mut out, c),
            c => out.push(c),
        }
    }
    out
}

/// `s` as one word of a POSIX shell command line: as it is when it
/// holds only characters no shell treats specially, else in single
/// quotes.
pub fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+=:,".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// `path` as one shell word, every byte kept: [`shell_quote`]d when it
/// is UTF-8 without control characters, else in `$'…'` (bash, zsh,
/// POSIX.1-2024 `sh`) with C escapes, so that a newline or a byte that
/// is not UTF-8 neither breaks the command nor names another directory.
pub fn shell_quote_path(path: &Path) -> String {
    let bytes = path.as_os_str().as_encoded_bytes();
    match std::str::from_utf8(bytes) {
        Ok(s) if !s.chars().any(char::is_control) => shell_quote(s),
        _ => {
            let mut out = String::from("$'");
            for &b in bytes {
                match b {
                    b'\\' | b'\'' => {
                        out.push('\\');
                        out.push(b as char);
                    }
                    0x20..=0x7e => out.push(b as char),
                    _ => out.push_str(&format!("\\x{b:02x}")),
                }
            }
            out.push('\'');
            out
        }
    }
}

/// Pushes `c`, escaped when it is a control character or a backslash.
fn push_char(out: &mut String, c: char) {
    match c {
        '\\' => out.push_str("\\\\"),
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        c if c.is_control() => {
            let n = u32::from(c);
            if n < 0x100 {
                out.push_str(&format!("\\x{n:02x}"));
            } else {
                out.push_str(&format!("\\u{{{n:x}}}"));
            }
        }
        c => out.push(c),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::ffi::OsStrExt;

    #[test]
    fn plain_names_are_shown_as_they_are() {
        assert_eq!(Path::new("src/my kernel.cu").shown(), "src/my kernel.cu");
        assert_eq!(Path::new("a\\b/é.cu").shown(), "a\\b/é.cu");
    }

    #[test]
    fn control_characters_and_bytes_that_are_not_utf8_are_escaped() {
        let name = std::ffi::OsStr::from_bytes(b"nl\n::error x\x1b[31m\\\xff.cu");
        assert_eq!(
            Path::new(name).shown(),
            "nl\\n::error x\\x1b[31m\\\\\\xff.cu"
        );
        assert_eq!(escaped_controls("a\n\tb\x1b[2J\rc"), "a\n\tb\\x1b[2J\\rc");
    }

    #[test]
    fn quotes_paths_for_the_shell() {
        assert_eq!(shell_quote("/a/b-c_d.e"), "/a/b-c_d.e");
        assert_eq!(shell_quote("/a b/it's"), "'/a b/it'\\''s'");
        assert_eq!(shell_quote(""), "''");
        assert_eq!(shell_quote("$(touch x)"), "'$(touch x)'");
        let odd = std::ffi::OsStr::from_bytes(b"/t/a'b\n\xff");
        assert_eq!(shell_quote_path(Path::new(odd)), "$'/t/a\\'b\\x0a\\xff'");
        assert_eq!(shell_quote_path(Path::new("/t/$(x)")), "'/t/$(x)'");
    }
}
