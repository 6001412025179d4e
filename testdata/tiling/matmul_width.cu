// matrix multiplication, square matrices of side width (no host code here;
// the launch is in main.cu, which copper does not see)

#define TILE_WIDTH 16

__global__ void MatrixMulKernel(double *Md, double *Nd, double *Pd, int Width)
{
	int Row = blockIdx.y * TILE_WIDTH + threadIdx.y;
	int Col = blockIdx.x * TILE_WIDTH + threadIdx.x;
	if (Row < Width && Col < Width) {
		double Pvalue = 0;
		// each thread computes one element of the block sub-matrix
		for (int k = 0; k < Width; ++k) {
			Pvalue += Md[Row * Width + k] * Nd[k * Width + Col];
		}
		Pd[Row * Width + Col] = Pvalue;
	}
}
