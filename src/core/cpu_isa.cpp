#include "core/cpu_isa.h"

#include <atomic>
#include <cstdlib>

#include "kiln/enum_names.h"

namespace kiln {

namespace {

constexpr EnumName<CpuIsa> kCpuIsaNames[] = {
    {CpuIsa::kScalar, "scalar"}, {CpuIsa::kGeneric, "generic"}, {CpuIsa::kAvx2, "avx2"}};

// KILN_CPU_ISA, where the CPU can run it.
CpuIsa isa_from_env(CpuIsa fallback) {
  const char* forced = std::getenv("KILN_CPU_ISA");
  if (forced == nullptr) return fallback;
  const Result<CpuIsa> isa = enum_parse(kCpuIsaNames, forced, "KILN_CPU_ISA");
  if (!isa.is_ok() || (isa.value() == CpuIsa::kAvx2 && cpu_isa_best() != CpuIsa::kAvx2)) return fallback;
  return isa.value();
}

std::atomic<int> g_isa{-1};

}  // namespace

const char* cpu_isa_name(CpuIsa isa) { return enum_name(kCpuIsaNames, isa); }

CpuIsa cpu_isa_best() {
#if defined(__x86_64__) || defined(__i386__)
  if (__builtin_cpu_supports("avx2")) return CpuIsa::kAvx2;
#endif
  return CpuIsa::kGeneric;
}

CpuIsa cpu_isa_active() {
  int isa = g_isa.load(std::memory_order_relaxed);
  if (isa < 0) {
    isa = static_cast<int>(isa_from_env(cpu_isa_best()));
    g_isa.store(isa, std::memory_order_relaxed);
  }
  return static_cast<CpuIsa>(isa);
}

void cpu_isa_set(CpuIsa isa) {
  if (isa == CpuIsa::kAvx2 && cpu_isa_best() != CpuIsa::kAvx2) isa = CpuIsa::kGeneric;
  g_isa.store(static_cast<int>(isa), std::memory_order_relaxed);
}

}  // namespace kiln
