//! Object-like macros that stand for CUDA qualifiers (`#define GLOBAL
//! __global__`, `#define HD __host__ __device__`): extraction reads such a
//! name as the qualifiers it expands to, so a kernel declared through one is
//! found.

use std::collections::HashMap;

use super::macros::MacroTable;

/// The qualifiers that decide what a declaration is.
const DECISIVE: &[&str] = &[
    "__global__",
    "__device__",
    "__host__",
    "__constant__",
    "__managed__",
    "__shared__",
];

/// Macro names and the decisive qualifiers each expands to.
#[derive(Clone, Debug, Default)]
pub struct QualifierMacros {
    by_name: HashMap<String, Vec<&'static str>>,
}

impl QualifierMacros {
    /// The object-like macros of `macros` whose expansion holds a
    /// qualifier of [`DECISIVE`] (macros that do not expand are left out).
    pub fn from_table(macros: &MacroTable) -> QualifierMacros {
        let by_name = macros
            .visible()
            .filter(|d| d.params.is_none())
            .filter_map(|d| {
                let expanded = macros.expand_tokens(std::slice::from_ref(&d.name)).ok()?;
                let quals: Vec<&'static str> = DECISIVE
                    .iter()
                    .copied()
                    .filter(|q| expanded.iter().any(|t| t == q))
                    .collect();
                (!quals.is_empty()).then(|| (d.name.clone(), quals))
            })
            .collect();
        QualifierMacros { by_name }
    }

    /// The qualifiers the word `word` stands for: itself when it is one,
    /// those of its expansion when it is such a macro, else none.
    pub fn of<'a>(&'a self, word: &'a str) -> &'a [&'static str] {
        if let Some(q) = DECISIVE.iter().position(|q| *q == word) {
            return &DECISIVE[q..=q];
        }
        self.by_name.get(word).map_or(&[], Vec::as_slice)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cuda::extract::extract;

    #[test]
    fn names_expanding_to_qualifiers() {
        let defs = "#define GLOBAL __global__\n#define HD __host__ __device__\n#define KERNEL GLOBAL\n#define N 4\n#define F(x) __device__ x\n";
        let q = QualifierMacros::from_table(&MacroTable::new(&extract(defs).macros));
        assert_eq!(q.of("GLOBAL"), ["__global__"]);
        assert_eq!(q.of("KERNEL"), ["__global__"]);
        assert_eq!(q.of("HD"), ["__device__", "__host__"]);
        assert!(q.of("N").is_empty() && q.of("F").is_empty());
        assert_eq!(q.of("__global__"), ["__global__"]);
    }
}
