// Lab 4, part 2: the largest value of each row.
// One thread per row, as on the slides.

__global__ void row_max(const float *M, float *out, int rows, int m)
{
	int row = blockIdx.x * blockDim.x + threadIdx.x;
	if (row < rows) {
		float best = M[row * m];
		for (int i = 1; i < m; i++)
			best = fmaxf(best, M[row * m + i]);
		out[row] = best;
	}
}
