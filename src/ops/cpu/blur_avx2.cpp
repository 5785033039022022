// The blur's full-width loops built for the avx2 variant (flags per file in src/CMakeLists.txt).
#define KILN_BLUR_VARIANT avx2
#include "ops/cpu/blur_loops.h"
