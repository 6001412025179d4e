// clamp.h: index clamping for the stencil project (included by stencil.h).
#ifndef CLAMP_H
#define CLAMP_H

__device__ __forceinline__ int clampi(int v, int lo, int hi) {
    return v < lo ? lo : (v > hi ? hi : v);
}

#endif
