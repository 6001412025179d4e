// vector_add: c = a + b, one thread per element, with a bounds check.
// Written for copper. Host side: a host template helper that allocates and
// uploads a std::vector, and a literal `<<<64, 256>>>` launch.

#include <cstdio>
#include <vector>
#include <cuda_runtime.h>

__global__ void vector_add(const float *a, const float *b, float *c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        c[i] = a[i] + b[i];
    }
}

template <typename T>
T *to_device(const std::vector<T> &host) {
    T *dev = nullptr;
    cudaMalloc(reinterpret_cast<void **>(&dev), host.size() * sizeof(T));
    cudaMemcpy(dev, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice);
    return dev;
}

template <typename T>
std::vector<T> from_device(const T *dev, size_t count) {
    std::vector<T> host(count);
    cudaMemcpy(host.data(), dev, count * sizeof(T), cudaMemcpyDeviceToHost);
    return host;
}

int main() {
    const int n = 16384;
    std::vector<float> a(n), b(n);
    for (int i = 0; i < n; ++i) {
        a[i] = static_cast<float>(i);
        b[i] = 2.0f * i;
    }
    float *da = to_device(a);
    float *db = to_device(b);
    float *dc = nullptr;
    cudaMalloc(&dc, n * sizeof(float));

    vector_add<<<64, 256>>>(da, db, dc, n);
    cudaDeviceSynchronize();

    std::vector<float> c = from_device(dc, n);
    int errors = 0;
    for (int i = 0; i < n; ++i) {
        if (c[i] != 3.0f * i) {
            ++errors;
        }
    }
    std::printf("%d errors\n", errors);
    cudaFree(da);
    cudaFree(db);
    cudaFree(dc);
    return errors == 0 ? 0 : 1;
}
