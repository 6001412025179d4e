// matmul_tiled: C = A * B for square n x n row-major matrices with 16 x 16
// shared-memory tiles (the classic tiled scheme of the CUDA programming
// guide; the matMul benchmark of Muller & Hoffmann comes from the SDK).
// Written for copper. n must be a multiple of TILE and the block must be
// TILE x TILE. Host side: a small RAII wrapper class for device buffers.

#include <cstdio>
#include <vector>
#include <cuda_runtime.h>

#define TILE 16

__global__ void matmul_tiled(float *A, float *B, float *C, int n) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    int tx = threadIdx.x;
    int ty = threadIdx.y;
    int row = blockIdx.y * 16 + ty;
    int col = blockIdx.x * 16 + tx;
    float sum = 0.0f;
    for (int t = 0; t < n / TILE; t++) {
        As[ty][tx] = A[row * n + t * 16 + tx];
        Bs[ty][tx] = B[(t * 16 + ty) * n + col];
        __syncthreads();
        for (int k = 0; k < TILE; k++) {
            sum += As[ty][k] * Bs[k][tx];
        }
        __syncthreads();
    }
    C[row * n + col] = sum;
}

class DeviceMatrix {
public:
    explicit DeviceMatrix(int n) : n_(n), ptr_(nullptr) {
        cudaMalloc(&ptr_, bytes());
    }
    ~DeviceMatrix() { cudaFree(ptr_); }
    DeviceMatrix(const DeviceMatrix &) = delete;
    DeviceMatrix &operator=(const DeviceMatrix &) = delete;

    size_t bytes() const { return static_cast<size_t>(n_) * n_ * sizeof(float); }
    float *get() { return ptr_; }

    void upload(const std::vector<float> &host) {
        cudaMemcpy(ptr_, host.data(), bytes(), cudaMemcpyHostToDevice);
    }
    void download(std::vector<float> &host) const {
        host.resize(static_cast<size_t>(n_) * n_);
        cudaMemcpy(host.data(), ptr_, bytes(), cudaMemcpyDeviceToHost);
    }

private:
    int n_;
    float *ptr_;
};

int main() {
    const int n = 64;
    std::vector<float> a(n * n, 1.0f), b(n * n, 2.0f), c;
    DeviceMatrix dA(n), dB(n), dC(n);
    dA.upload(a);
    dB.upload(b);
    dim3 block(TILE, TILE);
    dim3 grid(n / TILE, n / TILE);
    matmul_tiled<<<grid, block>>>(dA.get(), dB.get(), dC.get(), n);
    cudaDeviceSynchronize();
    dC.download(c);
    std::printf("C[0] = %f (expected %f)\n", c[0], 2.0f * n);
    return 0;
}
