//! Generated row kernels: each thread reduces one row of a matrix, the
//! shape one warp per row matches.

use super::Rng;

/// Kernel `seed` whose threads each reduce one row of a row-major matrix
/// (`row * m + i`, `m` a macro or a parameter): an `int`, `unsigned` or
/// `long long` sum, a sum of squares of `float`s (positive terms, so
/// within the reassociation tolerance), an `fmaxf` or integer `max`/`min`
/// starting at the row's first element; under `if (row < rows)`, after
/// `if (row >= rows) return;`, or unguarded; the result stored as it is
/// or scaled.
pub(super) fn generated_rows(seed: u64) -> String {
    let mut r = Rng(seed.wrapping_mul(0x3c6e_f372_fe94_f82b) ^ 0x7011);
    let (define, m, mparam) = r.pick(
        &[
            &("#define M 40\n", "M", ""),
            &("#define M 7\n", "M", ""),
            &("", "m", ", int m"),
        ][..],
    );
    let row = r.pick(&[
        "blockIdx.x * blockDim.x + threadIdx.x",
        "threadIdx.x + blockIdx.x * blockDim.x",
    ]);
    let (ty, acc_ty, init, start, fold, store) = match r.below(5) {
        0 => (
            "int",
            "int",
            "0",
            "0",
            "acc += a[row * {m} + i] * x[i];",
            "acc",
        ),
        1 => (
            "unsigned",
            "unsigned",
            "1",
            "0",
            "acc = acc + a[row * {m} + i];",
            "acc * 2",
        ),
        2 => (
            "int",
            "long long",
            "0",
            "0",
            "acc += (long long)a[row * {m} + i];",
            "(int)acc",
        ),
        3 => (
            "float",
            "float",
            "a[row * {m}]",
            "1",
            "acc = fmaxf(acc, a[row * {m} + i]);",
            "acc",
        ),
        _ => (
            "float",
            "float",
            "0.0f",
            "0",
            "float v = a[row * {m} + i];\n        acc += v * v;",
            "acc",
        ),
    };
    let fold = fold.replace("{m}", m);
    let init = init.replace("{m}", m);
    let (ty, init, start, fold) = if ty == "int" && acc_ty == "int" && r.below(2) == 0 {
        (
            "int",
            format!("a[row * {m}]"),
            "1",
            format!("acc = {}(acc, a[row * {m} + i]);", r.pick(&["max", "min"])),
        )
    } else {
        (ty, init, start, fold)
    };
    let (open, close) = r.pick(
        &[
            &("", ""),
            &("if (row < rows) {", "}"),
            &("if (row >= rows) return;", ""),
        ][..],
    );
    format!(
        "{define}__global__ void k(const {ty} *a, const {ty} *x, {ty} *y, int rows{mparam}) {{
    int row = {row};
    {open}
    {acc_ty} acc = {init};
    for (int i = {start}; i < {m}; i++) {{
        {fold}
    }}
    y[row] = {store};
    {close}
}}
"
    )
}
