/* Qualifiers and scalar helpers shared by every backend's kernels.
 * C-compatible subset: included by C++ (CPU), CUDA (.cu) and embedded into OpenCL C sources.
 * min/max are written as comparisons, not fminf/fmaxf, so every backend evaluates the same IEEE operations. */
#ifndef KILN_OPS_KERNEL_DEFS_H
#define KILN_OPS_KERNEL_DEFS_H

#if defined(__OPENCL_VERSION__)
#define KILN_KERNEL_FN static inline
/* Pointers into image buffers: __global in OpenCL C 1.2 (no generic address space), plain elsewhere. */
#define KILN_GLOBAL __global
typedef uchar uint8_t;
typedef ushort uint16_t;
typedef int int32_t;
typedef uint uint32_t;
typedef long int64_t;
#define kiln_float_bits(f) as_uint(f)
#define kiln_bits_float(u) as_float(u)
#define kiln_sqrtf(x) sqrt(x)
#define kiln_floorf(x) floor(x)
#define kiln_ceilf(x) ceil(x)
#elif defined(__CUDACC__)
#include <stdint.h>
#define KILN_KERNEL_FN __host__ __device__ static inline
#define KILN_GLOBAL
#ifdef __CUDA_ARCH__
#define kiln_float_bits(f) __float_as_uint(f)
#define kiln_bits_float(u) __uint_as_float(u)
#else
#include <string.h>
static inline uint32_t kiln_float_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static inline float kiln_bits_float(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
#endif
#define kiln_sqrtf(x) sqrtf(x)
#define kiln_floorf(x) floorf(x)
#define kiln_ceilf(x) ceilf(x)
#else
#include <math.h>
#include <stdint.h>
#include <string.h>
#define KILN_KERNEL_FN static inline
#define KILN_GLOBAL
static inline uint32_t kiln_float_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static inline float kiln_bits_float(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
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
