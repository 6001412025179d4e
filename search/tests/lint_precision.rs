//! Precision and recall of `copper lint` against the simulator over every
//! testdata kernel with a parameter file.
//!
//! The simulator's verdict per access site, over two launches: the
//! parameter file's, and the same with every integer argument one larger
//! (arrays grown until the kernel runs in bounds), so that a row length
//! the parameter file happens to make a multiple of 8 elements is also
//! seen at one that is not (a finding holds when some launch shows it):
//! - a **global** site is *uncoalesced* when some warp request there took
//!   more sectors than its active lanes would at consecutive elements from
//!   an aligned start (lane `l` at element `l`; `SiteStats::uncoalesced`).
//!   Duplicate elements (broadcasts) and inactive lanes are not the
//!   access's fault: the same lanes reading consecutive elements is the
//!   yardstick. Alignment counts: a contiguous warp starting one element
//!   into a sector needs one sector more;
//! - a **shared** site is *conflicted* when some request's conflict degree
//!   was above 1 (accesses wider than a bank word are served in phases: a
//!   warp of consecutive `float4`s has degree 1).
//!
//! Per code, a global site the simulator saw uncoalesced is *scattered*
//! when some request took more sectors than the same lanes at consecutive
//! elements from any start (`SiteStats::scattered`: more than misalignment
//! explains), and *misaligned* otherwise. `uncoalesced-global` is scored
//! against scattered sites, `misaligned-global` against misaligned ones.
//!
//! The lint flags a global site with `uncoalesced-global` or
//! `misaligned-global`, a shared site with `bank-conflict`, once per
//! place (the sites of one struct copy, and the load and the store of a
//! `+=`, share its finding). Sites the
//! launch never executes are left out (nothing to compare). Recall must be
//! 1 (the lint is sound: every site the simulator sees uncoalesced or
//! conflicted is flagged); precision is what the worst cases over all
//! inputs and launches cost on these particular ones.

use std::path::Path;

use copper::cuda::parse::parse_path;
use copper::ir::lower::lower_kernel;
use copper::ir::Kernel;
use copper::lint::{lint_kernel, Code};
use copper::sim::params::LaunchSpec;
use copper::sim::test_launch::run_original;
use copper::sim::{inputs_from_spec, simulate_owned, SimOptions, SimResult, SiteStats};
use copper_search::launch::read_params;

#[derive(Default, Clone, Copy)]
struct Tally {
    tp: usize,
    fp: usize,
    fn_: usize,
    tn: usize,
}

impl Tally {
    fn add(&mut self, flagged: bool, bad: bool) {
        match (flagged, bad) {
            (true, true) => self.tp += 1,
            (true, false) => self.fp += 1,
            (false, true) => self.fn_ += 1,
            (false, false) => self.tn += 1,
        }
    }
    fn precision(&self) -> f64 {
        if self.tp + self.fp == 0 {
            1.0
        } else {
            self.tp as f64 / (self.tp + self.fp) as f64
        }
    }
    fn recall(&self) -> f64 {
        if self.tp + self.fn_ == 0 {
            1.0
        } else {
            self.tp as f64 / (self.tp + self.fn_) as f64
        }
    }
}

