//! A rewrite written for one block shape, made correct for every other:
//! the rewritten body runs under a test of the block shape it was written
//! for, and any other block runs the original body. copper guards a
//! rewrite this way when it only assumed the block (the file launches
//! nothing and no parameter file or `--block` gives one): a guess may
//! steer the search, but the code it writes must stay right for the
//! launch the user really makes.
//!
//! The test reads only `blockDim`, so every thread of a block takes the
//! same side, and barriers inside either side stay block-wide; on the
//! analyzed block the bound engine decides the test and analyzes the fast
//! side alone.

use copper::cuda::ast::{BinOp, ExprKind, Function};

use crate::ast_util::{bin, expr, ident, if_else, int};

/// `fast` with its body under `if (blockDim.x == X && blockDim.y == Y &&
/// blockDim.z == Z)`, and `original`'s body as the other side.
pub fn guarded(original: &Function, fast: &Function, block: [u64; 3]) -> Function {
    let test = ["x", "y", "z"]
        .iter()
        .zip(block)
        .map(|(d, n)| {
            let dim = expr(ExprKind::Member {
                base: Box::new(ident("blockDim")),
                field: d.to_string(),
                arrow: false,
            });
            bin(BinOp::Eq, dim, int(n))
        })
        .reduce(|a, b| bin(BinOp::And, a, b))
        .expect("three dimensions");
    Function {
        body: vec![if_else(test, fast.body.clone(), original.body.clone())],
        ..fast.clone()
    }
}

/// The sentence that says what a guarded rewrite assumes.
pub fn describe(block: [u64; 3]) -> String {
    format!(
        "the rewritten code runs only on blocks of {}×{}×{}, the block copper assumed; any other block runs the original code",
        block[0], block[1], block[2]
    )
}

#[cfg(test)]
mod tests {
    use super::guarded;
    use copper::cuda::parse::parse_source;
    use copper::cuda::print;
    use copper::source::SourceFile;

    /// The fast body runs under the block test, the original body in the
    /// other branch, and the result prints as CUDA that parses back.
    #[test]
    fn the_original_body_runs_on_every_other_block() {
        let src = "__global__ void k(float *a) { a[threadIdx.x] = 1.0f; }\n__global__ void f(float *a) { a[threadIdx.x + threadIdx.y * 16] = 1.0f; }\n";
        let file = parse_source(SourceFile::new("k.cu", src));
        let (k, f) = (file.function("k").unwrap(), file.function("f").unwrap());
        let g = guarded(
            k,
            &copper::cuda::ast::Function {
                name: "k".into(),
                ..f.clone()
            },
            [16, 16, 1],
        );
        let text = print::function(&g);
        assert!(
            text.contains("if (blockDim.x == 16 && blockDim.y == 16 && blockDim.z == 1) {"),
            "{text}"
        );
        let then_at = text.find("threadIdx.y * 16").unwrap();
        let else_at = text.find("} else {").unwrap();
        assert!(then_at < else_at, "{text}");
        assert!(text[else_at..].contains("a[threadIdx.x] = 1.0f;"), "{text}");
        let back = parse_source(SourceFile::new("g.cu", &text));
        assert!(back.function("k").is_some(), "{text}");
    }
}
