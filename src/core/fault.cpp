#include "core/fault.h"

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <sstream>

namespace kiln {

namespace {

struct FaultState {
  std::atomic<int64_t> alloc_at{0};  // 0 = off
  std::atomic<int64_t> kernel_at{0};
  std::atomic<int64_t> provider_at{0};
  std::atomic<int64_t> provider_oom_at{0};
  std::atomic<int64_t> decoder_full_at{0};
  std::atomic<int64_t> device_map_at{0};
  std::atomic<int64_t> nvdec_refused_at{0};
  std::atomic<bool> device_lost{false};
  std::atomic<bool> lost{false};
  std::atomic<int64_t> allocs{0};
  std::atomic<int64_t> launches{0};
  std::atomic<int64_t> provider_runs{0};
  std::atomic<int64_t> provider_memory_runs{0};
  std::atomic<int64_t> packets_sent{0};
  std::atomic<int64_t> device_map_steps{0};
  std::atomic<int64_t> hw_decodes{0};
  std::atomic<bool> enabled{false};
};

FaultState& state() {
  static FaultState s;
  return s;
}

Status parse(const std::string& spec, FaultState& s) {
  s.alloc_at = 0;
  s.kernel_at = 0;
  s.provider_at = 0;
  s.provider_runs = 0;
  s.provider_oom_at = 0;
  s.provider_memory_runs = 0;
  s.decoder_full_at = 0;
  s.packets_sent = 0;
  s.device_map_at = 0;
  s.device_map_steps = 0;
  s.nvdec_refused_at = 0;
  s.hw_decodes = 0;
  s.device_lost = false;
  s.lost = false;
  s.allocs = 0;
  s.launches = 0;
  std::stringstream stream(spec);
  std::string item;
  while (std::getline(stream, item, ',')) {
    if (item.empty()) continue;
    if (item == "device_lost") {
      s.device_lost = true;
      continue;
    }
    const auto colon = item.find(':');
    const std::string kind = item.substr(0, colon);
    char* end = nullptr;
    const long long n = colon == std::string::npos ? 0 : std::strtoll(item.c_str() + colon + 1, &end, 10);
    std::atomic<int64_t>* at = kind == "alloc"          ? &s.alloc_at
                               : kind == "kernel"       ? &s.kernel_at
                               : kind == "provider"     ? &s.provider_at
                               : kind == "provider_oom" ? &s.provider_oom_at
                               : kind == "decoder_full" ? &s.decoder_full_at
                               : kind == "device_map"   ? &s.device_map_at
                               : kind == "nvdec_refused" ? &s.nvdec_refused_at
                                                        : nullptr;
    if (colon == std::string::npos || n < 1 || *end != '\0' || at == nullptr) {
      return invalid_argument("KILN_FAULT='" + spec +
                              "': expected alloc:N, kernel:N, provider:N, provider_oom:N, decoder_full:N, device_map:N, "
                              "nvdec_refused:N or device_lost");
    }
    *at = n;
  }
  s.enabled = s.alloc_at > 0 || s.kernel_at > 0 || s.provider_at > 0 || s.provider_oom_at > 0 ||
              s.decoder_full_at > 0 || s.device_map_at > 0 || s.nvdec_refused_at > 0 || s.device_lost;
  return Status::ok();
}

std::once_flag g_env_once;

}  // namespace

Status fault_configure(const std::string& spec) { return parse(spec, state()); }

bool fault_should_fail(FaultSite site) {
  std::call_once(g_env_once, [] {
    if (const char* spec = std::getenv("KILN_FAULT")) (void)parse(spec, state());
  });
  FaultState& s = state();
  if (!s.enabled.load(std::memory_order_relaxed)) return false;
  if (site == FaultSite::kProvider) return s.provider_runs.fetch_add(1) + 1 == s.provider_at;
  if (site == FaultSite::kProviderMemory) return s.provider_memory_runs.fetch_add(1) + 1 == s.provider_oom_at;
  if (site == FaultSite::kDecoderFull) return s.packets_sent.fetch_add(1) + 1 == s.decoder_full_at;
  if (site == FaultSite::kDeviceMap) return s.device_map_steps.fetch_add(1) + 1 == s.device_map_at;
  if (site == FaultSite::kNvdecRefused) return s.hw_decodes.fetch_add(1) + 1 == s.nvdec_refused_at;
  if (s.lost) return true;
  if (site == FaultSite::kAlloc) return s.allocs.fetch_add(1) + 1 == s.alloc_at;
  if (s.device_lost) {
    s.lost = true;
    return true;
  }
  return s.launches.fetch_add(1) + 1 == s.kernel_at;
}

}  // namespace kiln
