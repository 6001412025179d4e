//! C++ text for values: literals of copper's scalar types, and the calls
//! that fill an array the way copper's simulator fills it
//! (`copper::sim::fill`), using the helpers of `fill.h`.

use copper::ir::{Scalar, Value};
use copper::sim::params::{ArraySpec, InitKind};
use copper::sim::InputError;

/// A C++ literal of type `ty` for `value` (already converted to `ty`).
pub fn literal(value: Value, ty: Scalar) -> String {
    match (ty, value) {
        (Scalar::F32, v) => float_literal(v.as_f64(), "float", "f"),
        (Scalar::F64, v) => float_literal(v.as_f64(), "double", ""),
        // Every 16-bit float is a float: converted exactly.
        (Scalar::F16, v) => format!("__float2half({})", float_literal(v.as_f64(), "float", "f")),
        (Scalar::BF16, v) => format!(
            "__float2bfloat16({})",
            float_literal(v.as_f64(), "float", "f")
        ),
        (Scalar::Bool, v) => if v.truthy() { "true" } else { "false" }.into(),
        (Scalar::U64, v) => format!("{}ull", v.as_i64() as u64),
        (Scalar::I64, v) => match v.as_i64() {
            i64::MIN => "(-9223372036854775807ll - 1)".into(),
            x => format!("{x}ll"),
        },
        (Scalar::U8 | Scalar::U16 | Scalar::U32, v) => format!("{}u", v.as_i64()),
        (Scalar::I8 | Scalar::I16 | Scalar::I32, v) => match v.as_i64() {
            x if x == i32::MIN as i64 => "(-2147483647 - 1)".into(),
            x => x.to_string(),
        },
    }
}

/// A floating-point literal that reads back as exactly `x` (`suffix` `f`
/// for `float`).
fn float_literal(x: f64, ty: &str, suffix: &str) -> String {
    if x.is_nan() {
        return format!("std::numeric_limits<{ty}>::quiet_NaN()");
    }
    if x.is_infinite() {
        let sign = if x < 0.0 { "-" } else { "" };
        return format!("{sign}std::numeric_limits<{ty}>::infinity()");
    }
    // Debug prints the shortest text that reads back as the same value,
    // always with a `.` or an exponent.
    let text = if suffix == "f" {
        format!("{:?}", x as f32)
    } else {
        format!("{x:?}")
    };
    format!("{text}{suffix}")
}

