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
//!
//! Each component keeps its own scalar type ([`Record::types`]), so a
//! struct may mix `int`, `float`, `double` and `char` fields: an array of
//! them stores one value per component, each read and written with its
//! field's C semantics.

use std::sync::Arc;

use super::{Layout, Scalar};

/// Why a struct has no layout.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RecordError {
    /// Two fields of one name.
    #[error("struct `{name}` has two fields named `{field}`")]
    DuplicateField {
        /// The struct.
        name: String,
        /// The field.
        field: String,
    },
    /// A struct without fields.
    #[error("struct `{0}` has no fields")]
    NoFields(String),
    /// A struct too large to flatten (a huge array member).
    #[error("struct `{name}` has {slots} scalar components (its array members included); copper handles at most {MAX_SLOTS} per struct")]
    TooLarge {
        /// The struct.
        name: String,
        /// Its components, or `u64::MAX` past that.
        slots: u64,
    },
}

/// The most scalar components one struct may have: each is a variable or
/// a stored value of its own, and a whole copy one access per piece.
pub const MAX_SLOTS: u64 = 4096;

error_message!(RecordError);

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
    /// The scalar type of each component, in memory order.
    pub types: Vec<Scalar>,
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
    /// A fixed-size array member (`float v[4]`; `float m[3][3]` is an
    /// array of arrays): `len` elements of `elem`, one after another.
    Array {
        /// The element type.
        elem: Box<FieldType>,
        /// Number of elements.
        len: u32,
    },
}

impl FieldType {
    /// Number of scalar components.
    pub fn slots(&self) -> usize {
        match self {
            FieldType::Scalar(_) => 1,
            FieldType::Record(r) => r.offsets.len(),
            FieldType::Array { elem, len } => elem.slots() * *len as usize,
        }
    }

    /// `sizeof` and `alignof` (an array is aligned like its elements).
    pub fn size_align(&self) -> (u32, u32) {
        match self {
            FieldType::Scalar(s) => (s.size(), s.size()),
            FieldType::Record(r) => (r.size, r.align),
            FieldType::Array { elem, len } => {
                let (size, align) = elem.size_align();
                (size * len, align)
            }
        }
    }

    /// An array of `len` elements of `elem`, unless its size or its
    /// components exceed what copper handles.
    pub fn array(elem: FieldType, len: u64) -> Option<FieldType> {
        let (size, _) = elem.size_align();
        let slots = (elem.slots() as u64).checked_mul(len)?;
        let bytes = u64::from(size).checked_mul(len)?;
        (len > 0 && slots <= MAX_SLOTS && bytes <= u64::from(u32::MAX)).then(|| FieldType::Array {
            elem: Box::new(elem),
            len: len as u32,
        })
    }

    /// The memory accesses of a whole copy, relative to the value's start.
    pub fn pieces(&self) -> Vec<Piece> {
        self.flatten().3
    }

