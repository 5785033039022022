// Warp row loops built for the avx2 variant (flags per file in src/CMakeLists.txt).
#define KILN_WARP_VARIANT avx2
#include "ops/cpu/warp_loops.h"
