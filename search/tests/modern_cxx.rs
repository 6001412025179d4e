//! Modern CUDA C++ of real suites (`testdata/modern/`): kernel templates
//! launched from host function templates, read, bounded and checked
//! against the simulator.

mod common;

use common::{copper_in, root, scratch_file, text};

/// `copper ARGS` in `testdata/modern/`: its exit status and output.
fn run(args: &[&str]) -> (i32, String) {
    let o = copper_in(&root().join("testdata/modern"), args);
    (o.status.code().unwrap_or(-1), text(&o))
}

/// `copper analyze --check FILE` exits 0, names every kernel of `kernels`
/// with a bound for every metric, and each bound is at least the worst
/// warp the simulator measured on the parameter file's inputs (at least
/// `checks` such rows).
fn assert_bounded_and_sound(file: &str, kernels: &[&str], checks: usize) {
    let (status, out) = run(&["analyze", "--check", file]);
    assert_eq!(status, 0, "{out}");
    assert!(!out.contains("error") && !out.contains("no bound"), "{out}");
    for k in kernels {
        assert!(out.contains(&format!("kernel {k}:")), "{k} missing:\n{out}");
    }
    let mut rows = 0;
    for line in out.lines().filter(|l| l.contains("simulated worst warp")) {
        let nums: Vec<f64> = line
            .split(|c: char| !(c.is_ascii_digit() || c == '.'))
            .filter_map(|w| w.parse().ok())
            .collect();
        let (bound, sim) = (nums[0], nums[1]);
        assert!(bound >= sim, "bound below the simulator: {line}\n{out}");
        rows += 1;
    }
    assert!(rows >= checks, "{rows} checks:\n{out}");
}

#[test]
fn host_templates_instantiate_the_kernels_they_launch() {
    let (status, out) = run(&["parse", "host_templates.cu"]);
    assert_eq!(status, 0, "{out}");
    for k in [
        "kernel scale_kernel<float>(",
        "kernel shift_kernel<int, 128>(",
        "kernel shift_kernel<float, 128>(",
    ] {
        assert!(out.contains(k), "{k} missing:\n{out}");
    }
    // No instantiation with the host template's parameter left in it.
    assert!(!out.contains("<T>") && !out.contains("<T,"), "{out}");
    assert_bounded_and_sound(
        "host_templates.cu",
        &[
            "scale_kernel<float>",
            "shift_kernel<int, 128>",
            "shift_kernel<float, 128>",
        ],
        15,
    );
}

#[test]
fn a_host_template_nobody_calls_leaves_the_kernel_to_instantiate() {
    let file = scratch_file(
        "modern-cxx",
        "uncalled_driver.cu",
        b"template <typename T>\n__global__ void inc(T *a, int n) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) a[i] += (T)1;\n}\ntemplate <typename T>\nvoid run_inc(T *d, int n) { inc<T><<<(n + 255) / 256, 256>>>(d, n); }\n",
    );
    let path = file.to_string_lossy().to_string();
    let (status, out) = run(&["parse", &path]);
    assert_eq!(status, 0, "{out}");
    assert!(out.contains("template never instantiated"), "{out}");
    let (status, out) = run(&["analyze", "--instantiate", "inc<double>", &path]);
    assert_eq!(status, 0, "{out}");
    assert!(out.contains("kernel inc<double>:") && !out.contains("error"), "{out}");
}
