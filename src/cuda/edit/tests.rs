//! Tests of the edit: kept text, changed heads, moved statements and
//! their comments, macro refusals, the file's style.

use super::*;
use crate::cuda::ast::{Stmt, StmtKind};
use crate::cuda::parse::parse_source;
use crate::source::{SourceFile, Span};

fn function(src: &str) -> Function {
    let p = parse_source(SourceFile::new("k.cu", src));
    p.functions[0].result.clone().expect("parses")
}

/// The edited text of `c`, which must be allowed.
fn edit(src: &str, f: &Function, c: &Function) -> String {
    function_text(src, f, c, &[]).expect("an edit")
}

/// The text of `c` as an edit of the one-function file `src`, and
/// that it parses back to `c`.
fn edited(src: &str, c: &Function) -> Result<String, Refusal> {
    let p = parse_source(SourceFile::new("k.cu", src));
    let f = p.functions[0].result.clone().expect("parses");
    let t = function_text(src, &f, c, &p.extracted.macros)?;
    let again = parse_source(SourceFile::new("k.cu", &t));
    assert_eq!(again.functions[0].result.as_ref().ok(), Some(c), "{t}");
    Ok(t)
}

/// The first expression statement's expression of `s`, mutably.
fn cond_of(s: &mut Stmt) -> &mut crate::cuda::ast::Expr {
    match &mut s.kind {
        StmtKind::If { cond, .. }
        | StmtKind::While { cond, .. }
        | StmtKind::DoWhile { cond, .. }
        | StmtKind::Switch { cond, .. } => cond,
        StmtKind::For { cond, .. } => cond.as_mut().expect("a condition"),
        _ => panic!("no condition"),
    }
}

#[test]
fn a_changed_head_is_the_only_text_replaced() {
    let src = "__global__ void k(int *a, int n)\n{\n\tfor (int i = 0; i < n; i++)   {\n\t\t// keep\n\t\ta[i]  = 1;\n\t}\n\twhile (n > 4)\n\t\tn--;  /* odd */\n\tif (n) { a[0] = 2; }\n\telse { a[1] = 3; }\n}\n";
    let f = function(src);
    let other = function("__global__ void k(int *a, int n) { if (n < 8) { } }");
    let StmtKind::If { cond: new_cond, .. } = &other.body[0].kind else {
        panic!()
    };
    for i in 0..3 {
        let mut c = f.clone();
        *cond_of(&mut c.body[i]) = new_cond.clone();
        let t = edited(src, &c).unwrap();
        let changed: Vec<(&str, &str)> =
            src.lines().zip(t.lines()).filter(|(a, b)| a != b).collect();
        assert_eq!(changed.len(), 1, "{t}");
        assert!(changed[0].1.contains("n < 8"), "{t}");
        assert_eq!(src.lines().count(), t.lines().count());
    }
}

#[test]
fn do_while_and_switch_bodies_are_edited_inside() {
    let src = "__global__ void k(int *a, int n) {\n  do {\n    // one\n    a[n] = 1;\n    a[n+1] = 2;\n  } while (--n > 0);\n  switch (n) {\n  case 0:  a[0] = 4;   // four\n    a[9] = 9;\n    break;\n  default:\n    a[1] = 5;\n  }\n}\n";
    let f = function(src);
    let mut c = f.clone();
    if let StmtKind::DoWhile { body, .. } = &mut c.body[0].kind {
        if let StmtKind::Block(b) = &mut body.kind {
            b.remove(1);
        }
    }
    if let StmtKind::Switch { cases, .. } = &mut c.body[1].kind {
        cases[0].body.remove(1);
    }
    let t = edited(src, &c).unwrap();
    let expected = src
        .replace("    a[n+1] = 2;\n", "")
        .replace("    a[9] = 9;\n", "");
    assert_eq!(t, expected.trim_end());
}

#[test]
fn a_moved_statement_keeps_its_text_and_comment() {
    let src = "__global__ void k(int *a, int n) {\n\tif (n > 0) {\n\t\t// why\n\t\ta[(n)] = n*2;\n\t}\n}\n";
    let f = function(src);
    let mut c = f.clone();
    let StmtKind::If { then, .. } = &mut c.body[0].kind else {
        panic!()
    };
    let StmtKind::Block(b) = &mut then.kind else {
        panic!()
    };
    let moved = b.remove(0);
    c.body.push(moved);
    let t = edited(src, &c).unwrap();
    assert!(t.ends_with("\t}\n\t// why\n\ta[(n)] = n*2;\n}"), "{t:?}");
}

