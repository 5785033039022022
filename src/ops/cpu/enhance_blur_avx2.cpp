// Fixed-point unsharp blur loops built for the avx2 variant (flags per file in src/CMakeLists.txt).
#define KILN_ENHANCE_BLUR_VARIANT avx2
#include "ops/cpu/enhance_blur_loops.h"
