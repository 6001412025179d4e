// saxpy_n.cu: y = a * x + y over N elements with a grid-stride loop; N is
// given on the command line (nvcc -DN=1048576 saxpy_n.cu), BLOCKSIZE too.
// Written for copper.
#include <cstdio>

__global__ void saxpy_n(float a, const float *x, float *y) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < N; i += blockDim.x * gridDim.x) {
        y[i] = a * x[i] + y[i];
    }
}

int main() {
    float *x, *y;
    cudaMalloc(&x, N * sizeof(float));
    cudaMalloc(&y, N * sizeof(float));
    saxpy_n<<<32, BLOCKSIZE>>>(2.0f, x, y);
    cudaDeviceSynchronize();
    printf("done\n");
    return 0;
}
