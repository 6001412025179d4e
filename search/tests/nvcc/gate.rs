//! The `--nvcc` gate of `optimize`: candidates that do not compile are
//! dropped, and a program that is not nvcc is refused.

use super::*;

/// A stand-in compiler: says it is nvcc, and fails (printing an error in
/// nvcc's format) on any source file containing `refuse`.
#[cfg(unix)]
fn fake_nvcc(dir: &Path, refuse: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join("fake-nvcc");
    let script = format!(
        "#!/bin/sh\n\
         if [ \"$1\" = --version ]; then echo 'Cuda compilation tools, release 13.0, V13.0.0'; exit 0; fi\n\
         for a in \"$@\"; do last=\"$a\"; done\n\
         if grep -q '{refuse}' \"$last\"; then echo \"$last(3): error: refused by the test\" >&2; exit 1; fi\n\
         exit 0\n"
    );
    std::fs::write(&path, script).expect("write fake nvcc");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    path
}

#[cfg(unix)]
#[test]
fn optimize_nvcc_drops_candidates_that_do_not_compile() {
    let tmp = Scratch::new();
    let dir = tmp.path().to_path_buf();
    let file = root().join("testdata/addSub0.cu");
    let file = file.to_string_lossy();
    // Branch distribution introduces `B_elem`: a compiler refusing it
    // leaves nothing to suggest, and --explain says why.
    let refusing = fake_nvcc(&dir, "B_elem");
    let out = copper_in(
        &root(),
        &[
            "optimize",
            &file,
            "--explain",
            "--nvcc",
            &refusing.to_string_lossy(),
        ],
    );
    let said = text(&out);
    assert_eq!(out.status.code(), Some(0), "{said}");
    assert!(said.contains("no improvement found"), "{said}");
    assert!(
        said.contains("improving candidates compiled with nvcc"),
        "{said}"
    );
    assert!(
        said.contains("nvcc rejects it: addSub0.cu(3): error: refused by the test"),
        "{said}"
    );
    // A compiler accepting it changes nothing.
    let accepting = fake_nvcc(&dir, "no such text anywhere");
    let out = copper_in(
        &root(),
        &["optimize", &file, "--nvcc", &accepting.to_string_lossy()],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("improved"));
    // When the file as written does not compile, nothing can be checked.
    let broken = fake_nvcc(&dir, "addSub0");
    let out = copper_in(
        &root(),
        &[
            "optimize",
            &file,
            "--format",
            "json",
            "--nvcc",
            &broken.to_string_lossy(),
        ],
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let k = &report["kernels"][0];
    assert_eq!(k["status"], "unchecked", "{k}");
    assert_eq!(k["nvcc_checked"], true);
    assert!(
        k["nvcc_error"]
            .as_str()
            .is_some_and(|e| e.contains("refused")),
        "{k}"
    );
}

#[test]
fn optimize_nvcc_refuses_what_is_not_a_compiler() {
    let file = root().join("testdata/addSub0.cu");
    let file = file.to_string_lossy();
    for (args, says) in [
        (vec!["--nvcc", "/nonexistent/nvcc"], "cannot run it"),
        (vec!["--nvcc", "true"], "not NVIDIA's CUDA compiler"),
        (vec!["--nvcc-flags", "-DN=4"], "--nvcc-flags needs --nvcc"),
    ] {
        let mut all = vec!["optimize", &*file];
        all.extend(args);
        let out = copper_in(&root(), &all);
        assert_eq!(out.status.code(), Some(2), "{all:?}: {}", text(&out));
        assert!(text(&out).contains(says), "{all:?}: {}", text(&out));
    }
}

#[test]
fn optimize_nvcc_with_the_real_compiler() {
    let Some(nvcc) = nvcc() else { return };
    let out = copper_in(
        &root(),
        &[
            "optimize",
            "testdata/addSub0.cu",
            "--nvcc",
            &nvcc.to_string_lossy(),
            "--nvcc-flags",
            "-arch=sm_90",
        ],
    );
    let said = text(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(said.contains("improved;"), "{said}");
    assert!(
        said.contains("improving candidates compiled with nvcc"),
        "{said}"
    );
}
