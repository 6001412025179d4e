// Sliding-window sum of radius R: out[i] is the sum of in[i-R .. i+R],
// elements outside the array counted as 0.
#define R 3

__global__ void window_sum(const float *in, float *out, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) {
		float s = 0.0f;
		// every neighbour within R
		for (int k = -R; k <= R; k++)
			if (i + k >= 0 && i + k < n)
				s += in[i + k];
		out[i] = s;
	}
}
