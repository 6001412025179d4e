//! SARIF 2.1.0 logs, shared by `copper optimize` and `copper lint`: the
//! objects copper writes, as typed structures (so both commands write one
//! schema the compiler checks), and where artifact URIs are relative to.
//!
//! Only the properties copper fills are modelled; their names and nesting
//! follow the OASIS SARIF 2.1.0 specification. `search/tests/sarif.rs`
//! reads both commands' logs back into these types, rejecting any other
//! property, and checks the specification's constraints on them.

use copper::shown::Shown;
use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

use copper::diag::Diagnostic;
use serde::{Deserialize, Serialize};

/// The SARIF version copper writes.
pub const VERSION: &str = "2.1.0";

/// The schema the log names.
const SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";

/// A SARIF log: one run of copper.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Log {
    /// The JSON schema of the format.
    #[serde(rename = "$schema")]
    pub schema: String,
    /// Always [`VERSION`].
    pub version: String,
    /// The runs (copper writes one).
    pub runs: Vec<Run>,
}

/// One run: the tool, its rules, and what it found.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Run {
    /// The tool that ran.
    pub tool: Tool,
    /// Where relative URIs are resolved: `SRCROOT` → a `file:` URI.
    pub original_uri_base_ids: BTreeMap<String, ArtifactLocation>,
    /// The results, each naming one of the driver's rules.
    pub results: Vec<SarifResult>,
}

/// The tool: its driver component.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tool {
    /// copper itself.
    pub driver: Driver,
}

/// The driver: copper's name, version and rules.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Driver {
    /// `copper`.
    pub name: String,
    /// The crate's version.
    pub version: String,
    /// Every rule a result may name.
    pub rules: Vec<Rule>,
}

/// A rule (a `reportingDescriptor`).
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Rule {
    /// `copper/NAME`.
    pub id: String,
    /// One line.
    pub short_description: Message,
    /// What the rule finds and why it matters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub full_description: Option<Message>,
    /// How to fix it.
    pub help: Message,
    /// Where the rule is documented.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub help_uri: Option<String>,
}

/// A plain-text message.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Message {
    /// The text.
    pub text: String,
}

impl Message {
    /// A message of `text`.
    pub fn new(text: impl Into<String>) -> Message {
        Message { text: text.into() }
    }
}

/// How serious a result is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// A problem that must be fixed (or copper could not read the code).
    Error,
    /// A problem worth fixing.
    Warning,
    /// A suggestion.
    Note,
}

/// One result. (Named so as not to shadow `Result`.)
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SarifResult {
    /// The rule's id.
    pub rule_id: String,
    /// Its level.
    pub level: Level,
    /// What was found.
    pub message: Message,
    /// Where.
    pub locations: Vec<Location>,
    /// Edits that apply the suggestion.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fixes: Vec<Fix>,
}

impl SarifResult {
    /// A result of `rule` (without its `copper/` prefix) at `location`.
    pub fn at(rule: &str, level: Level, message: String, location: PhysicalLocation) -> Self {
        SarifResult {
            rule_id: format!("copper/{rule}"),
            level,
            message: Message::new(message),
            locations: vec![Location {
                physical_location: location,
            }],
            fixes: Vec::new(),
        }
    }
}

/// A location: a place in a file.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Location {
    /// The file and region.
    pub physical_location: PhysicalLocation,
}

/// A file and, when known, a region of it.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PhysicalLocation {
    /// The file.
    pub artifact_location: ArtifactLocation,
    /// The region (absent when the whole file is meant).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub region: Option<Region>,
}

impl PhysicalLocation {
    /// `artifact` at 1-based `line` and `col`.
    pub fn at(artifact: ArtifactLocation, line: usize, col: usize) -> Self {
        PhysicalLocation {
            artifact_location: artifact,
            region: Some(Region::start(line, col)),
        }
    }
}

/// A file, by URI.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ArtifactLocation {
    /// Percent-encoded; relative to `uriBaseId` when that is present.
    pub uri: String,
    /// The base a relative URI is resolved against.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uri_base_id: Option<String>,
}

/// A region of a text file: 1-based lines and columns, the end exclusive.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Region {
    /// The first line.
    pub start_line: usize,
    /// The first column.
    pub start_column: usize,
    /// The last line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_line: Option<usize>,
    /// The column after the region.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_column: Option<usize>,
}

impl Region {
    /// The region starting at `line`, `col` (a column of 0 is taken as 1).
    pub fn start(line: usize, col: usize) -> Region {
        Region {
            start_line: line,
            start_column: col.max(1),
            end_line: None,
            end_column: None,
        }
    }
}

/// A fix: its description and the edits to each file.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Fix {
    /// What the fix does.
    pub description: Message,
    /// The edits, per file.
    pub artifact_changes: Vec<ArtifactChange>,
}

/// The edits to one file.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArtifactChange {
    /// The file.
    #[serde(rename = "artifactLocation")]
    pub artifact_location: ArtifactLocation,
    /// Its replacements.
    pub replacements: Vec<Replacement>,
}