    /// The scalar type, byte offset and name suffix of each component,
    /// and the pieces of a whole copy, relative to the value's start.
    fn flatten(&self) -> (Vec<Scalar>, Vec<u32>, Vec<String>, Vec<Piece>) {
        match self {
            FieldType::Scalar(s) => (
                vec![*s],
                vec![0],
                vec![String::new()],
                vec![Piece {
                    slot: 0,
                    slots: 1,
                    offset: 0,
                    bytes: s.size(),
                }],
            ),
            FieldType::Record(r) => {
                let mut names = Vec::new();
                r.component_names("", &mut names);
                let names = names.into_iter().map(|n| format!(".{n}")).collect();
                (r.types.clone(), r.offsets.clone(), names, r.pieces.clone())
            }
            FieldType::Array { elem, len } => {
                let (types, offsets, names, pieces) = elem.flatten();
                let (size, _) = elem.size_align();
                let n = types.len();
                let mut out = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
                for i in 0..*len {
                    out.0.extend(&types);
                    out.1.extend(offsets.iter().map(|o| o + i * size));
                    out.2.extend(names.iter().map(|s| format!("[{i}]{s}")));
                    out.3.extend(pieces.iter().map(|p| Piece {
                        slot: p.slot + i as usize * n,
                        offset: p.offset + i * size,
                        ..*p
                    }));
                }
                out
            }
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
    /// The CUDA vector type `name` (`float4`, `uchar4`, `dim3`, `__half2`,
    /// …), if it is one.
    pub fn vector(name: &str) -> Option<Record> {
        match name {
            "dim3" => return Some(Record::vector_of("dim3", Scalar::U32, 3)),
            "__half2" | "half2" => return Some(Record::vector_of(name, Scalar::F16, 2)),
            "__nv_bfloat162" | "nv_bfloat162" => {
                return Some(Record::vector_of(name, Scalar::BF16, 2))
            }
            _ => {}
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
            types: vec![elem; n],
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
    /// Fields may have different scalar types, and be arrays.
    pub fn structure(name: &str, fields: Vec<(String, FieldType)>) -> Result<Record, RecordError> {
        let slots = fields
            .iter()
            .try_fold(0u64, |n, (_, ty)| n.checked_add(ty.slots() as u64))
            .unwrap_or(u64::MAX);
        if slots > MAX_SLOTS {
            return Err(RecordError::TooLarge {
                name: name.to_string(),
                slots,
            });
        }
        let mut out = Record {
            name: name.to_string(),
            size: 0,
            align: 1,
            fields: Vec::new(),
            offsets: Vec::new(),
            types: Vec::new(),
            pieces: Vec::new(),
        };
        for (fname, ty) in fields {
            if out.fields.iter().any(|f| f.name == fname) {
                return Err(RecordError::DuplicateField {
                    name: name.to_string(),
                    field: fname,
                });
            }
            let (size, align) = ty.size_align();
            let offset = out.size.next_multiple_of(align);
            let slot = out.offsets.len();
            let (inner_types, inner_offsets, _, inner_pieces) = ty.flatten();
            out.types.extend(inner_types);
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
        if out.fields.is_empty() {
            return Err(RecordError::NoFields(name.to_string()));
        }
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
            types: self.types.clone(),
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
            let (_, _, suffixes, _) = f.ty.flatten();
            out.extend(suffixes.iter().map(|s| format!("{name}{s}")));
        }
    }

    /// Whether some field, at any depth, is an array.
    pub fn has_array(&self) -> bool {
        self.fields.iter().any(|f| match &f.ty {
            FieldType::Array { .. } => true,
            FieldType::Record(r) => r.has_array(),
            FieldType::Scalar(_) => false,
        })
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
        assert_eq!((c4.size, c4.align, c4.types[0]), (4, 4, Scalar::U8));
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
    }

    fn scalar(name: &str, s: Scalar) -> (String, FieldType) {
        (name.into(), FieldType::Scalar(s))
    }

    fn vector(name: &str, v: &str) -> (String, FieldType) {
        (
            name.into(),
            FieldType::Record(Arc::new(Record::vector(v).unwrap())),
        )
    }

    /// Mixed structs, laid out as nvcc lays them out (the same structs are
    /// checked with `static_assert` in `testdata/struct_layouts.cu`).
    #[test]
    fn mixed_structs_follow_c() {
        // struct Node { int start; int degree; float weight; }: 12 bytes.
        let node = Record::structure(
            "Node",
            vec![
                scalar("start", Scalar::I32),
                scalar("degree", Scalar::I32),
                scalar("weight", Scalar::F32),
            ],
        )
        .unwrap();
        assert_eq!((node.size, node.align), (12, 4));
        assert_eq!(node.types, vec![Scalar::I32, Scalar::I32, Scalar::F32]);
        // struct Particle { float3 pos; float3 vel; float mass; int id; }:
        // 32 bytes, the int at 28.
        let p = Record::structure(
            "Particle",
            vec![
                vector("pos", "float3"),
                vector("vel", "float3"),
                scalar("mass", Scalar::F32),
                scalar("id", Scalar::I32),
            ],
        )
        .unwrap();
        assert_eq!((p.size, p.align), (32, 4));
        assert_eq!(p.field("id").unwrap().offset, 28);
        assert_eq!(p.types[6..], [Scalar::F32, Scalar::I32]);
        // struct Mixed { char tag; double value; int count; }: the double
        // aligned to 8, then the int, then 4 bytes of tail padding.
        let m = Record::structure(
            "Mixed",
            vec![
                scalar("tag", Scalar::I8),
                scalar("value", Scalar::F64),
                scalar("count", Scalar::I32),
            ],
        )
        .unwrap();
        assert_eq!((m.size, m.align), (24, 8));
        assert_eq!(m.offsets, vec![0, 8, 16]);
        // struct Tagged { int key; float2 uv; }: the float2 aligned to 8.
        let t = Record::structure(
            "Tagged",
            vec![scalar("key", Scalar::I32), vector("uv", "float2")],
        )
        .unwrap();
        assert_eq!((t.size, t.align), (16, 8));
        assert_eq!(t.offsets, vec![0, 8, 12]);
        let bytes: Vec<u32> = t.pieces.iter().map(|p| p.bytes).collect();
        assert_eq!(bytes, vec![4, 8]);
        // struct Pair { short lo; unsigned char flag; }: 4 bytes.
        let pair = Record::structure(
            "Pair",
            vec![scalar("lo", Scalar::I16), scalar("flag", Scalar::U8)],
        )
        .unwrap();
        assert_eq!((pair.size, pair.align), (4, 2));
        assert_eq!(
            Record::structure("E", vec![]).unwrap_err().to_string(),
            "struct `E` has no fields"
        );
    }

    fn array(name: &str, elem: FieldType, len: u64) -> (String, FieldType) {
        (name.into(), FieldType::array(elem, len).unwrap())
    }

    /// Structs with array members, laid out as nvcc lays them out (the
    /// same structs are checked with `static_assert` and `offsetof` in
    /// `testdata/struct_array_layouts.cu`).
    #[test]
    fn array_members_follow_c() {
        let f32 = || FieldType::Scalar(Scalar::F32);
        // struct Cell { float v[4]; int n; }: 20 bytes, n at 16.
        let cell = Record::structure("Cell", vec![array("v", f32(), 4), scalar("n", Scalar::I32)])
            .unwrap();
        assert_eq!((cell.size, cell.align), (20, 4));
        assert_eq!(cell.offsets, vec![0, 4, 8, 12, 16]);
        assert_eq!(cell.field("n").unwrap().slot, 4);
        assert_eq!(cell.pieces.len(), 5);
        let names: Vec<String> = cell.layout().names;
        assert_eq!(names, ["v[0]", "v[1]", "v[2]", "v[3]", "n"]);
        assert!(cell.has_array());
        // struct Wide { char tag; double d[2]; int c; }: d aligned to 8,
        // c at 24, 4 bytes of tail padding.
        let wide = Record::structure(
            "Wide",
            vec![
                scalar("tag", Scalar::I8),
                array("d", FieldType::Scalar(Scalar::F64), 2),
                scalar("c", Scalar::I32),
            ],
        )
        .unwrap();
        assert_eq!((wide.size, wide.align), (32, 8));
        assert_eq!(wide.offsets, vec![0, 8, 16, 24]);
        // struct Mat { float m[3][3]; char f; }: m[1][2] at 20, f at 36,
        // size 40.
        let row = FieldType::array(f32(), 3).unwrap();
        let mat =
            Record::structure("Mat", vec![array("m", row, 3), scalar("f", Scalar::I8)]).unwrap();
        assert_eq!((mat.size, mat.align), (40, 4));
        assert_eq!(mat.offsets[5], 20);
        assert_eq!(mat.layout().names[5], "m[1][2]");
        assert_eq!(mat.field("f").unwrap().offset, 36);
        // struct Short { char c[3]; short s; }: s at 4, size 6.
        let short = Record::structure(
            "Short",
            vec![
                array("c", FieldType::Scalar(Scalar::I8), 3),
                scalar("s", Scalar::I16),
            ],
        )
        .unwrap();
        assert_eq!((short.size, short.align), (6, 2));
        assert_eq!(short.field("s").unwrap().offset, 4);
        // struct Uv { float2 uv[3]; int id; }: each float2 one 8-byte
        // piece, id at 24, size 32.
        let f2 = FieldType::Record(Arc::new(Record::vector("float2").unwrap()));
        let uv =
            Record::structure("Uv", vec![array("uv", f2, 3), scalar("id", Scalar::I32)]).unwrap();
        assert_eq!((uv.size, uv.align), (32, 8));
        let bytes: Vec<u32> = uv.pieces.iter().map(|p| p.bytes).collect();
        assert_eq!(bytes, vec![8, 8, 8, 4]);
        assert_eq!(uv.layout().names[5], "uv[2].y");
        // A 2^20-element member is refused, by its size in components.
        assert!(FieldType::array(f32(), 1 << 20).is_none());
        let big = Record::structure(
            "Big",
            vec![array("a", f32(), 4096), scalar("n", Scalar::I32)],
        );
        assert!(big
            .unwrap_err()
            .to_string()
            .contains("4097 scalar components"));
    }
}
