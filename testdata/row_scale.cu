// row_scale: written for copper. Each thread scales one row of a
// rows × cols matrix by that row's factor and adds the row's offset. The
// factor and offset are read from global memory on every iteration of the
// column loop although they do not change in it: the load-hoisting rewrite
// reads each once, before the loop. The second kernel has a barrier in its
// loop, so its loads stay where they are.

__global__ void row_scale(float *m, const float *factor, const float *offset, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        for (int c = 0; c < cols; c++) {
            m[r * cols + c] = m[r * cols + c] * factor[r] + offset[r];
        }
    }
}

__global__ void row_scale_synced(float *m, const float *factor, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    for (int c = 0; c < cols; c++) {
        if (r < rows) {
            m[r * cols + c] = m[r * cols + c] * factor[r];
        }
        __syncthreads();
    }
}
