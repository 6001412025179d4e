//! Uncoalesced global accesses (GPUDrano), at the cost model's
//! granularity: a warp request is uncoalesced when it touches more sectors
//! than its active lanes would at consecutive elements from an aligned
//! start (lane `l` at element `l`).
//!
//! For an index `u + Σ c_d·threadIdx.d`, the lanes of each warp are split
//! into *ideal groups* of `sector / element` consecutive lane positions
//! (those that share a sector in the ideal access). Some set of active
//! lanes needs more sectors than ideal exactly when some ideal group can
//! touch two sectors; so the lint flags a site when, for an alignment of
//! `u` its congruence allows, some group spans a sector boundary, or an
//! unknown coefficient may separate a group's lanes. It is
//! *range-based* (`uncoalesced-global`) when no alignment of `u` avoids
//! that, *alignment-based* (`misaligned-global`) otherwise. Lanes in one
//! group may differ in `threadIdx.y` when blocks are narrower than a warp:
//! the enumeration follows the real lane order. Code that at most one
//! thread runs is coalesced.
//!
//! An index through a row/column split ([`crate::absint::divmod`]) is
//! classified by what the split proves: as the index the identity
//! `(x / n)·n + x % n = x` gives back, `misaligned-global` at worst for a
//! quotient of consecutive thread indices (`ids[i / dim]`: one run of
//! consecutive elements, its start unknown), `uncoalesced-global` for two
//! runs (`x % n`).
//!
//! Another index that is not affine (a select such as a stencil's clamped
//! `c == 0 ? c : c - 1`) is evaluated lane by lane when the block is known
//! ([`super::lanes`]), each lane taking every arm it may take. It is then
//! `uncoalesced-global` when, for some alignment of the shared part, the
//! lanes of one row of the block touch more sectors than consecutive
//! elements from any start would, `misaligned-global` when an ideal group
//! may straddle a sector boundary, and coalesced otherwise.

use crate::absint::deps::{Coef, Dep};
use crate::absint::divmod::WarpIndex;
use crate::absint::memory::{transactions, warps_of};
use crate::bound::Prepared;
use crate::cost::{Footprint, Hardware};
use crate::ir::Kernel;
use crate::launch::Dims;

use super::index::index_in;
use super::lanes::Lanes;
use super::{count, Code, Finding};
use crate::ir::sites::SitePaths;

/// How a warp's requests at one site can be served.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Coalescing {
    /// Never more sectors than ideal.
    Coalesced,
    /// Contiguous, but the start may be off a sector boundary.
    Misaligned,
    /// Spread over more sectors than ideal whatever the alignment.
    Uncoalesced,
}

/// Classifies an access with index dependence `dep` to elements of `elem`
/// bytes.
pub fn classify(dep: Dep, elem: u32, hw: &Hardware, block: Option<Dims>) -> Coalescing {
    let t = hw.transaction_bytes as i64;
    let e = elem as i64;
    if e == 0 || t % e != 0 {
        return Coalescing::Uncoalesced;
    }
    let Some((coefs, cong)) = dep.affine_parts() else {
        return Coalescing::Uncoalesced;
    };
    let warp = hw.warp_size as u64;
    let block = match block {
        Some(b) => b,
        // A warp-wide row (the hardware's warp is at most 32 lanes).
        None if coefs[1] == Coef::Known(0) && coefs[2] == Coef::Known(0) => {
            match crate::launch::block([warp, 1, 1]) {
                Ok(b) => b,
                Err(_) => return Coalescing::Uncoalesced,
            }
        }
        None => return Coalescing::Uncoalesced,
    };
    let per = t / e;
    let placed = coefs.contains(&Coef::Unknown);
    let mut verdict = Coalescing::Coalesced;
    for lanes in warps_of(block, warp) {
        for group in lanes.chunks(per as usize) {
            let key = |tid: &[i64; 3]| -> Vec<i64> {
                (0..3)
                    .filter(|&d| coefs[d] == Coef::Unknown)
                    .map(|d| tid[d])
                    .collect()
            };
            if group.iter().any(|x| key(x) != key(&group[0])) {
                return Coalescing::Uncoalesced;
            }
            let offs: Vec<i64> = group
                .iter()
                .map(|tid| {
                    (0..3)
                        .map(|d| match coefs[d] {
                            Coef::Known(c) => c * tid[d],
                            Coef::Unknown => 0,
                        })
                        .sum()
                })
                .collect();
            let spans = |u: i64| {
                let first = (offs[0] + u).div_euclid(per);
                offs.iter().any(|o| (o + u).div_euclid(per) != first)
            };
            if (0..per).all(spans) {
                return Coalescing::Uncoalesced;
            }
            if (0..per).any(|u| (placed || cong.admits_mod(u, per)) && spans(u)) {
                verdict = Coalescing::Misaligned;
            }
        }
    }
    verdict
}

