// Series-encoding loops built for the avx2 variant (flags per file in src/CMakeLists.txt).
#define KILN_ENCODING_VARIANT avx2
#include "ops/cpu/series_encoding_loops.h"
