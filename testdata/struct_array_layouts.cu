// struct_array_layouts: structs with fixed-size array members, their C
// layout checked by the compiler (the same sizes and offsets are asserted
// in copper's `ir::record` tests), and a per-thread 3x3 matrix-vector
// product over `float m[3][3]` (two run-time member indices). Written for
// copper.

#include <cstddef>
#include <cuda_runtime.h>

struct Cell { float v[4]; int n; };
struct Wide { char tag; double d[2]; int c; };
struct Mat { float m[3][3]; char f; };
struct Short { char c[3]; short s; };
struct Uv { float2 uv[3]; int id; };

static_assert(sizeof(Cell) == 20 && offsetof(Cell, n) == 16, "Cell");
static_assert(sizeof(Wide) == 32 && offsetof(Wide, d) == 8 && offsetof(Wide, c) == 24, "Wide");
static_assert(sizeof(Mat) == 40 && offsetof(Mat, f) == 36, "Mat");
static_assert(sizeof(Short) == 6 && offsetof(Short, s) == 4, "Short");
static_assert(sizeof(Uv) == 32 && offsetof(Uv, id) == 24, "Uv");

__global__ void mat3_apply(const Mat *mats, const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        for (int r = 0; r < 3; ++r) {
            float acc = 0.0f;
            for (int c = 0; c < 3; ++c) {
                acc += mats[i].m[r][c] * x[3 * i + c];
            }
            y[3 * i + r] = acc + (float)mats[i].f;
        }
    }
}

__global__ void wide_sum(const Wide *w, double *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = w[i].d[i & 1] + (double)w[i].c + (double)w[i].tag;
    }
}

int main() {
    const int n = 200;
    Mat *d_mats;
    Wide *d_w;
    float *d_x, *d_y;
    double *d_out;
    cudaMalloc(&d_mats, n * sizeof(Mat));
    cudaMalloc(&d_w, n * sizeof(Wide));
    cudaMalloc(&d_x, 3 * n * sizeof(float));
    cudaMalloc(&d_y, 3 * n * sizeof(float));
    cudaMalloc(&d_out, n * sizeof(double));
    mat3_apply<<<(n + 63) / 64, 64>>>(d_mats, d_x, d_y, n);
    wide_sum<<<(n + 63) / 64, 64>>>(d_w, d_out, n);
    cudaDeviceSynchronize();
    return 0;
}
