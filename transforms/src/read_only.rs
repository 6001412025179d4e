//! The read-only data path: pointer parameters the kernel never
//! writes through are declared `const T *__restrict__`, so the compiler may
//! load them through the read-only data cache (`ld.global.nc`).
//!
//! This is a suggestion, not a transform: the cost model has no read-only
//! cache, so the bounds cannot rank it, and `__restrict__` is a promise
//! about the callers that the kernel alone cannot prove. It is made only
//! with evidence that no written pointer argument aliases a read-only one,
//! and the evidence is printed as the assumption:
//! - every launch of the kernel in the file passes, for each pointer
//!   parameter, a host variable that a `cudaMalloc` in straight-line code
//!   before it allocated, and the read-only ones are other variables than
//!   the written ones; or
//! - without launches in the file, the parameter file gives each pointer
//!   parameter its own array (the simulator allocates each separately).
//!
//! A parameter qualifies when it is a single-level pointer used only as
//! `p[index]`, never assigned through, and not already
//! `const … __restrict__`.

use copper::cuda::ast::{ExprKind, Function, Init, StmtKind};
use copper::cuda::parse::ParsedFile;
use copper::sim::params::LaunchSpec;

use crate::ast_util::{self, Effects};
use crate::Refusal;

/// A suggested signature change, with the assumption it rests on.
#[derive(Clone, Debug)]
pub struct Suggestion {
    /// The kernel with the new qualifiers.
    pub function: Function,
    /// What changed and what it assumes.
    pub description: String,
}

/// The read-only data path suggestion for kernel `f` of `file`, whose
/// parameter file launch (if any) is `spec`; `Err` says why there is none
/// when some parameter would qualify, `Ok(None)` when none does.
pub fn suggest(
    file: &ParsedFile,
    f: &Function,
    spec: Option<&LaunchSpec>,
) -> Result<Option<Suggestion>, Refusal> {
    let read_only = read_only_params(f);
    if read_only.is_empty() {
        return Ok(None);
    }
    let pointers: Vec<usize> = (0..f.params.len())
        .filter(|&i| f.params[i].ty.is_pointer())
        .collect();
    let written: Vec<usize> = pointers
        .iter()
        .copied()
        .filter(|i| !read_only.contains(i) && !f.params[*i].ty.is_const)
        .collect();
    let evidence = no_alias(file, f, &read_only, &written, spec)?;
    let mut g = f.clone();
    let mut names = Vec::new();
    for &i in &read_only {
        let p = &mut g.params[i];
        p.ty.is_const = true;
        if let Some(q) = p.ty.pointers.first_mut() {
            q.is_restrict = true;
        }
        names.push(format!("`{}`", p.name));
    }
    let decls: Vec<String> = read_only
        .iter()
        .map(|&i| {
            let p = &g.params[i];
            format!("`const {} *__restrict__ {}`", p.ty.base_spelling(), p.name)
        })
        .collect();
    Ok(Some(Suggestion {
        function: g,
        description: format!(
            "declare {}: the kernel only reads {}, so its loads may use the read-only data cache; not applied: the cost model has no such cache, so the bounds do not change. Assumes no written pointer argument aliases {}: {evidence}",
            decls.join(", "),
            names.join(", "),
            if names.len() == 1 { "it" } else { "them" },
        ),
    }))
}

/// The pointer parameters (by position) never written through that are
/// not already `const … __restrict__`.
fn read_only_params(f: &Function) -> Vec<usize> {
    let effects = Effects::of(&f.body);
    f.params
        .iter()
        .enumerate()
        .filter(|(_, p)| p.ty.pointers.len() == 1 && p.dims.is_empty() && !p.ty.is_ref)
        .filter(|(_, p)| !(p.ty.is_const && p.ty.pointers[0].is_restrict))
        .filter(|(_, p)| {
            !effects.array_writes.contains(&p.name)
                && !effects.writes.contains(&p.name)
                && !bound_to_mutable_reference(f, &p.name)
                && ast_util::array_uses(f, &p.name).is_ok()
        })
        .map(|(i, _)| i)
        .collect()
}

/// Whether a reference that may write (`float &sum = out[row];`, not
/// `const`) is bound to an element of array `name`: writes through it do
/// not name the array, and `const` on the array would not compile.
fn bound_to_mutable_reference(f: &Function, name: &str) -> bool {
    let mut found = false;
    for s in &f.body {
        ast_util::visit_stmts(s, &mut |x| {
            let StmtKind::Decl(ds) = &x.kind else {
                return;
            };
            for d in ds.iter().filter(|d| d.ty.is_ref && !d.ty.is_const) {
                if let Some(Init::Expr(e)) = &d.init {
                    ast_util::visit_expr(e, &mut |y| {
                        found |= matches!(&y.kind, ExprKind::Ident(n) if n == name);
                    });
                }
            }
        });
    }
    found
}

