// config.h: the block size and the element type of the ops library.
// Build: nvcc -I include [-DBLOCK=256] [-DUSE_DOUBLE] src/main.cu
#pragma once
#ifndef BLOCK
#define BLOCK 128
#endif
#ifdef USE_DOUBLE
typedef double real;
#else
typedef float real;
#endif
