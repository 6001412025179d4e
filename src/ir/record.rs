//! Struct and CUDA vector types: their C layout (size, alignment, field
//! offsets with padding), flattened to scalar components ("slots"), and
//! the memory accesses a whole copy of one makes ("pieces").
//!
//! A value of such a type lives in the IR as one scalar per slot. An
//! element of an array of them is stored as its slots, and a copy from or
//! to memory is one access per piece: a vector type whose alignment is its
//! size (`float2`, `float4`, `int4`, `uchar4`, `double2`) is one access of
//! that many bytes, as the hardware's 64- and 128-bit loads make it;
//! `float3`, `int3`, `uint3` and `dim3` (aligned like their components)
//! and the scalar fields of a struct are one access each.

use std::sync::Arc;

use super::{Layout, Scalar};

/// A struct or vector type.
#[derive(Clone, Debug, PartialEq)]
pub struct Record {
    /// The type's name (`float4`, `Node`).
    pub name: String,
    /// `sizeof`, padding included.
    pub size: u32,
    /// `alignof`.
    pub align: u32,
    /// Fields in declaration order.
    pub fields: Vec<Field>,
    /// Byte offset of each scalar component, in memory order.
    pub offsets: Vec<u32>,
    /// The scalar type every component has.
    pub elem: Scalar,
    /// The memory accesses of a whole copy, in memory order.
    pub pieces: Vec<Piece>,
}

/// A named field.
#[derive(Clone, Debug, PartialEq)]
pub struct Field {
    /// Field name.
    pub name: String,
    /// Byte offset in the record.
    pub offset: u32,
    /// First component of the field.
    pub slot: usize,
    /// Its type.
    pub ty: FieldType,
}

/// The type of a field.
#[derive(Clone, Debug, PartialEq)]
pub enum FieldType {
    /// A scalar.
    Scalar(Scalar),
    /// A nested struct or vector.
    Record(Arc<Record>),
}

impl FieldType {
    /// Number of scalar components.
    pub fn slots(&self) -> usize {
        match self {
            FieldType::Scalar(_) => 1,
            FieldType::Record(r) => r.offsets.len(),
        }
    }

    fn size_align(&self) -> (u32, u32) {
        match self {
            FieldType::Scalar(s) => (s.size(), s.size()),
            FieldType::Record(r) => (r.size, r.align),
        }
    }
}

/// One memory access of a whole copy: `slots` components from `slot`,
/// `bytes` bytes from `offset`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Piece {
    /// First component.
    pub slot: usize,
    /// Number of components.
    pub slots: usize,
    /// Byte offset in the record.
    pub offset: u32,
    /// Bytes accessed.
    pub bytes: u32,
}

/// The component names of CUDA vector types.
const LANES: [&str; 4] = ["x", "y", "z", "w"];

impl Record {
    /// The CUDA vector type `name` (`float4`, `uchar4`, `dim3`, …), if it
    /// is one.
    pub fn vector(name: &str) -> Option<Record> {
        if name == "dim3" {
            return Some(Record::vector_of("dim3", Scalar::U32, 3));
        }
        let digits = name.trim_start_matches(|c: char| c.is_ascii_alphabetic());
        let n: usize = digits.parse().ok().filter(|n| (1..=4).contains(n))?;
        let elem = match &name[..name.len() - digits.len()] {
            "char" => Scalar::I8,
            "uchar" => Scalar::U8,
            "short" => Scalar::I16,
            "ushort" => Scalar::U16,
            "int" => Scalar::I32,
            "uint" => Scalar::U32,
            "long" | "longlong" => Scalar::I64,
            "ulong" | "ulonglong" => Scalar::U64,
            "float" => Scalar::F32,
            "double" => Scalar::F64,
            _ => return None,
        };
        Some(Record::vector_of(name, elem, n))
    }

    /// `n` components of `elem`: aligned to their size for 1, 2 and 4
    /// components (at most 16 bytes), to one component for 3.
    fn vector_of(name: &str, elem: Scalar, n: usize) -> Record {
        let e = elem.size();
        let size = e * n as u32;
        let align = if n == 3 { e } else { size.min(16) };
        let per_piece = (align / e) as usize;
        Record {
            name: name.to_string(),
            size,
            align,
            fields: (0..n)
                .map(|i| Field {
                    name: LANES[i].to_string(),
                    offset: e * i as u32,
                    slot: i,
                    ty: FieldType::Scalar(elem),
                })
                .collect(),
            offsets: (0..n as u32).map(|i| e * i).collect(),
            elem,
            pieces: (0..n)
                .step_by(per_piece)
                .map(|s| Piece {
                    slot: s,
                    slots: per_piece,
                    offset: e * s as u32,
                    bytes: align,
                })
                .collect(),
        }
    }