#[test]
fn lint_against_the_simulator() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files: Vec<_> = std::fs::read_dir(root.join("testdata"))
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "cu") && p.with_extension("toml").exists())
        .collect();
    files.sort();
    let (mut global, mut shared) = (Tally::default(), Tally::default());
    // Per code: uncoalesced-global against scattered sites,
    // misaligned-global against the other uncoalesced ones.
    let (mut range, mut misaligned) = (Tally::default(), Tally::default());
    let mut misses = Vec::new();
    let mut range_misses = Vec::new();
    let mut range_false = Vec::new();
    let mut misaligned_false = Vec::new();
    println!(
        "{:<26} {:>13} {:>13}",
        "kernel", "global tp/fp/fn", "shared tp/fp/fn"
    );
    for path in &files {
        let parsed = parse_path(path).unwrap();
        let params = read_params(path, None).unwrap().unwrap();
        for f in parsed.kernels() {
            let Some(spec) = params.kernel.get(&f.name) else {
                continue;
            };
            let kernel = lower_kernel(&parsed, &f.name).unwrap();
            let shape = spec.shape().unwrap();
            let hw = copper::cost::Hardware::default();
            let lint = lint_kernel(
                &kernel,
                copper::bound::Config {
                    hw,
                    block: Some(shape.block()),
                    grid: Some(shape.grid()),
                    ..Default::default()
                },
                Some(spec),
            );
            let inputs = inputs_from_spec(&kernel, spec).unwrap();
            let sim = simulate_owned(&kernel, inputs, &SimOptions::default()).unwrap();
            let other = other_sizes(&kernel, spec);
            let (mut g, mut s) = (Tally::default(), Tally::default());
            for (i, site) in kernel.sites.iter().enumerate() {
                let stats = worst(&sim.sites[i], other.as_ref().map(|o| &o.sites[i]));
                if stats.requests == 0 {
                    continue;
                }
                let array = &kernel.arrays[site.array];
                // The lint reports one finding per place: the sites of one
                // access (the pieces of a struct copy, the load and the
                // store of a `+=`) share it.
                let same_place = |j: usize| kernel.sites[j].span == site.span;
                let codes: Vec<Code> = lint
                    .findings
                    .iter()
                    .filter(|x| x.site.is_some_and(same_place))
                    .map(|x| x.code)
                    .collect();
                if array.is_shared() {
                    // Any width is served conflict free at degree 1 (wide
                    // accesses in phases).
                    let bad = stats.max_transactions > 1;
                    s.add(codes.contains(&Code::BankConflict), bad);
                    if bad && !codes.contains(&Code::BankConflict) {
                        misses.push(format!("{}: shared site {i} of {}", path.display(), f.name));
                    }
                } else if array.is_global() {
                    let flagged = codes
                        .iter()
                        .any(|c| matches!(c, Code::UncoalescedGlobal | Code::MisalignedGlobal));
                    let bad = stats.uncoalesced > 0;
                    g.add(flagged, bad);
                    let scattered = stats.scattered > 0;
                    range.add(codes.contains(&Code::UncoalescedGlobal), scattered);
                    misaligned.add(codes.contains(&Code::MisalignedGlobal), bad && !scattered);
                    if !scattered && codes.contains(&Code::UncoalescedGlobal) {
                        let at = parsed.source.line_col(site.span.start);
                        range_false.push(format!(
                            "{}:{}:{} ({})",
                            path.display(),
                            at.0,
                            at.1,
                            f.name
                        ));
                    }
                    if !bad && codes.contains(&Code::MisalignedGlobal) {
                        let at = parsed.source.line_col(site.span.start);
                        misaligned_false.push(format!(
                            "{}:{}:{} ({})",
                            path.display(),
                            at.0,
                            at.1,
                            f.name
                        ));
                    }
                    if scattered && !codes.contains(&Code::UncoalescedGlobal) {
                        range_misses.push(format!(
                            "{}: global site {i} of {}",
                            path.display(),
                            f.name
                        ));
                    }
                    if bad && !flagged {
                        misses.push(format!("{}: global site {i} of {}", path.display(), f.name));
                    }
                }
            }
            println!(
                "{:<26} {:>5}/{}/{} {:>9}/{}/{}",
                f.name, g.tp, g.fp, g.fn_, s.tp, s.fp, s.fn_
            );
            for (t, x) in [(&mut global, g), (&mut shared, s)] {
                t.tp += x.tp;
                t.fp += x.fp;
                t.fn_ += x.fn_;
                t.tn += x.tn;
            }
        }
    }
    println!("uncoalesced-global, not scattered in simulation:");
    for x in &range_false {
        println!("  {x}");
    }
    println!("misaligned-global, aligned in simulation:");
    for x in &misaligned_false {
        println!("  {x}");
    }
    // The table docs/lint-rules.md shows.
    let mut table = String::from(
        "| code | flagged | right in simulation | precision | recall |\n|---|---|---|---|---|\n",
    );
    for (code, t, right) in [
        ("`uncoalesced-global`", range, "scattered"),
        ("`misaligned-global`", misaligned, "misaligned"),
    ] {
        table.push_str(&format!(
            "| {code} | {} | {} {right} | {:.2} | {:.2} |\n",
            t.tp + t.fp,
            t.tp,
            t.precision(),
            t.recall()
        ));
    }
    for (name, t, bad) in [
        ("global, either code ({} sites)", global, " bad"),
        ("`bank-conflict` ({} shared sites)", shared, ""),
    ] {
        table.push_str(&format!(
            "| {} | {} | {}{bad} | {:.2} | {:.2} |\n",
            name.replace("{}", &(t.tp + t.fp + t.fn_ + t.tn).to_string()),
            t.tp + t.fp,
            t.tp + t.fn_,
            t.precision(),
            t.recall()
        ));
    }
    print!("{table}");
    assert!(misses.is_empty(), "the lint missed: {misses:#?}");
    assert!(
        range_misses.is_empty(),
        "scattered in simulation but not uncoalesced-global: {range_misses:#?}"
    );
    assert!(
        range.precision() >= PRECISION_UNCOALESCED,
        "uncoalesced-global precision fell"
    );
    assert!(
        misaligned.precision() >= PRECISION_MISALIGNED,
        "misaligned-global precision fell"
    );
    assert!(
        global.precision() >= PRECISION_GLOBAL,
        "global precision fell"
    );
    assert!(
        shared.precision() >= PRECISION_SHARED,
        "shared precision fell"
    );
    let docs =
        std::fs::read_to_string(root.join("docs/lint-rules.md")).expect("docs/lint-rules.md");
    assert!(
        docs.contains(&table),
        "docs/lint-rules.md's precision table differs from what this test prints; \
         replace it with the table printed above (`-- --nocapture`)"
    );
}