/// The statement that fills `len` elements at `dst` (a `ctype *`, the
/// elements being of copper type `elem`) as `spec` says, exactly as the
/// simulator fills them.
pub fn fill(
    spec: &ArraySpec,
    elem: Scalar,
    ctype: &str,
    dst: &str,
    len: &str,
) -> Result<String, InputError> {
    let conv = |x: f64| literal(copper::sim::fill_value(x, elem), elem);
    Ok(match spec.init {
        InitKind::Zero => format!("copper_fill_const<{ctype}>({dst}, {len}, {});", conv(0.0)),
        InitKind::Const => format!(
            "copper_fill_const<{ctype}>({dst}, {len}, {});",
            conv(spec.value)
        ),
        InitKind::Values => {
            if spec.values.is_empty() {
                return Err(InputError::NoValues);
            }
            let items: Vec<String> = spec.values.iter().map(|&x| conv(x)).collect();
            format!(
                "{{\n        static const {ctype} copper_values[] = {{{}}};\n        copper_fill_cycle<{ctype}>({dst}, {len}, copper_values, {});\n    }}",
                items.join(", "),
                items.len()
            )
        }
        InitKind::Random => {
            if spec.min > spec.max {
                return Err(InputError::EmptyRange {
                    min: spec.min,
                    max: spec.max,
                });
            }
            if elem.is_float() {
                format!(
                    "copper_fill_random_real<{ctype}>({dst}, {len}, {}ull, {}, {});",
                    spec.seed,
                    float_literal(spec.min, "double", ""),
                    float_literal(spec.max - spec.min, "double", "")
                )
            } else {
                let (lowest, count) = spec.int_range();
                format!(
                    "copper_fill_random_int<{ctype}>({dst}, {len}, {}ull, {}, {count}ull, {});",
                    spec.seed,
                    literal(Value::I(lowest), Scalar::I64),
                    elem == Scalar::U64
                )
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(init: InitKind) -> ArraySpec {
        ArraySpec {
            len: 8,
            len_expr: None,
            init,
            seed: 5,
            min: -1.5,
            max: 10.0,
            value: 2.5,
            values: vec![1.0, -2.0],
            fields: Default::default(),
        }
    }

    #[test]
    fn literals_of_every_type() {
        let cases = [
            (Value::F(0.1f32 as f64), Scalar::F32, "0.1f"),
            (Value::F(1.0), Scalar::F32, "1.0f"),
            (Value::F(1e20), Scalar::F64, "1e20"),
            (Value::F(-0.5), Scalar::F64, "-0.5"),
            (
                Value::F(f64::NAN),
                Scalar::F32,
                "std::numeric_limits<float>::quiet_NaN()",
            ),
            (
                Value::F(f64::NEG_INFINITY),
                Scalar::F64,
                "-std::numeric_limits<double>::infinity()",
            ),
            (Value::I(1), Scalar::Bool, "true"),
            (Value::I(-3), Scalar::I32, "-3"),
            (Value::I(i32::MIN as i64), Scalar::I32, "(-2147483647 - 1)"),
            (Value::I(7), Scalar::U32, "7u"),
            (Value::I(200), Scalar::U8, "200u"),
            (
                Value::I(i64::MIN),
                Scalar::I64,
                "(-9223372036854775807ll - 1)",
            ),
            (Value::I(-1), Scalar::U64, "18446744073709551615ull"),
        ];
        for (v, t, want) in cases {
            assert_eq!(literal(v, t), want, "{v:?} as {t:?}");
        }
        // Every float literal reads back as the same value.
        for x in [0.1, 1.0 / 3.0, 123456.789, 5e-324, f64::MAX] {
            let text = literal(Value::F(x), Scalar::F64);
            assert_eq!(text.parse::<f64>().unwrap(), x);
            let f = Value::F(x).convert(Scalar::F32).as_f64();
            if f.is_infinite() {
                continue;
            }
            let text = literal(Value::F(f), Scalar::F32);
            let back = text.trim_end_matches('f').parse::<f32>().unwrap();
            assert_eq!(back as f64, f);
        }
    }

    #[test]
    fn fill_code_for_each_init_kind() {
        let call =
            |k: InitKind, elem: Scalar, ctype: &str| fill(&spec(k), elem, ctype, "p", "n").unwrap();
        let cases = [
            (
                InitKind::Zero,
                Scalar::F32,
                "float",
                "copper_fill_const<float>(p, n, 0.0f);",
            ),
            (
                InitKind::Const,
                Scalar::I32,
                "int",
                "copper_fill_const<int>(p, n, 2);",
            ),
            (
                InitKind::Const,
                Scalar::F64,
                "real",
                "copper_fill_const<real>(p, n, 2.5);",
            ),
            (
                InitKind::Random,
                Scalar::F32,
                "float",
                "copper_fill_random_real<float>(p, n, 5ull, -1.5, 11.5);",
            ),
            // Integers: ceil(-1.5) = -1 to floor(10) = 10, 12 values.
            (
                InitKind::Random,
                Scalar::I32,
                "int",
                "copper_fill_random_int<int>(p, n, 5ull, -1ll, 12ull, false);",
            ),
        ];
        for (kind, elem, ctype, expected) in cases {
            assert_eq!(call(kind, elem, ctype), expected);
        }
        let values = call(InitKind::Values, Scalar::I32, "int");
        assert!(
            values.contains("static const int copper_values[] = {1, -2};"),
            "{values}"
        );
        assert!(
            values.contains("copper_fill_cycle<int>(p, n, copper_values, 2);"),
            "{values}"
        );
        assert!(call(InitKind::Random, Scalar::U64, "size_t").ends_with("true);"));
    }

    #[test]
    fn fill_rejects_what_the_simulator_rejects() {
        let mut s = spec(InitKind::Values);
        s.values.clear();
        assert!(fill(&s, Scalar::I32, "int", "p", "n")
            .unwrap_err()
            .to_string()
            .contains("non-empty"));
        let mut s = spec(InitKind::Random);
        s.min = 5.0;
        s.max = 1.0;
        assert!(fill(&s, Scalar::F32, "float", "p", "n")
            .unwrap_err()
            .to_string()
            .contains("range is empty"));
    }
}
