//! Initial array contents from a parameter file's description: zeros, a
//! constant, listed values or seeded random data, per component of an
//! array of structs.

use super::params::{self, InitKind, SplitMix};
use super::{ArrayData, InputError, MAX_ELEMENTS};
use crate::ir::{Scalar, Value};

/// Initial contents of array `a`'s storage. `len` elements of a struct
/// or vector array are `len` times its components, filled in memory order
/// (`a[0].x, a[0].y, …, a[1].x, …`) as one sequence, each value converted
/// to its component's type (a random fill draws each value as its
/// component's type would: a `float` field gets a real, an `int` field an
/// integer); then each `fields.NAME` fill replaces the components of
/// field `NAME` (all of a nested struct's), element by element, the same
/// way.
pub(super) fn fill_array(
    s: &params::ArraySpec,
    a: &crate::ir::Array,
) -> Result<ArrayData, InputError> {
    let slots = a.layout.slots();
    let whole = params::ArraySpec {
        len: s.len.saturating_mul(slots as u64),
        ..s.clone()
    };
    let mut data = fill_typed(&whole, &a.layout.types)?;
    for (name, f) in &s.fields {
        let hit = a.layout.field_slots(name);
        if hit.is_empty() {
            return Err(InputError::NoField {
                array: a.name.clone(),
                field: name.clone(),
                components: a.layout.names.join(", "),
            });
        }
        let types: Vec<Scalar> = hit.iter().map(|&k| a.slot_type(k)).collect();
        let values = fill_typed(&f.spec(s.len.saturating_mul(hit.len() as u64)), &types)?;
        let mut next = values.bits.into_iter();
        for i in 0..s.len as usize {
            for &k in &hit {
                if let Some(b) = next.next() {
                    data.bits[i * slots + k] = b;
                }
            }
        }
    }
    Ok(data)
}

/// `s.len` values filled as [`fill`] fills them, value `i` of type
/// `types[i % types.len()]`: the fill of each distinct type, picked per
/// value (a random fill draws one number per value whatever its type, so
/// this is one sequence).
pub fn fill_typed(s: &params::ArraySpec, types: &[Scalar]) -> Result<ArrayData, InputError> {
    let mut distinct: Vec<Scalar> = Vec::new();
    for t in types {
        if !distinct.contains(t) {
            distinct.push(*t);
        }
    }
    let mut per_type = Vec::new();
    for &t in &distinct {
        per_type.push(fill(s, t)?.bits);
    }
    let which: Vec<usize> = types
        .iter()
        .map(|t| distinct.iter().position(|d| d == t).unwrap_or(0))
        .collect();
    if let [bits] = per_type.as_mut_slice() {
        return Ok(ArrayData {
            types: types.to_vec(),
            bits: std::mem::take(bits),
        });
    }
    let bits = (0..s.len as usize)
        .map(|i| per_type[which[i % which.len()]][i])
        .collect();
    Ok(ArrayData {
        types: types.to_vec(),
        bits,
    })
}

/// A parameter file's number as an element of type `elem`: converted as C
/// converts a `double`, except that a 16-bit float goes through `float`
/// first, as the host conversions of `cuda_fp16.h` do (`copper bench`
/// fills the same way).
pub fn fill_value(x: f64, elem: Scalar) -> Value {
    let x = if elem.is_half() {
        Value::F(x).convert(Scalar::F32)
    } else {
        Value::F(x)
    };
    x.convert(elem)
}

/// Initial contents of an array.
pub fn fill(s: &params::ArraySpec, elem: Scalar) -> Result<ArrayData, InputError> {
    if s.len > MAX_ELEMENTS {
        return Err(InputError::ArrayTooLong(s.len));
    }
    let n = s.len as usize;
    let conv = |x: f64| fill_value(x, elem).to_bits();
    let bits: Vec<u64> = match s.init {
        InitKind::Zero => vec![conv(0.0); n],
        InitKind::Const => vec![conv(s.value); n],
        InitKind::Values => {
            if s.values.is_empty() && n > 0 {
                return Err(InputError::NoValues);
            }
            (0..n).map(|i| conv(s.values[i % s.values.len()])).collect()
        }
        InitKind::Random => {
            if s.min > s.max {
                return Err(InputError::EmptyRange {
                    min: s.min,
                    max: s.max,
                });
            }
            let mut g = SplitMix::new(s.seed);
            (0..n)
                .map(|_| {
                    if elem.is_float() {
                        conv(s.min + g.next_unit() * (s.max - s.min))
                    } else {
                        let (lo, span) = s.int_range();
                        conv(lo.wrapping_add((g.next_u64() % span) as i64) as f64)
                    }
                })
                .collect()
        }
    };
    Ok(ArrayData {
        types: vec![elem],
        bits,
    })
}