/// The parameter file's launch with every integer argument one larger (a
/// row length `n = 64` becomes 65, no multiple of a sector's 8 elements),
/// arrays grown until the kernel runs in bounds: the second launch a
/// site's verdict is taken over. `None` when it does not run cleanly.
fn other_sizes(kernel: &Kernel, spec: &LaunchSpec) -> Option<SimResult> {
    let mut other = spec.clone();
    let mut changed = false;
    for v in kernel.scalar_params() {
        let var = &kernel.vars[v];
        if var.ty.is_float() {
            continue;
        }
        if let Some(x) = other.args.get_mut(&var.name) {
            *x += 1.0;
            changed = true;
        }
    }
    if !changed {
        return None;
    }
    run_original(kernel, other, true, &SimOptions::default())
        .ok()
        .map(|run| run.result)
}

/// A site's statistics over both launches: requests and sectors added,
/// each verdict taken when either launch shows it.
fn worst(first: &SiteStats, other: Option<&SiteStats>) -> SiteStats {
    let mut out = *first;
    if let Some(o) = other {
        out.requests += o.requests;
        out.uncoalesced += o.uncoalesced;
        out.scattered += o.scattered;
        out.max_transactions = out.max_transactions.max(o.max_transactions);
    }
    out
}

/// Measured over testdata (the table this test prints with `--nocapture`
/// and docs/lint-rules.md shows), rounded down.
const PRECISION_GLOBAL: f64 = 0.9;
/// `uncoalesced-global` against scattered sites, measured over testdata
/// (docs/lint-rules.md): quotients of consecutive thread indices
/// (`ldg_gather`'s `ids[i / dim]`, `colmajor_split`'s `scale[row]`) are
/// known to be one run of consecutive elements (`absint::divmod`). The
/// floor leaves a margin.
const PRECISION_UNCOALESCED: f64 = 0.88;
/// `misaligned-global` against misaligned sites, measured over testdata
/// (docs/lint-rules.md, 0.92), rounded down.
const PRECISION_MISALIGNED: f64 = 0.9;
/// Measured over testdata, rounded down.
const PRECISION_SHARED: f64 = 0.85;
