//! Where a batch's patch applies from and how each file is named in it,
//! so that one `git apply` or `patch -p1` takes the whole patch: names are
//! relative to the current directory when every file is inside it, else to
//! the root of the one git repository that holds them all, else to the
//! deepest directory that holds them all, with a note saying where to apply
//! it from (the directory quoted for the shell). Names are bytes: a name
//! that is not UTF-8 is kept as it is, for the diff header to quote.

use copper::cuda::diff::unified;
use copper::shown::shell_quote_path;
use copper_search::driver::optimize::FileRun;
use std::path::{Component, Path, PathBuf};

/// The unified diff of a file's rewrite (empty when nothing improved),
/// the file named relative to `base`.
pub fn file_diff(f: &FileRun, base: &PatchBase) -> String {
    match (&f.parsed, &f.rewritten) {
        (Ok(p), Some(new)) => unified(&base.name(&p.source.path), &p.source.text, new),
        _ => String::new(),
    }
}

/// Where the patch of a batch applies from: what the rewritten files have
/// in common.
pub fn patch_base(runs: &[FileRun]) -> PatchBase {
    PatchBase::of(
        runs.iter()
            .filter(|f| f.rewritten.is_some())
            .map(|f| f.path.as_path()),
    )
}

/// The directory a patch applies from.
#[derive(Debug, PartialEq, Eq)]
pub struct PatchBase {
    /// The directory, canonical.
    dir: PathBuf,
    /// How to apply the patch when `dir` is not the current directory.
    pub note: Option<String>,
}

impl PatchBase {
    /// The base for a patch of `files` made in the current directory.
    pub fn of<'a>(files: impl IntoIterator<Item = &'a Path>) -> PatchBase {
        let cwd = std::env::current_dir()
            .and_then(|d| d.canonicalize())
            .unwrap_or_default();
        let files: Vec<PathBuf> = files
            .into_iter()
            .map(|f| f.canonicalize().unwrap_or_else(|_| cwd.join(f)))
            .collect();
        if files.iter().all(|f| f.starts_with(&cwd)) {
            return PatchBase {
                dir: cwd,
                note: None,
            };
        }
        let repos: Vec<Option<PathBuf>> = files.iter().map(|f| git_root(f)).collect();
        if let Some(Some(repo)) = repos.first() {
            if repos.iter().all(|r| r.as_ref() == Some(repo)) {
                let note = format!(
                    "paths in this patch are relative to {0}, the git repository that holds the files: apply it from there (`git -C {0} apply` or `patch -p1 -d {0}`)",
                    shell_quote_path(repo)
                );
                return PatchBase {
                    dir: repo.clone(),
                    note: Some(note),
                };
            }
        }
        let dir = common_ancestor(&files);
        let note = format!(
            "the files are neither all inside the current directory nor in one git repository: paths in this patch are relative to {0}; apply it with `patch -p1 -d {0}`",
            shell_quote_path(&dir)
        );
        PatchBase {
            dir,
            note: Some(note),
        }
    }

    /// `file`'s name in the patch: relative to the base, `/` separators.
    pub fn name(&self, file: &Path) -> Vec<u8> {
        let absolute = file.canonicalize().unwrap_or_else(|_| {
            std::env::current_dir()
                .and_then(|d| d.canonicalize())
                .unwrap_or_default()
                .join(file)
        });
        slashed(absolute.strip_prefix(&self.dir).unwrap_or(&absolute))
    }
}

/// The root of the git repository whose work tree holds `file`.
fn git_root(file: &Path) -> Option<PathBuf> {
    file.ancestors()
        .skip(1)
        .find(|d| d.join(".git").exists())
        .map(Path::to_path_buf)
}

/// The deepest directory holding every one of `files` (`/` at worst).
fn common_ancestor(files: &[PathBuf]) -> PathBuf {
    let mut dir = files
        .first()
        .and_then(|f| f.parent())
        .map_or_else(|| PathBuf::from("/"), Path::to_path_buf);
    while !files.iter().all(|f| f.starts_with(&dir)) {
        match dir.parent() {
            Some(p) => dir = p.to_path_buf(),
            None => break,
        }
    }
    dir
}

/// `rel` with `/` between its parts (no leading `/`).
fn slashed(rel: &Path) -> Vec<u8> {
    rel.components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s.as_encoded_bytes()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join(&b'/')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inside_the_current_directory_names_are_relative_to_it() {
        let here = std::env::current_dir().unwrap();
        let file = here.join("Cargo.toml");
        let base = PatchBase::of([file.as_path()]);
        assert_eq!(base.note, None);
        assert_eq!(base.name(&file), b"Cargo.toml");
    }

    #[test]
    fn outside_it_names_are_relative_to_one_repository_or_a_common_directory() {
        let scratch = tempfile::tempdir().unwrap();
        let dir = scratch.path();
        for repo in ["one", "two"] {
            std::fs::create_dir_all(dir.join(repo).join(".git")).unwrap();
            std::fs::create_dir_all(dir.join(repo).join("src")).unwrap();
            std::fs::write(dir.join(repo).join("src/k.cu"), "").unwrap();
        }
        std::fs::write(dir.join("one/top.cu"), "").unwrap();
        std::fs::write(dir.join("loose.cu"), "").unwrap();
        let dir = dir.canonicalize().unwrap();
        let (k1, top, k2, loose) = (
            dir.join("one/src/k.cu"),
            dir.join("one/top.cu"),
            dir.join("two/src/k.cu"),
            dir.join("loose.cu"),
        );
        // One repository: relative to its root.
        let base = PatchBase::of([k1.as_path(), top.as_path()]);
        assert_eq!(base.dir, dir.join("one"));
        assert_eq!(
            (base.name(&k1), base.name(&top)),
            (b"src/k.cu".to_vec(), b"top.cu".to_vec())
        );
        assert!(base.note.unwrap().contains("git -C"));
        // Two repositories, or a repository and a loose file: relative to
        // the directory that holds them all.
        for other in [&k2, &loose] {
            let base = PatchBase::of([k1.as_path(), other.as_path()]);
            assert_eq!(base.dir, dir);
            assert_eq!(base.name(&k1), b"one/src/k.cu");
            assert!(base.note.unwrap().contains("patch -p1 -d"));
        }
    }
}
