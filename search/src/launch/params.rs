//! Where each `.cu` file's parameter file comes from: `--params FILE`,
//! read and checked once when the settings are resolved, or the file's own
//! `FILE.toml`, read with the file.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use super::{read_param_file, read_params, ParamsError};
use copper::sim::params::ParamFile;

/// The parameter files of a run.
pub enum Params {
    /// `--params FILE`, read once; an error is reported where a command
    /// reads a file's parameters, as for a file's own.
    Given {
        /// The file.
        path: PathBuf,
        /// It, read and checked, or why it cannot be used.
        read: Result<ParamFile, ParamsError>,
    },
    /// Each file's `FILE.toml`, when it exists.
    Beside,
}

impl Params {
    /// The given file (read now), or each file's own.
    pub fn new(given: Option<&Path>) -> Params {
        match given {
            Some(path) => Params::Given {
                path: path.to_path_buf(),
                read: read_param_file(path),
            },
            None => Params::Beside,
        }
    }

    /// The parameter file of `file`: the given one, else `FILE.toml`
    /// when it exists.
    pub fn of(&self, file: &Path) -> Result<Option<Cow<'_, ParamFile>>, ParamsError> {
        match self {
            Params::Given { read, .. } => read
                .as_ref()
                .map(|p| Some(Cow::Borrowed(p)))
                .map_err(Clone::clone),
            Params::Beside => Ok(read_params(file, None)?.map(Cow::Owned)),
        }
    }

    /// The parameter file of `file`, which must exist (`FILE.toml` when
    /// none was given).
    pub fn required(&self, file: &Path) -> Result<Cow<'_, ParamFile>, ParamsError> {
        match self {
            Params::Given { read, .. } => read.as_ref().map(Cow::Borrowed).map_err(Clone::clone),
            Params::Beside => read_param_file(&self.path(file)).map(Cow::Owned),
        }
    }

    /// The name of `file`'s parameter file, for messages: the given one's,
    /// else `FILE.toml`.
    pub fn path(&self, file: &Path) -> PathBuf {
        match self {
            Params::Given { path, .. } => path.clone(),
            Params::Beside => file.with_extension("toml"),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::launch::ParamsReason;

    use super::*;

    const VALID: &str = "[kernel.k]\ngrid = [1]\nblock = [32]\n";

    #[test]
    fn a_given_file_is_read_once_and_its_error_kept_for_every_file() {
        let dir = tempfile::tempdir().unwrap();
        let given = dir.path().join("p.toml");
        std::fs::write(&given, "grid = ").unwrap();
        let p = Params::new(Some(&given));
        // Gone now: the error is the one read at resolution.
        std::fs::remove_file(&given).unwrap();
        for file in ["a.cu", "b.cu"] {
            let e = p.of(Path::new(file)).unwrap_err();
            assert_eq!(e.path, given);
            assert!(matches!(e.reason, ParamsReason::Invalid(_)), "{e}");
            assert!(e.to_string().contains(": invalid parameter file: "), "{e}");
            assert_eq!(p.path(Path::new(file)), given);
        }
        let missing = Params::new(Some(&dir.path().join("none.toml")));
        let e = missing.required(Path::new("a.cu")).unwrap_err();
        assert!(matches!(e.reason, ParamsReason::Read(_)), "{e}");
    }

    #[test]
    fn each_file_has_its_own_beside_it() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a.cu"), dir.path().join("b.cu"));
        std::fs::write(dir.path().join("a.toml"), VALID).unwrap();
        let p = Params::new(None);
        assert!(p
            .of(&a)
            .unwrap()
            .is_some_and(|f| f.kernel.contains_key("k")));
        assert!(p.of(&b).unwrap().is_none());
        let e = p.required(&b).unwrap_err();
        assert_eq!(e.path, dir.path().join("b.toml"));
        assert!(e.to_string().contains("cannot read parameter file"), "{e}");
        assert_eq!(p.path(&b), dir.path().join("b.toml"));
    }
}
