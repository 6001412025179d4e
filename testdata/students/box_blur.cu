// box blur, radius 2 (5x5). clamps at the image border
// so edge pixels average copies of the border pixel

#define RAD 2

__global__ void boxBlur(const float *src, float *dst, int width, int height)
{
	int col = blockIdx.x * blockDim.x + threadIdx.x;
	int row = blockIdx.y * blockDim.y + threadIdx.y;

	if (col < width && row < height) {
		float sum = 0.0f;
		for (int dy = -RAD; dy <= RAD; dy++) {
			for (int dx = -RAD; dx <= RAD; dx++) {
				// clamp to the edge
				int r = min(max(row + dy, 0), height - 1);
				int c = min(max(col + dx, 0), width - 1);
				sum += src[r * width + c];
			}
		}
		dst[row * width + col] = sum / ((2 * RAD + 1) * (2 * RAD + 1));
	}
}
