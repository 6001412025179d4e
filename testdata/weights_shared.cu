// weights_shared: every thread reads the same small table of weights or
// coefficients in its own loop, the way students write it first: the
// table stays in global memory and each warp reads each entry again.
#define TAPS 64
#define DEGREE 16

// A dense layer with one output per sample; the features are stored
// feature-major (feature k of sample i at features[k * n + i]), so the
// per-sample reads are coalesced and the weights w[k] are the same for
// every thread.
__global__ void score(const float *features, const float *w, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float acc = 0.0f;
        for (int k = 0; k < TAPS; k++) {
            acc += features[k * n + i] * w[k];
        }
        out[i] = acc;
    }
}

// Horner's rule with the coefficients in global memory, highest first.
__global__ void horner(const float *coef, const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = x[i];
    float acc = 0.0f;
    for (int k = 0; k <= DEGREE; k++) {
        acc = acc * v + coef[k];
    }
    y[i] = acc;
}
