//! Parameter files: launch shape, scalar arguments and array contents for
//! each kernel of a `.cu` file (TOML).
//!
//! ```toml
//! [kernel.addSub0]
//! grid = [4, 1, 1]
//! block = [256, 1, 1]
//! [kernel.addSub0.args]
//! w = 64
//! [kernel.addSub0.arrays.A]
//! len = 65536       # or an expression over the args: "w * 1024"
//! init = "random"   # "random" | "zero" | "const" | "values"
//! seed = 1
//! min = 0
//! max = 100
//! [kernel.addSub0.defines]  # identifiers the file uses but never defines
//! N = 1024                  # (as nvcc -DN=1024 would)
//! ```

use std::collections::BTreeMap;

use serde::Deserialize;

use super::size_expr::SizeError;
use crate::launch::{Shape, ShapeError};

/// Why a parameter file cannot be read.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ParamsError {
    /// Not TOML, or not the parameter file's keys and types.
    #[error(transparent)]
    Toml(#[from] toml::de::Error),
    /// An array length expression without a value.
    #[error("kernel `{kernel}`, array `{array}`: len = \"{expr}\": {source}")]
    Length {
        /// The kernel.
        kernel: String,
        /// The array.
        array: String,
        /// The expression as written.
        expr: String,
        /// What is wrong with it.
        source: Box<SizeError>,
    },
}

/// Why a launch's length expression has no value once an argument changes
/// ([`LaunchSpec::with_arg`]).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("array `{array}`: len = \"{expr}\": {source}")]
pub struct ArgLengthError {
    /// The array.
    pub array: String,
    /// The expression as written.
    pub expr: String,
    /// What is wrong with it.
    pub source: SizeError,
}

error_message!(ParamsError, ArgLengthError);

/// How an array is filled before the launch.
#[derive(Clone, Debug, PartialEq, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum InitKind {
    /// Zeros.
    #[default]
    Zero,
    /// Uniform values from a seeded generator in `[min, max]`.
    Random,
    /// Every element `value`.
    Const,
    /// Explicit `values` (repeated if shorter than `len`).
    Values,
}

/// A kernel's name as a TOML key of `[kernel.…]`: quoted when it is not
/// a bare key (`"reduce<256>"`).
pub fn kernel_key(name: &str) -> String {
    if name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        name.to_string()
    } else {
        format!("\"{name}\"")
    }
}

