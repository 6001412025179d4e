//! Temporary files that must not outlive copper. A file copper writes is
//! staged as a temporary file beside it (`.X.cu.*.copper.tmp`) and
//! renamed over it; killed in between (SIGTERM, SIGINT, SIGHUP, or
//! SIGXFSZ when a write passes the file-size limit), copper would leave
//! the temporary file behind. Each one is [`register`]ed while it exists,
//! and [`install`] makes those signals remove every registered file and
//! then end copper as the signal would have (so the parent sees the
//! conventional status, 128 + the signal's number in a shell).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI32, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

/// The signals that remove the registered files before ending copper.
const SIGNALS: [libc::c_int; 4] = [libc::SIGTERM, libc::SIGINT, libc::SIGHUP, libc::SIGXFSZ];

/// The temporary files that exist now, by registration number.
static PENDING: Mutex<Vec<(u64, PathBuf)>> = Mutex::new(Vec::new());

/// The next registration number.
static NEXT: AtomicU64 = AtomicU64::new(0);

/// The write end of the pipe the signal handler writes the signal's
/// number to (-1 before [`install`]).
static SIGNAL_PIPE: AtomicI32 = AtomicI32::new(-1);

/// A registered temporary file: unregistered when dropped (after it was
/// renamed or deleted).
#[derive(Debug)]
pub struct Registration(u64);

impl Drop for Registration {
    fn drop(&mut self) {
        pending().retain(|(n, _)| *n != self.0);
    }
}

/// The list of registered files (a panic elsewhere does not lose it).
fn pending() -> MutexGuard<'static, Vec<(u64, PathBuf)>> {
    PENDING.lock().unwrap_or_else(|e| e.into_inner())
}

/// Creates a temporary file with `create` and registers the path
/// `path_of` gives it. No signal can end copper between the creation and
/// the registration: the list stays locked in between, and the signal's
/// clean-up waits for it.
pub fn register<T>(
    create: impl FnOnce() -> std::io::Result<T>,
    path_of: impl FnOnce(&T) -> &Path,
) -> std::io::Result<(T, Registration)> {
    let mut list = pending();
    let made = create()?;
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    list.push((n, path_of(&made).to_path_buf()));
    Ok((made, Registration(n)))
}

/// Makes SIGTERM, SIGINT, SIGHUP and SIGXFSZ remove the registered files
/// and then end copper by the same signal. A signal the parent set to be
/// ignored (`nohup`) stays ignored. Call it once, first thing.
pub fn install() {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: `fds` has room for the two descriptors pipe writes.
    if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
        return;
    }
    SIGNAL_PIPE.store(fds[1], Ordering::SeqCst);
    let reader = fds[0];
    if std::thread::Builder::new()
        .name("copper-signals".into())
        .spawn(move || clean_up_on_signal(reader))
        .is_err()
    {
        return;
    }
    for sig in SIGNALS {
        // SAFETY: querying and setting a disposition; the handler only
        // calls write(2), which is async-signal-safe.
        unsafe {
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(sig, std::ptr::null(), &mut old) != 0
                || old.sa_sigaction == libc::SIG_IGN
            {
                continue;
            }
            let mut new: libc::sigaction = std::mem::zeroed();
            new.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
            new.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut new.sa_mask);
            libc::sigaction(sig, &new, std::ptr::null_mut());
        }
    }
}

/// The signal handler: passes the signal's number to the clean-up thread.
extern "C" fn on_signal(sig: libc::c_int) {
    let byte = sig as u8;
    // SAFETY: write(2) is async-signal-safe; the buffer is one byte.
    unsafe {
        libc::write(
            SIGNAL_PIPE.load(Ordering::SeqCst),
            (&byte as *const u8).cast(),
            1,
        );
    }
}

/// Waits for a signal's number on `reader`, removes every registered
/// file, and ends copper by that signal.
fn clean_up_on_signal(reader: libc::c_int) {
    let mut byte = 0u8;
    loop {
        // SAFETY: reading one byte into `byte`.
        let n = unsafe { libc::read(reader, (&mut byte as *mut u8).cast(), 1) };
        if n == 1 {
            break;
        }
        if n == 0 || std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            return;
        }
    }
    let sig = libc::c_int::from(byte);
    // Held until the end: no temporary file is created after this.
    let list = pending();
    for (_, path) in list.iter() {
        let _ = std::fs::remove_file(path);
    }
    // SAFETY: restoring the default disposition and raising the signal
    // ends the process as the signal would have.
    unsafe {
        libc::signal(sig, libc::SIG_DFL);
        libc::raise(sig);
    }
    std::process::exit(128 + sig);
}
