// 5x5 box blur, rows outside the image are skipped before the inner loop
// (saves the inner loop for the top/bottom border), columns skipped inside

#define RAD 2

__global__ void blur_rows_skip(const float *src, float *dst, int width, int height)
{
	int col = blockIdx.x * blockDim.x + threadIdx.x;
	int row = blockIdx.y * blockDim.y + threadIdx.y;
	if (col >= width || row >= height)
		return;

	float total = 0.0f;
	int count = 0;
	for (int dy = -RAD; dy <= RAD; dy++) {
		int r = row + dy;
		if (r < 0 || r >= height) continue;   // row outside
		for (int dx = -RAD; dx <= RAD; dx++) {
			int c = col + dx;
			if (c < 0 || c >= width) continue;
			total += src[r * width + c];
			count++;
		}
	}
	dst[row * width + col] = total / count;
}
