//! The limits on the text handed to the parser, counted after macro
//! expansion: every pass over a kernel's syntax (parser, conversion,
//! lowering, printer, analyses) recurses on its nesting, and its time
//! grows with a statement's length.

/// Deepest nesting accepted: brackets, runs of prefix operators, and
/// statements under `if`, `for`, `while`, `switch` and `do`.
pub const MAX_NESTING: usize = 256;
/// Most tokens in one statement accepted.
pub const MAX_STATEMENT_TOKENS: usize = 4096;
/// Most tokens macro expansions may produce for one file (all its
/// functions together).
pub const MAX_FILE_EXPANSION: usize = 1 << 20;

/// Which limit a token went past.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exceeded {
    /// [`MAX_NESTING`].
    Nesting,
    /// [`MAX_STATEMENT_TOKENS`].
    Statement,
}

/// Counts nesting and statement length over a stream of tokens.
#[derive(Clone, Debug, Default)]
pub struct Limits {
    /// Open `(`, `[` and `{`.
    brackets: usize,
    /// Open `(` (a `;` inside ends no statement: `for (…; …; …)`).
    parens: usize,
    /// Prefix operators since the last operand (`- - - x`).
    prefix: usize,
    /// `if`, `for`, `while` and `switch` since the last statement ended
    /// without an `else` after it.
    control: usize,
    /// `do`s whose `while` has not come.
    dos: usize,
    /// Tokens since the last `;`, `{` or `}`.
    statement: usize,
    /// Whether the last token ends an operand (a prefix operator cannot
    /// follow it).
    operand: bool,
    /// Whether the last token ended a statement.
    ended: bool,
}

impl Limits {
    /// Counts the token `tok`.
    pub fn feed(&mut self, tok: &str) -> Result<(), Exceeded> {
        if std::mem::take(&mut self.ended) {
            match tok {
                "else" => {}
                "while" if self.dos > 0 => self.dos -= 1,
                _ => self.control = 0,
            }
        }
        match tok {
            "(" | "[" | "{" => {
                self.brackets += 1;
                self.parens += usize::from(tok == "(");
            }
            ")" | "]" | "}" => {
                self.brackets = self.brackets.saturating_sub(1);
                if tok == ")" {
                    self.parens = self.parens.saturating_sub(1);
                }
            }
            "if" | "for" | "while" | "switch" => self.control += 1,
            "do" => self.dos += 1,
            _ => {}
        }
        let operand = tok.starts_with(|c: char| c.is_alphanumeric() || "_'\".".contains(c))
            && !matches!(tok, "return" | "case" | "sizeof" | "else" | "do");
        if operand || matches!(tok, ")" | "]") {
            self.prefix = 0;
        } else if !self.operand && is_prefix_operator(tok) {
            self.prefix += 1;
        }
        self.operand = operand || matches!(tok, ")" | "]");
        if self.brackets + self.prefix + self.control + self.dos > MAX_NESTING {
            return Err(Exceeded::Nesting);
        }
        match tok {
            ";" if self.parens == 0 => {
                self.statement = 0;
                self.ended = true;
            }
            "}" => {
                self.statement = 0;
                self.ended = true;
            }
            "{" | ";" => self.statement = 0,
            _ => {
                self.statement += 1;
                if self.statement > MAX_STATEMENT_TOKENS {
                    return Err(Exceeded::Statement);
                }
            }
        }
        Ok(())
    }
}

/// Whether `tok` may be a prefix operator.
fn is_prefix_operator(tok: &str) -> bool {
    matches!(tok, "-" | "+" | "!" | "~" | "*" | "&" | "++" | "--")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn first_exceeded(text: &str) -> Option<Exceeded> {
        let mut l = Limits::default();
        super::super::macros::token_texts(text)
            .iter()
            .find_map(|t| l.feed(t).err())
    }

    #[test]
    fn nesting_counts_brackets_prefix_operators_and_statements() {
        let n = MAX_NESTING + 1;
        for deep in [
            format!("{}1{}", "(".repeat(n), ")".repeat(n)),
            format!("x = {}1;", "- ".repeat(n)),
            format!("{}x = 1;", "if (a) ".repeat(n)),
            format!("{}x = 1;", "for (;;) ".repeat(n)),
            format!("{}x = 1;{}", "do ".repeat(n), " while (a);".repeat(n)),
        ] {
            assert_eq!(first_exceeded(&deep), Some(Exceeded::Nesting), "{deep}");
        }
        let n = MAX_NESTING - 1;
        for fine in [
            format!("{}1{}", "(".repeat(n), ")".repeat(n)),
            "x = a - b - c - d - -e;".repeat(n),
            "if (a) x = 1; else if (b) x = 2;".repeat(n),
            format!("if (a) x = 1;{}", " else if (b) x = 2;".repeat(n - 1)),
            "do x++; while (a);".repeat(2 * n),
        ] {
            assert_eq!(first_exceeded(&fine), None, "{fine}");
        }
    }

    #[test]
    fn a_statement_is_bounded_and_a_semicolon_in_parentheses_ends_none() {
        let long = format!("x = {};", "1 + ".repeat(MAX_STATEMENT_TOKENS));
        assert_eq!(first_exceeded(&long), Some(Exceeded::Statement));
        let loops = format!("for (i = 0; i < n; i++) {{ {} }}", "x++;".repeat(10_000));
        assert_eq!(first_exceeded(&loops), None);
    }
}
