use super::*;

/// `using X = T;` is a type declaration naming `X`, read as `typedef
/// T X;`; other `using`s are not.
#[test]
fn alias_declarations_name_their_type() {
    let ex =
        extract("using real_t = float;\nusing namespace std;\nusing index_t = unsigned int;\n");
    let names: Vec<&str> = ex
        .types
        .iter()
        .flat_map(|t| &t.names)
        .map(String::as_str)
        .collect();
    assert_eq!(names, ["real_t", "index_t"]);
    let text = "using index_t = unsigned int ;";
    let (name, ty) = using_alias(text).unwrap();
    assert_eq!((name, &text[ty]), ("index_t", " unsigned int"));
    assert_eq!(using_alias("typedef float real_t;"), None);
}

const FILE: &str = r#"
#include <iostream>
#include <vector>
#define N 1024
#define IDX(r, c) ((r) * N + (c))
typedef struct { float x, y; } Point;
typedef unsigned int u32;
typedef std::vector<int> IntVec;
__constant__ float coef[16];
__device__ int counter;
namespace detail {
__device__ __forceinline__ float sq(float x) { return x * x; }
}
class Host {
  __device__ int member() { return 1; }
  int f() { return 2; }
};
template <typename T> void host_t(T t) { std::cout << t; }
template <typename T> __global__ void tk(T* a) { a[0] = 0; }
__global__ void __launch_bounds__(256) k(float* a, int n) {
  if (threadIdx.x < n) { a[IDX(0, threadIdx.x)] = sq(coef[0]); }
}
__host__ __device__ int both(int x) { return x; }
__global__ void decl_only(int);
int main() {
  std::vector<float> v(N);
  k<<<dim3(4, 1), 256>>>(nullptr, 3);
  k<<<grid, block, 0, stream>>>(nullptr, 3);
  return 0;
}
"#;

#[test]
fn finds_functions_in_host_code() {
    let ex = extract(FILE);
    let names: Vec<_> = ex
        .functions
        .iter()
        .map(|f| (f.name.as_str(), f.kind))
        .collect();
    assert_eq!(
        names,
        [
            ("sq", FnKind::Device),
            ("tk", FnKind::Global),
            ("k", FnKind::Global),
            ("both", FnKind::HostDevice)
        ]
    );
    assert!(ex.functions[1].template.is_some());
    assert!(ex.functions[2].template.is_none());
    let k = &ex.functions[2];
    assert!(FILE[k.span.start..k.span.end].starts_with("__global__ void __launch_bounds__"));
    assert!(FILE[k.span.start..k.span.end].ends_with("}\n}"));
}

#[test]
fn finds_macros_types_globals_launches() {
    let ex = extract(FILE);
    let m: Vec<_> = ex
        .macros
        .iter()
        .map(|m| (m.name.as_str(), m.params.clone()))
        .collect();
    assert_eq!(
        m,
        [("N", None), ("IDX", Some(vec!["r".into(), "c".into()]))]
    );
    assert_eq!(ex.macros[1].body.join(" "), "( ( r ) * N + ( c ) )");
    let t: Vec<_> = ex.types.iter().map(|t| t.names.clone()).collect();
    assert_eq!(t, [vec!["Point".to_string()], vec!["u32".to_string()]]);
    let g: Vec<_> = ex.globals.iter().map(|g| g.names.clone()).collect();
    assert_eq!(g, [vec!["coef".to_string()], vec!["counter".to_string()]]);
    assert_eq!(ex.launches.len(), 2);
    assert_eq!(ex.launches[0].grid, "dim3(4, 1)");
    assert_eq!(ex.launches[0].block, "256");
    assert_eq!(ex.launches[1].block, "block");
}

#[test]
fn host_functions_and_attribute_macros_hide_no_kernel() {
    let src = "__host__ float rnorm() { return 1.0f; }\n\
               LB(256) __global__ void a(float *x) { x[0] = rnorm(); }\n\
               __global__ void b(float *x) { x[0] = 0; }\n";
    let names: Vec<_> = extract(src).functions.into_iter().map(|f| f.name).collect();
    assert_eq!(names, ["a", "b"]);
}

/// A struct's `__device__` member functions are functions of the struct
/// (in its namespace); every function-like member is a hole in its C
/// text; host-only ones are left alone and unsupported ones recorded.
#[test]
fn struct_member_functions_are_the_structs() {
    let src = "namespace g {\nstruct V {\n  float x = 1.0f, y;\n  \
               __device__ float dot(const V &o) const { return x * o.x; }\n  \
               float host_only() { return y; }\n  \
               __device__ V(float a) : x(a), y(a) {}\n};\n}\n";
    let ex = extract(src);
    let names: Vec<(&str, Option<&str>, &str)> = ex
        .functions
        .iter()
        .map(|f| (f.name.as_str(), f.owner.as_deref(), f.namespace.as_str()))
        .collect();
    assert_eq!(names, [("dot", Some("V"), "g::V")]);
    let holes: Vec<&str> = ex.types[0]
        .members
        .iter()
        .map(|s| &src[s.start..s.end])
        .collect();
    assert_eq!(holes.len(), 3, "{holes:?}");
    assert!(holes[0].starts_with("__device__ float dot") && holes[0].ends_with('}'));
    assert!(holes[2].starts_with("__device__ V(float a)"));
    assert_eq!(ex.unsupported_members.len(), 1);
    assert!(ex.unsupported_members[0].what.starts_with("constructors"));
}
