//! Reading an input file: the one way copper reads a source, a header, a
//! parameter file, a configuration or an ignore file. A checkout may hold
//! anything under those names: a named pipe (opening it waits for a
//! writer), a link to `/dev/zero` (it never ends), a file of `/proc`
//! whose size says 0 but whose reads go on for gigabytes. So the file is
//! opened without blocking, must be a regular file (checked on the opened
//! handle, not on the name, which may change in between), and is read up
//! to a limit whatever its size claims.
//!
//! Standard input (`-` on the command line) is read once, whole, and then
//! stands for the file named by `--stdin-filename` ([`provide_stdin`]):
//! reading that path gives the text read, headers next to it are found as
//! for a file of that name.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The text read from standard input and the path it stands for.
static STDIN: OnceLock<(PathBuf, Vec<u8>)> = OnceLock::new();

/// Largest input file copper reads (bytes).
pub const MAX_INPUT_BYTES: u64 = 16 * 1024 * 1024;

/// Why an input file is not read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum InputFileError {
    /// The file cannot be opened or read.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// A directory.
    #[error("is a directory, expected a file")]
    Directory,
    /// A FIFO, socket or device.
    #[error("not a regular file (a FIFO, socket or device)")]
    NotRegular,
    /// Reading it would wait (a special file with nothing to give yet).
    #[error("reading it would wait (a special file, not a regular one)")]
    WouldBlock,
    /// More than [`MAX_INPUT_BYTES`].
    #[error("file is over {MAX_INPUT_BYTES} bytes, the most copper reads")]
    TooLarge,
}

impl InputFileError {
    /// Whether the file does not exist.
    pub fn is_not_found(&self) -> bool {
        matches!(self, InputFileError::Io(e) if e.kind() == std::io::ErrorKind::NotFound)
    }
}

/// Reads standard input (at most [`MAX_INPUT_BYTES`]) and makes `name`
/// stand for it from now on; once per process (a second call is refused
/// with the name already given).
pub fn provide_stdin(name: &Path) -> Result<(), InputFileError> {
    let mut bytes = Vec::new();
    std::io::stdin()
        .lock()
        .take(MAX_INPUT_BYTES + 1)
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_INPUT_BYTES {
        return Err(InputFileError::TooLarge);
    }
    STDIN
        .set((name.to_path_buf(), bytes))
        .map_err(|_| InputFileError::Io(std::io::Error::other("standard input was already read")))
}

/// Whether `path` stands for standard input ([`provide_stdin`]).
pub fn is_stdin(path: &Path) -> bool {
    STDIN.get().is_some_and(|(name, _)| name == path)
}

/// The bytes of the regular file `path` (links followed), at most
/// [`MAX_INPUT_BYTES`] of them; for the name standing for standard input,
/// the text read from it.
pub fn read_input(path: &Path) -> Result<Vec<u8>, InputFileError> {
    if let Some((_, bytes)) = STDIN.get().filter(|(name, _)| name == path) {
        return Ok(bytes.clone());
    }
    let file = open(path)?;
    let meta = file.metadata()?;
    if meta.is_dir() {
        return Err(InputFileError::Directory);
    }
    if !meta.is_file() {
        return Err(InputFileError::NotRegular);
    }
    // The size claimed is checked first, and the size read in any case.
    if meta.len() > MAX_INPUT_BYTES {
        return Err(InputFileError::TooLarge);
    }
    let mut bytes = Vec::new();
    file.take(MAX_INPUT_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::WouldBlock => InputFileError::WouldBlock,
            _ => InputFileError::Io(e),
        })?;
    if bytes.len() as u64 > MAX_INPUT_BYTES {
        return Err(InputFileError::TooLarge);
    }
    Ok(bytes)
}

/// The text of the regular file `path`, as [`read_input`] reads it; bytes
/// that are not UTF-8 are an error.
pub fn read_input_text(path: &Path) -> Result<String, InputFileError> {
    String::from_utf8(read_input(path)?).map_err(|e| {
        InputFileError::Io(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("not UTF-8 text ({})", e.utf8_error()),
        ))
    })
}

/// Opens `path` for reading without waiting: a named pipe opens at once
/// (and is then refused), and reading a device that has nothing to give
/// fails instead of waiting. Regular files read as usual.
#[cfg(unix)]
fn open(path: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
}

#[cfg(not(unix))]
fn open(path: &Path) -> std::io::Result<File> {
    File::open(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_regular_file() {
        let scratch = tempfile::tempdir().unwrap();
        let dir = scratch.path();
        let f = dir.join("a.toml");
        std::fs::write(&f, "x = 1\n").unwrap();
        assert_eq!(read_input_text(&f).unwrap(), "x = 1\n");
        assert!(matches!(read_input(dir), Err(InputFileError::Directory)));
        assert!(read_input(&dir.join("missing")).unwrap_err().is_not_found());
        std::fs::write(&f, b"\xff").unwrap();
        assert!(read_input_text(&f)
            .unwrap_err()
            .to_string()
            .contains("UTF-8"));
    }

    #[cfg(unix)]
    #[test]
    fn refuses_devices_and_endless_files() {
        assert!(matches!(
            read_input(Path::new("/dev/zero")),
            Err(InputFileError::NotRegular)
        ));
        // Its size says 0; its reads go on for gigabytes (or fail).
        let pagemap = Path::new("/proc/self/pagemap");
        if pagemap.exists() {
            assert!(read_input(pagemap).is_err());
        }
    }
}
