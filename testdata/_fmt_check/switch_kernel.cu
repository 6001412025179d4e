// switch_kernel: applies one of several operations per element, chosen by
// an opcode array, with a `switch` (cases, stacked case labels, default,
// break). Written for copper. The opcodes differ between neighbouring
// threads, so the switch diverges.

__global__ void switch_kernel(int *ops, float *a, float *b, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) {
        return;
    }
    float r;
    switch (ops[i]) {
        case 0:
            r = a[i] + b[i];
            break;
        case 1:
            r = a[i] - b[i];
            break;
        case 2:
            r = a[i] * b[i];
            break;
        case 3:
        case 4:
            r = b[i] != 0.0f ? a[i] / b[i] : 0.0f;
            break;
        default:
            r = a[i];
            break;
    }
    out[i] = r;
}
