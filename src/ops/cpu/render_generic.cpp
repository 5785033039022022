// Render loops built for the generic variant (flags per file in src/CMakeLists.txt).
#define KILN_RENDER_VARIANT generic
#include "ops/cpu/render_loops.h"
