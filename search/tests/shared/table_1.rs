//! The benchmarks of COpPER's Table 1 (002 in the seeds) and the stems of
//! the `testdata/` files that reproduce them (`testdata/{stem}.cu`, its
//! golden `golden/optimize/{stem}.txt`). One list for the golden test that
//! checks `docs/optimize.md`'s Table 1 and for `cargo bench --bench
//! optimize`, which times it.

/// (benchmark name as the paper prints it, file stem in `testdata/`).
pub const TABLE_1: [(&str, &str); 8] = [
    ("addSub0", "addSub0"),
    ("addSub2", "addSub2"),
    ("SYN-BRDIS", "syn_brdis"),
    ("DMVM", "dmvm"),
    ("DVMM", "dvmm"),
    ("ElementWise", "elementwise"),
    ("1D convolution", "conv1d"),
    ("Rank", "rank"),
];
