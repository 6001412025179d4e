//! Index arithmetic that can overflow 32 bits for the sizes given: the
//! launch shape and the parameter file's arguments and `-D`-less symbols
//! (`-D` values are constants already). Each 32-bit `+`, `-`, `*`, `<<`
//! whose exact range leaves its type's, or an unsigned 32-bit value
//! converted to `int` above `INT_MAX` ([`Prepared::overflows`]).

use std::collections::BTreeMap;

use crate::bound::overflow::{Overflow, Range};
use crate::bound::Prepared;
use crate::ir::value::Scalar;
use crate::sim::params::LaunchSpec;

use super::{Code, Finding};

/// The findings of kernel `prep` with the inputs of `spec` (when given).
pub fn findings(prep: &Prepared, spec: Option<&LaunchSpec>) -> Vec<Finding> {
    let mut values = BTreeMap::new();
    if let Some(spec) = spec {
        for (name, &x) in spec.args.iter().chain(&spec.defines) {
            if x.fract() == 0.0 && x.abs() < 1e30 {
                values.insert(name.clone(), x as i128);
            }
        }
    }
    prep.overflows(&values)
        .iter()
        .map(|o| Finding {
            calls: prep.kernel.calls_reaching(o.span),
            ..finding(o)
        })
        .collect()
}

fn show((lo, hi): Range) -> String {
    if lo == hi {
        format!("{lo}")
    } else {
        format!("[{lo}, {hi}]")
    }
}

fn finding(o: &Overflow) -> Finding {
    let (ty, limit) = match o.ty {
        Scalar::U32 => ("unsigned int", "UINT_MAX = 4294967295"),
        _ => ("int", "INT_MAX = 2147483647"),
    };
    let past = if o.range.0 < i32::MIN as i128 && o.ty == Scalar::I32 {
        format!("down to {}, below INT_MIN = -2147483648", o.range.0)
    } else {
        format!("up to {}, above {limit}", o.range.1)
    };
    let what = match o.op {
        "conversion" => format!(
            "an unsigned int value in {} converted to int can reach {past}",
            show(o.range)
        ),
        op => {
            let operands: Vec<String> = o.operands.iter().map(|r| show(*r)).collect();
            format!(
                "`{op}` on {ty} operands in {} can reach {past}",
                operands.join(" and ")
            )
        }
    };
    Finding {
        code: Code::IndexOverflow,
        span: o.span,
        message: format!("32-bit index arithmetic can overflow for the sizes given: {what}"),
        why: match (o.op, o.ty) {
            ("conversion", _) => "the value wraps to a negative int, so an access indexed by it lands before the array".into(),
            (_, Scalar::I32) => "signed overflow is undefined behaviour, and an index that wraps reads or writes the wrong element".into(),
            _ => "the value wraps modulo 2^32, so an access indexed by it lands on the wrong element".into(),
        },
        help: Some(
            "compute the index in 64 bits: declare it `size_t` or `long long` and cast before multiplying, e.g. `(size_t)blockIdx.x * blockDim.x`".into(),
        ),
        worst: Some(o.range.1 as f64),
        site: None,
        calls: Vec::new(),
    }
}
