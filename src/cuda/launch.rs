//! Launch shapes read from `kernel<<<grid, block>>>` sites, evaluated over
//! the host code before them ([`super::host`]), and the launch copper tests
//! the kernel on.

use std::collections::HashMap;

use super::extract::{Extracted, LaunchSite};
use super::host::{HostCode, HostLaunch, StructSizes};
use super::macros::{token_texts, MacroTable};
use super::timeline::Timeline;
use crate::source::Span;

/// A launch site and its shape, when copper could read it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Launch {
    /// Kernel launched.
    pub kernel: String,
    /// Grid size (x, y, z) when the host code determines it.
    pub grid: Option<[u64; 3]>,
    /// Block size (x, y, z) when the host code determines it.
    pub block: Option<[u64; 3]>,
    /// Bytes of dynamic shared memory the launch asks for (its third
    /// `<<<…>>>` argument, 0 without one) when the host code determines
    /// them.
    #[serde(skip)]
    pub shared_bytes: Option<u64>,
    /// Where the launch is in the file.
    #[serde(skip)]
    pub span: Span,
    /// Its line in the file (1-based).
    #[serde(skip)]
    pub line: usize,
    /// Names in a shape that is not literal which look like macros but that
    /// nothing defines (`N` in `<<<N / 256, 256>>>` without `-DN=…`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub undefined: Vec<String>,
    /// The launch copper can test the kernel on, when the host code
    /// determines its shape.
    #[serde(skip)]
    pub test: Option<TestLaunch>,
}

/// Threads of a launch that copper simulates as written; a larger one is
/// scaled down for testing ([`TestLaunch`]).
pub const TEST_THREADS: u64 = 1 << 14;

/// Bytes of one allocation that copper simulates as written; a launch with
/// a larger one is scaled down for testing.
pub const TEST_BYTES: u64 = 1 << 20;

/// Most threads of a launch scaled down for testing.
pub const MAX_TEST_THREADS: u64 = 1 << 16;

/// The launch copper tests a kernel on, from the host code: as written,
/// or with the host inputs passed as arguments cut to test size
/// (everything computed from them follows).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TestLaunch {
    /// The launch as evaluated (grid and block known).
    pub host: HostLaunch,
    /// Host inputs cut: (name, as written, as tested).
    pub cut: Vec<(String, i128, i128)>,
    /// Per argument: the bytes behind a pointer as a product of the
    /// launch's integer arguments, when the host code gives that relation.
    pub bytes_of: Vec<Option<BytesOf>>,
}

/// The bytes of an allocation as `factor · Π args`: `cudaMalloc(&d_a, n *
/// sizeof(float))` with `n` passed as argument 3 is `4 · arg 3`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BytesOf {
    /// The constant factor (bytes per unit).
    pub factor: u64,
    /// Indices of the launch's arguments multiplied (one or two).
    pub args: Vec<usize>,
}

/// Finds, for each pointer argument of `tested`, a product of one or two
/// integer arguments that are host inputs (variables declared with a
/// value that needs no other) which its bytes are a constant multiple of,
/// and keeps it when the relation also holds with those inputs set to two
/// other sets of values (the host code re-evaluated): a relation the host
/// code computes, not a coincidence of one size.
fn bytes_relations(
    host: &HostCode,
    l: &LaunchSite,
    macros: &MacroTable,
    sizes: &StructSizes,
    tested: &HostLaunch,
    overrides: &HashMap<String, i128>,
) -> Vec<Option<BytesOf>> {
    let passed: Vec<(usize, &str)> = tested
        .args
        .iter()
        .enumerate()
        .filter(|(_, a)| tested.inputs.iter().any(|(n, _)| *n == a.text))
        .map(|(i, a)| (i, a.text.as_str()))
        .collect();
    let none = vec![None; tested.args.len()];
    if passed.is_empty() || tested.args.iter().all(|a| a.bytes.is_none()) {
        return none;
    }
    let others: Vec<HostLaunch> = [(5, 1), (11, 3)]
        .iter()
        .map(|&(base, step)| {
            let mut o = overrides.clone();
            for (k, (_, name)) in passed.iter().enumerate() {
                o.insert(name.to_string(), base + step * k as i128);
            }
            host.evaluate(l, macros, sizes, &o)
        })
        .collect();
    let mut products: Vec<Vec<usize>> = passed.iter().map(|&(i, _)| vec![i]).collect();
    for (a, &(i, _)) in passed.iter().enumerate() {
        for &(j, _) in &passed[a..] {
            products.push(vec![i, j]);
        }
    }
    let product = |h: &HostLaunch, p: &[usize]| -> Option<i128> {
        p.iter()
            .try_fold(1i128, |acc, &i| acc.checked_mul(h.args.get(i)?.value?))
    };
    tested
        .args
        .iter()
        .enumerate()
        .map(|(i, arg)| {
            let bytes = i128::from(arg.bytes?);
            products.iter().find_map(|p| {
                let unit = product(tested, p).filter(|&u| u > 0)?;
                let factor = (bytes % unit == 0).then_some(bytes / unit)?;
                let holds = others.iter().all(|h| {
                    let b = h.args.get(i).and_then(|a| a.bytes).map(i128::from);
                    b.is_some() && product(h, p).and_then(|u| u.checked_mul(factor)) == b
                });
                holds.then(|| BytesOf {
                    factor: factor as u64,
                    args: p.clone(),
                })
            })
        })
        .collect()
}