    /// A struct of `fields` in C layout: each field at the next multiple
    /// of its alignment, the size rounded up to the largest alignment.
    /// Every scalar component must have one type (copper stores an array
    /// of structs as one scalar type).
    pub fn structure(name: &str, fields: Vec<(String, FieldType)>) -> Result<Record, String> {
        let mut out = Record {
            name: name.to_string(),
            size: 0,
            align: 1,
            fields: Vec::new(),
            offsets: Vec::new(),
            elem: Scalar::I32,
            pieces: Vec::new(),
        };
        let mut elem: Option<Scalar> = None;
        for (fname, ty) in fields {
            if out.fields.iter().any(|f| f.name == fname) {
                return Err(format!("struct `{name}` has two fields named `{fname}`"));
            }
            let (size, align) = ty.size_align();
            let offset = out.size.next_multiple_of(align);
            let slot = out.offsets.len();
            let (field_elem, inner_offsets, inner_pieces) = match &ty {
                FieldType::Scalar(s) => (
                    *s,
                    vec![0],
                    vec![Piece {
                        slot: 0,
                        slots: 1,
                        offset: 0,
                        bytes: size,
                    }],
                ),
                FieldType::Record(r) => (r.elem, r.offsets.clone(), r.pieces.clone()),
            };
            match elem {
                Some(e) if e != field_elem => {
                    return Err(format!(
                        "struct `{name}` mixes `{}` and `{}` fields; copper supports structs whose scalar fields all have one type",
                        e.c_name(),
                        field_elem.c_name()
                    ))
                }
                _ => elem = Some(field_elem),
            }
            out.offsets.extend(inner_offsets.iter().map(|o| o + offset));
            out.pieces.extend(inner_pieces.iter().map(|p| Piece {
                slot: p.slot + slot,
                offset: p.offset + offset,
                ..*p
            }));
            out.fields.push(Field {
                name: fname,
                offset,
                slot,
                ty,
            });
            out.size = offset + size;
            out.align = out.align.max(align);
        }
        let Some(elem) = elem else {
            return Err(format!("struct `{name}` has no fields"));
        };
        out.elem = elem;
        out.size = out.size.next_multiple_of(out.align);
        Ok(out)
    }

    /// The field named `name`.
    pub fn field(&self, name: &str) -> Option<&Field> {
        self.fields.iter().find(|f| f.name == name)
    }

    /// The memory layout of an array of this type.
    pub fn layout(&self) -> Layout {
        let mut names = Vec::new();
        self.component_names("", &mut names);
        Layout {
            size: self.size,
            offsets: self.offsets.clone(),
            names,
        }
    }

    /// The name of each component after `prefix` (`pos.x`, …), in order.
    pub fn component_names(&self, prefix: &str, out: &mut Vec<String>) {
        for f in &self.fields {
            let name = if prefix.is_empty() {
                f.name.clone()
            } else {
                format!("{prefix}.{}", f.name)
            };
            match &f.ty {
                FieldType::Scalar(_) => out.push(name),
                FieldType::Record(r) => r.component_names(&name, out),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vector_layouts() {
        let f4 = Record::vector("float4").unwrap();
        assert_eq!((f4.size, f4.align), (16, 16));
        assert_eq!(f4.offsets, vec![0, 4, 8, 12]);
        // One 16-byte access.
        assert_eq!(f4.pieces.len(), 1);
        assert_eq!(f4.pieces[0].bytes, 16);
        let f3 = Record::vector("float3").unwrap();
        assert_eq!((f3.size, f3.align), (12, 4));
        // Three 4-byte accesses.
        assert_eq!(f3.pieces.len(), 3);
        let c4 = Record::vector("uchar4").unwrap();
        assert_eq!((c4.size, c4.align, c4.elem), (4, 4, Scalar::U8));
        assert_eq!(c4.pieces.len(), 1);
        let d2 = Record::vector("double2").unwrap();
        assert_eq!((d2.size, d2.align), (16, 16));
        assert_eq!(Record::vector("dim3").unwrap().size, 12);
        assert!(Record::vector("float5").is_none());
        assert!(Record::vector("Node").is_none());
    }

    #[test]
    fn struct_padding_follows_c() {
        let f4 = Arc::new(Record::vector("float4").unwrap());
        // struct { float m; float4 v; float k; }: m at 0, v at 16 (its
        // alignment), k at 32, size 48 (a multiple of 16).
        let s = Record::structure(
            "P",
            vec![
                ("m".into(), FieldType::Scalar(Scalar::F32)),
                ("v".into(), FieldType::Record(f4)),
                ("k".into(), FieldType::Scalar(Scalar::F32)),
            ],
        )
        .unwrap();
        assert_eq!((s.size, s.align), (48, 16));
        assert_eq!(s.field("v").unwrap().offset, 16);
        assert_eq!(s.field("k").unwrap().offset, 32);
        assert_eq!(s.field("k").unwrap().slot, 5);
        assert_eq!(s.offsets, vec![0, 16, 20, 24, 28, 32]);
        // m, the float4 as one access, k.
        let bytes: Vec<u32> = s.pieces.iter().map(|p| p.bytes).collect();
        assert_eq!(bytes, vec![4, 16, 4]);
        // struct { float3 pos; float mass; }: 16 bytes, no padding.
        let f3 = Arc::new(Record::vector("float3").unwrap());
        let p = Record::structure(
            "Particle",
            vec![
                ("pos".into(), FieldType::Record(f3)),
                ("mass".into(), FieldType::Scalar(Scalar::F32)),
            ],
        )
        .unwrap();
        assert_eq!((p.size, p.align), (16, 4));
        // A char then an int would mix types: refused with a reason.
        let mixed = Record::structure(
            "M",
            vec![
                ("c".into(), FieldType::Scalar(Scalar::I8)),
                ("i".into(), FieldType::Scalar(Scalar::I32)),
            ],
        );
        assert!(mixed.unwrap_err().contains("mixes"));
    }
}