/// The thread dimensions that vary within a warp of `block`; with the
/// block unknown, `threadIdx.x` and every dimension the index uses.
fn warp_dims(block: Option<Dims>, warp: u64, coefs: &[Coef; 3]) -> Vec<usize> {
    match block {
        Some(b) => (0..3)
            .filter(|&d| b[d] > 1 && b.to_array()[..d].iter().product::<u64>() < warp)
            .collect(),
        None => (0..3)
            .filter(|&d| d == 0 || coefs[d] != Coef::Known(0))
            .collect(),
    }
}

/// Why an index spreads a warp, in words.
fn why(dep: Dep, elem: u32, block: Option<Dims>, warp: u64) -> String {
    let names = ["threadIdx.x", "threadIdx.y", "threadIdx.z"];
    let Some((coefs, _)) = dep.affine_parts() else {
        return "the index is not a linear function of threadIdx (it depends on data or on a non-linear operation)".into();
    };
    let dims = warp_dims(block, warp, &coefs);
    let parts: Vec<String> = dims
        .iter()
        .map(|&d| match coefs[d] {
            Coef::Known(0) => format!("threads 1 apart in {} access the same element", names[d]),
            Coef::Known(c) => format!(
                "threads 1 apart in {} are {} ({} bytes) apart",
                names[d],
                count(c.unsigned_abs(), "element"),
                c.unsigned_abs() * elem as u64
            ),
            Coef::Unknown => format!(
                "threads 1 apart in {} are a run-time stride apart",
                names[d]
            ),
        })
        .collect();
    let narrow = match (block, dims.len() > 1) {
        (Some(b), true) => format!(
            " (blocks are {} threads wide, so a warp spans {} rows)",
            b[0],
            (warp / b[0]).max(1)
        ),
        (None, true) => {
            " (the block shape is unknown, so a warp may span several rows; give it with --block or a parameter file)".into()
        }
        _ => String::new(),
    };
    format!("{}{narrow}", parts.join("; "))
}

/// What a flagged access costs, in words: `worst` sectors for a whole warp
/// against `ideal` for consecutive elements, or, when a whole warp never
/// needs more than ideal, what a group of `per` lanes may need alone.
fn cost_words(worst: u64, ideal: u64, per: u64, bytes: u32) -> String {
    if worst > ideal {
        format!(
            "a warp may need up to {} where {ideal} would do",
            count(worst, &format!("{bytes}-byte sector"))
        )
    } else {
        format!(
            "a whole warp needs at most {} (no more than consecutive elements), but {per} lanes that would share a sector may touch more than one when only they are active",
            count(worst, &format!("{bytes}-byte sector"))
        )
    }
}

