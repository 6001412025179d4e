use super::*;
use crate::cuda::ast::*;

fn parse(src: &str) -> ParsedFile {
    parse_source(SourceFile::new("t.cu", src))
}

#[test]
fn syntax_errors_name_tokens_not_grammar_classes() {
    let f = parse("__global__ void k(int *a) {\n  int 3x = 1;\n}\n");
    let d = &f.all_diagnostics()[0];
    assert_eq!(d.code, "syntax");
    assert_eq!(
        d.message,
        "syntax error at `3x`: expected a name, `(`, `*`, `;`"
    );
    let f = parse("__global__ void k(int *a) {\n  int x = a[0] +;\n}\n");
    let m = &f.all_diagnostics()[0].message;
    assert!(
        m.starts_with("syntax error at `;`: expected a name, "),
        "{m}"
    );
    assert!(!m.contains('['), "{m}");
}

#[test]
fn parses_a_kernel_with_host_code_around() {
    let f = parse(
        "#include <cstdio>\n#define BS 256\ntypedef unsigned int u32;\n__constant__ float coef[4];\n\
         __global__ void k(float* __restrict__ a, const u32 n) {\n\
           __shared__ float s[BS];\n  u32 i = blockIdx.x * blockDim.x + threadIdx.x;\n\
           #pragma unroll\n  for (int j = 0; j < 4; ++j) s[j] = coef[j];\n\
           if (i < n) a[i] = i % 2 ? s[0] : -1.5f;\n}\n\
         int main() { k<<<4, BS>>>(0, 3); }\n",
    );
    assert!(f.all_diagnostics().is_empty(), "{:?}", f.all_diagnostics());
    let k = f.kernels().next().unwrap();
    assert_eq!(k.name, "k");
    assert_eq!(k.params.len(), 2);
    assert!(k.params[0].ty.pointers[0].is_restrict);
    assert_eq!(k.params[1].ty.base, BaseType::Named("u32".into()));
    let StmtKind::Decl(d) = &k.body[0].kind else {
        panic!()
    };
    assert_eq!(d[0].space, Space::Shared);
    assert_eq!(
        d[0].dims[0].as_ref().unwrap().meta.macro_text.as_deref(),
        Some("BS")
    );
    assert!(matches!(&k.body[2].kind, StmtKind::Pragma(p) if p == "unroll"));
    assert_eq!(f.globals[0].space, Space::Constant);
    assert_eq!(f.launches[0].block, Some([256, 1, 1]));
    let (line, col) = f.source.line_col(k.body[1].meta.span.start);
    assert_eq!((line, col), (7, 3));
}

#[test]
fn one_bad_kernel_does_not_stop_the_others() {
    let f = parse(
        "__global__ void bad(int* a) { a[0] = ; }\n\
         template <typename... T> __global__ void t(int* a, T... x) { a[0] = 0; }\n\
         __global__ void good(int* a) { a[0] = 1; }\n",
    );
    let results: Vec<_> = f.functions.iter().map(|p| p.result.is_ok()).collect();
    assert_eq!(results, [false, false, true]);
    let d0 = f.functions[0].result.as_ref().unwrap_err();
    assert_eq!((d0.line, d0.col, d0.code), (1, 38, "syntax"));
    let d1 = f.functions[1].result.as_ref().unwrap_err();
    assert!(d1.message.contains("template"), "{}", d1.message);
    assert_eq!((d1.line, d1.col), (2, 1));
}

#[test]
fn a_type_written_with_a_macro_prints_back_as_the_macro() {
    let f = parse(
        "#define DATA_TYPE float\n#define UINT unsigned int\n#define PTR float *\n#define N 3.5f\n\
         __global__ void k(DATA_TYPE *a, const UINT n, PTR b) {\n\
           DATA_TYPE t = (DATA_TYPE)n; a[0] = t / (N) + b[0];\n}\n",
    );
    assert!(f.all_diagnostics().is_empty(), "{:?}", f.all_diagnostics());
    let k = f.kernels().next().unwrap();
    let text = crate::cuda::print::function(k);
    assert!(
        text.contains("DATA_TYPE *a, const UINT n, float *b)"),
        "{text}"
    );
    assert!(text.contains("DATA_TYPE t = (DATA_TYPE)n;"), "{text}");
    assert!(text.contains("t / (N)") || text.contains("t / N"), "{text}");
    // The same type as `float`, and printed as `float` once the base changes.
    assert_eq!(k.params[0].ty.base_only(), Type::scalar(BaseType::Float));
    let mut int_ty = k.params[0].ty.base_only();
    int_ty.base = BaseType::Int;
    assert_eq!(crate::cuda::print::type_name(&int_ty), "int");
}
