use super::*;
use crate::Refusal;
use copper::cuda::ast::Stmt;
use copper::cuda::parse::parse_source;
use copper::source::SourceFile;

fn body(src: &str) -> Vec<Stmt> {
    let f = parse_source(SourceFile::new(
        "t.cu",
        format!("__global__ void k(float *a, float *b, int n, int m) {{ {src} }}"),
    ));
    let body = f.kernels().next().expect("parses").body.clone();
    body
}

#[test]
fn equality_modulo_commutativity() {
    let a = body("a[i + 1] = n * m + 2;");
    let b = body("a[1 + i] = 2 + m * n;");
    let c = body("a[1 + i] = 2 - m * n;");
    assert!(equiv_stmt(&a[0], &b[0]));
    assert!(!equiv_stmt(&a[0], &c[0]));
}

#[test]
fn complexity_counts_loops_triple() {
    let s = body("for (int i = 0; i < n; i++) { a[i] = 0; a[i] += 1; } n = 1;");
    assert_eq!(complexity(&s[0]), 6);
    assert_eq!(complexity(&s[1]), 1);
}

#[test]
fn effects_by_name() {
    let s = body("int t = a[n]; b[t] += 1.0f; m++; __syncthreads(); for (int j = 0; j < 2; j++) { if (j) break; }");
    let e = Effects::of(&s);
    assert!(e.array_reads.contains("a") && e.array_writes.contains("b"));
    assert!(e.writes.contains("m") && e.writes.contains("t") && e.declares.contains("t"));
    assert!(e.sync);
    assert!(!e.jumps, "the break stays in its loop");
    assert!(Effects::of(&body("if (n) return;")).jumps);
}

#[test]
fn an_address_of_an_elements_field_is_no_plain_use() {
    let uses = |src: &str| -> Result<usize, Refusal> {
        let f = parse_source(SourceFile::new("t.cu", src));
        let k = f.kernels().next().expect("parses");
        Ok(array_uses(k, "c")?.len())
    };
    let head = "struct C { int n; float w; };\n__global__ void k(C *c) { ";
    assert_eq!(
        uses(&format!("{head}float x = c[0].w; c[1].n = 2; }}")),
        Ok(2)
    );
    assert!(uses(&format!("{head}atomicAdd(&c[0].n, 1); }}")).is_err());
}

#[test]
fn template_arguments_read_as_integers() {
    let f = parse_source(SourceFile::new(
        "t.cu",
        "template <typename T, int A, unsigned B, int C> __global__ void k(T *a) { a[0] = A; }\n\
         void h(float *p) { k<float, 32, 16u, 0x20><<<1, 1>>>(p); }\n",
    ));
    let k = f.kernels().next().expect("the instantiation");
    assert_eq!(template_value(k, "A"), Some(32));
    assert_eq!(template_value(k, "B"), Some(16));
    assert_eq!(template_value(k, "C"), Some(32));
    assert_eq!(
        template_value(k, "T"),
        None,
        "a type parameter has no value"
    );
    assert_eq!(template_value(k, "D"), None);
}
