// addSub0: Muller & Hoffmann (POPL 2021), Fig. 1, body addS0.
// One thread per row j of the w x h matrix B; the loop walks the columns.
// Adds A to even rows and subtracts it from odd rows. The `j % 2` test
// diverges inside every warp on every iteration, and the accesses to B are
// w elements apart between neighbouring threads (uncoalesced).

#include <iostream>
#include <vector>
#include <cuda_runtime.h>

__global__ void addSub0(int *A, int *B, int w, int h) {
    for (int i = 0; i < w; i++) {
        int j = blockIdx.x * blockDim.x + threadIdx.x;
        if (j % 2 == 0) {
            B[j * w + i] += A[i];
        } else {
            B[j * w + i] -= A[i];
        }
    }
}

int main() {
    const int w = 64;
    const int h = 1024;
    std::vector<int> hostA(w), hostB(w * h);
    for (int i = 0; i < w; i++) {
        hostA[i] = i;
    }
    for (int k = 0; k < w * h; k++) {
        hostB[k] = k % 17;
    }

    int *dA = nullptr;
    int *dB = nullptr;
    cudaMalloc(&dA, w * sizeof(int));
    cudaMalloc(&dB, w * h * sizeof(int));
    cudaMemcpy(dA, hostA.data(), w * sizeof(int), cudaMemcpyHostToDevice);
    cudaMemcpy(dB, hostB.data(), w * h * sizeof(int), cudaMemcpyHostToDevice);

    // One thread per row: h / 256 = 4 blocks.
    addSub0<<<dim3(4), dim3(256)>>>(dA, dB, w, h);
    cudaDeviceSynchronize();

    cudaMemcpy(hostB.data(), dB, w * h * sizeof(int), cudaMemcpyDeviceToHost);
    std::cout << "B[0] = " << hostB[0] << ", B[w] = " << hostB[w] << std::endl;

    cudaFree(dA);
    cudaFree(dB);
    return 0;
}
