// scale_n.cu: N is not defined in the file; it is compiled with -DN=256
// (nvcc -DN=256 scale_n.cu), as course kernels often are. Each block
// reverses its N-element segment of x through shared memory, scaled by s.
// Written for copper.

__global__ void scale_n(float *x, float s) {
    __shared__ float buf[N];
    int i = blockIdx.x * N + threadIdx.x;
    buf[threadIdx.x] = x[i] * s;
    __syncthreads();
    x[i] = buf[N - 1 - threadIdx.x];
}

int main() {
    float *x;
    cudaMalloc(&x, 4 * N * sizeof(float));
    scale_n<<<4, N>>>(x, 2.0f);
    return 0;
}
