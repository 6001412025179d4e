//! Front-end throughput on all of `testdata/` and the project in
//! `testdata/projects/stencil` (its headers read once, with `-I inc` and
//! `-DN=256`; extracted and parsed in every round): extraction + parsing +
//! printing, in files/s and kernels/s.
//!
//! Run: `cargo bench --bench frontend`

use std::path::Path;
use std::time::{Duration, Instant};

use copper::cuda::include::{self, parse_define, Preprocess};
use copper::cuda::parse::parse_source;
use copper::cuda::print;
use copper::source::SourceFile;

fn main() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata");
    let mut files: Vec<SourceFile> = std::fs::read_dir(&dir)
        .expect("testdata/")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "cu"))
        .map(|p| SourceFile::read(&p).expect("readable"))
        .collect();
    files.sort_by(|a, b| a.path.cmp(&b.path));
    let project = dir.join("projects/stencil");
    let opts = Preprocess {
        defines: vec![parse_define("N=256").expect("a definition")],
        include_dirs: vec![project.join("inc")],
        ..Preprocess::default()
    };
    for name in ["stencil.cu", "scale_n.cu"] {
        let f = SourceFile::read(&project.join(name)).expect("readable");
        files.push(include::load(f, &opts));
    }
    let bytes: usize = files.iter().map(|f| f.text.len()).sum();
    let mut rounds = 0u32;
    let mut kernels = 0usize;
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(3) {
        for f in &files {
            let parsed = parse_source(f.clone());
            for func in parsed
                .functions
                .iter()
                .filter_map(|p| p.result.as_ref().ok())
            {
                std::hint::black_box(print::function(func));
                kernels += 1;
            }
        }
        rounds += 1;
    }
    let secs = start.elapsed().as_secs_f64();
    let n = files.len() as f64 * rounds as f64;
    println!(
        "frontend: {} files ({} KiB), {} rounds in {:.2} s: {:.0} files/s, {:.0} functions/s, {:.2} MiB/s (parse + print, 1 thread)",
        files.len(),
        bytes / 1024,
        rounds,
        secs,
        n / secs,
        kernels as f64 / secs,
        bytes as f64 * rounds as f64 / secs / (1024.0 * 1024.0)
    );
}
