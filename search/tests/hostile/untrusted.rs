//! Untrusted checkouts: a discovered `copper.toml` runs nothing, reads
//! that block or never end are refused, and storage a kernel declares is
//! capped.

use super::*;

// ---- untrusted checkouts: a copper.toml found by searching runs nothing ----

/// A program that records that it ran (`RAN` beside it) and says it is
/// NVIDIA's compiler.
#[cfg(unix)]
fn evil_program(dir: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join("evil.sh");
    std::fs::write(
        &path,
        "#!/bin/sh\ntouch \"$(dirname \"$0\")/RAN\"\necho 'Cuda compilation tools, release 13.0'\n",
    )
    .unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

#[cfg(unix)]
#[test]
fn a_discovered_copper_toml_cannot_name_a_program_to_run() {
    let scratch_dir = scratch("config-nvcc");
    let dir = scratch_dir.path();
    evil_program(dir);
    std::fs::write(dir.join("copper.toml"), "nvcc = \"./evil.sh\"\n").unwrap();
    let sub = dir.join("sub");
    std::fs::create_dir(&sub).unwrap();
    copy_testdata("saxpy", &sub, "k");
    for (case, args) in [
        (
            "optimize under a copper.toml naming nvcc",
            &["optimize", "k.cu"][..],
        ),
        (
            "bench under a copper.toml naming nvcc",
            &["bench", "k.cu", "--out", "out"],
        ),
    ] {
        let m = run(case, &sub, args, &[]);
        assert!(
            !dir.join("RAN").exists(),
            "{case}: it ran: {}",
            text(&m.out)
        );
        assert!(
            stderr(&m).contains("copper.toml asks to run `./evil.sh` as nvcc"),
            "{case}: {}",
            stderr(&m)
        );
        assert!(!stderr(&m).contains("error"), "{case}: {}", stderr(&m));
    }
    // An explicit --nvcc takes the configuration's compiler; so does a
    // configuration given with --config.
    for (case, args) in [
        (
            "optimize --nvcc under a copper.toml",
            &["optimize", "k.cu", "--nvcc"][..],
        ),
        (
            "optimize --config copper.toml",
            &["optimize", "k.cu", "--config", "../copper.toml"],
        ),
    ] {
        let m = run(case, &sub, args, &[]);
        assert!(dir.join("RAN").exists(), "{case}: {}", text(&m.out));
        std::fs::remove_file(dir.join("RAN")).unwrap();
    }
}

// ---- untrusted checkouts: reads that block or never end ----

/// Makes a named pipe at `path` (nobody writes to it).
#[cfg(unix)]
fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: a valid C string.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
}

/// Whether a run ended on its own, quickly and in little memory.
fn ended_soon(m: &Measured) -> bool {
    code(m) >= 0 && m.wall < Duration::from_secs(20) && m.peak_kib < 100 * 1024
}

