// Mask row loops built for the avx2 variant (flags per file in src/CMakeLists.txt).
#define KILN_MASK_VARIANT avx2
#include "ops/cpu/mask_loops.h"
