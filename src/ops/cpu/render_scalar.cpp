// Render loops built for the scalar variant (flags per file in src/CMakeLists.txt): the reference, so it keeps the
// general loops (no span path) that the other variants are checked against.
#define KILN_RENDER_VARIANT scalar
#define KILN_RENDER_REFERENCE 1
#include "ops/cpu/render_loops.h"
