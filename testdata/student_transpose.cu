// student kernel
#define TILE 16

__global__ void
transpose(float* out, const float* in, int w, int h)
{
	__shared__ float tile[TILE][TILE];   // the tile
	int x = blockIdx.x*TILE + threadIdx.x;
	int y = blockIdx.y*TILE + threadIdx.y;

	/* load */
	if (x < w && y < h)
		tile[threadIdx.y][threadIdx.x] = in[y*w + x];
	__syncthreads();
	x = blockIdx.y*TILE + threadIdx.x;  // swapped
	y = blockIdx.x*TILE + threadIdx.y;
	if (x < h && y < w)
		out[y*h + x] = tile[threadIdx.x][threadIdx.y];
}
