// asm_kernel: a kernel with inline PTX (`asm volatile`), a kernel that
// stores a lambda in an `auto` variable and calls it, and one that calls a
// lambda in place (all unsupported by copper), next to an ordinary kernel
// that copper must still read. Written for copper. Expected: one
// `unsupported` diagnostic each for lane_ids, lambda_square and
// lambda_inline, and plain_square parsed normally.

__global__ void lane_ids(int *out) {
    unsigned int lane;
    asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
    out[blockIdx.x * blockDim.x + threadIdx.x] = lane;
}

__global__ void lambda_square(float *x, int n) {
    auto square = [](float v) { return v * v; };
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        x[i] = square(x[i]);
    }
}

__global__ void lambda_inline(float *x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        x[i] = [](float v) { return v * v; }(x[i]);
    }
}

__global__ void plain_square(float *x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        x[i] = x[i] * x[i];
    }
}