/// Classifies access `site` (elements of `elem` bytes) by evaluating its
/// index over the lanes of every warp of a known block, with its worst
/// sector count; `None` when the index cannot be followed.
fn by_lanes(
    kernel: &Kernel,
    sites: &SitePaths,
    site: usize,
    elem: u32,
    hw: &Hardware,
    block: Dims,
    grid: Option<Dims>,
) -> Option<(Coalescing, u64)> {
    let t = hw.transaction_bytes as i64;
    let e = elem as i64;
    if e == 0 || t % e != 0 {
        return None;
    }
    let per = t / e;
    let index = index_in(sites, kernel, site)?;
    let reads = |elems: &[i64]| hw.mem_reads(elems, Footprint::element(elem));
    let (mut kind, mut worst) = (Coalescing::Coalesced, 0);
    for tids in warps_of(block, hw.warp_size as u64) {
        let li = Lanes::new(kernel, block, grid, &tids).eval(index)?;
        for u in (0..per).filter(|&u| li.base.admits_mod(u, per)) {
            let all: Vec<i64> = li.offsets.iter().flatten().map(|o| o + u).collect();
            worst = worst.max(reads(&all));
            // Rows: lanes with the same threadIdx.y and .z.
            let mut rows: Vec<([i64; 2], Vec<i64>, Vec<i64>)> = Vec::new();
            for (lane, (tid, offs)) in tids.iter().zip(&li.offsets).enumerate() {
                let key = [tid[1], tid[2]];
                let at = match rows.iter().position(|r| r.0 == key) {
                    Some(p) => p,
                    None => {
                        rows.push((key, Vec::new(), Vec::new()));
                        rows.len() - 1
                    }
                };
                rows[at].1.push(lane as i64);
                rows[at].2.extend(offs.iter().map(|o| o + u));
            }
            let scattered = rows.iter().any(|(_, lanes, elems)| {
                let contiguous = (0..per)
                    .map(|s| reads(&lanes.iter().map(|l| l + s).collect::<Vec<_>>()))
                    .max()
                    .unwrap_or(0);
                reads(elems) > contiguous
            });
            let straddles = li.offsets.chunks(per as usize).any(|group| {
                let mut sectors = group.iter().flatten().map(|o| (o + u).div_euclid(per));
                let first = sectors.next();
                sectors.any(|s| Some(s) != first)
            });
            if scattered {
                kind = Coalescing::Uncoalesced;
            } else if straddles && kind == Coalescing::Coalesced {
                kind = Coalescing::Misaligned;
            }
        }
    }
    Some((kind, worst))
}

/// Classifies an access through what the row/column split of its index
/// tells ([`crate::absint::divmod`]), with its worst sector count: an
/// index the identity made exact as that index; one run of consecutive
/// elements (`ids[i / dim]`: the lanes' quotients are consecutive) never
/// needs more sectors than consecutive elements from some start, but its
/// start is unknown, so misaligned at worst; two runs may scatter.
fn by_split(
    split: WarpIndex,
    dep: Dep,
    fp: Footprint,
    hw: &Hardware,
    block: Option<Dims>,
) -> (Coalescing, u64) {
    let worst = transactions(dep, fp, hw, block).min(split.transactions(fp, hw, block));
    let kind = match split {
        WarpIndex::Exact(d) => classify(d, fp.width, hw, block),
        WarpIndex::OneRun => Coalescing::Misaligned,
        WarpIndex::TwoRuns => Coalescing::Uncoalesced,
    };
    (kind, worst)
}

/// The findings of every global access site of `kernel`.
pub fn findings(
    kernel: &Kernel,
    prep: &Prepared,
    hw: &Hardware,
    block: Option<Dims>,
    grid: Option<Dims>,
) -> Vec<Finding> {
    let warp = hw.warp_size as u64;
    let lanes = block.map_or(warp, |b| b.count().min(warp));
    let mut out = Vec::new();
    let sites = SitePaths::build(&kernel.body);
    for (i, site) in kernel.sites.iter().enumerate() {
        let array = &kernel.arrays[site.array];
        if !array.is_global()
            || site.span.is_synthetic()
            || prep.single_thread(i)
            || prep.unreachable(i)
        {
            continue;
        }
        let fp = array.footprint(site);
        let dep = prep.index_dep(i);
        if fp.width != fp.element {
            out.extend(field_finding(array, site, i, dep, hw, block, lanes));
            continue;
        }
        let elem = fp.width;
        let lane_wise = match (dep.affine_parts(), block) {
            (None, Some(b)) => by_lanes(kernel, &sites, i, elem, hw, b, grid),
            _ => None,
        };
        let (kind, worst) = lane_wise
            .or_else(|| Some(by_split(prep.index_split(i)?, dep, fp, hw, block)))
            .unwrap_or_else(|| {
                (
                    classify(dep, elem, hw, block),
                    transactions(dep, fp, hw, block),
                )
            });
        let what = if site.is_write { "store to" } else { "load of" };
        let ideal = (lanes * elem as u64).div_ceil(hw.transaction_bytes as u64);
        let bytes = hw.transaction_bytes;
        let per = (bytes / elem.max(1)).max(1) as u64;
        let (code, message, why, help) = match kind {
            Coalescing::Coalesced => continue,
            Coalescing::Uncoalesced => (
                Code::UncoalescedGlobal,
                format!(
                    "uncoalesced global {what} `{}`: {}",
                    array.name,
                    cost_words(worst, ideal, per, bytes)
                ),
                match (lane_wise, block) {
                    (Some(_), Some(b)) => format!("evaluated lane by lane in {b} blocks, the lanes of one row of a block touch more sectors than consecutive elements would"),
                    _ => why(dep, elem, block, warp),
                },
                "make consecutive threads access consecutive elements (swap the roles of the thread index and the loop counter), or stage the data through shared memory".to_string(),
            ),
            Coalescing::Misaligned => {
                let (mwhy, mhelp) = misaligned_why(dep, per, bytes);
                (
                    Code::MisalignedGlobal,
                    format!(
                        "misaligned global {what} `{}`: {}",
                        array.name,
                        cost_words(worst, ideal, per, bytes)
                    ),
                    mwhy,
                    mhelp,
                )
            }
        };
        out.push(Finding {
            code,
            span: site.span,
            message,
            why,
            help: Some(help),
            worst: Some(worst as f64),
            site: Some(i),
            calls: site.call.into_iter().collect(),
        });
    }
    out
}

