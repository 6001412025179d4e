use super::*;
use crate::cuda::extract::extract;

fn unit_of(src: &str) -> Result<Unit, UnitError> {
    let ex = extract(src);
    let macros = MacroTable::new(&ex.macros);
    let f = &ex.functions[0];
    let mut u = Unit::default();
    u.push_synthetic("/*prelude*/\n");
    u.push_file(
        &src[f.span.start..f.span.end],
        f.span.start,
        &macros,
        &Names {
            is_type: &|n| is_builtin_type_name(n),
            is_template: &|_| false,
            is_shared_accessor: &|_| false,
            instance: &|_, _| None,
        },
        &Cell::new(MAX_FILE_EXPANSION),
    )?;
    Ok(u)
}

#[test]
fn qualifiers_are_blanked_and_offsets_kept() {
    let src = "// c\n__global__ void __launch_bounds__(256) k(float* __restrict__ a) {\n  __shared__ float s[4]; /* x */ a[0] = s[0];\n}\n";
    let u = unit_of(src).unwrap();
    let body = &u.text["/*prelude*/\n".len()..];
    assert!(
        body.contains("void                        k(float* __restrict   a)"),
        "{body}"
    );
    assert!(!body.contains("/* x */"));
    assert_eq!(
        u.quals.iter().map(|q| q.text.as_str()).collect::<Vec<_>>(),
        ["__global__", "__launch_bounds__(256)", "__shared__"]
    );
    let k_unit = u.text.find(" k(").unwrap() + 1;
    assert_eq!(&src[u.map.to_file(k_unit).unwrap()..][..2], "k(");
}

#[test]
fn macros_expand_and_map_to_the_invocation() {
    let src = "#define N 8\n#define IDX(r,c) ((r)*N+(c))\n__global__ void k(int* a) { a[IDX(1, 2)] = N; }\n";
    let u = unit_of(src).unwrap();
    assert!(
        u.text.contains("a[( ( 1 ) * 8 + ( 2 ) )] = 8;"),
        "{}",
        u.text
    );
    assert_eq!(u.macro_uses[0].invocation, "IDX(1, 2)");
    let o = u.macro_uses[0].out.start + 3;
    assert_eq!(u.map.to_file(o), Some(src.find("IDX(1").unwrap()));
    let after = u.text.find("] = 8").unwrap();
    assert_eq!(&src[u.map.to_file(after).unwrap()..][..1], "]");
}

#[test]
fn unsupported_constructs_are_named() {
    let cases = [
        (
            "__global__ void k(int* a) { goto out; out: a[0] = 1; }",
            "`goto`",
        ),
        ("__global__ void k(int&& a) { a = 1; }", "rvalue references"),
        (
            "__global__ void k(int* a) { auto f = [](int x) { return x; }; }",
            "lambda",
        ),
        (
            "__global__ void k(int* a) { other<<<1, 1>>>(a); }",
            "dynamic parallelism",
        ),
        ("__global__ void k(int* a) { asm(\"nop\"); }", "assembly"),
        (
            "__global__ void k(int* a) {\n#include \"body.h\"\n}",
            "`#include` inside a function",
        ),
        (
            "__global__ void k(int* a) { cg::thread_block b = cg::this_thread_block(); cg::grid_group g = cg::this_grid(); g.sync(); }",
            "grid_group::sync",
        ),
        (
            "__global__ void k(int* a) { auto t = cooperative_groups::coalesced_threads(); }",
            "not supported: `cg::coalesced_threads`",
        ),
    ];
    for (src, what) in cases {
        let e = unit_of(src).unwrap_err();
        assert!(e.message.contains(what), "{src}: {}", e.message);
    }
    let lambda = "__global__ void k(int* a) { int y = [=](int x) { return x; }(1); }";
    assert!(unit_of(lambda).unwrap_err().message.contains("lambda"));
}

#[test]
fn nesting_is_bounded() {
    let deep = format!(
        "__global__ void k(int* a) {{ a[0] = {}1{}; }}",
        "(".repeat(300),
        ")".repeat(300)
    );
    assert_eq!(unit_of(&deep).unwrap_err().code, "too-deep");
}

/// `#define NAME0 base` and `NAMEi` twice `NAMEi-1` up to `NAMEn`.
fn doubling(name: &str, base: &str, n: usize) -> String {
    let mut d = format!("#define {name}0 {base}\n");
    for i in 1..=n {
        d.push_str(&format!(
            "#define {name}{i} {name}{} {name}{}\n",
            i - 1,
            i - 1
        ));
    }
    d
}

#[test]
fn limits_hold_after_macro_expansion() {
    // Ten times the limits, from macros that double: 2,560 braces,
    // 2,560 unary minus signs, 2,560 nested `if`s; the error is at the
    // invocation (`at`, the first word of `at`) that goes past.
    let cases = [
        (
            doubling("O", "{", 11)
                + &doubling("C", "}", 11)
                + "__global__ void k(int* a) { O11 O9 a[0] = 1; C9 C11 }\n",
            "O11 O9",
            "too-deep",
            "nesting deeper than 256 (in the expansion of macro `O11`)",
        ),
        (
            doubling("N", "-", 11) + "__global__ void k(int* a) { a[0] = N11 N9 1; }\n",
            "N11 N9",
            "too-deep",
            "nesting deeper than 256 (in the expansion of macro `N11`)",
        ),
        (
            doubling("I", "if (a[0])", 9)
                + "__global__ void k(int* a) { I9 I9 I9 I9 I9 a[0] = 1; }\n",
            "I9 I9 I9 I9 I9",
            "too-deep",
            "nesting deeper than 256 (in the expansion of macro `I9`)",
        ),
        (
            doubling("P", "a[0] +", 9) + "__global__ void k(int* a) { a[0] = P9 P9 1; }\n",
            "P9 1",
            "too-large",
            "statement longer than 4096 tokens (in the expansion of macro `P9`)",
        ),
    ];
    for (src, at, code, message) in cases {
        let e = crate::on_small_stack(move || {
            let e = unit_of(&src).unwrap_err();
            (e, src.find(at).unwrap())
        });
        assert_eq!((e.0.code, e.0.message.as_str()), (code, message));
        assert_eq!(e.0.offset, e.1);
    }
}

#[test]
fn macro_expansions_of_a_file_are_bounded() {
    let src = doubling("P", "a[0] +", 9) + "__global__ void k(int* a) { a[0] = P9 1; }\n";
    let ex = extract(&src);
    let macros = MacroTable::new(&ex.macros);
    let f = &ex.functions[0];
    let left = Cell::new(6000);
    let names = Names {
        is_type: &|n| is_builtin_type_name(n),
        is_template: &|_| false,
        is_shared_accessor: &|_| false,
        instance: &|_, _| None,
    };
    let piece = &src[f.span.start..f.span.end];
    let mut u = Unit::default();
    assert!(u
        .push_file(piece, f.span.start, &macros, &names, &left)
        .is_ok());
    // `P9` is 512 copies of 5 tokens.
    assert_eq!(left.get(), 6000 - 512 * 5);
    assert!(u
        .push_file(piece, f.span.start, &macros, &names, &left)
        .is_ok());
    let e = u
        .push_file(piece, f.span.start, &macros, &names, &left)
        .unwrap_err();
    assert_eq!(e.code, "too-large");
    assert!(
        e.message.contains("macro `P9` is not expanded"),
        "{}",
        e.message
    );
}
