// bfloat16 data (cuda_bf16.h): scale and shift each element in float and
// round back with __float2bfloat16; a second kernel works on
// __nv_bfloat162 pairs with __hmul2 and the bf16 conversions of a pair, and
// a third uses the nv_bfloat16 typedef, its operators and functional casts.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

__global__ void bf16_scale(const __nv_bfloat16 *__restrict__ in, __nv_bfloat16 *__restrict__ out,
                           float scale, float shift, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        const float v = __bfloat162float(in[i]);
        out[i] = __float2bfloat16(v * scale + shift);
    }
}

__global__ void bf16x2_scale(const __nv_bfloat162 *__restrict__ in, __nv_bfloat162 *__restrict__ out,
                             float scale, int pairs) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < pairs) {
        const __nv_bfloat162 s = __float2bfloat162_rn(scale);
        __nv_bfloat162 r = __hmul2(in[i], s);
        float2 f = __bfloat1622float2(r);
        out[i] = __floats2bfloat162_rn(f.y, f.x);
    }
}

__global__ void bf16_relu(nv_bfloat16 *data, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        nv_bfloat16 v = data[i];
        const nv_bfloat16 zero = __float2bfloat16(0.0f);
        data[i] = v < zero ? zero : v * nv_bfloat16(2.0f);
    }
}
