//! `sizeof` of the file's structs for the host evaluator, so that
//! `cudaMalloc(&d_p, n * sizeof(Particle))` gives the bytes behind `d_p`:
//! C layout (each field at a multiple of its alignment, the size a
//! multiple of the largest), pointers of 8 bytes, CUDA's vector types
//! aligned to their size (at most 16), three-component ones to their
//! component.

use std::cell::RefCell;
use std::collections::HashMap;

use crate::cuda::ast::{type_key, BaseType, ExprKind, Type, VarDecl};

/// `sizeof` of each struct of a file, by tag and by typedef name.
pub type StructSizes = HashMap<String, u64>;

/// Deepest nesting of structs and typedefs followed.
const MAX_DEPTH: usize = 16;

/// The sizes of the structs `structs` (fields by tag and typedef name)
/// whose fields' types are all known, typedefs followed through
/// `typedefs`.
pub fn struct_sizes(
    structs: &HashMap<String, Vec<VarDecl>>,
    typedefs: &HashMap<String, Type>,
) -> StructSizes {
    let types = Types {
        structs,
        typedefs,
        known: RefCell::default(),
    };
    structs
        .keys()
        .filter_map(|n| Some((n.clone(), types.named(n, 0)?.0)))
        .collect()
}

struct Types<'a> {
    structs: &'a HashMap<String, Vec<VarDecl>>,
    typedefs: &'a HashMap<String, Type>,
    /// The structs laid out so far (a struct nested many times over is
    /// laid out once).
    known: RefCell<HashMap<String, (u64, u64)>>,
}

impl Types<'_> {
    /// `sizeof` and `alignof` of `ty`.
    fn of(&self, ty: &Type, depth: usize) -> Option<(u64, u64)> {
        if !ty.pointers.is_empty() || ty.is_ref {
            return Some((8, 8));
        }
        match &ty.base {
            BaseType::Named(n) => self.named(type_key(n), depth + 1),
            b => {
                let s = u64::from(b.size_bytes()?);
                Some((s, s))
            }
        }
    }

    /// `sizeof` and `alignof` of the struct, typedef or CUDA type `name`.
    fn named(&self, name: &str, depth: usize) -> Option<(u64, u64)> {
        if let Some(known) = self.known.borrow().get(name) {
            return Some(*known);
        }
        if depth > MAX_DEPTH {
            return None;
        }
        if let Some(fields) = self.structs.get(name) {
            // Only layouts found are kept: one not found this deep may be
            // found nearer the top.
            let layout = self.fields(fields, depth)?;
            self.known.borrow_mut().insert(name.to_string(), layout);
            return Some(layout);
        }
        if let Some(t) = self.typedefs.get(name) {
            return self.of(t, depth + 1);
        }
        let size = u64::from(BaseType::Named(name.to_string()).size_bytes()?);
        let three = name == "dim3" || name.ends_with('3');
        Some((size, if three { size / 3 } else { size.min(16) }))
    }

    /// `sizeof` and `alignof` of a struct with `fields`.
    fn fields(&self, fields: &[VarDecl], depth: usize) -> Option<(u64, u64)> {
        let (mut size, mut align) = (0u64, 1u64);
        for f in fields {
            let (mut s, a) = self.of(&f.ty, depth)?;
            for d in &f.dims {
                let ExprKind::Int { value, .. } = d.as_ref()?.kind else {
                    return None;
                };
                s = s.checked_mul(value)?;
            }
            size = size.next_multiple_of(a).checked_add(s)?;
            align = align.max(a);
        }
        Some((size.next_multiple_of(align), align))
    }
}

#[cfg(test)]
mod tests {
    use crate::cuda::parse::parse_source;
    use crate::source::SourceFile;

    use super::struct_sizes;

    #[test]
    fn structs_are_laid_out_as_c_does() {
        let p = parse_source(SourceFile::new(
            "t.cu",
            "struct Particle { float3 pos; float3 vel; float mass; };\n\
             typedef struct { char tag; double w; int id[3]; } Item;\n\
             struct Cell { float4 acc; char flag; };\n\
             struct Pair { Particle p; double w; };\n\
             typedef unsigned int u32;\n\
             struct Keyed { u32 key; short s; };\n",
        ));
        let sizes = struct_sizes(&p.structs, &p.typedefs);
        assert_eq!(sizes.get("Particle"), Some(&28));
        assert_eq!(sizes.get("Item"), Some(&32));
        assert_eq!(sizes.get("Cell"), Some(&32));
        assert_eq!(sizes.get("Pair"), Some(&40));
        assert_eq!(sizes.get("Keyed"), Some(&8));
    }

    #[test]
    fn structs_nested_twice_over_are_laid_out_once() {
        // S40 holds 2^40 floats through 40 levels of nesting: laid out
        // each level once, and unknown past the depth followed.
        let mut src = String::from("struct S0 { float a; };\n");
        for i in 1..=40 {
            src.push_str(&format!("struct S{i} {{ S{} l; S{} r; }};\n", i - 1, i - 1));
        }
        let p = parse_source(SourceFile::new("t.cu", src));
        let sizes = struct_sizes(&p.structs, &p.typedefs);
        assert_eq!(sizes.get("S12"), Some(&(4 << 12)));
        assert_eq!(sizes.get("S40"), None);
    }
}
