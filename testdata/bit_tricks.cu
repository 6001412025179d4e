// Integer intrinsics: population counts for a bitset, the highest set bit
// as a log2, bit reversal for an FFT index, and float bit tricks.
__global__ void bitset_stats(const unsigned int *words, int *ones, int *log2_floor,
                             unsigned int *reversed, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned int w = words[i];
    ones[i] = __popc(w);
    log2_floor[i] = w == 0 ? -1 : 31 - __clz(w);
    reversed[i] = __brev(w) >> (32 - 10);
    ones[i] += __ffs(w) > 0 ? 0 : 100;
}

__global__ void quantize(const float *v, int *q, int *sign_bit, float *halved, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float x = v[i];
        q[i] = min(max(__float2int_rn(x * 127.0f), -127), 127);
        sign_bit[i] = (__float_as_int(x) >> 31) & 1;
        halved[i] = __int_as_float(__float_as_int(x) - (1 << 23));
        q[i] += __mulhi(q[i], 1 << 30) + __umulhi(abs(q[i]), 4u) + __mul24(q[i], 2);
    }
}
