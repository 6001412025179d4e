// lookup_table: maps every input byte through a 256-entry table staged in
// shared memory (e.g. a gamma curve or an S-box). Written for copper. The
// shared index comes from the input data, so the number of bank conflicts
// of the lookup depends on the input: the kernel the bank-conflict witness
// search (Horga et al.) is meant for. With 4-byte entries, bytes that are
// equal modulo 32 but different hit the same bank.

#define TABLE_SIZE 256

__global__ void lookup_table(unsigned char *in, int *table, int *out, int n) {
    __shared__ int s_table[TABLE_SIZE];
    for (int t = threadIdx.x; t < TABLE_SIZE; t += blockDim.x) {
        s_table[t] = table[t];
    }
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = s_table[in[i]];
    }
}
