//! The file's integer constants as the transforms read sizes:
//! `constexpr int TILE = 32;` and `const int ROWS = TILE / 4;` at file
//! scope, so that `__shared__ float t[TILE][TILE + 1]` has a size as a
//! `#define`d one does.

use std::collections::HashMap;

use copper::cuda::ast::{BaseType, Expr, ExprKind, Init, Space};
use copper::cuda::parse::ParsedFile;

use super::shape::value_with;

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
            let integer = matches!(
                g.ty.base,
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
            let constant = (g.ty.is_const || g.is_constexpr)
                && g.space == Space::Local
                && g.dims.is_empty()
                && !g.ty.is_pointer()
                && integer;
            let Some(Init::Expr(e)) = g.init.as_ref().filter(|_| constant) else {
                continue;
            };
            let v = value_with(e, &|x| lookup(&values, x));
            if let Some(v) = v.filter(|&v| fits(v, &g.ty.base)) {
                values.insert(g.name.clone(), v);
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
}