#[test]
fn comments_of_a_merged_copy_go_with_the_copy_kept() {
    let src = "__global__ void k(int *a, int n) {\n    if (n > 0) {\n        for (int i = 0; i < n; i++) {\n            a[i] += 1;\n        }\n        a[0] = 1;\n    } else {\n        // walk\n        for (int i = 0; i < n; i++) {\n            // add one\n            a[i] += 1;\n            // done\n        }\n        a[0] = 2;\n    }\n}\n";
    let f = function(src);
    let mut c = f.clone();
    let StmtKind::If { then, els, .. } = &mut c.body[0].kind else {
        panic!()
    };
    let StmtKind::Block(t) = &mut then.kind else {
        panic!()
    };
    let moved = t.remove(0);
    let Some(StmtKind::Block(e)) = els.as_mut().map(|e| &mut e.kind) else {
        panic!()
    };
    e.remove(0);
    c.body.insert(0, moved);
    let t = edited(src, &c).unwrap();
    let expected = "    // walk\n    for (int i = 0; i < n; i++) {\n        // add one\n        a[i] += 1;\n        // done\n    }\n    if (n > 0) {";
    assert!(t.contains(expected), "{t}");
    assert_eq!(t.matches("// walk").count(), 1, "{t}");
}

#[test]
fn a_new_compound_statement_does_not_take_an_unrelated_ones_place() {
    let src = "__global__ void k(int *a, int n) {\n    if (n > 0) {\n        a[0] = 1;\n        // after\n    }\n}\n";
    let f = function(src);
    let other = function("__global__ void k(int *a, int n) { if (n == 3) { a[2] = 2; } }");
    /// `s` with every statement made up (no place in the file).
    fn synthetic(s: &mut Stmt) {
        s.meta.span = Span::SYNTHETIC;
        match &mut s.kind {
            StmtKind::Block(b) => b.iter_mut().for_each(synthetic),
            StmtKind::If { then, .. } => synthetic(then),
            _ => {}
        }
    }
    let mut c = f.clone();
    c.body[0] = other.body[0].clone();
    synthetic(&mut c.body[0]);
    let t = edited(src, &c).unwrap();
    assert!(!t.contains("// after"), "{t}");
    // One that holds the old statement's code is edited in its place.
    let mut d = f.clone();
    *cond_of(&mut d.body[0]) = cond_of(&mut c.body[0]).clone();
    d.body[0].meta.span = Span::SYNTHETIC;
    let t = edited(src, &d).unwrap();
    assert_eq!(t, src.replace("(n > 0)", "(n == 3)").trim_end());
}

#[test]
fn code_a_macro_produces_is_not_edited() {
    let src = "#define STORE(i) a[i] = 2 * (i);\n#define IDX(r) ((r) * 4)\n__global__ void k(int *a, int n) {\n    STORE(n)\n    a[IDX(n)] = 1;\n}\n";
    let p = parse_source(SourceFile::new("k.cu", src));
    let f = p.functions[0].result.clone().expect("parses");
    let macros = &p.extracted.macros;
    // A statement the macro produced, changed: refused.
    let mut c = f.clone();
    c.body[0] = c.body[1].clone();
    c.body[0].meta.span = f.body[0].meta.span;
    let why = function_text(src, &f, &c, macros).unwrap_err();
    assert_eq!(why.name, "STORE");
    assert_eq!(why.at, src.find("STORE(n)").unwrap());
    // Inside an expansion printed as its invocation: refused.
    let mut d = f.clone();
    if let StmtKind::Expr(e) = &mut d.body[1].kind {
        if let crate::cuda::ast::ExprKind::Assign(_, lhs, _) = &mut e.kind {
            if let crate::cuda::ast::ExprKind::Index(_, idx) = &mut lhs.kind {
                assert_eq!(idx.meta.macro_text.as_deref(), Some("IDX(n)"));
                if let crate::cuda::ast::ExprKind::Binary(_, l, _) = &mut idx.kind {
                    l.kind = crate::cuda::ast::ExprKind::Int {
                        value: 7,
                        text: "7".into(),
                    };
                }
            }
        }
    }
    let why = function_text(src, &f, &d, macros).unwrap_err();
    assert_eq!(why.name, "IDX");
    // Dropping the macro's statement is no edit of its expansion.
    let mut e = f.clone();
    e.body.remove(0);
    assert!(function_text(src, &f, &e, macros).is_ok());
}

#[test]
fn an_unchanged_function_is_its_own_text() {
    let src = "__global__ void k(int *a,\n\tint n) {\n\t// first\n\tint i = threadIdx.x;   // odd spacing\n\n\ta[i] = n;\n}\n";
    let f = function(src);
    assert_eq!(edit(src, &f, &f), src.trim_end());
}