/// Resolves every launch site of a file, each with the macros in force
/// where it is.
pub fn resolve_launches(
    src: &str,
    ex: &Extracted,
    timeline: &Timeline,
    sizes: &StructSizes,
) -> Vec<Launch> {
    let host = HostCode::new(src);
    let newlines: Vec<usize> = src.match_indices('\n').map(|(i, _)| i).collect();
    ex.launches
        .iter()
        .map(|l| {
            let macros = &timeline.at(l.span.start);
            let written = host.evaluate(l, macros, sizes, &HashMap::new());
            let (grid, block, shared_bytes) = (written.grid, written.block, written.shared_bytes);
            let mut undefined = Vec::new();
            for (dims, text) in [(grid, &l.grid), (block, &l.block)] {
                if dims.is_none() {
                    undefined.extend(undefined_names(&host, text, macros, l.span.start));
                }
            }
            undefined.dedup();
            let test = test_launch(&host, l, macros, sizes, written);
            Launch {
                kernel: l.kernel.clone(),
                grid,
                block,
                shared_bytes,
                span: l.span,
                line: newlines.partition_point(|&n| n < l.span.start) + 1,
                undefined,
                test,
            }
        })
        .collect()
}

fn threads(h: &HostLaunch) -> Option<u64> {
    let g: u64 = h.grid?.iter().product();
    let b: u64 = h.block?.iter().product();
    g.checked_mul(b)
}

/// The launch as written when small enough ([`TEST_THREADS`],
/// [`TEST_BYTES`]), else scaled down: each host input passed as an
/// argument cut to two and a half blocks' worth, or, when that is still
/// too large (sizes multiplied together), to half a block, then to 17.
fn test_launch(
    host: &HostCode,
    l: &LaunchSite,
    macros: &MacroTable,
    sizes: &StructSizes,
    written: HostLaunch,
) -> Option<TestLaunch> {
    let n = threads(&written)?;
    let bytes = written
        .args
        .iter()
        .filter_map(|a| a.bytes)
        .max()
        .unwrap_or(0);
    if n <= TEST_THREADS && bytes <= TEST_BYTES {
        let bytes_of = bytes_relations(host, l, macros, sizes, &written, &HashMap::new());
        return Some(TestLaunch {
            host: written,
            cut: Vec::new(),
            bytes_of,
        });
    }
    let bx = written.block?[0] as i128;
    for target in [2 * bx + bx / 2 + 1, bx / 2 + 3, 17] {
        let cut: Vec<(String, i128, i128)> = written
            .inputs
            .iter()
            .filter(|(name, v)| *v > target && written.args.iter().any(|a| a.text == *name))
            .map(|(name, v)| (name.clone(), *v, target))
            .collect();
        if cut.is_empty() {
            return None;
        }
        let overrides: HashMap<String, i128> =
            cut.iter().map(|(n, _, t)| (n.clone(), *t)).collect();
        let small = host.evaluate(l, macros, sizes, &overrides);
        if threads(&small)? <= MAX_TEST_THREADS {
            let bytes_of = bytes_relations(host, l, macros, sizes, &small, &overrides);
            return Some(TestLaunch {
                host: small,
                cut,
                bytes_of,
            });
        }
    }
    None
}

