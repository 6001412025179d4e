// multi_kernel: three kernels and the host program that chains them:
// iota_kernel fills a matrix, scale_rows multiplies each row by a factor
// from a table (one block row per matrix row), and row_sums adds up each
// row (one thread per row, uncoalesced). Written for copper. Host side:
// iostream, std::vector, a host class that owns a device buffer, a host
// template helper, and literal launches of each kernel.

#include <iostream>
#include <vector>
#include <cuda_runtime.h>

__global__ void iota_kernel(float *a, int n, float start) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        a[i] = start + (float)i;
    }
}

__global__ void scale_rows(float *m, float *factors, int rows, int cols) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int r = blockIdx.y;
    if (r < rows && c < cols) {
        m[r * cols + c] *= factors[r];
    }
}

__global__ void row_sums(float *m, float *sums, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) {
        return;
    }
    float s = 0.0f;
    for (int c = 0; c < cols; c++) {
        s += m[r * cols + c];
    }
    sums[r] = s;
}

template <typename T>
void check(T value, const char *what) {
    if (value != T()) {
        std::cerr << what << " failed with code " << static_cast<int>(value) << std::endl;
    }
}

class DeviceBuffer {
public:
    explicit DeviceBuffer(size_t count) : count_(count), data_(nullptr) {
        check(cudaMalloc(&data_, count_ * sizeof(float)), "cudaMalloc");
    }
    ~DeviceBuffer() { cudaFree(data_); }
    float *data() { return data_; }
    std::vector<float> download() const {
        std::vector<float> host(count_);
        check(cudaMemcpy(host.data(), data_, count_ * sizeof(float), cudaMemcpyDeviceToHost), "cudaMemcpy");
        return host;
    }
    void upload(const std::vector<float> &host) {
        check(cudaMemcpy(data_, host.data(), count_ * sizeof(float), cudaMemcpyHostToDevice), "cudaMemcpy");
    }

private:
    size_t count_;
    float *data_;
};

int main() {
    const int rows = 64;
    const int cols = 128;
    DeviceBuffer m(rows * cols), factors(rows), sums(rows);
    std::vector<float> f(rows);
    for (int r = 0; r < rows; r++) {
        f[r] = (r % 2 == 0) ? 1.0f : -1.0f;
    }
    factors.upload(f);

    iota_kernel<<<32, 256>>>(m.data(), rows * cols, 0.0f);
    scale_rows<<<dim3(1, 64), dim3(128)>>>(m.data(), factors.data(), rows, cols);
    row_sums<<<2, 32>>>(m.data(), sums.data(), rows, cols);
    check(cudaDeviceSynchronize(), "kernels");

    std::vector<float> s = sums.download();
    std::cout << "row 0 sum: " << s[0] << ", row 1 sum: " << s[1] << std::endl;
    return 0;
}