/// Why an access whose lanes read consecutive elements may start off a
/// sector boundary, and the fix for it (`per` elements to a sector of
/// `bytes`): rows of a run-time length (an unknown `threadIdx.y` or `.z`
/// coefficient), a constant offset (the index's uniform part known modulo
/// `per`, not a multiple of it), or neither known.
fn misaligned_why(dep: Dep, per: u64, bytes: u32) -> (String, String) {
    let per_i = per.max(1) as i64;
    let Some((k, cong)) = dep.affine_parts() else {
        return (
            "consecutive threads access consecutive elements, but the start is not known to lie on a sector boundary".into(),
            format!("start each warp's run at a multiple of {per} elements (pad rows to a multiple of {bytes} bytes)"),
        );
    };
    if k[1..].contains(&Coef::Unknown) {
        return (
            format!("consecutive threads access consecutive elements, but a warp spans rows of a run-time length, and each row starts on a sector boundary only when that length is a multiple of {per} elements"),
            format!("allocate the rows with a pitch that is a multiple of {per} elements ({bytes} bytes; `cudaMallocPitch`) and index rows with it, or keep the row length a multiple of {per}"),
        );
    }
    let m = cong.modulus();
    let offset = (m == 0 || m % per_i == 0)
        .then(|| cong.residue().rem_euclid(per_i))
        .filter(|r| *r != 0);
    match offset {
        Some(r) => (
            format!(
                "consecutive threads access consecutive elements, but each warp's run starts {} past a {bytes}-byte sector boundary (a constant offset in the index)",
                count(r as u64, "element")
            ),
            format!("let each warp start at a multiple of {per} elements: read the aligned run and take the neighbour from the next lane (`__shfl_down_sync`) or from shared memory"),
        ),
        None => (
            format!("consecutive threads access consecutive elements, but the start depends on a run-time value (an offset or a row length) that copper cannot show to be a multiple of {per} elements"),
            format!("keep the offsets and row lengths multiples of {per} elements (pad rows to {bytes} bytes), or pass them as multiples of {per}"),
        ),
    }
}

/// The finding of a vector view (`reinterpret_cast<float4 *>(p)[i]`) whose
/// lanes may take `worst` sectors where consecutive vectors take `ideal`.
fn view_finding(
    array: &crate::ir::Array,
    site: &crate::ir::Site,
    i: usize,
    fp: crate::cost::Footprint,
    worst: u64,
    ideal: u64,
    hw: &Hardware,
) -> Finding {
    let what = if site.is_write { "store to" } else { "load of" };
    Finding {
        code: Code::UncoalescedGlobal,
        span: site.span,
        message: format!(
            "uncoalesced global {what} `{}` through a {}-byte vector view: a warp may need up to {worst} {}-byte sectors where {ideal} would do",
            array.name, fp.width, hw.transaction_bytes
        ),
        why: format!(
            "the lanes do not access consecutive {}-byte vectors at a multiple of {} elements",
            fp.width,
            fp.lane_step()
        ),
        help: Some("make consecutive threads access consecutive vectors, at an index the analysis can prove a multiple of the vector's components".into()),
        calls: site.call.into_iter().collect(),
        worst: Some(worst as f64),
        site: Some(i),
    }
}