/// Declares a struct with the fill settings of an array (`init`, `seed`,
/// `min`, `max`, `value`, `values`) between its own leading and trailing
/// fields, so that [`ArraySpec`] and [`FieldFill`] read the same keys from
/// one definition and each still refuses unknown keys, naming the keys it
/// accepts in file order.
macro_rules! with_fill_settings {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $($(#[$lead_meta:meta])* pub $lead:ident: $lead_ty:ty,)*
            ..
            $($(#[$tail_meta:meta])* pub $tail:ident: $tail_ty:ty,)*
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Debug, PartialEq, Deserialize)]
        #[serde(deny_unknown_fields)]
        pub struct $name {
            $($(#[$lead_meta])* pub $lead: $lead_ty,)*
            /// How to fill it.
            #[serde(default)]
            pub init: InitKind,
            /// Seed for `random`.
            #[serde(default)]
            pub seed: u64,
            /// Smallest random value.
            #[serde(default)]
            pub min: f64,
            /// Largest random value.
            #[serde(default = "default_max")]
            pub max: f64,
            /// Value for `const`.
            #[serde(default)]
            pub value: f64,
            /// Values for `values`.
            #[serde(default)]
            pub values: Vec<f64>,
            $($(#[$tail_meta])* pub $tail: $tail_ty,)*
        }
    };
}

with_fill_settings! {
    /// One array of a launch.
    pub struct ArraySpec {
        /// Number of elements (the value of [`ArraySpec::len_expr`] when the
        /// file writes the length as an expression).
        pub len: u64,
        /// The length as written, when it is an expression over the launch's
        /// scalar arguments (`len = "w * (h + 1)"`); re-evaluated when an
        /// argument changes ([`LaunchSpec::with_arg`]).
        #[serde(skip)]
        pub len_expr: Option<String>,
        ..
        /// For an array of structs or vectors: fills of single fields
        /// (`[kernel.K.arrays.nodes.fields.starting]`), each replacing the
        /// array's fill for that field's components.
        #[serde(default)]
        pub fields: BTreeMap<String, FieldFill>,
    }
}

with_fill_settings! {
    /// How one field of every element of a struct or vector array is filled:
    /// the fill settings of [`ArraySpec`], without a length.
    pub struct FieldFill {
        ..
    }
}

impl FieldFill {
    /// The array spec that fills `len` values this way.
    pub fn spec(&self, len: u64) -> ArraySpec {
        ArraySpec {
            len,
            len_expr: None,
            init: self.init.clone(),
            seed: self.seed,
            min: self.min,
            max: self.max,
            value: self.value,
            values: self.values.clone(),
            fields: BTreeMap::new(),
        }
    }
}

fn default_max() -> f64 {
    100.0
}

impl ArraySpec {
    /// The integers `random` draws from for an integer element type: the
    /// lowest, and how many (`min` rounded up to `max` rounded down, at
    /// least one). Element `i` is `lowest + next_u64() % count` (wrapping),
    /// converted through `f64` to the element type.
    pub fn int_range(&self) -> (i64, u64) {
        let (lo, hi) = (self.min.ceil() as i64, self.max.floor() as i64);
        let count = (hi as i128 - lo as i128 + 1).clamp(1, u64::MAX as i128) as u64;
        (lo, count)
    }
}

/// One kernel's launch.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LaunchSpec {
    /// `gridDim` (missing dimensions are 1).
    pub grid: Vec<u64>,
    /// `blockDim` (missing dimensions are 1).
    pub block: Vec<u64>,
    /// Bytes of dynamic shared memory (`extern __shared__`).
    #[serde(default)]
    pub shared_bytes: u64,
    /// Scalar arguments by parameter name; the fields of a struct passed
    /// by value as `p.w` (written `p.w = 3`, `p = { w = 3 }` or
    /// `"p.w" = 3`).
    #[serde(default, deserialize_with = "dotted_args")]
    pub args: BTreeMap<String, f64>,
    /// Arrays by parameter name.
    #[serde(default)]
    pub arrays: BTreeMap<String, ArraySpec>,
    /// Values of the identifiers the kernel uses without any definition
    /// (its symbols, [`crate::ir::VarKind::Symbol`]), by name.
    #[serde(default)]
    pub defines: BTreeMap<String, f64>,
}

/// A parameter file: one launch per kernel name.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ParamFile {
    /// Launches by kernel name.
    #[serde(default)]
    pub kernel: BTreeMap<String, LaunchSpec>,
}

impl ParamFile {
    /// Parses a parameter file; array lengths written as expressions are
    /// evaluated with their launch's arguments.
    pub fn from_toml(text: &str) -> Result<ParamFile, ParamsError> {
        let mut table: toml::Table = toml::from_str(text)?;
        let exprs = take_len_exprs(&mut table);
        let mut file: ParamFile = table.try_into()?;
        for (kernel, array, expr) in exprs {
            let spec = file.kernel.get_mut(&kernel).expect("kernel read");
            let len = match super::size_expr::eval(&expr, &spec.size_values()) {
                Ok(len) => len,
                Err(source) => {
                    return Err(ParamsError::Length {
                        kernel,
                        array,
                        expr,
                        source: Box::new(source),
                    })
                }
            };
            let a = spec.arrays.get_mut(&array).expect("array read");
            a.len = len;
            a.len_expr = Some(expr);
        }
        Ok(file)
    }
}

/// Replaces every `len = "expression"` by `len = 0` (evaluated once the
/// file is read) and returns where each was: (kernel, array, expression).
fn take_len_exprs(table: &mut toml::Table) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    let Some(toml::Value::Table(kernels)) = table.get_mut("kernel") else {
        return out;
    };
    for (kernel, launch) in kernels.iter_mut() {
        let Some(toml::Value::Table(arrays)) = launch.get_mut("arrays") else {
            continue;
        };
        for (array, spec) in arrays.iter_mut() {
            if let Some(toml::Value::String(expr)) = spec.get("len") {
                out.push((kernel.clone(), array.clone(), expr.clone()));
                spec["len"] = toml::Value::Integer(0);
            }
        }
    }
    out
}

impl LaunchSpec {
    /// The launch with scalar argument `name` set to `value` and every
    /// length expression evaluated again.
    /// (A name of [`LaunchSpec::defines`] sets that define.)
    pub fn with_arg(&self, name: &str, value: f64) -> Result<LaunchSpec, ArgLengthError> {
        let mut s = self.clone();
        match s.defines.get_mut(name) {
            Some(d) => *d = value,
            None => {
                s.args.insert(name.to_string(), value);
            }
        }
        let values = s.size_values();
        for (array, a) in s.arrays.iter_mut() {
            if let Some(expr) = &a.len_expr {
                a.len = super::size_expr::eval(expr, &values).map_err(|source| ArgLengthError {
                    array: array.clone(),
                    expr: expr.clone(),
                    source,
                })?;
            }
        }
        Ok(s)
    }

    /// The names a length expression may use: the scalar arguments and the
    /// defines.
    pub fn size_values(&self) -> BTreeMap<String, f64> {
        let mut v = self.args.clone();
        v.extend(self.defines.iter().map(|(k, x)| (k.clone(), *x)));
        v
    }

    /// Checks the launch against CUDA's limits.
    pub fn shape(&self) -> Result<Shape, ShapeError> {
        Shape::from_lists(&self.grid, &self.block)
    }
}

/// A deterministic generator (SplitMix64) for `random` arrays.
pub struct SplitMix(u64);

impl SplitMix {
    /// A generator from a seed.
    pub fn new(seed: u64) -> SplitMix {
        SplitMix(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A uniform float in `[0, 1)`.
    pub fn next_unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// A value under `args`: a number, or a table of a struct's fields.
#[derive(Deserialize)]
#[serde(untagged)]
enum ArgValue {
    Number(f64),
    Fields(BTreeMap<String, ArgValue>),
}

/// `args` with struct fields flattened to `p.w` names.
fn dotted_args<'de, D: serde::Deserializer<'de>>(d: D) -> Result<BTreeMap<String, f64>, D::Error> {
    fn flatten(prefix: &str, v: ArgValue, out: &mut BTreeMap<String, f64>) {
        match v {
            ArgValue::Number(x) => {
                out.insert(prefix.to_string(), x);
            }
            ArgValue::Fields(fields) => {
                for (k, v) in fields {
                    flatten(&format!("{prefix}.{k}"), v, out);
                }
            }
        }
    }
    let mut out = BTreeMap::new();
    for (k, v) in BTreeMap::<String, ArgValue>::deserialize(d)? {
        flatten(&k, v, &mut out);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_checks_shapes() {
        let p = ParamFile::from_toml(
            "[kernel.k]\ngrid=[2]\nblock=[128,2]\n[kernel.k.args]\nn=5\n[kernel.k.arrays.a]\nlen=10\ninit=\"random\"\nseed=3\n",
        )
        .unwrap();
        let k = &p.kernel["k"];
        assert_eq!(
            k.shape().unwrap(),
            Shape::checked([2, 1, 1], [128, 2, 1]).unwrap()
        );
        assert_eq!(k.arrays["a"].init, InitKind::Random);
        let bad = |g: &str, b: &str| {
            LaunchSpec {
                grid: serde_json::from_str(g).unwrap(),
                block: serde_json::from_str(b).unwrap(),
                shared_bytes: 0,
                args: BTreeMap::new(),
                arrays: BTreeMap::new(),
                defines: BTreeMap::new(),
            }
            .shape()
            .unwrap_err()
            .to_string()
        };
        assert!(bad("[0]", "[32]").contains("0 threads"));
        assert!(bad("[1]", "[2048]").contains("1024"));
        assert_eq!(
            bad("[1]", "[32,32,2]"),
            "a block of 32×32×2 threads is more than CUDA allows (2048 threads; at most 1024 a block)"
        );
        assert_eq!(
            bad("[]", "[32]"),
            "`grid` must have 1 to 3 dimensions, got 0"
        );
        assert!(ParamFile::from_toml("[kernel.k]\ngrid=[1]\nblock=[1]\nbogus=1\n").is_err());
    }

    #[test]
    fn arrays_and_field_fills_refuse_unknown_keys_naming_theirs() {
        let err = |extra: &str| {
            ParamFile::from_toml(&format!(
                "[kernel.k]\ngrid=[1]\nblock=[1]\n[kernel.k.arrays.a]\nlen=1\n{extra}\n"
            ))
            .unwrap_err()
            .to_string()
        };
        let array = err("bogus=1");
        assert!(
            array.contains("unknown field `bogus`, expected one of `len`, `init`, `seed`, `min`, `max`, `value`, `values`, `fields`"),
            "{array}"
        );
        let field = err("[kernel.k.arrays.a.fields.x]\nlen=1");
        assert!(
            field.contains("unknown field `len`, expected one of `init`, `seed`, `min`, `max`, `value`, `values`\nin `kernel.k.arrays.a.fields.x`"),
            "{field}"
        );
        let spec = ParamFile::from_toml(
            "[kernel.k]\ngrid=[1]\nblock=[1]\n[kernel.k.arrays.a]\nlen=2\n[kernel.k.arrays.a.fields.x]\ninit=\"const\"\nvalue=3\n",
        )
        .unwrap();
        let x = &spec.kernel["k"].arrays["a"].fields["x"];
        assert_eq!(
            (x.init.clone(), x.value, x.max),
            (InitKind::Const, 3.0, 100.0)
        );
    }

    #[test]
    fn lengths_may_be_expressions_over_the_args() {
        let text = "[kernel.k]\ngrid=[1]\nblock=[32]\n[kernel.k.args]\nw=4\nh=8\n\
                    [kernel.k.arrays.a]\nlen=\"w * (h + 1)\"\n[kernel.k.arrays.b]\nlen=3\n";
        let p = ParamFile::from_toml(text).unwrap();
        let k = &p.kernel["k"];
        assert_eq!(k.arrays["a"].len, 36);
        assert_eq!(k.arrays["a"].len_expr.as_deref(), Some("w * (h + 1)"));
        assert_eq!(
            (k.arrays["b"].len, k.arrays["b"].len_expr.clone()),
            (3, None)
        );
        let wider = k.with_arg("h", 15.0).unwrap();
        assert_eq!((wider.arrays["a"].len, wider.arrays["b"].len), (64, 3));
        assert_eq!(wider.args["h"], 15.0);
        let err = ParamFile::from_toml(&text.replace("w * (h + 1)", "w * x"))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("kernel `k`, array `a`") && err.contains("unknown argument `x`"),
            "{err}"
        );
        assert_eq!(
            k.with_arg("h", -9.0).unwrap_err().to_string(),
            "array `a`: len = \"w * (h + 1)\": `w * (h + 1)` is -32, a negative length"
        );
        // A user cannot set the expression field directly.
        assert!(ParamFile::from_toml(&text.replace("len=3", "len=3\nlen_expr=\"w\"")).is_err());
    }
}