#[test]
fn only_the_changed_statement_is_printed_in_the_file_style() {
    let src = "__global__ void k(int *a, int n)\r\n{\r\n\t/* keep me */\r\n\tint i = threadIdx.x;\r\n\tif (i < n) {\r\n\t\ta[i] = a[i]+1; // and me\r\n\t\ta[i]   *=  2;\r\n\t}\r\n}\r\n";
    let f = function(src);
    let mut c = f.clone();
    // Drop the last statement of the `if`.
    if let StmtKind::If { then, .. } = &mut c.body[1].kind {
        if let StmtKind::Block(b) = &mut then.kind {
            b.pop();
        }
    }
    let text = edit(src, &f, &c);
    assert_eq!(
        text,
        "__global__ void k(int *a, int n)\r\n{\r\n\t/* keep me */\r\n\tint i = threadIdx.x;\r\n\tif (i < n) {\r\n\t\ta[i] = a[i]+1; // and me\r\n\t}\r\n}"
    );
    // A new statement is printed, indented with tabs, CRLF endings.
    let mut d = f.clone();
    let extra = d.body[0].clone();
    let mut moved = extra;
    moved.meta.span = Span::SYNTHETIC;
    if let StmtKind::If { then, .. } = &mut d.body[1].kind {
        if let StmtKind::Block(b) = &mut then.kind {
            b.insert(0, moved);
        }
    }
    let text = edit(src, &f, &d);
    assert!(
        text.contains("if (i < n) {\r\n\t\tint i = threadIdx.x;\r\n\t\ta[i] = a[i]+1; // and me"),
        "{text:?}"
    );
}

#[test]
fn a_replaced_statement_keeps_the_comments_of_the_one_it_replaces() {
    let src =
        "__global__ void k(int *a) {\n    // before\n    a[0] = 1; // why\n    a[1] = 2;\n}\n";
    let f = function(src);
    let mut c = f.clone();
    let mut new = f.body[1].clone();
    new.meta.span = Span::SYNTHETIC;
    c.body[0] = new;
    assert_eq!(
        edit(src, &f, &c),
        "__global__ void k(int *a) {\n    // before\n    a[1] = 2; // why\n    a[1] = 2;\n}"
    );
}

#[test]
fn a_changed_signature_reprints_the_function() {
    let src = "__global__ void k(int *a) { a[0] = 1; }\n";
    let f = function(src);
    let mut c = f.clone();
    c.name = "k2".into();
    assert!(edit(src, &f, &c).starts_with("__global__ void k2(int *a) {"));
}

#[test]
fn a_changed_parameter_is_the_only_text_replaced() {
    let src = "__global__ void k(float *in,\n                  float *out, int n) {\n    if (n > 0) out[0] = in[0]; // keep\n}\n";
    let mut c = function(src);
    c.params[0].ty.is_const = true;
    c.params[0].ty.pointers[0].is_restrict = true;
    assert_eq!(
        edited(src, &c).unwrap(),
        "__global__ void k(const float *__restrict__ in,\n                  float *out, int n) {\n    if (n > 0) out[0] = in[0]; // keep\n}"
    );
}

#[test]
fn parameters_after_launch_bounds_and_with_dimensions_are_matched() {
    let src = "__global__ void __launch_bounds__(256, 2) k(int n, float f[][4], float *x) {\n    x[0] = f[0][n];\n}\n";
    let mut c = function(src);
    c.params[2].ty.is_const = true;
    assert_eq!(
        edited(src, &c).unwrap(),
        "__global__ void __launch_bounds__(256, 2) k(int n, float f[][4], const float *x) {\n    x[0] = f[0][n];\n}"
    );
}

#[test]
fn text_after_a_functional_cast_is_located() {
    // `float(i)` is read as `(float)(i)`, two bytes longer: the spans
    // after it must still be the file's, or the whole kernel is reprinted.
    let src = "__global__ void k(float *a, int n) {\n    int i = threadIdx.x;\n    if (i < n) a[i] = float(i) * 2.0f;\n    if (i == 0) a[n] = int(a[0]);\n}\n";
    let p = parse_source(SourceFile::new("k.cu", src));
    let f = p.functions[0].result.clone().expect("parses");
    assert_eq!(f.meta.span, p.functions[0].item.span);
    let last = &f.body[2];
    assert_eq!(
        src[last.meta.span.start..last.meta.span.end].trim_end(),
        "if (i == 0) a[n] = int(a[0]);"
    );
    let mut c = f.clone();
    c.body.remove(0);
    c.body.insert(0, f.body[0].clone());
    *cond_of(&mut c.body[2]) = cond_of(&mut c.body[1].clone()).clone();
    let text = edited(src, &c).expect("an edit");
    assert_eq!(
        text,
        "__global__ void k(float *a, int n) {\n    int i = threadIdx.x;\n    if (i < n) a[i] = float(i) * 2.0f;\n    if (i < n) a[n] = int(a[0]);\n}"
    );
}

#[test]
fn a_changed_loop_condition_is_the_only_text_replaced() {
    let src = "__global__ void k(int *a, unsigned n) {\n    for (unsigned s = n >> 1; s != 0; s >>= 1)   // halve\n        a[s] += a[2*s];\n}\n";
    let f = function(src);
    let mut c = f.clone();
    let greater = function("__global__ void g(unsigned s) { if (s > 32) {} }\n");
    *cond_of(&mut c.body[0]) = cond_of(&mut greater.body[0].clone()).clone();
    assert_eq!(
        edited(src, &c).expect("an edit"),
        "__global__ void k(int *a, unsigned n) {\n    for (unsigned s = n >> 1; s > 32; s >>= 1)   // halve\n        a[s] += a[2*s];\n}"
    );
}
