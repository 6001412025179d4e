//! How a file is named in a patch, so that `git apply` and `patch -p1`
//! find it: relative to the current directory when the file is inside it,
//! else to the root of the git repository that holds it (apply from
//! there), else to `/`.

use std::path::{Component, Path, PathBuf};

/// A file's name in a patch and the directory the patch applies from.
#[derive(Debug, PartialEq, Eq)]
pub struct PatchPath {
    /// Relative path, with `/` separators.
    pub name: String,
    /// Where to apply the patch when that is not the current directory.
    pub root: Option<PathBuf>,
}

/// The name `file` takes in a patch made in the current directory.
pub fn patch_path(file: &Path) -> PatchPath {
    let cwd = std::env::current_dir()
        .and_then(|d| d.canonicalize())
        .unwrap_or_default();
    let absolute = file.canonicalize().unwrap_or_else(|_| cwd.join(file));
    if let Ok(rel) = absolute.strip_prefix(&cwd) {
        return PatchPath {
            name: slashed(rel),
            root: None,
        };
    }
    let root = absolute
        .ancestors()
        .skip(1)
        .find(|d| d.join(".git").exists())
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("/"));
    PatchPath {
        name: slashed(absolute.strip_prefix(&root).unwrap_or(&absolute)),
        root: Some(root),
    }
}

/// `rel` with `/` between its parts (no leading `/`).
fn slashed(rel: &Path) -> String {
    rel.components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s.to_string_lossy().to_string()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inside_the_current_directory_the_name_is_relative() {
        let here = std::env::current_dir().unwrap();
        let p = patch_path(&here.join("Cargo.toml"));
        assert_eq!(
            p,
            PatchPath {
                name: "Cargo.toml".into(),
                root: None
            }
        );
    }

    #[test]
    fn outside_it_the_name_is_relative_to_a_repository_or_the_root() {
        let dir = std::env::temp_dir().join(format!("copper-patch-{}", std::process::id()));
        let repo = dir.join("repo");
        std::fs::create_dir_all(repo.join(".git")).unwrap();
        std::fs::create_dir_all(repo.join("src")).unwrap();
        std::fs::write(repo.join("src/k.cu"), "").unwrap();
        std::fs::write(dir.join("loose.cu"), "").unwrap();
        let repo = repo.canonicalize().unwrap();
        let p = patch_path(&repo.join("src/k.cu"));
        assert_eq!(
            p,
            PatchPath {
                name: "src/k.cu".into(),
                root: Some(repo.clone())
            }
        );
        let loose = dir.join("loose.cu").canonicalize().unwrap();
        let p = patch_path(&loose);
        assert_eq!(p.root, Some(PathBuf::from("/")));
        assert_eq!(format!("/{}", p.name), loose.to_string_lossy());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
