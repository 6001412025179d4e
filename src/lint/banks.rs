//! Shared-memory bank conflicts: every shared access whose worst-case
//! conflict degree (one plus the wavefronts beyond one per phase of a warp
//! request, `crate::absint::memory::conflicts`) is above what consecutive
//! lanes at consecutive elements take.

use crate::absint::deps::{Coef, Dep};
use crate::absint::memory::conflicts;
use crate::bound::Prepared;
use crate::cost::{Footprint, Hardware};
use crate::ir::Kernel;
use crate::launch::Dims;

use super::{Code, Finding};

/// Why an index may conflict, in words.
fn why(dep: Dep, elem: u32, len: Option<u64>, hw: &Hardware) -> String {
    match dep.affine_parts() {
        None => {
            let cap = len.map_or(String::new(), |l| {
                let words = (l * elem as u64).div_ceil(hw.bank_bytes as u64);
                format!(
                    "; the array's {words} words put at most {} in each bank",
                    words.div_ceil(hw.banks as u64)
                )
            });
            format!("the index depends on data (or is not linear in threadIdx): lanes may pick different words of one bank{cap}")
        }
        Some((coefs, _)) => {
            let strides: Vec<String> = coefs
                .iter()
                .zip(["threadIdx.x", "threadIdx.y", "threadIdx.z"])
                .filter_map(|(c, n)| match c {
                    Coef::Known(0) => None,
                    Coef::Known(c) => Some(format!("{n} has stride {c} elements")),
                    Coef::Unknown => Some(format!("{n} has a run-time stride")),
                })
                .collect();
            format!(
                "{}: lanes of a warp meet in the same bank at different words ({} banks of {} bytes)",
                strides.join(", "),
                hw.banks,
                hw.bank_bytes
            )
        }
    }
}

/// The findings of every shared access site of `kernel`.
pub fn findings(
    kernel: &Kernel,
    prep: &Prepared,
    hw: &Hardware,
    block: Option<Dims>,
) -> Vec<Finding> {
    let mut out = Vec::new();
    for (i, site) in kernel.sites.iter().enumerate() {
        let array = &kernel.arrays[site.array];
        if !array.is_shared()
            || site.span.is_synthetic()
            || prep.single_thread(i)
            || prep.unreachable(i)
        {
            continue;
        }
        let dep = prep.index_dep(i);
        let fp = array.footprint(site);
        let degree = conflicts(dep, fp, array.fixed_len(), hw, block);
        let len = array.index_len(site);
        // The degree of the same access by consecutive lanes at
        // consecutive elements: 1 for the default hardware at any width
        // (wider accesses are served in phases).
        let lanes = block.map_or(hw.warp_size as u64, |b| b.count().min(hw.warp_size as u64));
        let ids: Vec<usize> = (0..lanes as usize).collect();
        let consecutive: Vec<i64> = (0..lanes as i64).collect();
        let ideal = hw
            .conflicts(&ids, &consecutive, Footprint::element(fp.width))
            .max(1);
        if degree <= ideal {
            continue;
        }
        let what = if site.is_write { "store to" } else { "load of" };
        let size = array.layout.size;
        // A 4-byte field of a struct or vector element at an odd element
        // stride of threadIdx.x: the conflict comes from the element's size,
        // which padding rows cannot change, and one array per field puts
        // the lanes an odd number of words apart (no conflict).
        let odd_x = matches!(dep.affine_parts(), Some(([Coef::Known(c), ..], _)) if c % 2 != 0);
        let help = if array.layout.slots() > 1 && fp.width == 4 && odd_x {
            format!(
                "store each field in its own `__shared__` array (structure of arrays): lanes then read words an odd stride apart in place of {size}-byte elements"
            )
        } else if dep.affine_parts().is_some() {
            "pad the array's rows by one word (e.g. [N][M + 1]) or change the stride to an odd number of words".to_string()
        } else {
            "run `copper lint --witness` for inputs that reach this degree".to_string()
        };
        out.push(Finding {
            code: Code::BankConflict,
            span: site.span,
            message: format!(
                "shared {what} `{}` may be a {degree}-way bank conflict ({degree} transactions per warp request where {ideal} would do)",
                array.name
            ),
            why: why(dep, fp.stride, len, hw),
            help: Some(help),
            worst: Some(degree as f64),
            site: Some(i),
            calls: site.call.into_iter().collect(),
        });
    }
    out
}
