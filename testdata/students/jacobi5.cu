// one Jacobi sweep for the 2-D Laplace equation (5-point stencil).
// border cells keep their values, the host copies them over.

#define BLOCK 16

__global__ void jacobi_step(const float *grid, float *next, int nx, int ny)
{
	int x = blockIdx.x * blockDim.x + threadIdx.x;
	int y = blockIdx.y * blockDim.y + threadIdx.y;

	// only interior points get updated
	if (x > 0 && x < nx - 1 && y > 0 && y < ny - 1) {
		int idx = y * nx + x;
		float left  = grid[idx - 1];
		float right = grid[idx + 1];
		float up    = grid[idx - nx];
		float down  = grid[idx + nx];
		next[idx] = 0.25f * (left + right + up + down);
	}
}
