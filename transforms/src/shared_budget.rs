//! The shared memory a kernel takes before a rewrite adds static
//! `__shared__` arrays: its own static arrays and the dynamic shared
//! memory each launch of it in the file asks for (`k<<<g, b, bytes>>>`,
//! given to a kernel whether or not it declares an `extern __shared__`
//! array). A block gets at most [`MAX_STATIC_SHARED_BYTES`] without an
//! opt-in, static and dynamic together: a rewrite whose new arrays do not
//! fit beside both makes the launch fail. A kernel with an
//! `extern __shared__` array and no launch copper can read takes what
//! its unseen callers give it, so nothing is known to fit beside it.
//!
//! Every transform that adds or grows a static `__shared__` array asks
//! here: the halo tile, the cooperative load, the tree copy, the tiled
//! multiply, the staged transpose, the padding and both global-to-shared
//! moves.

use copper::launch::MAX_STATIC_SHARED_BYTES;

use copper::cuda::ast::{Function, Space, Stmt, StmtKind};

use crate::ast_util::{self, FileConstants};
use crate::Context;

/// Shared memory the kernel takes before a rewrite, or why it is not
/// known (then nothing is known to fit beside it).
pub(crate) struct Budget(Result<InUse, String>);

/// Shared memory the kernel is known to take before a rewrite.
struct InUse {
    /// Its bytes: the static arrays and the largest dynamic size.
    bytes: u64,
    /// What they are, for a refusal (`the kernel's 1024 bytes of shared
    /// memory and the 4096 bytes of dynamic shared memory the launch at
    /// line 30 asks for`).
    what: String,
}

impl Budget {
    /// Whether the shared memory in use is known (else every addition is
    /// refused, for that reason).
    pub fn is_known(&self) -> bool {
        self.0.is_ok()
    }

    /// Why `bytes` more of static shared memory (`new`, what they are:
    /// `a tile of 264 elements`) may not be added; `None` when they fit
    /// beside what is in use.
    pub fn refusal(&self, new: &str, bytes: u64) -> Option<String> {
        let used = match &self.0 {
            Ok(used) => used,
            Err(why) => return Some(why.clone()),
        };
        let fits = used
            .bytes
            .checked_add(bytes)
            .is_some_and(|total| total <= MAX_STATIC_SHARED_BYTES);
        (!fits).then(|| {
            format!(
                "{new} takes {bytes} bytes, and with {} more than {MAX_STATIC_SHARED_BYTES}",
                used.what
            )
        })
    }
}

/// The shared memory `cx.function` takes before a rewrite adds `new`
/// (`the tile`); its refusals say why when its static arrays have sizes
/// that are not constants, a launch of it in the file asks for a dynamic
/// size copper cannot read, or an `extern __shared__` array is sized by
/// no launch copper sees.
pub(crate) fn in_use(cx: &Context, new: &str) -> Budget {
    Budget(known_in_use(cx, new))
}

/// [`in_use`], as a result.
fn known_in_use(cx: &Context, new: &str) -> Result<InUse, String> {
    let own = static_shared_bytes(cx.function, &FileConstants::of(cx.file)).ok_or_else(|| {
        format!("the kernel's shared arrays have sizes copper cannot read as constants, so {new} may not fit")
    })?;
    let mut what = format!("the kernel's {own} bytes of shared memory");
    let (dynamic, at) = dynamic_bytes(cx)?;
    if at.is_empty() && declares_shared(&cx.function.body, true) {
        return Err(format!(
            "the kernel's `extern __shared__` array takes what each launch gives it and no launch in the file says how much, so {new} may not fit beside it"
        ));
    }
    if dynamic > 0 {
        what.push_str(&format!(
            " and the {dynamic} bytes of dynamic shared memory {at} asks for"
        ));
    }
    Ok(InUse {
        bytes: own.saturating_add(dynamic),
        what,
    })
}

/// The largest dynamic shared-memory size a launch of `cx.function` asks
/// for (the file's launches and the parameter file's), with which launch
/// (empty when there is none); the reason when one is not known.
fn dynamic_bytes(cx: &Context) -> Result<(u64, String), String> {
    let name = &cx.function.name;
    let mut most = (0, String::new());
    for l in cx.host.launches.iter().filter(|l| l.kernel == *name) {
        let at = format!("the launch at line {}", l.line);
        match l.shared_bytes {
            Some(b) if b > most.0 || most.1.is_empty() => most = (b, at),
            Some(_) => {}
            None => {
                return Err(format!(
                    "{at} asks for a dynamic shared-memory size copper cannot read, so a static array may not fit beside it"
                ))
            }
        }
    }
    if let Some(p) = cx
        .params
        .filter(|p| p.shared_bytes > most.0 || most.1.is_empty())
    {
        most = (p.shared_bytes, "the parameter file's launch".to_string());
    }
    Ok(most)
}

/// Whether `stmts` declare a `__shared__` array anywhere: an
/// `extern` one, or a static one.
pub(crate) fn declares_shared(stmts: &[Stmt], is_extern: bool) -> bool {
    let mut found = false;
    for s in stmts {
        ast_util::visit_stmts(s, &mut |x| {
            if let StmtKind::Decl(ds) = &x.kind {
                found |= ds
                    .iter()
                    .any(|d| d.space == Space::Shared && d.is_extern == is_extern);
            }
        });
    }
    found
}

/// Bytes of the static `__shared__` arrays the kernel declares, sizes
/// read through the file's `constants`; `None` when one has a size that
/// is not a constant.
pub fn static_shared_bytes(f: &Function, constants: &FileConstants) -> Option<u64> {
    let constants = constants.with_locals(f);
    let mut total = Some(0u64);
    for s in &f.body {
        ast_util::visit_stmts(s, &mut |x| {
            let StmtKind::Decl(ds) = &x.kind else {
                return;
            };
            for d in ds
                .iter()
                .filter(|d| d.space == Space::Shared && !d.is_extern)
            {
                let mut n = d.ty.base.size_bytes().map(u64::from);
                for dim in &d.dims {
                    let v = dim.as_ref().and_then(|e| constants.value(e));
                    n = n.zip(v).and_then(|(n, v)| n.checked_mul(v));
                }
                total = total.zip(n).and_then(|(t, n)| t.checked_add(n));
            }
        });
    }
    total
}
