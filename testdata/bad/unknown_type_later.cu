// A type copper was not told about (no `-D real_t=float`), standing after
// another parameter and in a local declaration: each is named as an
// unknown type at its place, and the good kernel is still read.
__global__ void scale_later(int n, real_t *v) {
    v[threadIdx.x] = v[threadIdx.x] * n;
}

__global__ void sum_local(const float *v, float *out) {
    float first = v[0];
    accum_t total = first;
    out[threadIdx.x] = total;
}

__global__ void fine(float *v) { v[threadIdx.x] = 1.0f; }
