// CPU render: the loops of each ISA variant (render_loops.h, built once per variant) and the run-time choice.
#pragma once

#include <cstdint>

#include "core/cpu_isa.h"
#include "ops/render.h"

namespace kiln {

namespace scalar {
void render_images(const RenderParams&, const VarShapeBatchView& windows, const VarShapeBatchView& images,
                   int64_t begin, int64_t end);
}
namespace generic {
void render_images(const RenderParams&, const VarShapeBatchView& windows, const VarShapeBatchView& images,
                   int64_t begin, int64_t end);
}
namespace avx2 {
void render_images(const RenderParams&, const VarShapeBatchView& windows, const VarShapeBatchView& images,
                   int64_t begin, int64_t end);
}

}  // namespace kiln
