// 3x3 sharpen filter: out = 9*center - (sum of the 8 neighbours)
// edges: clamp to the nearest pixel
#define CENTER 9.0f

__global__ void sharpen(const float *src, float *dst, int width, int height)
{
	int col = blockIdx.x * blockDim.x + threadIdx.x;
	int row = blockIdx.y * blockDim.y + threadIdx.y;

	if (col < width && row < height) {
		int up = (row > 0) ? row - 1 : 0;	// clamp top
		int down = (row + 1 < height) ? row + 1 : height - 1;	// clamp bottom
		int left = max(col - 1, 0);
		int right = min(col + 1, width - 1);

		float nb = src[up * width + left] + src[up * width + col] + src[up * width + right]
			 + src[row * width + left] + src[row * width + right]
			 + src[down * width + left] + src[down * width + col] + src[down * width + right];
		dst[row * width + col] = CENTER * src[row * width + col] - nb;
	}
}
