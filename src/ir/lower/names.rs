//! Looking names up without and with their namespaces: the device
//! function a call names.

use crate::cuda::parse::{ParsedFile, ParsedFunction};

/// Why a call names no single device function.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CalleeError {
    /// No function of that name.
    #[error("call to unknown function `{0}`")]
    Unknown(String),
    /// Functions of that name in several namespaces.
    #[error("call to `{name}` is ambiguous: functions of that name are declared in several namespaces; qualify it (`N::{short}`)")]
    Ambiguous {
        /// The name called.
        name: String,
        /// Its last component.
        short: String,
    },
}

/// `N::f` → `f` (copper looks names up without their namespace).
pub(super) fn unqualified(name: &str) -> &str {
    name.rsplit("::").next().unwrap_or(name)
}

/// The name to look a builtin up by for a call written `name`: `::abs`
/// and `std::min` name the global and standard functions CUDA provides
/// (`abs`, `min`), unless the file declares a function the qualified name
/// denotes.
pub(super) fn builtin_name<'n>(file: &ParsedFile, name: &'n str) -> &'n str {
    let short = name
        .strip_prefix("::")
        .or_else(|| name.strip_prefix("std::"))
        .filter(|s| !s.contains("::"));
    match short {
        Some(s) if matches!(callee(file, name), Err(CalleeError::Unknown(_))) => s,
        _ => name,
    }
}

/// The device function a call names (`f`, `N::f`): a qualified name must
/// match the namespace it was declared in; an unqualified one must be
/// unambiguous.
pub(super) fn callee<'f>(
    file: &'f ParsedFile,
    name: &str,
) -> std::result::Result<&'f ParsedFunction, CalleeError> {
    let short = unqualified(name);
    let qual = name[..name.len() - short.len()].trim_end_matches("::");
    let qual = qual.trim_start_matches("::");
    let found: Vec<_> = file
        .functions
        .iter()
        .filter(|f| f.item.name == short)
        // A member function is named with its struct (`Vec3::dot`).
        .filter(|f| f.item.owner.is_none() || name != short)
        .filter(|f| {
            name == short
                || f.item.namespace == qual
                || f.item.namespace.ends_with(&format!("::{qual}"))
        })
        .collect();
    match found.as_slice() {
        [] => Err(CalleeError::Unknown(name.to_string())),
        [f] => Ok(f),
        [f, ..] if found.iter().all(|g| g.item.namespace == f.item.namespace) => Ok(f),
        _ => Err(CalleeError::Ambiguous {
            name: name.to_string(),
            short: short.to_string(),
        }),
    }
}
