//! GitHub Actions workflow commands (annotations), shared by
//! `copper optimize` and `copper lint`; SARIF logs are [`super::sarif`]'s.

use copper::shown::Shown;

use copper::diag::Diagnostic;

/// GitHub workflow-command escaping of a message.
pub fn gh_escape(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// … and of a property value.
pub fn gh_property(s: &str) -> String {
    gh_escape(s).replace(':', "%3A").replace(',', "%2C")
}

/// A GitHub `::error` annotation for a diagnostic, with its line and column
/// when it has them.
pub fn gh_error(d: &Diagnostic) -> String {
    let file = gh_property(&d.file.shown().to_string());
    let title = gh_property(&format!("copper: {}", d.code));
    let at = if d.line == 0 {
        String::new()
    } else {
        format!(",line={},col={}", d.line, d.col)
    };
    format!(
        "::error file={file}{at},title={title}::{}",
        gh_escape(&d.message)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn github_errors_carry_line_and_column() {
        let mut d = Diagnostic::file_error(Path::new("a,b.cu"), "bad\nthing");
        assert_eq!(
            gh_error(&d),
            "::error file=a%2Cb.cu,title=copper%3A file::bad%0Athing"
        );
        d.line = 3;
        d.col = 7;
        assert!(gh_error(&d).starts_with("::error file=a%2Cb.cu,line=3,col=7,"));
    }
}
