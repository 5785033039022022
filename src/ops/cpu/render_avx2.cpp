// Render loops built for the avx2 variant (flags per file in src/CMakeLists.txt).
#define KILN_RENDER_VARIANT avx2
#include "ops/cpu/render_loops.h"
