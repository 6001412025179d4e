//! Front-end throughput on all of `testdata/` and the project in
//! `testdata/projects/stencil` (its headers read once, with `-I inc` and
//! `-DN=256`; extracted and parsed in every iteration): extraction +
//! parsing + printing of every file, one thread, measured by criterion
//! (files/s and MiB/s with their confidence intervals; the functions
//! printed per iteration are printed first).
//!
//! Run: `cargo bench --bench frontend` (criterion's options after `--`,
//! e.g. `-- --sample-size 10 --measurement-time 2`)

use std::hint::black_box;
use std::path::Path;
use std::time::Duration;

use copper::cuda::include::{self, parse_define, Preprocess};
use copper::cuda::parse::parse_source;
use copper::cuda::print;
use copper::source::SourceFile;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

/// Every `testdata/*.cu` and the stencil project's two files, headers
/// included.
fn corpus() -> Vec<SourceFile> {
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
    files
}

/// One iteration: extracts, parses and prints every file; the number of
/// functions printed.
fn round(files: &[SourceFile]) -> usize {
    let mut functions = 0;
    for f in files {
        let parsed = parse_source(f.clone());
        for func in parsed
            .functions
            .iter()
            .filter_map(|p| p.result.as_ref().ok())
        {
            black_box(print::function(func));
            functions += 1;
        }
    }
    functions
}

fn frontend(c: &mut Criterion) {
    let files = corpus();
    let bytes: usize = files.iter().map(|f| f.text.len()).sum();
    println!(
        "frontend: {} files ({} KiB), {} functions an iteration (parse + print, 1 thread)",
        files.len(),
        bytes / 1024,
        round(&files)
    );
    let mut group = c.benchmark_group("frontend");
    group.throughput(Throughput::ElementsAndBytes {
        elements: files.len() as u64,
        bytes: bytes as u64,
    });
    group.bench_function("parse + print", |b| b.iter(|| round(black_box(&files))));
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(20)
        .measurement_time(Duration::from_secs(5));
    targets = frontend
}
criterion_main!(benches);
