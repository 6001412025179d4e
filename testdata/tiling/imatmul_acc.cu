// integer matrix product accumulated straight into C (C must be zeroed first)
#define TILE 16

__global__ void imatmul_acc(int *a, int *b, int *c, int n)
{
	int i = blockIdx.y * blockDim.y + threadIdx.y;	/* row */
	int j = blockIdx.x * blockDim.x + threadIdx.x;	/* column */
	if (i < n && j < n)
		for (int k = 0; k < n; k++)
			c[i * n + j] += a[i * n + k] * b[k * n + j];
}

int main()
{
	const int n = 100;
	int *a, *b, *c;
	cudaMalloc((void **)&a, n * n * sizeof(int));
	cudaMalloc((void **)&b, n * n * sizeof(int));
	cudaMalloc((void **)&c, n * n * sizeof(int));
	cudaMemset(c, 0, n * n * sizeof(int));
	dim3 threads(TILE, TILE);
	dim3 blocks((n + TILE - 1) / TILE, (n + TILE - 1) / TILE);
	imatmul_acc<<<blocks, threads>>>(a, b, c, n);
	return 0;
}
