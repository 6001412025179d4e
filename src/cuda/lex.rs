//! A C/C++/CUDA tokenizer for scanning whole files.
//!
//! It understands comments, string and character literals (raw strings
//! included), preprocessor lines with continuations, and multi-character
//! punctuators such as `<<<`. It never fails: unterminated literals and
//! comments end at the end of the file, and stray bytes become one-character
//! punctuators. Later passes report what they cannot use.

/// What a token is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TokKind {
    /// Identifier or keyword.
    Ident,
    /// Numeric literal (pp-number).
    Number,
    /// String literal, raw or not.
    Str,
    /// Character literal.
    Char,
    /// Operator or punctuation.
    Punct,
    /// A whole preprocessor line (`#…`), continuations included.
    Directive,
}

/// A token: its kind and byte range in the text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Token {
    /// Kind of token.
    pub kind: TokKind,
    /// First byte.
    pub start: usize,
    /// One past the last byte.
    pub end: usize,
}

impl Token {
    /// The token's text.
    pub fn text<'a>(&self, src: &'a str) -> &'a str {
        &src[self.start..self.end]
    }

    /// Whether the token is the identifier or punctuator `s`.
    pub fn is(&self, src: &str, s: &str) -> bool {
        self.text(src) == s
    }
}

/// CUDA's declaration qualifiers: words the front end blanks out of a
/// function's text (and records) before `lang-c` reads it.
pub(crate) const CUDA_QUALIFIERS: &[&str] = &[
    "__global__",
    "__device__",
    "__host__",
    "__shared__",
    "__constant__",
    "__managed__",
    "__forceinline__",
    "__noinline__",
    "__launch_bounds__",
    "__align__",
];

const PUNCTS: [&str; 49] = [
    "<<<", ">>>", "<<=", ">>=", "...", "->*", "->", "++", "--", "<<", ">>", "<=", ">=", "==", "!=",
    "&&", "||", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "::", "##", ".*", "{", "}", "[",
    "]", "(", ")", ";", ",", "<", ">", "=", "+", "-", "*", "/", "%", "&", "|", "^", "!", "~",
];

/// Whether `t` is one C identifier (ASCII letters, digits, `_`).
pub fn is_identifier(t: &str) -> bool {
    t.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && t.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Splits `src` into tokens, skipping whitespace and comments.
pub fn tokenize(src: &str) -> Vec<Token> {
    tokenize_with(src, true)
}

/// Tokens of a macro replacement list, where `#` is an operator, not a
/// directive.
pub fn tokenize_macro_body(src: &str) -> Vec<Token> {
    tokenize_with(src, false)
}

fn tokenize_with(src: &str, directives: bool) -> Vec<Token> {
    let b = src.as_bytes();
    let mut toks = Vec::new();
    let mut i = 0;
    let mut line_start = true;
    while i < b.len() {
        let c = b[i];
        if c == b'\n' {
            line_start = true;
            i += 1;
            continue;
        }
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        // A byte-order mark (at the start of a file saved by some editors)
        // separates tokens like a space.
        if b[i..].starts_with("\u{feff}".as_bytes()) {
            i += "\u{feff}".len();
            continue;
        }
        if c == b'\\' {
            if let Some(n) = continuation(b, i) {
                i += n;
                continue;
            }
        }
        if c == b'/' && b.get(i + 1) == Some(&b'/') {
            i = skip_line_comment(b, i);
            continue;
        }
        if c == b'/' && b.get(i + 1) == Some(&b'*') {
            i = skip_block_comment(b, i);
            continue;
        }
        let start = i;
        let kind;
        if c == b'#' && line_start && directives {
            i = directive_end(b, i);
            kind = TokKind::Directive;
        } else if c == b'"' {
            i = quoted_end(b, i, b'"');
            kind = TokKind::Str;
        } else if c == b'\'' {
            i = quoted_end(b, i, b'\'');
            kind = TokKind::Char;
        } else if c.is_ascii_alphabetic() || c == b'_' || c >= 0x80 {
            i = ident_end(b, i);
            if i < b.len() && b[i] == b'"' && is_raw_prefix(&src[start..i]) {
                i = raw_string_end(b, i);
                kind = TokKind::Str;
            } else if i < b.len()
                && (b[i] == b'"' || b[i] == b'\'')
                && is_literal_prefix(&src[start..i])
            {
                let q = b[i];
                i = quoted_end(b, i, q);
                kind = if q == b'"' {
                    TokKind::Str
                } else {
                    TokKind::Char
                };
            } else {
                kind = TokKind::Ident;
            }
        } else if c.is_ascii_digit() || (c == b'.' && b.get(i + 1).is_some_and(u8::is_ascii_digit))
        {
            i = number_end(b, i);
            kind = TokKind::Number;
        } else {
            let rest = &src[i..];
            // The first byte first: most punctuators are ruled out without
            // a comparison of strings (the lexer runs over a whole file in
            // several passes).
            let len = PUNCTS
                .iter()
                .find(|p| p.as_bytes()[0] == c && rest.starts_with(*p))
                .map(|p| p.len())
                .unwrap_or_else(|| rest.chars().next().map(char::len_utf8).unwrap_or(1));
            i += len;
            kind = TokKind::Punct;
        }
        line_start = false;
        toks.push(Token {
            kind,
            start,
            end: i,
        });
    }
    toks
}

/// The length of a backslash-newline continuation at `i` (a backslash, then
/// LF or CR LF), if there is one.
fn continuation(b: &[u8], i: usize) -> Option<usize> {
    match (b.get(i), b.get(i + 1), b.get(i + 2)) {
        (Some(b'\\'), Some(b'\n'), _) => Some(2),
        (Some(b'\\'), Some(b'\r'), Some(b'\n')) => Some(3),
        _ => None,
    }
}

fn skip_line_comment(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && b[i] != b'\n' {
        i += continuation(b, i).unwrap_or(1);
    }
    i
}

fn skip_block_comment(b: &[u8], mut i: usize) -> usize {
    i += 2;
    while i < b.len() && !(b[i] == b'*' && b.get(i + 1) == Some(&b'/')) {
        i += 1;
    }
    (i + 2).min(b.len())
}

/// End of a preprocessor line: up to an unescaped newline, skipping comments.
fn directive_end(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && b[i] != b'\n' {
        if let Some(n) = continuation(b, i) {
            i += n;
        } else if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
            i = skip_block_comment(b, i);
        } else if b[i] == b'/' && b.get(i + 1) == Some(&b'/') {
            return skip_line_comment(b, i);
        } else if b[i] == b'"' || b[i] == b'\'' {
            i = quoted_end(b, i, b[i]);
        } else {
            i += 1;
        }
    }
    i
}

