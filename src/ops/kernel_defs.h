/* Qualifiers and scalar helpers shared by every backend's kernels.
 * C-compatible subset: included by C++ (CPU), CUDA (.cu) and embedded into OpenCL C sources.
 * min/max are written as comparisons, not fminf/fmaxf, so every backend evaluates the same IEEE operations. */
#ifndef KILN_OPS_KERNEL_DEFS_H
#define KILN_OPS_KERNEL_DEFS_H

#if defined(__OPENCL_VERSION__)
#define KILN_KERNEL_FN static inline
typedef uchar uint8_t;
typedef int int32_t;
typedef uint uint32_t;
typedef long int64_t;
#define kiln_sqrtf(x) sqrt(x)
#define kiln_floorf(x) floor(x)
#define kiln_ceilf(x) ceil(x)
#elif defined(__CUDACC__)
#include <stdint.h>
#define KILN_KERNEL_FN __host__ __device__ static inline
#define kiln_sqrtf(x) sqrtf(x)
#define kiln_floorf(x) floorf(x)
#define kiln_ceilf(x) ceilf(x)
#else
#include <math.h>
#include <stdint.h>
#define KILN_KERNEL_FN static inline
#define kiln_sqrtf(x) sqrtf(x)
#define kiln_floorf(x) floorf(x)
#define kiln_ceilf(x) ceilf(x)
#endif

KILN_KERNEL_FN float kiln_minf(float a, float b) { return a < b ? a : b; }
KILN_KERNEL_FN float kiln_maxf(float a, float b) { return a > b ? a : b; }
KILN_KERNEL_FN float kiln_clampf(float v, float lo, float hi) { return kiln_minf(kiln_maxf(v, lo), hi); }
KILN_KERNEL_FN float kiln_absf(float v) { return v < 0.0f ? -v : v; }
KILN_KERNEL_FN int32_t kiln_mini(int32_t a, int32_t b) { return a < b ? a : b; }
KILN_KERNEL_FN int32_t kiln_maxi(int32_t a, int32_t b) { return a > b ? a : b; }

#endif
