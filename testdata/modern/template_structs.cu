// Template structs as value types: a complex accumulator in a
// reduction-like kernel, a pair of running sums through an alias, a
// fixed-size vector with an integer parameter nested in another struct,
// and an array of instances through a pointer parameter (written for
// copper's tests).
#include <cuda_runtime.h>

template <typename T>
struct Complex {
    T re, im;
    __device__ void add(const Complex &o) {
        re += o.re;
        im += o.im;
    }
    __device__ T norm2() const { return re * re + im * im; }
};

template <typename T, int N = 4>
struct Small {
    T v[N];
    __device__ T sum() const {
        T s = 0;
        for (int k = 0; k < N; k++) s += v[k];
        return s;
    }
};

struct Sample {
    Small<float> w;
    int tag;
};

using FloatPair = Complex<float>;

// Each thread sums a strided slice of complex values, then one
// thread per block writes its block's power.
__global__ void power_sum(const Complex<float> *in, float *power, int n) {
    __shared__ float part[256];
    int tid = threadIdx.x;
    Complex<float> acc = {0.0f, 0.0f};
    for (int i = blockIdx.x * blockDim.x + tid; i < n; i += blockDim.x * gridDim.x)
        acc.add(in[i]);
    part[tid] = acc.norm2();
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) part[tid] += part[tid + s];
        __syncthreads();
    }
    if (tid == 0) power[blockIdx.x] = part[0];
}

// Double-precision sums through an alias of another instance.
__global__ void pair_means(const double *x, double *out, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    Complex<double> s = {0.0, 0.0};
    FloatPair unused = {1.0f, 2.0f};
    for (int c = 0; c < cols; c++) {
        Complex<double> e = {x[r * cols + c], 1.0};
        s.add(e);
    }
    out[r] = s.re / s.im + unused.re * 0.0;
}

// A struct holding an instance with an integer parameter, read through
// a pointer parameter.
__global__ void weigh(const Sample *samples, float *total, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) total[i] = samples[i].w.sum() * samples[i].tag;
}

int main() {
    int n = 1 << 16, rows = 1024, cols = 32;
    Complex<float> *in;
    float *power, *total;
    double *x, *out;
    Sample *samples;
    cudaMalloc(&in, n * sizeof(Complex<float>));
    cudaMalloc(&power, 64 * sizeof(float));
    cudaMalloc(&x, rows * cols * sizeof(double));
    cudaMalloc(&out, rows * sizeof(double));
    cudaMalloc(&samples, n * sizeof(Sample));
    cudaMalloc(&total, n * sizeof(float));
    power_sum<<<64, 256>>>(in, power, n);
    pair_means<<<(rows + 127) / 128, 128>>>(x, out, rows, cols);
    weigh<<<(n + 255) / 256, 256>>>(samples, total, n);
    cudaDeviceSynchronize();
    return 0;
}
