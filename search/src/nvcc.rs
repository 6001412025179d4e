//! The user's CUDA compiler as a check on candidates (`copper optimize
//! --nvcc`): a rewrite is suggested only when the file with it compiles.
//! Each distinct text is compiled once (results are cached), in a private
//! temporary directory, with the original file's directory on the include
//! path so that its headers are found.

use copper::shown::Shown;
use std::collections::hash_map::DefaultHasher;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long one compilation may take before it counts as failed.
const TIME_LIMIT: Duration = Duration::from_secs(120);

/// Why the compiler named by `--nvcc` (or `copper.toml`) cannot be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum NvccError {
    /// It does not run.
    #[error("--nvcc {}: cannot run it: {source}{}", program.shown(), install_hint(source))]
    CannotRun {
        /// The program.
        program: PathBuf,
        /// Why it does not run.
        source: std::io::Error,
    },
    /// It runs, but `--version` does not name NVIDIA's compiler.
    #[error("--nvcc {}: not NVIDIA's CUDA compiler (`{} --version` does not say \"Cuda compilation tools\")", program.shown(), program.shown())]
    NotNvcc {
        /// The program.
        program: PathBuf,
    },
}

/// Why a file does not compile, or could not be compiled.
#[derive(Clone, Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CompileError {
    /// No temporary directory for the compilation.
    #[error("nvcc: cannot create a temporary directory: {0}")]
    TempDir(#[source] Arc<std::io::Error>),
    /// The file cannot be written there.
    #[error("nvcc: cannot write {}: {source}", path.shown())]
    Write {
        /// The temporary file.
        path: PathBuf,
        /// The I/O error.
        source: Arc<std::io::Error>,
    },
    /// The compiler does not start.
    #[error("nvcc: cannot run {}: {source}", program.shown())]
    Run {
        /// The compiler.
        program: PathBuf,
        /// The I/O error.
        source: Arc<std::io::Error>,
    },
    /// It did not finish within [`TIME_LIMIT`].
    #[error("nvcc did not finish within {} s", TIME_LIMIT.as_secs())]
    TimedOut,
    /// Waiting for it failed.
    #[error("nvcc: {0}")]
    Wait(#[source] Arc<std::io::Error>),
    /// It rejects the file: its first error line.
    #[error("{0}")]
    Rejected(String),
}

/// Where to get nvcc, for a program that was not found.
fn install_hint(e: &std::io::Error) -> &'static str {
    if e.kind() == std::io::ErrorKind::NotFound {
        " (give its path, or install it: scripts/install-nvcc.sh)"
    } else {
        ""
    }
}

/// A CUDA compiler, checked to be one when it was named.
#[derive(Debug)]
pub struct Nvcc {
    program: PathBuf,
    flags: Vec<String>,
    results: Mutex<HashMap<u64, Result<(), CompileError>>>,
}

impl Nvcc {
    /// The compiler `program` (a path, or a name looked up on `PATH`),
    /// called with `flags` before the file. Fails when `program` does not
    /// run or does not say it is NVIDIA's compiler when asked `--version`.
    pub fn new(program: &Path, flags: Vec<String>) -> Result<Nvcc, NvccError> {
        let out = Command::new(program)
            .arg("--version")
            .stdin(Stdio::null())
            .output()
            .map_err(|source| NvccError::CannotRun {
                program: program.to_path_buf(),
                source,
            })?;
        let said = String::from_utf8_lossy(&out.stdout);
        if !out.status.success() || !said.contains("Cuda compilation tools") {
            return Err(NvccError::NotNvcc {
                program: program.to_path_buf(),
            });
        }
        Ok(Nvcc {
            program: program.to_path_buf(),
            flags,
            results: Mutex::new(HashMap::new()),
        })
    }

