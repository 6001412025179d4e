//! The `.gitignore` and `.ignore` files of a directory search, read by
//! copper itself through [`read_input`] (a checkout's ignore file may be a
//! named pipe or a link to `/dev/zero`; the `ignore` crate would open and
//! read it as it is). Each directory's files apply below it, `.ignore`
//! over `.gitignore`, the deepest directory's rules first, from the
//! directory searched up to the filesystem's root, as ripgrep applies
//! them. An ignore file is read to [`MAX_IGNORE_BYTES`] and
//! [`MAX_IGNORE_PATTERNS`] patterns (compiled patterns cost kilobytes
//! each); the rest of a larger one is left out, with a note.

use copper::shown::Shown;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use copper::input::read_input;
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use ignore::Match;

/// The ignore files read in each directory, in the order they apply (a
/// later file's rule wins).
const IGNORE_FILES: [&str; 2] = [".gitignore", ".ignore"];

/// Most bytes of one ignore file applied.
pub const MAX_IGNORE_BYTES: usize = 1024 * 1024;

/// Most patterns of one ignore file applied.
pub const MAX_IGNORE_PATTERNS: usize = 10_000;

/// The ignore rules of one directory search.
pub struct Ignores {
    /// The directory searched, as given.
    root: PathBuf,
    /// It, absolute (the rules above it are matched against absolute paths).
    absolute_root: PathBuf,
    /// Each directory's rules (absolute path), read once.
    rules: Mutex<HashMap<PathBuf, Option<Arc<Gitignore>>>>,
    /// One line per ignore file that could not be read, for stderr.
    notes: Mutex<Vec<String>>,
}

impl Ignores {
    /// The rules of a search of `root`.
    pub fn new(root: &Path) -> Ignores {
        Ignores {
            root: root.to_path_buf(),
            absolute_root: std::path::absolute(root).unwrap_or_else(|_| root.to_path_buf()),
            rules: Mutex::new(HashMap::new()),
            notes: Mutex::new(Vec::new()),
        }
    }

    /// Whether `path` (below the root, as the search names it) is ignored.
    pub fn ignored(&self, path: &Path, is_dir: bool) -> bool {
        let Ok(below) = path.strip_prefix(&self.root) else {
            return false;
        };
        if below.as_os_str().is_empty() {
            return false;
        }
        let absolute = self.absolute_root.join(below);
        for dir in absolute.ancestors().skip(1) {
            let Some(rules) = self.rules_of(dir) else {
                continue;
            };
            match rules.matched(&absolute, is_dir) {
                Match::Ignore(_) => return true,
                Match::Whitelist(_) => return false,
                Match::None => {}
            }
        }
        false
    }

    /// What could not be read, one line per file.
    pub fn take_notes(&self) -> Vec<String> {
        std::mem::take(&mut *self.notes.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// The rules of the directory `dir` (absolute), read once.
    fn rules_of(&self, dir: &Path) -> Option<Arc<Gitignore>> {
        let mut all = self.rules.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(r) = all.get(dir) {
            return r.clone();
        }
        let mut builder = GitignoreBuilder::new(dir);
        let mut any = false;
        for name in IGNORE_FILES {
            let file = dir.join(name);
            match read_input(&file) {
                Ok(bytes) => {
                    any = true;
                    if !add_patterns(&mut builder, &file, &bytes) {
                        self.note(
                            &file,
                            &format!(
                                "only the first {MAX_IGNORE_PATTERNS} patterns and \
                                 {MAX_IGNORE_BYTES} bytes are applied"
                            ),
                        );
                    }
                }
                Err(e) if e.is_not_found() => {}
                Err(e) => self.note(&file, &format!("not read: {e}")),
            }
        }
        let rules = any.then(|| builder.build().ok().map(Arc::new)).flatten();
        all.insert(dir.to_path_buf(), rules.clone());
        rules
    }

    /// Records `what` about the ignore file `file` (absolute), named as
    /// the search names it when below the root.
    fn note(&self, file: &Path, what: &str) {
        let shown = match file.strip_prefix(&self.absolute_root) {
            Ok(rest) => self.root.join(rest),
            Err(_) => file.to_path_buf(),
        };
        self.notes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(format!("{}: {what}", shown.shown()));
    }
}

/// Adds the patterns of the ignore file `file`, whose text is `bytes`, to
/// `builder`, up to [`MAX_IGNORE_BYTES`] and [`MAX_IGNORE_PATTERNS`];
/// whether all of them were added.
fn add_patterns(builder: &mut GitignoreBuilder, file: &Path, bytes: &[u8]) -> bool {
    let whole = bytes.len() <= MAX_IGNORE_BYTES;
    let text = String::from_utf8_lossy(&bytes[..bytes.len().min(MAX_IGNORE_BYTES)]);
    let mut lines = text.lines();
    if !whole {
        // The last line may be cut.
        lines.next_back();
    }
    let from = Some(file.to_path_buf());
    let mut patterns = 0;
    for line in lines {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if patterns == MAX_IGNORE_PATTERNS {
            return false;
        }
        patterns += 1;
        // A line that is no valid pattern is skipped, as git does.
        let _ = builder.add_line(from.clone(), line);
    }
    whole
}
