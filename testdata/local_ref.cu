// local_ref: row sums of a dense matrix, one thread per row, accumulating
// through a local reference to the output element (`float &sum =
// out[row];`) and reading with `auto` locals, as C++ code often does.
// Written for copper. The reference's index is evaluated once, where it is
// bound.

#include <cuda_runtime.h>

__global__ void row_sums(const float *__restrict__ m, float *out, int rows, int cols) {
    const auto row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < static_cast<unsigned int>(rows)) {
        float &sum = out[row];
        sum = 0.0f;
        for (int c = 0; c < cols; ++c) {
            const auto v = m[row * cols + c];
            sum += v;
        }
    }
}