    /// Compiles `text` (a whole `.cu` file that lives at `origin`) to an
    /// object file that is thrown away. `Err` holds nvcc's first error.
    pub fn compile(&self, text: &str, origin: &Path) -> Result<(), CompileError> {
        let mut h = DefaultHasher::new();
        text.hash(&mut h);
        origin.hash(&mut h);
        let key = h.finish();
        if let Some(r) = self.results.lock().ok().and_then(|m| m.get(&key).cloned()) {
            return r;
        }
        let result = self.run(text, origin);
        if let Ok(mut m) = self.results.lock() {
            m.insert(key, result.clone());
        }
        result
    }

    fn run(&self, text: &str, origin: &Path) -> Result<(), CompileError> {
        let dir = tempfile::Builder::new()
            .prefix("copper-nvcc-")
            .tempdir()
            .map_err(|e| CompileError::TempDir(Arc::new(e)))?;
        let name = origin
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .filter(|n| n.ends_with(".cu"))
            .unwrap_or_else(|| "candidate.cu".into());
        let source = dir.path().join(&name);
        std::fs::write(&source, text).map_err(|e| CompileError::Write {
            path: source.clone(),
            source: Arc::new(e),
        })?;
        let include = origin
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let mut child = Command::new(&self.program)
            .args(&self.flags)
            .arg("-I")
            .arg(include)
            .arg("-c")
            .arg("-o")
            .arg(dir.path().join("candidate.o"))
            .arg(&source)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| CompileError::Run {
                program: self.program.clone(),
                source: Arc::new(e),
            })?;
        // Read stderr while nvcc runs, so that a long error list cannot
        // fill the pipe and stall it.
        let reader = child.stderr.take().map(|mut e| {
            std::thread::spawn(move || {
                let mut text = String::new();
                let _ = std::io::Read::read_to_string(&mut e, &mut text);
                text
            })
        });
        let start = Instant::now();
        let status = loop {
            match child.try_wait() {
                Ok(Some(s)) => break s,
                Ok(None) if start.elapsed() > TIME_LIMIT => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(CompileError::TimedOut);
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(20)),
                Err(e) => return Err(CompileError::Wait(Arc::new(e))),
            }
        };
        let stderr = reader.and_then(|r| r.join().ok()).unwrap_or_default();
        if status.success() {
            return Ok(());
        }
        Err(CompileError::Rejected(first_error(&stderr, &source, &name)))
    }
}

/// nvcc's first error line, with the temporary file's path replaced by
/// the file's name.
fn first_error(stderr: &str, source: &Path, name: &str) -> String {
    let shown = source.to_string_lossy();
    let line = stderr
        .lines()
        .find(|l| l.contains("error"))
        .or_else(|| stderr.lines().find(|l| !l.trim().is_empty()))
        .unwrap_or("it exited with an error and printed nothing");
    line.replace(shown.as_ref(), name).trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_error_names_the_file_not_the_temporary() {
        let src = Path::new("/tmp/copper-nvcc-1-0-5/k.cu");
        let stderr = "/tmp/copper-nvcc-1-0-5/k.cu(3): warning: unused\n\
                      /tmp/copper-nvcc-1-0-5/k.cu(4): error: identifier \"x\" is undefined\n\
                      1 error detected\n";
        assert_eq!(
            first_error(stderr, src, "k.cu"),
            "k.cu(4): error: identifier \"x\" is undefined"
        );
        assert_eq!(
            first_error("", src, "k.cu"),
            "it exited with an error and printed nothing"
        );
    }

    #[test]
    fn a_program_that_is_not_nvcc_is_refused() {
        let e = Nvcc::new(Path::new("true"), vec![]).unwrap_err();
        assert!(matches!(e, NvccError::NotNvcc { .. }), "{e}");
        assert!(e.to_string().contains("not NVIDIA's CUDA compiler"), "{e}");
        let e = Nvcc::new(Path::new("/nonexistent/nvcc"), vec![]).unwrap_err();
        assert!(matches!(e, NvccError::CannotRun { .. }), "{e}");
        assert!(e.to_string().contains("cannot run it"), "{e}");
        assert!(e.to_string().contains("scripts/install-nvcc.sh"), "{e}");
    }
}
