//! Writing files safely: every file copper writes goes through a temporary
//! file and a rename: a report or a dump through [`write_atomically`], a
//! benchmark program through [`write_new`];
//! `optimize --write` goes through [`replace_if_unchanged`], which first
//! checks that nobody changed the file since copper read it.

use copper::shown::Shown;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use copper::input::{read_input, InputFileError};

use super::leftovers::{self, Registration};

/// Why a file was not replaced.
#[derive(Debug, thiserror::Error)]
pub enum ReplaceError {
    /// The file changed (or disappeared) after copper read it: the user's
    /// edit wins, and the file is left alone.
    #[error("{0}")]
    Changed(String),
    /// Replacing it would do what the user would not (write over a
    /// read-only file, split its hard links): left alone.
    #[error("{0}")]
    Refused(String),
    /// Reading it again failed.
    #[error("{0}")]
    Read(InputFileError),
    /// Writing failed.
    #[error("{0}")]
    Io(std::io::Error),
}

/// Writes `text` to `path` through a fresh temporary file in the same
/// directory and a rename (see [`stage`]). When `path` is a symbolic
/// link, the file it points to is replaced (the link stays); an existing
/// file keeps its permissions and, where allowed, its owner. A device or a
/// named pipe is written to directly.
pub fn write_atomically(path: &Path, text: &str) -> std::io::Result<()> {
    match stage_over(path, text)? {
        Some(staged) => staged.commit(),
        None => Ok(()),
    }
}

/// Stages `text` to replace the file `path` names as [`write_atomically`]
/// does; `None` when `path` is a device or a pipe, written to at once.
fn stage_over(path: &Path, text: &str) -> std::io::Result<Option<Staged>> {
    let target = resolve_target(path)?;
    let old = match std::fs::metadata(&target) {
        Ok(m) if m.is_dir() => {
            return Err(std::io::Error::other("is a directory"));
        }
        // A device or a pipe (`--report /dev/stdout`) cannot be replaced:
        // it is written to as it is, never created or renamed over.
        Ok(m) if !m.is_file() => {
            let mut f = std::fs::OpenOptions::new().write(true).open(&target)?;
            f.write_all(text.as_bytes()).and_then(|()| f.flush())?;
            return Ok(None);
        }
        Ok(m) => Some(m),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e),
    };
    stage(target, text, |file| match &old {
        Some(meta) => keep_owner_and_mode(file, meta),
        None => new_file_mode(file, NEW_FILE),
    })
    .map(Some)
}

/// Writes `text` as the file `path` in a directory copper created or
/// checked, replacing whatever is there (a file, or a link, which is
/// replaced, never written through), with the mode of a new file
/// (`executable`: runnable by whoever may read it).
pub fn write_new(path: &Path, text: &str, executable: bool) -> std::io::Result<()> {
    let mode = if executable { NEW_PROGRAM } else { NEW_FILE };
    stage(path.to_path_buf(), text, |file| new_file_mode(file, mode))?.commit()
}

/// The mode of a new file, before the umask.
const NEW_FILE: u32 = 0o666;
/// The mode of a new program, before the umask.
const NEW_PROGRAM: u32 = 0o777;

/// The new text of a file, in a temporary file beside it, on disk.
struct Staged {
    /// The temporary file.
    tmp: tempfile::NamedTempFile,
    /// The file it is to replace.
    target: PathBuf,
    /// Removes the temporary file if copper is killed first.
    _registration: Registration,
}

/// Writes `text` to a fresh temporary file in `target`'s directory, given
/// its mode by `set_mode` and flushed to disk, for [`Staged::commit`] to
/// rename over `target`. The temporary file gets a random name and is
/// created with `O_CREAT|O_EXCL` (a file or link planted under any name
/// is never opened); dropped uncommitted, it is deleted.
fn stage(
    target: PathBuf,
    text: &str,
    set_mode: impl FnOnce(&File) -> std::io::Result<()>,
) -> std::io::Result<Staged> {
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    let (mut tmp, registration) = leftovers::register(
        || {
            tempfile::Builder::new()
                .prefix(&format!(".{name}."))
                .suffix(".copper.tmp")
                .tempfile_in(dir_of(&target))
        },
        |tmp| tmp.path(),
    )?;
    tmp.write_all(text.as_bytes())?;
    set_mode(tmp.as_file())?;
    tmp.as_file().sync_all()?;
    Ok(Staged {
        tmp,
        target,
        _registration: registration,
    })
}

impl Staged {
    /// Renames the new text over the target: readers see the old file or
    /// the new one, never a part, and whatever was there (a link too) is
    /// replaced.
    fn commit(self) -> std::io::Result<()> {
        self.tmp.persist(&self.target).map_err(|e| e.error)?;
        // The rename itself is durable once the directory is synced; a
        // directory that cannot be opened for that is no reason to fail.
        if let Ok(d) = File::open(dir_of(&self.target)) {
            let _ = d.sync_all();
        }
        Ok(())
    }
}

