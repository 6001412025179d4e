// moving average over 5 neighbours, border clamped with min/max

#define HALF 2

__global__ void smooth_minmax(const float *in, float *out, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) {
		float sum = 0;
		for (int k = -HALF; k <= HALF; k++) {
			int j = i + k;
			j = min(max(j, 0), n - 1);
			sum += in[j];
		}
		out[i] = sum / (2 * HALF + 1);
	}
}
