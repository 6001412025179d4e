//! Object-like macros that stand for CUDA qualifiers (`#define GLOBAL
//! __global__`, `#define HD __host__ __device__`): extraction reads such a
//! name as the qualifiers it expands to, so a kernel declared through one is
//! found. A function-like macro whose expansion holds a qualifier and ends
//! with one of its parameters after a type (`#define KERNEL(n) __global__
//! void n`) declares the function its argument names: `KERNEL(foo)(float
//! *a) {…}`.

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
    /// Function-like ones: which parameter names the declared function.
    name_param: HashMap<String, usize>,
}

impl QualifierMacros {
    /// The object-like macros of `macros` whose expansion holds a
    /// qualifier of [`DECISIVE`] (macros that do not expand are left out).
    pub fn from_table(macros: &MacroTable) -> QualifierMacros {
        let mut name_param = HashMap::new();
        let by_name = macros
            .visible()
            .filter_map(|d| {
                let expanded = match &d.params {
                    None => macros.expand_tokens(std::slice::from_ref(&d.name)).ok()?,
                    Some(params) => {
                        // A type between the qualifiers and the name
                        // (`__device__ x` alone may wrap a type, not name).
                        let [.., ty, last] = d.body.as_slice() else {
                            return None;
                        };
                        if DECISIVE.contains(&ty.as_str()) {
                            return None;
                        }
                        let named = params.iter().position(|p| p == last)?;
                        name_param.insert(d.name.clone(), named);
                        macros.expand_tokens(&d.body).ok()?
                    }
                };
                let quals: Vec<&'static str> = DECISIVE
                    .iter()
                    .copied()
                    .filter(|q| expanded.iter().any(|t| t == q))
                    .collect();
                (!quals.is_empty()).then(|| (d.name.clone(), quals))
            })
            .collect::<HashMap<_, _>>();
        name_param.retain(|n, _| by_name.contains_key(n));
        QualifierMacros {
            by_name,
            name_param,
        }
    }

    /// For a function-like qualifier macro (`KERNEL(n)`), the index of the
    /// parameter naming the function it declares.
    pub fn name_param(&self, word: &str) -> Option<usize> {
        self.name_param.get(word).copied()
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
        assert_eq!(q.name_param("F"), None);
    }

    #[test]
    fn a_function_like_macro_declaring_a_kernel() {
        let defs = "#define KERNEL(n) __global__ void n\n#define DEV(t, n) __device__ t n\n";
        let q = QualifierMacros::from_table(&MacroTable::new(&extract(defs).macros));
        assert_eq!(q.of("KERNEL"), ["__global__"]);
        assert_eq!(q.name_param("KERNEL"), Some(0));
        assert_eq!(q.name_param("DEV"), Some(1));
    }
}