/// A field of a struct or vector element (`nodes[i].starting`, `v[i].y`):
/// flagged when a warp may touch more sectors than its lanes would
/// reading the field of consecutive, aligned elements.
fn field_finding(
    array: &crate::ir::Array,
    site: &crate::ir::Site,
    i: usize,
    dep: Dep,
    hw: &Hardware,
    block: Option<Dims>,
    lanes: u64,
) -> Option<Finding> {
    let fp = array.footprint(site);
    let worst = transactions(dep, fp, hw, block);
    let consecutive: Vec<i64> = (0..lanes as i64).map(|l| l * fp.lane_step()).collect();
    let ideal = hw.mem_reads(&consecutive, fp);
    if worst <= ideal {
        return None;
    }
    let what = if site.is_write { "store to" } else { "load of" };
    if fp.lane_step() > 1 {
        return Some(view_finding(array, site, i, fp, worst, ideal, hw));
    }
    Some(Finding {
        code: Code::UncoalescedGlobal,
        span: site.span,
        message: format!(
            "uncoalesced global {what} a field of `{}`: a warp may need up to {worst} {}-byte sectors where {ideal} would do",
            array.name, hw.transaction_bytes
        ),
        why: format!(
            "the lanes do not read the field ({} of the {} bytes of each element) of consecutive, aligned elements",
            fp.width, fp.element
        ),
        help: Some("make consecutive threads access consecutive elements; a field alone also reads the other fields' sectors, so a struct of arrays serves it with fewer".into()),
        calls: site.call.into_iter().collect(),
        worst: Some(worst as f64),
        site: Some(i),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::absint::congruence::Cong;

    fn aff(x: Coef, y: Coef, cong: Cong) -> Dep {
        Dep::Affine([x, y, Coef::Known(0)], cong)
    }

    #[test]
    fn range_alignment_and_coalesced() {
        let hw = Hardware::default();
        let b = crate::launch::block([256, 1, 1]).ok();
        let k = Coef::Known;
        assert_eq!(classify(Dep::UNIFORM, 4, &hw, b), Coalescing::Coalesced);
        assert_eq!(classify(Dep::Varying, 4, &hw, b), Coalescing::Uncoalesced);
        // blockIdx.x·256 + threadIdx.x: aligned.
        let at = |m, r| aff(k(1), k(0), Cong::new(m, r));
        assert_eq!(classify(at(256, 0), 4, &hw, b), Coalescing::Coalesced);
        assert_eq!(classify(at(256, 1), 4, &hw, b), Coalescing::Misaligned);
        assert_eq!(classify(at(1, 0), 4, &hw, b), Coalescing::Misaligned);
        // Stride 2 floats: range-based.
        assert_eq!(
            classify(aff(k(2), k(0), Cong::ANY), 4, &hw, b),
            Coalescing::Uncoalesced
        );
        // A run-time row stride (Fan2's N·x).
        assert_eq!(
            classify(aff(Coef::Unknown, k(0), Cong::ANY), 4, &hw, b),
            Coalescing::Uncoalesced
        );
    }

    #[test]
    fn narrow_blocks_use_the_second_dimension() {
        let hw = Hardware::default();
        // 16×16 block, a[y·n + x] with unknown n: each row of 16 is two
        // sectors' worth, aligned or not as n says.
        let rows = Dep::Affine(
            [Coef::Known(1), Coef::Unknown, Coef::Known(0)],
            Cong::exact(0),
        );
        assert_eq!(
            classify(rows, 4, &hw, crate::launch::block([16, 16, 1]).ok()),
            Coalescing::Misaligned
        );
        // 4×8 block: rows of 4 floats = half a sector, so groups of 8 lanes
        // mix two rows an unknown stride apart.
        assert_eq!(
            classify(rows, 4, &hw, crate::launch::block([4, 8, 1]).ok()),
            Coalescing::Uncoalesced
        );
        // x·n + y in a 16×16 block (a transpose's write).
        let cols = Dep::Affine([Coef::Unknown, Coef::Known(1), Coef::Known(0)], Cong::ANY);
        assert_eq!(
            classify(cols, 4, &hw, crate::launch::block([16, 16, 1]).ok()),
            Coalescing::Uncoalesced
        );
    }
}
