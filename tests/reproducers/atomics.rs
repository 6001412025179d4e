//! Atomics in the block-size verdict: an atomic's returned value, and a
//! floating-point sum built by atomics, depend on the order in which the
//! threads reach it, which the block shape changes. Before, both kernels
//! below were called independent of the block size.

use copper::cuda::parse::parse_source;
use copper::ir::lower::lower_kernel;
use copper::lint::block_size::verdict;
use copper::lint::BlockSize;
use copper::source::SourceFile;

fn verdict_of(src: &str) -> BlockSize {
    let kernel = lower_kernel(&parse_source(SourceFile::new("t.cu", src)), "k").unwrap();
    verdict(&kernel).0
}

fn depends_naming(src: &str, named: &str) {
    match verdict_of(src) {
        BlockSize::Depends(why) => assert!(why.contains(named), "{why}"),
        v => panic!("{v:?} for\n{src}"),
    }
}

#[test]
fn an_atomics_returned_slot_depends_on_the_block_size() {
    let src = "__global__ void k(int *cnt, int *out, int n) {\n\
               int g = blockIdx.x * blockDim.x + threadIdx.x;\n\
               if (g % 3 == 0) { int slot = atomicAdd(cnt, 1); out[g] = slot; }\n}";
    depends_naming(src, "`atomicAdd` on `cnt`");
}

#[test]
fn a_floating_point_atomic_sum_depends_on_the_block_size() {
    let src = "__global__ void k(float *sum, const float *x, int w) {\n\
               int gx = blockIdx.x * blockDim.x + threadIdx.x;\n\
               int gy = blockIdx.y * blockDim.y + threadIdx.y;\n\
               atomicAdd(sum, x[gy * w + gx]);\n}";
    depends_naming(src, "floating-point");
}

#[test]
fn an_exchange_depends_and_a_plain_read_of_an_atomic_counter_too() {
    let exch =
        "__global__ void k(int *last) { atomicExch(last, blockIdx.x * blockDim.x + threadIdx.x); }";
    depends_naming(exch, "`atomicExch` on `last`");
    let read = "__global__ void k(int *cnt, int *out) {\n\
                int g = blockIdx.x * blockDim.x + threadIdx.x;\n\
                atomicAdd(cnt, 1); out[g] = cnt[0];\n}";
    depends_naming(read, "plainly");
}

#[test]
fn commutative_integer_atomics_whose_result_is_unused_stay_independent() {
    let src = "__global__ void k(int *cnt, int *hi, const int *x) {\n\
               int g = blockIdx.x * blockDim.x + threadIdx.x;\n\
               atomicAdd(cnt, x[g]); atomicMax(hi, x[g]);\n}";
    assert!(matches!(verdict_of(src), BlockSize::Independent { .. }));
    // Another field of the atomically counted elements read plainly.
    let fields = "struct N { int next; int count; };\n\
                  __global__ void k(N *nodes, int *out) {\n\
                  int g = blockIdx.x * blockDim.x + threadIdx.x;\n\
                  out[g] = nodes[g].next; atomicAdd(&nodes[g % 4].count, 1);\n}";
    assert!(matches!(verdict_of(fields), BlockSize::Independent { .. }));
}
