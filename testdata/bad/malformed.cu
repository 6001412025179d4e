// malformed: a kernel with syntax errors (a missing semicolon and an
// unbalanced parenthesis) followed by a well-formed kernel that copper must
// still read. Written for copper. Expected: a `syntax` diagnostic for
// broken_add, and fixed_add parsed normally.

__global__ void broken_add(float *a, float *b, float *c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x
    if ((i < n) {
        c[i] = a[i] + b[i];
    }
}

__global__ void fixed_add(float *a, float *b, float *c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        c[i] = a[i] + b[i];
    }
}
