//! Spells out aliases of pointer types (`typedef float *fptr;`,
//! `using fptr = float *;`) wherever a function uses them: a parameter
//! `fptr a` becomes `float *a`, so everything after parsing sees the pointer
//! it is. Aliases of scalars, structs and vectors stay as written (the
//! lowering resolves those by name).

use std::collections::HashMap;

use super::ast::{type_key, BaseType, Expr, ExprKind, Function, StmtKind, Type};
use super::visit::{children_mut, visit_stmt_roots_mut, visit_stmts_mut};

/// How many aliases of aliases are followed (`typedef fptr fptr2;`):
/// a cycle stops there.
const MAX_CHAIN: usize = 16;

/// Replaces every use of a pointer alias of `typedefs` in `f` (its return
/// type, parameters, local declarations, casts and `sizeof`s) by the type
/// it names. A template type parameter of the same name hides the alias.
pub fn spell_out(f: &mut Function, typedefs: &HashMap<String, Type>) {
    if !typedefs.values().any(|t| !t.pointers.is_empty()) {
        return;
    }
    let hidden: Vec<String> = f
        .template
        .iter()
        .flat_map(|t| &t.params)
        .filter(|p| p.value_type.is_none())
        .map(|p| p.name.clone())
        .collect();
    let resolve = |t: &mut Type| resolve(t, typedefs, &hidden);
    resolve(&mut f.ret);
    for p in &mut f.params {
        resolve(&mut p.ty);
    }
    for s in &mut f.body {
        visit_stmts_mut(s, &mut |s| {
            if let StmtKind::Decl(ds) = &mut s.kind {
                ds.iter_mut().for_each(|d| resolve(&mut d.ty));
            }
        });
        visit_stmt_roots_mut(s, &mut |e| expr_types(e, &resolve));
    }
}

/// Resolves the types of `e` and its subexpressions.
fn expr_types(e: &mut Expr, resolve: &impl Fn(&mut Type)) {
    if let ExprKind::Cast(_, t, _) | ExprKind::SizeofType(t) = &mut e.kind {
        resolve(t);
    }
    for c in children_mut(e) {
        expr_types(c, resolve);
    }
}

/// `t` with its base spelled out when it names a pointer alias.
fn resolve(t: &mut Type, typedefs: &HashMap<String, Type>, hidden: &[String]) {
    resolve_within(t, typedefs, hidden, 0);
}

/// [`resolve`], `depth` aliases deep.
fn resolve_within(t: &mut Type, typedefs: &HashMap<String, Type>, hidden: &[String], depth: usize) {
    let BaseType::Named(name) = &t.base else {
        return;
    };
    let key = type_key(name);
    if depth >= MAX_CHAIN || hidden.iter().any(|h| h == key) {
        return;
    }
    let Some(mut alias) = typedefs.get(key).cloned() else {
        return;
    };
    resolve_within(&mut alias, typedefs, hidden, depth + 1);
    if alias.pointers.is_empty() {
        return;
    }
    // `const fptr p` is a constant pointer, not a pointer to constants.
    if t.is_const {
        if let Some(last) = alias.pointers.last_mut() {
            last.is_const = true;
        }
    }
    alias.pointers.append(&mut t.pointers);
    alias.is_ref |= t.is_ref;
    *t = alias;
}

#[cfg(test)]
mod tests {
    use crate::cuda::parse::parse_source;
    use crate::source::SourceFile;

    fn lowered(src: &str, kernel: &str) -> Result<crate::ir::Kernel, String> {
        let file = parse_source(SourceFile::new("a.cu", src));
        crate::ir::lower::lower_kernel(&file, kernel).map_err(|d| d.message)
    }

    #[test]
    fn pointer_aliases_are_pointers_in_parameters_locals_and_casts() {
        let src = "using fptr = float *;\n\
                   typedef const float *cfptr;\n\
                   typedef fptr fptr2;\n\
                   __global__ void k(fptr a, cfptr b, fptr2 c, int n) {\n\
                   \x20   int i = blockIdx.x * blockDim.x + threadIdx.x;\n\
                   \x20   fptr p = a + i;\n\
                   \x20   if (i < n) *p = b[i] + ((fptr)c)[i] + sizeof(fptr);\n\
                   }\n";
        let k = lowered(src, "k");
        assert!(k.is_ok(), "{k:?}");
    }

    #[test]
    fn a_template_parameter_hides_an_alias_of_its_name() {
        let src = "typedef float *T;\n\
                   template <typename T> __global__ void k(T *a) { a[threadIdx.x] = 1; }\n\
                   int main() { float *d; k<float><<<1, 32>>>(d); }\n";
        let k = lowered(src, "k<float>");
        assert!(k.is_ok(), "{k:?}");
    }
}
