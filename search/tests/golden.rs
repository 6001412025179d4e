//! Golden outputs: `copper analyze` on every `testdata/` file, compared
//! with `golden/analyze/NAME.txt` (the timing line left out). A change in
//! a bound shows up here for review; `UPDATE_GOLDEN=1 cargo test --release
//! --test golden` rewrites the files.

use std::path::Path;
use std::process::Command;

fn analyze(file: &Path) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_copper"))
        .arg("analyze")
        .arg(file)
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join(".."))
        .output()
        .expect("copper runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    text.lines()
        .filter(|l| !l.trim_start().starts_with("analyzed in "))
        .map(|l| format!("{l}\n"))
        .collect()
}

#[test]
fn analyze_output_matches_golden() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let golden = root.join("golden/analyze");
    let update = std::env::var("UPDATE_GOLDEN").is_ok();
    let mut files: Vec<_> = std::fs::read_dir(root.join("testdata"))
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "cu"))
        .collect();
    files.sort();
    let mut differ = Vec::new();
    for f in &files {
        let name = f.file_stem().unwrap().to_string_lossy().to_string();
        let rel = Path::new("testdata").join(f.file_name().unwrap());
        let got = analyze(&rel);
        let path = golden.join(format!("{name}.txt"));
        if update {
            std::fs::create_dir_all(&golden).unwrap();
            std::fs::write(&path, &got).unwrap();
            continue;
        }
        let want = std::fs::read_to_string(&path).unwrap_or_default();
        if want != got {
            differ.push(format!("{name}:\n--- golden\n{want}--- now\n{got}"));
        }
    }
    assert!(
        differ.is_empty(),
        "{} of {} outputs differ from golden/analyze (UPDATE_GOLDEN=1 rewrites them):\n{}",
        differ.len(),
        files.len(),
        differ.join("\n")
    );
}
