// The CPU code path in use: ISA variants (files *_avx2.cpp etc.) are chosen at run time from what the CPU
// supports, unless KILN_CPU_ISA=scalar|generic|avx2 or cpu_isa_set() says otherwise. scalar is the reference mode
// (no SIMD, the per-pixel _px.h math the GPU backends are checked against); every variant gives byte-identical
// results except the fast paths that state a tolerance against it (two-tap u8 resize and preprocess, unsharp).
#pragma once

#include <cstdint>

namespace kiln {

enum class CpuIsa : uint8_t { kScalar = 0, kGeneric, kAvx2 };

const char* cpu_isa_name(CpuIsa isa);
CpuIsa cpu_isa_active();
CpuIsa cpu_isa_best();
void cpu_isa_set(CpuIsa isa);

}  // namespace kiln
