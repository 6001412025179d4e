// ternary_kernel: clamps x into [lo, hi] and applies a leaky ReLU, all with
// the conditional operator `?:` (no if statements). Written for copper.
// Also writes a 0/1 mask of the clamped elements (a bool-typed local).

__global__ void ternary_kernel(
    float *x,
    float *y,
    int *clamped,
    int n,
    float lo,
    float hi,
    float slope
) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i];
        bool out_of_range = v < lo || v > hi;
        float c = v < lo ? lo : v > hi ? hi : v;
        y[i] = c > 0.0f ? c : slope * c;
        clamped[i] = out_of_range ? 1 : 0;
    }
}
