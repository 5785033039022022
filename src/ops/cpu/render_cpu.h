// CPU render entry points and the run-time choice of ISA variant.
#pragma once

#include <cstdint>

#include "kiln/image.h"
#include "kiln/ops.h"

namespace kiln {

class ThreadPool;

enum class CpuIsa : uint8_t { kScalar = 0, kGeneric, kAvx2 };

const char* cpu_isa_name(CpuIsa isa);
// The variant in use: the best the CPU supports, unless KILN_CPU_ISA=scalar|generic|avx2 or cpu_isa_set() says
// otherwise. scalar is the reference mode (no SIMD).
CpuIsa cpu_isa_active();
CpuIsa cpu_isa_best();
void cpu_isa_set(CpuIsa isa);

namespace scalar {
void render_images(const RenderParams&, const WindowBatch&, const BatchView&, int64_t begin, int64_t end);
}
namespace generic {
void render_images(const RenderParams&, const WindowBatch&, const BatchView&, int64_t begin, int64_t end);
}
namespace avx2 {
void render_images(const RenderParams&, const WindowBatch&, const BatchView&, int64_t begin, int64_t end);
}

// Validates, then renders every window; spreads images over `pool` when given.
Status render_cpu(const RenderParams& params, const WindowBatch& windows, const BatchView& out, ThreadPool* pool);

}  // namespace kiln
