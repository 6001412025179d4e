// Lab 4: matrix-vector product and row statistics.
// One thread per row, as on the slides.

#define BLOCK 256

/* y = M * x, M is rows x m, row-major */
__global__ void matvec(const float *M, const float *x, float *y, int rows, int m)
{
	int row = blockIdx.x * blockDim.x + threadIdx.x;
	if (row < rows) {
		float acc = 0.0f;
		for (int i = 0; i < m; i++)
			acc += M[row * m + i] * x[i];
		y[row] = acc;
	}
}