/// The names in a shape argument that look like macros (no lowercase) but
/// are neither macros nor declared before the launch.
fn undefined_names(host: &HostCode, arg: &str, macros: &MacroTable, before: usize) -> Vec<String> {
    let mut out: Vec<String> = expand_all(&token_texts(arg), macros)
        .unwrap_or_default()
        .into_iter()
        .filter(|t| super::include::looks_like_macro(t) && macros.get(t).is_none())
        .collect();
    out.dedup();
    // A name declared before the launch (`const int N = …;`) is a variable.
    out.retain(|name| !host.declared_before(name, before));
    out
}

pub(crate) fn expand_all(toks: &[String], macros: &MacroTable) -> Option<Vec<String>> {
    let mut out = Vec::new();
    for t in toks {
        match macros.get(t) {
            Some(def) if def.params.is_none() => out.extend(macros.expand(def, &[]).ok()?),
            _ => out.push(t.clone()),
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cuda::extract::extract;

    type Dims = Option<[u64; 3]>;

    fn shapes(src: &str) -> Vec<(Dims, Dims)> {
        let ex = extract(src);
        let m = Timeline::from(MacroTable::new(&ex.macros));
        resolve_launches(src, &ex, &m, &StructSizes::new())
            .into_iter()
            .map(|l| (l.grid, l.block))
            .collect()
    }

    #[test]
    fn allocation_bytes_as_products_of_arguments() {
        let src = "int main() {\n int rows = 300;\n int cols = 700;\n int n = 64;\n float *a, *b, *c;\n\
                   cudaMalloc(&a, rows * cols * sizeof(float));\n cudaMalloc(&b, 2 * n * sizeof(double));\n\
                   cudaMalloc(&c, 1000);\n k<<<4, 128>>>(a, b, c, rows, cols, n);\n}";
        let ex = extract(src);
        let l = resolve_launches(
            src,
            &ex,
            &MacroTable::new(&ex.macros).into(),
            &StructSizes::new(),
        );
        let test = l[0].test.as_ref().expect("a test launch");
        let of = |factor, args: &[usize]| {
            Some(BytesOf {
                factor,
                args: args.to_vec(),
            })
        };
        assert_eq!(
            test.bytes_of,
            [of(4, &[3, 4]), of(16, &[5]), None, None, None, None]
        );
        // Cut to test size, the relation still holds (rows and cols cut).
        let big = src.replace("int rows = 300", "int rows = 3000");
        let ex = extract(&big);
        let l = resolve_launches(
            &big,
            &ex,
            &MacroTable::new(&ex.macros).into(),
            &StructSizes::new(),
        );
        let test = l[0].test.as_ref().expect("a test launch");
        assert!(!test.cut.is_empty());
        assert_eq!(test.bytes_of[0], of(4, &[3, 4]));
    }

    #[test]
    fn undefined_macros_in_shapes_are_named() {
        let src = "#define B 64\nint main() {\n const int M = 8;\n k<<<N / B, B>>>(x);\n k<<<M, B>>>(x);\n}";
        let ex = extract(src);
        let l = resolve_launches(
            src,
            &ex,
            &MacroTable::new(&ex.macros).into(),
            &StructSizes::new(),
        );
        assert_eq!(l[0].undefined, ["N"]);
        assert!(l[1].undefined.is_empty());
    }

    #[test]
    fn literal_macro_and_variable_shapes() {
        let src = "#define B 128\nint main() {\n dim3 block(16, 16);\n dim3 grid = dim3(4, 2);\n int n = 64;\n\
                   k<<<(1024 + B - 1) / B, B>>>(x);\n k<<<grid, block>>>(x);\n k<<<n, 32, 0, s>>>(x);\n\
                   k<<<f(n), 32>>>(x);\n}";
        assert_eq!(
            shapes(src),
            [
                (Some([8, 1, 1]), Some([128, 1, 1])),
                (Some([4, 2, 1]), Some([16, 16, 1])),
                (Some([64, 1, 1]), Some([32, 1, 1])),
                (None, Some([32, 1, 1])),
            ]
        );
    }
}
