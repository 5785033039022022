// Render loops built for the scalar variant (flags per file in src/CMakeLists.txt).
#define KILN_RENDER_VARIANT scalar
#include "ops/cpu/render_loops.h"