/// The directory holding `path`.
fn dir_of(path: &Path) -> &Path {
    path.parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// Replaces `path` by `text` as [`write_atomically`] does, but only when
/// its content is still `expected` (what copper read): an edit made in
/// the meantime, or a deleted file, is left as it is. The content is
/// checked again after the new text is on disk, immediately before the
/// rename, so that an edit made while it was being written wins too.
pub fn replace_if_unchanged(path: &Path, expected: &str, text: &str) -> Result<(), ReplaceError> {
    replace_checked(path, expected, text, || {})
}

/// [`replace_if_unchanged`], running `meanwhile` once the new text is
/// staged (a test's late edit).
fn replace_checked(
    path: &Path,
    expected: &str,
    text: &str,
    meanwhile: impl FnOnce(),
) -> Result<(), ReplaceError> {
    refuse_protected(path)?;
    unchanged(path, expected)?;
    let Some(staged) = stage_over(path, text).map_err(ReplaceError::Io)? else {
        return Ok(());
    };
    meanwhile();
    unchanged(path, expected)?;
    staged.commit().map_err(ReplaceError::Io)
}

/// Whether `path` still holds `expected`.
fn unchanged(path: &Path, expected: &str) -> Result<(), ReplaceError> {
    let now = match read_input(path) {
        Ok(bytes) => bytes,
        Err(e) if e.is_not_found() => {
            return Err(ReplaceError::Changed(
                "deleted after copper read it; not re-created".into(),
            ))
        }
        Err(e) => return Err(ReplaceError::Read(e)),
    };
    if now != expected.as_bytes() {
        return Err(ReplaceError::Changed(
            "changed after copper read it; left as it is (run copper again)".into(),
        ));
    }
    Ok(())
}

/// Refuses to replace a file the user could not write, or one with other
/// hard links (a new file renamed over one name would leave the other
/// names with the old text).
fn refuse_protected(path: &Path) -> Result<(), ReplaceError> {
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        // Reading it again says what is wrong.
        Err(_) => return Ok(()),
    };
    if meta.permissions().readonly() || !writable(path) {
        return Err(ReplaceError::Refused(
            "it is read-only; make it writable to let copper rewrite it".into(),
        ));
    }
    let links = hard_links(&meta);
    if links > 1 {
        return Err(ReplaceError::Refused(format!(
            "it has {links} hard links, which replacing it would split; apply the change by hand (--diff)"
        )));
    }
    Ok(())
}

/// Whether the user may write `path` (its mode may allow it and still
/// not for them).
#[cfg(unix)]
fn writable(path: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: a valid C string; access only reads it.
    unsafe { libc::access(c.as_ptr(), libc::W_OK) == 0 }
}

#[cfg(not(unix))]
fn writable(_path: &Path) -> bool {
    true
}

/// How many names the file has.
#[cfg(unix)]
fn hard_links(meta: &std::fs::Metadata) -> u64 {
    use std::os::unix::fs::MetadataExt;
    meta.nlink()
}

#[cfg(not(unix))]
fn hard_links(_meta: &std::fs::Metadata) -> u64 {
    1
}

/// An output that would replace an input of the same run.
#[derive(Debug, thiserror::Error)]
#[error("{}: is an input of this run ({}); copper writes no output over an input", output.shown(), input.shown())]
pub struct OntoInput {
    /// The output, as given.
    pub output: PathBuf,
    /// The input it is (by another name, or through a link, maybe).
    pub input: PathBuf,
}

/// Refuses to write `output` when it is, by any name or link, one of
/// `inputs`; an output that does not exist yet is no input.
pub fn refuse_onto_input<'a>(
    output: &Path,
    inputs: impl IntoIterator<Item = &'a Path>,
) -> Result<(), OntoInput> {
    match inputs.into_iter().find(|i| same_file(output, i)) {
        Some(input) => Err(OntoInput {
            output: output.to_path_buf(),
            input: input.to_path_buf(),
        }),
        None => Ok(()),
    }
}

/// Whether `a` and `b` name one existing file (its device and inode).
#[cfg(unix)]
fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(a), Ok(b)) => (a.dev(), a.ino()) == (b.dev(), b.ino()),
        _ => false,
    }
}

/// Whether `a` and `b` name one existing file (its canonical path).
#[cfg(not(unix))]
fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// The file `path` names, following symbolic links (once, here: the
/// rename then replaces that file, not the link).
fn resolve_target(path: &Path) -> std::io::Result<PathBuf> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => std::fs::canonicalize(path).map_err(|e| {
            std::io::Error::new(
                e.kind(),
                format!("is a symbolic link whose target cannot be resolved: {e}"),
            )
        }),
        _ => Ok(path.to_path_buf()),
    }
}

