//! `sizeof` of the file's structs for the host evaluator, so that
//! `cudaMalloc(&d_p, n * sizeof(Particle))` gives the bytes behind `d_p`:
//! C layout (each field at a multiple of its alignment, the size a
//! multiple of the largest), pointers of 8 bytes, CUDA's vector types
//! aligned to their size (at most 16), three-component ones to their
//! component.

use std::collections::{HashMap, HashSet};

use crate::cuda::ast::{type_key, BaseType, ExprKind, Type, VarDecl};

/// `sizeof` of each struct of a file, by tag and by typedef name.
pub type StructSizes = HashMap<String, u64>;

/// Longest chain of typedefs followed (`typedef A B; typedef B C; …`).
const MAX_TYPEDEFS: usize = 16;

/// The sizes of the structs `structs` (fields by tag and typedef name)
/// whose fields' types are all known, typedefs followed through
/// `typedefs`. Each struct is laid out once, after the structs it holds
/// (an explicit stack, so nesting of any depth costs no recursion); a
/// struct that holds itself has no size.
pub fn struct_sizes(
    structs: &HashMap<String, Vec<VarDecl>>,
    typedefs: &HashMap<String, Type>,
) -> StructSizes {
    let mut types = Types {
        structs,
        typedefs,
        known: HashMap::new(),
        failed: HashSet::new(),
    };
    let mut names: Vec<&String> = structs.keys().collect();
    names.sort();
    for name in names {
        types.lay_out(name);
    }
    types
        .known
        .into_iter()
        .map(|(n, (size, _))| (n, size))
        .collect()
}

struct Types<'a> {
    structs: &'a HashMap<String, Vec<VarDecl>>,
    typedefs: &'a HashMap<String, Type>,
    /// `sizeof` and `alignof` of the structs laid out so far.
    known: HashMap<String, (u64, u64)>,
    /// Structs with no layout (a field of an unknown type, or holding
    /// itself).
    failed: HashSet<String>,
}

impl Types<'_> {
    /// Lays out the struct `name` and every struct it holds, innermost
    /// first.
    fn lay_out(&mut self, name: &str) {
        let mut open: HashSet<String> = HashSet::new();
        let mut stack = vec![(name.to_string(), false)];
        while let Some((n, inner_done)) = stack.pop() {
            if self.known.contains_key(&n) || self.failed.contains(&n) {
                continue;
            }
            let Some(fields) = self.structs.get(&n) else {
                continue;
            };
            if inner_done {
                open.remove(&n);
                match self.fields(fields) {
                    Some(layout) => {
                        self.known.insert(n, layout);
                    }
                    None => self.fail(n),
                }
                continue;
            }
            if !open.insert(n.clone()) {
                // It holds itself.
                self.fail(n);
                continue;
            }
            stack.push((n, true));
            for f in fields
                .iter()
                .filter(|f| f.ty.pointers.is_empty() && !f.ty.is_ref)
            {
                if let Some(inner) = self.struct_name(&f.ty) {
                    stack.push((inner, false));
                }
            }
        }
    }

    fn fail(&mut self, name: String) {
        self.failed.insert(name);
    }

    /// The struct `ty` names, through typedefs.
    fn struct_name(&self, ty: &Type) -> Option<String> {
        let mut ty = ty;
        for _ in 0..MAX_TYPEDEFS {
            let BaseType::Named(n) = &ty.base else {
                return None;
            };
            let n = type_key(n);
            if self.structs.contains_key(n) {
                return Some(n.to_string());
            }
            ty = self.typedefs.get(n)?;
            if !ty.pointers.is_empty() {
                return None;
            }
        }
        None
    }

    /// `sizeof` and `alignof` of `ty`, the structs it may name laid out.
    fn of(&self, ty: &Type) -> Option<(u64, u64)> {
        let mut ty = ty;
        for _ in 0..MAX_TYPEDEFS {
            if !ty.pointers.is_empty() || ty.is_ref {
                return Some((8, 8));
            }
            let name = match &ty.base {
                BaseType::Named(n) => type_key(n),
                b => {
                    let s = u64::from(b.size_bytes()?);
                    return Some((s, s));
                }
            };
            if self.structs.contains_key(name) {
                return self.known.get(name).copied();
            }
            match self.typedefs.get(name) {
                Some(t) => ty = t,
                None => {
                    let size = u64::from(BaseType::Named(name.to_string()).size_bytes()?);
                    let three = name == "dim3" || name.ends_with('3');
                    return Some((size, if three { size / 3 } else { size.min(16) }));
                }
            }
        }
        None
    }

    /// `sizeof` and `alignof` of a struct with `fields`.
    fn fields(&self, fields: &[VarDecl]) -> Option<(u64, u64)> {
        let (mut size, mut align) = (0u64, 1u64);
        for f in fields {
            let (mut s, a) = self.of(&f.ty)?;
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
        // S40 holds 2^40 floats through 40 levels of nesting: each level is
        // laid out once, whatever order the structs come in; S70's size
        // does not fit in 64 bits, and structs holding each other have none.
        let mut src = String::from(
            "struct S0 { float a; };\nstruct Ping { int x; };\nstruct Pong { int y; Ping p; };\n",
        );
        for i in 1..=70 {
            src.push_str(&format!("struct S{i} {{ S{} l; S{} r; }};\n", i - 1, i - 1));
        }
        let p = parse_source(SourceFile::new("t.cu", src));
        // The parser reads no such pair: made by hand.
        let mut structs = p.structs.clone();
        let mut back = structs["Pong"][1].clone();
        back.ty.base = crate::cuda::ast::BaseType::Named("Pong".into());
        structs.get_mut("Ping").expect("Ping").push(back);
        let sizes = struct_sizes(&structs, &p.typedefs);
        assert_eq!(sizes.get("S12"), Some(&(4 << 12)));
        assert_eq!(sizes.get("S40"), Some(&(4 << 40)));
        assert_eq!(sizes.get("S70"), None);
        assert_eq!((sizes.get("Ping"), sizes.get("Pong")), (None, None));
    }
}
