// conv1d: 1-D convolution of an n-element signal with a MASK_WIDTH-tap
// mask, one thread per output element; taps that fall outside the signal
// count as zero. After the 1DConv benchmark of Lou & Muller (PMAM 2024)
// (taken there from GitHub; its constant bound shows a compile-time mask
// width). The paper prints no listing; this version is written for copper.
// Neighbouring threads read overlapping windows of the input, which is what
// makes the global-to-shared rewrite pay off.

#define MASK_WIDTH 7

__global__ void conv1d(float *input, float *mask, float *output, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int start = i - 7 / 2;
    float sum = 0.0f;
    for (int j = 0; j < MASK_WIDTH; j++) {
        int k = start + j;
        if (k >= 0 && k < n) {
            sum += input[k] * mask[j];
        }
    }
    if (i < n) {
        output[i] = sum;
    }
}
