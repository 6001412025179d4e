//! Output for continuous integration, shared by `copper optimize` and
//! `copper lint`: GitHub Actions workflow commands and SARIF 2.1.0 logs.

use copper::shown::Shown;
use std::path::{Component, Path, PathBuf};

use copper::diag::Diagnostic;
use serde_json::{json, Value};

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

/// The id of the base that relative SARIF URIs are resolved against.
const BASE_ID: &str = "SRCROOT";

/// Why `--sarif-root` cannot be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SarifRootError {
    /// No `--sarif-root`, and the current directory cannot be read.
    #[error("cannot read the current directory: {0}")]
    CurrentDir(#[source] std::io::Error),
    /// The directory given does not exist.
    #[error("--sarif-root {}: {source}", dir.shown())]
    Root {
        /// The directory.
        dir: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
}

/// Where SARIF artifact URIs are relative to (`--sarif-root`, default the
/// current directory).
pub struct SarifRoot {
    dir: PathBuf,
}

impl SarifRoot {
    /// The root `dir`, or the current directory; it must exist.
    pub fn new(dir: Option<&Path>) -> Result<SarifRoot, SarifRootError> {
        let dir = match dir {
            Some(d) => d.to_path_buf(),
            None => std::env::current_dir().map_err(SarifRootError::CurrentDir)?,
        };
        let dir = dir.canonicalize().map_err(|source| SarifRootError::Root {
            dir: dir.clone(),
            source,
        })?;
        Ok(SarifRoot { dir })
    }

    /// The `artifactLocation` of `path`: relative to the root (with
    /// `uriBaseId`) when it lies under it, an absolute `file:` URI
    /// otherwise; percent-encoded either way (RFC 3986).
    pub fn artifact(&self, path: &Path) -> Value {
        let abs = absolute(path);
        match abs.strip_prefix(&self.dir) {
            Ok(rel) => json!({ "uri": encode_path(rel), "uriBaseId": BASE_ID }),
            Err(_) => json!({ "uri": file_uri(&abs) }),
        }
    }

    /// The run's `originalUriBaseIds`.
    fn base_ids(&self) -> Value {
        let mut uri = file_uri(&self.dir);
        if !uri.ends_with('/') {
            uri.push('/');
        }
        json!({ BASE_ID: { "uri": uri } })
    }
}

/// `path` made absolute: resolved through the file system when it exists,
/// otherwise joined to the current directory with `.` and `..` removed.
fn absolute(path: &Path) -> PathBuf {
    if let Ok(p) = path.canonicalize() {
        return p;
    }
    let joined = std::env::current_dir().map_or_else(|_| path.to_path_buf(), |d| d.join(path));
    let mut out = PathBuf::new();
    for c in joined.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            c => out.push(c),
        }
    }
    out
}

/// The path's segments, percent-encoded and joined by `/`: every byte
/// outside RFC 3986's unreserved characters is written `%XX`.
fn encode_path(path: &Path) -> String {
    let mut out = Vec::new();
    for c in path.components() {
        if let Component::Normal(s) = c {
            out.push(percent_encode(s.as_encoded_bytes()));
        }
    }
    out.join("/")
}

/// `file:` URI of an absolute path.
fn file_uri(path: &Path) -> String {
    format!("file:///{}", encode_path(path))
}

/// RFC 3986 percent-encoding of everything but unreserved characters.
fn percent_encode(bytes: &[u8]) -> String {
    let mut s = String::new();
    for &b in bytes {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            s.push(b as char);
        } else {
            s.push_str(&format!("%{b:02X}"));
        }
    }
    s
}

/// The rule every error result names: copper could not read a file or a
/// kernel.
pub fn error_rule() -> Value {
    json!({
        "id": "copper/error",
        "shortDescription": { "text": "copper could not read this file or kernel" },
        "help": { "text": "The message says what copper could not read and why (a syntax error, a construct outside the supported subset, a missing file); the rest of the file is still processed." }
    })
}

/// A SARIF error result for a diagnostic, with its region when it has one.
pub fn error_result(d: &Diagnostic, root: &SarifRoot) -> Value {
    let mut location = json!({ "artifactLocation": root.artifact(&d.file) });
    if d.line > 0 {
        location["region"] = json!({ "startLine": d.line, "startColumn": d.col.max(1) });
    }
    json!({
        "ruleId": "copper/error",
        "level": "error",
        "message": { "text": format!("{}: {}", d.code, d.message) },
        "locations": [{ "physicalLocation": location }],
    })
}

/// A SARIF 2.1.0 log of one copper run with these rules and results, URIs
/// relative to `root`.
pub fn sarif_log(rules: Vec<Value>, results: Vec<Value>, root: &SarifRoot) -> Value {
    json!({
        "version": "2.1.0",
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "runs": [{
            "tool": { "driver": {
                "name": "copper",
                "version": env!("CARGO_PKG_VERSION"),
                "rules": rules
            }},
            "originalUriBaseIds": root.base_ids(),
            "results": results
        }]
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_are_relative_and_percent_encoded() {
        let dir = std::env::temp_dir().join(format!("copper ci #{}", std::process::id()));
        std::fs::create_dir_all(dir.join("sub dir")).unwrap();
        let file = dir.join("sub dir").join("a%b [1].cu");
        std::fs::write(&file, "").unwrap();
        let root = SarifRoot::new(Some(&dir)).unwrap();
        let a = root.artifact(&file);
        assert_eq!(a["uri"], "sub%20dir/a%25b%20%5B1%5D.cu");
        assert_eq!(a["uriBaseId"], BASE_ID);
        let base = root.base_ids()[BASE_ID]["uri"]
            .as_str()
            .unwrap()
            .to_string();
        assert!(base.starts_with("file:///") && base.ends_with('/'));
        assert!(base.contains("copper%20ci%20%23"), "{base}");
        let outside = SarifRoot::new(Some(&dir.join("sub dir"))).unwrap();
        let b = outside.artifact(&dir.join("x.cu"));
        assert!(b["uri"].as_str().unwrap().starts_with("file:///"));
        assert!(b.get("uriBaseId").is_none());
        std::fs::remove_dir_all(&dir).ok();
    }

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
