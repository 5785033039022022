// Quality row loops built for the avx2 variant (flags per file in src/CMakeLists.txt).
#define KILN_QUALITY_VARIANT avx2
#include "ops/cpu/quality_loops.h"