/// One replacement: a region deleted and the text put there.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Replacement {
    /// The region replaced.
    pub deleted_region: Region,
    /// The text inserted.
    pub inserted_content: Message,
}

/// A rule of `id` (without its `copper/` prefix) with these texts.
pub fn rule(id: &str, short: &str, help: &str) -> Rule {
    Rule {
        id: format!("copper/{id}"),
        short_description: Message::new(short),
        full_description: None,
        help: Message::new(help),
        help_uri: None,
    }
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
    pub fn artifact(&self, path: &Path) -> ArtifactLocation {
        let abs = absolute(path);
        match abs.strip_prefix(&self.dir) {
            Ok(rel) => ArtifactLocation {
                uri: encode_path(rel),
                uri_base_id: Some(BASE_ID.into()),
            },
            Err(_) => ArtifactLocation {
                uri: file_uri(&abs),
                uri_base_id: None,
            },
        }
    }

    /// The run's `originalUriBaseIds`.
    fn base_ids(&self) -> BTreeMap<String, ArtifactLocation> {
        let mut uri = file_uri(&self.dir);
        if !uri.ends_with('/') {
            uri.push('/');
        }
        BTreeMap::from([(
            BASE_ID.to_string(),
            ArtifactLocation {
                uri,
                uri_base_id: None,
            },
        )])
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
pub fn error_rule() -> Rule {
    rule(
        "error",
        "copper could not read this file or kernel",
        "The message says what copper could not read and why (a syntax error, a construct outside the supported subset, a missing file); the rest of the file is still processed.",
    )
}

/// A SARIF result at `level` for a diagnostic, with its region when it
/// has one.
pub fn diagnostic_result(d: &Diagnostic, level: Level, root: &SarifRoot) -> SarifResult {
    let artifact = root.artifact(&d.file);
    let location = if d.line > 0 {
        PhysicalLocation::at(artifact, d.line, d.col)
    } else {
        PhysicalLocation {
            artifact_location: artifact,
            region: None,
        }
    };
    SarifResult::at(
        "error",
        level,
        format!("{}: {}", d.code, d.message),
        location,
    )
}

/// A SARIF 2.1.0 log of one copper run with these rules and results, URIs
/// relative to `root`.
pub fn log(rules: Vec<Rule>, results: Vec<SarifResult>, root: &SarifRoot) -> Log {
    Log {
        schema: SCHEMA.into(),
        version: VERSION.into(),
        runs: vec![Run {
            tool: Tool {
                driver: Driver {
                    name: "copper".into(),
                    version: env!("CARGO_PKG_VERSION").into(),
                    rules,
                },
            },
            original_uri_base_ids: root.base_ids(),
            results,
        }],
    }
}

/// Prints the log as pretty JSON on standard output.
pub fn print(log: &Log) {
    println!("{}", serde_json::to_string_pretty(log).unwrap_or_default());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_are_relative_and_percent_encoded() {
        let tmp = tempfile::Builder::new()
            .prefix("copper ci #")
            .tempdir()
            .unwrap();
        let dir = tmp.path();
        std::fs::create_dir_all(dir.join("sub dir")).unwrap();
        let file = dir.join("sub dir").join("a%b [1].cu");
        std::fs::write(&file, "").unwrap();
        let root = SarifRoot::new(Some(dir)).unwrap();
        let a = root.artifact(&file);
        assert_eq!(a.uri, "sub%20dir/a%25b%20%5B1%5D.cu");
        assert_eq!(a.uri_base_id.as_deref(), Some(BASE_ID));
        let base = root.base_ids()[BASE_ID].uri.clone();
        assert!(base.starts_with("file:///") && base.ends_with('/'));
        assert!(base.contains("copper%20ci%20%23"), "{base}");
        let outside = SarifRoot::new(Some(&dir.join("sub dir"))).unwrap();
        let b = outside.artifact(&dir.join("x.cu"));
        assert!(b.uri.starts_with("file:///"));
        assert!(b.uri_base_id.is_none());
    }

    #[test]
    fn a_log_names_its_version_and_omits_what_is_empty() {
        let root = SarifRoot::new(None).unwrap();
        let result = SarifResult::at(
            "x",
            Level::Warning,
            "m".into(),
            PhysicalLocation::at(root.artifact(Path::new("a.cu")), 3, 0),
        );
        let text = serde_json::to_string(&log(vec![error_rule()], vec![result], &root)).unwrap();
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["version"], VERSION);
        let r = &v["runs"][0]["results"][0];
        assert_eq!(r["ruleId"], "copper/x");
        assert_eq!(r["level"], "warning");
        assert_eq!(
            r["locations"][0]["physicalLocation"]["region"]["startColumn"],
            1
        );
        assert!(r.get("fixes").is_none());
        assert!(v["runs"][0]["tool"]["driver"]["rules"][0]
            .get("helpUri")
            .is_none());
        let back: Log = serde_json::from_str(&text).unwrap();
        assert_eq!(back.runs[0].results[0].level, Level::Warning);
    }
}
