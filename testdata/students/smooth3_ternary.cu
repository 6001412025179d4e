// 3-point average, the neighbours past the ends are the end values
// (written with ?: because that is how we did it in the lab)
__global__ void smooth3_edges(const float *in, float *out, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) {
		int left = (i > 0) ? i - 1 : 0;
		int right = (i < n - 1) ? i + 1 : n - 1;
		out[i] = (in[left] + in[i] + in[right]) / 3.0f;
	}
}
