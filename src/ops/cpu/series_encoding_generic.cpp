// Series-encoding loops built for the generic variant (flags per file in src/CMakeLists.txt).
#define KILN_ENCODING_VARIANT generic
#include "ops/cpu/series_encoding_loops.h"
