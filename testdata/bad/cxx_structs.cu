// Structs built by constructors (explicit or default), which copper does
// not read: each kernel using them is named with the construct; the
// kernels initializing their struct with `{…}` or field by field (a
// template struct instance with a concrete argument, or with the
// kernel's template parameter, read per instantiation) still read
// (written for copper's tests).
#include <cuda_runtime.h>

struct Vec3 {
    float x, y, z;
    __device__ Vec3(float x, float y, float z) : x(x), y(y), z(z) {}
    __device__ float dot(const Vec3 &o) const { return x * o.x + y * o.y + z * o.z; }
};

struct Plain3 {
    float x, y, z;
    __device__ float dot(const Plain3 &o) const { return x * o.x + y * o.y + z * o.z; }
};

struct Acc {
    float sum;
    __device__ Acc() : sum(1.0f) {}
};

template <typename T> struct Pair {
    T a, b;
    __device__ T sum() const { return a + b; }
};

// A constructor with a member initializer list: not read.
__global__ void ctor_dots(const float *a, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        Vec3 u(a[3 * i], a[3 * i + 1], a[3 * i + 2]);
        out[i] = u.x + u.y + u.z;
    }
}

// An instance of a template struct with a concrete argument: read.
__global__ void pair_sums(const float *x, const float *y, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        Pair<float> p;
        p.a = x[i];
        p.b = y[i];
        out[i] = p.sum();
    }
}

// An instance whose argument is the kernel's template parameter: read.
template <typename T>
__global__ void pair_sums_of(const T *x, const T *y, T *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        Pair<T> p;
        p.a = x[i];
        p.b = y[i];
        out[i] = p.sum();
    }
}

// A struct built by its default constructor (`sum` starts at 1): not
// read, rather than read with `sum` unset.
__global__ void default_built(const float *a, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        Acc acc;
        acc.sum += a[i];
        out[i] = acc.sum;
    }
}

// The same dot product with a brace-initialized struct: read.
__global__ void plain_dots(const float *a, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        Plain3 u = {a[3 * i], a[3 * i + 1], a[3 * i + 2]};
        Plain3 v = {1.0f, 2.0f, 3.0f};
        out[i] = u.dot(v);
    }
}

int main() {
    int n = 1000;
    float *a, *y, *out;
    cudaMalloc(&a, 3 * n * sizeof(float));
    cudaMalloc(&y, n * sizeof(float));
    cudaMalloc(&out, n * sizeof(float));
    ctor_dots<<<(n + 127) / 128, 128>>>(a, out, n);
    pair_sums<<<(n + 127) / 128, 128>>>(a, y, out, n);
    pair_sums_of<float><<<(n + 127) / 128, 128>>>(a, y, out, n);
    default_built<<<(n + 127) / 128, 128>>>(a, out, n);
    plain_dots<<<(n + 127) / 128, 128>>>(a, out, n);
    cudaDeviceSynchronize();
    return 0;
}
