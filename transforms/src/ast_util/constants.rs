//! The file's integer constants as the transforms read sizes:
//! `constexpr int TILE = 32;` and `const int ROWS = TILE / 4;` at file
//! scope, so that `__shared__ float t[TILE][TILE + 1]` has a size as a
//! `#define`d one does.

use std::collections::HashMap;

use copper::cuda::ast::{BaseType, Expr, ExprKind, Function, Init, Space, StmtKind, VarDecl};
use copper::cuda::parse::ParsedFile;

use super::shape::value_with;
use copper::cuda::visit::visit_stmts;

/// The values of a file's `const`/`constexpr` integer scalars at file
/// scope whose initializers are constant and not negative.
#[derive(Clone, Debug, Default)]
pub struct FileConstants(HashMap<String, u64>);

impl FileConstants {
    /// The constants of `file`, evaluated once each in file order: an
    /// initializer reads only the constants declared before it, as in
    /// C++. The first declaration of a name decides it.
    pub fn of(file: &ParsedFile) -> FileConstants {
        let mut values = HashMap::new();
        let mut seen = std::collections::HashSet::new();
        for g in &file.globals {
            if !seen.insert(g.name.as_str()) {
                continue;
            }
            if let Some(v) = constant_value(g, &values) {
                values.insert(g.name.clone(), v);
            }
        }
        FileConstants(values)
    }

    /// These constants and the kernel `f`'s own: the `const`/`constexpr`
    /// integer scalars its body declares at the top level (`const int
    /// x_len = 262;`, as copper's own rewrites write them), each the only
    /// declaration of its name in `f`, so no inner one shadows it.
    pub fn with_locals(&self, f: &Function) -> FileConstants {
        let mut declared: HashMap<&str, usize> = HashMap::new();
        for s in &f.body {
            visit_stmts(s, &mut |x| {
                if let StmtKind::Decl(ds) = &x.kind {
                    for d in ds {
                        *declared.entry(d.name.as_str()).or_default() += 1;
                    }
                }
            });
        }
        let mut values = self.0.clone();
        for s in &f.body {
            let StmtKind::Decl(ds) = &s.kind else {
                continue;
            };
            for d in ds {
                if declared.get(d.name.as_str()) != Some(&1) {
                    continue;
                }
                match constant_value(d, &values) {
                    Some(v) => values.insert(d.name.clone(), v),
                    None => values.remove(&d.name),
                };
            }
        }
        FileConstants(values)
    }

    /// The value of an integer expression of literals, these constants,
    /// `+ - * / << >>` and casts.
    pub fn value(&self, e: &Expr) -> Option<u64> {
        value_with(e, &|x| lookup(&self.0, x))
    }
}

/// The value of `d` when it declares a `const`/`constexpr` integer
/// scalar whose initializer is constant (reading `values`), not negative
/// and of its type.
fn constant_value(d: &VarDecl, values: &HashMap<String, u64>) -> Option<u64> {
    let integer = matches!(
        d.ty.base,
        BaseType::Char
            | BaseType::SChar
            | BaseType::UChar
            | BaseType::Short
            | BaseType::UShort
            | BaseType::Int
            | BaseType::UInt
            | BaseType::Long
            | BaseType::ULong
            | BaseType::LongLong
            | BaseType::ULongLong
    );
    let constant = (d.ty.is_const || d.is_constexpr)
        && d.space == Space::Local
        && d.dims.is_empty()
        && !d.ty.is_pointer()
        && integer;
    let Some(Init::Expr(e)) = d.init.as_ref().filter(|_| constant) else {
        return None;
    };
    value_with(e, &|x| lookup(values, x)).filter(|&v| fits(v, &d.ty.base))
}

/// The value of the constant `x` names, when it names one.
fn lookup(values: &HashMap<String, u64>, x: &Expr) -> Option<u64> {
    match &x.kind {
        ExprKind::Ident(n) => values.get(n).copied(),
        _ => None,
    }
}

/// Whether `v` is a value of the type `base` (a constant that wrapped in
/// its type is not read).
fn fits(v: u64, base: &BaseType) -> bool {
    let max = match base {
        BaseType::Char | BaseType::SChar => i8::MAX as u64,
        BaseType::UChar => u8::MAX as u64,
        BaseType::Short => i16::MAX as u64,
        BaseType::UShort => u16::MAX as u64,
        BaseType::Int => i32::MAX as u64,
        BaseType::UInt => u32::MAX as u64,
        BaseType::Long | BaseType::LongLong => i64::MAX as u64,
        _ => u64::MAX,
    };
    v <= max
}

#[cfg(test)]
mod tests {
    use super::*;
    use copper::cuda::parse::parse_source;
    use copper::source::SourceFile;

    #[test]
    fn constants_read_the_ones_before_them() {
        let f = parse_source(SourceFile::new(
            "t.cu",
            "constexpr int TILE = 32;\nconst int ROWS = TILE / 4;\nconst int LATER = EARLY;\nconst int EARLY = 2;\nconst short BIG = 70000;\n\
             __global__ void k(float *x) { __shared__ float t[TILE][ROWS]; t[0][0] = 1; x[0] = t[0][0]; }\n",
        ));
        let c = FileConstants::of(&f);
        let k = f.function("k").expect("parsed");
        let copper::cuda::ast::StmtKind::Decl(ds) = &k.body[0].kind else {
            panic!("a declaration");
        };
        let dims: Vec<Option<u64>> = ds[0]
            .dims
            .iter()
            .map(|d| d.as_ref().and_then(|e| c.value(e)))
            .collect();
        assert_eq!(dims, [Some(32), Some(8)]);
        assert_eq!(c.0.get("LATER"), None, "EARLY is declared after it");
        assert_eq!(c.0.get("EARLY"), Some(&2));
        assert_eq!(c.0.get("BIG"), None, "70000 is no `short`");
    }

    #[test]
    fn a_kernel_s_own_constants_are_read_unless_shadowed() {
        let f = parse_source(SourceFile::new(
            "t.cu",
            "const int W = 4;\n\
             __global__ void k(float *x) { const int len = W * 64; int W2 = 3; const int twice = 7; \
             __shared__ float s[len]; if (x[0] > 0) { const int twice = 9; x[1] = twice; } s[0] = 1; x[0] = s[0] + W2 + twice; }\n",
        ));
        let k = f.function("k").expect("parsed");
        let c = FileConstants::of(&f).with_locals(k);
        assert_eq!(c.0.get("len"), Some(&256));
        assert_eq!(c.0.get("W2"), None, "not `const`");
        assert_eq!(c.0.get("twice"), None, "declared twice in the kernel");
    }
}