fn quoted_end(b: &[u8], mut i: usize, q: u8) -> usize {
    i += 1;
    while i < b.len() && b[i] != q && b[i] != b'\n' {
        if b[i] == b'\\' {
            i += 1;
        }
        i += 1;
    }
    (i + 1).min(b.len())
}

fn ident_end(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] >= 0x80) {
        i += 1;
    }
    i
}

fn number_end(b: &[u8], mut i: usize) -> usize {
    while i < b.len() {
        let c = b[i];
        let exponent_sign =
            (c == b'+' || c == b'-') && matches!(b[i - 1], b'e' | b'E' | b'p' | b'P');
        if exponent_sign || c.is_ascii_alphanumeric() || c == b'.' || c == b'_' || c == b'\'' {
            i += 1;
        } else {
            break;
        }
    }
    i
}

fn is_raw_prefix(p: &str) -> bool {
    matches!(p, "R" | "LR" | "uR" | "UR" | "u8R")
}

fn is_literal_prefix(p: &str) -> bool {
    matches!(p, "L" | "u" | "U" | "u8")
}

/// End of a raw string `R"delim( … )delim"` starting at the opening quote.
fn raw_string_end(b: &[u8], i: usize) -> usize {
    let open = i + 1;
    let Some(paren) = b[open..].iter().position(|&c| c == b'(').map(|p| open + p) else {
        return b.len();
    };
    let mut close = Vec::with_capacity(paren - open + 2);
    close.push(b')');
    close.extend_from_slice(&b[open..paren]);
    close.push(b'"');
    b[paren..]
        .windows(close.len())
        .position(|w| w == close.as_slice())
        .map(|p| paren + p + close.len())
        .unwrap_or(b.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(src: &str) -> Vec<&str> {
        tokenize(src).iter().map(|t| t.text(src)).collect()
    }

    #[test]
    fn skips_comments_and_keeps_literals_whole() {
        let src = "a /* x { */ b // y }\n\"s}\\\"\" 'c' R\"d(})d\" 1.5e+3f";
        assert_eq!(
            texts(src),
            ["a", "b", "\"s}\\\"\"", "'c'", "R\"d(})d\"", "1.5e+3f"]
        );
    }

    #[test]
    fn directives_span_continuations() {
        let src = "#define A(x) \\\n  (x + 1)\nint y;";
        let toks = tokenize(src);
        assert_eq!(toks[0].kind, TokKind::Directive);
        assert_eq!(toks[0].text(src), "#define A(x) \\\n  (x + 1)");
        assert_eq!(texts(src)[1..], ["int", "y", ";"]);
    }

    #[test]
    fn crlf_continuations_and_byte_order_marks() {
        let src = "\u{feff}#define A(x) \\\r\n  (x + 1)\r\nint y; // c \\\r\n still comment\r\nz \\\r\n w";
        let toks = tokenize(src);
        assert_eq!(toks[0].kind, TokKind::Directive);
        assert_eq!(toks[0].text(src), "#define A(x) \\\r\n  (x + 1)\r");
        assert_eq!(texts(src)[1..], ["int", "y", ";", "z", "w"]);
    }

    #[test]
    fn every_punctuator_is_one_token_and_the_longest_wins() {
        for p in PUNCTS {
            // (After a token: `#` first on a line starts a directive.)
            assert_eq!(texts(&format!("a {p}")), ["a", p]);
            assert_eq!(texts(&format!("a {p} x")), ["a", p, "x"]);
        }
        assert_eq!(texts("a<<=b->*c"), ["a", "<<=", "b", "->*", "c"]);
    }

    #[test]
    fn launch_chevrons_are_single_tokens() {
        assert_eq!(
            texts("k<<<g, b>>>(x);"),
            ["k", "<<<", "g", ",", "b", ">>>", "(", "x", ")", ";"]
        );
    }

    #[test]
    fn unterminated_things_end_at_eof() {
        for src in ["\"abc", "/* abc", "'", "R\"x(abc", "#define X \\"] {
            let toks = tokenize(src);
            assert!(toks.last().is_none_or(|t| t.end <= src.len()));
        }
    }
}