#[cfg(unix)]
fn keep_owner_and_mode(file: &File, old: &std::fs::Metadata) -> std::io::Result<()> {
    use std::os::unix::fs::MetadataExt;
    use std::os::unix::io::AsRawFd;
    // Changing the owner needs privileges; without them the file is the
    // writer's, as any edit by the writer would leave it.
    // SAFETY: fchown on an open descriptor of ours.
    let _ = unsafe { libc::fchown(file.as_raw_fd(), old.uid(), old.gid()) };
    file.set_permissions(old.permissions())
}

/// A new file gets the mode any new file gets (`mode`, `0666` or `0777`,
/// less the umask), not the temporary file's private `0600`.
#[cfg(unix)]
fn new_file_mode(file: &File, mode: u32) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    // The umask, read without changing it (Linux); else the usual 022.
    let umask = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Umask:"))
                .and_then(|v| u32::from_str_radix(v.trim(), 8).ok())
        })
        .unwrap_or(0o022);
    file.set_permissions(std::fs::Permissions::from_mode(mode & !umask))
}

#[cfg(not(unix))]
fn new_file_mode(_file: &File, _mode: u32) -> std::io::Result<()> {
    Ok(())
}

#[cfg(not(unix))]
fn keep_owner_and_mode(file: &File, old: &std::fs::Metadata) -> std::io::Result<()> {
    file.set_permissions(old.permissions())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh scratch directory, removed when dropped.
    fn scratch() -> tempfile::TempDir {
        tempfile::tempdir().unwrap()
    }

    #[cfg(unix)]
    #[test]
    fn keeps_the_mode_and_leaves_no_temporary() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = scratch();
        let d = tmp.path();
        let f = d.join("k.cu");
        std::fs::write(&f, "old").unwrap();
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o640)).unwrap();
        write_atomically(&f, "new").unwrap();
        assert_eq!(std::fs::read_to_string(&f).unwrap(), "new");
        let mode = std::fs::metadata(&f).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o640);
        assert_eq!(std::fs::read_dir(d).unwrap().count(), 1);
    }

    #[cfg(unix)]
    #[test]
    fn a_link_planted_at_the_old_temporary_name_is_not_followed() {
        let tmp = scratch();
        let d = tmp.path();
        let victim = d.join("victim");
        std::fs::write(&victim, "precious").unwrap();
        // The name the first version used, predictable from the process id.
        let old_tmp = d.join(format!(".k.cu.copper-{}.tmp", std::process::id()));
        std::os::unix::fs::symlink(&victim, &old_tmp).unwrap();
        write_atomically(&d.join("k.cu"), "new").unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        assert_eq!(std::fs::read_to_string(d.join("k.cu")).unwrap(), "new");
    }

    #[cfg(unix)]
    #[test]
    fn a_new_file_is_not_private() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = scratch();
        let d = tmp.path();
        write_atomically(&d.join("report.jsonl"), "{}").unwrap();
        let mode = std::fs::metadata(d.join("report.jsonl"))
            .unwrap()
            .permissions()
            .mode();
        assert_ne!(mode & 0o044, 0, "{mode:o}");
    }

    #[test]
    fn an_edit_made_while_the_new_text_is_written_wins() {
        let tmp = scratch();
        let d = tmp.path();
        let f = d.join("k.cu");
        std::fs::write(&f, "what copper read").unwrap();
        let e = replace_checked(&f, "what copper read", "rewrite", || {
            std::fs::write(&f, "the user's late edit").unwrap()
        })
        .unwrap_err();
        assert!(matches!(e, ReplaceError::Changed(_)), "{e}");
        assert_eq!(std::fs::read_to_string(&f).unwrap(), "the user's late edit");
        assert_eq!(
            std::fs::read_dir(d).unwrap().count(),
            1,
            "no temporary left"
        );
    }

    #[test]
    fn an_edited_or_deleted_file_is_left_alone() {
        let tmp = scratch();
        let d = tmp.path();
        let f = d.join("k.cu");
        std::fs::write(&f, "edited by the user").unwrap();
        let e = replace_if_unchanged(&f, "what copper read", "rewrite").unwrap_err();
        assert!(matches!(e, ReplaceError::Changed(_)), "{e}");
        assert_eq!(std::fs::read_to_string(&f).unwrap(), "edited by the user");
        std::fs::remove_file(&f).unwrap();
        let e = replace_if_unchanged(&f, "what copper read", "rewrite").unwrap_err();
        assert!(matches!(e, ReplaceError::Changed(_)), "{e}");
        assert!(!f.exists());
        std::fs::write(&f, "same").unwrap();
        replace_if_unchanged(&f, "same", "rewrite").unwrap();
        assert_eq!(std::fs::read_to_string(&f).unwrap(), "rewrite");
    }
}