/// Why the read-only parameters (by position) cannot alias the written
/// ones (a parameter in both lists is not compared with itself), from the
/// file's launches or the parameter file; `Err` says why copper cannot
/// tell, or where they alias.
pub(crate) fn no_alias(
    file: &ParsedFile,
    f: &Function,
    read_only: &[usize],
    written: &[usize],
    spec: Option<&LaunchSpec>,
) -> Result<String, Refusal> {
    let mut shown = Vec::new();
    let mut unread = Vec::new();
    for l in file.launches.iter().filter(|l| l.kernel == f.name) {
        let args = l
            .test
            .as_ref()
            .map(|t| &t.host.args)
            .filter(|a| a.len() == f.params.len());
        let allocated =
            |i: &usize| args.is_some_and(|a| a[*i].bytes.is_some() && is_identifier(&a[*i].text));
        let Some(args) = args.filter(|_| read_only.iter().chain(written).all(allocated)) else {
            unread.push(l.line.to_string());
            continue;
        };
        for &r in read_only {
            if let Some(&w) = written
                .iter()
                .find(|&&w| w != r && args[w].text == args[r].text)
            {
                return Err(Refusal::Aliased {
                    line: l.line,
                    arg: args[r].text.clone(),
                    first: f.params[r].name.clone(),
                    second: f.params[w].name.clone(),
                });
            }
        }
        shown.push(l.line.to_string());
    }
    let plural = |v: &[String]| if v.len() == 1 { "" } else { "s" };
    if unread.is_empty() && !shown.is_empty() {
        return Ok(format!(
            "the launch{} at line{} {} pass{} separate `cudaMalloc` allocations (copper assumes nothing reassigns them in between)",
            if shown.len() == 1 { "" } else { "es" },
            plural(&shown),
            shown.join(", "),
            if shown.len() == 1 { "es" } else { "" },
        ));
    }
    let unread_text = if unread.is_empty() {
        "the file does not launch it".to_string()
    } else {
        format!(
            "copper cannot tell which allocations the launch{} at line{} {} pass{}",
            if unread.len() == 1 { "" } else { "es" },
            plural(&unread),
            unread.join(", "),
            if unread.len() == 1 { "es" } else { "" },
        )
    };
    let Some(spec) = spec else {
        return Err(format!("{unread_text}, and there is no parameter file").into());
    };
    if let Some(&i) = read_only
        .iter()
        .chain(written)
        .find(|&&i| !spec.arrays.contains_key(&f.params[i].name))
    {
        return Err(format!(
            "{unread_text}, and the parameter file gives `{}` no array",
            f.params[i].name
        )
        .into());
    }
    Ok(format!(
        "{unread_text}; the parameter file gives each pointer its own array, and every caller must do the same"
    ))
}

/// Whether `s` is a C identifier.
fn is_identifier(s: &str) -> bool {
    let s = s.trim();
    s.chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The suggestion before and after, and the kernels that get none with
/// the exact reason ([`crate::fixture`]).
#[cfg(test)]
mod tests {
    use super::suggest;
    use crate::fixture::{check, check_not_applicable, try_propose};
    use crate::{Candidate, Context, Proposals, Transform};

    /// The suggestion as a transform, so that the fixtures (and their
    /// differential check) serve it too.
    struct Suggest;

    impl Transform for Suggest {
        fn name(&self) -> &'static str {
            "read-only suggestion"
        }

        fn propose(&self, cx: &Context) -> Proposals {
            match suggest(cx.file, cx.function, cx.params) {
                Ok(Some(s)) => Proposals {
                    candidates: vec![Candidate::new(self.name(), s.function, s.description)],
                    skipped: Vec::new(),
                },
                Ok(None) => Proposals::default(),
                Err(why) => Proposals::refused(cx.function.meta.span, why),
            }
        }
    }

    #[test]
    fn separate_allocations_make_an_input_const_restrict() {
        let desc = check(
            &Suggest,
            [64, 1, 1],
            r#"__global__ void scale(float *in, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = 2.0f * in[i];
    }
}

int main() {
    int n = 1024;
    float *a, *b;
    cudaMalloc(&a, n * sizeof(float));
    cudaMalloc(&b, n * sizeof(float));
    scale<<<(n + 63) / 64, 64>>>(a, b, n);
    return 0;
}
"#,
            r#"__global__ void scale(const float *__restrict__ in, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = 2.0f * in[i];
    }
}

