// Each thread clamps `perThread` consecutive samples in place; the
// host code is in another file.
__global__ void clampChunks(float *samples, int n, int perThread, float lo, float hi) {
    int tid = threadIdx.x + blockIdx.x * blockDim.x;
    for (int i = 0; i < perThread; i++) {
        if (tid * perThread + i < n) {
            float s = samples[tid * perThread + i];
            samples[tid * perThread + i] = fminf(fmaxf(s, lo), hi);
        }
    }
}
