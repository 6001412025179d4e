// The CUDA SDK's idiom for dynamic shared memory in template kernels: a
// template struct whose conversion operator gives the launch's
// `extern __shared__` array as a `T *`, specialized for `double` (written
// for copper's tests).
#include <cuda_runtime.h>

template <class T> struct SharedMemory {
    __device__ inline operator T *() {
        extern __shared__ int __smem[];
        return (T *)__smem;
    }
    __device__ inline operator const T *() const {
        extern __shared__ int __smem[];
        return (T *)__smem;
    }
};

template <> struct SharedMemory<double> {
    __device__ inline operator double *() {
        extern __shared__ double __smem_d[];
        return (double *)__smem_d;
    }
    __device__ inline operator const double *() const {
        extern __shared__ double __smem_d[];
        return (double *)__smem_d;
    }
};

// One partial sum per block, a tree in shared memory.
template <class T> __global__ void reduce(T *g_idata, T *g_odata, unsigned int n) {
    T *sdata = SharedMemory<T>();
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    sdata[tid] = (i < n) ? g_idata[i] : 0;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0) g_odata[blockIdx.x] = sdata[0];
}

int main() {
    unsigned int n = 1 << 16;
    int threads = 256, blocks = (n + threads - 1) / threads;
    float *fi, *fo;
    double *di, *dout;
    cudaMalloc(&fi, n * sizeof(float));
    cudaMalloc(&fo, blocks * sizeof(float));
    cudaMalloc(&di, n * sizeof(double));
    cudaMalloc(&dout, blocks * sizeof(double));
    reduce<float><<<blocks, threads, threads * sizeof(float)>>>(fi, fo, n);
    reduce<double><<<blocks, threads, threads * sizeof(double)>>>(di, dout, n);
    cudaDeviceSynchronize();
    return 0;
}