#[cfg(unix)]
#[test]
fn a_parameter_file_that_blocks_or_never_ends_is_refused() {
    let scratch_dir = scratch("endless-params");
    let dir = scratch_dir.path();
    for stem in ["fifo", "zero"] {
        copy_testdata("saxpy", dir, stem);
        std::fs::remove_file(dir.join(format!("{stem}.toml"))).unwrap();
    }
    mkfifo(&dir.join("fifo.toml"));
    std::os::unix::fs::symlink("/dev/zero", dir.join("zero.toml")).unwrap();
    for stem in ["fifo", "zero"] {
        let file = format!("{stem}.cu");
        for cmd in [
            "optimize", "lint", "analyze", "simulate", "params", "bench", "fmt",
        ] {
            let mut args = vec![cmd, file.as_str()];
            if cmd == "bench" {
                args.extend(["--out", "out"]);
            }
            let m = run(&format!("{cmd} beside {stem}.toml"), dir, &args, &[]);
            assert!(ended_soon(&m), "{cmd} {stem}: {}", text(&m.out));
            if cmd != "fmt" {
                let err = stderr(&m);
                assert!(
                    err.contains(&format!("{stem}.toml: "))
                        && err.contains("cannot read parameter file: not a regular file"),
                    "{cmd} {stem}: {err}"
                );
            }
        }
    }
    // In a batch, the other files are searched.
    copy_testdata("addSub0", dir, "good");
    let m = run(
        "optimize a batch with a FIFO parameter file",
        dir,
        &[
            "optimize", "good.cu", "fifo.cu", "zero.cu", "--format", "json",
        ],
        &[],
    );
    assert!(ended_soon(&m), "{}", text(&m.out));
    assert_eq!(code(&m), 1, "{}", text(&m.out));
    let json: serde_json::Value = serde_json::from_slice(&m.out.stdout).expect("one JSON document");
    let good = json["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["file"] == "good.cu");
    assert_eq!(good.unwrap()["status"], "improved", "{json}");
}

#[cfg(unix)]
#[test]
fn a_configuration_or_ignore_file_that_blocks_is_refused() {
    let scratch_dir = scratch("endless-config");
    let dir = scratch_dir.path();
    copy_testdata("saxpy", dir, "k");
    mkfifo(&dir.join("pipe.toml"));
    let m = run(
        "optimize --config a FIFO",
        dir,
        &["optimize", "k.cu", "--config", "pipe.toml"],
        &[],
    );
    assert!(ended_soon(&m), "{}", text(&m.out));
    assert_eq!(code(&m), 2, "{}", text(&m.out));
    assert!(
        stderr(&m).contains("pipe.toml: cannot read the configuration: not a regular file"),
        "{}",
        stderr(&m)
    );
    for (ignore, make) in [(".gitignore", 0), (".ignore", 1)] {
        let d = dir.join(format!("tree{make}"));
        std::fs::create_dir(&d).unwrap();
        copy_testdata("saxpy", &d, "k");
        if make == 0 {
            mkfifo(&d.join(ignore));
        } else {
            std::os::unix::fs::symlink("/dev/zero", d.join(ignore)).unwrap();
        }
        let dname = format!("tree{make}");
        let m = run(
            &format!("optimize a tree whose {ignore} blocks"),
            dir,
            &["optimize", &dname, "--format", "json"],
            &[],
        );
        assert!(ended_soon(&m), "{}", text(&m.out));
        let json: serde_json::Value =
            serde_json::from_slice(&m.out.stdout).expect("one JSON document");
        assert_eq!(
            json["kernels"][0]["file"],
            format!("{dname}/k.cu"),
            "{json}"
        );
        assert!(
            stderr(&m).contains(&format!("{dname}/{ignore}: not read: not a regular file")),
            "{}",
            stderr(&m)
        );
    }
}

#[test]
fn a_header_that_never_ends_is_refused() {
    let scratch_dir = scratch("endless-header");
    let dir = scratch_dir.path();
    std::fs::write(
        dir.join("k.cu"),
        "#include \"/proc/self/pagemap\"\n__global__ void k(int *a) {\n    a[threadIdx.x] = 1;\n}\n",
    )
    .unwrap();
    let m = run(
        "parse including /proc/self/pagemap",
        dir,
        &["parse", "k.cu"],
        &[],
    );
    assert!(ended_soon(&m), "{}", text(&m.out));
    assert!(stderr(&m).contains("k.cu:1:1: error"), "{}", text(&m.out));
    assert!(
        stderr(&m).contains("cannot read header `/proc/self/pagemap`"),
        "{}",
        text(&m.out)
    );
    assert!(stdout(&m).contains("kernel k(int *a)"), "{}", text(&m.out));
}

// ---- untrusted checkouts: storage a kernel declares is capped ----

#[test]
fn storage_declared_in_the_kernel_is_capped_before_allocating() {
    let scratch_dir = scratch("declared-storage");
    let dir = scratch_dir.path();
    let kernels = [
        (
            "local",
            "__global__ void k(float *a) {\n    float loc[268435456];\n    loc[threadIdx.x] = 1;\n    a[threadIdx.x] = loc[threadIdx.x];\n}\n",
            "k.cu:2:11",
            "loc",
        ),
        (
            "device",
            "__device__ float g[1 << 28];\n__global__ void k(float *a) {\n    g[threadIdx.x] = 1;\n    a[threadIdx.x] = g[threadIdx.x];\n}\n",
            "k.cu:1:18",
            "g",
        ),
        (
            "device30",
            "__device__ float g[1 << 30];\n__global__ void k(float *a) {\n    g[threadIdx.x] = 1;\n    a[threadIdx.x] = g[threadIdx.x];\n}\n",
            "k.cu:1:18",
            "g",
        ),
        (
            "shared",
            "__global__ void k(float *a) {\n    extern __shared__ float s[];\n    s[threadIdx.x] = 1;\n    a[threadIdx.x] = s[threadIdx.x];\n}\n",
            "k.cu:2:29",
            "s",
        ),
    ];
    let params = "[kernel.k]\ngrid = [1]\nblock = [32]\nshared_bytes = 4294967296\n[kernel.k.args]\n[kernel.k.arrays.a]\nlen = 32\ninit = \"const\"\nvalue = 0\n";
    for (case, source, at, array) in kernels {
        let d = dir.join(case);
        std::fs::create_dir(&d).unwrap();
        std::fs::write(d.join("k.cu"), source).unwrap();
        std::fs::write(d.join("k.toml"), params).unwrap();
        for args in [
            &["simulate", "k.cu"][..],
            &["lint", "k.cu", "--budget", "2"],
            &["optimize", "k.cu", "--budget", "2"],
        ] {
            let m = run(&format!("{} on {case} storage", args[0]), &d, args, &[]);
            assert!(
                code(&m) >= 0 && m.wall < Duration::from_secs(10),
                "{case} {args:?}: {}",
                text(&m.out)
            );
            assert!(
                m.peak_kib < 200 * 1024,
                "{case} {args:?}: {} KiB",
                m.peak_kib
            );
            if args[0] == "simulate" {
                assert_eq!(code(&m), 2, "{case}: {}", text(&m.out));
                let err = stderr(&m);
                assert!(err.contains(at), "{case}: {err}");
                assert!(err.contains(&format!("`{array}`")), "{case}: {err}");
                assert!(err.contains("copper simulates at most"), "{case}: {err}");
            }
        }
    }
}
