// Template structs named through a template kernel's own parameters: a
// min/max pair reduced per thread (launched for float and for double), a
// fixed-size window with an integer parameter taken from the kernel's
// own, a device function template over an instance, and a running mean
// instantiated through a host template (written for copper's tests).
#include <cuda_runtime.h>

template <typename T>
struct MinMax {
    T lo, hi;
    __device__ void add(T v) {
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
    }
};

template <typename T, int W>
struct Window {
    T v[W];
    __device__ T sum() const {
        T s = 0;
        for (int k = 0; k < W; k++) s += v[k];
        return s;
    }
};

template <typename T>
struct Mean {
    T sum;
    int count;
};

// The spread of a pair, a device function template over the instance.
template <typename T>
__device__ T spread(const MinMax<T> &m) {
    return m.hi - m.lo;
}

// Each thread scans a strided slice and keeps its smallest and largest
// value; the range is written per thread.
template <typename T>
__global__ void minmax_range(const T *in, MinMax<T> *parts, T *range, int n) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    MinMax<T> acc = {in[0], in[0]};
    for (int i = tid; i < n; i += blockDim.x * gridDim.x)
        acc.add(in[i]);
    parts[tid] = acc;
    range[tid] = spread<T>(acc);
}

// A moving sum over W neighbours, gathered into a window first.
template <typename T, int W>
__global__ void window_sum(const T *in, T *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i + W > n) return;
    Window<T, W> w;
    for (int k = 0; k < W; k++) w.v[k] = in[i + k];
    out[i] = w.sum();
}

// Row means, the kernel launched by a host template.
template <typename T>
__global__ void row_mean(const T *x, T *mean, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    Mean<T> m = {T(0), 0};
    for (int c = 0; c < cols; c++) {
        m.sum += x[r * cols + c];
        m.count++;
    }
    mean[r] = m.sum / T(m.count);
}

template <typename T>
void run_mean(const T *x, T *mean, int rows, int cols) {
    row_mean<T><<<(rows + 127) / 128, 128>>>(x, mean, rows, cols);
}

int main() {
    int n = 1 << 16, threads = 64 * 256, rows = 1024, cols = 32;
    float *fin, *frange, *fout, *fx, *fmean;
    double *din, *drange;
    MinMax<float> *fparts;
    MinMax<double> *dparts;
    cudaMalloc(&fin, n * sizeof(float));
    cudaMalloc(&din, n * sizeof(double));
    cudaMalloc(&fparts, threads * sizeof(MinMax<float>));
    cudaMalloc(&dparts, threads * sizeof(MinMax<double>));
    cudaMalloc(&frange, threads * sizeof(float));
    cudaMalloc(&drange, threads * sizeof(double));
    cudaMalloc(&fout, n * sizeof(float));
    cudaMalloc(&fx, rows * cols * sizeof(float));
    cudaMalloc(&fmean, rows * sizeof(float));
    minmax_range<float><<<64, 256>>>(fin, fparts, frange, n);
    minmax_range<double><<<64, 256>>>(din, dparts, drange, n);
    window_sum<float, 8><<<n / 256, 256>>>(fin, fout, n);
    run_mean(fx, fmean, rows, cols);
    cudaDeviceSynchronize();
    return 0;
}