int main() {
    int n = 1024;
    float *a, *b;
    cudaMalloc(&a, n * sizeof(float));
    cudaMalloc(&b, n * sizeof(float));
    scale<<<(n + 63) / 64, 64>>>(a, b, n);
    return 0;
}
"#,
        );
        assert_eq!(desc, "declare `const float *__restrict__ in`: the kernel only reads `in`, so its loads may use the read-only data cache; not applied: the cost model has no such cache, so the bounds do not change. Assumes no written pointer argument aliases it: the launch at line 13 passes separate `cudaMalloc` allocations (copper assumes nothing reassigns them in between)");
    }

    #[test]
    fn an_element_type_written_with_a_macro_is_declared_with_the_macro() {
        let src = |qualified: &str| {
            format!(
                r#"#define REAL float

__global__ void scale({qualified}in, REAL *out, int n) {{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {{
        out[i] = 2.0f * in[i];
    }}
}}

int main() {{
    int n = 1024;
    REAL *a, *b;
    cudaMalloc(&a, n * sizeof(REAL));
    cudaMalloc(&b, n * sizeof(REAL));
    scale<<<(n + 63) / 64, 64>>>(a, b, n);
    return 0;
}}
"#
            )
        };
        let desc = check(
            &Suggest,
            [64, 1, 1],
            &src("REAL *"),
            &src("const REAL *__restrict__ "),
        );
        assert!(
            desc.starts_with("declare `const REAL *__restrict__ in`: "),
            "{desc}"
        );
    }

    #[test]
    fn a_size_t_axpy_gets_a_const_restrict_x() {
        let desc = check(
            &Suggest,
            [128, 1, 1],
            r#"#include <cstddef>
#define ALPHA 2.5f

__global__ void axpy(size_t n, float *x, float *y) {
    size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) y[i] = ALPHA * x[i] + y[i];
}

int main() {
    size_t n = 1 << 12;
    float *d_x, *d_y;
    cudaMalloc(&d_x, n * sizeof(float));
    cudaMalloc(&d_y, n * sizeof(float));
    axpy<<<n / 128, 128>>>(n, d_x, d_y);
    cudaFree(d_x);
    cudaFree(d_y);
    return 0;
}
"#,
            r#"#include <cstddef>
#define ALPHA 2.5f

__global__ void axpy(size_t n, const float *__restrict__ x, float *y) {
    size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) y[i] = ALPHA * x[i] + y[i];
}

int main() {
    size_t n = 1 << 12;
    float *d_x, *d_y;
    cudaMalloc(&d_x, n * sizeof(float));
    cudaMalloc(&d_y, n * sizeof(float));
    axpy<<<n / 128, 128>>>(n, d_x, d_y);
    cudaFree(d_x);
    cudaFree(d_y);
    return 0;
}
"#,
        );
        assert_eq!(desc, "declare `const float *__restrict__ x`: the kernel only reads `x`, so its loads may use the read-only data cache; not applied: the cost model has no such cache, so the bounds do not change. Assumes no written pointer argument aliases it: the launch at line 14 passes separate `cudaMalloc` allocations (copper assumes nothing reassigns them in between)");
    }

    #[test]
    fn one_allocation_passed_twice_is_no_evidence() {
        check_not_applicable(
            &Suggest,
            [64, 1, 1],
            r#"__global__ void shift(float *in, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i + 1 < n) {
        out[i] = in[i + 1];
    }
}

int main() {
    int n = 1024;
    float *a;
    cudaMalloc(&a, n * sizeof(float));
    shift<<<n / 64, 64>>>(a, a, n);
    return 0;
}
"#,
            "at line 12, `a` is passed as both `in` and `out`",
        );
    }

    #[test]
    fn a_kernel_the_file_does_not_launch_has_no_evidence() {
        check_not_applicable(
            &Suggest,
            [64, 1, 1],
            r#"__global__ void square(const int *in, int *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i] * in[i];
}
"#,
            "the file does not launch it, and there is no parameter file",
        );
    }

    #[test]
    fn an_atomic_on_a_member_element_writes_the_array() {
        let p = try_propose(
            &Suggest,
            r#"struct Node { int count[2]; float key; };

__global__ void tally(Node *nodes, int *keys, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&nodes[keys[i] % 4].count[i & 1], 1);
}

int main() {
    int n = 256;
    Node *d_nodes;
    int *d_keys;
    cudaMalloc(&d_nodes, 48); // 4 nodes of 12 bytes
    cudaMalloc(&d_keys, n * sizeof(int));
    tally<<<n / 64, 64>>>(d_nodes, d_keys, n);
    return 0;
}
"#,
            [64, 1, 1],
        )
        .unwrap();
        let [c] = &p.candidates[..] else {
            panic!("{:?}", p.skipped)
        };
        assert!(
            c.description.starts_with(
                "declare `const int *__restrict__ keys`: the kernel only reads `keys`,"
            ),
            "{}",
            c.description
        );
    }
}
